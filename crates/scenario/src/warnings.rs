//! Probable mistakes in a valid scenario, said before it runs (`ccsim check`, `ccsim run`):
//! nothing that sends, a flow that starts after the end, a marking threshold the queue cannot
//! reach, series files that will be very large.

use crate::build::Built;
use crate::spec::{AqmKind, Scenario};
use crate::units::{duration, DurationRange};

/// One warning: the field it is about and what looks wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    pub field: String,
    pub msg: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.msg)
    }
}

/// Rows of queue and flow series above which a run's CSV output is called large (about 20 bytes
/// a row: 10^7 rows are some 200 MB).
pub const LARGE_SERIES_ROWS: u64 = 10_000_000;

/// The warnings for a scenario that `build` accepted.
pub fn warnings(s: &Scenario, b: &Built) -> Vec<Warning> {
    let mut w = Vec::new();
    let end = b.cfg.duration;
    if b.flows.is_empty() && b.workloads.is_empty() && b.pings.is_empty() {
        w.push(Warning {
            field: "flows".into(),
            msg: "nothing sends: the scenario has no flows, workloads or pings".into(),
        });
    }
    for (i, f) in s.flows.iter().enumerate() {
        if let Ok(start) = duration(&f.start, "", DurationRange::NonNegative) {
            if start >= end {
                w.push(Warning {
                    field: format!("flows[{i}].start"),
                    msg: format!(
                        "{} s is at or after the end of the run (run.duration = {} s): the flow never sends",
                        start.secs_f64(),
                        end.secs_f64()
                    ),
                });
            }
        }
    }
    let mut names: Vec<&String> = s.queues.keys().collect();
    names.sort();
    for name in names {
        for (j, c) in s.queues[name].classes.iter().enumerate() {
            if let (AqmKind::Step, Some(k)) = (c.aqm, c.k) {
                if k >= c.limit {
                    w.push(Warning {
                        field: format!("queues.{name}.classes[{j}].k"),
                        msg: format!(
                            "K = {k} is at or above the class's limit of {}: the queue drops before it marks",
                            c.limit
                        ),
                    });
                }
            }
        }
    }
    if let Some(iv) = b.cfg.sample_interval {
        let samples = end.ns() / iv.ns().max(1);
        let series = if b.cfg.series { b.cfg.monitor.len() as u64 + b.flows.len() as u64 } else { 0 };
        let rows = samples.saturating_mul(series);
        if rows > LARGE_SERIES_ROWS {
            w.push(Warning {
                field: "record.interval".into(),
                msg: format!(
                    "about {rows} rows of queue and flow series (some {} MB of CSV); a longer interval or \
                     record.series = false writes less",
                    rows * 20 / 1_000_000
                ),
            });
        }
    }
    w
}
