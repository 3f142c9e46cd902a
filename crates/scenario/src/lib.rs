//! ccsim scenario files: the TOML format (`spec`), its validation and resolution into a
//! network (`build`), and running a scenario to a results directory (`results`).
//!
//! Errors name the file, the field and what is allowed; bad input never panics and never
//! leaves a results directory behind.

mod addr;
mod build;
mod error;
mod estimate;
mod fct;
mod overrides;
mod results;
pub mod spec;
mod units;
mod warnings;

pub use addr::{host_addresses, host_ipv4};
pub use build::{
    build, parse_cdf, Built, Captures, Workload, BUFFER_PRESETS, BUILTIN_CDFS, DEFAULT_MAX_PACKETS, DEFAULT_SNAPLEN,
};
pub use error::{Error, Result};
pub use estimate::{
    estimate, human as human_bytes, largest as largest_parts, Estimate, Part, WARN_FILES, WARN_MEMORY_BYTES,
    WARN_OUTPUT_BYTES,
};
pub use fct::{FctCollector, FctFile, FctReport, GroupTimes, SlowdownBin, WorkloadFct, FCT_CSV_HEADER};
/// Read and parse a scenario file (`load`, under a name that says what it loads).
pub use load as load_scenario;
pub use overrides::{apply_overrides, toml_from_json, Override};
pub use results::{
    occupancy_histogram, queue_csv_name, queue_files, run_built, run_built_to, run_to_dir, write_results,
    BufferSummary, CaptureSummary, FlowSummary, Outcome, PingSummary, QueueSummary, RpcSummary, Streams, Summary,
    MAX_PLOT_LINES, MAX_PORT_FILES, QUEUES_CSV,
};
pub use spec::Scenario;
pub use units::{bytes as parse_bytes, duration as parse_duration, rate as parse_rate, DurationRange, Quantity};
pub use warnings::{warnings, Warning, LARGE_SERIES_ROWS};

/// Parse a scenario from TOML text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Scenario> {
    toml::from_str::<Scenario>(text).map_err(|e| {
        let msg = e.message().to_string();
        let (loc, table) = match e.span() {
            Some(s) => {
                let start = s.start.min(text.len());
                let before = &text[..start];
                let line = before.matches('\n').count() + 1;
                // The table the error is in: the nearest `[header]` above it, or on its line (a
                // missing field is reported at the header of its table).
                let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
                let table = text[..line_end]
                    .lines()
                    .rev()
                    .map(str::trim)
                    .find(|l| l.starts_with('['))
                    .map(|h| h.trim_matches(|c| c == '[' || c == ']').to_string());
                (format!("line {line}: "), table)
            }
            None => (String::new(), None),
        };
        // A required top-level table missing is named as such, not blamed on the table the
        // parser happened to be looking at.
        if let Some(name) = msg.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
            let top_level = !text.lines().any(|l| l.trim_start().starts_with(&format!("[{name}")))
                && ["topology", "run"].contains(&name);
            if top_level && !toml_edit::ImDocument::parse(text).is_ok_and(|d| d.contains_key(name)) {
                return Error::new(name, format!("the [{name}] table is missing; every scenario has one"))
                    .in_file(file);
            }
        }
        // A bad value (a word not allowed, a wrong type) is named by its own path; anything else
        // by its table.
        let field = e.span().and_then(|s| value_path(text, s.start)).or(table).unwrap_or_default();
        Error::new(field, format!("{loc}{msg}")).in_file(file)
    })
}

