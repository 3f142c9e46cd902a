//! `ccsim ss` end to end: the socket list of a running scenario as iproute2 6.1's `ss -tin`
//! (`-o`, `-e`) prints it, its field order and value formats compared with real `ss` lines
//! (tests/data/ss-iproute2-6.1.txt, captured by scripts/capture-ss-lines), ECN negotiation shown
//! as ss shows it; `--layout 2014` with the info-line field order of the DCTCP merge commit
//! (e3118e8359), its fallback to dctcp-reno when ECN is not negotiated; ss filters and JSON;
//! BBR's `bbr:(...)` info, TCP-NV's vegas info with a `[[base_rtt]]` rule reaching only the
//! connections it matches, and `ccsim check` round trips of `[tcp.bbr]` / `[tcp.nv]`.

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

/// Write a scenario file in a scratch directory of its own (numbered: tests run in parallel and
/// several write the same file name); the directory goes when the first value is dropped.
fn scenario(name: &str, text: &str) -> (Scratch, String) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = Scratch::new(&format!("ss-{n}-{name}"));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    (d, p.display().to_string())
}

/// One socket: the columns of its line, what follows them (`-o`, `-e`) and the tokens of its
/// info line.
#[derive(Debug)]
struct Sock {
    state: String,
    recv_q: u64,
    send_q: u64,
    local: String,
    peer: String,
    extra: Vec<String>,
    info: Vec<String>,
}

