//! The `tcpi_*` names a code block can read: every field of Linux 6.18's `struct tcp_info` that
//! ccsim models, with the values `tcp_get_info` gives, and a clear refusal naming the field for
//! the few ccsim does not keep.

use ccsim_pdrill::{parse, run_script, RunOptions};

/// A passive open with timestamps, SACK and window scaling, 1000 bytes out and acknowledged,
/// then `block` run as a code block.
fn script(block: &str) -> String {
    format!(
        "
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  < S 0:0(0) win 32792 <mss 1000,sackOK,TS val 100 ecr 0,nop,wscale 7>
+0  > S. 0:0(0) ack 1 <mss 1460,sackOK,TS val 100 ecr 100,nop,wscale 8>
+.1 < . 1:1(0) ack 1 win 257 <nop,nop,TS val 200 ecr 100>
+0  accept(3, ..., ...) = 4
+0  write(4, ..., 1000) = 1000
+0  > P. 1:1001(1000) ack 1 <nop,nop,TS val 200 ecr 200>
+.1 < . 1:1(0) ack 1001 win 257 <nop,nop,TS val 300 ecr 200>
+0  %{{ {block} }}%
"
    )
}

fn run(block: &str) -> Option<String> {
    let s = parse(&script(block)).unwrap_or_else(|e| panic!("{e}"));
    run_script(&s, &std::env::temp_dir(), &RunOptions::default()).0.map(|f| f.msg)
}

#[test]
fn the_fields_linux_fills_read_as_tcp_get_info_gives_them() {
    for assert in [
        "assert tcpi_state == 1",           // TCP_ESTABLISHED
        "assert tcpi_options == 1 | 2 | 4", // timestamps, SACK, window scaling; no ECN
        "assert tcpi_retransmits == 0",
        "assert tcpi_snd_wnd == 257 << 7", // the peer's window, scaled by its shift
        "assert tcpi_rcv_wnd > 0",
        "assert tcpi_pmtu == 1500",
        "assert tcpi_rcv_ssthresh > 0",
        "assert tcpi_rcv_space == 10 * 1448", // tcp_init_buffer_space: ten segments of advmss
        "assert tcpi_rcv_rtt == 0",           // nothing received yet
        "assert tcpi_rcv_ooopack == 0",
        "assert tcpi_last_ack_recv == 0", // the ACK of the data just arrived
        "assert tcpi_notsent_bytes == 0",
        "assert tcpi_delivery_rate > 0",
        "assert tcpi_delivery_rate_app_limited == 1", // one write, less than cwnd
        "assert tcpi_total_rto == 0",
        "assert tcpi_fackets == 0",
        "assert tcpi_last_ack_sent == 0",
        "assert tcpi_fastopen_client_fail == 0",
    ] {
        assert_eq!(run(assert), None, "{assert}");
    }
    // And they can be false: the values are read, not defaulted.
    assert!(run("assert tcpi_state == 7").is_some_and(|m| m.contains("assertion failed")));
    assert!(run("assert tcpi_options == 0").is_some());
}

#[test]
fn a_field_ccsim_does_not_keep_is_named_with_what_it_would_need() {
    let msg = run("assert tcpi_max_pacing_rate > 0").expect("refused");
    assert!(msg.contains("tcpi_max_pacing_rate is a tcp_info field ccsim does not model"), "{msg}");
    assert!(msg.contains("SO_MAX_PACING_RATE"), "{msg}");
    let msg = run("x = 1\nprint(tcpi_rehash)").expect("refused");
    assert!(msg.contains("tcpi_rehash"), "{msg}");
}
