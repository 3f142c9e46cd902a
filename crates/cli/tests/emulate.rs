//! `ccsim emulate` on this machine's kernel (needs root): a short DCTCP run through a real
//! HTB + BPF-marking switch, and nothing left behind afterwards — also when the run is
//! interrupted. `ccsim compare` of a simulated and an emulated run of the same scenario.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::Scratch;

fn ccsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ccsim"))
}

fn tmp(name: &str) -> Scratch {
    Scratch::new(name)
}

/// The tests share the machine's namespaces and congestion-control names: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_root() -> bool {
    // The tests shell out as the current user; `id -u` avoids a libc dependency here.
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

/// Everything an emulation may create, as found on the machine now.
fn leftovers() -> Vec<String> {
    let mut found = Vec::new();
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    for l in String::from_utf8_lossy(&ns.stdout).lines() {
        let name = l.split_whitespace().next().unwrap_or("");
        let b = name.as_bytes();
        if b.len() > 7 && name.starts_with("cs") && b[2..6].iter().all(|c| c.is_ascii_hexdigit()) && b[6] == b'-' {
            found.push(format!("namespace {name}"));
        }
    }
    // veth ends (and so their qdiscs) that escaped into the root namespace.
    let links = Command::new("ip").args(["-o", "link", "show"]).output().unwrap();
    for l in String::from_utf8_lossy(&links.stdout).lines() {
        let name = l.split(':').nth(1).unwrap_or("").trim().split('@').next().unwrap_or("");
        let b = name.as_bytes();
        if b.len() > 7 && name.starts_with("cs") && b[2..6].iter().all(|c| c.is_ascii_hexdigit()) && b[6] == b'-' {
            found.push(format!("interface {name}"));
        }
    }
    let cc = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap_or_default();
    for c in cc.split_whitespace().filter(|c| c.starts_with("ccsim_")) {
        found.push(format!("congestion control {c}"));
    }
    // BPF programs (all of ccsim's are named ccsim_*) and struct_ops maps, as bpftool sees them.
    if let Ok(o) = Command::new("bpftool").args(["prog", "show"]).output() {
        for l in String::from_utf8_lossy(&o.stdout).lines().filter(|l| l.contains(" name ccsim_")) {
            found.push(format!("BPF program {}", l.trim()));
        }
    }
    if let Ok(o) = Command::new("bpftool").args(["struct_ops", "list"]).output() {
        for l in String::from_utf8_lossy(&o.stdout).lines().filter(|l| l.contains("ccsim")) {
            found.push(format!("struct_ops {}", l.trim()));
        }
    }
    let ps = Command::new("pgrep").args(["-f", "ccsim-bpf-loader"]).output().unwrap();
    for p in String::from_utf8_lossy(&ps.stdout).lines() {
        found.push(format!("loader process {p}"));
    }
    if let Ok(rd) = std::fs::read_dir("/sys/fs/cgroup/unified").or_else(|_| std::fs::read_dir("/sys/fs/cgroup")) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if n.starts_with("ccsim-cs") {
                found.push(format!("cgroup {n}"));
            }
        }
    }
    found
}

