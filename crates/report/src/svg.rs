//! Dependency-free SVG plots (line and step charts).
//!
//! A [`Plot`] renders to a standalone SVG document with a framed plot area,
//! "nice" tick values (1, 2 or 5 × 10^k) with grid lines, tick labels (large
//! values use `k`/`M`/`G`/`T` suffixes), title, axis labels, a legend placed
//! in the emptiest corner (or edge midpoint) of the plot area, dashed horizontal reference lines
//! with labels, and one colour per series from [`PALETTE`] (series beyond the
//! palette reuse its colours with dash patterns).
//!
//! Rendering details:
//! * Non-finite points are skipped and break the line into separate pieces.
//! * With an explicit `x_range`, points outside it are dropped before
//!   downsampling (keeping the segments that cross into the range), so
//!   zooming into a long series keeps full detail; without `y_range`, the y
//!   axis is fitted to the points inside the x range and to the `hlines`.
//! * Series longer than [`MAX_POINTS_PER_SERIES`] are reduced with
//!   [`downsample`] (min/max bucketing), which keeps every bucket's extremes,
//!   so short spikes stay visible.
//! * Coordinates are rounded to 0.01 px and all text is XML-escaped. The
//!   output is a pure function of the input: same plot, same bytes.

use std::fmt::Write as _;

use crate::stats::cdf;

/// Maximum number of points drawn per series; longer series are downsampled.
pub const MAX_POINTS_PER_SERIES: usize = 4000;

/// Series colours, in order (Tableau 10, distinguishable in print and for
/// most colour-vision deficiencies when combined with the dash cycle).
pub const PALETTE: [&str; 10] =
    ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/// Dash patterns, used once the palette wraps around.
const DASHES: [&str; 4] = ["", "6 3", "2 2", "8 3 2 3"];

/// Smallest rendered size; smaller requests are enlarged to this.
const MIN_WIDTH: u32 = 160;
const MIN_HEIGHT: u32 = 120;
/// Approximate advance of one glyph of the 11 px sans-serif font, in px.
const CHAR_W: f64 = 6.2;
/// Pixel coordinates are clamped to ±this to keep numbers printable.
const PIX_LIMIT: f64 = 1e7;

/// One named sequence of `(x, y)` points, drawn in the given order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Legend text; series with an empty label get no legend entry.
    pub label: String,
    /// Data points, normally in ascending x order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// Creates a series.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points }
    }
}

/// How consecutive points are connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlotKind {
    /// Straight segments between points.
    #[default]
    Line,
    /// Post-step: the value holds until the next point's x, then jumps
    /// (right-continuous, as for a CDF or a sampled queue length).
    Step,
}

/// A 2-D plot of one or more series; render it with [`Plot::to_svg`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plot {
    /// Title above the plot area; empty for none (e.g. for paper figures
    /// whose caption carries the title).
    pub title: String,
    /// X axis label; empty for none.
    pub x_label: String,
    /// Y axis label; empty for none.
    pub y_label: String,
    /// Data series, drawn in order (later ones on top).
    pub series: Vec<Series>,
    /// How points are connected, for all series.
    pub kind: PlotKind,
    /// Fixed x axis range; `None` fits the data, extended to tick multiples.
    pub x_range: Option<(f64, f64)>,
    /// Fixed y axis range; `None` fits the data and `hlines`.
    pub y_range: Option<(f64, f64)>,
    /// Horizontal reference lines `(y, label)`, e.g. `(20.0, "K = 20")`.
    pub hlines: Vec<(f64, String)>,
}

impl Plot {
    /// Creates an empty line plot with the given title and axis labels.
    pub fn new(title: impl Into<String>, x_label: impl Into<String>, y_label: impl Into<String>) -> Self {
        Plot { title: title.into(), x_label: x_label.into(), y_label: y_label.into(), ..Plot::default() }
    }

