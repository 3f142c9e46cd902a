//! A script cannot make the runner loop without end: script time is limited to an hour, and a
//! huge gap while a retransmission is pending ends quickly with a message naming the limit.

use ccsim_pdrill::{parse, run_script, RunOptions};

const SCRIPT: &str = "
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0  > S. 0:0(0) ack 1 <...>
+.1 < . 1:1(0) ack 1 win 257
+0  accept(3, ..., ...) = 4
+0  write(4, ..., 1000) = 1000
+0  > P. 1:1001(1000) ack 1
+1000000000 < . 1:1(0) ack 1001 win 257
";

#[test]
fn a_huge_gap_ends_at_the_script_time_limit() {
    let script = parse(SCRIPT).expect("the script parses");
    let t0 = std::time::Instant::now();
    let (failure, _, _) = run_script(&script, &std::env::temp_dir(), &RunOptions::default());
    let f = failure.expect("the gap is beyond the limit");
    assert!(f.msg.contains("at most 3600 s"), "{}", f.msg);
    assert_eq!(f.line, 12);
    assert!(t0.elapsed().as_secs() < 10, "the runner stops at once");
    // The same script with a gap inside the limit runs its timers out: the data is retransmitted
    // with backoff until tcp_write_timeout gives the connection up, and the late ACK finds it closed.
    let within = SCRIPT.replace("+1000000000 <", "+3000 <");
    let (failure, _, _) = run_script(&parse(&within).unwrap(), &std::env::temp_dir(), &RunOptions::default());
    let msg = failure.map(|f| f.msg).unwrap_or_default();
    assert!(!msg.contains("at most 3600 s"), "{msg}");
}
