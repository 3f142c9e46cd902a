//! packetdrill scripts: parse and, when the script parses, run it with the default options (script
//! time is limited to an hour, so no script runs without end).

#![no_main]

use ccsim_pdrill::{parse, run_script, RunOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse(text) {
        Ok(script) => {
            let (failure, _, _) = run_script(&script, &std::env::temp_dir(), &RunOptions::default());
            if let Some(f) = failure {
                assert!(!f.msg.is_empty(), "a failure without a message");
            }
        }
        Err(e) => assert!(!e.msg.is_empty() && e.line >= 1, "a parse error without a place or message"),
    }
});