    /// Renders the plot as a standalone SVG document of `width` × `height`
    /// pixels (at least 160 × 120; smaller sizes are enlarged).
    ///
    /// ```
    /// use ccsim_report::{Plot, Series};
    ///
    /// let mut p = Plot::new("Queue", "time (s)", "packets");
    /// p.series.push(Series::new("q0", vec![(0.0, 0.0), (1.0, 25.0), (2.0, 18.0)]));
    /// p.hlines.push((20.0, "K = 20".into()));
    /// let svg = p.to_svg(640, 400);
    /// assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    /// assert!(svg.contains("K = 20"));
    /// ```
    pub fn to_svg(&self, width: u32, height: u32) -> String {
        let w = f64::from(width.max(MIN_WIDTH));
        let h = f64::from(height.max(MIN_HEIGHT));
        let x_win = self.x_range.map(ordered);

        // Finite runs of each series, cropped to the x range.
        let mut runs: Vec<Vec<Vec<(f64, f64)>>> = self.series.iter().map(|s| split_runs(&s.points, x_win)).collect();

        // Data extents.
        let mut xe = Extent::default();
        let mut ye = Extent::default();
        for &(x, y) in runs.iter().flatten().flatten() {
            xe.add(x);
            if x_win.is_none_or(|(lo, hi)| x >= lo && x <= hi) {
                ye.add(y);
            }
        }
        for &(y, _) in &self.hlines {
            ye.add(y);
        }
        let (x_min, x_max) = x_win.unwrap_or_else(|| xe.get());
        let (y_min, y_max) = self.y_range.unwrap_or_else(|| ye.get());

        // Layout: y axis first (its labels set the left margin).
        let top = if self.title.is_empty() { 14.0 } else { 34.0 };
        let bottom = if self.x_label.is_empty() { 30.0 } else { 48.0 };
        let right = 22.0;
        let ph = (h - top - bottom).max(20.0);
        let y_axis = Axis::new(y_min, y_max, self.y_range.is_some(), tick_target(ph, 40.0));
        let y_label_chars = y_axis.labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
        let y_title_w = if self.y_label.is_empty() { 8.0 } else { 26.0 };
        let left = y_title_w + 8.0 + y_label_chars as f64 * CHAR_W;
        let pw = (w - left - right).max(20.0);
        let x_axis = Axis::new(x_min, x_max, self.x_range.is_some(), tick_target(pw, 80.0));
        let area = Rect { x0: left, y0: top, x1: left + pw, y1: top + ph };
        let fx = |x: f64| area.x0 + (x - x_axis.lo) / (x_axis.hi - x_axis.lo) * pw;
        let fy = |y: f64| area.y1 - (y - y_axis.lo) / (y_axis.hi - y_axis.lo) * ph;

        // Downsample, then convert to centi-pixel vertex lists.
        let mut shapes: Vec<Vec<Vec<(i64, i64)>>> = Vec::with_capacity(runs.len());
        for series_runs in &mut runs {
            let total: usize = series_runs.iter().map(Vec::len).sum();
            if total > MAX_POINTS_PER_SERIES {
                for run in series_runs.iter_mut() {
                    let budget = (MAX_POINTS_PER_SERIES * run.len() / total).max(4);
                    if run.len() > budget {
                        *run = downsample(run, budget);
                    }
                }
            }
            let pieces = series_runs
                .iter()
                .map(|run| {
                    let mut v = Vec::with_capacity(run.len() * 2);
                    for (i, &(x, y)) in run.iter().enumerate() {
                        v.push((centi(fx(x)), centi(fy(y))));
                        if self.kind == PlotKind::Step {
                            if let Some(&(nx, _)) = run.get(i + 1) {
                                v.push((centi(fx(nx)), centi(fy(y))));
                            }
                        }
                    }
                    v.dedup();
                    v
                })
                .collect();
            shapes.push(pieces);
        }

        let hlines: Vec<(f64, &str)> = self
            .hlines
            .iter()
            .filter(|(y, _)| y.is_finite() && *y >= y_axis.lo && *y <= y_axis.hi)
            .map(|(y, label)| (fy(*y), label.as_str()))
            .collect();

        let vertices: usize = shapes.iter().flatten().map(Vec::len).sum();
        let mut out = String::with_capacity(4096 + 16 * vertices);
        let clip_id = format!("ccsim-clip-{:08x}", self.fingerprint(width, height));
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="Helvetica, Arial, sans-serif" font-size="11">"#,
            W = c(w),
            H = c(h)
        );
        out.push_str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        let _ = writeln!(
            out,
            r#"<defs><clipPath id="{clip_id}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>"#,
            c(area.x0),
            c(area.y0),
            c(pw),
            c(ph)
        );

