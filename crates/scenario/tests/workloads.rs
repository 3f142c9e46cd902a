//! `[[workloads]]`: Poisson arrivals offer the load asked for, sizes follow the distribution
//! (Kolmogorov–Smirnov), each sender's arrivals are its own, incast rounds are synchronised,
//! every completed flow's slowdown is at least 1, reruns give the same bytes, and bad values
//! are named with what is allowed.

use ccsim_engine::SimTime;
use ccsim_net::{FlowKind, FlowSpec, Traffic};
use ccsim_scenario::{build, parse, parse_cdf, run_built_to, Built, Streams, BUILTIN_CDFS};
use std::collections::BTreeMap;

fn star(hosts: usize, rate: &str, extra: &str) -> String {
    let names: Vec<String> = (0..hosts).map(|i| format!("\"h{i}\"")).collect();
    format!(
        "[run]\nduration = \"100s\"\n[topology]\ntype = \"star\"\nhosts = [{}]\nrate = \"{rate}\"\ndelay = \"2us\"\n{extra}",
        names.join(", ")
    )
}

fn built(text: &str) -> Built {
    build(&parse(text, "test.toml").unwrap()).unwrap_or_else(|e| panic!("{e}"))
}

fn error(text: &str) -> (String, String) {
    match parse(text, "test.toml") {
        Err(e) => (e.field, e.msg),
        Ok(s) => match build(&s) {
            Err(e) => (e.field, e.msg),
            Ok(_) => panic!("scenario should be rejected:\n{text}"),
        },
    }
}

/// Every flow the traffic opens before `until`, with its arrival time.
fn arrivals(t: &mut dyn Traffic, until: SimTime) -> Vec<(SimTime, FlowSpec)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(at) = t.next_arrival().filter(|&a| a < until) {
        t.arrive(at, &mut buf);
        out.extend(buf.drain(..).map(|f| (at, f)));
    }
    out
}

fn size(f: &FlowSpec) -> u64 {
    match f.kind {
        FlowKind::Transfer { bytes } => bytes,
        _ => panic!("workload flows are transfers"),
    }
}

const WEB: &str = "[[workloads]]\nname = \"web\"\nkind = \"poisson\"\nsizes = \"websearch\"\nload = 0.5\n";

#[test]
fn poisson_arrivals_offer_the_load_asked_for() {
    // 16 hosts at 10 Gb/s, half their link rate in WebSearch flows (mean 1.71 MB), 100 s: about
    // 580 000 flows, so the sample mean is within 0.5 % of the distribution's; 5 % is the bar.
    let mut b = built(&star(16, "10Gbps", WEB));
    let w = b.workloads.remove(0);
    let mut t = w.traffic;
    let secs = 100.0;
    let flows = arrivals(t.as_mut(), SimTime::from_secs(100));
    let bytes: u64 = flows.iter().map(|(_, f)| size(f)).sum();
    let load = bytes as f64 * 8.0 / (16.0 * 10e9 * secs);
    assert!((load - 0.5).abs() / 0.5 < 0.05, "realised load {load}");
    let rate = flows.len() as f64 / secs;
    assert!((rate - w.offered_flows_per_s).abs() / w.offered_flows_per_s < 0.01, "{rate} flows/s");
    // Each sender's destinations are the other hosts, none itself.
    assert!(flows.iter().all(|(_, f)| f.src != f.dst));
    let per_src: BTreeMap<u32, usize> = flows.iter().fold(BTreeMap::new(), |mut m, (_, f)| {
        *m.entry(f.src.0).or_default() += 1;
        m
    });
    assert_eq!(per_src.len(), 16);
}

/// The Kolmogorov–Smirnov statistic of `sizes` against `cdf`.
fn ks(sizes: &mut [u64], cdf: &ccsim_net::Cdf) -> f64 {
    sizes.sort_unstable();
    let n = sizes.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &s) in sizes.iter().enumerate() {
        let f = cdf.cdf(s as f64);
        d = d.max((f - i as f64 / n).abs()).max(((i + 1) as f64 / n - f).abs());
    }
    d
}

