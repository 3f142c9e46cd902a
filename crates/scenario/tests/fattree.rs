//! `type = "fattree"` and `[traffic] pattern = "permutation"`: the k-ary fat tree has the
//! standard shape and names, its routes give (k/2)^2 equal-cost paths between pods, the
//! permutation is a fixed-point-free, seed-determined mapping whose every flow has a route, and
//! bad values are named with what is allowed.

use ccsim_net::{NodeId, NodeKind, Routes, Topology};
use ccsim_scenario::{build, parse, run_built, Built};
use std::collections::BTreeSet;

fn scenario(k: &str, extra: &str) -> String {
    format!("[run]\nduration = \"10ms\"\n\n[topology]\ntype = \"fattree\"\n{k}\n{extra}")
}

fn built(text: &str) -> Built {
    build(&parse(text, "test.toml").unwrap()).unwrap()
}

/// The error of a scenario that must not build: (field, message).
fn error(text: &str) -> (String, String) {
    match parse(text, "test.toml") {
        Err(e) => (e.field, e.msg),
        Ok(s) => match build(&s) {
            Err(e) => (e.field, e.msg),
            Ok(_) => panic!("scenario should be rejected:\n{text}"),
        },
    }
}

fn count(t: &Topology, kind: NodeKind, prefix: char) -> usize {
    t.names.iter().zip(&t.kinds).filter(|(n, k)| **k == kind && n.starts_with(prefix)).count()
}

/// Links at each node.
fn degree(t: &Topology) -> Vec<usize> {
    let mut d = vec![0; t.num_nodes()];
    for l in &t.links {
        d[l.a.0 as usize] += 1;
        d[l.b.0 as usize] += 1;
    }
    d
}

/// Number of distinct shortest paths from `u` to `d` following the route table.
fn paths(t: &Topology, r: &Routes, u: NodeId, d: NodeId) -> usize {
    if u == d {
        return 1;
    }
    r.get(u.0 as usize, d.0 as usize).iter().map(|&p| paths(t, r, t.port_ends(p).1, d)).sum()
}

fn check_shape(k: usize) {
    let b = built(&scenario(&format!("k = {k}"), ""));
    let t = &b.topo;
    let half = k / 2;
    assert_eq!(t.kinds.iter().filter(|x| **x == NodeKind::Host).count(), k * k * k / 4, "hosts, k = {k}");
    assert_eq!(t.kinds.iter().filter(|x| **x == NodeKind::Switch).count(), 5 * k * k / 4, "switches, k = {k}");
    assert_eq!(count(t, NodeKind::Host, 'h'), k * k * k / 4);
    assert_eq!(count(t, NodeKind::Switch, 'e'), k * half, "edge switches");
    assert_eq!(count(t, NodeKind::Switch, 'a'), k * half, "aggregation switches");
    assert_eq!(count(t, NodeKind::Switch, 'c'), half * half, "core switches");
    assert_eq!(t.links.len(), 3 * k * k * k / 4, "links, k = {k}");
    // Every host has one link; every switch has k.
    for (i, d) in degree(t).into_iter().enumerate() {
        let want = if t.kinds[i] == NodeKind::Host { 1 } else { k };
        assert_eq!(d, want, "links at {}", t.names[i]);
    }
    // Names as documented: the last host of the last edge switch of the last pod hangs off
    // that edge switch; core c<agg>_<j> is linked to aggregation switch <agg> of every pod.
    let last = format!("h{}_{}_{}", k - 1, half - 1, half - 1);
    let e = t.node(&format!("e{}_{}", k - 1, half - 1)).unwrap();
    assert!(t.port_between(t.node(&last).unwrap(), e).is_some(), "{last} is on its edge switch");
    for p in 0..k {
        let a = t.node(&format!("a{p}_{}", half - 1)).unwrap();
        let c = t.node(&format!("c{}_{}", half - 1, half - 1)).unwrap();
        assert!(t.port_between(a, c).is_some(), "a{p}_{} - c{}_{}", half - 1, half - 1, half - 1);
        if half > 1 {
            assert!(t.port_between(a, t.node("c0_0").unwrap()).is_none(), "c0_* hang off a*_0 only");
        }
    }
    // Default monitored ports: every edge switch port towards a host, in host order.
    assert_eq!(b.monitor_names.len(), k * k * k / 4);
    assert_eq!(b.monitor_names[0], "e0_0->h0_0_0");

    // Routes: (k/2)^2 equal-cost paths between hosts in different pods, k/2 between hosts on
    // different edge switches of one pod, 1 under the same edge switch.
    let r = t.routes().unwrap();
    let h = |name: &str| t.node(name).unwrap();
    assert_eq!(paths(t, &r, h("h0_0_0"), h(&last)), half * half);
    if half > 1 {
        assert_eq!(paths(t, &r, h("h0_0_0"), h("h0_1_0")), half);
        assert_eq!(paths(t, &r, h("h0_0_0"), h("h0_0_1")), 1);
    }
    assert_eq!(r.get(e.0 as usize, h("h0_0_0").0 as usize).len(), half, "ECMP at an edge switch going up");
}