        // Grid.
        out.push_str("<g class=\"grid\" stroke=\"#e6e6e6\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n");
        for &t in &x_axis.ticks {
            let px = c(fx(t));
            let _ = writeln!(out, r#"<line x1="{px}" y1="{}" x2="{px}" y2="{}"/>"#, c(area.y0), c(area.y1));
        }
        for &t in &y_axis.ticks {
            let py = c(fy(t));
            let _ = writeln!(out, r#"<line x1="{}" y1="{py}" x2="{}" y2="{py}"/>"#, c(area.x0), c(area.x1));
        }
        out.push_str("</g>\n");

        // Reference lines (under the data; labels come later, on top).
        if !hlines.is_empty() {
            out.push_str("<g class=\"hlines\" stroke=\"#555555\" stroke-width=\"1\" stroke-dasharray=\"5 4\">\n");
            for &(py, _) in &hlines {
                let py = c(py);
                let _ = writeln!(out, r#"<line x1="{}" y1="{py}" x2="{}" y2="{py}"/>"#, c(area.x0), c(area.x1));
            }
            out.push_str("</g>\n");
        }

        // Data.
        let _ = writeln!(
            out,
            r#"<g clip-path="url(#{clip_id})" fill="none" stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round">"#
        );
        for (i, pieces) in shapes.iter().enumerate() {
            let (color, dash) = style(i);
            let dash_attr = if dash.is_empty() { String::new() } else { format!(r#" stroke-dasharray="{dash}""#) };
            for piece in pieces {
                match piece.as_slice() {
                    [] => {}
                    [(x, y)] => {
                        out.push_str("<circle class=\"series-");
                        let _ = write!(out, "{i}\" cx=\"");
                        push_centi(&mut out, *x);
                        out.push_str("\" cy=\"");
                        push_centi(&mut out, *y);
                        let _ = writeln!(out, "\" r=\"2\" fill=\"{color}\" stroke=\"none\"/>");
                    }
                    vertices => {
                        let _ = write!(out, r#"<path class="series-{i}" stroke="{color}"{dash_attr} d=""#);
                        for (k, &(x, y)) in vertices.iter().enumerate() {
                            out.push(if k == 0 { 'M' } else { 'L' });
                            push_centi(&mut out, x);
                            out.push(' ');
                            push_centi(&mut out, y);
                        }
                        out.push_str("\"/>\n");
                    }
                }
            }
        }
        out.push_str("</g>\n");

        // Reference line labels, each drawn twice: a white outline as a halo
        // for legibility, then the text itself (`paint-order` would do this
        // in one element, but not every SVG renderer supports it).
        for &(py, label) in &hlines {
            if !label.is_empty() {
                let (x, y, text) = (c(area.x1 - 4.0), c(py - 4.0), escape(label));
                let _ = writeln!(
                    out,
                    r##"<g class="hline-label" text-anchor="end"><text x="{x}" y="{y}" fill="white" stroke="white" stroke-width="3" stroke-linejoin="round">{text}</text><text x="{x}" y="{y}" fill="#333333">{text}</text></g>"##
                );
            }
        }

        // Frame, ticks and tick labels.
        let _ = writeln!(
            out,
            r#"<rect class="frame" x="{}" y="{}" width="{}" height="{}" fill="none" stroke="black" stroke-width="1" shape-rendering="crispEdges"/>"#,
            c(area.x0),
            c(area.y0),
            c(pw),
            c(ph)
        );
        out.push_str("<g class=\"ticks\" stroke=\"black\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n");
        for &t in &x_axis.ticks {
            let px = c(fx(t));
            let _ = writeln!(out, r#"<line x1="{px}" y1="{}" x2="{px}" y2="{}"/>"#, c(area.y1), c(area.y1 + 4.0));
        }
        for &t in &y_axis.ticks {
            let py = c(fy(t));
            let _ = writeln!(out, r#"<line x1="{}" y1="{py}" x2="{}" y2="{py}"/>"#, c(area.x0 - 4.0), c(area.x0));
        }
        out.push_str("</g>\n<g class=\"tick-labels\" fill=\"#222222\">\n");
        for (&t, label) in x_axis.ticks.iter().zip(&x_axis.labels) {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                c(fx(t)),
                c(area.y1 + 16.0),
                escape(label)
            );
        }
        for (&t, label) in y_axis.ticks.iter().zip(&y_axis.labels) {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                c(area.x0 - 6.0),
                c(fy(t) + 4.0),
                escape(label)
            );
        }
        out.push_str("</g>\n");

        // Axis labels and title.
        if !self.x_label.is_empty() {
            let _ = writeln!(
                out,
                r#"<text class="x-label" x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>"#,
                c(area.x0 + pw / 2.0),
                c(area.y1 + 36.0),
                escape(&self.x_label)
            );
        }
        if !self.y_label.is_empty() {
            let _ = writeln!(
                out,
                r#"<text class="y-label" transform="translate({} {}) rotate(-90)" text-anchor="middle" font-size="12">{}</text>"#,
                c(14.0),
                c(area.y0 + ph / 2.0),
                escape(&self.y_label)
            );
        }
        if !self.title.is_empty() {
            let _ = writeln!(
                out,
                r#"<text class="title" x="{}" y="{}" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"#,
                c(area.x0 + pw / 2.0),
                c(22.0),
                escape(&self.title)
            );
        }

        // Legend, at the spot of the plot area crossed by the least data.
        let entries: Vec<(usize, &str)> = self
            .series
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.label.is_empty())
            .map(|(i, s)| (i, s.label.as_str()))
            .collect();
        if !entries.is_empty() {
            let chars = entries.iter().map(|(_, l)| l.chars().count()).max().unwrap_or(0);
            let bw = 6.0 + 22.0 + 6.0 + chars as f64 * CHAR_W + 6.0;
            let bh = entries.len() as f64 * 16.0 + 9.0;
            let inset = 8.0;
            let (l, r) = (area.x0 + inset, area.x1 - inset - bw);
            let (t, b) = (area.y0 + inset, area.y1 - inset - bh);
            let (cx, cy) = ((area.x0 + area.x1 - bw) / 2.0, (area.y0 + area.y1 - bh) / 2.0);
            // Preference order on ties: the corners (top-right, top-left,
            // bottom-right, bottom-left), then the edge midpoints, then the centre.
            let spots = [(r, t), (l, t), (r, b), (l, b), (cx, t), (cx, b), (r, cy), (l, cy), (cx, cy)];
            let (bx, by) = spots
                .iter()
                .copied()
                .min_by_key(|&(x, y)| {
                    let rect = Rect { x0: x, y0: y, x1: x + bw, y1: y + bh };
                    clutter(&rect, &shapes, &hlines)
                })
                .unwrap_or((r, t));
            let _ = writeln!(
                out,
                r##"<g class="legend"><rect x="{}" y="{}" width="{}" height="{}" fill="white" fill-opacity="0.85" stroke="#999999" stroke-width="0.8"/>"##,
                c(bx),
                c(by),
                c(bw),
                c(bh)
            );
            for (row, &(i, label)) in entries.iter().enumerate() {
                let (color, dash) = style(i);
                let base = by + 6.0 + 11.0 + row as f64 * 16.0;
                let dash_attr = if dash.is_empty() { String::new() } else { format!(r#" stroke-dasharray="{dash}""#) };
                let _ = writeln!(
                    out,
                    r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{color}" stroke-width="2"{dash_attr}/>"#,
                    c(bx + 6.0),
                    c(base - 4.0),
                    c(bx + 28.0),
                    c(base - 4.0)
                );
                let _ = writeln!(out, r#"<text x="{}" y="{}">{}</text>"#, c(bx + 34.0), c(base), escape(label));
            }
            out.push_str("</g>\n");
        }

        out.push_str("</svg>\n");
        out
    }

    /// FNV-1a hash of the plot's text and size, used to give the clip path a
    /// stable id that is unlikely to collide when several plots are inlined
    /// in one HTML page.
    fn fingerprint(&self, width: u32, height: u32) -> u32 {
        let mut h: u32 = 0x811c_9dc5;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes {
                h ^= u32::from(b);
                h = h.wrapping_mul(0x0100_0193);
            }
            h ^= 0xff;
            h = h.wrapping_mul(0x0100_0193);
        };
        eat(self.title.as_bytes());
        eat(self.x_label.as_bytes());
        eat(self.y_label.as_bytes());
        for s in &self.series {
            eat(s.label.as_bytes());
            eat(&(s.points.len() as u64).to_le_bytes());
        }
        eat(&width.to_le_bytes());
        eat(&height.to_le_bytes());
        h
    }
}

/// Builds a [`PlotKind::Step`] plot of the empirical CDFs of raw samples,
/// one series per `(label, values)` pair, with y label "CDF" and y range
/// `[0, 1]`. Each curve starts with a vertical rise from 0 at its smallest
/// value. NaN values are ignored (see [`cdf`]).
///
/// ```
/// let p = ccsim_report::cdf_plot("FCT", "seconds", vec![("reno".into(), vec![0.3, 0.1, 0.2])]);
/// assert_eq!(p.series[0].points, vec![(0.1, 0.0), (0.1, 1.0 / 3.0), (0.2, 2.0 / 3.0), (0.3, 1.0)]);
/// ```
pub fn cdf_plot(title: &str, x_label: &str, series: Vec<(String, Vec<f64>)>) -> Plot {
    cdf_plot_of(title, x_label, series.into_iter().map(|(label, values)| (label, cdf(&values))).collect())
}

/// As [`cdf_plot`], from CDFs already computed (`cdf`, or `IntHistogram::cdf` of samples
/// counted rather than kept).
pub fn cdf_plot_of(title: &str, x_label: &str, series: Vec<(String, Vec<(f64, f64)>)>) -> Plot {
    let series = series
        .into_iter()
        .map(|(label, c)| {
            let mut points = Vec::with_capacity(c.len() + 1);
            if let Some(&(x0, _)) = c.first() {
                points.push((x0, 0.0));
            }
            points.extend(c);
            Series { label, points }
        })
        .collect();
    Plot {
        title: title.to_string(),
        x_label: x_label.to_string(),
        y_label: "CDF".to_string(),
        series,
        kind: PlotKind::Step,
        x_range: None,
        y_range: Some((0.0, 1.0)),
        hlines: Vec::new(),
    }
}

/// Reduces `points` to at most `max_points` (minimum 4) by min/max bucketing.
///
/// The first and last points are always kept. The points in between are
/// split into `(max_points - 2) / 2` consecutive buckets by index, and each
/// bucket contributes its lowest-y and highest-y point in their original
/// order. Hence every local spike or dip survives. Assumes finite
/// coordinates and points ordered along x (as in a time series). Inputs that
/// already fit are returned unchanged.
///
/// ```
/// let mut pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, 0.0)).collect();
/// pts[77_777].1 = 500.0;
/// let small = ccsim_report::svg::downsample(&pts, 1000);
/// assert!(small.len() <= 1000);
/// assert!(small.contains(&(77_777.0, 500.0)));
/// ```
pub fn downsample(points: &[(f64, f64)], max_points: usize) -> Vec<(f64, f64)> {
    let max_points = max_points.max(4);
    let n = points.len();
    if n <= max_points {
        return points.to_vec();
    }
    let interior = &points[1..n - 1];
    let m = interior.len();
    let buckets = (max_points - 2) / 2;
    let mut out = Vec::with_capacity(2 * buckets + 2);
    out.push(points[0]);
    for b in 0..buckets {
        let start = (b as u128 * m as u128 / buckets as u128) as usize;
        let end = ((b as u128 + 1) * m as u128 / buckets as u128) as usize;
        let bucket = &interior[start..end];
        if bucket.is_empty() {
            continue;
        }
        let (mut lo, mut hi) = (0, 0);
        for (k, p) in bucket.iter().enumerate() {
            if p.1 < bucket[lo].1 {
                lo = k;
            }
            if p.1 > bucket[hi].1 {
                hi = k;
            }
        }
        out.push(bucket[lo.min(hi)]);
        if lo != hi {
            out.push(bucket[lo.max(hi)]);
        }
    }
    out.push(points[n - 1]);
    out
}

/// Splits a series into runs of finite points. With an x window, keeps only
/// points inside it or on a segment that touches it; dropped points end a run.
fn split_runs(points: &[(f64, f64)], win: Option<(f64, f64)>) -> Vec<Vec<(f64, f64)>> {
    let finite = |p: (f64, f64)| p.0.is_finite() && p.1.is_finite();
    let touches = |a: (f64, f64), b: (f64, f64), (lo, hi): (f64, f64)| {
        finite(a) && finite(b) && a.0.min(b.0) <= hi && a.0.max(b.0) >= lo
    };
    let keep = |i: usize| -> bool {
        let p = points[i];
        if !finite(p) {
            return false;
        }
        let Some(win) = win else { return true };
        (p.0 >= win.0 && p.0 <= win.1)
            || (i > 0 && touches(points[i - 1], p, win))
            || (i + 1 < points.len() && touches(p, points[i + 1], win))
    };
    let mut runs = Vec::new();
    let mut cur = Vec::new();
    for (i, &p) in points.iter().enumerate() {
        if keep(i) {
            cur.push(p);
        } else if !cur.is_empty() {
            runs.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        runs.push(cur);
    }
    runs
}

/// Running min/max of finite values.
#[derive(Default)]
struct Extent(Option<(f64, f64)>);

impl Extent {
    fn add(&mut self, v: f64) {
        if v.is_finite() {
            self.0 = Some(match self.0 {
                None => (v, v),
                Some((lo, hi)) => (lo.min(v), hi.max(v)),
            });
        }
    }
    /// The extent, or `(0, 1)` if nothing was added.
    fn get(&self) -> (f64, f64) {
        self.0.unwrap_or((0.0, 1.0))
    }
}

#[derive(Clone, Copy)]
struct Rect {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Rect {
    fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.x0 && x <= self.x1 && y >= self.y0 && y <= self.y1
    }

    /// Whether segment a–b intersects the rectangle (Liang–Barsky clipping).
    fn hits_segment(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in [(-dx, a.0 - self.x0), (dx, self.x1 - a.0), (-dy, a.1 - self.y0), (dy, self.y1 - a.1)] {
            if p == 0.0 {
                if q < 0.0 {
                    return false;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    t0 = t0.max(t);
                } else {
                    t1 = t1.min(t);
                }
                if t0 > t1 {
                    return false;
                }
            }
        }
        true
    }
}

/// How much data a legend box at `rect` would hide: the number of drawn
/// segments and isolated points inside it, plus reference lines crossing it.
fn clutter(rect: &Rect, shapes: &[Vec<Vec<(i64, i64)>>], hlines: &[(f64, &str)]) -> usize {
    let px = |(x, y): (i64, i64)| (x as f64 / 100.0, y as f64 / 100.0);
    let mut n = 0;
    for piece in shapes.iter().flatten() {
        if let [p] = piece.as_slice() {
            let (x, y) = px(*p);
            n += usize::from(rect.contains(x, y));
        }
        for seg in piece.windows(2) {
            n += usize::from(rect.hits_segment(px(seg[0]), px(seg[1])));
        }
    }
    n + hlines.iter().filter(|(y, _)| *y >= rect.y0 - 6.0 && *y <= rect.y1 + 6.0).count() * 100
}

/// Colour and dash pattern of series `i`.
fn style(i: usize) -> (&'static str, &'static str) {
    (PALETTE[i % PALETTE.len()], DASHES[(i / PALETTE.len()) % DASHES.len()])
}

/// Roughly one tick per `spacing` pixels, between 2 and 10 ticks.
fn tick_target(pixels: f64, spacing: f64) -> usize {
    ((pixels / spacing).round() as usize).clamp(2, 10)
}

/// One axis: its range, tick positions and tick labels.
#[derive(Debug)]
struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    labels: Vec<String>,
}

impl Axis {
    /// Chooses a nice tick step for about `target` intervals over
    /// `[min, max]`. A non-`fixed` range is widened to multiples of the step.
    /// Degenerate or non-finite ranges are widened to something drawable.
    fn new(min: f64, max: f64, fixed: bool, target: usize) -> Axis {
        let (mut min, mut max) = if min.is_finite() && max.is_finite() {
            ordered((min.clamp(-1e300, 1e300), max.clamp(-1e300, 1e300)))
        } else {
            (0.0, 1.0)
        };
        let magnitude = min.abs().max(max.abs());
        if max - min <= magnitude * 1e-12 {
            let pad = if magnitude == 0.0 { 1.0 } else { magnitude * 0.1 };
            min -= pad;
            max += pad;
        }
        let (step, exp) = nice_step((max - min) / target as f64);
        let (lo, hi) = if fixed { (min, max) } else { ((min / step).floor() * step, (max / step).ceil() * step) };
        let k0 = (lo / step - 1e-9).ceil() as i64;
        let k1 = (hi / step + 1e-9).floor() as i64;
        let ticks: Vec<f64> = (k0..=k1).take(100).map(|k| k as f64 * step).collect();

        // Shared SI suffix and decimals for all labels of the axis.
        let big = lo.abs().max(hi.abs());
        let (scale_exp, suffix) = [(12, "T"), (9, "G"), (6, "M"), (4, "k")]
            .into_iter()
            .find(|&(e, _)| big >= pow10(e))
            .map(|(e, s)| if e == 4 { (3, s) } else { (e, s) })
            .unwrap_or((0, ""));
        let decimals = (scale_exp - exp).clamp(0, 15) as usize;
        let scale = pow10(scale_exp);
        let labels = ticks
            .iter()
            .map(|&t| {
                let mut s = format!("{:.*}", decimals, t / scale);
                if s.starts_with('-') && s[1..].chars().all(|ch| ch == '0' || ch == '.') {
                    s.remove(0);
                }
                if t == 0.0 && !suffix.is_empty() {
                    return "0".to_string();
                }
                s + suffix
            })
            .collect();
        Axis { lo, hi, ticks, labels }
    }
}

/// Smallest step of the form 1, 2 or 5 × 10^k that is >= `raw`; returns the
/// step and k. Uses only exact comparisons against [`pow10`], so the result
/// does not depend on the platform's `log10`.
fn nice_step(raw: f64) -> (f64, i32) {
    if !(raw.is_finite() && raw > 0.0) {
        return (1.0, 0);
    }
    let mut exp = raw.log10().floor().clamp(-300.0, 300.0) as i32;
    while exp > -300 && pow10(exp) > raw {
        exp -= 1;
    }
    while exp < 300 && pow10(exp + 1) <= raw {
        exp += 1;
    }
    let base = pow10(exp);
    for m in [1.0, 2.0, 5.0] {
        if m * base >= raw {
            return (m * base, exp);
        }
    }
    (pow10(exp + 1), exp + 1)
}

/// 10^k computed with basic IEEE operations only (deterministic everywhere).
fn pow10(k: i32) -> f64 {
    let mut p = 1.0;
    for _ in 0..k.unsigned_abs() {
        p *= 10.0;
    }
    if k < 0 {
        1.0 / p
    } else {
        p
    }
}

fn ordered((a, b): (f64, f64)) -> (f64, f64) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// Pixel coordinate in hundredths of a pixel.
fn centi(v: f64) -> i64 {
    (v.clamp(-PIX_LIMIT, PIX_LIMIT) * 100.0).round() as i64
}

/// Writes a centi-pixel value as a compact decimal (`1250` → `12.5`).
fn push_centi(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    let a = v.unsigned_abs();
    let (int, frac) = (a / 100, a % 100);
    let _ = write!(out, "{int}");
    if frac != 0 {
        if frac % 10 == 0 {
            let _ = write!(out, ".{}", frac / 10);
        } else {
            let _ = write!(out, ".{frac:02}");
        }
    }
}

/// A pixel coordinate formatted to 0.01 px.
fn c(v: f64) -> String {
    let mut s = String::new();
    push_centi(&mut s, centi(v));
    s
}

/// Escapes text for XML character data and attribute values.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters other than tab/newline are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_series_plot() -> Plot {
        let mut p = Plot::new("Throughput <per flow> & \"total\"", "time (s)", "rate (Mbps)");
        p.series.push(Series::new("cubic", (0..200).map(|i| (i as f64 * 0.05, 10.0 + (i % 7) as f64)).collect()));
        p.series.push(Series::new("reno <1>", (0..200).map(|i| (i as f64 * 0.05, 5.0 + (i % 3) as f64)).collect()));
        p.hlines.push((12.0, "K = 20".to_string()));
        p
    }

    /// Parses the vertices of every `<path class="series-{i}" …>`.
    fn series_vertices(svg: &str, i: usize) -> Vec<Vec<(f64, f64)>> {
        let tag = format!("<path class=\"series-{i}\"");
        svg.lines()
            .filter(|l| l.starts_with(&tag))
            .map(|l| {
                let d = l.split(" d=\"").nth(1).unwrap().trim_end_matches("\"/>");
                d.split(['M', 'L'])
                    .filter(|s| !s.is_empty())
                    .map(|xy| {
                        let (x, y) = xy.split_once(' ').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    /// Reads a numeric attribute of the first element starting with `prefix`.
    fn attr(svg: &str, prefix: &str, name: &str) -> f64 {
        let line = svg.lines().find(|l| l.starts_with(prefix)).unwrap();
        let key = format!(" {name}=\"");
        let rest = line.split(&key).nth(1).unwrap();
        rest[..rest.find('"').unwrap()].parse().unwrap()
    }

    #[test]
    fn renders_well_formed_two_series_plot() {
        let svg = two_series_plot().to_svg(640, 400);
        assert!(svg.starts_with("<svg "), "{}", &svg[..40]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<svg").count(), 1);
        // Legend labels, escaped.
        assert!(svg.contains(">cubic</text>"));
        assert!(svg.contains(">reno &lt;1&gt;</text>"));
        // Title escaped.
        assert!(svg.contains("Throughput &lt;per flow&gt; &amp; &quot;total&quot;"));
        assert!(!svg.contains("<per flow>"));
        // Reference line label, axis labels, distinct colours.
        assert!(svg.contains(">K = 20</text>"));
        assert!(svg.contains(">time (s)</text>") && svg.contains(">rate (Mbps)</text>"));
        assert!(svg.contains(PALETTE[0]) && svg.contains(PALETTE[1]));
        assert_eq!(series_vertices(&svg, 0).len(), 1);
        assert_eq!(series_vertices(&svg, 1).len(), 1);
        // Every opened element is closed: count '<' of non-closing tags
        // against self-closing ones and closing tags.
        let opens = svg.matches('<').count() - svg.matches("</").count();
        let self_closing = svg.matches("/>").count();
        assert_eq!(opens - self_closing, svg.matches("</").count());
    }

    #[test]
    fn output_is_deterministic() {
        let p = two_series_plot();
        assert_eq!(p.to_svg(640, 400), p.clone().to_svg(640, 400));
        assert_ne!(p.to_svg(640, 400), p.to_svg(641, 400));
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.13), (0.2, -1));
        assert_eq!(nice_step(1.0), (1.0, 0));
        assert_eq!(nice_step(3.0), (5.0, 0));
        assert_eq!(nice_step(7.0), (10.0, 1));
        assert_eq!(nice_step(1000.0), (1000.0, 3));
        assert_eq!(nice_step(0.0), (1.0, 0));
        assert_eq!(nice_step(f64::NAN), (1.0, 0));
    }

    #[test]
    fn axis_ticks_and_labels() {
        let a = Axis::new(3.0, 97.0, false, 5);
        assert_eq!((a.lo, a.hi), (0.0, 100.0));
        assert_eq!(a.labels, ["0", "20", "40", "60", "80", "100"]);

        let a = Axis::new(0.0, 1.0, true, 5);
        assert_eq!(a.labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);

        let a = Axis::new(-0.3, 0.3, false, 6);
        assert!(a.labels.contains(&"0.0".to_string()), "{:?}", a.labels);
        assert!(!a.labels.iter().any(|l| l.starts_with("-0.0") && l.len() == 4));

        let a = Axis::new(0.0, 3.2e6, false, 4);
        assert_eq!(a.labels, ["0", "1M", "2M", "3M", "4M"]);

        let a = Axis::new(0.0, 25_000.0, false, 5);
        assert_eq!(a.labels, ["0", "5k", "10k", "15k", "20k", "25k"]);

        // Degenerate and invalid ranges still produce an axis.
        let a = Axis::new(5.0, 5.0, false, 5);
        assert!(a.lo < 5.0 && a.hi > 5.0 && a.ticks.len() >= 2);
        let a = Axis::new(f64::NAN, 1.0, false, 5);
        assert!(a.lo.is_finite() && a.hi > a.lo);
    }

    #[test]
    fn downsampling_keeps_spikes() {
        let mut pts: Vec<(f64, f64)> = (0..1_000_000).map(|i| (i as f64, (i % 10) as f64)).collect();
        pts[123_457].1 = 1e6;
        pts[876_543].1 = -1e6;
        let d = downsample(&pts, MAX_POINTS_PER_SERIES);
        assert!(d.len() <= MAX_POINTS_PER_SERIES);
        assert!(d.len() > MAX_POINTS_PER_SERIES / 2);
        assert!(d.contains(&(123_457.0, 1e6)));
        assert!(d.contains(&(876_543.0, -1e6)));
        assert_eq!(d.first(), pts.first());
        assert_eq!(d.last(), pts.last());
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0), "order preserved");
        // Short inputs are untouched.
        assert_eq!(downsample(&pts[..10], 100), pts[..10].to_vec());
    }

    #[test]
    fn rendered_long_series_is_downsampled_but_keeps_spike() {
        let mut pts: Vec<(f64, f64)> = (0..200_000).map(|i| (i as f64 * 1e-3, 1.0)).collect();
        pts[150_001].1 = 1000.0;
        let mut p = Plot::new("", "", "");
        p.series.push(Series::new("q", pts));
        p.y_range = Some((0.0, 1000.0));
        let svg = p.to_svg(800, 500);
        let pieces = series_vertices(&svg, 0);
        let n: usize = pieces.iter().map(Vec::len).sum();
        assert!(n <= MAX_POINTS_PER_SERIES, "{n} vertices");
        // The spike reaches the top edge of the plot area.
        let top = attr(&svg, "<rect class=\"frame\"", "y");
        let min_y = pieces.iter().flatten().map(|p| p.1).fold(f64::INFINITY, f64::min);
        assert_eq!(min_y, top);
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
    }

    #[test]
    fn x_range_crops_before_downsampling() {
        let pts: Vec<(f64, f64)> = (0..1_000_000).map(|i| (i as f64, (i % 2) as f64)).collect();
        let mut p = Plot::new("", "", "");
        p.series.push(Series::new("", pts));
        p.x_range = Some((1000.0, 1999.0));
        let svg = p.to_svg(800, 500);
        let pieces = series_vertices(&svg, 0);
        assert_eq!(pieces.len(), 1);
        // All 1000 points inside plus the two neighbours outside, full detail.
        assert_eq!(pieces[0].len(), 1002);
    }

    #[test]
    fn non_finite_points_split_lines() {
        let mut p = Plot::new("gaps", "x", "y");
        p.series.push(Series::new(
            "s",
            vec![(0.0, 1.0), (1.0, 2.0), (2.0, f64::NAN), (3.0, 1.0), (4.0, 3.0), (f64::INFINITY, 0.0), (5.0, 2.0)],
        ));
        let svg = p.to_svg(400, 300);
        assert_eq!(series_vertices(&svg, 0).len(), 2);
        assert_eq!(svg.matches("<circle class=\"series-0\"").count(), 1);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn step_kind_draws_post_steps() {
        let mut p = Plot::new("", "", "");
        p.kind = PlotKind::Step;
        p.series.push(Series::new("s", vec![(0.0, 0.0), (1.0, 1.0), (2.0, 0.5)]));
        let v = &series_vertices(&p.to_svg(400, 300), 0)[0];
        assert_eq!(v.len(), 5);
        assert_eq!(v[0].1, v[1].1, "horizontal first");
        assert_eq!(v[1].0, v[2].0, "then vertical");
        assert_eq!(v[2].1, v[3].1);
        assert_eq!(v[3].0, v[4].0);
    }

    #[test]
    fn empty_and_tiny_plots_render() {
        for p in [Plot::default(), Plot::new("t", "x", "y")] {
            let svg = p.to_svg(0, 0);
            assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
            assert!(svg.contains("width=\"160\""));
        }
        let mut p = Plot::new("one", "", "");
        p.series.push(Series::new("dot", vec![(1.0, 1.0)]));
        p.series.push(Series::new("none", vec![]));
        let svg = p.to_svg(300, 200);
        assert!(svg.contains("<circle class=\"series-0\""));
        assert!(svg.contains(">none</text>"));
    }

    #[test]
    fn legend_avoids_data() {
        // A diagonal from bottom-left to top-right: the top-left corner is
        // the first empty one in preference order.
        let mut p = Plot::new("", "", "");
        p.series.push(Series::new("diag", (0..=100).map(|i| (i as f64, i as f64)).collect()));
        let svg = p.to_svg(600, 400);
        let legend_x = attr(&svg, "<g class=\"legend\">", "x");
        let frame_x = attr(&svg, "<rect class=\"frame\"", "x");
        assert!(legend_x < frame_x + 20.0, "legend at {legend_x}");
        // With the data in the left half only, it goes top-right.
        p.series[0].points = (0..=50).map(|i| (i as f64, i as f64)).collect();
        p.x_range = Some((0.0, 100.0));
        let svg = p.to_svg(600, 400);
        assert!(attr(&svg, "<g class=\"legend\">", "x") > 300.0);
        // Lines along the top and the bottom: the legend goes to the middle
        // of the right edge.
        p.x_range = None;
        p.y_range = Some((0.0, 1.0));
        p.series[0].points = vec![(0.0, 0.97), (1.0, 0.97)];
        p.series.push(Series::new("low", vec![(0.0, 0.03), (1.0, 0.03)]));
        let svg = p.to_svg(600, 400);
        let (lx, ly) = (attr(&svg, "<g class=\"legend\">", "x"), attr(&svg, "<g class=\"legend\">", "y"));
        let frame_y = attr(&svg, "<rect class=\"frame\"", "y");
        let frame_h = attr(&svg, "<rect class=\"frame\"", "height");
        assert!(lx > 300.0 && ly > frame_y + 50.0 && ly < frame_y + frame_h - 80.0, "{lx} {ly}");
    }

    #[test]
    fn many_series_cycle_styles() {
        let mut p = Plot::new("", "", "");
        for i in 0..12 {
            p.series.push(Series::new(format!("s{i}"), vec![(0.0, i as f64), (1.0, i as f64)]));
        }
        let svg = p.to_svg(600, 400);
        for color in PALETTE {
            assert!(svg.contains(color));
        }
        assert!(svg.contains("stroke-dasharray=\"6 3\""));
    }

    #[test]
    fn cdf_plot_builds_step_series() {
        let p = cdf_plot("FCT", "s", vec![("a".into(), vec![2.0, 1.0]), ("b".into(), vec![])]);
        assert_eq!(p.kind, PlotKind::Step);
        assert_eq!(p.y_range, Some((0.0, 1.0)));
        assert_eq!(p.y_label, "CDF");
        assert_eq!(p.series[0].points, vec![(1.0, 0.0), (1.0, 0.5), (2.0, 1.0)]);
        assert!(p.series[1].points.is_empty());
        let svg = p.to_svg(500, 350);
        assert!(svg.contains(">a</text>") && svg.contains(">b</text>"));
    }

    #[test]
    fn escaping() {
        assert_eq!(escape("a<b>&\"'\u{1}"), "a&lt;b&gt;&amp;&quot;&apos; ");
        let mut s = String::new();
        push_centi(&mut s, -1205);
        s.push(' ');
        push_centi(&mut s, 1250);
        s.push(' ');
        push_centi(&mut s, -5);
        assert_eq!(s, "-12.05 12.5 -0.05");
    }
}
