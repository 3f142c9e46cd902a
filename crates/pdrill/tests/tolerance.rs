//! Timing tolerance as packetdrill applies it (`verify_time`): the larger of `--tolerance_usecs`
//! (4 ms) and `--tolerance_percent` (12.5 %) of the script time since the previous event.

use ccsim_pdrill::{parse, run_script, RunOptions};

/// A passive open, then a data segment whose delayed ACK (40 ms later, in interactive mode after
/// a write) the script expects `at_ms` after it; `opts` are packetdrill options in the script.
fn run(at_ms: u32, opts: &str) -> Option<String> {
    let text = format!(
        "{opts}
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0  > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
+.1 < . 1:1(0) ack 1 win 257
+0  accept(3, ..., ...) = 4
+0  < . 1:1001(1000) ack 1 win 257
+0  > . 1:1(0) ack 1001
+0  write(4, ..., 1000) = 1000
+0  > P. 1:1001(1000) ack 1001
+0  < . 1001:1101(100) ack 1001 win 257
+.{at_ms:03} > . 1001:1001(0) ack 1101
"
    );
    let s = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    run_script(&s, &std::env::temp_dir(), &RunOptions::default()).0.map(|f| f.msg)
}

#[test]
fn the_tolerance_grows_with_the_time_since_the_last_event() {
    // The delayed ACK leaves 40 ms after the segment.
    assert_eq!(run(40, ""), None);
    // Expected at 45 ms: 5 ms off, within 12.5 % of 45 ms (5.6 ms).
    assert_eq!(run(45, ""), None);
    // Expected at 47 ms: 7 ms off, more than 12.5 % of 47 ms (5.9 ms).
    let msg = run(47, "").expect("7 ms off");
    assert!(msg.contains("tolerance 5.875 ms"), "{msg}");
}

#[test]
fn tolerance_percent_and_usecs_can_be_set_in_the_script() {
    // Without the percentage only --tolerance_usecs remains: 5 ms off is too much.
    let msg = run(45, "--tolerance_percent=0").expect("5 ms off, 4 ms allowed");
    assert!(msg.contains("tolerance 4 ms"), "{msg}");
    assert_eq!(run(45, "--tolerance_percent=0 --tolerance_usecs=6000"), None);
}
