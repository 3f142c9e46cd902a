//! The receive window against Linux 6.18: scripts in `tests/rwnd/` whose every ACK (its time,
//! ack number and advertised window) was recorded from the kernel by `scripts/record-rwnd`
//! (initial window and scale, `tcp_grow_window`, the measured `scaling_ratio`, unread data,
//! autotuning, a small `SO_RCVBUF` with a closed window, out-of-order data, an active open).
//! They are our own scripts, so these tests run in every clone.

use ccsim_pdrill::{parse, run_file, run_script, RunOptions};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rwnd")
}

fn scripts() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pkt"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_recorded_window_is_the_kernels() {
    let all = scripts();
    assert_eq!(all.len(), 7, "{all:?}");
    for p in &all {
        let r = run_file(p, &RunOptions::default());
        assert!(r.passed, "{}: {:?}", p.display(), r.failure);
    }
}

/// Run `name` with the first line containing `from` changed to `to`; the line number changed.
fn mutated(name: &str, from: &str, to: &str) -> (usize, Option<u32>) {
    let text = std::fs::read_to_string(dir().join(name)).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let i = lines.iter().position(|l| l.contains(from)).unwrap_or_else(|| panic!("{name} lacks {from:?}"));
    lines[i] = lines[i].replacen(from, to, 1);
    let script = parse(&lines.join("\n")).unwrap();
    let (failure, _, _) = run_script(&script, &dir(), &RunOptions::default());
    (i + 1, failure.map(|f| f.line))
}

/// The scripts can fail: one window unit off, or an ACK expected at once instead of by the
/// delayed-ACK timer, stops them at that line.
#[test]
fn a_window_one_unit_off_fails_where_it_is() {
    for (name, from, to) in [
        ("grow.pkt", "ack 2921 win 548", "ack 2921 win 549"),
        ("autotune.pkt", "win 1025", "win 1024"),
        ("small-rcvbuf.pkt", "ack 1001 win 2000", "ack 1001 win 1999"),
        ("active.pkt", "ack 1 win 502", "ack 1 win 501"),
        ("delayed-ack-unread.pkt", "0.244 > . 3:3(0) ack 4001 win 1036", "0.200 > . 3:3(0) ack 4001 win 1036"),
    ] {
        let (line, failed_at) = mutated(name, from, to);
        assert_eq!(failed_at, Some(line as u32), "{name}: {from} -> {to}");
    }
}

/// Before 6.6 half the buffer was window whatever the skbs held (`tcp_adv_win_scale` = 1), and
/// before 6.10 the initial window was at most 64 KB: the recorded windows are those of the
/// current rules only.
#[test]
fn older_rules_advertise_other_windows() {
    for rules in [ccsim_tcp::RcvWindowRules::Pre6_6, ccsim_tcp::RcvWindowRules::Pre6_10] {
        let opts = RunOptions { rcv_window_rules: rules, ..RunOptions::default() };
        let r = run_file(&dir().join("delayed-ack-unread.pkt"), &opts);
        assert!(!r.passed, "{rules:?}");
    }
}
