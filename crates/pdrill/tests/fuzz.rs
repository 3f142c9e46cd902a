//! A bounded, deterministic fuzz run of the script runner that needs no third-party suite: small
//! scripts of our own (passive and active open, data both ways, close) mutated a few thousand
//! ways (tokens swapped or replaced by extremes, lines dropped, repeated or swapped, huge time
//! gaps), each parsed and, when it parses, run. No input may panic or take more than a couple of
//! seconds; a failure names its line and says what differed.

use ccsim_engine::Rng;
use ccsim_pdrill::{parse, run_script, RunOptions};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// A server: listen, accept a connection, read and write, close.
const PASSIVE: &str = "\
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0  > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
+.1 < . 1:1(0) ack 1 win 257
+0  accept(3, ..., ...) = 4
+0  < P. 1:1001(1000) ack 1 win 257
+0  > . 1:1(0) ack 1001
+0  read(4, ..., 1000) = 1000
+0  write(4, ..., 1000) = 1000
+0  > P. 1:1001(1000) ack 1001
+.1 < . 1001:1001(0) ack 1001 win 257
+0  close(4) = 0
+0  > F. 1001:1001(0) ack 1001
+.1 < F. 1001:1001(0) ack 1002 win 257
+0  > . 1002:1002(0) ack 1002
";

/// A client: non-blocking connect, the handshake, a write, the peer closes first.
const ACTIVE: &str = "\
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
+0  connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
+0  > S 0:0(0) <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 8>
+.05 < S. 0:0(0) ack 1 win 65535 <mss 1460,nop,wscale 7,nop,nop,sackOK>
+0  > . 1:1(0) ack 1
+0  write(3, ..., 2000) = 2000
+0  > . 1:1461(1460) ack 1
+0  > P. 1461:2001(540) ack 1
+.05 < . 1:1(0) ack 2001 win 512
+0  < F. 1:1(0) ack 2001 win 512
+0  > . 2001:2001(0) ack 2
+0  close(3) = 0
+0  > F. 2001:2001(0) ack 2
+.05 < . 2:2(0) ack 2002 win 512
";

/// A loss: the first segment is not ACKed, a retransmission timeout resends it; ECN and a
/// timestamp option on the way.
const LOSS: &str = "\
`sysctl -q net.ipv4.tcp_ecn=1`
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  < SEW 0:0(0) win 32792 <mss 1000,sackOK,TS val 1 ecr 0,nop,wscale 7>
+0  > SE. 0:0(0) ack 1 <mss 1460,sackOK,TS val 100 ecr 1,nop,wscale 8>
+.1 < . 1:1(0) ack 1 win 257 <nop,nop,TS val 2 ecr 100>
+0  accept(3, ..., ...) = 4
+0  setsockopt(4, SOL_TCP, TCP_NODELAY, [1], 4) = 0
+0  write(4, ..., 900) = 900
+0  > P. 1:901(900) ack 1 <nop,nop,TS val 100 ecr 2>
+.2~+.5 > P. 1:901(900) ack 1 <nop,nop,TS val 400 ecr 2>
+.1 < . 1:1(0) ack 901 win 257 <nop,nop,TS val 3 ecr 400>
+0  %{ assert tcpi_ca_state == 0 }%
";

/// Replacements for a token: numbers at the extremes, time forms, flags, option words, noise.
const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "1",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999",
    "1e308",
    "0x",
    "0xffffffffffffffff",
    "+100000",
    "+3599",
    "+3601",
    "+1e9",
    "...",
    "*",
    "~",
    "<",
    ">",
    "S",
    "F.",
    "R",
    "P.",
    ".",
    "<...>",
    "<mss",
    "0,wscale",
    "14>",
    "ack",
    "win",
    "(",
    ")",
    "[",
    "]",
    "%{",
    "}%",
    "`",
    "\"",
    "ñ",
    "",
];

/// Leading times swapped in: huge gaps, zero, negative, ranges, the end of time.
const TIMES: &[&str] =
    &["+100000", "+3600", "+3599.999", "+1000000000", "0", "-1", "+0~+100000", "...", "*", "+.000001"];

fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for _ in 0..1 + rng.index(3) {
        if lines.is_empty() {
            break;
        }
        let i = rng.index(lines.len());
        let mut words: Vec<String> = lines[i].split(' ').map(String::from).collect();
        match rng.index(8) {
            // A token replaced by a hostile one.
            0 | 1 => {
                let w = rng.index(words.len());
                words[w] = HOSTILE[rng.index(HOSTILE.len())].to_string();
                lines[i] = words.join(" ");
            }
            // Two tokens of the line swapped.
            2 => {
                let (a, b) = (rng.index(words.len()), rng.index(words.len()));
                words.swap(a, b);
                lines[i] = words.join(" ");
            }
            // A number inside a token pushed to an extreme.
            3 => {
                let w = rng.index(words.len());
                if let Some(d) = words[w].split(|c: char| !c.is_ascii_digit()).find(|d| !d.is_empty()) {
                    let extreme = ["0", "4294967295", "18446744073709551616", "65536"][rng.index(4)];
                    words[w] = words[w].replacen(d, extreme, 1);
                }
                lines[i] = words.join(" ");
            }
            // The event's time replaced: a huge gap, most often.
            4 => {
                words[0] = TIMES[rng.index(TIMES.len())].to_string();
                lines[i] = words.join(" ");
            }
            5 => {
                lines.remove(i);
            }
            6 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            _ => {
                let j = rng.index(lines.len());
                lines.swap(i, j);
            }
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn the_base_scripts_parse_and_run() {
    for (name, text) in [("passive", PASSIVE), ("active", ACTIVE), ("loss", LOSS)] {
        let script = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (failure, _, _) = run_script(&script, &std::env::temp_dir(), &RunOptions::default());
        assert!(failure.is_none(), "{name}: {failure:?}");
    }
}

#[test]
fn thousands_of_mutated_scripts_never_panic_or_hang() {
    let bases = [("passive", PASSIVE), ("active", ACTIVE), ("loss", LOSS)];
    let dir = std::env::temp_dir();
    let opts = RunOptions::default();
    let (mut inputs, mut refused, mut failed, mut passed, mut slowest) = (0, 0, 0, 0, Duration::ZERO);
    let mut rng = Rng::new(0x5eed_f00d_dead_beef, 0);
    let t0 = Instant::now();
    for round in 0..2000 {
        for (name, text) in bases {
            let mutated = mutate(text, &mut rng);
            inputs += 1;
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| match parse(&mutated) {
                Err(e) => Err(e),
                Ok(script) => Ok(run_script(&script, &dir, &opts).0),
            }));
            let took = started.elapsed();
            slowest = slowest.max(took);
            match outcome {
                Err(_) => panic!("round {round}: {name} mutated panicked:\n{mutated}"),
                Ok(Err(e)) => {
                    refused += 1;
                    assert!(!e.msg.is_empty() && e.line >= 1, "a parse error without a place or message:\n{mutated}");
                }
                Ok(Ok(Some(f))) => {
                    failed += 1;
                    assert!(!f.msg.is_empty(), "a failure without a message:\n{mutated}");
                }
                Ok(Ok(None)) => passed += 1,
            }
            assert!(took < Duration::from_secs(2), "round {round}: {name} mutated took {took:?}:\n{mutated}");
        }
    }
    eprintln!(
        "pdrill fuzz: {inputs} mutated scripts in {:?}: {refused} refused by the parser, {failed} failed with \
         a message, {passed} passed; slowest {slowest:?}",
        t0.elapsed()
    );
    assert!(inputs >= 6000 && refused > 0 && failed > 0 && passed > 0);
}

/// Found by this fuzz run: a SYN announcing MSS 0 made the endpoint subtract the timestamp
/// option's room from 0. Linux ignores an MSS option of 0 (536 stays) and never sends segments
/// below TCP_MIN_SND_MSS (48 bytes, less the option room): the runner sees ten 36-byte segments
/// (the initial window) as one.
#[test]
fn a_zero_or_tiny_peer_mss_is_survived_as_linux_does() {
    for (mss, first) in [("0", "525:901(376)"), ("1", "1:361(360)"), ("40", "1:361(360)")] {
        let text = LOSS.replace("<mss 1000,", &format!("<mss {mss},"));
        let script = parse(&text).expect("the script parses");
        let (failure, _, _) = run_script(&script, &std::env::temp_dir(), &RunOptions::default());
        let msg = failure.map(|f| f.msg).unwrap_or_default();
        assert!(msg.contains(&format!("got {first}")), "mss {mss}: {msg}");
    }
}
