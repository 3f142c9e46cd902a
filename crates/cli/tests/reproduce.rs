//! `ccsim reproduce --quick --json`: a row for every metric of every experiment, with an
//! honest verdict, and a report with the figures.

use std::process::Command;

mod common;
use common::Scratch;

#[test]
fn quick_reproduce_gives_a_row_for_every_metric() {
    let out = Scratch::new("reproduce");
    let o = Command::new(env!("CARGO_BIN_EXE_ccsim"))
        .args(["reproduce", "--quick", "--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let count = |exp: &str| rows.iter().filter(|r| r["experiment"] == exp).count();
    assert_eq!(count("mininet-queue"), 5);
    // 2 CCs x (6 timeout + 5 throughput + fairness + 5 latency) + 3 claims.
    assert_eq!(count("linux-incast"), 2 * (6 + 5 + 1 + 5) + 3);
    assert_eq!(count("linux-convergence"), 6);
    assert_eq!(count("linux-syn-ect"), 5 * 2 + 2);
    assert_eq!(count("freebsd-bulk"), 8);
    assert_eq!(count("bbr-random-loss"), 3);
    assert_eq!(count("bbr-bufferbloat"), 4);
    // 3 goodputs, the base-RTT claim, the same claim with host timing noise.
    assert_eq!(count("nv-single"), 5);
    assert_eq!(count("nv-2to1"), 7);
    assert_eq!(count("nv-3x6"), 9);
    assert_eq!(count("freebsd-incast"), 2);
    for r in rows {
        for field in ["experiment", "metric", "seed", "ccsim", "verdict", "note"] {
            assert!(r[field].is_string(), "row lacks {field}: {r}");
        }
        let v = r["verdict"].as_str().unwrap();
        assert!(["reproduced", "shape", "not reproduced"].contains(&v), "{v}");
        // A row that disagrees with the seed says why, beyond its tolerance.
        if v == "not reproduced" {
            let note = r["note"].as_str().unwrap();
            let reason =
                note.strip_prefix("tolerance ±").map_or(note, |rest| rest.split_once(['.', ';']).map_or("", |x| x.1));
            assert!(reason.trim().len() >= 40, "a row not reproduced gives no reason: {r}");
        }
    }
    let find = |metric: &str| rows.iter().find(|r| r["metric"] == metric).unwrap_or_else(|| panic!("no row {metric}"));
    // Claims the issue requires to hold.
    assert_eq!(find("DCTCP queue p50 (packets)")["verdict"], "reproduced");
    assert_eq!(find("DCTCP fairness ≥ 0.99")["verdict"], "shape");
    assert_eq!(find("DCTCP much lower ping latency")["verdict"], "shape");
    assert_eq!(find("probability falls with competing flows (SYN not ECT)")["verdict"], "shape");
    assert_eq!(find("DCTCP: time to fair share after flow 2 starts")["verdict"], "shape");
    assert_eq!(find("DCTCP and one-sided DCTCP beat NewReno on short-flow time, every size")["verdict"], "shape");
    assert_eq!(find("BBR ≥ 100× CUBIC under 1 % loss")["verdict"], "shape");
    assert_eq!(find("BBR median RTT ≥ 10× lower than CUBIC")["verdict"], "shape");
    assert_eq!(find("NV's ping RTT far below CUBIC's")["verdict"], "shape");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Quick mode") && html.matches("<svg").count() >= 8, "report lacks figures");
}

/// Experiments run in parallel (`--jobs`), and the scorecard and every file are the same bytes as
/// one at a time.
#[test]
fn parallel_runs_give_the_same_bytes_as_one_at_a_time() {
    let base = Scratch::new("reproduce-jobs");
    let run = |jobs: &str| {
        let out = base.join(jobs);
        let o = Command::new(env!("CARGO_BIN_EXE_ccsim"))
            .args([
                "reproduce",
                "mininet-queue",
                "linux-syn-ect",
                "bbr-bufferbloat",
                "--quick",
                "--json",
                "--jobs",
                jobs,
            ])
            .arg("--out")
            .arg(&out)
            // The report's date: fixed, as for reproducible builds.
            .env("SOURCE_DATE_EPOCH", "1795780800")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        let mut stack = vec![out.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    files.push((p.strip_prefix(&out).unwrap().display().to_string(), std::fs::read(&p).unwrap()));
                }
            }
        }
        files.sort();
        (o.stdout, files)
    };
    let (one, files_one) = run("1");
    let (three, files_three) = run("3");
    assert_eq!(one, three, "the scorecard");
    assert!(files_one.len() > 10);
    assert_eq!(files_one, files_three);
    let o = Command::new(env!("CARGO_BIN_EXE_ccsim")).args(["reproduce", "--jobs", "0"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--jobs"), "{}", String::from_utf8_lossy(&o.stderr));
}
