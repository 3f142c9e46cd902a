//! What a results directory records: each flow's congestion state over time (cwnd, ssthresh,
//! packets in flight, pacing and delivery rate, DCTCP's alpha), each flow's kind and size, each
//! answered ping with its send time; names that would merge rows or files are refused or kept
//! apart.

use ccsim_scenario::{build, parse, run_to_dir};
use std::path::PathBuf;

/// A results directory removed when dropped.
struct Dir(PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(text: &str, name: &str) -> Dir {
    let dir = Dir(std::env::temp_dir().join(format!("ccsim-records-{}-{name}", std::process::id())));
    let s = parse(text, "records.toml").unwrap();
    let b = build(&s).unwrap_or_else(|e| panic!("{e}"));
    run_to_dir(b, "", &dir.0, None, |_, _| {}).unwrap();
    dir
}

const TWO_DCTCP: &str = r#"
[run]
duration = "0.5s"
[tcp]
cc = "dctcp"
[queues.q]
classes = [{ limit = 1000, aqm = "step", k = 65 }]
[topology]
type = "star"
hosts = ["a", "b", "r"]
rate = "10Gbps"
delay = "24.375us"
switch_queue = "q"
[[flows]]
name = "a"
src = "a"
dst = "r"
[[flows]]
name = "b"
src = "b"
dst = "r"
kind = "transfer"
size = "20MB"
[[pings]]
name = "p"
src = "a"
dst = "r"
interval = "10ms"
[record]
queues = ["s->r"]
warmup = "0.1s"
"#;

fn column(rows: &[Vec<String>], header: &[String], name: &str) -> Vec<String> {
    let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}: {header:?}"));
    rows.iter().map(|r| r[i].clone()).collect()
}

#[test]
fn flows_csv_has_the_senders_state() {
    let d = run(TWO_DCTCP, "state");
    let text = std::fs::read_to_string(d.0.join("flows.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows: Vec<Vec<String>> =
        lines.map(|l| l.split(',').map(String::from).collect()).filter(|r: &Vec<String>| r[1] == "a").collect();
    let num =
        |c: &str| -> Vec<f64> { column(&rows, &header, c).iter().map(|v| v.parse().unwrap_or(f64::NAN)).collect() };
    let (t, alpha, ssthresh) = (num("t_s"), num("alpha"), column(&rows, &header, "ssthresh"));
    // DCTCP's alpha is a fraction; ssthresh is empty until the first reduction, then a number.
    assert!(alpha.iter().all(|a| (0.0..=1.0).contains(a)), "alpha in [0, 1]");
    assert_eq!(ssthresh[0], "", "no ssthresh before the first reduction");
    assert!(ssthresh.last().unwrap().parse::<u32>().is_ok());
    // In steady state (after 0.2 s) the delivery rate is the flow's share of the link: about half
    // of 10 Gb/s while the transfer runs, and never above the link rate.
    let steady: Vec<usize> = (0..t.len()).filter(|&i| t[i] > 0.2).collect();
    let delivery = num("delivery_rate_bps");
    let mean = steady.iter().map(|&i| delivery[i]).sum::<f64>() / steady.len() as f64;
    assert!(mean > 3.0e9 && mean < 10.0e9, "mean delivery rate {mean}");
    assert!(steady.iter().all(|&i| delivery[i] <= 10.0e9 * 1.01));
    let (inflight, cwnd) = (num("inflight"), num("cwnd"));
    assert!(steady.iter().all(|&i| inflight[i] > 0.0 && inflight[i] <= cwnd[i] + 3.0));
    assert!(num("pacing_rate_bps").iter().skip(1).all(|&p| p > 0.0));
}

#[test]
fn summary_flows_have_kind_and_size_and_pings_have_send_times() {
    let d = run(TWO_DCTCP, "kinds");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.0.join("summary.json")).unwrap()).unwrap();
    let flows = s["flows"].as_array().unwrap();
    assert_eq!((flows[0]["kind"].as_str(), flows[0]["size_bytes"].is_null()), (Some("bulk"), true));
    assert_eq!((flows[1]["kind"].as_str(), flows[1]["size_bytes"].as_u64()), (Some("transfer"), Some(20_000_000)));
    assert_eq!(s["queues"][0]["csv"], "queue_s_r.csv");
    let pings = std::fs::read_to_string(d.0.join("pings.csv")).unwrap();
    let mut lines = pings.lines();
    assert_eq!(lines.next(), Some("probe,seq,sent_s,rtt_ms"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.len() >= 45, "{} pings answered", rows.len());
    let mut last = 0;
    for r in &rows {
        let seq: u32 = r[1].parse().unwrap();
        assert!(seq > last, "sequence numbers increase: {r:?}");
        last = seq;
        // Pings go out every 10 ms from 0: ping n at exactly (n - 1) * 10 ms.
        assert_eq!(r[2], ccsim_report::secs_exact((seq as u64 - 1) * 10_000_000), "{r:?}");
        // At least the propagation delay there and back: 4 links of 24.375 us.
        assert!(r[3].parse::<f64>().unwrap() > 0.0975, "an RTT of at least the base RTT: {r:?}");
    }
}

#[test]
fn duplicate_names_are_refused_naming_the_field() {
    let dup_flow = TWO_DCTCP.replacen("name = \"b\"", "name = \"a\"", 1);
    let e = build(&parse(&dup_flow, "records.toml").unwrap()).err().expect("two flows named a");
    assert_eq!(e.field, "flows[1].name");
    assert!(e.msg.contains("flows[0].name"), "{}", e.msg);
    let dup_ping = format!("{TWO_DCTCP}\n[[pings]]\nname = \"p\"\nsrc = \"b\"\ndst = \"r\"\n");
    let e = build(&parse(&dup_ping, "records.toml").unwrap()).err().expect("two probes named p");
    assert_eq!(e.field, "pings[1].name");
    let dup_port = TWO_DCTCP.replace("queues = [\"s->r\"]", "queues = [\"s->r\", \"s->r\"]");
    let e = build(&parse(&dup_port, "records.toml").unwrap()).err().expect("one port twice");
    assert_eq!(e.field, "record.queues[1]");
}

#[test]
fn ports_whose_names_make_one_file_name_get_two_files() {
    // `x_y->z` and `x->y_z` both make queue_x_y_z.csv: the second is numbered.
    let text = r#"
[run]
duration = "0.05s"
[topology]
type = "custom"
nodes = [{ name = "x_y", kind = "switch" }, { name = "z", kind = "host" }, { name = "x", kind = "switch" }, { name = "y_z", kind = "host" }, { name = "h", kind = "host" }]
links = [
  { a = "x_y", b = "z", rate = "1Gbps" },
  { a = "x", b = "y_z", rate = "100Mbps" },
  { a = "x_y", b = "x", rate = "1Gbps" },
  { a = "h", b = "x_y", rate = "1Gbps" },
]
[[flows]]
src = "h"
dst = "y_z"
[record]
queues = ["x_y->z", "x->y_z"]
"#;
    let d = run(text, "collide");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.0.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["queues"][0]["csv"], "queue_x_y_z.csv");
    assert_eq!(s["queues"][1]["csv"], "queue_x_y_z_2.csv");
    let busy = std::fs::read_to_string(d.0.join("queue_x_y_z_2.csv")).unwrap();
    let idle = std::fs::read_to_string(d.0.join("queue_x_y_z.csv")).unwrap();
    assert_ne!(busy, idle, "two ports, two series");
}