/// The path of the value at byte `at` of `text`, as errors name fields (`tcp.cc`, `flows[1].kind`,
/// `queues.q.classes[0].aqm`); `None` unless a value (not a key or a table header) is there.
fn value_path(text: &str, at: usize) -> Option<String> {
    use toml_edit::{Item, Table, Value};
    fn in_table(t: &Table, at: usize) -> Option<String> {
        t.iter().find_map(|(k, item)| in_item(item, at).map(|rest| format!("{k}{rest}")))
    }
    // The rest of the path below an item or value: "" for the value itself, ".key...", "[i]...".
    fn in_item(item: &Item, at: usize) -> Option<String> {
        match item {
            Item::None => None,
            Item::Value(v) => in_value(v, at),
            Item::Table(t) => in_table(t, at).map(|p| format!(".{p}")),
            Item::ArrayOfTables(a) => {
                a.iter().enumerate().find_map(|(i, t)| in_table(t, at).map(|p| format!("[{i}].{p}")))
            }
        }
    }
    fn in_value(v: &Value, at: usize) -> Option<String> {
        let inner = match v {
            Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| in_value(v, at).map(|p| format!("[{i}]{p}"))),
            Value::InlineTable(t) => t.iter().find_map(|(k, v)| in_value(v, at).map(|p| format!(".{k}{p}"))),
            _ => None,
        };
        // Not inside one of its elements: the value itself (an array where a number belongs).
        inner.or_else(|| v.span().filter(|s| s.contains(&at)).map(|_| String::new()))
    }
    in_table(toml_edit::ImDocument::parse(text).ok()?.as_table(), at)
}

/// Read and parse a scenario file.
pub fn load(path: &std::path::Path) -> Result<Scenario> {
    load_with(path, &[])
}

/// Read a scenario file, apply `--set` overrides to it, and parse it: an overridden value is
/// checked as if the file held it.
pub fn load_with(path: &std::path::Path, sets: &[Override]) -> Result<Scenario> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::new("", format!("cannot read: {e}")).in_file(&file))?;
    let text = utf8(&bytes).map_err(|e| e.in_file(&file))?;
    let dir = path.parent().map(|d| if d.as_os_str().is_empty() { std::path::Path::new(".") } else { d });
    parse_with(text, &file, dir, sets)
}

/// The file's text, or where it stops being UTF-8 (line, column, byte offset).
fn utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        Error::new(
            "",
            format!(
                "not UTF-8 text: invalid byte 0x{:02x} at line {line}, column {col} (byte {}); a scenario is a UTF-8 TOML file",
                bytes[e.valid_up_to()],
                e.valid_up_to()
            ),
        )
    })
}

/// Parse scenario text with overrides; `dir` is where file names in it (a CDF) are relative to.
pub fn parse_with(text: &str, file: &str, dir: Option<&std::path::Path>, sets: &[Override]) -> Result<Scenario> {
    let text = apply_overrides(text, file, sets)?;
    let mut s = parse(&text, file)?;
    s.dir = dir.map(|d| d.to_path_buf());
    Ok(s)
}

/// The resolved configuration: the scenario with every default filled in, as TOML.
pub fn resolved_toml(s: &Scenario) -> String {
    let mut s = s.clone();
    // Rates as ccsim read them, in one spelling ("100MBps" shows as "800Mbps"), so that the
    // interpretation of a unit is visible.
    let normalise = |q: &mut Quantity| {
        if let Ok(bps) = parse_rate(q, "") {
            *q = Quantity::from_rate(bps);
        }
    };
    normalise(&mut s.topology.rate);
    if let Some(q) = s.topology.bottleneck_rate.as_mut() {
        normalise(q);
    }
    for l in &mut s.topology.links {
        normalise(&mut l.rate);
    }
    if !s.record.pcap.is_empty() {
        let r = &mut s.record;
        r.pcap_snaplen.get_or_insert(DEFAULT_SNAPLEN);
        r.pcap_max_packets.get_or_insert(DEFAULT_MAX_PACKETS);
        r.pcap_start.get_or_insert_with(|| "0s".into());
        r.pcap_stop.get_or_insert_with(|| s.run.duration.clone());
    }
    for q in s.queues.values_mut() {
        if q.scheduler == spec::SchedulerKind::Fq && q.fq.is_none() {
            q.fq = Some(spec::FqParams::default());
        }
    }
    // A CDF file is named relative to the scenario; the resolved file, written elsewhere, names
    // it by its full path so that it runs to the same result from anywhere.
    if let Some(dir) = &s.dir {
        for w in &mut s.workloads {
            let builtin = BUILTIN_CDFS.iter().any(|(n, _)| *n == w.sizes);
            if !builtin && !w.sizes.starts_with(|c: char| c.is_ascii_digit()) {
                if let Ok(p) = dir.join(&w.sizes).canonicalize() {
                    w.sizes = p.display().to_string();
                }
            }
        }
    }
    toml::to_string_pretty(&s).unwrap_or_else(|e| format!("# could not serialise: {e}\n"))
}
