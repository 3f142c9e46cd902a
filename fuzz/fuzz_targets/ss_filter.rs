//! `ccsim ss` filters: the bytes split into arguments at newlines (each argument is split at
//! blanks again, as ss does) and parsed against a three-host star.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let words: Vec<String> = text.split('\n').map(String::from).collect();
    if let Err(e) = ccsim_cli::fuzz_filter(&words) {
        assert!(!e.trim().is_empty(), "an error without a message");
    }
});
