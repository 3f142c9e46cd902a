//! Refusals a user can act on: where a file stops being UTF-8, a missing [topology] named as
//! such, and a wrong type said in the scenario's words, not serde's.

use ccsim_scenario::{load, parse};

#[test]
fn invalid_utf8_has_a_position() {
    let path = std::env::temp_dir().join(format!("ccsim-utf8-{}.toml", std::process::id()));
    std::fs::write(&path, b"[run]\nduration = \"1s\"\n# \xff\xfe\n").unwrap();
    let e = load(&path).unwrap_err();
    let _ = std::fs::remove_file(&path);
    assert!(e.msg.contains("line 3, column 3") && e.msg.contains("0xff"), "{}", e.msg);
    assert_eq!(e.file, path.display().to_string());
}

#[test]
fn a_missing_topology_is_named_as_such() {
    let e = parse("[run]\nduration = \"1s\"\n[[flows]]\nsrc = \"a\"\ndst = \"b\"\n", "t.toml").unwrap_err();
    assert_eq!(e.field, "topology");
    assert!(e.msg.contains("[topology] table is missing"), "{}", e.msg);
}

#[test]
fn a_wrong_type_says_what_is_expected() {
    let e =
        parse("[run]\nduration = [1]\n[topology]\ntype = \"star\"\nhosts = [\"a\", \"b\"]\n", "t.toml").unwrap_err();
    assert_eq!(e.field, "run.duration");
    assert!(e.msg.contains("a number or a quantity with its unit") && !e.msg.contains("untagged"), "{}", e.msg);
}