/// The header of iproute2 6.1 (the Process heading joins the port's when the ports are at most
/// four characters wide), or of the 2014 ss.
fn parse(out: &str) -> Vec<Sock> {
    let mut lines = out.lines();
    let head: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    let seed = head == ["State", "Recv-Q", "Send-Q", "Local-Address:Port", "Peer-Address:Port"];
    assert!(
        seed || head == ["State", "Recv-Q", "Send-Q", "Local", "Address:Port", "Peer", "Address:Port", "Process"]
            || head == ["State", "Recv-Q", "Send-Q", "Local", "Address:Port", "Peer", "Address:PortProcess"],
        "{head:?}"
    );
    let mut v = Vec::new();
    while let Some(l) = lines.next() {
        let c: Vec<&str> = l.split_whitespace().collect();
        assert!(c.len() >= 5, "socket line {l:?}");
        if seed {
            assert_eq!(c.len(), 5, "socket line {l:?}");
            assert_eq!(c[1], "0", "Recv-Q");
        }
        let info = lines.next().expect("an info line after each socket line");
        assert!(info.starts_with("\t "), "info line {info:?} starts with a tab");
        v.push(Sock {
            state: c[0].into(),
            recv_q: c[1].parse().unwrap(),
            send_q: c[2].parse().unwrap(),
            local: c[3].into(),
            peer: c[4].into(),
            extra: c[5..].iter().map(|t| t.to_string()).collect(),
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
/// printed between (backoff after rto; unacked, retrans, lost, sacked, reordering and rcv_rtt
/// before rcv_space, which the seed's sockets had not all of).
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
            seed.contains(&x.as_str())
                || ["backoff", "unacked", "retrans", "lost", "sacked", "reordering", "rcv_rtt"].contains(&x.as_str()),
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
    let out = ok(&[&dctcp(), "--at", "2s", "--layout", "2014"]);
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
    let out = ok(&[&path, "--at", "2s", "--layout", "2014"]);
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
        assert_eq!(j["recv_q"], t.recv_q);
        assert_eq!(j["info"]["cc"], "dctcp");
        let dctcp = paren_parts(&t.info, "dctcp");
        assert_eq!(j["info"]["ce_state"].as_u64().unwrap().to_string(), dctcp[0].1);
        assert_eq!(j["info"]["alpha"].as_u64().unwrap().to_string(), dctcp[1].1);
        for key in ["cwnd", "pmtu", "advmss", "snd_wnd", "rcv_ssthresh", "lastsnd", "lastrcv"] {
            assert_eq!(j["info"][key].as_u64().map(|x| x.to_string()).as_deref(), value(&t.info, key), "{key}");
        }
        assert_eq!(j["info"]["send"].as_f64().map(|x| format!("{x:.0}bps")).as_deref(), value(&t.info, "send"));
        assert_eq!(j["info"]["ecn"], true, "{j}");
        assert_eq!(j["shutdown"], 0, "{j}");
    }
    // The 2014 layout's JSON has the seed-era fields only.
    let seed: serde_json::Value = serde_json::from_str(&ok(&[&d, "--at", "2s", "--json", "--layout", "2014"])).unwrap();
    assert!(seed[0]["info"].get("pmtu").is_none() && seed[0].get("shutdown").is_none(), "{}", seed[0]);
    assert_eq!(seed[0]["info"]["ce_state"], v[0]["info"]["ce_state"]);
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
    paren_parts(info, "bbr")
}

/// The parts of `NAME:(key:value,...)` (iproute2 6.1's `bbr:(...)`, `dctcp:(...)`).
fn paren_parts(info: &[String], name: &str) -> Vec<(String, String)> {
    let open = format!("{name}:(");
    let t = info.iter().find(|t| t.starts_with(&open)).unwrap_or_else(|| panic!("no {open} in {info:?}"));
    let inner = t.strip_prefix(&open).and_then(|t| t.strip_suffix(')')).unwrap_or_else(|| panic!("{t}"));
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
    // Whole bits per second, as ss -tin (-n) prints rates.
    let bw_bps: u64 = parts[0].1.strip_suffix("bps").unwrap_or_else(|| panic!("{parts:?}")).parse().unwrap();
    let bw = bw_bps as f64 / 1e6;
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
    assert_eq!(b["bw"].as_f64().unwrap(), bw_bps as f64, "{b}");
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
        assert_eq!(value(&s.info, "send").unwrap(), format!("{:.0}bps", info["send"].as_f64().unwrap()));
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

// ---- iproute2 6.1: field order and formats against real ss lines ----

/// iproute2 6.1's `tcp_stats_print` order (misc/ss.c); `<cc>` is the congestion control's name.
/// Real lines are checked against it as well as ccsim's.
const SS_6_1_INFO_ORDER: &[&str] = &[
    "ts",
    "sack",
    "ecn",
    "ecnseen",
    "fastopen",
    "<cc>",
    "wscale",
    "rto",
    "backoff",
    "rtt",
    "ato",
    "qack",
    "bidir",
    "mss",
    "pmtu",
    "rcvmss",
    "advmss",
    "cwnd",
    "ssthresh",
    "bytes_sent",
    "bytes_retrans",
    "bytes_acked",
    "bytes_received",
    "segs_out",
    "segs_in",
    "data_segs_out",
    "data_segs_in",
    "dctcp",
    "bbr",
    "send",
    "lastsnd",
    "lastrcv",
    "lastack",
    "pacing_rate",
    "delivery_rate",
    "delivered",
    "delivered_ce",
    "app_limited",
    "busy",
    "rwnd_limited",
    "sndbuf_limited",
    "unacked",
    "retrans",
    "lost",
    "sacked",
    "dsack_dups",
    "fackets",
    "reordering",
    "reord_seen",
    "rcv_rtt",
    "rcv_space",
    "rcv_ssthresh",
    "notsent",
    "minrtt",
    "rcv_ooopack",
    "snd_wnd",
];

/// What `inet_show_sock` prints after the addresses: `tcp_timer_print` (-o), then
/// `sock_details_print` and the shutdown state (-e).
const SS_6_1_SOCK_ORDER: &[&str] = &["timer", "uid", "ino", "sk", "fwmark", "cgroup", "<shutdown>"];

/// Fields the real ss printed that ccsim never prints, and why.
const NOT_MODELLED: &[(&str, &str)] = &[
    ("ino", "a simulated socket has no inode"),
    ("sk", "a simulated socket has no kernel address"),
    ("cgroup", "ccsim has no cgroups"),
];

/// Fields the real ss printed that ccsim models but the scenarios below do not reach.
const NOT_REACHED: &[(&str, &str)] = &[
    (
        "app_limited",
        "Linux's receivers report the app-limited flag of their initial rate state; ccsim's \
         senders set it only on app-limited rate samples, which bulk and transfer flows do not take",
    ),
    ("reordering", "no packets are reordered in these scenarios (loopback reordered some)"),
    ("reord_seen", "as reordering"),
    ("rcv_ooopack", "as reordering: no segment arrives out of order"),
];

/// (name, shape of the value) of an info line's fields: numbers become `N`, units and separators
/// stay (`rtt:8.077/4.508` is ("rtt", "N/N"), `send 471620651bps` ("send", "Nbps")).
fn info_fields(info: &[String]) -> Vec<(String, String)> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < info.len() {
        let t = info[i].as_str();
        if ["send", "pacing_rate", "delivery_rate"].contains(&t) {
            i += 1;
            v.push((t.to_string(), shape(info.get(i).map(String::as_str).unwrap_or(""))));
        } else if let Some((k, val)) = t.split_once(':') {
            v.push((k.to_string(), shape(val)));
        } else if ["ts", "sack", "ecn", "ecnseen", "fastopen", "bidir", "app_limited"].contains(&t) {
            v.push((t.to_string(), String::new()));
        } else {
            v.push(("<cc>".to_string(), String::new()));
        }
        i += 1;
    }
    v
}

/// (name, shape) of what follows the addresses on a socket line.
fn sock_fields(extra: &[String]) -> Vec<(String, String)> {
    extra
        .iter()
        .map(|t| match t.split_once(':') {
            Some((k, val)) => (k.to_string(), shape(val)),
            None => ("<shutdown>".to_string(), t.clone()),
        })
        .collect()
}

fn shape(v: &str) -> String {
    let mut o = String::new();
    let b = v.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            while i < b.len()
                && (b[i].is_ascii_digit() || (b[i] == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
            {
                i += 1;
            }
            o.push('N');
        } else {
            o.push(b[i] as char);
            i += 1;
        }
    }
    o
}

/// The names are in `order`'s order, each at most once.
fn assert_in_order(what: &str, names: &[String], order: &[&str]) {
    let mut last = None;
    for n in names {
        let k = order.iter().position(|o| o == n).unwrap_or_else(|| panic!("{what}: `{n}` is not a field of ss 6.1"));
        assert!(last.is_none_or(|l| k > l), "{what}: `{n}` out of ss 6.1's order in {names:?}");
        last = Some(k);
    }
}

/// The real capture's sockets, by command.
fn real_sockets() -> Vec<(String, Sock)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ss-iproute2-6.1.txt")).unwrap();
    let mut v = Vec::new();
    let mut block: Option<(String, String)> = None;
    let flush = |b: Option<(String, String)>, v: &mut Vec<(String, Sock)>| {
        if let Some((cmd, out)) = b {
            v.extend(parse(&out).into_iter().map(|s| (cmd.clone(), s)));
        }
    };
    for l in text.lines() {
        if let Some(cmd) = l.strip_prefix("# ss ") {
            flush(block.take(), &mut v);
            block = Some((cmd.to_string(), String::new()));
        } else if l.starts_with('#') {
            flush(block.take(), &mut v);
        } else if let Some((_, out)) = block.as_mut() {
            out.push_str(l);
            out.push('\n');
        }
    }
    flush(block, &mut v);
    v
}

/// A CUBIC transfer with ECN (`tcp_ecn = 1` on both ends) into a 16 KiB receive window, and a
/// marked one without (its sender only accepts ECN).
const CUBIC_ECN: &str = r#"
[run]
duration = "1s"
[tcp]
cc = "cubic"
ecn = "on"
rcvbuf = "16KiB"
[topology]
type = "star"
hosts = ["a", "b", "c"]
rate = "100Mbps"
delay = "1ms"
[[flows]]
name = "ecn"
src = "a"
dst = "b"
kind = "transfer"
size = "50MB"
[[flows]]
name = "plain"
src = "c"
dst = "b"
kind = "transfer"
size = "20KB"
ecn = "passive"
mark = 0x11
"#;

#[test]
fn field_order_and_formats_follow_real_ss_6_1_lines() {
    let real = real_sockets();
    assert!(real.len() >= 20, "{} real sockets", real.len());
    let (_d1, cubic) = scenario("cubic-ecn.toml", CUBIC_ECN);
    let (_d2, bbr) = scenario("bbr.toml", BBR);
    let (_d3, fallback) = scenario("fallback.toml", FALLBACK);
    let d = dctcp();
    let mut ours: Vec<(String, Sock)> = Vec::new();
    for args in [
        vec![cubic.as_str(), "--at", "0.5s", "-e"],
        vec![d.as_str(), "--at", "2s", "-e"],
        vec![d.as_str(), "--at", "2s"],
        vec![bbr.as_str(), "--at", "100ms", "-o"],
        vec![fallback.as_str(), "--at", "2s", "-e"],
        vec![fallback.as_str(), "--at", "0.3s", "-e", "state", "all"],
    ] {
        ours.extend(parse(&ok(&args)).into_iter().map(|s| (args.join(" "), s)));
    }
    // Shapes each field takes in the real lines; every real line follows ss 6.1's order.
    let mut real_shapes: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
    for (cmd, s) in &real {
        let (i, k) = (info_fields(&s.info), sock_fields(&s.extra));
        assert_in_order(
            &format!("real ss {cmd}"),
            &i.iter().map(|f| f.0.clone()).collect::<Vec<_>>(),
            SS_6_1_INFO_ORDER,
        );
        assert_in_order(
            &format!("real ss {cmd}"),
            &k.iter().map(|f| f.0.clone()).collect::<Vec<_>>(),
            SS_6_1_SOCK_ORDER,
        );
        for (n, sh) in i.into_iter().chain(k) {
            real_shapes.entry(n).or_default().insert(sh);
        }
    }
    // ccsim's lines: the same order, and each field ss printed in the same format.
    let mut seen = std::collections::BTreeSet::new();
    for (cmd, s) in &ours {
        let (i, k) = (info_fields(&s.info), sock_fields(&s.extra));
        assert_in_order(
            &format!("ccsim ss {cmd}"),
            &i.iter().map(|f| f.0.clone()).collect::<Vec<_>>(),
            SS_6_1_INFO_ORDER,
        );
        assert_in_order(
            &format!("ccsim ss {cmd}"),
            &k.iter().map(|f| f.0.clone()).collect::<Vec<_>>(),
            SS_6_1_SOCK_ORDER,
        );
        for (n, sh) in i.into_iter().chain(k) {
            if let Some(shapes) = real_shapes.get(&n) {
                // The CC's name and bbr's gains differ in content, not in form.
                if n != "<cc>" && n != "bbr" {
                    assert!(shapes.contains(&sh), "ccsim ss {cmd}: {n} as {sh:?}, real ss as {shapes:?}");
                }
            }
            seen.insert(n);
        }
    }
    // BBR's info: the real lines' form with whole bits per second.
    let b = ours.iter().find_map(|(_, s)| s.info.iter().find(|t| t.starts_with("bbr:(bw:"))).unwrap();
    assert_eq!(shape(b), "bbr:(bw:Nbps,mrtt:N,pacing_gain:N,cwnd_gain:N)");
    assert!(real_shapes["bbr"].contains("(bw:Nbps,mrtt:N,pacing_gain:N,cwnd_gain:N)"), "{:?}", real_shapes["bbr"]);
    // Every field ss printed that ccsim did not is listed, with its reason.
    let missing: Vec<&str> = real_shapes.keys().map(String::as_str).filter(|n| !seen.contains(*n)).collect();
    let listed: Vec<&str> = NOT_MODELLED.iter().chain(NOT_REACHED).map(|(n, _)| *n).collect();
    let mut want = listed.clone();
    want.sort();
    assert_eq!(missing, want, "fields real ss printed that ccsim does not (listed: {listed:?})");
    // ccsim prints, besides, what loopback did not show: DCTCP's info, CE counts, fwmark.
    for n in ["dctcp", "delivered_ce", "fwmark"] {
        assert!(seen.contains(n), "{n}");
    }
}

#[test]
fn ecn_negotiation_shows_as_ss_6_1_shows_it() {
    let (_dir, path) = scenario("cubic-ecn.toml", CUBIC_ECN);
    let socks = parse(&ok(&[&path, "--at", "0.5s", "-o"]));
    assert_eq!(socks.len(), 4);
    let flags = |s: &Sock| -> Vec<String> {
        s.info.iter().take_while(|t| ["ts", "sack", "ecn", "ecnseen"].contains(&t.as_str())).cloned().collect()
    };
    // The ECN flow: both ends negotiated ECN; the receiver has seen ECT packets, the sender
    // (which receives pure ACKs, not ECN-capable) has not, as on Linux.
    assert_eq!(flags(&socks[0]), ["ts", "sack", "ecn"]);
    assert_eq!(flags(&socks[1]), ["ts", "sack", "ecn", "ecnseen"]);
    // The flow whose sender does not request ECN.
    assert_eq!(flags(&socks[2]), ["ts", "sack"]);
    assert_eq!(flags(&socks[3]), ["ts", "sack"]);
    // Without -o ss prints no option flags.
    for s in parse(&ok(&[&path, "--at", "0.5s"])) {
        assert_eq!(s.info[0], "cubic", "{:?}", s.info);
    }
    // DCTCP always negotiates ECN.
    for s in parse(&ok(&[&dctcp(), "--at", "2s", "-o"])) {
        assert_eq!(s.info[2], "ecn", "{:?}", s.info);
    }
    // The sender of the ECN flow: a retransmission timer pending, its unsent bytes counted in
    // Send-Q and notsent, limited by the window a 16 KiB SO_RCVBUFFORCE holds: the buffer is twice
    // that, and a received segment's 1448 bytes of its 2304-byte truesize are window (160/256).
    let s = &socks[0];
    assert!(s.extra[0].starts_with("timer:(on,") && s.extra[0].ends_with(",0)"), "{:?}", s.extra);
    let notsent: u64 = value(&s.info, "notsent").unwrap().parse().unwrap();
    let unacked: u64 = value(&s.info, "unacked").unwrap().parse().unwrap();
    assert_eq!(s.send_q, notsent + unacked * 1448, "{:?}", s.info);
    assert!(value(&s.info, "rwnd_limited").unwrap().ends_with("%)"), "{:?}", s.info);
    let snd_wnd: u32 = value(&s.info, "snd_wnd").unwrap().parse().unwrap();
    assert!((16384..=32768 * 160 / 256).contains(&snd_wnd), "{snd_wnd}");
}

#[test]
fn listeners_and_details_print_as_ss_6_1_does() {
    let (_dir, path) = scenario("fallback.toml", FALLBACK);
    let out = ok(&[&path, "--at", "0.3s", "-e", "state", "all"]);
    let socks = parse(&out);
    assert_eq!(socks.iter().map(|s| s.state.as_str()).collect::<Vec<_>>(), ["SYN-SENT", "LISTEN"], "{out}");
    // tcp_get_info stops after cwnd for a listener; no CC info at or above TIME-WAIT.
    assert_eq!(socks[1].info, ["dctcp", "cwnd:10"], "{out}");
    assert_eq!(socks[1].extra, ["<->"]);
    // The SYN-SENT socket: its SYN's retransmission timer (the RTO before any RTT sample, 1 s,
    // armed at 100 ms) and the SYN in Send-Q.
    assert_eq!(socks[0].extra, ["timer:(on,800ms,0)", "<->"], "{out}");
    assert_eq!(socks[0].send_q, 1);
    // Columns padded as ss pads them: the header's Process column spans the widest cell.
    let head = out.lines().next().unwrap();
    assert!(head.starts_with("State    Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess "), "{head:?}");
    // --layout 2014 refuses -o and -e.
    let e = err(&[&path, "--at", "0.3s", "--layout", "2014", "-e"]);
    assert!(e.contains("--layout 2014") && e.contains("-o and -e"), "{e}");
}
