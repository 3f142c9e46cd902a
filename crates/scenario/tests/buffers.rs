//! `[buffers.NAME]`: a switch's shared buffer with dynamic thresholds, end to end — a congested
//! port holds at most alpha / (1 + alpha) of the buffer, drops are counted by cause, occupancy
//! is sampled — and bad settings are named with what is allowed.

use ccsim_scenario::{build, parse, run_built, BufferSummary};

fn incast(buffer: &str, senders: usize) -> String {
    let hosts: Vec<String> = (0..senders).map(|i| format!("\"h{i}\"")).chain(["\"r\"".into()]).collect();
    let mut s = format!(
        r#"
[run]
duration = "200ms"
[tcp]
cc = "cubic"
[queues.big]
classes = [{{ name = "q", limit = 100000 }}]
{buffer}
[topology]
type = "star"
hosts = [{}]
rate = "1Gbps"
delay = "10us"
switch_queue = "big"
switch_buffer = "tor"
host_jitter = "1us"
[record]
interval = "100us"
warmup = "50ms"
"#,
        hosts.join(", ")
    );
    for i in 0..senders {
        s.push_str(&format!("[[flows]]\nsrc = \"h{i}\"\ndst = \"r\"\n"));
    }
    s
}

fn run(text: &str) -> BufferSummary {
    let b = build(&parse(text, "test.toml").unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let o = run_built(b, |_, _| {});
    assert_eq!(o.summary.buffers.len(), 1);
    o.summary.buffers[0].clone()
}

#[test]
fn one_congested_port_holds_at_most_alpha_over_one_plus_alpha_of_the_buffer() {
    for (alpha, share) in [(1.0, 0.5), (4.0, 0.8)] {
        let b = run(&incast(&format!("[buffers.tor]\nsize = \"300KB\"\nalpha = {alpha}\n"), 8));
        let bound = 300_000.0 * share + 1500.0;
        // The port fills to its threshold and no further; the senders' own (uncongested)
        // ACK ports hold next to nothing.
        assert!(b.max_bytes <= bound, "alpha {alpha}: max {} > {bound}", b.max_bytes);
        assert!(
            b.max_bytes > 300_000.0 * share - 3000.0,
            "alpha {alpha}: max {} never reached the threshold",
            b.max_bytes
        );
        assert!(b.drops_dynamic_threshold > 0, "{b:?}");
        assert_eq!(b.drops_buffer_full, 0, "one queue at its threshold leaves free cells");
        assert_eq!(b.drops_queue, 0, "the static limit is far above");
        assert!(b.samples > 1000);
    }
}

#[test]
fn marking_can_look_at_the_whole_buffer() {
    // DCTCP senders, ports without an AQM of their own: only the buffer's occupancy marks.
    let text =
        incast("[buffers.tor]\nsize = \"1MB\"\nmark_above = \"30KB\"\n", 4).replace("cc = \"cubic\"", "cc = \"dctcp\"");
    let b = build(&parse(&text, "t.toml").unwrap()).unwrap();
    let o = run_built(b, |_, _| {});
    let buf = &o.summary.buffers[0];
    let q = o.summary.queues.iter().find(|q| q.port == "s->r").unwrap();
    assert!(q.marks > 0, "marks {}", q.marks);
    // DCTCP holds the buffer near the marking threshold: far below its dynamic threshold (0.5 MB).
    assert!(buf.p99_bytes < 120_000.0 && buf.drops_dynamic_threshold == 0, "{buf:?}");
}

#[test]
fn reserved_bytes_and_presets_resolve() {
    let b = run(&incast("[buffers.tor]\npreset = \"trident+\"\nreserved = \"3KB\"\n", 4));
    assert_eq!(b.size_bytes, 46_080 * 208);
    // Four CUBIC flows cannot fill alpha/(1+alpha) of 9.6 MB at 1 Gb/s in 200 ms? They can: the
    // threshold is what stops them, never the whole buffer.
    assert_eq!(b.drops_buffer_full, 0);
}

fn error(text: &str) -> (String, String) {
    match parse(text, "test.toml") {
        Err(e) => (e.field, e.msg),
        Ok(s) => match build(&s) {
            Err(e) => (e.field, e.msg),
            Ok(_) => panic!("scenario should be rejected:\n{text}"),
        },
    }
}

#[test]
fn bad_buffers_are_named_with_the_allowed_range() {
    let (f, m) = error(&incast("[buffers.tor]\nsize = \"1MB\"\nalpha = 0\n", 2));
    assert_eq!(f, "buffers.tor.alpha");
    assert!(m.contains("allowed > 0"), "{m}");
    let (f, m) = error(&incast("[buffers.tor]\nsize = \"1MB\"\nalphas = { q = -1 }\n", 2));
    assert_eq!(f, "buffers.tor.alpha");
    assert!(m.contains("-1"), "{m}");
    // Three ports of one class each: 3 x 400 KB reserved > 1 MB.
    let (f, m) = error(&incast("[buffers.tor]\nsize = \"1MB\"\nreserved = \"400KB\"\n", 2));
    assert_eq!(f, "buffers.tor.reserved");
    assert!(m.contains("exceed the buffer"), "{m}");
    let (f, m) = error(&incast("[buffers.tor]\nsize = \"1000B\"\n", 2));
    assert_eq!(f, "buffers.tor.size");
    assert!(m.contains("one 1500-byte packet"), "{m}");
    let (f, m) = error(&incast("[buffers.tor]\npreset = \"jericho\"\n", 2));
    assert_eq!(f, "buffers.tor.preset");
    assert!(m.contains("trident2"), "{m}");
    let (f, m) = error(&incast("[buffers.tor]\n", 2));
    assert_eq!(f, "buffers.tor.size");
    assert!(m.contains("preset"), "{m}");
    let (f, m) = error(&incast("[buffers.other]\nsize = \"1MB\"\n", 2));
    assert_eq!(f, "topology.switch_buffer");
    assert!(m.contains("unknown buffer \"tor\""), "{m}");
}
