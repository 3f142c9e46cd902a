//! `ccsim emulate` on this machine's kernel (needs root): a short DCTCP run through a real
//! HTB + BPF-marking switch, and nothing left behind afterwards — also when the run is
//! interrupted or hung up, and, after `ccsim emulate --cleanup`, when it is killed. One run at a
//! time: a second is refused at once, and so is a clean-up of a live run; a namespace that only
//! looks like ccsim's is left alone. `ccsim compare` of a simulated and an emulated run of the
//! same scenario.

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
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Before the first emulation of this test binary: was tracefs mounted already?
    TRACEFS_BEFORE.get_or_init(|| tracefs_mounted(TRACEFS));
    guard
}

/// Where ccsim mounts tracefs if nobody has.
const TRACEFS: &str = "/sys/kernel/tracing";
/// Where ccsim keeps its lock and its runs' registries.
const RUN_DIR: &str = "/run/ccsim";

static TRACEFS_BEFORE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

fn tracefs_mounted(path: &str) -> bool {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 2 && f[2] == "tracefs" && f[1] == path
    })
}

/// Names in `dir` starting with `prefix` (none if `dir` is missing).
fn entries_starting(dir: &Path, prefix: &str) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<String> =
        rd.flatten().map(|e| e.file_name().to_string_lossy().to_string()).filter(|n| n.starts_with(prefix)).collect();
    v.sort();
    v
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
    for tracing in [TRACEFS, "/sys/kernel/debug/tracing"] {
        let instances = Path::new(tracing).join("instances");
        for n in entries_starting(&instances, "ccsim-") {
            found.push(format!("ftrace instance {}", instances.join(n).display()));
        }
    }
    if tracefs_mounted(TRACEFS) && TRACEFS_BEFORE.get() == Some(&false) {
        found.push(format!("tracefs mount {TRACEFS} (not there when the tests began)"));
    }
    for n in entries_starting(&std::env::temp_dir(), "ccsim-emulate-") {
        found.push(format!("work directory {}", std::env::temp_dir().join(n).display()));
    }
    for n in entries_starting(Path::new(RUN_DIR), "emulate-") {
        found.push(format!("registry {RUN_DIR}/{n}"));
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

/// Starts an emulation of the smoke scenario, sends it `signal` mid-run, and checks that it
/// stopped without success and without leaving anything.
fn stopped_by_signal_cleans_up(signal: &str) {
    let base = tmp(&format!("emu-{signal}"));
    let file = scenario_file(&base);
    let mut child =
        ccsim().arg("emulate").arg(&file).arg("--out").arg(base.join("out")).arg("--quiet").spawn().unwrap();
    // Interrupt mid-run, as Ctrl-C (INT) or a closed terminal (HUP) would.
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let _ = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
    let st = child.wait().unwrap();
    assert!(!st.success(), "a run stopped by SIG{signal} must not report success");
    assert!(!base.join("out/summary.json").exists(), "a run stopped by SIG{signal} must not write summary.json");
    assert_eq!(leftovers_settled(), Vec::<String>::new(), "leftovers after a run stopped by SIG{signal}");
}

#[test]
fn an_interrupted_emulation_cleans_up() {
    if !is_root() {
        eprintln!("skipped: ccsim emulate needs root");
        return;
    }
    let _one = serial();
    stopped_by_signal_cleans_up("INT");
}

#[test]
fn a_hung_up_emulation_cleans_up() {
    if !is_root() {
        eprintln!("skipped: ccsim emulate needs root");
        return;
    }
    let _one = serial();
    stopped_by_signal_cleans_up("HUP");
}

/// TCP-NV with a base-RTT rule: besides namespaces, the loader and the ftrace instance, the run
/// makes a cgroup. Long enough to be killed mid-run.
const NV_SCENARIO: &str = r#"
description = "emulation clean-up test: TCP-NV with a base-RTT rule, so the run makes a cgroup too"
[run]
duration = "5s"
[tcp]
cc = "nv"
[topology]
type = "star"
hosts = ["a", "c"]
rate = "100Mbps"
delay = "10us"
[[flows]]
name = "a"
src = "a"
dst = "c"
[[base_rtt]]
base_rtt = "80us"
cc = "nv"
src = ["a", "c"]
dst = ["a", "c"]
[record]
queues = ["s->c"]
"#;

/// The registry file of the run with process id `pid`, once it lists `kind` (waits up to 20 s).
fn registry_listing(pid: u32, kind: &str) -> Option<(PathBuf, String)> {
    let t0 = std::time::Instant::now();
    while t0.elapsed() < std::time::Duration::from_secs(20) {
        for n in entries_starting(Path::new(RUN_DIR), &format!("emulate-{pid}-")) {
            let path = Path::new(RUN_DIR).join(&n);
            if let Ok(text) = std::fs::read_to_string(&path) {
                if n.ends_with(".json") && text.contains(&format!("\"kind\": \"{kind}\"")) {
                    return Some((path, text));
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    None
}

#[test]
fn cleanup_removes_what_a_killed_run_left() {
    if !is_root() {
        eprintln!("skipped: ccsim emulate needs root");
        return;
    }
    let _one = serial();
    let base = tmp("emu-kill");
    std::fs::create_dir_all(&base).unwrap();
    let file = base.join("nv.toml");
    std::fs::write(&file, NV_SCENARIO).unwrap();
    let mut child =
        ccsim().arg("emulate").arg(&file).arg("--out").arg(base.join("out")).arg("--quiet").spawn().unwrap();
    // Once the run traces (it made everything else before), kill it as `kill -9` would.
    let found = registry_listing(child.id(), "ftrace_instance");
    let _ = child.kill();
    let _ = child.wait();
    let (registry, text) = found.expect("the run recorded its ftrace instance within 20 s");
    for kind in ["namespace", "cgroup", "bpf_loader", "ftrace_instance", "work_dir"] {
        assert!(text.contains(&format!("\"kind\": \"{kind}\"")), "no {kind} in the registry: {text}");
    }
    let before = leftovers();
    assert!(before.iter().any(|l| l.starts_with("ftrace instance")), "a killed run leaves its trace: {before:?}");
    assert!(before.iter().any(|l| l.starts_with("namespace")), "{before:?}");

    let out = ccsim().args(["emulate", "--cleanup"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for what in ["removed ftrace instance", "removed namespace", "removed cgroup", "removed work directory"] {
        assert!(err.contains(what), "`{what}` missing from: {err}");
    }
    assert!(err.contains(&format!("removed registry {}", registry.display())), "{err}");
    assert_eq!(leftovers_settled(), Vec::<String>::new(), "leftovers after --cleanup");
    // A second clean-up tells the truth: there is nothing left.
    let again = ccsim().args(["emulate", "--cleanup"]).output().unwrap();
    assert!(again.status.success());
    assert_eq!(String::from_utf8_lossy(&again.stderr).trim(), "nothing to clean up");
}

#[test]
fn a_second_run_and_a_cleanup_are_refused_while_a_run_is_alive() {
    if !is_root() {
        eprintln!("skipped: ccsim emulate needs root");
        return;
    }
    let _one = serial();
    let base = tmp("emu-two");
    let file = scenario_file(&base);
    let first = ccsim()
        .arg("emulate")
        .arg(&file)
        .arg("--out")
        .arg(base.join("first"))
        .arg("--quiet")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = first.id();
    let recorded = registry_listing(pid, "namespace");
    let t0 = std::time::Instant::now();
    let second = ccsim().arg("emulate").arg(&file).arg("--out").arg(base.join("second")).arg("--quiet").output();
    let took = t0.elapsed();
    let cleanup = ccsim().args(["emulate", "--cleanup"]).output();
    let first = first.wait_with_output().unwrap();
    assert!(recorded.is_some(), "the first run did not record its namespaces within 20 s");
    let second = second.unwrap();
    let msg = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "two emulations ran at once");
    assert!(took < std::time::Duration::from_secs(2), "the second run was refused only after {took:?}");
    assert!(msg.contains("another ccsim emulation is running") && msg.contains(&format!("pid {pid}")), "{msg}");
    assert!(!base.join("second").exists(), "the refused run wrote {}", base.join("second").display());
    let cleanup = cleanup.unwrap();
    let msg = String::from_utf8_lossy(&cleanup.stderr);
    assert!(!cleanup.status.success(), "--cleanup during a run must refuse: {msg}");
    assert!(msg.contains(&format!("run pid {pid} is still running; stop it first")), "{msg}");
    assert!(first.status.success(), "the live run failed: {}", String::from_utf8_lossy(&first.stderr));
    assert!(base.join("first/summary.json").exists());
    assert_eq!(leftovers_settled(), Vec::<String>::new(), "leftovers after the run");
}

/// A namespace the test made itself, deleted when dropped (also when an assertion fails).
struct OwnNamespace(&'static str);

impl OwnNamespace {
    fn add(name: &'static str) -> OwnNamespace {
        let st = Command::new("ip").args(["netns", "add", name]).status().unwrap();
        assert!(st.success(), "ip netns add {name}");
        OwnNamespace(name)
    }
}

impl Drop for OwnNamespace {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", self.0]).status();
    }
}

#[test]
fn cleanup_leaves_a_namespace_no_run_recorded_alone() {
    if !is_root() {
        eprintln!("skipped: ccsim emulate needs root");
        return;
    }
    let _one = serial();
    // Named as ccsim names its namespaces (`cs` + 4 hex digits + `-` + a number), made by a user.
    let ns = OwnNamespace::add("csfeed-0");
    let out = ccsim().args(["emulate", "--cleanup"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("namespace csfeed-0: not created by a recorded ccsim run, left alone"), "{err}");
    assert!(!err.contains("removed namespace"), "{err}");
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.lines().any(|l| l.split_whitespace().next() == Some(ns.0)), "csfeed-0 was deleted: {list}");
}
