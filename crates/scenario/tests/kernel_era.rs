//! Behaviours that changed between Linux releases, chosen per scenario: the DCTCP receiver's ACK
//! on a CE change (a0496ef2c2, 4.19), the ACK of CWR data (9aee40006190, 5.3) and the timer tick
//! (`CONFIG_HZ`). They reach every connection's TcpConfig; bad values are named by field.

use ccsim_scenario::{build, parse};

const BASE: &str = r#"
[run]
duration = "10ms"
[topology]
type = "star"
hosts = ["a", "b"]
[[flows]]
name = "f"
src = "a"
dst = "b"
"#;

fn with_tcp(tcp: &str) -> String {
    format!("{BASE}\n[tcp]\ncc = \"dctcp\"\n{tcp}\n")
}

#[test]
fn defaults_are_current_linux() {
    let b = build(&parse(&with_tcp(""), "t.toml").unwrap()).unwrap_or_else(|e| panic!("{e}"));
    for cfg in [&b.flows[0].client, &b.flows[0].server] {
        assert!(cfg.cc_params.dctcp.ce_ack_now);
        assert!(cfg.cwr_ack_now);
        assert_eq!(cfg.hz, 1000);
    }
}

#[test]
fn older_kernels_reach_both_ends() {
    let text = with_tcp("hz = 250\ncwr_ack = \"delayed\"\n[tcp.dctcp]\nce_ack = \"delayed\"");
    let b = build(&parse(&text, "t.toml").unwrap()).unwrap_or_else(|e| panic!("{e}"));
    for cfg in [&b.flows[0].client, &b.flows[0].server] {
        assert!(!cfg.cc_params.dctcp.ce_ack_now);
        assert!(!cfg.cwr_ack_now);
        assert_eq!(cfg.hz, 250);
    }
}

#[test]
fn bad_values_name_their_field() {
    for (tcp, field) in [
        ("[tcp.dctcp]\nce_ack = \"sometimes\"", "tcp.dctcp.ce_ack"),
        ("cwr_ack = \"later\"", "tcp.cwr_ack"),
        ("hz = 200", "tcp.hz"),
    ] {
        // A word outside the list is refused when the file is read, a number out of range when
        // the scenario is built.
        let Err(e) = parse(&with_tcp(tcp), "t.toml").and_then(|s| build(&s)) else { panic!("{tcp} must be refused") };
        assert_eq!(e.field, field, "{tcp}: {}", e.msg);
    }
}
