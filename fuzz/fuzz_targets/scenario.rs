//! Scenario files: parse, check (`build`) and, when valid, a millisecond of simulated time.
//! Every refusal must name what is wrong.

#![no_main]

use ccsim_scenario::{apply_overrides, build, parse, run_built, Override};
use libfuzzer_sys::fuzz_target;

const NAME: &str = "fuzz.toml";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let checked = parse(text, NAME).and_then(|s| build(&s).map_err(|e| e.in_file(NAME)));
    if let Err(e) = checked {
        assert!(!e.msg.is_empty(), "an error without a message");
        return;
    }
    // Valid: shorten the run to a millisecond, as `--set run.duration=1ms` would, and run it.
    let short = [
        Override::parse("run.duration=1ms").expect("a valid override"),
        Override::parse("record.warmup=0s").expect("a valid override"),
    ];
    let built = apply_overrides(text, NAME, &short)
        .and_then(|t| parse(&t, NAME))
        .and_then(|s| build(&s).map_err(|e| e.in_file(NAME)));
    match built {
        Ok(b) => {
            run_built(b, |_, _| {});
        }
        Err(e) => assert!(!e.msg.is_empty(), "an error without a message"),
    }
});
