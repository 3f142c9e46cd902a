//! `record.pcap`: packet captures as pcap files. Checked two ways: against the run's own
//! counters (every packet a port sends is in its capture; every CE mark the queue made is a CE
//! codepoint on the wire), and by tshark, whose dissectors decode the ECN bits, the SACK blocks,
//! the options and the checksums.

mod common;

use common::Scratch;
use std::path::Path;
use std::process::Command;

fn ccsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ccsim"))
}

/// Two senders into one 1 Gb/s port that marks at K = 10 and holds 30 packets: DCTCP gets CE
/// marks, CUBIC (not ECN-capable) loses packets and its receiver sends SACK blocks; a ping
/// crosses host a. The flows stop writing at 80 ms, so that the queue is empty at the end and
/// every packet it counted has been sent.
const SCENARIO: &str = r#"
[run]
duration = "100ms"
[tcp]
cc = "dctcp"
[queues.dctcp]
classes = [{ name = "dctcp", limit = 30, aqm = "step", k = 10 }]
[topology]
type = "star"
hosts = ["a", "b", "c"]
switch = "s"
rate = "1Gbps"
delay = "10us"
switch_queue = "dctcp"
[[flows]]
name = "a"
src = "a"
dst = "c"
stop = "80ms"
[[flows]]
name = "b"
src = "b"
dst = "c"
cc = "cubic"
stop = "80ms"
[[pings]]
src = "a"
dst = "b"
interval = "5ms"
[record]
queues = ["s->c"]
pcap = ["a", "s->c", "c"]
pcap_snaplen = 1600
"#;

fn run(dir: &Path, scenario: &str) -> serde_json::Value {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(&file, scenario).unwrap();
    let out = dir.join("out");
    let o = ccsim().arg("run").arg(&file).arg("--out").arg(&out).arg("-q").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// The records of a pcap file: (timestamp ns, captured length, original length, data).
fn records(path: &Path) -> Vec<(u64, u32, u32, Vec<u8>)> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..4], &0xa1b23c4du32.to_le_bytes(), "nanosecond pcap, little-endian");
    assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 101, "link type RAW");
    let mut out = Vec::new();
    let mut i = 24;
    while i < b.len() {
        let u = |k: usize| u32::from_le_bytes(b[i + k..i + k + 4].try_into().unwrap());
        let (sec, nsec, incl, orig) = (u(0), u(4), u(8), u(12));
        let data = b[i + 16..i + 16 + incl as usize].to_vec();
        out.push((sec as u64 * 1_000_000_000 + nsec as u64, incl, orig, data));
        i += 16 + incl as usize;
    }
    out
}

fn capture<'a>(summary: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    summary["captures"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap()
}

