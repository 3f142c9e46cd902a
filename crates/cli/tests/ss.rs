//! `ccsim ss` end to end: the socket list of a running scenario in `ss -tin` form, with the
//! info-line field order of the DCTCP merge commit (e3118e8359), its fallback to dctcp-reno when
//! ECN is not negotiated, ss filters and JSON; BBR's `bbr:(...)` info, TCP-NV's vegas info with a
//! `[[base_rtt]]` rule reaching only the connections it matches, and `ccsim check` round trips of
//! `[tcp.bbr]` / `[tcp.nv]`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::Scratch;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ss(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ccsim")).arg("ss").args(args).output().unwrap()
}

/// Run `ccsim ss`, expect success, return stdout.
fn ok(args: &[&str]) -> String {
    let o = ss(args);
    assert!(o.status.success(), "ccsim ss {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Run `ccsim ss`, expect failure, return stderr.
fn err(args: &[&str]) -> String {
    let o = ss(args);
    assert!(!o.status.success(), "ccsim ss {args:?} should fail; printed {}", String::from_utf8_lossy(&o.stdout));
    assert_ne!(o.status.code(), Some(0));
    String::from_utf8(o.stderr).unwrap()
}

fn dctcp() -> String {
    root().join("scenarios/mininet-dctcp.toml").display().to_string()
}

/// Write a scenario file in a scratch directory of its own; the directory goes when the first
/// value is dropped.
fn scenario(name: &str, text: &str) -> (Scratch, String) {
    let d = Scratch::new(&format!("ss-{name}"));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    (d, p.display().to_string())
}

/// One socket: the columns of its line and the tokens of its info line.
#[derive(Debug)]
struct Sock {
    state: String,
    send_q: u64,
    local: String,
    peer: String,
    info: Vec<String>,
}

fn parse(out: &str) -> Vec<Sock> {
    let mut lines = out.lines();
    let head: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    assert_eq!(head, ["State", "Recv-Q", "Send-Q", "Local-Address:Port", "Peer-Address:Port"]);
    let mut v = Vec::new();
    while let Some(l) = lines.next() {
        let c: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(c.len(), 5, "socket line {l:?}");
        assert_eq!(c[1], "0", "Recv-Q");
        let info = lines.next().expect("an info line after each socket line");
        assert!(info.starts_with("\t "), "info line {info:?} starts with a tab");
        v.push(Sock {
            state: c[0].into(),
            send_q: c[2].parse().unwrap(),
            local: c[3].into(),
            peer: c[4].into(),
            info: info.split_whitespace().map(String::from).collect(),
        });
    }
    v
}

/// Field names of an info line in order: `rto:203` is `rto`; `ce_state 0`, `send 1Mbps` take
/// their value from the next token.
fn fields(info: &[String]) -> Vec<String> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < info.len() {
        let t = &info[i];
        if let Some((k, _)) = t.split_once(':') {
            v.push(k.to_string());
        } else {
            if ["ce_state", "alpha", "ab_ecn", "ab_tot", "send", "pacing_rate"].contains(&t.as_str()) {
                i += 1;
            }
            v.push(t.clone());
        }
        i += 1;
    }
    v
}

/// The fields of the seed's two `ss -tin` lines (e3118e8359), in order.
const SEED_DCTCP: &[&str] = &[
    "dctcp",
    "wscale",
    "rto",
    "rtt",
    "mss",
    "cwnd",
    "ssthresh",
    "ce_state",
    "alpha",
    "ab_ecn",
    "ab_tot",
    "send",
    "pacing_rate",
    "unacked",
    "retrans",
    "reordering",
    "rcv_space",
];
const SEED_FALLBACK: &[&str] = &[
    "dctcp-reno",
    "wscale",
    "rto",
    "rtt",
    "ato",
    "mss",
    "cwnd",
    "ssthresh",
    "fallback_mode",
    "send",
    "pacing_rate",
    "rcv_rtt",
    "rcv_space",
];

/// The seed's fields that the line has come in the seed's order, the `required` ones are there,
/// and every field the seed does not show comes after them, except those the seed-era ss
/// printed between (backoff after rto; lost, sacked after retrans).
fn assert_seed_order(line: &[String], seed: &[&str], required: &[&str]) {
    let f = fields(line);
    let ours: Vec<&str> = f.iter().map(String::as_str).filter(|x| seed.contains(x)).collect();
    let theirs: Vec<&str> = seed.iter().copied().filter(|x| ours.contains(x)).collect();
    assert_eq!(ours, theirs, "field order differs from the seed: {line:?}");
    for r in required {
        assert!(ours.contains(r), "{r} missing from {line:?}");
    }
    let last_seed = f.iter().rposition(|x| seed.contains(&x.as_str())).unwrap();
    for x in &f[..last_seed] {
        assert!(
            seed.contains(&x.as_str()) || ["backoff", "lost", "sacked"].contains(&x.as_str()),
            "{x} before the seed's fields end: {line:?}"
        );
    }
}

fn value<'a>(line: &'a [String], key: &str) -> Option<&'a str> {
    let i = line.iter().position(|t| t == key || t.starts_with(&format!("{key}:")))?;
    match line[i].split_once(':') {
        Some((_, v)) => Some(v),
        None => line.get(i + 1).map(String::as_str),
    }
}