#[test]
fn a_load_of_a_named_link_is_shared_out_among_the_senders() {
    // 16 senders offering 40 % of the switch's 10 Gb/s port towards h0 together: 2.5 % of
    // their own links each.
    let text = star(16, "10Gbps", &WEB.replace("load = 0.5\n", "load = 0.4\nload_of = \"s->h0\"\n"));
    let mut b = built(&text);
    let w = b.workloads.remove(0);
    let want = 0.4 * 10e9 / 8.0 / 1_711_250.0;
    assert!((w.offered_flows_per_s - want).abs() < 1e-9, "{} vs {want}", w.offered_flows_per_s);
    let (f, m) = error(&star(4, "10Gbps", &WEB.replace("load = 0.5\n", "load = 0.4\nload_of = \"h0->h1\"\n")));
    assert_eq!(f, "workloads[0].load_of");
    assert!(m.contains("no link"), "{m}");
}

#[test]
fn sizes_follow_the_distribution() {
    let mut b = built(&star(16, "10Gbps", WEB));
    let flows = arrivals(b.workloads[0].traffic.as_mut(), SimTime::from_secs(20));
    let mut sizes: Vec<u64> = flows.iter().map(|(_, f)| size(f)).collect();
    let n = sizes.len() as f64;
    assert!(n > 100_000.0);
    let web = parse_cdf(BUILTIN_CDFS[0].1, "websearch", "sizes").unwrap();
    // The 0.1 % critical value of the one-sample KS test is 1.95 / sqrt(n); sizes are rounded
    // to whole bytes, which moves the CDF by under 1e-4 (0.15 per 10 000 bytes).
    let d = ks(&mut sizes, &web);
    assert!(d < 1.95 / n.sqrt() + 1e-4, "D = {d}, n = {n}");
    // The test has teeth: the same sizes against DataMining are far off.
    let mining = parse_cdf(BUILTIN_CDFS[1].1, "datamining", "sizes").unwrap();
    assert!(ks(&mut sizes, &mining) > 0.3);
}

#[test]
fn a_senders_arrivals_do_not_depend_on_the_other_hosts() {
    // Adding host h4 leaves h0's arrival times and sizes as they were (its destinations now
    // include h4, so those may change).
    let times = |hosts: usize| -> Vec<(SimTime, u64)> {
        let mut b = built(&star(hosts, "10Gbps", WEB));
        let flows = arrivals(b.workloads[0].traffic.as_mut(), SimTime::from_secs(2));
        let h0 = b.topo.node("h0").unwrap();
        flows.iter().filter(|(_, f)| f.src == h0).map(|(t, f)| (*t, size(f))).collect()
    };
    let (four, five) = (times(4), times(5));
    assert!(four.len() > 100);
    assert_eq!(four, five);
}

#[test]
fn incast_rounds_are_synchronised_fan_ins_to_one_receiver() {
    let text = star(
        10,
        "10Gbps",
        "[[workloads]]\nname = \"inc\"\nkind = \"incast\"\nsizes = \"64KB\"\nfan_in = 6\ninterval = \"1ms\"\nstop = \"10ms\"\n",
    );
    let mut b = built(&text);
    let flows = arrivals(b.workloads[0].traffic.as_mut(), SimTime::from_secs(1));
    assert_eq!(flows.len(), 60, "10 rounds of 6");
    for round in flows.chunks(6) {
        let (t, f0) = &round[0];
        assert!(round.iter().all(|(tt, f)| tt == t && f.dst == f0.dst && f.group == f0.group && size(f) == 64_000));
        let mut srcs: Vec<u32> = round.iter().map(|(_, f)| f.src.0).collect();
        srcs.sort_unstable();
        srcs.dedup();
        assert_eq!(srcs.len(), 6, "distinct senders");
        assert!(round.iter().all(|(_, f)| f.src != f.dst));
    }
    assert_eq!(flows[6].0, SimTime::from_ms(1));
}

/// A short mixed run: DCTCP WebSearch flows and CUBIC incast rounds in one star.
const MIXED: &str = r#"
[run]
duration = "50ms"
[tcp]
cc = "dctcp"
rto_min = "5ms"
[queues.sw]
classes = [{ name = "q", limit = 200, aqm = "step", k = 30 }]
[topology]
type = "star"
hosts = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"]
rate = "10Gbps"
delay = "2us"
switch_queue = "sw"
[[workloads]]
name = "web"
kind = "poisson"
sizes = "websearch"
load = 0.4
[[workloads]]
name = "incast"
kind = "incast"
sizes = "20KB"
fan_in = 7
rounds_per_s = 500
cc = "cubic"
[record]
warmup = "5ms"
"#;

