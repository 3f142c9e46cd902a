//! # ccsim-report
//!
//! Dependency-free post-processing for ccsim results:
//!
//! * [`stats`] — descriptive statistics ([`Summary`], [`summarize`]), Jain's
//!   fairness index, empirical CDFs and a streaming [`IntHistogram`] for
//!   integer samples such as queue occupancy in packets.
//! * [`fmt`] — [`fmt_f64`], a deterministic, compact number formatter for
//!   JSON and CSV output.
//! * [`csv`] — a minimal [`CsvWriter`] over any [`std::io::Write`].
//! * [`svg`] — line/step plots rendered to standalone SVG ([`Plot`]), good
//!   enough for a paper figure, plus the [`cdf_plot`] convenience.
//!
//! Every output of this crate is deterministic: the same input produces the
//! same bytes, so reports can be diffed and checked into version control.
//!
//! ```
//! use ccsim_report::{cdf_plot, summarize};
//!
//! let fct = vec![1.2, 0.8, 3.5, 0.9, 1.1];
//! let s = summarize(&fct);
//! assert_eq!(s.samples, 5);
//! assert_eq!(s.p50, 1.1);
//!
//! let svg = cdf_plot("Flow completion time", "FCT (s)", vec![("cubic".into(), fct)])
//!     .to_svg(640, 400);
//! assert!(svg.starts_with("<svg"));
//! ```
#![warn(missing_docs)]

pub mod csv;
pub mod fmt;
pub mod stats;
pub mod svg;

pub use crate::csv::{secs_exact, Cell, CsvWriter};
pub use crate::fmt::fmt_f64;
pub use crate::stats::{cdf, jain_fairness, summarize, IntHistogram, Summary};
pub use crate::svg::{cdf_plot, cdf_plot_of, Plot, PlotKind, Series};
