//! `[tcp.bbr]`, `[tcp.nv]` and `[[base_rtt]]`: kernel defaults that round-trip through the resolved
//! configuration, values that reach every connection's `CcParams`, out-of-range values named by
//! their table, and base-RTT rules that reach exactly the connections they match (both ends of a
//! flow, the first matching rule deciding), with unknown names reported by field.

use ccsim_cc::{BbrParams, CcKind, NvParams, TCP_BASERTT_KERN_US};
use ccsim_net::{FlowSpec, NodeKind};
use ccsim_scenario::spec::{BbrSpec, NvSpec};
use ccsim_scenario::{build, host_addresses, host_ipv4, parse, resolved_toml, Built};
use std::net::Ipv4Addr;

fn built(text: &str) -> Built {
    build(&parse(text, "test.toml").unwrap()).unwrap_or_else(|e| panic!("{e}\n{text}"))
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

const STAR: &str = "[run]\nduration = \"10ms\"\n[topology]\ntype = \"star\"\nhosts = [\"a\", \"b\", \"c\", \"d\"]\n";

#[test]
fn bbr_and_nv_tables_default_to_the_kernel_values_and_round_trip() {
    let s = parse(STAR, "test.toml").unwrap();
    assert_eq!(s.tcp.bbr, BbrSpec::default());
    assert_eq!(s.tcp.nv, NvSpec::default());
    assert_eq!(BbrParams::from(&s.tcp.bbr), BbrParams::default());
    assert_eq!(NvParams::from(&s.tcp.nv), NvParams::default());
    let text = resolved_toml(&s);
    // What `ccsim check` prints: every field with Linux's value.
    for line in [
        "[tcp.bbr]",
        "high_gain = 739",
        "drain_gain = 88",
        "cwnd_gain = 512",
        "min_rtt_win_sec = 10",
        "probe_rtt_mode_ms = 200",
        "cwnd_min_target = 4",
        "extra_acked_gain = 256",
        "pacing_margin_percent = 1",
        "[tcp.nv]",
        "nv_pad = 10",
        "nv_pad_buffer = 2",
        "nv_reset_period = 5",
        "nv_min_cwnd = 2",
        "nv_cong_dec_mult = 38",
        "nv_ssthresh_factor = 8",
        "nv_rtt_factor = 128",
        "nv_loss_dec_factor = 819",
        "nv_cwnd_growth_rate_neg = 8",
        "nv_cwnd_growth_rate_pos = 0",
        "nv_dec_eval_min_calls = 60",
        "nv_inc_eval_min_calls = 20",
        "nv_ssthresh_eval_min_calls = 30",
        "nv_stop_rtt_cnt = 10",
        "nv_rtt_min_cnt = 2",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
    }
    let again = parse(&text, "resolved.toml").unwrap();
    assert_eq!(again, s);
    assert_eq!(resolved_toml(&again), text);
}

#[test]
fn bbr_and_nv_values_reach_every_connection() {
    let text = format!(
        "{STAR}[tcp]\ncc = \"bbr\"\n[tcp.bbr]\ncwnd_gain = 640\nprobe_rtt_mode_ms = 0\n[tcp.nv]\nnv_pad = 20\n\
         nv_rtt_min_cnt = 3\n[[flows]]\nsrc = \"a\"\ndst = \"c\"\n[[flows]]\nsrc = \"b\"\ndst = \"c\"\ncc = \"nv\"\n\
         server_cc = \"cubic\"\n[traffic]\npattern = \"permutation\"\n"
    );
    let b = built(&text);
    let bbr = BbrParams { cwnd_gain: 640, probe_rtt_mode_ms: 0, ..BbrParams::default() };
    let nv = NvParams { nv_pad: 20, nv_rtt_min_cnt: 3, ..NvParams::default() };
    assert_eq!(b.flows.len(), 6);
    assert_eq!(
        (b.flows[0].client.cc, b.flows[1].client.cc, b.flows[1].server.cc),
        (CcKind::Bbr, CcKind::Nv, CcKind::Cubic)
    );
    for f in &b.flows {
        for cfg in [&f.client, &f.server] {
            assert_eq!(cfg.cc_params.bbr, bbr, "{}", f.name);
            assert_eq!(cfg.cc_params.nv, nv, "{}", f.name);
        }
    }
    // The resolved text keeps the overrides.
    let s = parse(&text, "test.toml").unwrap();
    let r = resolved_toml(&s);
    assert!(r.contains("cwnd_gain = 640\n") && r.contains("nv_pad = 20\n") && r.contains("high_gain = 739\n"), "{r}");
}

#[test]
fn out_of_range_bbr_and_nv_values_name_their_table() {
    for (table, body, what) in [
        ("nv", "nv_rtt_factor = 257", "nv_rtt_factor 257"),
        ("nv", "nv_cong_dec_mult = 129", "nv_cong_dec_mult"),
        ("nv", "nv_pad = 4\nnv_pad_buffer = 5", "nv_pad_buffer 5 must not exceed nv_pad 4"),
        ("nv", "nv_min_cwnd = 0", "nv_min_cwnd 0"),
        ("nv", "nv_reset_period = 3361", "nv_reset_period 3361"),
        ("bbr", "high_gain = 0", "high_gain 0"),
        ("bbr", "cwnd_gain = 1024", "cwnd_gain 1024"),
        ("bbr", "pacing_margin_percent = 100", "pacing_margin_percent 100"),
        ("bbr", "cwnd_min_target = 0", "cwnd_min_target"),
        ("bbr", "min_rtt_win_sec = 0", "min_rtt_win_sec 0"),
    ] {
        let (field, msg) = error(&format!("{STAR}[tcp.{table}]\n{body}\n"));
        assert_eq!(field, format!("tcp.{table}"), "{body}: {msg}");
        assert!(msg.contains(what), "{body}: {msg}");
    }
    // Unknown keys are rejected with the allowed ones.
    let (field, msg) = error(&format!("{STAR}[tcp.nv]\npad = 3\n"));
    assert_eq!(field, "tcp.nv");
    assert!(msg.contains("unknown field `pad`") && msg.contains("`nv_pad`"), "{msg}");
    let (field, msg) = error(&format!("{STAR}[tcp.bbr]\nhigh = 3\n"));
    assert_eq!(field, "tcp.bbr");
    assert!(msg.contains("`high_gain`") && msg.contains("`pacing_margin_percent`"), "{msg}");
    // The limits themselves are accepted.
    built(&format!(
        "{STAR}[tcp.nv]\nnv_rtt_factor = 256\nnv_cong_dec_mult = 128\nnv_pad_buffer = 10\nnv_reset_period = 3360\n"
    ));
    built(&format!("{STAR}[tcp.bbr]\nhigh_gain = 1023\nextra_acked_gain = 0\npacing_margin_percent = 99\n"));
}

/// Base RTT of (client, server) of every flow, by flow name.
fn base_rtts(b: &Built) -> Vec<(String, Option<u32>, Option<u32>)> {
    b.flows.iter().map(|f: &FlowSpec| (f.name.clone(), f.client.base_rtt_us, f.server.base_rtt_us)).collect()
}

fn row(name: &str, client: Option<u32>, server: Option<u32>) -> (String, Option<u32>, Option<u32>) {
    (name.to_string(), client, server)
}

const FLOWS: &str = r#"
[tcp]
cc = "nv"

[[flows]]
name = "ac"
src = "a"
dst = "c"

[[flows]]
name = "bc"
src = "b"
dst = "c"

[[flows]]
name = "ad"
src = "a"
dst = "d"

[[flows]]
name = "ac-cubic"
src = "a"
dst = "c"
cc = "cubic"

[[flows]]
name = "ca"
src = "c"
dst = "a"
server_cc = "reno"
"#;

#[test]
fn without_rules_no_connection_has_a_base_rtt() {
    let b = built(&format!("{STAR}{FLOWS}"));
    assert!(b.flows.iter().all(|f| f.client.base_rtt_us.is_none() && f.server.base_rtt_us.is_none()));
}

#[test]
fn a_base_rtt_rule_reaches_only_the_connections_it_matches() {
    // tcp_basertt_kern.c's rule, for a's connections to c only.
    let b = built(&format!(
        "{STAR}{FLOWS}\n[[base_rtt]]\nbase_rtt = \"80us\"\ncc = \"nv\"\nsrc = [\"a\"]\ndst = [\"c\"]\n"
    ));
    assert_eq!(
        base_rtts(&b),
        [
            row("ac", Some(TCP_BASERTT_KERN_US), None),
            row("bc", None, None),
            row("ad", None, None),
            row("ac-cubic", None, None),
            // Server side of c -> a: local a, peer c, but its CC is reno.
            row("ca", None, None),
        ]
    );

    // Without src: every host's program has the rule; the server of c -> a (local a, peer c)
    // runs NV when server_cc is not set.
    let text = FLOWS.replace("server_cc = \"reno\"\n", "");
    let b = built(&format!("{STAR}{text}\n[[base_rtt]]\nbase_rtt = \"80us\"\ncc = \"nv\"\ndst = [\"c\"]\n"));
    assert_eq!(
        base_rtts(&b),
        [
            row("ac", Some(80), None),
            row("bc", Some(80), None),
            row("ad", None, None),
            row("ac-cubic", None, None),
            row("ca", None, Some(80)),
        ]
    );

    // Without cc, dst: every connection of the named hosts, whatever its algorithm; the server
    // end's local host is the flow's dst.
    let b = built(&format!("{STAR}{FLOWS}\n[[base_rtt]]\nbase_rtt = \"0.2ms\"\nsrc = [\"c\", \"d\"]\n"));
    assert_eq!(
        base_rtts(&b),
        [
            row("ac", None, Some(200)),
            row("bc", None, Some(200)),
            row("ad", None, Some(200)),
            row("ac-cubic", None, Some(200)),
            row("ca", Some(200), None),
        ]
    );
}

#[test]
fn the_first_matching_rule_decides() {
    let rules = r#"
[[base_rtt]]
base_rtt = "50us"
src = ["b"]

[[base_rtt]]
base_rtt = "80us"
cc = "nv"
dst = ["c", "d"]

[[base_rtt]]
base_rtt = "1ms"
"#;
    let b = built(&format!("{STAR}{FLOWS}{rules}"));
    assert_eq!(
        base_rtts(&b),
        [
            row("ac", Some(80), Some(1000)),
            row("bc", Some(50), Some(1000)),
            row("ad", Some(80), Some(1000)),
            row("ac-cubic", Some(1000), Some(1000)),
            row("ca", Some(1000), Some(1000)),
        ]
    );
}

#[test]
fn generated_traffic_gets_base_rtts_too() {
    let b = built(
        "[run]\nduration = \"10ms\"\n[topology]\ntype = \"fattree\"\nk = 4\n[tcp]\ncc = \"nv\"\n\
         [traffic]\npattern = \"permutation\"\n[[base_rtt]]\nbase_rtt = \"80us\"\ncc = \"nv\"\nsrc = [\"h0_0_0\"]\n",
    );
    let h = b.topo.node("h0_0_0").unwrap();
    for f in &b.flows {
        assert_eq!(f.client.base_rtt_us, (f.src == h).then_some(80), "{}", f.name);
        assert_eq!(f.server.base_rtt_us, (f.dst == h).then_some(80), "{}", f.name);
    }
    assert_eq!(b.flows.iter().filter(|f| f.client.base_rtt_us.is_some()).count(), 1);

    // A "datacenter" rule: pod 0's hosts (10.0.0.1 ..= 10.0.0.4) answer for each other only.
    let pod0 = r#"["h0_0_0", "h0_0_1", "h0_1_0", "h0_1_1"]"#;
    let b = built(&format!(
        "[run]\nduration = \"10ms\"\n[topology]\ntype = \"fattree\"\nk = 4\n[tcp]\ncc = \"nv\"\n\
         [traffic]\npattern = \"permutation\"\n[[flows]]\nsrc = \"h0_0_0\"\ndst = \"h0_1_1\"\n\
         [[base_rtt]]\nbase_rtt = \"80us\"\ncc = \"nv\"\nsrc = {pod0}\ndst = {pod0}\n"
    ));
    let in_pod0 = |n: ccsim_net::NodeId| b.topo.name(n).starts_with("h0_");
    assert!(b.flows.iter().any(|f| !in_pod0(f.src) || !in_pod0(f.dst)));
    for f in &b.flows {
        let want = (in_pod0(f.src) && in_pod0(f.dst)).then_some(80);
        assert_eq!((f.client.base_rtt_us, f.server.base_rtt_us), (want, want), "{}", f.name);
    }
    assert_eq!(b.flows[0].client.base_rtt_us, Some(80), "the explicit flow inside pod 0");
}

#[test]
fn base_rtt_rules_round_trip_through_the_resolved_configuration() {
    let text =
        format!("{STAR}{FLOWS}\n[[base_rtt]]\nbase_rtt = \"80us\"\ncc = \"nv\"\nsrc = [\"a\"]\ndst = [\"c\"]\n\n[[base_rtt]]\nbase_rtt = \"1ms\"\n");
    let s = parse(&text, "test.toml").unwrap();
    let r = resolved_toml(&s);
    assert!(r.contains("[[base_rtt]]\nbase_rtt = \"80us\"\ncc = \"nv\"\nsrc = [\"a\"]\ndst = [\"c\"]\n"), "{r}");
    let again = parse(&r, "resolved.toml").unwrap();
    assert_eq!(again, s);
    assert_eq!(base_rtts(&built(&r)), base_rtts(&built(&text)));
    // No rules: an empty list.
    assert!(resolved_toml(&parse(STAR, "t").unwrap()).contains("base_rtt = []\n"));
}

#[test]
fn bad_base_rtt_rules_name_the_field_and_what_is_allowed() {
    let rule =
        |body: &str| error(&format!("{STAR}{FLOWS}\n[[base_rtt]]\nbase_rtt = \"80us\"\n\n[[base_rtt]]\n{body}\n"));
    let (field, msg) = rule("base_rtt = \"80us\"\ndst = [\"c\", \"zz\"]");
    assert_eq!(field, "base_rtt[1].dst");
    assert!(msg.contains("unknown host \"zz\"") && msg.contains("\"a\", \"b\", \"c\", \"d\""), "{msg}");
    let (field, msg) = rule("base_rtt = \"80us\"\nsrc = [\"x\"]");
    assert_eq!(field, "base_rtt[1].src");
    assert!(msg.contains("unknown host \"x\""), "{msg}");
    let (field, msg) = rule("base_rtt = \"80us\"\nsrc = [\"s\"]");
    assert_eq!(field, "base_rtt[1].src");
    assert!(msg.contains("\"s\" is a switch") && msg.contains("\"d\""), "{msg}");
    let (field, msg) = rule("base_rtt = \"80us\"\ncc = \"vegas\"");
    assert_eq!(field, "base_rtt[1].cc");
    assert!(msg.contains("\"vegas\"") && msg.contains("\"nv\"") && msg.contains("\"bbr\""), "{msg}");
    let (field, msg) = rule("base_rtt = \"80us\"\ndst = []");
    assert_eq!(field, "base_rtt[1].dst");
    assert!(msg.contains("empty list"), "{msg}");
    for (v, what) in [
        ("\"0us\"", "positive"),
        ("\"-5us\"", "positive"),
        ("\"80.5us\"", "whole number of microseconds"),
        ("\"4.29s\"", "base_rtt < 4.29s"),
        ("5", "base_rtt < 4.29s"),
    ] {
        let (field, msg) = rule(&format!("base_rtt = {v}"));
        assert_eq!(field, "base_rtt[1].base_rtt", "{v}: {msg}");
        assert!(msg.contains(what), "{v}: {msg}");
    }
    // base_rtt is required; other keys are unknown.
    let (field, msg) = rule("cc = \"nv\"");
    assert!(field.starts_with("base_rtt") && msg.contains("missing field `base_rtt`"), "{field}: {msg}");
    let (field, msg) = rule("base_rtt = \"80us\"\nport = 5001");
    assert!(field.starts_with("base_rtt") && msg.contains("unknown field `port`") && msg.contains("`dst`"), "{msg}");
    // The first rule in the message is the first bad one: a good rule 0 stays good.
    let (field, _) = error(&format!(
        "{STAR}[[base_rtt]]\nbase_rtt = \"1us\"\n[[base_rtt]]\nbase_rtt = \"4.289999s\"\ndst = [\"q\"]\n"
    ));
    assert_eq!(field, "base_rtt[1].dst");
    let (field, _) = error(&format!("{STAR}[[base_rtt]]\nbase_rtt = \"80us\"\ndst = [\"q\"]\n"));
    assert_eq!(field, "base_rtt[0].dst");
}

#[test]
fn host_addresses_number_hosts_in_topology_order() {
    let b = built(
        "[run]\nduration = \"10ms\"\n[topology]\ntype = \"dumbbell\"\nleft = [\"l1\", \"l2\"]\nright = [\"r1\"]\n",
    );
    let t = &b.topo;
    let addr = host_addresses(t);
    let mut n = 0;
    for (i, kind) in t.kinds.iter().enumerate() {
        if *kind == NodeKind::Host {
            n += 1;
            let id = ccsim_net::NodeId(i as u32);
            assert_eq!(host_ipv4(t, id), u32::from(Ipv4Addr::new(10, 0, 0, n)), "{}", t.names[i]);
            assert_eq!(addr[i], Some(host_ipv4(t, id)));
        } else {
            assert_eq!(addr[i], None, "{} is a switch", t.names[i]);
        }
    }
    assert_eq!(Ipv4Addr::from(host_ipv4(t, t.node("r1").unwrap())), Ipv4Addr::new(10, 0, 0, 3));
}
