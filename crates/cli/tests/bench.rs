//! `ccsim bench`: the smoke benchmark runs (in its own process) and reports every field. No
//! assertion here is about speed.

use std::process::Command;

fn ccsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ccsim"))
}

#[test]
fn bench_smoke_json_has_the_fields() {
    let out = ccsim().args(["bench", "smoke", "--json"]).output().unwrap();
    assert!(out.status.success(), "ccsim bench smoke failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v.as_array().expect("a list of benchmarks");
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["name"], "smoke");
    assert_eq!(r["sim_time_s"].as_f64(), Some(0.1));
    for f in ["data_packets_delivered", "events", "peak_rss_kib", "repeat"] {
        assert!(r[f].as_u64().is_some_and(|x| x > 0), "{f}: {}", r[f]);
    }
    for f in [
        "events_per_packet",
        "cpu_user_s",
        "wall_s",
        "packets_per_cpu_s",
        "packets_per_cpu_s_min",
        "packets_per_cpu_s_max",
    ] {
        assert!(r[f].is_number() || r[f].is_null(), "{f}: {}", r[f]);
    }
    assert!(r["events_per_packet"].as_f64().unwrap() > 1.0);
    assert_eq!(r["event_list"], "heap", "a star of 3 hosts keeps its events on the heap");
    assert_eq!(r["runs"].as_array().unwrap().len(), 1);
}

#[test]
fn bench_rejects_unknown_names_and_bad_repeat() {
    let out = ccsim().args(["bench", "S9"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown benchmark `S9`") && err.contains("smoke"), "{err}");
    let out = ccsim().args(["bench", "smoke", "--repeat", "0"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("1..=1000"));
    let out = ccsim().args(["bench", "--list"]).output().unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    for n in ["S1", "S1-long", "S2", "S3", "smoke"] {
        assert!(list.lines().any(|l| l.starts_with(n)), "{n} listed: {list}");
    }
}