fn mixed_run(dir: &std::path::Path) -> (String, ccsim_scenario::FctReport) {
    let b = built(MIXED);
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("fct.csv");
    let file = std::fs::File::create(&path).unwrap();
    let out =
        run_built_to(b, Streams { fct_csv: Some(ccsim_scenario::FctFile { file, path }), pcap: None }, None, |_, _| {})
            .unwrap();
    (std::fs::read_to_string(dir.join("fct.csv")).unwrap(), out.summary.fct.unwrap())
}

#[test]
fn every_completed_flow_takes_at_least_its_ideal_time_and_reruns_are_identical() {
    let tmp = std::env::temp_dir().join(format!("ccsim-workloads-{}", std::process::id()));
    let (csv, report) = mixed_run(&tmp.join("a"));
    // The analysis read back from fct.csv is the one kept in memory without a file.
    let in_memory = run_built_to(built(MIXED), Streams::default(), None, |_, _| {}).unwrap().summary.fct.unwrap();
    assert_eq!(report, in_memory);
    let (again, _) = mixed_run(&tmp.join("b"));
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(csv, again, "same seed, same bytes");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (sd, wl, cc) = (col("slowdown"), col("workload"), col("cc"));
    let mut completed = 0;
    let mut ccs = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        if !f[sd].is_empty() {
            completed += 1;
            let s: f64 = f[sd].parse().unwrap();
            assert!(s >= 1.0, "slowdown {s} < 1: {l}");
        }
        ccs.insert(f[wl].to_string(), f[cc].to_string());
    }
    assert!(completed > 100, "{completed}");
    assert_eq!(ccs["web"], "dctcp");
    assert_eq!(ccs["incast"], "cubic");
    let inc = report.workloads.iter().find(|w| w.name == "incast").unwrap();
    let g = inc.groups.as_ref().unwrap();
    assert!(g.completed > 0 && g.p50_ms > 0.0);
}

#[test]
fn queries_reuse_their_pooled_connections_and_complete_with_their_last_response() {
    let text = r#"
[run]
duration = "50ms"
[tcp]
cc = "dctcp"
rto_min = "5ms"
[queues.sw]
classes = [{ name = "q", limit = 200, aqm = "step", k = 20 }]
[topology]
type = "star"
hosts = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9"]
rate = "1Gbps"
delay = "5us"
switch_queue = "sw"
[[workloads]]
name = "query"
kind = "query"
sizes = "2KB"
fan_in = 9
rounds_per_s = 200
[record]
warmup = "10ms"
"#;
    let out = run_built_to(built(text), Streams::default(), None, |_, _| {}).unwrap();
    let q = &out.summary.fct.as_ref().unwrap().workloads[0];
    let g = q.groups.as_ref().unwrap();
    // 10 aggregators at 200 queries/s for 40 ms after the warm-up: about 80 queries of 9.
    assert!(g.groups > 50 && g.completed as f64 > 0.9 * g.groups as f64, "{g:?}");
    assert_eq!(q.flows, 9 * g.groups);
    // Nine 2 KB responses into one 1 Gb/s port take at least 9 x 2 KB x 8 / 1e9 = 0.15 ms.
    assert!(g.p50_ms > 0.15, "{g:?}");
    let st = out.records.stats;
    // Every pair's first exchange opens a connection; later ones reuse an idle one (a query
    // that finds its pair's connections busy opens another: the pool grows to what is needed).
    assert!(st.flows_opened >= 90 && st.exchanges_reused > 4 * st.flows_opened, "{st:?}");
    assert_eq!(st.flows_released, 0, "pooled connections stay open");
    assert!(q.bins.iter().all(|b| b.p50 >= 1.0), "{:?}", q.bins);
}

