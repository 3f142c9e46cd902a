//! The resource guard and the aggregation of large results: `ccsim check` prints the estimate,
//! `ccsim run` refuses above `--max-memory` / `--max-output` before anything runs, and a run
//! with many ports or flows writes one queue file and plots a bounded number of lines.

mod common;

use common::Scratch;
use std::path::Path;
use std::process::{Command, Output};

fn ccsim(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ccsim")).args(args).current_dir(dir).output().unwrap()
}

/// A star of `hosts` hosts, each sending to the next, every switch port monitored.
fn star(hosts: usize, duration: &str) -> String {
    let names: Vec<String> = (0..hosts).map(|i| format!("\"h{i}\"")).collect();
    let mut s = format!(
        "[run]\nduration = \"{duration}\"\n[topology]\ntype = \"star\"\nhosts = [{}]\nrate = \"1Gbps\"\n[record]\ninterval = \"100us\"\n",
        names.join(", ")
    );
    for i in 0..hosts {
        s += &format!("[[flows]]\nsrc = \"h{i}\"\ndst = \"h{}\"\n", (i + 1) % hosts);
    }
    s
}

#[test]
fn check_prints_the_estimate_and_run_refuses_above_the_limits_before_running() {
    let dir = Scratch::new("limits-refuse");
    std::fs::create_dir_all(&*dir).unwrap();
    std::fs::write(dir.join("s.toml"), star(20, "10ms")).unwrap();
    let o = ccsim(&["check", "s.toml"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("estimate: memory: about") && err.contains("connections"), "{err}");
    assert!(err.contains("estimate: output: about") && err.contains("flows.csv"), "{err}");
    assert!(err.contains("estimate: work: at most 16666 data packets"), "20 hosts at 1 Gb/s for 10 ms: {err}");

    let o = ccsim(&["run", "s.toml", "--out", "out", "--max-memory", "10kB"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("s.toml: the run would need about") && err.contains("above the limit of 10.0 kB"), "{err}");
    assert!(err.contains("record.series = false") && err.contains("--max-memory"), "says what to change: {err}");
    assert!(!dir.join("out").exists(), "nothing written");

    let o = ccsim(&["run", "s.toml", "--out", "out", "--max-output", "50kB"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the results would take about") && err.contains("flows.csv"), "{err}");
    assert!(!dir.join("out").exists(), "nothing written");

    let o = ccsim(&["run", "s.toml", "--out", "out", "--max-memory", "8 parsecs"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a size"));

    let o = ccsim(&["run", "s.toml", "--out", "out", "-q", "--max-memory", "1GB", "--max-output", "1GB"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn many_ports_share_one_queue_file_and_plots_draw_a_bounded_number_of_lines() {
    let dir = Scratch::new("limits-aggregate");
    std::fs::create_dir_all(&*dir).unwrap();
    let hosts = 300; // 300 monitored switch ports, above the 256 that get files of their own
    std::fs::write(dir.join("s.toml"), star(hosts, "2ms")).unwrap();
    let o = ccsim(&["run", "s.toml", "--out", "out", "-q"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("out");
    let files: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(files.len() < 12, "{files:?}");
    assert!(!files.iter().any(|f| f.starts_with("queue_s_")), "no per-port files");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(s["queues"].as_array().unwrap().iter().all(|q| q["csv"] == "queues.csv"));
    let csv = std::fs::read_to_string(out.join("queues.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("t_s,port,packets,bytes"));
    let ports: std::collections::BTreeSet<&str> = lines.map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(ports.len(), hosts, "every port's series, in one file");
    // 21 samples (0 to 2 ms every 100 us) per port.
    assert_eq!(csv.lines().count(), 1 + 21 * hosts);
    let cwnd = std::fs::read_to_string(out.join("cwnd.svg")).unwrap();
    assert!(cwnd.contains("the first 64 of 300 flows; all are in flows.csv"), "the title says so");
    assert!(cwnd.contains(">flow63<"), "the 64th flow drawn");
    assert!(!cwnd.contains(">flow64<"), "the 65th not");
}
