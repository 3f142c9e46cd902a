//! The command line itself: help and version everywhere, `--opt=value` forms, exit codes, a
//! closed pipe, shell completions, and the README's command list against `--help`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::Scratch;

fn ccsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ccsim"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The subcommands `ccsim --help` lists.
fn subcommands() -> Vec<String> {
    let o = ccsim().arg("--help").output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let after = text.split("Commands:").nth(1).expect("a Commands section");
    let section = after.split("\n\n").next().unwrap();
    // A command's line starts with two spaces and its name; a wrapped description, with more.
    section
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    let subs = subcommands();
    assert!(subs.len() >= 11, "{subs:?}");
    for s in &subs {
        let o = ccsim().args([s.as_str(), "--help"]).output().unwrap();
        assert!(o.status.success(), "ccsim {s} --help: {}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains(&format!("Usage: ccsim {s}")), "ccsim {s} --help:\n{text}");
        assert!(text.contains("Example"), "ccsim {s} --help has no example:\n{text}");
    }
}

#[test]
fn version_names_the_commit() {
    let o = ccsim().arg("--version").output().unwrap();
    assert!(o.status.success());
    let v = String::from_utf8(o.stdout).unwrap();
    assert!(v.starts_with(&format!("ccsim {} (", env!("CARGO_PKG_VERSION"))), "{v}");
    assert!(v.contains("commit"), "{v}");
}

#[test]
fn usage_errors_exit_2_and_no_arguments_is_one() {
    let o = ccsim().output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Usage: ccsim"));
    let o = ccsim().args(["run", "x.toml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--out"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = ccsim().args(["frobnicate"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    // A scenario that does not exist is bad input, exit 2, naming the file.
    let o = ccsim().args(["check", "no-such.toml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no-such.toml"));
}

#[test]
fn equals_forms_of_options() {
    let dir = Scratch::new("cli-equals");
    let scen = root().join("scenarios/mininet-dctcp.toml");
    let out = dir.join("out");
    let o = ccsim()
        .arg("run")
        .arg(&scen)
        .arg(format!("--out={}", out.display()))
        .arg("--set=run.duration=2s")
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"duration_s\": 2.0,"), "{summary}");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // `ccsim bench --list | head -1`: the reader goes away after one line.
    let mut child =
        ccsim().args(["reproduce", "--list"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    // The pipe is closed here; the rest of the list has nowhere to go.
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(o.status.code(), Some(101), "{err}");
    assert!(!first.is_empty());
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let o = ccsim().args(["completions", shell]).output().unwrap();
        assert!(o.status.success(), "{shell}");
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains("reproduce") && text.contains("quick"), "{shell}");
    }
    assert_eq!(ccsim().args(["completions", "cmd.exe"]).output().unwrap().status.code(), Some(2));
}

#[test]
fn the_readmes_commands_are_the_clis() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut in_readme: Vec<String> = readme
        .lines()
        .filter_map(|l| {
            let l = l.trim_start().trim_start_matches("sudo ");
            l.strip_prefix("target/release/ccsim ").and_then(|rest| rest.split_whitespace().next()).map(str::to_string)
        })
        .collect();
    in_readme.sort();
    in_readme.dedup();
    let mut subs = subcommands();
    subs.sort();
    assert_eq!(in_readme, subs, "README's `target/release/ccsim ...` lines against `ccsim --help`");
}

#[test]
fn a_results_directory_is_never_mixed_or_partial() {
    let dir = Scratch::new("cli-lifecycle");
    let scen = root().join("scenarios/mininet-dctcp.toml");
    let out = dir.join("out");
    let run = |extra: &[&str]| {
        let mut c = ccsim();
        c.arg("run").arg(&scen).arg("--out").arg(&out).args(["--quiet", "--set", "run.duration=2s"]).args(extra);
        c.output().unwrap()
    };
    assert!(run(&[]).status.success());
    std::fs::write(out.join("stale.csv"), "from another scenario").unwrap();
    // A directory with results in it is refused before anything runs...
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("stale.csv").exists());
    // ... and replaced whole with --force: nothing of the earlier run stays.
    assert!(run(&["--force"]).status.success());
    assert!(!out.join("stale.csv").exists() && out.join("summary.json").exists());
    // An --out that cannot be a directory fails at once, not after the run.
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let o =
        ccsim().arg("run").arg(&scen).arg("--out").arg(&file).args(["--set", "run.duration=1000s"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a directory"));
    // No temporary directory is left beside the results.
    let left: Vec<_> = std::fs::read_dir(&*dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().contains("partial")), "{left:?}");
}

#[test]
fn an_interrupted_run_writes_what_it_has_and_says_so() {
    let dir = Scratch::new("cli-interrupt");
    let scen = root().join("scenarios/mininet-dctcp.toml");
    let out = dir.join("out");
    std::fs::create_dir_all(&*dir).unwrap();
    let child = ccsim()
        .arg("run")
        .arg(&scen)
        .arg("--out")
        .arg(&out)
        .args(["--quiet", "--set", "run.duration=100000s"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run is under way (its temporary directory exists), then Ctrl-C.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_dir(&*dir).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().contains("partial")) {
        assert!(std::time::Instant::now() < deadline, "the run never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["interrupted"], true);
    assert_eq!(summary["planned_duration_s"], 100000.0);
    let stopped = summary["duration_s"].as_f64().unwrap();
    assert!(stopped > 0.0 && stopped < 100000.0);
    // The flows' goodput is over the time simulated, not the planned duration.
    assert!(summary["flows"][0]["goodput_mbps"].as_f64().unwrap() > 40.0);
    assert!(summary["queues"][0]["utilisation"].as_f64().unwrap() > 0.9);
    assert!(out.join("queue_s_c.csv").exists());
}

#[test]
fn check_warns_of_probable_mistakes_and_shipped_scenarios_have_none() {
    let scen = root().join("scenarios/mininet-dctcp.toml");
    let o = ccsim()
        .arg("check")
        .arg(&scen)
        .args(["--set", "queues.dctcp.classes[0].k=500", "--set", "flows[0].start=30s", "--set", "record.interval=1us"])
        .output()
        .unwrap();
    assert!(o.status.success(), "warnings are not errors");
    let err = String::from_utf8_lossy(&o.stderr);
    for field in ["queues.dctcp.classes[0].k", "flows[0].start", "record.interval"] {
        assert!(err.contains("warning: ") && err.contains(field), "{field}: {err}");
    }
    for e in std::fs::read_dir(root().join("scenarios")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let o = ccsim().arg("check").arg(&p).output().unwrap();
            assert!(o.status.success());
            assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"), "{}", p.display());
        }
    }
}
