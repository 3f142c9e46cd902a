//! `ccsim fidelity`: the simulator against this machine's kernel on the Mininet-HiFi experiment
//! (two senders into one 100 Mb/s port). For each congestion control (DCTCP and TCP-NV as ccsim's
//! BPF struct_ops on the kernel side, NV with an 80 µs base RTT), the same scenario is run
//! by `ccsim run` and by `ccsim emulate`, and `ccsim compare` scores them; a 1 Gb/s CUBIC run
//! checks the kernel path's inter-dequeue timing where the CPU becomes the limit.

use crate::args::FidelityArgs;
use ccsim_cc::CcKind;
use ccsim_emulate::compare::{compare, Comparison};
use ccsim_scenario::{self as scenario, Scenario};
use serde::Serialize;
use std::path::Path;

const TCP: &str = include_str!("../../../scenarios/mininet-tcp.toml");
const DCTCP: &str = include_str!("../../../scenarios/mininet-dctcp.toml");

#[derive(Serialize)]
struct Case {
    name: String,
    rate: String,
    cc: String,
    ecn: bool,
    sim_goodput_mbps: f64,
    emu_goodput_mbps: f64,
    /// Per flow, in scenario order.
    sim_flow_goodput_mbps: Vec<f64>,
    emu_flow_goodput_mbps: Vec<f64>,
    /// Jain's fairness index of the flows' goodputs (1 = equal shares).
    sim_jain: f64,
    emu_jain: f64,
    sim_queue_p50: f64,
    emu_queue_p50: f64,
    sim_queue_p99: f64,
    emu_queue_p99: f64,
    queue_cdf_distance_median: f64,
    sim_utilisation: f64,
    emu_utilisation: f64,
    sim_retransmits: u64,
    emu_retransmits: u64,
    dequeue_within_10pct: Option<f64>,
    dequeue_p99_deviation_pct: Option<f64>,
    comparison: Comparison,
}

fn variant(base: &str, cc: CcKind, rate: &str, duration: &str) -> Result<Scenario, String> {
    let mut s = scenario::parse(base, "mininet").map_err(|e| e.to_string())?;
    s.tcp.cc = cc;
    s.topology.rate = rate.into();
    s.run.duration = duration.into();
    if cc == CcKind::Nv {
        // TCP-NV with the base RTT a BPF sock_ops program supplies (tcp_basertt_kern.c's 80 µs).
        s.base_rtt.push(scenario::spec::BaseRtt {
            base_rtt: "80us".into(),
            cc: Some(CcKind::Nv),
            src: None,
            dst: None,
        });
    }
    Ok(s)
}

/// Jain's fairness index: (Σx)² / (n·Σx²).
fn jain(x: &[f64]) -> f64 {
    let (s, s2) = x.iter().fold((0.0, 0.0), |(s, s2), v| (s + v, s2 + v * v));
    if x.is_empty() || s2 == 0.0 {
        return 0.0;
    }
    s * s / (x.len() as f64 * s2)
}

fn sim(s: &Scenario, out: &Path) -> Result<(), String> {
    let built = scenario::build(s).map_err(|e| e.to_string())?;
    let o = scenario::run_built(built, |_, _| {});
    scenario::write_results(&o, &scenario::resolved_toml(s), out).map_err(|e| format!("{}: {e}", out.display()))
}

