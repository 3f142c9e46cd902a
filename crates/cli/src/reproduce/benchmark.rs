//! The DCTCP paper's benchmark traffic in one rack (Alizadeh et al., SIGCOMM 2010, §4.3), as the
//! Linux DCTCP merge commit quotes it: with DCTCP, "10x the current background traffic, without
//! impacting foreground traffic", and "a 10x increase in foreground traffic did not cause any
//! timeouts". CUBIC runs beside it under the same loads for contrast.

use super::{html_table, Ctx, ExpOutput, Row};
use ccsim_scenario::{Outcome, WorkloadFct};

pub const NAME: &str = "dctcp-benchmark";
pub const SETUP: &str = "One rack: 44 hosts on one switch, 1 Gb/s links, one-way delay 25 us per link (about \
    100 us intra-rack RTT); the switch's ports share a 4 MB buffer (Broadcom Triumph, the paper's ToR) with a \
    dynamic threshold alpha = 1 (assumed; the paper's setting is not in the seed); DCTCP ports mark above K = 20 \
    packets (the paper's and the kernel documentation's value at 1 Gb/s), CUBIC ports are drop-tail. TCP's minimum \
    RTO is 10 ms (the paper's setting for its benchmark, from memory of the paper: not in the seed). Foreground: \
    every host is an aggregator that queries all 43 others (partition/aggregate), each query 1.6 KB and each \
    response 2 KB (the paper's sizes), over persistent connections, queries at Poisson instants, 10 per second per \
    aggregator (assumed: the paper's rate is not in the seed). Background: flows from the WebSearch size \
    distribution (the paper's background flows), Poisson arrivals at 5 % of each host's link rate (assumed), \
    uniform destinations, a connection each. Scaled runs: 10x background (50 % load) and 10x foreground (100 \
    queries per second per aggregator). 1 s after a 0.1 s warm-up (quick: 0.3 s). Query completion: from the query \
    to its last response; short messages: background flows of 100 KB - 1 MB (the paper's class).";

#[derive(Clone, Copy, PartialEq)]
enum Load {
    Base,
    TenfoldBackground,
    TenfoldQuery,
}

impl Load {
    fn label(self) -> &'static str {
        match self {
            Load::Base => "baseline",
            Load::TenfoldBackground => "10x-background",
            Load::TenfoldQuery => "10x-query",
        }
    }
    /// (background load, queries per second per aggregator)
    fn rates(self) -> (f64, f64) {
        match self {
            Load::Base => (0.05, 10.0),
            Load::TenfoldBackground => (0.5, 10.0),
            Load::TenfoldQuery => (0.05, 100.0),
        }
    }
}

const LOADS: [Load; 3] = [Load::Base, Load::TenfoldBackground, Load::TenfoldQuery];

fn scenario(dctcp: bool, load: Load, quick: bool) -> String {
    let hosts: Vec<String> = (0..44).map(|i| format!("\"h{i}\"")).collect();
    let (bg, qps) = load.rates();
    let (cc, queue) = if dctcp {
        ("dctcp", r#"classes = [{ name = "port", limit = 100000, aqm = "step", k = 20 }]"#)
    } else {
        ("cubic", r#"classes = [{ name = "port", limit = 100000 }]"#)
    };
    format!(
        r#"[run]
seed = 1
duration = "{duration}"

[tcp]
cc = "{cc}"
rto_min = "10ms"

[queues.port]
{queue}

[buffers.tor]
preset = "triumph"
alpha = 1

[topology]
type = "star"
hosts = [{hosts}]
switch = "tor"
rate = "1Gbps"
delay = "25us"
switch_queue = "port"
switch_buffer = "tor"

[[workloads]]
name = "query"
kind = "query"
sizes = "2KB"
request = "1600B"
fan_in = 43
rounds_per_s = {qps}

[[workloads]]
name = "background"
kind = "poisson"
sizes = "websearch"
load = {bg}

[record]
interval = "1ms"
warmup = "0.1s"
series = false
queues = ["tor->h0"]
"#,
        duration = if quick { "0.3s" } else { "1.1s" },
        hosts = hosts.join(", ")
    )
}

/// What a run measured.
struct Measured {
    query_p50_ms: f64,
    query_p99_ms: f64,
    query_p999_ms: f64,
    queries: u64,
    query_timeouts: u64,
    short_p99: f64,
    short_count: u64,
    background_timeouts: u64,
}

fn workload<'a>(o: &'a Outcome, name: &str) -> &'a WorkloadFct {
    o.summary.fct.as_ref().and_then(|f| f.workloads.iter().find(|w| w.name == name)).expect("the benchmark's workloads")
}

fn measure(o: &Outcome) -> Measured {
    let q = workload(o, "query");
    let g = q.groups.as_ref().expect("queries have groups");
    let bg = workload(o, "background");
    let short = bg.bins.iter().find(|b| b.bin == "100KB-1MB");
    Measured {
        query_p50_ms: g.p50_ms,
        query_p99_ms: g.p99_ms,
        query_p999_ms: g.p999_ms,
        queries: g.completed,
        query_timeouts: q.timeouts,
        short_p99: short.map_or(f64::NAN, |b| b.p99),
        short_count: short.map_or(0, |b| b.count),
        background_timeouts: bg.timeouts,
    }
}