#[test]
fn mininet_dctcp_at_2s_lists_both_ends_in_the_seed_field_order() {
    let out = ok(&[&dctcp(), "--at", "2s"]);
    let socks = parse(&out);
    assert_eq!(socks.len(), 4, "two flows, two ends each:\n{out}");
    let clients: Vec<&Sock> =
        socks.iter().filter(|s| s.local.starts_with("10.0.0.1:") || s.local.starts_with("10.0.0.2:")).collect();
    assert_eq!(clients.len(), 2, "{out}");
    assert_eq!(clients[0].local, "10.0.0.1:40000");
    assert_eq!(clients[1].local, "10.0.0.2:40001");
    for c in &clients {
        assert_eq!(c.state, "ESTAB");
        assert_eq!(c.peer, "10.0.0.3:5001");
        assert_eq!(c.info[0], "dctcp", "{:?}", c.info);
        // `ce_state N alpha N ab_ecn N ab_tot N`, adjacent, as in the seed.
        let k = c.info.iter().position(|t| t == "ce_state").expect("ce_state");
        assert_eq!(
            [&c.info[k], &c.info[k + 2], &c.info[k + 4], &c.info[k + 6]].map(String::as_str),
            ["ce_state", "alpha", "ab_ecn", "ab_tot"]
        );
        for j in [1, 3, 5, 7] {
            c.info[k + j].parse::<u32>().unwrap();
        }
        assert_seed_order(
            &c.info,
            SEED_DCTCP,
            &[
                "dctcp",
                "wscale",
                "rto",
                "rtt",
                "mss",
                "cwnd",
                "ce_state",
                "alpha",
                "ab_ecn",
                "ab_tot",
                "send",
                "pacing_rate",
            ],
        );
        assert_eq!(value(&c.info, "wscale"), Some("7,7"));
        assert!(value(&c.info, "send").unwrap().ends_with("Mbps"));
        // A bulk sender has data in flight: Send-Q is what is unacknowledged.
        let unacked: u64 = value(&c.info, "unacked").unwrap().parse().unwrap();
        assert_eq!(c.send_q, unacked * 1448);
        // Fields later ss versions added, after the seed's.
        let f = fields(&c.info);
        let pos = |n: &str| f.iter().position(|x| x == n).unwrap_or_else(|| panic!("{n} missing: {f:?}"));
        assert!(pos("pacing_rate") < pos("bytes_acked") && pos("bytes_acked") < pos("delivered"));
        assert!(pos("delivered") < pos("delivered_ce"));
    }
    for s in socks.iter().filter(|s| s.local == "10.0.0.3:5001") {
        assert_eq!(s.state, "ESTAB");
        assert_eq!(s.info[0], "dctcp");
        // The receiver delays ACKs: ato is known, between rtt and mss.
        assert_eq!(value(&s.info, "ato"), Some("40"));
        // ato sits between rtt and mss, as in the seed's other (fallback) line.
        let mut seed = SEED_DCTCP.to_vec();
        seed.insert(4, "ato");
        assert_seed_order(&s.info, &seed, &["dctcp", "rtt", "ato", "mss", "ce_state", "send"]);
    }
}