#[test]
fn fat_tree_k4_and_k8_have_the_standard_shape() {
    check_shape(4);
    check_shape(8);
    check_shape(2);
}

#[test]
fn fat_tree_settings_apply_to_every_link() {
    let b = built(&scenario(
        "k = 4",
        "rate = \"1Gbps\"\ndelay = \"3us\"\nloss = 0.001\nswitch_queue = \"q\"\n\n[queues.q]\nclasses = [{ limit = 77 }]\n",
    ));
    for l in &b.topo.links {
        assert_eq!(l.rate_bps, 1_000_000_000);
        assert_eq!(l.delay.ns(), 3000);
        assert_eq!(l.loss, 0.001);
        assert_eq!(l.queue_ba.classes[0].limit.value, 77, "the upper end is always a switch");
        let host_end = b.topo.kinds[l.a.0 as usize] == NodeKind::Host;
        assert_eq!(l.queue_ab.classes[0].limit.value, if host_end { 1000 } else { 77 });
    }
}

fn permutation(k: u32, seed: u64) -> Vec<(NodeId, NodeId)> {
    let b = built(&format!(
        "[run]\nseed = {seed}\nduration = \"10ms\"\n[topology]\ntype = \"fattree\"\nk = {k}\n[traffic]\npattern = \"permutation\"\n"
    ));
    b.flows.iter().map(|f| (f.src, f.dst)).collect()
}

#[test]
fn permutation_sends_once_from_and_to_every_host_and_every_flow_has_a_route() {
    for k in [2, 4, 8] {
        let text = scenario(
            &format!("k = {k}"),
            "[tcp]\ncc = \"dctcp\"\n\n[traffic]\npattern = \"permutation\"\ncc = \"reno\"\ndscp = 5\nstart = \"1ms\"\nstop = \"5ms\"\n",
        );
        let b = built(&text);
        let t = &b.topo;
        let r = t.routes().unwrap();
        let hosts = k * k * k / 4;
        assert_eq!(b.flows.len(), hosts as usize);
        let srcs: BTreeSet<NodeId> = b.flows.iter().map(|f| f.src).collect();
        let dsts: BTreeSet<NodeId> = b.flows.iter().map(|f| f.dst).collect();
        assert_eq!(srcs.len(), hosts as usize, "every host sends once");
        assert_eq!(dsts.len(), hosts as usize, "every host receives once");
        for f in &b.flows {
            assert_ne!(f.src, f.dst, "no fixed points");
            assert_eq!(f.name, format!("perm-{}", t.name(f.src)));
            assert!(paths(t, &r, f.src, f.dst) >= 1, "{} -> {} has a route", t.name(f.src), t.name(f.dst));
            assert_eq!(f.dscp, 5);
            assert_eq!(f.start.ns(), 1_000_000);
            assert_eq!(f.kind, ccsim_net::FlowKind::Bulk { stop: Some(ccsim_engine::SimTime::from_ms(5)) });
            assert_eq!(f.client.cc, ccsim_cc::CcKind::Reno);
            assert_eq!(f.server.cc, ccsim_cc::CcKind::Reno);
        }
        // Hosts in topology order.
        let order: Vec<NodeId> = b.flows.iter().map(|f| f.src).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]));
    }
}

#[test]
fn permutation_is_determined_by_the_seed() {
    assert_eq!(permutation(8, 1), permutation(8, 1));
    assert_eq!(permutation(8, 42), permutation(8, 42));
    assert_ne!(permutation(8, 1), permutation(8, 2), "another seed, another permutation");
    // k = 2: two hosts can only swap.
    let p = permutation(2, 9);
    assert_eq!(p.len(), 2);
    assert_eq!((p[0].0, p[0].1), (p[1].1, p[1].0));
}