#[test]
fn bad_workloads_are_named_with_what_is_allowed() {
    let w = |body: &str| star(4, "10Gbps", &format!("[[workloads]]\n{body}\n"));
    let (f, m) = error(&w("kind = \"poisson\"\nsizes = \"websearch\"\nload = 0"));
    assert_eq!(f, "workloads[0].load");
    assert!(m.contains("0 < load < 1"), "{m}");
    let (f, _) = error(&w("kind = \"poisson\"\nsizes = \"websearch\"\nload = 1.0"));
    assert_eq!(f, "workloads[0].load");
    let (f, m) = error(&w("kind = \"poisson\"\nsizes = \"websearch\""));
    assert_eq!(f, "workloads[0].load");
    assert!(m.contains("needs its load"), "{m}");
    let (f, m) = error(&w("kind = \"poisson\"\nsizes = \"nosuch.cdf\"\nload = 0.3"));
    assert_eq!(f, "workloads[0].sizes");
    assert!(m.contains("websearch") && m.contains("nosuch.cdf"), "{m}");
    let (f, m) = error(&w("kind = \"poisson\"\nsizes = \"0KB\"\nload = 0.3"));
    assert_eq!(f, "workloads[0].sizes");
    assert!(m.contains("positive"), "{m}");
    // A star is one rack: no host has a destination in another.
    let (f, m) = error(&w("kind = \"poisson\"\nsizes = \"websearch\"\nload = 0.3\ndestinations = \"other-rack\""));
    assert_eq!(f, "workloads[0].destinations");
    assert!(m.contains("no destination"), "{m}");
    let (f, m) = error(&w("kind = \"incast\"\nsizes = \"64KB\"\nfan_in = 4\ninterval = \"1ms\""));
    assert_eq!(f, "workloads[0].fan_in");
    assert!(m.contains("1..=3"), "{m}");
    let (f, m) = error(&w("kind = \"incast\"\nsizes = \"64KB\"\nfan_in = 2"));
    assert_eq!(f, "workloads[0]");
    assert!(m.contains("interval"), "{m}");
    let (f, _) = error(&w("kind = \"incast\"\nsizes = \"64KB\"\nfan_in = 2\ninterval = \"1ms\"\nload = 0.2"));
    assert_eq!(f, "workloads[0].load");
    // 4 hosts at 10 Gb/s offering 90 % in 1-byte flows for 100 s: 4.5e11 flows.
    let (f, m) = error(&w("kind = \"poisson\"\nsizes = \"1B\"\nload = 0.9"));
    assert_eq!(f, "workloads[0]");
    assert!(m.contains("at most 1e8"), "{m}");
    let (f, m) = error(&w("kind = \"lognormal\"\nsizes = \"64KB\""));
    assert!(f.contains("kind") || m.contains("poisson"), "{f}: {m}");
}

#[test]
fn a_cdf_file_is_read_relative_to_the_scenario_and_its_faults_named() {
    let dir = std::env::temp_dir().join(format!("ccsim-cdf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mine.cdf"), "# mine\n1000 0.5\n2000 1\n").unwrap();
    std::fs::write(dir.join("bad.cdf"), "1000 0.5\n2000 0.9\n").unwrap();
    let scen =
        |cdf: &str| star(4, "10Gbps", &format!("[[workloads]]\nkind = \"poisson\"\nsizes = \"{cdf}\"\nload = 0.2\n"));
    let p = dir.join("s.toml");
    std::fs::write(&p, scen("mine.cdf")).unwrap();
    let s = ccsim_scenario::load_scenario(&p).unwrap();
    let b = build(&s).unwrap();
    assert!((b.workloads[0].mean_size - 1250.0).abs() < 1e-9);
    // The resolved scenario names the file by its full path: it builds from any directory.
    let resolved = ccsim_scenario::resolved_toml(&s);
    let again = build(&parse(&resolved, "resolved.toml").unwrap()).unwrap();
    assert!((again.workloads[0].mean_size - 1250.0).abs() < 1e-9, "{resolved}");
    std::fs::write(&p, scen("bad.cdf")).unwrap();
    let e = build(&ccsim_scenario::load_scenario(&p).unwrap()).err().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(e.field, "workloads[0].sizes");
    assert!(e.msg.contains("bad.cdf") && e.msg.contains("must end at 1"), "{}", e.msg);
}