/// The first SYN is lost in a flooded NIC queue; the retransmitted SYN goes without ECE|CWR
/// (tcp_ecn_clear_syn), so the server does not negotiate ECN and both DCTCP ends fall back to
/// Reno — the seed's second `ss` line.
const FALLBACK: &str = r#"
[run]
duration = "3s"
[tcp]
cc = "dctcp"
[queues.tiny]
classes = [{ limit = 4 }]
[topology]
type = "star"
hosts = ["a", "c"]
rate = "100Mbps"
host_queue = "tiny"
[[flows]]
name = "late"
src = "a"
dst = "c"
start = "100ms"
[[pings]]
src = "a"
dst = "c"
interval = "10us"
size = 1500
stop = "500ms"
"#;

#[test]
fn without_ecn_both_dctcp_ends_fall_back_to_dctcp_reno() {
    let (_dir, path) = scenario("fallback.toml", FALLBACK);
    let out = ok(&[&path, "--at", "2s"]);
    let socks = parse(&out);
    assert_eq!(socks.len(), 2, "{out}");
    for s in &socks {
        assert_eq!(s.state, "ESTAB");
        assert_eq!(s.info[0], "dctcp-reno", "{out}");
        assert!(s.info.contains(&"fallback_mode".to_string()), "{out}");
        assert!(!s.info.contains(&"ce_state".to_string()) && !s.info.contains(&"alpha".to_string()), "{out}");
        assert_seed_order(
            &s.info,
            SEED_FALLBACK,
            &["dctcp-reno", "wscale", "rto", "rtt", "mss", "cwnd", "fallback_mode", "send", "pacing_rate"],
        );
    }
    // The receiving end has a delayed-ACK timeout, as the seed's line does.
    assert_eq!(value(&socks[1].info, "ato"), Some("40"));
    assert_eq!(parse(&ok(&[&path, "--at", "2s", "cc", "dctcp-reno"])).len(), 2);
    assert_eq!(parse(&ok(&[&path, "--at", "2s", "cc", "dctcp"])).len(), 0);
    // Before the retransmitted SYN: a SYN-SENT client and a listener, which ss hides by default.
    assert_eq!(parse(&ok(&[&path, "--at", "0.3s"])).iter().map(|s| s.state.as_str()).collect::<Vec<_>>(), ["SYN-SENT"]);
    let all = parse(&ok(&[&path, "--at", "0.3s", "state", "all"]));
    assert_eq!(all.iter().map(|s| s.state.as_str()).collect::<Vec<_>>(), ["SYN-SENT", "LISTEN"]);
    assert_eq!(all[1].peer, "0.0.0.0:*");
    let l = parse(&ok(&[&path, "--at", "0.3s", "state", "listening"]));
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].local, "10.0.0.2:5001");
    assert_eq!(parse(&ok(&[&path, "--at", "0.3s", "state", "syn-sent"]))[0].send_q, 1, "the SYN");
}

const MARKS: &str = r#"
[run]
duration = "1s"
[topology]
type = "star"
hosts = ["a", "b", "c"]
rate = "100Mbps"
[[flows]]
name = "x"
src = "a"
dst = "c"
cc = "dctcp"
mark = 0x11
[[flows]]
name = "y"
src = "b"
dst = "c"
cc = "cubic"
mark = 0x22
[[flows]]
name = "z"
src = "a"
dst = "b"
cc = "reno"
mark = 0x21
"#;

