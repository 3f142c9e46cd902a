//! `ccsim run` end to end: the Mininet-HiFi scenarios meet the issue's figures, runs are
//! deterministic, and bad scenarios get one clear error and no results directory.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::Scratch;

fn ccsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ccsim"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> Scratch {
    Scratch::new(name)
}

fn run(scenario: &Path, out: &Path) -> serde_json::Value {
    let st = ccsim().arg("run").arg(scenario).arg("--out").arg(out).arg("--quiet").status().unwrap();
    assert!(st.success(), "ccsim run {} failed", scenario.display());
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn mininet_dctcp_queue_stays_near_k_at_full_rate() {
    let out = tmp("dctcp");
    let s = run(&root().join("scenarios/mininet-dctcp.toml"), &out);
    let q = &s["queues"][0];
    let (p50, p99, util) = (q["p50"].as_f64().unwrap(), q["p99"].as_f64().unwrap(), q["utilisation"].as_f64().unwrap());
    assert!((12.0..=25.0).contains(&p50), "DCTCP queue p50 {p50}");
    assert!(p99 <= 35.0, "DCTCP queue p99 {p99}");
    assert!(util >= 0.95, "utilisation {util}");
    assert!(q["marks"].as_u64().unwrap() > 0);
    for f in s["flows"].as_array().unwrap() {
        assert_eq!(f["cc"], "dctcp");
        assert_eq!(f["rto_count"], 0);
    }
    for f in ["config.resolved.toml", "queue_s_c.csv", "queue_s_c.svg", "queue_cdf.svg", "flows.csv", "cwnd.svg"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
}

#[test]
fn mininet_tcp_queue_sits_near_the_buffer() {
    let out = tmp("tcp");
    let s = run(&root().join("scenarios/mininet-tcp.toml"), &out);
    let q = &s["queues"][0];
    assert!(q["p50"].as_f64().unwrap() >= 150.0, "TCP queue p50 {}", q["p50"]);
    assert!(q["utilisation"].as_f64().unwrap() >= 0.95);
    assert!(q["drops"].as_u64().unwrap() > 0, "a drop-tail queue that never drops was never full");
}

#[test]
fn same_seed_gives_byte_identical_summary() {
    let (a, b) = (tmp("det-a"), tmp("det-b"));
    let sc = root().join("scenarios/mininet-dctcp.toml");
    run(&sc, &a);
    run(&sc, &b);
    let (sa, sb) = (std::fs::read(a.join("summary.json")).unwrap(), std::fs::read(b.join("summary.json")).unwrap());
    assert_eq!(sa, sb);
    assert_eq!(std::fs::read(a.join("queue_s_c.csv")).unwrap(), std::fs::read(b.join("queue_s_c.csv")).unwrap());
}

#[test]
fn resolved_config_runs_to_the_same_result() {
    let (a, b) = (tmp("res-a"), tmp("res-b"));
    let sa = run(&root().join("scenarios/mininet-tcp.toml"), &a);
    let sb = run(&a.join("config.resolved.toml"), &b);
    assert_eq!(sa, sb);
    let text = std::fs::read_to_string(a.join("config.resolved.toml")).unwrap();
    for field in ["rto_min", "delack_min", "shift_g", "hystart", "l2_overhead", "mark_at"] {
        assert!(text.contains(field), "resolved config lacks the default for {field}");
    }
}

/// Write `text` as a scenario, run it, and return (exit status, stderr, whether the out dir exists).
fn bad(name: &str, text: &str) -> (i32, String, bool) {
    let dir = tmp(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("out");
    let o = ccsim().arg("run").arg(&file).arg("--out").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let exists = out.exists();
    (o.status.code().unwrap_or(-1), err, exists)
}

const GOOD: &str = r#"
[topology]
type = "star"
hosts = ["a", "b"]
rate = "1Gbps"

[[flows]]
src = "a"
dst = "b"
"#;

#[test]
fn typo_field_is_named() {
    let (code, err, exists) = bad("typo", &GOOD.replace("rate = ", "rat = "));
    assert_ne!(code, 0);
    assert!(err.contains("bad.toml"), "{err}");
    assert!(err.contains("unknown field `rat`"), "{err}");
    assert!(err.contains("`rate`"), "the error should list the allowed fields: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!exists);
}

#[test]
fn negative_rate_is_named_with_allowed_range() {
    let (code, err, exists) = bad("neg", &GOOD.replace("\"1Gbps\"", "\"-100Mbps\""));
    assert_ne!(code, 0);
    assert!(err.contains("bad.toml") && err.contains("topology.rate") && err.contains("positive rate"), "{err}");
    assert!(!exists);
}

#[test]
fn missing_node_is_named_with_the_known_hosts() {
    let (code, err, exists) = bad("missing", &GOOD.replace("dst = \"b\"", "dst = \"c\""));
    assert_ne!(code, 0);
    assert!(err.contains("flows[0].dst") && err.contains("unknown host \"c\"") && err.contains("a, b"), "{err}");
    assert!(!exists);
}

#[test]
fn out_of_range_values_are_rejected() {
    for (what, text, field) in [
        ("shift_g", format!("[tcp]\ndctcp = {{ shift_g = 11 }}\n{GOOD}"), "tcp.dctcp"),
        ("cc", GOOD.replace("dst = \"b\"", "dst = \"b\"\ncc = \"vegas\""), "flows[0].cc"),
        ("loss", GOOD.replace("rate = \"1Gbps\"", "rate = \"1Gbps\"\nloss = 1.5"), "topology.loss"),
        ("duration", format!("[run]\nduration = \"-1s\"\n{GOOD}"), "run.duration"),
    ] {
        let (code, err, exists) = bad(what, &text);
        assert_ne!(code, 0, "{what}");
        assert!(err.contains(field), "{what}: {err}");
        assert!(!exists, "{what}");
    }
}

#[test]
fn malformed_toml_reports_a_line() {
    let (code, err, _) = bad("syntax", "[topology\ntype = 1");
    assert_ne!(code, 0);
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn unconnected_hosts_and_self_pings_are_rejected_before_running() {
    let custom = r#"
[topology]
type = "custom"
nodes = [{ name = "h", kind = "host" }, { name = "g", kind = "host" }, { name = "s", kind = "switch" }]
links = [{ a = "h", b = "s", rate = "1Gbps" }]

[[flows]]
src = "h"
dst = "g"
"#;
    let (code, err, exists) = bad("nopath", custom);
    assert_ne!(code, 0);
    assert!(err.contains("flows[0].dst") && err.contains("no path"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!exists);
    let (code, err, _) = bad("selfping", &format!("{GOOD}\n[[pings]]\nsrc = \"a\"\ndst = \"a\"\n"));
    assert_ne!(code, 0);
    assert!(err.contains("pings[0].dst") && err.contains("must differ"), "{err}");
}

#[test]
fn the_fq_example_shares_the_nic_per_socket() {
    let out = tmp("fq-example");
    let s = run(&root().join("scenarios/fq-shared-nic.toml"), &out);
    let g: Vec<f64> = s["flows"].as_array().unwrap().iter().map(|f| f["goodput_mbps"].as_f64().unwrap()).collect();
    assert_eq!(g.len(), 2);
    assert!(g[0].min(g[1]) / g[0].max(g[1]) > 0.95, "CUBIC and BBR through fq: {g:?}");
    assert_eq!(s["queues"][0]["classes"][0]["name"], "fq");
}
