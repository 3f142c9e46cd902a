//! ccsim scenario files: the TOML format (`spec`), its validation and resolution into a
//! network (`build`), and running a scenario to a results directory (`results`).
//!
//! Errors name the file, the field and what is allowed; bad input never panics and never
//! leaves a results directory behind.

mod addr;
mod build;
mod error;
mod results;
pub mod spec;
mod units;

pub use addr::{host_addresses, host_ipv4};
pub use build::{build, Built};
pub use error::{Error, Result};
pub use results::{run_built, write_results, FlowSummary, Outcome, PingSummary, QueueSummary, RpcSummary, Summary};
pub use spec::Scenario;
pub use units::{duration as parse_duration, rate as parse_rate, Quantity};

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
        Error::new(table.unwrap_or_default(), format!("{loc}{msg}")).in_file(file)
    })
}

/// Read and parse a scenario file.
pub fn load(path: &std::path::Path) -> Result<Scenario> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Error::new("", format!("cannot read: {e}")).in_file(&file))?;
    parse(&text, &file)
}

/// The resolved configuration: the scenario with every default filled in, as TOML.
pub fn resolved_toml(s: &Scenario) -> String {
    let mut s = s.clone();
    for q in s.queues.values_mut() {
        if q.scheduler == "fq" && q.fq.is_none() {
            q.fq = Some(spec::FqParams::default());
        }
    }
    toml::to_string_pretty(&s).unwrap_or_else(|e| format!("# could not serialise: {e}\n"))
}
