//! TCP-NV with a BPF-supplied base RTT (Linux commit 85cce2157816): one flow, two flows into one
//! host, and 3 hosts × 6 flows (1 stream, 4 × 1 MB RPC, 1 × 10 KB RPC) into one host;
//! CUBIC vs NV vs NV with base RTT 80 µs.

use super::{html_table, near, note_unless, Ctx, ExpOutput, Row};
use ccsim_report::summarize;
use ccsim_scenario::Outcome;

pub const SINGLE: &str = "nv-single";
pub const TWO: &str = "nv-2to1";
pub const SIX: &str = "nv-3x6";
pub const SETUP: &str = "hosts on one switch, 10 Gb/s links, 5 us one-way delay per link (unloaded RTT about \
    22 us, under the seed's 40 us), 1500-byte packets with 38 bytes of Ethernet framing, a 4 MB drop-tail buffer \
    per switch port (the seed's 3.3 ms CUBIC ping at 10 Gb/s implies about 4 MB), no ECN; NV (base RTT) = a \
    [[base_rtt]] rule giving 80 us to every nv connection, as samples/bpf/tcp_basertt_kern.c does within one \
    datacenter; pings from a sender every 10 ms; RPC flows send their next request as soon as the previous one is \
    acknowledged (latency = request written to last byte acknowledged). 10 s (quick: 1 s).";

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Cubic,
    Nv,
    NvBase,
}

const MODES: [Mode; 3] = [Mode::Cubic, Mode::Nv, Mode::NvBase];

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::Cubic => "cubic",
            Mode::Nv => "nv",
            Mode::NvBase => "nv-base80",
        }
    }
}

fn header(mode: Mode, quick: bool, hosts: &[&str]) -> String {
    header_jitter(mode, quick, hosts, "0us")
}

/// Host timing noise of the sweep in `nv-single`, in µs: 10 Gb/s NICs coalesce interrupts over
/// tens of µs, which is what makes a host's own RTT samples noisy.
const JITTER_US: [u32; 5] = [10, 20, 25, 30, 35];

fn header_jitter(mode: Mode, quick: bool, hosts: &[&str], jitter: &str) -> String {
    let cc = if mode == Mode::Cubic { "cubic" } else { "nv" };
    let rule = if mode == Mode::NvBase { "\n[[base_rtt]]\nbase_rtt = \"80us\"\ncc = \"nv\"\n" } else { "" };
    let hosts: Vec<String> = hosts.iter().map(|h| format!("\"{h}\"")).collect();
    format!(
        r#"[run]
seed = 1
duration = "{dur}"
l2_overhead = 38

[tcp]
cc = "{cc}"
ecn = "off"

[queues.port]
classes = [{{ limit = 4000000, unit = "bytes" }}]

[topology]
type = "star"
hosts = [{hosts}]
rate = "10Gbps"
delay = "5us"
switch_queue = "port"
host_jitter = "{jitter}"
{rule}
[record]
series = false
"#,
        dur = if quick { "1s" } else { "10s" },
        hosts = hosts.join(", ")
    )
}

fn ping(src: &str, dst: &str) -> String {
    format!(
        "\n[[pings]]\nname = \"ping-{src}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nstart = \"0.2s\"\ninterval = \"10ms\"\n"
    )
}

fn bulk(name: &str, src: &str, dst: &str) -> String {
    format!("\n[[flows]]\nname = \"{name}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\n")
}

fn rpc(name: &str, src: &str, dst: &str, size: &str) -> String {
    format!("\n[[flows]]\nname = \"{name}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nkind = \"rpc\"\nsize = \"{size}\"\n")
}