pub fn run(ctx: &Ctx) -> Result<ExpOutput, String> {
    let mut m: Vec<Vec<Measured>> = Vec::new();
    for dctcp in [true, false] {
        let mut row = Vec::new();
        for load in LOADS {
            let label = format!("{}-{}", if dctcp { "dctcp" } else { "cubic" }, load.label());
            let o = ctx.run(NAME, &label, &scenario(dctcp, load, ctx.quick))?;
            row.push(measure(&o));
        }
        m.push(row);
    }
    let (d, c) = (&m[0], &m[1]);
    let f = |x: f64| format!("{x:.2}");
    let mut rows = Vec::new();
    // Claim 1: 10x background without impacting the foreground (query and short messages).
    let q_ok = d[1].query_p999_ms <= 1.5 * d[0].query_p999_ms && d[1].query_timeouts == 0;
    rows.push(Row::new(
        NAME,
        "DCTCP, 10x background: query completion p99.9 (ms), baseline -> 10x",
        "not impacted",
        format!("{} -> {} ({} timeouts)", f(d[0].query_p999_ms), f(d[1].query_p999_ms), d[1].query_timeouts),
        q_ok,
        "shape",
        "claim read as: p99.9 within 1.5x of the baseline and no query timeouts",
    ));
    let s_ok = d[1].short_p99 <= 1.5 * d[0].short_p99 || d[0].short_count == 0;
    rows.push(Row::new(
        NAME,
        "DCTCP, 10x background: short-message (100 KB-1 MB) slowdown p99, baseline -> 10x",
        "not impacted",
        format!("{} -> {} ({} / {} flows)", f(d[0].short_p99), f(d[1].short_p99), d[0].short_count, d[1].short_count),
        s_ok,
        "shape",
        if s_ok {
            "claim read as: within 1.5x of the baseline".to_string()
        } else {
            format!(
                "claim read as: within 1.5x of the baseline. At 10x background (50 % of every link) a short message \
                 shares its sender's and receiver's links with long WebSearch flows, and DCTCP shares fairly: its \
                 slowdown grows with the load whatever the queue ({} short messages at baseline, so that p99 is \
                 coarse). The paper's baseline background load and its short messages' measure are not in the seed",
                d[0].short_count
            )
        },
    ));
    // Claim 2: 10x foreground without timeouts.
    rows.push(Row::new(
        NAME,
        "DCTCP, 10x query traffic: retransmission timeouts of query traffic",
        "0",
        format!("{} ({} queries)", d[2].query_timeouts, d[2].queries),
        d[2].query_timeouts == 0,
        "shape",
        "claim: no timeouts",
    ));
    // CUBIC beside it, for contrast: what the claims are measured against.
    let worse = c[1].query_p999_ms > d[1].query_p999_ms;
    rows.push(Row::new(
        NAME,
        "CUBIC, 10x background: query completion p99.9 (ms) above DCTCP's",
        "TCP's 99.9th percentile grows with background (the paper's contrast)",
        format!(
            "CUBIC {} vs DCTCP {} ({} CUBIC query timeouts)",
            f(c[1].query_p999_ms),
            f(d[1].query_p999_ms),
            c[1].query_timeouts
        ),
        worse,
        "shape",
        "contrast checked",
    ));
    let timeouts = c[2].query_timeouts > d[2].query_timeouts;
    rows.push(Row::new(
        NAME,
        "CUBIC, 10x query traffic: more query timeouts than DCTCP",
        "TCP incurs timeouts (the paper's contrast)",
        format!("CUBIC {} vs DCTCP {}", c[2].query_timeouts, d[2].query_timeouts),
        timeouts,
        "shape",
        if timeouts {
            "contrast checked".to_string()
        } else {
            format!(
                "contrast checked. With 5 % background CUBIC's queues seldom reach the 4 MB buffer's dynamic \
                 threshold (2 MB for one congested port), so the 86 response packets of a query fit; CUBIC's query \
                 timeouts come with background ({} at 10x background). The paper's background level, buffer \
                 setting and query rate are not in the seed",
                c[1].query_timeouts
            )
        },
    ));
    let mut table = Vec::new();
    for (k, cc) in ["DCTCP", "CUBIC"].iter().enumerate() {
        for (j, load) in LOADS.iter().enumerate() {
            let x = &m[k][j];
            table.push(vec![
                cc.to_string(),
                load.label().to_string(),
                x.queries.to_string(),
                f(x.query_p50_ms),
                f(x.query_p99_ms),
                f(x.query_p999_ms),
                x.query_timeouts.to_string(),
                f(x.short_p99),
                x.background_timeouts.to_string(),
            ]);
        }
    }
    let html = html_table(
        &[
            "cc",
            "load",
            "queries",
            "query p50 (ms)",
            "query p99 (ms)",
            "query p99.9 (ms)",
            "query RTOs",
            "short-message slowdown p99",
            "background RTOs",
        ],
        &table,
    );
    Ok(ExpOutput { rows, html })
}
