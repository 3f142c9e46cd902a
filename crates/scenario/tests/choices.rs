//! Fields that take one word of a fixed list are checked when the file is read: an unknown word
//! is named by its field path, its line and the words allowed.

use ccsim_scenario::parse;

const GOOD: &str = r#"
[topology]
type = "star"
hosts = ["a", "b"]

[[flows]]
src = "a"
dst = "b"

[[flows]]
src = "b"
dst = "a"
"#;

fn error(text: &str) -> String {
    match parse(text, "t.toml") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("should be refused:\n{text}"),
    }
}

#[test]
fn unknown_words_name_field_line_and_allowed_words() {
    for (text, want) in [
        (
            format!("[tcp]\ncc = \"vegas\"\n{GOOD}"),
            "t.toml: field `tcp.cc`: line 2: unknown congestion control \"vegas\"; expected one of \"reno\", \
             \"cubic\", \"dctcp\", \"freebsd-dctcp\", \"nv\", \"bbr\"",
        ),
        (
            format!("{GOOD}server_ecn = \"maybe\"\n"),
            "t.toml: field `flows[1].server_ecn`: line 13: \"maybe\" is not allowed; expected one of \"off\", \"on\", \
             \"passive\"",
        ),
        (
            format!(
                "[queues.q]\nclasses = [\n  {{ name = \"x\" }},\n  {{ name = \"y\", aqm = \"codel\" }},\n]\n{GOOD}"
            ),
            "t.toml: field `queues.q.classes[1].aqm`: line 4: \"codel\" is not allowed; expected one of \"droptail\", \
             \"step\", \"red\"",
        ),
        (
            GOOD.replace("\"star\"", "\"ring\""),
            "t.toml: field `topology.type`: line 3: \"ring\" is not allowed; expected one of \"star\", \"dumbbell\", \
             \"fattree\", \"custom\"",
        ),
        (
            format!("tcp.dctcp.ce_ack = \"later\"\n{GOOD}"),
            "t.toml: field `tcp.dctcp.ce_ack`: line 1: \"later\" is not allowed; expected one of \"now\", \"delayed\"",
        ),
        (
            format!("[tcp]\necn = 1\n{GOOD}"),
            "t.toml: field `tcp.ecn`: line 2: invalid type: integer `1`, expected a string",
        ),
    ] {
        assert_eq!(error(&text), want);
    }
}

#[test]
fn every_word_reads_and_writes_back_unchanged() {
    let text = format!(
        "[tcp]\ncc = \"freebsd-dctcp\"\necn = \"on\"\ncwr_ack = \"delayed\"\ndctcp = {{ ce_ack = \"delayed\" }}\n\
         [queues.q]\nscheduler = \"rr\"\nclasses = [{{ name = \"x\", unit = \"bytes\", aqm = \"step\", k = 3000, \
         mark_at = \"dequeue\", non_ect = \"queue\" }}]\n{GOOD}kind = \"rpc\"\nsize = \"1KB\"\ncc = \"nv\"\n\
         ecn = \"off\"\nserver_cc = \"bbr\"\nserver_ecn = \"passive\"\n\n[[pings]]\nsrc = \"a\"\ndst = \"b\"\n\
         ecn = \"ect1\"\n\n[traffic]\npattern = \"permutation\"\ncc = \"reno\"\n\n[[base_rtt]]\n\
         base_rtt = \"80us\"\ncc = \"dctcp\"\n"
    );
    let s = parse(&text, "t.toml").unwrap();
    let out = ccsim_scenario::resolved_toml(&s);
    for line in [
        "cc = \"freebsd-dctcp\"",
        "ecn = \"on\"",
        "cwr_ack = \"delayed\"",
        "ce_ack = \"delayed\"",
        "scheduler = \"rr\"",
        "unit = \"bytes\"",
        "aqm = \"step\"",
        "mark_at = \"dequeue\"",
        "non_ect = \"queue\"",
        "type = \"star\"",
        "kind = \"rpc\"",
        "cc = \"nv\"",
        "server_cc = \"bbr\"",
        "server_ecn = \"passive\"",
        "ecn = \"ect1\"",
        "pattern = \"permutation\"",
        "cc = \"reno\"",
        "cc = \"dctcp\"",
    ] {
        assert!(out.contains(line), "{line} missing from\n{out}");
    }
    assert_eq!(parse(&out, "resolved").unwrap(), s);
}