/// (local, peer) of every socket the filter selects.
fn select(path: &str, filter: &[&str]) -> Vec<(String, String)> {
    let mut args = vec![path, "--at", "0.5s"];
    args.extend_from_slice(filter);
    parse(&ok(&args)).into_iter().map(|s| (s.local, s.peer)).collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn filters_select_the_expected_sockets() {
    let d = dctcp();
    let clients = pairs(&[("10.0.0.1:40000", "10.0.0.3:5001"), ("10.0.0.2:40001", "10.0.0.3:5001")]);
    let servers = pairs(&[("10.0.0.3:5001", "10.0.0.1:40000"), ("10.0.0.3:5001", "10.0.0.2:40001")]);
    let at = |f: &[&str]| {
        let mut a = vec![d.as_str(), "--at", "2s"];
        a.extend_from_slice(f);
        parse(&ok(&a)).into_iter().map(|s| (s.local, s.peer)).collect::<Vec<_>>()
    };
    assert_eq!(at(&["dport", "=", ":5001"]), clients);
    assert_eq!(at(&["dport = :5001"]), clients, "one argument, split at blanks as ss does");
    assert_eq!(at(&["sport", "=", ":5001"]), servers);
    assert_eq!(at(&["dport", "=", ":40001"]), servers[1..]);
    assert_eq!(at(&["sport", ">", ":40000"]), clients[1..]);
    assert_eq!(at(&["state", "established"]).len(), 4);
    assert_eq!(at(&["state", "established", "dport", "=", ":5001"]), clients);
    assert_eq!(at(&["state", "listening"]).len(), 0);
    assert_eq!(at(&["exclude", "established"]).len(), 0);
    assert_eq!(at(&["(", "sport", "=", ":40000", "or", "dport", "=", ":40000", ")"]).len(), 2);
    assert_eq!(at(&["src", "10.0.0.1"]), clients[..1]);
    assert_eq!(at(&["dst", "b"]), servers[1..], "a host name");
    assert_eq!(at(&["dst", "10.0.0.0/24:5001"]), clients);
    assert_eq!(at(&["dev", "=", "c"]), servers);
    assert_eq!(at(&["cc", "dctcp"]).len(), 4);
    assert_eq!(at(&["cc", "cubic"]).len(), 0);
    assert_eq!(at(&["mark", "=", "0x0"]).len(), 4);
    assert_eq!(at(&["mark", "=", "0x1"]).len(), 0);

    let (_mdir, m) = scenario("marks.toml", MARKS);
    let x = pairs(&[("10.0.0.1:40000", "10.0.0.3:5001"), ("10.0.0.3:5001", "10.0.0.1:40000")]);
    let y = pairs(&[("10.0.0.2:40001", "10.0.0.3:5001"), ("10.0.0.3:5001", "10.0.0.2:40001")]);
    let z = pairs(&[("10.0.0.1:40002", "10.0.0.2:5001"), ("10.0.0.2:5001", "10.0.0.1:40002")]);
    let cat = |a: &[(String, String)], b: &[(String, String)]| [a, b].concat();
    assert_eq!(select(&m, &[]), [x.clone(), y.clone(), z.clone()].concat());
    assert_eq!(select(&m, &["mark", "=", "0x11"]), x);
    assert_eq!(select(&m, &["fwmark", "=", "0x11"]), x, "ss's keyword");
    assert_eq!(select(&m, &["mark", "=", "0x1/0xf"]), cat(&x, &z));
    assert_eq!(select(&m, &["mark", "=", "0x20/0xf0"]), cat(&y, &z));
    assert_eq!(select(&m, &["mark", "!=", "0x22"]), cat(&x, &z));
    assert_eq!(select(&m, &["cc", "cubic"]), y);
    assert_eq!(select(&m, &["cc", "reno"]), z);
    assert_eq!(select(&m, &["cc", "dctcp", "and", "dport", "=", ":5001"]), x[..1]);
    assert_eq!(select(&m, &["not", "cc", "cubic", "sport", "=", ":5001"]), vec![x[1].clone(), z[1].clone()]);
    assert_eq!(select(&m, &["dev", "=", "a"]), vec![x[0].clone(), z[0].clone()]);
}

#[test]
fn bad_filters_and_times_fail_with_the_allowed_forms() {
    let d = dctcp();
    let e = err(&[&d, "--at", "2s", "frobnicate", "3"]);
    assert!(e.contains("`frobnicate`") && e.contains("dport") && e.contains("mark = 0xN[/0xM]"), "{e}");
    let e = err(&[&d, "--at", "2s", "state", "sleepy"]);
    assert!(e.contains("`sleepy`") && e.contains("established") && e.contains("listening"), "{e}");
    let e = err(&[&d, "--at", "2s", "dport", "=", "http"]);
    assert!(e.contains("dport") && e.contains(":5001"), "{e}");
    let e = err(&[&d, "--at", "2s", "mark", "=", "blue"]);
    assert!(e.contains("0xN/0xM"), "{e}");
    let e = err(&[&d, "--at", "2s", "cc", "vegas"]);
    assert!(e.contains("`cc vegas`") && e.contains("dctcp") && e.contains("bbr"), "{e}");
    let e = err(&[&d, "--at", "2s", "dev", "=", "eth0"]);
    assert!(e.contains("eth0") && e.contains("hosts are"), "{e}");
    let e = err(&[&d, "--at", "2s", "(", "dport", "=", ":5001"]);
    assert!(e.contains("missing `)`"), "{e}");
    let e = err(&[&d, "--at", "2s", "src"]);
    assert!(e.contains("`src` needs"), "{e}");
    // Times: beyond the run, unparseable, missing.
    let e = err(&[&d, "--at", "25s"]);
    assert!(e.contains("--at") && e.contains("20s"), "{e}");
    let e = err(&[&d, "--at", "soon"]);
    assert!(e.contains("--at") && e.contains("allowed range"), "{e}");
    let e = err(&[&d]);
    assert!(e.contains("--at"), "{e}");
}

#[test]
fn json_lists_the_same_sockets() {
    let d = dctcp();
    let text = parse(&ok(&[&d, "--at", "2s"]));
    let v: serde_json::Value = serde_json::from_str(&ok(&[&d, "--at", "2s", "--json"])).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), text.len());
    for (j, t) in a.iter().zip(&text) {
        assert_eq!(j["state"], t.state.as_str());
        assert_eq!(j["local"], t.local.as_str());
        assert_eq!(j["peer"], t.peer.as_str());
        assert_eq!(j["send_q"], t.send_q);
        assert_eq!(j["info"]["cc"], "dctcp");
        assert_eq!(j["info"]["ce_state"].as_u64().map(|x| x.to_string()).as_deref(), value(&t.info, "ce_state"));
        assert_eq!(j["info"]["alpha"].as_u64().map(|x| x.to_string()).as_deref(), value(&t.info, "alpha"));
        assert_eq!(j["info"]["cwnd"].as_u64().map(|x| x.to_string()).as_deref(), value(&t.info, "cwnd"));
        assert!(j["info"]["send"].as_f64().unwrap() > 0.0);
    }
    let c: Vec<&serde_json::Value> = a.iter().filter(|j| j["side"] == "client").collect();
    assert_eq!(c.len(), 2);
    assert_eq!(c[0]["flow"], "a");
    assert_eq!(c[0]["dev"], "a");
    let f: serde_json::Value = serde_json::from_str(&ok(&[&d, "--at", "2s", "--json", "dport", "=", ":5001"])).unwrap();
    assert_eq!(f.as_array().unwrap().len(), 2);
}

