//! A bounded, deterministic fuzz run of scenario files: every shipped scenario mutated a few
//! thousand ways (values swapped for hostile ones, lines dropped or repeated), each parsed,
//! checked and — when valid — run for a millisecond of simulated time. No input may panic, take
//! more than a few seconds, or be refused without naming what is wrong.

use ccsim_engine::Rng;
use ccsim_scenario::{apply_overrides, build, parse, run_built, Override};
use std::path::Path;
use std::time::{Duration, Instant};

/// Values swapped in for a field's: wrong types, signs, zero after rounding, extremes.
const HOSTILE: &[&str] = &[
    "-1",
    "0",
    "1",
    "3.5",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "18446744073709551615",
    "9223372036854775807",
    "\"\"",
    "\"0.4ns\"",
    "\"1ns\"",
    "\"-5Gbps\"",
    "\"1bps\"",
    "\"1e20s\"",
    "\"abc\"",
    "\"10\"",
    "\"ñ→\"",
    "true",
    "[]",
    "[1, 2, 3]",
    "{}",
    "{ a = 1 }",
    "\"s->s\"",
    "\"h0->h0\"",
];

fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for _ in 0..1 + rng.index(3) {
        if lines.is_empty() {
            break;
        }
        let i = rng.index(lines.len());
        match rng.index(6) {
            // Most often: a value replaced.
            0..=3 => {
                if let Some(eq) = lines[i].find(" = ") {
                    let key = lines[i][..eq].to_string();
                    lines[i] = format!("{key} = {}", HOSTILE[rng.index(HOSTILE.len())]);
                }
            }
            4 => {
                lines.remove(i);
            }
            _ => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn thousands_of_mutated_scenarios_never_panic_hang_or_go_unnamed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut bases: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    bases.sort();
    let short = [Override::parse("run.duration=1ms").unwrap(), Override::parse("record.warmup=0s").unwrap()];
    let (mut inputs, mut refused, mut ran, mut slowest) = (0, 0, 0, Duration::ZERO);
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15, 0);
    for round in 0..400 {
        for (name, text) in &bases {
            let mutated = mutate(text, &mut rng);
            inputs += 1;
            let started = Instant::now();
            let outcome = std::panic::catch_unwind(|| {
                let s = match parse(&mutated, name) {
                    Ok(s) => s,
                    Err(e) => return Err(e),
                };
                // The file is named by the caller, as `ccsim check` and `run` do.
                build(&s).map_err(|e| e.in_file(name))?;
                // Valid: run it for a millisecond (a smaller fat tree keeps the run quick).
                let shortened = apply_overrides(&mutated, name, &short)?;
                let s = parse(&shortened, name)?;
                let b = build(&s).map_err(|e| e.in_file(name))?;
                run_built(b, |_, _| {});
                Ok(())
            });
            let took = started.elapsed();
            slowest = slowest.max(took);
            match outcome {
                Err(_) => panic!("round {round}: {name} mutated panicked:\n{mutated}"),
                Ok(Err(e)) => {
                    refused += 1;
                    assert!(!e.msg.is_empty(), "an error without a message for\n{mutated}");
                    assert_eq!(e.file, *name, "the error names the file: {e}");
                    assert!(!e.msg.contains("untagged enum"), "serde's internals leak: {e}\n{mutated}");
                }
                Ok(Ok(())) => ran += 1,
            }
            assert!(took < Duration::from_secs(20), "{name} mutated took {took:?}:\n{mutated}");
        }
    }
    eprintln!("fuzz: {inputs} mutated scenarios, {refused} refused with a named error, {ran} ran; slowest {slowest:?}");
    assert!(inputs >= 4000 && refused > 0 && ran > 0);
}
