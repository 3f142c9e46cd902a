//! A bounded, deterministic fuzz run of `ccsim ss`'s filter grammar: the filters of the docs and
//! tests mutated a few thousand ways (tokens dropped, repeated, swapped or replaced by hostile
//! ones, parentheses unbalanced, words split and glued), each parsed. No input may panic; every
//! refusal is a message that starts with `filter:` or names what was wrong.

use ccsim_cli::fuzz_filter;
use ccsim_engine::Rng;
use std::panic::catch_unwind;

/// Filters as the docs and tests of `ccsim ss` write them (one argument per word, or several
/// words in one argument as ss allows).
const FILTERS: &[&str] = &[
    "dport = :5001",
    "sport = :5001",
    "dport = :40001",
    "sport > :40000",
    "sport >= :40000",
    "dport < :6000",
    "dport <= :6000",
    "dport != :5001",
    "dport eq :5001",
    "sport gt :1024",
    "dport :5001",
    "state established",
    "state established dport = :5001",
    "state listening",
    "state all",
    "state syn-sent",
    "state connected",
    "exclude time-wait",
    "excl listening state established",
    "( sport = :40000 or dport = :40000 )",
    "( dport = :5001 or sport = :5001 )",
    "cc dctcp",
    "cc cubic",
    "cc dctcp-reno",
    "cc bbr",
    "mark = 0x0",
    "mark = 0x11",
    "fwmark = 0x11",
    "mark = 0x1/0xf",
    "mark = 0x20/0xf0",
    "mark != 0x22",
    "cc dctcp and dport = :5001",
    "not cc cubic sport = :5001",
    "src 10.0.0.1",
    "src 10.0.0.0/24",
    "dst 10.0.0.3:5001",
    "dst c",
    "src a:40000",
    "dst *:5001",
    "dev = b",
    "src a or src b and not dst c",
    "! ( cc reno || dport = :80 ) && src 10.0.0.2",
];

/// Tokens swapped in: grammar words, operators, bad values, extremes, noise.
const HOSTILE: &[&str] = &[
    "(",
    ")",
    "((",
    "))",
    "and",
    "or",
    "not",
    "!",
    "&&",
    "||",
    "&",
    "|",
    "=",
    "!=",
    "<",
    ">=",
    "eq",
    "state",
    "exclude",
    "sport",
    "dport",
    "src",
    "dst",
    "dev",
    "mark",
    "fwmark",
    "cc",
    ":",
    "::",
    ":0",
    ":65535",
    ":65536",
    ":-1",
    ":99999999999999999999",
    "0x",
    "0xffffffff",
    "0x100000000",
    "0x1/",
    "/0x1",
    "/",
    "10.0.0.0/33",
    "10.0.0.1/-1",
    "256.0.0.1",
    "*",
    "*:*",
    "a:",
    ":a",
    "q",
    "",
    " ",
    "ñ",
    "🦀",
    "\t",
    "all",
    "bucket",
    "big",
    "http",
];

fn mutate(filter: &str, rng: &mut Rng) -> Vec<String> {
    let mut words: Vec<String> = filter.split(' ').map(String::from).collect();
    for _ in 0..1 + rng.index(3) {
        let i = rng.index(words.len().max(1));
        match rng.index(7) {
            0 | 1 => {
                let h = HOSTILE[rng.index(HOSTILE.len())].to_string();
                if words.is_empty() {
                    words.push(h);
                } else {
                    words[i] = h;
                }
            }
            2 => {
                let h = HOSTILE[rng.index(HOSTILE.len())].to_string();
                words.insert(i.min(words.len()), h);
            }
            3 if !words.is_empty() => {
                words.remove(i);
            }
            4 if !words.is_empty() => {
                let w = words[i].clone();
                words.insert(i, w);
            }
            5 if !words.is_empty() => {
                let j = rng.index(words.len());
                words.swap(i, j);
            }
            // Two words glued into one argument (ss splits arguments at blanks, not at `=`).
            _ if words.len() >= 2 && i + 1 < words.len() => {
                let next = words.remove(i + 1);
                words[i].push_str(&next);
            }
            _ => {}
        }
    }
    // Sometimes the whole filter as one argument, as a quoted shell word.
    if rng.index(4) == 0 {
        vec![words.join(" ")]
    } else {
        words
    }
}

#[test]
fn the_documented_filters_parse() {
    for f in FILTERS {
        let words: Vec<String> = f.split(' ').map(String::from).collect();
        assert_eq!(fuzz_filter(&words), Ok(()), "{f}");
    }
}

#[test]
fn thousands_of_mutated_filters_never_panic_and_errors_say_why() {
    let mut rng = Rng::new(0x0123_4567_89ab_cdef, 0);
    let (mut inputs, mut refused, mut accepted) = (0, 0, 0);
    for round in 0..150 {
        for f in FILTERS {
            let words = mutate(f, &mut rng);
            inputs += 1;
            match catch_unwind(|| fuzz_filter(&words)) {
                Err(_) => panic!("round {round}: the filter {words:?} panicked"),
                Ok(Err(e)) => {
                    refused += 1;
                    assert!(!e.trim().is_empty(), "an empty error for {words:?}");
                }
                Ok(Ok(())) => accepted += 1,
            }
        }
    }
    eprintln!("ss filter fuzz: {inputs} mutated filters, {refused} refused with a message, {accepted} accepted");
    assert!(inputs >= 6000 && refused > 0 && accepted > 0);
}
