//! Shared helpers: locating the conformance scripts.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// True when the conformance scripts are absent and the test should skip: they are a third-party
/// suite kept beside the repository (`../shared`), not in it. Under CI their absence is a failure.
pub fn skip_without_corpus() -> bool {
    if ccsim_pdrill::suite_dir(&repo()).is_some() || std::env::var_os("CI").is_some() {
        return false;
    }
    eprintln!("skipped: needs {}", ccsim_pdrill::SUITE_HOW);
    true
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The suite's directory (`ccsim_pdrill::suite_dir`: CCSIM_PACKETDRILL or ../shared beside the
/// repository).
pub fn corpus_dir() -> PathBuf {
    ccsim_pdrill::suite_dir(&repo()).unwrap_or_else(|| {
        panic!("packetdrill conformance scripts not found; these tests need {}", ccsim_pdrill::SUITE_HOW)
    })
}

/// All `*.pkt` files under `dir`, sorted.
pub fn pkt_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("reading {}: {e}", d.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "pkt") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Reads a script given relative to the corpus directory.
pub fn read_script(rel: &str) -> String {
    let path = corpus_dir().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// ccsim's expected result on a script (`tests/results.tsv`): None for a pass, else the line
/// where it stops.
pub fn expected_results() -> std::collections::BTreeMap<String, Option<u32>> {
    let text = include_str!("../results.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let line = match cols[1] {
                "pass" => None,
                "fail" => Some(cols[2].parse().expect("results.tsv: a failing script's line")),
                other => panic!("results.tsv: result {other:?}, expected pass or fail"),
            };
            (cols[0].to_string(), line)
        })
        .collect()
}