fn gbps(o: &Outcome, prefix: &str) -> f64 {
    let v: Vec<f64> =
        o.summary.flows.iter().filter(|f| f.name.starts_with(prefix)).map(|f| f.goodput_mbps / 1e3).collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn ping_ms(o: &Outcome) -> f64 {
    let all: Vec<f64> = o.records.pings.iter().flat_map(|p| p.rtts.iter().map(|r| r * 1e3)).collect();
    summarize(&all).mean
}

fn fmt_ms(x: f64) -> String {
    if x < 1.0 {
        format!("{:.0} us", x * 1e3)
    } else {
        format!("{x:.2} ms")
    }
}

pub fn run_single(ctx: &Ctx) -> Result<ExpOutput, String> {
    let seed = [9.3, 5.5, 9.2];
    let mut got = Vec::new();
    for m in MODES {
        let o = ctx.run(SINGLE, m.label(), &format!("{}{}", header(m, ctx.quick, &["a", "b"]), bulk("f", "a", "b")))?;
        got.push(gbps(&o, "f"));
    }
    let mut rows: Vec<Row> = MODES
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let ok = near(got[i], seed[i], 0.1);
            Row::new(
                SINGLE,
                &format!("{} goodput (Gb/s)", m.label()),
                format!("{}", seed[i]),
                format!("{:.2}", got[i]),
                ok,
                "reproduced",
                note_unless(ok, "tolerance ±10 %", || {
                    "these runs model hosts without timing noise (host_jitter = 0), so plain NV's RTT samples are \
                     exact and one flow reaches line rate; the seed's hosts' noise is not stated (the host-jitter \
                     row below shows plain NV backing off with it)"
                        .into()
                }),
            )
        })
        .collect();
    rows.push(Row::new(SINGLE, "NV with base RTT near line rate where plain NV is not", "9.2 vs 5.5", format!("{:.2} vs {:.2}", got[2], got[1]), got[2] >= 0.9 * got[0] && got[1] < 0.9 * got[0], "shape", "claim checked: base-RTT NV ≥ 90 % of CUBIC, plain NV below. Where not reproduced: these runs use idealised hosts (host_jitter = 0), so plain NV's RTT samples are exact and one flow reaches line rate without the base RTT; the next row adds host timing noise"));
    // The same single flow with host timing noise: plain NV's own min-RTT and RTT samples become
    // noisy, the base RTT from the BPF rule does not.
    let mut sweep = Vec::new();
    for j in JITTER_US {
        let jit = format!("{j}us");
        let mut g = [0.0; 2];
        for (k, m) in [Mode::Nv, Mode::NvBase].into_iter().enumerate() {
            let label = format!("{}-jitter{j}us", m.label());
            let o = ctx.run(
                SINGLE,
                &label,
                &format!("{}{}", header_jitter(m, ctx.quick, &["a", "b"], &jit), bulk("f", "a", "b")),
            )?;
            g[k] = gbps(&o, "f");
        }
        sweep.push((j, g[0], g[1]));
    }
    let holds: Vec<u32> =
        sweep.iter().filter(|(_, nv, base)| *base >= 0.9 * got[0] && *nv < 0.9 * got[0]).map(|x| x.0).collect();
    let shown =
        sweep.iter().map(|(j, nv, base)| format!("{j} us: {base:.2} vs {nv:.2}")).collect::<Vec<_>>().join("; ");
    rows.push(Row::new(
        SINGLE,
        "the same claim with host timing noise (host_jitter 10-35 us)",
        "9.2 vs 5.5",
        if holds.is_empty() { shown.clone() } else { format!("holds at {} us ({shown})", holds.iter().map(|j| j.to_string()).collect::<Vec<_>>().join(", ")) },
        !holds.is_empty(),
        "shape",
        "base-RTT NV vs plain NV (Gb/s) with each packet leaving a host up to J later; the seed's hosts' noise is not stated. With noise, plain NV's measured min RTT and its RTT samples spread, it reads the spread as queueing and backs off, while the base RTT from the BPF rule keeps NV at line rate — the mechanism the commit describes; with too much noise (40 us and up) both back off",
    ));
    let mut html = html_table(
        &["", "seed (Gb/s)", "ccsim (Gb/s)"],
        &MODES
            .iter()
            .enumerate()
            .map(|(i, m)| vec![m.label().to_string(), seed[i].to_string(), format!("{:.2}", got[i])])
            .collect::<Vec<_>>(),
    );
    html.push_str(&html_table(
        &["host jitter", "plain NV (Gb/s)", "NV with base RTT (Gb/s)"],
        &sweep
            .iter()
            .map(|(j, nv, base)| vec![format!("{j} us"), format!("{nv:.2}"), format!("{base:.2}")])
            .collect::<Vec<_>>(),
    ));
    Ok(ExpOutput { rows, html })
}

