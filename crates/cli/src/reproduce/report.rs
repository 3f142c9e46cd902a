//! `report.html`: the scorecard as a page — what was run (version, commit, date, command, full
//! or quick), the totals, a table of contents, the table with each note once per experiment
//! (rows refer to it), then each experiment's section with its figures.

use super::{html_escape, Row};
use std::path::{Path, PathBuf};

/// What a reproduction covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// Every experiment, full length: the comparison with the seeds.
    Full,
    /// Shortened runs (`--quick`).
    Quick,
    /// Some experiments only.
    Partial,
}

impl Coverage {
    fn name(self) -> &'static str {
        match self {
            Coverage::Full => "full",
            Coverage::Quick => "quick",
            Coverage::Partial => "partial",
        }
    }
}

/// One experiment's part of the page.
pub struct Section {
    pub name: String,
    pub html: String,
}

/// The note a row shows: a reproduced row's note without its "Where not reproduced" part.
fn shown_note(r: &Row) -> String {
    let note = r.note.trim();
    if r.verdict == "reproduced" {
        if let Some(i) = note.find("Where not reproduced") {
            return note[..i].trim_end_matches([' ', '.', ';', ',']).to_string();
        }
    }
    note.to_string()
}

/// `YYYY-MM-DD HH:MM UTC` of `secs` since the epoch (civil-from-days, proleptic Gregorian).
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02} UTC")
}

/// When the report was made: `SOURCE_DATE_EPOCH` if set (reproducible outputs), else now.
fn made_at() -> String {
    let secs =
        std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|s| s.trim().parse::<u64>().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
        });
    utc(secs)
}

/// The coverage of the report already at `path`, if it is one of ours.
fn coverage_of(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let at = text.find("<meta name=\"ccsim-run\" content=\"")? + "<meta name=\"ccsim-run\" content=\"".len();
    Some(text[at..].split('"').next()?.to_string())
}