#[test]
fn a_port_capture_holds_every_packet_the_port_sent_with_the_queues_ce_marks() {
    let dir = Scratch::new("pcap-counts");
    let s = run(&dir, SCENARIO);
    let out = dir.join("out");
    let q = &s["queues"][0];
    let c = capture(&s, "s->c");
    assert_eq!(c["file"], "pcap_s_c.pcap");
    let recs = records(&out.join("pcap_s_c.pcap"));
    assert_eq!(recs.len() as u64, c["packets"].as_u64().unwrap());
    assert_eq!(recs.len() as u64, q["tx_packets"].as_u64().unwrap(), "every transmission, once");
    let ce = recs.iter().filter(|r| r.3[1] & 3 == 3).count() as u64;
    assert!(q["marks"].as_u64().unwrap() > 0);
    assert_eq!(ce, q["marks"].as_u64().unwrap(), "a CE codepoint per mark");
    assert!(recs.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
    assert!(recs.iter().all(|r| r.1 == r.2 && r.2 as usize == r.3.len()), "snap length 1600 keeps whole packets");
    // The host capture holds both directions of c's NIC; the port capture is its ingress.
    // Its sends are stamped when their transmission starts, which a NIC knows ahead of the
    // clock; the file is still in time order.
    let host = records(&out.join("pcap_c.pcap"));
    assert_eq!(host.len() as u64, capture(&s, "c")["packets"].as_u64().unwrap());
    assert!(host.len() > recs.len());
    assert!(host.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
}

#[test]
fn capturing_changes_nothing_else_in_the_run() {
    let dir = Scratch::new("pcap-same");
    let mut with = run(&dir.join("with"), SCENARIO);
    let without =
        run(&dir.join("without"), &SCENARIO.replace("pcap = [\"a\", \"s->c\", \"c\"]\npcap_snaplen = 1600\n", ""));
    assert!(without.get("captures").is_none());
    with.as_object_mut().unwrap().remove("captures");
    assert_eq!(with, without, "summary.json, captures aside");
    for f in ["flows.csv", "pings.csv", "queue_s_c.csv"] {
        let a = std::fs::read(dir.join("with/out").join(f)).unwrap();
        assert_eq!(a, std::fs::read(dir.join("without/out").join(f)).unwrap(), "{f}");
    }
}

#[test]
fn the_limit_and_the_window_bound_a_capture_and_say_what_they_left_out() {
    let dir = Scratch::new("pcap-limit");
    let all = run(&dir.join("all"), SCENARIO);
    let total = capture(&all, "s->c")["packets"].as_u64().unwrap();
    let limited = SCENARIO.replace("pcap_snaplen = 1600", "pcap_snaplen = 64\npcap_max_packets = 100");
    let s = run(&dir.join("limited"), &limited);
    let c = capture(&s, "s->c");
    assert_eq!(c["packets"], 100);
    assert_eq!(c["beyond_limit"].as_u64().unwrap(), total - 100);
    let recs = records(&dir.join("limited/out/pcap_s_c.pcap"));
    assert_eq!(recs.len(), 100);
    assert!(recs.iter().all(|r| r.1 <= 64 && r.2 >= r.1));
    let window = SCENARIO.replace("pcap_snaplen = 1600", "pcap_start = \"20ms\"\npcap_stop = \"30ms\"");
    let s = run(&dir.join("window"), &window);
    let recs = records(&dir.join("window/out/pcap_s_c.pcap"));
    assert_eq!(recs.len() as u64, capture(&s, "s->c")["packets"].as_u64().unwrap());
    assert!(!recs.is_empty() && recs.iter().all(|r| (20_000_000..30_000_000).contains(&r.0)));
}

#[test]
fn bad_capture_settings_are_refused_naming_the_field() {
    let dir = Scratch::new("pcap-bad");
    std::fs::create_dir_all(&dir).unwrap();
    for (change, field, says) in [
        ("pcap = [\"a\", \"nobody\"]", "record.pcap[1]", "unknown host \"nobody\""),
        ("pcap = [\"s\"]", "record.pcap[0]", "is a switch"),
        ("pcap = [\"a\", \"a\"]", "record.pcap[1]", "listed twice"),
        ("pcap = [\"a->c\"]", "record.pcap[0]", "no link"),
        ("pcap = [\"a\"]\npcap_snaplen = 20", "record.pcap_snaplen", "allowed 40"),
        ("pcap = [\"a\"]\npcap_max_packets = 0", "record.pcap_max_packets", "allowed 1"),
        ("pcap = [\"a\"]\npcap_stop = \"1s\"", "record.pcap_stop", "at most the end of the run"),
    ] {
        let text = SCENARIO.replace("pcap = [\"a\", \"s->c\", \"c\"]\npcap_snaplen = 1600", change);
        let file = dir.join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let o = ccsim().arg("check").arg(&file).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{change}: {err}");
        assert!(err.contains(field) && err.contains(says), "{change}: {err}");
    }
}

/// tshark's view of a capture: one line per packet with the fields asked for.
fn tshark(file: &Path, fields: &[&str]) -> Option<Vec<Vec<String>>> {
    let mut cmd = Command::new("tshark");
    cmd.args(["-n", "-r"]).arg(file).args([
        "-o",
        "ip.check_checksum:TRUE",
        "-o",
        "tcp.check_checksum:TRUE",
        "-o",
        "tcp.relative_sequence_numbers:FALSE",
        "-T",
        "fields",
        "-E",
        "separator=|",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let o = match cmd.output() {
        Ok(o) => o,
        Err(_) if std::env::var_os("CI").is_none() => {
            eprintln!("skipped: tshark is not installed (scripts/setup installs it)");
            return None;
        }
        Err(e) => panic!("tshark is needed under CI (scripts/setup installs it): {e}"),
    };
    assert!(o.status.success(), "tshark: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    Some(text.lines().map(|l| l.split('|').map(str::to_string).collect()).collect())
}

#[test]
fn tshark_decodes_ecn_sack_options_and_checksums() {
    let dir = Scratch::new("pcap-tshark");
    let s = run(&dir, SCENARIO);
    let out = dir.join("out");
    let fields = [
        "ip.dsfield.ecn",
        "ip.checksum.status",
        "tcp.checksum.status",
        "tcp.flags.ece",
        "tcp.ack",
        "tcp.options.sack_le",
        "tcp.options.sack_re",
        "tcp.options.mss_val",
        "tcp.options.wscale.shift",
        "tcp.options.timestamp.tsval",
        "icmp.type",
        "_ws.malformed",
    ];
    let Some(rows) = tshark(&out.join("pcap_c.pcap"), &fields) else { return };
    assert_eq!(rows.len() as u64, capture(&s, "c")["packets"].as_u64().unwrap());
    let col = |name: &str| fields.iter().position(|f| *f == name).unwrap();
    let count = |name: &str, pred: &dyn Fn(&str) -> bool| rows.iter().filter(|r| pred(&r[col(name)])).count();
    // Every header checksum verifies (1: good); the capture keeps whole packets, so the TCP
    // checksum over the zero payload verifies too.
    assert_eq!(count("ip.checksum.status", &|v| v == "1"), rows.len());
    assert_eq!(count("tcp.checksum.status", &|v| v == "1"), rows.len(), "TCP checksums");
    assert_eq!(count("_ws.malformed", &|v| !v.is_empty()), 0, "nothing malformed");
    // ECN: DCTCP's data is ECT(0) (2), some arrive CE (3); CUBIC's is not ECN-capable (0);
    // DCTCP's receiver echoes the marks as ECE.
    assert!(count("ip.dsfield.ecn", &|v| v == "2") > 1000);
    assert!(count("ip.dsfield.ecn", &|v| v == "3") > 0);
    assert!(count("ip.dsfield.ecn", &|v| v == "0") > 0);
    assert!(count("tcp.flags.ece", &|v| v == "1" || v == "True") > 0);
    // The handshake's options: MSS 1460 and a window scale.
    assert!(count("tcp.options.mss_val", &|v| v == "1460") >= 2);
    assert!(count("tcp.options.wscale.shift", &|v| !v.is_empty()) >= 2);
    assert!(count("tcp.options.timestamp.tsval", &|v| !v.is_empty()) > rows.len() / 2);
    // SACK: CUBIC loses packets at the full queue; c's ACKs then carry blocks above the
    // cumulative ACK.
    let sacks: Vec<&Vec<String>> = rows.iter().filter(|r| !r[col("tcp.options.sack_le")].is_empty()).collect();
    assert!(!sacks.is_empty(), "SACK blocks");
    for r in &sacks {
        let ack: u64 = r[col("tcp.ack")].parse().unwrap();
        let le: Vec<u64> = r[col("tcp.options.sack_le")].split(',').map(|v| v.parse().unwrap()).collect();
        let re: Vec<u64> = r[col("tcp.options.sack_re")].split(',').map(|v| v.parse().unwrap()).collect();
        assert_eq!(le.len(), re.len());
        for (k, (l, r)) in le.iter().zip(&re).enumerate() {
            assert!(l < r, "a block is not empty");
            // Above the cumulative ACK; only the first may be a D-SACK at or below it.
            assert!(*l > ack || (k == 0 && *r <= ack), "block {l}-{r} with ACK {ack}");
        }
    }
    // Host a's capture holds the ping: echo requests (8) out, replies (0) in.
    let Some(rows) = tshark(&out.join("pcap_a.pcap"), &["icmp.type", "icmp.checksum.status"]) else { return };
    let req = rows.iter().filter(|r| r[0] == "8").count();
    let rep = rows.iter().filter(|r| r[0] == "0").count();
    assert!(req >= 19 && rep >= 18, "{req} requests, {rep} replies");
    assert!(rows.iter().filter(|r| !r[0].is_empty()).all(|r| r[1] == "1"), "ICMP checksums");
}
