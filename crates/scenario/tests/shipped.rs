//! Every scenario shipped in `scenarios/` reads and builds (its CDF files found, every value in
//! range), so an example a user copies works.

use ccsim_scenario::{build, load_scenario};

#[test]
fn every_shipped_scenario_builds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let s = load_scenario(&p).unwrap_or_else(|e| panic!("{e}"));
            build(&s).unwrap_or_else(|e| panic!("{}", e.in_file(&p.display().to_string())));
            n += 1;
        }
    }
    assert!(n >= 10, "{n} scenarios in {}", dir.display());
}