/// Run `ccsim check`, expect success, return stdout.
fn check(path: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_ccsim")).arg("check").arg(path).output().unwrap();
    assert!(o.status.success(), "ccsim check {path} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// `ccsim check` prints `[tcp.bbr]` and `[tcp.nv]` with Linux's values, and its output checks to
/// the same text again.
fn assert_check_round_trips(name: &str, path: &str) {
    let text = check(path);
    for line in ["[tcp.bbr]", "high_gain = 739", "cwnd_gain = 512", "[tcp.nv]", "nv_pad = 10", "nv_rtt_min_cnt = 2"] {
        assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
    }
    let (_again_dir, again) = scenario(&format!("again-{name}"), &text);
    assert_eq!(check(&again), text);
}

/// One BBR and one CUBIC sender into `c` at 1 Gb/s, 50 µs per link.
const BBR: &str = r#"
[run]
duration = "200ms"
[tcp]
cc = "bbr"
[topology]
type = "star"
hosts = ["a", "b", "c"]
rate = "1Gbps"
delay = "50us"
[[flows]]
name = "bbr"
src = "a"
dst = "c"
[[flows]]
name = "cubic"
src = "b"
dst = "c"
cc = "cubic"
"#;

/// The parts of `bbr:(bw:XXXbps,mrtt:X,pacing_gain:X,cwnd_gain:X)` as (key, value) pairs.
fn bbr_parts(info: &[String]) -> Vec<(String, String)> {
    let t = info.iter().find(|t| t.starts_with("bbr:(")).unwrap_or_else(|| panic!("no bbr:( in {info:?}"));
    let inner = t.strip_prefix("bbr:(").and_then(|t| t.strip_suffix(')')).unwrap_or_else(|| panic!("{t}"));
    inner
        .split(',')
        .map(|kv| {
            let (k, v) = kv.split_once(':').unwrap_or_else(|| panic!("{kv} in {t}"));
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn bbr_sockets_show_bbr_info_as_ss_prints_it() {
    let (_dir, path) = scenario("bbr.toml", BBR);
    let out = ok(&[&path, "--at", "100ms"]);
    let socks = parse(&out);
    assert_eq!(socks.len(), 4, "{out}");
    let (sender, receiver) = (&socks[0], &socks[1]);
    assert_eq!((sender.local.as_str(), receiver.local.as_str()), ("10.0.0.1:40000", "10.0.0.3:5001"));
    for s in [sender, receiver] {
        assert_eq!(s.info[0], "bbr", "{out}");
        let parts = bbr_parts(&s.info);
        let keys: Vec<&str> = parts.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["bw", "mrtt", "pacing_gain", "cwnd_gain"], "{out}");
        assert!(parts[0].1.ends_with("bps"), "{out}");
        for (_, v) in &parts[1..] {
            assert!(v.parse::<f64>().unwrap() > 0.0, "{out}");
        }
        // Where ss prints it: after cwnd/ssthresh, before send and pacing_rate.
        let f = fields(&s.info);
        // (The first field is the cc name, also "bbr"; the info is the last.)
        let pos = |n: &str| f.iter().rposition(|x| x == n).unwrap_or_else(|| panic!("{n} missing: {f:?}"));
        assert!(pos("cwnd") < pos("bbr") && pos("bbr") < pos("send") && pos("send") < pos("pacing_rate"), "{f:?}");
        assert_eq!(f.iter().filter(|x| *x == "bbr").count(), 2, "{f:?}");
    }
    // The sender has a bandwidth estimate (in Mbit/s, below the 1 Gb/s link) and its min RTT is
    // the path's: at least tcp_info's minrtt, at most srtt.
    let parts = bbr_parts(&sender.info);
    let bw: f64 = parts[0].1.strip_suffix("Mbps").unwrap_or_else(|| panic!("{parts:?}")).parse().unwrap();
    assert!(bw > 100.0 && bw < 1000.0, "{parts:?}");
    let mrtt: f64 = parts[1].1.parse().unwrap();
    let minrtt: f64 = value(&sender.info, "minrtt").unwrap().parse().unwrap();
    let srtt: f64 = value(&sender.info, "rtt").unwrap().split('/').next().unwrap().parse().unwrap();
    assert!(mrtt >= minrtt && mrtt <= srtt, "mrtt {mrtt}, minrtt {minrtt}, srtt {srtt}");
    // The receiver never sent data: no bandwidth sample, still in STARTUP (gains 2.88672).
    let r = bbr_parts(&receiver.info);
    assert_eq!((r[0].1.as_str(), r[2].1.as_str(), r[3].1.as_str()), ("0bps", "2.88672", "2.88672"));
    // CUBIC sockets have no bbr info.
    for s in &socks[2..] {
        assert_eq!(s.info[0], "cubic");
        assert!(!s.info.iter().any(|t| t.starts_with("bbr:")), "{out}");
    }
    assert_eq!(parse(&ok(&[&path, "--at", "100ms", "cc", "bbr"])).len(), 2);
    // JSON: bw in bit/s, mrtt in ms, gains as factors.
    let v: serde_json::Value = serde_json::from_str(&ok(&[&path, "--at", "100ms", "--json"])).unwrap();
    let b = &v[0]["info"]["bbr"];
    assert!((b["bw"].as_f64().unwrap() / 1e6 - bw).abs() < 0.051, "{b}");
    assert_eq!(b["mrtt"].as_f64().unwrap(), mrtt);
    assert_eq!(b["cwnd_gain"].as_f64().unwrap().to_string(), parts[3].1);
    assert!(v[2]["info"].get("bbr").is_none());
    assert_check_round_trips("bbr-resolved.toml", &path);
}

/// Two NV senders into `c`; the base-RTT rule (tcp_basertt_kern.c's 80 µs) covers a's
/// connections to c only.
const NV: &str = r#"
[run]
duration = "200ms"
[tcp]
cc = "nv"
[topology]
type = "star"
hosts = ["a", "b", "c"]
rate = "1Gbps"
delay = "50us"
[[flows]]
name = "near"
src = "a"
dst = "c"
[[flows]]
name = "far"
src = "b"
dst = "c"
[[base_rtt]]
base_rtt = "80us"
cc = "nv"
src = ["a"]
dst = ["c"]
"#;

#[test]
fn nv_sockets_show_vegas_info_and_the_base_rtt_reaches_the_matching_flow_only() {
    let (_dir, path) = scenario("nv.toml", NV);
    let out = ok(&[&path, "--at", "100ms"]);
    let socks = parse(&out);
    assert_eq!(socks.len(), 4, "{out}");
    let v: serde_json::Value = serde_json::from_str(&ok(&[&path, "--at", "100ms", "--json"])).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 4);
    for (j, s) in a.iter().zip(&socks) {
        // ss prints the cc name and nothing of tcpvegas_info ...
        assert_eq!(s.info[0], "nv", "{out}");
        for t in &s.info[1..] {
            assert!(!t.starts_with("rttcnt") && !t.starts_with("vegas") && !t.starts_with("nv"), "{out}");
        }
        // ... but computes `send` from tcpv_rtt when NV has one, else from srtt.
        let vegas = &j["info"]["vegas"];
        assert_eq!(vegas["enabled"], true, "{j}");
        let info = &j["info"];
        let rtt_us = match vegas["rtt_us"].as_u64().unwrap() {
            0 => info["rtt"].as_f64().unwrap() * 1000.0,
            r => r as f64,
        };
        let send = info["cwnd"].as_f64().unwrap() * info["mss"].as_f64().unwrap() * 8e6 / rtt_us;
        assert!((info["send"].as_f64().unwrap() - send).abs() < 1.0, "{j}");
        assert_eq!(value(&s.info, "send").unwrap(), format!("{:.1}Mbps", send / 1e6));
    }
    // The rule: NV bounds its min RTT by the base RTT, so the near sender's min RTT is 80 µs
    // although the path's is about 200 µs (tcp_info's minrtt); the far sender has no base RTT.
    let minrtt_us = |i: usize| a[i]["info"]["vegas"]["minrtt_us"].as_u64().unwrap();
    assert_eq!((a[0]["flow"].as_str(), a[0]["side"].as_str()), (Some("near"), Some("client")));
    assert_eq!(minrtt_us(0), 80, "{}", a[0]);
    assert!(a[0]["info"]["minrtt"].as_f64().unwrap() > 0.15, "{}", a[0]);
    assert_eq!((a[2]["flow"].as_str(), a[2]["side"].as_str()), (Some("far"), Some("client")));
    assert!(minrtt_us(2) > 150 && minrtt_us(2) < 1000, "{}", a[2]);
    // Receivers never sample an RTT: NV's min RTT stays at its initial 0xffffffff.
    assert_eq!((minrtt_us(1), minrtt_us(3)), (u32::MAX as u64, u32::MAX as u64));
    // With the 80 µs target NV keeps the near sender's cwnd near nv_pad (10 packets) above what
    // the rate needs; the far sender's window is larger.
    let cwnd = |i: usize| a[i]["info"]["cwnd"].as_u64().unwrap();
    assert!(cwnd(0) < cwnd(2), "near {} far {}", cwnd(0), cwnd(2));
    assert_check_round_trips("nv-resolved.toml", &path);
}

#[test]
fn base_rtt_rules_with_unknown_hosts_fail_naming_the_field() {
    let (_dir, path) = scenario("nv-bad.toml", &NV.replace("dst = [\"c\"]\n", "dst = [\"c\", \"q\"]\n"));
    let e = err(&[&path, "--at", "100ms"]);
    assert!(
        e.contains("field `base_rtt[0].dst`") && e.contains("unknown host \"q\"") && e.contains("\"a\", \"b\", \"c\""),
        "{e}"
    );
}