pub fn run_two(ctx: &Ctx) -> Result<ExpOutput, String> {
    let seed_g = [4.6, 4.5, 4.6];
    let seed_p = [3.3, 0.097, 0.146];
    let mut rows = Vec::new();
    let mut t = Vec::new();
    let mut pings = Vec::new();
    for (i, m) in MODES.into_iter().enumerate() {
        let text = format!(
            "{}{}{}{}",
            header(m, ctx.quick, &["a", "b", "c"]),
            bulk("fa", "a", "c"),
            bulk("fb", "b", "c"),
            ping("a", "c")
        );
        let o = ctx.run(TWO, m.label(), &text)?;
        let (g, p) = (gbps(&o, "f"), ping_ms(&o));
        rows.push(Row::new(
            TWO,
            &format!("{} goodput per flow (Gb/s)", m.label()),
            format!("{}", seed_g[i]),
            format!("{g:.2}"),
            near(g, seed_g[i], 0.1),
            "reproduced",
            "tolerance ±10 %",
        ));
        rows.push(Row::new(
            TWO,
            &format!("{} ping RTT at the sender", m.label()),
            fmt_ms(seed_p[i]),
            fmt_ms(p),
            near(p, seed_p[i], 0.5),
            "reproduced",
            "tolerance ±50 %",
        ));
        t.push(vec![m.label().to_string(), seed_g[i].to_string(), format!("{g:.2}"), fmt_ms(seed_p[i]), fmt_ms(p)]);
        pings.push(p);
    }
    rows.push(Row::new(
        TWO,
        "NV's ping RTT far below CUBIC's",
        "97 us / 146 us vs 3.3 ms",
        format!("{} / {} vs {}", fmt_ms(pings[1]), fmt_ms(pings[2]), fmt_ms(pings[0])),
        pings[1] * 5.0 <= pings[0] && pings[2] * 5.0 <= pings[0],
        "shape",
        "claim checked: ≥ 5× lower",
    ));
    let html = html_table(&["", "goodput/flow seed (Gb/s)", "ccsim", "ping seed", "ccsim"], &t);
    Ok(ExpOutput { rows, html })
}

pub fn run_six(ctx: &Ctx) -> Result<ExpOutput, String> {
    let seed_t = [27.0, 111.0, 222.0];
    let seed_l = [26.0, 1.0, 0.5];
    let seed_p = [3.2, 0.72, 0.33];
    let mut rows = Vec::new();
    let mut t = Vec::new();
    for (i, m) in MODES.into_iter().enumerate() {
        let mut text = header(m, ctx.quick, &["a", "b", "c", "d"]);
        for h in ["a", "b", "c"] {
            text.push_str(&bulk(&format!("stream-{h}"), h, "d"));
            for k in 0..4 {
                text.push_str(&rpc(&format!("rpc1m-{h}{k}"), h, "d", "1MB"));
            }
            text.push_str(&rpc(&format!("rpc10k-{h}"), h, "d", "10KB"));
            text.push_str(&ping(h, "d"));
        }
        let o = ctx.run(SIX, m.label(), &text)?;
        let small: Vec<_> = o.summary.flows.iter().filter(|f| f.name.starts_with("rpc10k")).collect();
        let tput = small.iter().map(|f| f.goodput_mbps).sum::<f64>() / small.len() as f64;
        let p99 = small.iter().filter_map(|f| f.rpc.as_ref().map(|r| r.p99_ms)).fold(0.0, f64::max);
        let p = ping_ms(&o);
        // The RPC figures hang on the hosts' timing, which the seed does not state.
        let why = || {
            "these runs model hosts without timing noise (host_jitter = 0) and with no other load, so each \
             10 KB request waits only for the queue the long flows build and NV reads no host noise as \
             congestion; the seed's hosts' timing noise and load are not stated"
                .to_string()
        };
        let (tput_ok, p99_ok) = (near(tput, seed_t[i], 0.5), near(p99, seed_l[i], 0.5));
        rows.push(Row::new(
            SIX,
            &format!("{}: 10 KB RPC throughput per flow (Mb/s)", m.label()),
            format!("{}", seed_t[i]),
            format!("{tput:.0}"),
            tput_ok,
            "reproduced",
            note_unless(tput_ok, "tolerance ±50 %", why),
        ));
        rows.push(Row::new(
            SIX,
            &format!("{}: 10 KB RPC 99th-percentile latency", m.label()),
            fmt_ms(seed_l[i]),
            fmt_ms(p99),
            p99_ok,
            "reproduced",
            note_unless(p99_ok, "tolerance ±50 %; worst of the three senders' p99", why),
        ));
        rows.push(Row::new(
            SIX,
            &format!("{}: ping RTT at the senders", m.label()),
            fmt_ms(seed_p[i]),
            fmt_ms(p),
            near(p, seed_p[i], 0.5),
            "reproduced",
            "tolerance ±50 %",
        ));
        t.push(vec![
            m.label().to_string(),
            seed_t[i].to_string(),
            format!("{tput:.0}"),
            fmt_ms(seed_l[i]),
            fmt_ms(p99),
            fmt_ms(seed_p[i]),
            fmt_ms(p),
        ]);
    }
    let html = html_table(&["", "10 KB RPC Mb/s seed", "ccsim", "p99 seed", "ccsim", "ping seed", "ccsim"], &t);
    Ok(ExpOutput { rows, html })
}