/// Leftovers once the kernel has finished its own deferred clean-up: a deleted namespace's
/// sockets are destroyed by a kernel work queue, and the struct_ops programs they reference are
/// freed after them (the congestion-control names go at once). Anything still there after 10 s is
/// a real leftover.
fn leftovers_settled() -> Vec<String> {
    let t0 = std::time::Instant::now();
    loop {
        let l = leftovers();
        if l.is_empty() || t0.elapsed() > std::time::Duration::from_secs(10) {
            return l;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

const SCENARIO: &str = r#"
description = "emulation smoke test: two DCTCP senders into one 100 Mb/s port marking at K = 20"
[run]
duration = "3s"
[tcp]
cc = "dctcp"
[queues.dctcp]
classes = [{ name = "dctcp", limit = 425, aqm = "step", k = 20 }]
[topology]
type = "star"
hosts = ["a", "b", "c"]
rate = "100Mbps"
delay = "10us"
switch_queue = "dctcp"
[[flows]]
name = "a"
src = "a"
dst = "c"
[[flows]]
name = "b"
src = "b"
dst = "c"
[[pings]]
name = "a-c"
src = "a"
dst = "c"
start = "0.5s"
interval = "100ms"
ecn = "ect0"
[record]
queues = ["s->c"]
warmup = "1s"
"#;

fn scenario_file(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("smoke.toml");
    std::fs::write(&p, SCENARIO).unwrap();
    p
}

#[test]
fn emulated_dctcp_keeps_the_queue_near_k_and_leaves_nothing_behind() {
    if !is_root() {
        eprintln!("skipped: ccsim emulate needs root");
        return;
    }
    let _one = serial();
    assert_eq!(leftovers_settled(), Vec::<String>::new(), "leftovers before the test");
    let base = tmp("emu");
    let file = scenario_file(&base);
    let (emu, sim) = (base.join("emu"), base.join("sim"));
    let out = ccsim().arg("emulate").arg(&file).arg("--out").arg(&emu).arg("--quiet").output().unwrap();
    let after = leftovers_settled();
    assert!(out.status.success(), "ccsim emulate failed: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(after, Vec::<String>::new(), "leftovers after a successful run");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(emu.join("summary.json")).unwrap()).unwrap();
    let q = &s["queues"][0];
    assert_eq!(q["port"], "s->c");
    let (p50, util, marks) =
        (q["p50"].as_f64().unwrap(), q["utilisation"].as_f64().unwrap(), q["marks"].as_u64().unwrap());
    assert!((10.0..=30.0).contains(&p50), "kernel DCTCP queue p50 {p50} packets (K = 20)");
    assert!(util >= 0.85, "utilisation {util}");
    assert!(marks > 0, "the BPF marker marked nothing");
    for f in s["flows"].as_array().unwrap() {
        assert_eq!(f["cc"], "dctcp");
        assert!(f["goodput_mbps"].as_f64().unwrap() > 25.0, "{f}");
    }
    let p = &s["pings"][0];
    assert!(p["received"].as_u64().unwrap() >= 20, "{p}");
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(emu.join("emulation.json")).unwrap()).unwrap();
    assert_eq!(info["flows"][0]["client_cc"], "ccsim_dctcp");
    assert!(info["dequeue"]["samples"].as_u64().unwrap() > 1000, "{}", info["dequeue"]);
    assert!(std::fs::read_to_string(emu.join("commands.sh")).unwrap().contains("htb"));
    // `ss -tin` snapshots from inside the namespaces show the BPF congestion control at work.
    let ss = std::fs::read_to_string(emu.join("ss.txt")).unwrap();
    // The first snapshot is due at 1 s; its label is the time it was taken, a few ms later on a
    // loaded machine.
    let first_of_a = ss
        .lines()
        .filter_map(|l| l.strip_prefix("# t="))
        .find_map(|l| l.split_once(" s  host a ").map(|(t, _)| t.parse::<f64>().ok()))
        .flatten();
    assert!(first_of_a.is_some_and(|t| (1.0..1.05).contains(&t)), "{ss}");
    assert!(ss.contains("ccsim_dctcp") && ss.contains("delivered_ce:"), "{ss}");

    // The same scenario simulated, and compared.
    let st = ccsim().arg("run").arg(&file).arg("--out").arg(&sim).arg("--quiet").status().unwrap();
    assert!(st.success());
    let c = ccsim().arg("compare").arg(&sim).arg(&emu).arg("--json").output().unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let c: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap();
    let d = c["queues"][0]["occupancy"]["median"].as_f64().unwrap();
    assert!(d < 5.0, "queue CDF median distance sim vs kernel {d} packets");
}

#[test]
fn an_interrupted_emulation_cleans_up() {
    if !is_root() {
        eprintln!("skipped: ccsim emulate needs root");
        return;
    }
    let _one = serial();
    let base = tmp("emu-int");
    let file = scenario_file(&base);
    let mut child =
        ccsim().arg("emulate").arg(&file).arg("--out").arg(base.join("out")).arg("--quiet").spawn().unwrap();
    // Interrupt mid-run, as Ctrl-C would.
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let st = child.wait().unwrap();
    assert!(!st.success(), "an interrupted run must not report success");
    assert!(!base.join("out/summary.json").exists(), "an interrupted run must not write summary.json");
    assert_eq!(leftovers_settled(), Vec::<String>::new(), "leftovers after an interrupted run");
}

#[test]
fn cleanup_removes_what_a_killed_run_left() {
    if !is_root() {
        eprintln!("skipped: ccsim emulate needs root");
        return;
    }
    let _one = serial();
    // A namespace as a killed run would leave it.
    let name = "csfeed-0";
    assert!(Command::new("ip").args(["netns", "add", name]).status().unwrap().success());
    let out = ccsim().args(["emulate", "--cleanup"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(name), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(leftovers(), Vec::<String>::new());
}
