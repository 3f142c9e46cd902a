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
    section.lines().filter_map(|l| l.split_whitespace().next()).filter(|w| *w != "help").map(str::to_string).collect()
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