/// Write the page; returns where. A quick or partial run never replaces a full report: it goes
/// to `report-quick.html` / `report-partial.html` beside it instead (the caller says so).
pub fn write(
    out: &Path,
    coverage: Coverage,
    command: &str,
    rows: &[Row],
    sections: &[Section],
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|x| format!("{}: {x}", out.display()))?;
    let main = out.join("report.html");
    let path = if coverage != Coverage::Full && coverage_of(&main).as_deref() == Some("full") {
        out.join(format!("report-{}.html", coverage.name()))
    } else {
        main
    };
    let mut h = String::new();
    h.push_str(&format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><meta name=\"ccsim-run\" content=\"{}\">\
         <title>ccsim reproduce</title><style>body{{font-family:sans-serif;max-width:1050px;margin:auto}}\
         table{{border-collapse:collapse;margin:0.5em 0}}td,th{{border:1px solid #ccc;padding:3px 7px;font-size:13px}}\
         tr.not-reproduced td{{background:#fdd}}tr.shape td{{background:#eef}}figure{{margin:1em 0}}\
         .meta{{color:#555;font-size:13px}}ol.notes li{{font-size:13px;margin:0.3em 0}}</style></head><body>\
         <h1>ccsim reproduce: scorecard</h1>\n",
        coverage.name()
    ));
    h.push_str(&format!(
        "<p class=\"meta\">ccsim {} &middot; {} &middot; <code>{}</code> &middot; {} run</p>\n",
        html_escape(crate::args::VERSION),
        made_at(),
        html_escape(command),
        coverage.name()
    ));
    match coverage {
        Coverage::Quick => h.push_str(
            "<p><b>Quick mode:</b> shortened runs (for tests and CI); figures are indicative, verdicts may differ \
             from full runs. The comparison with the seeds is <code>ccsim reproduce</code> without --quick.</p>\n",
        ),
        Coverage::Partial => {
            h.push_str("<p><b>Partial run:</b> only the experiments listed below were run.</p>\n");
        }
        Coverage::Full => {}
    }
    // Totals, then the contents with each experiment's own.
    let count = |rs: &[&Row], v: &str| rs.iter().filter(|r| r.verdict == v).count();
    let all: Vec<&Row> = rows.iter().collect();
    h.push_str(&format!(
        "<p><b>{} metrics:</b> {} reproduced, {} reproduced in shape, {} not reproduced.</p>\n",
        all.len(),
        count(&all, "reproduced"),
        count(&all, "shape"),
        count(&all, "not reproduced")
    ));
    h.push_str("<table><tr><th>experiment</th><th>reproduced</th><th>shape</th><th>not reproduced</th></tr>\n");
    for s in sections {
        let rs: Vec<&Row> = rows.iter().filter(|r| r.experiment == s.name).collect();
        h.push_str(&format!(
            "<tr><td><a href=\"#exp-{n}\">{n}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            count(&rs, "reproduced"),
            count(&rs, "shape"),
            count(&rs, "not reproduced"),
            n = html_escape(&s.name)
        ));
    }
    h.push_str("</table>\n");
    // The scorecard: each distinct note once per experiment, numbered; rows refer to it.
    let mut notes: Vec<(String, String)> = Vec::new();
    let mut table = String::from(
        "<table><tr><th>experiment</th><th>metric</th><th>seed</th><th>ccsim</th><th>verdict</th><th>note</th></tr>\n",
    );
    for r in rows {
        let note = shown_note(r);
        let cell = if note.is_empty() {
            String::new()
        } else {
            let k = match notes.iter().position(|(e, n)| *e == r.experiment && *n == note) {
                Some(k) => k,
                None => {
                    notes.push((r.experiment.clone(), note));
                    notes.len() - 1
                }
            };
            format!("<a href=\"#note-{0}\">[{0}]</a>", k + 1)
        };
        table.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{cell}</td></tr>\n",
            r.verdict.replace(' ', "-"),
            html_escape(&r.experiment),
            html_escape(&r.metric),
            html_escape(&r.seed),
            html_escape(&r.ccsim),
            html_escape(&r.verdict),
        ));
    }
    table.push_str("</table>\n");
    h.push_str(&table);
    h.push_str("<h2>Notes</h2>\n<ol class=\"notes\">\n");
    for (k, (e, n)) in notes.iter().enumerate() {
        h.push_str(&format!("<li id=\"note-{}\"><b>{}</b>: {}</li>\n", k + 1, html_escape(e), html_escape(n)));
    }
    h.push_str("</ol>\n");
    for s in sections {
        h.push_str(&format!("<section id=\"exp-{}\">\n{}</section>\n", html_escape(&s.name), s.html));
    }
    h.push_str("</body></html>\n");
    std::fs::write(&path, h).map_err(|x| format!("{}: {x}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_795_780_800), "2026-11-27 12:00 UTC");
    }

    #[test]
    fn a_quick_run_never_replaces_a_full_report_and_notes_appear_once() {
        let dir = std::env::temp_dir().join(format!("ccsim-report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let note = "a long explanation shared by several rows";
        let rows: Vec<Row> =
            (0..3).map(|i| Row::new("e", &format!("m{i}"), "1", "2", false, "reproduced", note)).collect();
        let sections = [Section { name: "e".into(), html: "<h2>e</h2>".into() }];
        let full = write(&dir, Coverage::Full, "ccsim reproduce", &rows, &sections).unwrap();
        assert_eq!(full, dir.join("report.html"));
        let page = std::fs::read_to_string(&full).unwrap();
        assert_eq!(page.matches(note).count(), 1, "the note once, rows refer to it");
        assert_eq!(page.matches("href=\"#note-1\"").count(), 3);
        assert!(page.contains("3 metrics:</b> 0 reproduced, 0 reproduced in shape, 3 not reproduced"));
        assert!(page.contains("<a href=\"#exp-e\">e</a>") && page.contains("<section id=\"exp-e\">"));
        let quick = write(&dir, Coverage::Quick, "ccsim reproduce --quick", &rows, &sections).unwrap();
        assert_eq!(quick, dir.join("report-quick.html"));
        assert_eq!(std::fs::read_to_string(&full).unwrap(), page, "the full report is kept");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_reproduced_row_does_not_say_where_it_was_not() {
        let r = Row::new("e", "m", "1", "1", true, "reproduced", "tolerance 5 %. Where not reproduced: x");
        assert_eq!(shown_note(&r), "tolerance 5 %");
        let r = Row::new("e", "m", "1", "2", false, "reproduced", "tolerance 5 %. Where not reproduced: x");
        assert!(shown_note(&r).contains("Where not reproduced"));
    }
}