pub fn cmd(a: FidelityArgs) -> Result<(), String> {
    let FidelityArgs { duration, out, json, no_1g } = a;
    let mut plan: Vec<(&str, &str, CcKind, &str)> = vec![
        ("dctcp-100m", DCTCP, CcKind::Dctcp, "100Mbps"),
        ("cubic-100m", TCP, CcKind::Cubic, "100Mbps"),
        ("reno-100m", TCP, CcKind::Reno, "100Mbps"),
        ("bbr-100m", TCP, CcKind::Bbr, "100Mbps"),
        ("nv-100m", TCP, CcKind::Nv, "100Mbps"),
    ];
    if !no_1g {
        plan.push(("cubic-1g", TCP, CcKind::Cubic, "1Gbps"));
    }
    let mut cases = Vec::new();
    for (name, base, cc, rate) in plan {
        let s = variant(base, cc, rate, &duration)?;
        let dir = out.join(name);
        let (sd, ed) = (dir.join("sim"), dir.join("emu"));
        eprintln!("fidelity {name}: simulating");
        sim(&s, &sd)?;
        eprintln!("fidelity {name}: emulating on the kernel");
        let opts = ccsim_emulate::Options { ignore_delay: true, ..Default::default() };
        ccsim_emulate::emulate_scenario(&s, name, &ed, opts, &mut |_| {})?;
        let c = compare(&sd, &ed)?;
        let info: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(ed.join("emulation.json")).map_err(|e| format!("{}: {e}", ed.display()))?,
        )
        .map_err(|e| e.to_string())?;
        let q = c.queues.iter().find(|q| q.port == "s->c").ok_or("no s->c queue in the results")?;
        let d = q.occupancy.clone().ok_or("no queue samples")?;
        let per =
            |a: bool| c.flows.iter().map(|f| if a { f.a_goodput_mbps } else { f.b_goodput_mbps }).collect::<Vec<_>>();
        let (sim_flows, emu_flows) = (per(true), per(false));
        let rt = |a: bool| c.flows.iter().map(|f| if a { f.a_retransmits } else { f.b_retransmits }).sum::<u64>();
        cases.push(Case {
            name: name.into(),
            rate: rate.into(),
            cc: cc.name().into(),
            ecn: cc == CcKind::Dctcp,
            sim_goodput_mbps: sim_flows.iter().sum(),
            emu_goodput_mbps: emu_flows.iter().sum(),
            sim_jain: jain(&sim_flows),
            emu_jain: jain(&emu_flows),
            sim_flow_goodput_mbps: sim_flows,
            emu_flow_goodput_mbps: emu_flows,
            sim_queue_p50: d.a_p50,
            emu_queue_p50: d.b_p50,
            sim_queue_p99: d.a_p99,
            emu_queue_p99: d.b_p99,
            queue_cdf_distance_median: d.median,
            sim_utilisation: q.a_utilisation,
            emu_utilisation: q.b_utilisation,
            sim_retransmits: rt(true),
            emu_retransmits: rt(false),
            dequeue_within_10pct: info["dequeue"]["within_10pct"].as_f64(),
            dequeue_p99_deviation_pct: info["dequeue"]["deviation_p99_pct"].as_f64(),
            comparison: c,
        });
    }
    let table = render(&cases);
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    std::fs::write(out.join("fidelity.md"), &table).map_err(|e| e.to_string())?;
    let j = serde_json::to_string_pretty(&cases).map_err(|e| e.to_string())?;
    std::fs::write(out.join("fidelity.json"), j.clone() + "\n").map_err(|e| e.to_string())?;
    if json {
        println!("{j}");
    } else {
        print!("{table}");
    }
    Ok(())
}

fn render(cases: &[Case]) -> String {
    let mut o = String::from(
        "| case | goodput per flow sim / kernel (Mb/s) | fairness (Jain) sim / kernel | queue p50 sim / kernel | queue p99 sim / kernel | queue CDF distance (median, pkts) | utilisation sim / kernel | retransmits sim / kernel | dequeue gaps within 10% of ideal | p99 dequeue deviation |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let flows = |v: &[f64]| v.iter().map(|g| format!("{g:.1}")).collect::<Vec<_>>().join("+");
    for c in cases {
        let pct = |x: Option<f64>| x.map(|v| format!("{:.1}%", v * 100.0)).unwrap_or_else(|| "-".into());
        o.push_str(&format!(
            "| {} | {} / {} | {:.2} / {:.2} | {:.0} / {:.0} | {:.0} / {:.0} | {:.1} | {:.3} / {:.3} | {} / {} | {} | {} |\n",
            c.name,
            flows(&c.sim_flow_goodput_mbps),
            flows(&c.emu_flow_goodput_mbps),
            c.sim_jain,
            c.emu_jain,
            c.sim_queue_p50,
            c.emu_queue_p50,
            c.sim_queue_p99,
            c.emu_queue_p99,
            c.queue_cdf_distance_median,
            c.sim_utilisation,
            c.emu_utilisation,
            c.sim_retransmits,
            c.emu_retransmits,
            pct(c.dequeue_within_10pct),
            c.dequeue_p99_deviation_pct.map(|v| format!("{v:.1}%")).unwrap_or_else(|| "-".into()),
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn jain_index_of_equal_and_starved_shares() {
        assert!((jain(&[48.0, 48.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[96.0, 0.0]) - 0.5).abs() < 1e-12);
        assert!((jain(&[60.0, 30.0]) - 0.9).abs() < 1e-12);
        assert_eq!(jain(&[]), 0.0);
    }
}