#[test]
fn permutation_follows_the_explicit_flows_and_works_on_any_topology() {
    let text = "[run]\nduration = \"10ms\"\n[topology]\ntype = \"star\"\nhosts = [\"a\", \"b\", \"c\"]\n\
        [[flows]]\nname = \"x\"\nsrc = \"a\"\ndst = \"b\"\n[traffic]\npattern = \"permutation\"\n";
    let b = built(text);
    assert_eq!(b.flows.len(), 4);
    assert_eq!(b.flows[0].name, "x");
    assert_eq!(b.flows[1].name, "perm-a");
    assert_eq!(b.flows[1].client.cc, ccsim_cc::CcKind::Cubic, "default: tcp.cc");
}

#[test]
fn a_small_fat_tree_runs_and_every_permutation_flow_moves_data() {
    let text = scenario(
        "k = 4",
        "[tcp]\ncc = \"dctcp\"\n\n[queues.mark]\nclasses = [{ limit = 1000, aqm = \"step\", k = 65 }]\n\n\
         [traffic]\npattern = \"permutation\"\n\n[record]\nseries = false\n",
    )
    .replace("type = \"fattree\"", "type = \"fattree\"\nswitch_queue = \"mark\"");
    let o = run_built(built(&text), |_, _| {});
    assert_eq!(o.summary.flows.len(), 16);
    for f in &o.summary.flows {
        assert!(f.bytes_acked > 100_000, "{} -> {}: {} bytes acknowledged", f.src, f.dst, f.bytes_acked);
    }
    assert!(o.summary.data_packets_delivered > 0);
}

#[test]
fn bad_fat_trees_and_traffic_are_named() {
    for k in ["k = 5", "k = 1", "k = 0", "k = 66", "k = 3"] {
        let (field, msg) = error(&scenario(k, ""));
        assert_eq!(field, "topology.k", "{k}");
        assert!(msg.contains("even") && msg.contains("2..=64"), "{k}: {msg}");
    }
    let (field, msg) = error(&scenario("", ""));
    assert_eq!(field, "topology.k");
    assert!(msg.contains("needs k"), "{msg}");
    let (field, msg) = error(&scenario("k = -2", ""));
    assert_eq!(field, "topology.k");
    assert!(msg.contains("invalid value"), "{msg}");
    let (field, msg) = error(&scenario("k = 4", "host_queue = \"nope\""));
    assert_eq!(field, "topology.host_queue");
    assert!(msg.contains("unknown queue"), "{msg}");
    let (field, msg) = error(&scenario("k = 4", "delay = \"-1us\""));
    assert_eq!(field, "topology.delay", "{msg}");

    let traffic = |t: &str| error(&scenario("k = 4", &format!("[traffic]\n{t}\n")));
    let (field, msg) = traffic("pattern = \"all-to-all\"");
    assert_eq!(field, "traffic.pattern");
    assert!(msg.contains("\"permutation\""), "{msg}");
    let (field, msg) = traffic("cc = \"dctcp\"");
    assert_eq!(field, "traffic");
    assert!(msg.contains("pattern"), "{msg}");
    let (field, msg) = traffic("pattern = \"permutation\"\ndscp = 64");
    assert_eq!((field.as_str(), msg.as_str()), ("traffic.dscp", "64 is out of range; allowed 0..=63"));
    let (field, msg) = traffic("pattern = \"permutation\"\ncc = \"vegas\"");
    assert_eq!(field, "traffic.cc");
    assert!(msg.contains("\"dctcp\""), "{msg}");
    let (field, msg) = traffic("pattern = \"permutation\"\nstart = \"2ms\"\nstop = \"1ms\"");
    assert_eq!((field.as_str(), msg.as_str()), ("traffic.stop", "must be after start"));
    let (field, msg) = traffic("pattern = \"permutation\"\ncount = 3");
    assert_eq!(field, "traffic");
    assert!(msg.contains("unknown field `count`"), "{msg}");

    // One host is not enough for a permutation.
    let (field, msg) = error(
        "[topology]\ntype = \"custom\"\nnodes = [{ name = \"h\", kind = \"host\" }]\n[traffic]\npattern = \"permutation\"\n",
    );
    assert_eq!(field, "traffic.pattern");
    assert!(msg.contains("at least 2 hosts"), "{msg}");
    // Hosts without a path between them.
    let (field, msg) = error(
        "[topology]\ntype = \"custom\"\nnodes = [{ name = \"h\", kind = \"host\" }, { name = \"g\", kind = \"host\" }]\n\
         [traffic]\npattern = \"permutation\"\n",
    );
    assert_eq!(field, "traffic.pattern");
    assert!(msg.contains("no path"), "{msg}");
}
