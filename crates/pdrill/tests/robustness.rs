//! Malformed input never panics: truncated and randomly mutated versions of
//! every conformance script give `Ok` or a `ParseError` with a sane position.

mod common;

use ccsim_pdrill::{parse, Script};
use common::{corpus_dir, pkt_files};
use std::panic::catch_unwind;

/// Small deterministic PRNG (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Characters that matter to the grammar, plus some that do not belong.
const ALPHABET: &[char] = &[
    '<', '>', '[', ']', '(', ')', '{', '}', '%', '`', '"', '\'', '*', '/', '+', '-', '.', '~', ':', ',', '=', '|', '#',
    '\\', ';', '!', '&', '^', '0', '1', '9', 'x', 'a', 'Z', 'S', 'E', '.', ' ', '\t', '\n', '\r', '\0', 'é', '€', '🦀',
];

const SNIPPETS: &[&str] = &[
    "...",
    "%{",
    "}%",
    "/*",
    "*/",
    "//",
    "0x",
    "0xffffffffffffffffff",
    "99999999999999999999",
    "assert ",
    " and ",
    " not ",
    "**",
    "//",
    "<...>",
    "[ect01]",
    "~+",
    "+.1",
    "...0.1",
    "`",
    "'%d' % ",
    "(",
    "[",
    "sack 1:2",
    "TS val 1 ecr",
    "\n+0 ",
    "--x=1\n",
    "-1",
    "not in",
];

fn mutate(rng: &mut Rng, src: &[char]) -> String {
    let mut s = src.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(s.len() + 1);
        match rng.below(7) {
            0 if at < s.len() => s[at] = ALPHABET[rng.below(ALPHABET.len())],
            1 => s.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
            2 if at < s.len() => {
                s.remove(at);
            }
            3 => {
                // Delete a chunk.
                let end = (at + rng.below(40)).min(s.len());
                s.drain(at..end);
            }
            4 => {
                // Duplicate a chunk somewhere else.
                let end = (at + rng.below(60)).min(s.len());
                let chunk: Vec<char> = s[at..end].to_vec();
                let to = rng.below(s.len() + 1);
                s.splice(to..to, chunk);
            }
            5 => {
                let snip = SNIPPETS[rng.below(SNIPPETS.len())];
                s.splice(at..at, snip.chars());
            }
            // Replace a digit, to break sequence arithmetic.
            _ if at < s.len() && s[at].is_ascii_digit() => s[at] = char::from(b'0' + rng.below(10) as u8),
            _ => {}
        }
    }
    s.into_iter().collect()
}

/// Parses `src` under `catch_unwind`; fails the test on a panic or an
/// implausible error position.
fn check(src: &str, what: &str) {
    let result = catch_unwind(|| parse(src));
    let lines = src.split('\n').count() as u32;
    match result {
        Err(_) => panic!("parse panicked on {what}:\n-----\n{src}\n-----"),
        Ok(Ok(Script { events, .. })) => {
            for e in &events {
                assert!(e.line >= 1 && e.line <= lines && e.col >= 1, "{what}: event position {}:{}", e.line, e.col);
            }
        }
        Ok(Err(e)) => {
            assert!(e.line >= 1 && e.line <= lines && e.col >= 1, "{what}: error position out of range: {e}");
            let line_len = src.split('\n').nth(e.line as usize - 1).map_or(0, |l| l.chars().count()) as u32;
            assert!(e.col <= line_len + 1, "{what}: error column beyond end of line {}: {e}", e.line);
            assert!(!e.msg.is_empty(), "{what}: empty error message");
        }
    }
}

fn scripts() -> Vec<(String, String)> {
    let files = pkt_files(&corpus_dir());
    assert!(!files.is_empty(), "no conformance scripts found");
    files.iter().map(|f| (f.display().to_string(), std::fs::read_to_string(f).expect("readable script"))).collect()
}

#[test]
fn every_prefix_of_every_script() {
    if common::skip_without_corpus() {
        return;
    }
    for (name, src) in scripts() {
        for (i, _) in src.char_indices() {
            check(&src[..i], &format!("{name} cut at byte {i}"));
        }
    }
}

#[test]
fn every_suffix_of_some_scripts() {
    if common::skip_without_corpus() {
        return;
    }
    for (name, src) in scripts().into_iter().filter(|(n, _)| n.contains("seed/") || n.contains("prr-ss-10pkt")) {
        for (i, _) in src.char_indices() {
            check(&src[i..], &format!("{name} from byte {i}"));
        }
    }
}

#[test]
fn random_mutations_of_every_script() {
    if common::skip_without_corpus() {
        return;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut errors = 0;
    let mut total = 0;
    for (name, src) in scripts() {
        let chars: Vec<char> = src.chars().collect();
        for k in 0..400 {
            let m = mutate(&mut rng, &chars);
            check(&m, &format!("{name} mutation #{k}"));
            total += 1;
            errors += usize::from(parse(&m).is_err());
        }
    }
    // The mutations must actually exercise the error paths.
    assert!(errors > total / 4, "only {errors} of {total} mutants were rejected");
}

#[test]
fn pathological_inputs() {
    let cases = [
        String::new(),
        "\0".into(),
        "%{".into(),
        "}%".into(),
        "0 %{".into(),
        "0 %{ assert".into(),
        "0 %{ assert ( }%".into(),
        "0 %{ assert '''abc }%".into(),
        "0 %{ assert 1 if 2 else 3 }%".into(),
        "`".into(),
        "/*/".into(),
        "0 > . 1:1(0) <".into(),
        "0...".into(),
        "+".into(),
        "*".into(),
        "0 ~".into(),
        "--".into(),
        "--x=\"".into(),
        "0 f(-".into(),
        "0 f(\"\\".into(),
        "0 %{ assert \"\\".into(),
        "0 %{ assert x\\".into(),
        "0 %{ assert 0x }%".into(),
        "0 %{ assert 0b102 }%".into(),
        "0 %{ assert 1_ }%".into(),
        "0 %{ assert -9223372036854775808 }%".into(),
        "0 f(-9223372036854775808) = -9223372036854775809".into(),
        "0 > S 0:4294967295(4294967295)".into(),
        "0 > S 4294967295:4294967295(0) ack 4294967295 <TS val 4294967295 ecr 4294967296>".into(),
        "é 0 close(3) = 0".into(),
        "0 close(3) = 0 é".into(),
        "0 close(3) = 0\n\u{feff}+0 close(4) = 0".into(),
        "0.0000000000000000000000000000001 close(3) = 0".into(),
        format!("{} close(3) = 0", "9".repeat(400)),
        format!("0.{} close(3) = 0", "9".repeat(400)),
        format!("0 %{{ assert {} }}%", "1 < ".repeat(500) + "2"),
        format!("0 f({}) = 0", "{a=".repeat(300)),
        format!("0 f({}) = 0", "g(".repeat(300)),
    ];
    for (i, c) in cases.iter().enumerate() {
        check(c, &format!("pathological case #{i}"));
    }
}
