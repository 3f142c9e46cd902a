//! Quantities with units in scenario files: durations ("20s", "500ms", "62us", or a number of
//! seconds), rates ("100Mbps", "10Gbps", or bits per second) and sizes ("1MB", "75KB", bytes).

use crate::error::{Error, Result};
use ccsim_engine::SimTime;
use serde::{Deserialize, Serialize};

/// A number or a string with a unit, as written in the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Quantity {
    Int(i64),
    Float(f64),
    Str(String),
}

impl From<&str> for Quantity {
    fn from(s: &str) -> Self {
        Quantity::Str(s.to_string())
    }
}

impl Quantity {
    /// `t` as written in a scenario file: a whole number of the largest unit that divides it
    /// ("40ms", "10us", "10s").
    pub fn from_duration(t: SimTime) -> Self {
        let ns = t.ns();
        let (n, unit) = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")]
            .into_iter()
            .find(|&(per, _)| ns.is_multiple_of(per))
            .map_or((ns, "ns"), |(per, unit)| (ns / per, unit));
        Quantity::Str(format!("{n}{unit}"))
    }

    /// `bps` as written in a scenario file ("550kbps", "10Gbps").
    pub fn from_rate(bps: u64) -> Self {
        let (n, unit) = [(1_000_000_000_000, "Tbps"), (1_000_000_000, "Gbps"), (1_000_000, "Mbps"), (1_000, "kbps")]
            .into_iter()
            .find(|&(per, _)| bps > 0 && bps.is_multiple_of(per))
            .map_or((bps, "bps"), |(per, unit)| (bps / per, unit));
        Quantity::Str(format!("{n}{unit}"))
    }

    /// `b` bytes as written in a scenario file, in binary units when they divide it ("6MiB").
    pub fn from_bytes(b: u64) -> Self {
        let (n, unit) = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
            .into_iter()
            .find(|&(per, _)| b > 0 && b.is_multiple_of(per))
            .map_or((b, "B"), |(per, unit)| (b / per, unit));
        Quantity::Str(format!("{n}{unit}"))
    }
}

fn split(s: &str) -> (f64, String) {
    let s = s.trim();
    let idx = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let num = s[..idx].trim().parse::<f64>().unwrap_or(f64::NAN);
    (num, s[idx..].trim().to_string())
}

fn value(q: &Quantity) -> (f64, String) {
    match q {
        Quantity::Int(i) => (*i as f64, String::new()),
        Quantity::Float(f) => (*f, String::new()),
        Quantity::Str(s) => split(s),
    }
}

fn shown(q: &Quantity) -> String {
    match q {
        Quantity::Int(i) => i.to_string(),
        Quantity::Float(f) => f.to_string(),
        Quantity::Str(s) => format!("\"{s}\""),
    }
}

/// Which durations a field takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurationRange {
    /// ≥ 0.
    NonNegative,
    /// > 0.
    Positive,
}

/// A duration in `range`.
pub fn duration(q: &Quantity, field: &str, range: DurationRange) -> Result<SimTime> {
    let positive = range == DurationRange::Positive;
    let (v, unit) = value(q);
    let mult = match unit.as_str() {
        "" | "s" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        _ => f64::NAN,
    };
    // Checked in the simulator's unit, nanoseconds, after rounding: "0.4ns" is 0 ns and no
    // positive duration.
    let ns = (v * mult).round();
    if !ns.is_finite() || ns < 0.0 || (positive && ns == 0.0) || ns > 1e18 {
        let need = if positive { "a positive duration" } else { "a duration ≥ 0" };
        return Err(Error::new(
            field,
            format!(
                "{} is not {need} in whole nanoseconds (the simulator's unit); write e.g. \"20s\", \"500ms\", \"62us\", \"100ns\" or a number of seconds",
                shown(q)
            ),
        ));
    }
    Ok(SimTime(ns as u64))
}

/// A link rate in bits per second, > 0.
pub fn rate(q: &Quantity, field: &str) -> Result<u64> {
    let (v, unit) = value(q);
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" | "bps" => 1.0,
        "kbps" => 1e3,
        "mbps" => 1e6,
        "gbps" => 1e9,
        "tbps" => 1e12,
        _ => f64::NAN,
    };
    let bps = v * mult;
    if !bps.is_finite() || !(1.0..=1e15).contains(&bps) {
        return Err(Error::new(field, format!("{} is not a rate; expected a positive rate up to 1000Tbps, e.g. \"100Mbps\", \"10Gbps\" or bits per second", shown(q))));
    }
    Ok(bps.round() as u64)
}

/// A size in bytes, ≥ 1.
pub fn bytes(q: &Quantity, field: &str) -> Result<u64> {
    let (v, unit) = value(q);
    let mult = match unit.as_str() {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        "GiB" => 1073741824.0,
        _ => f64::NAN,
    };
    let b = v * mult;
    if !b.is_finite() || !(1.0..=1e15).contains(&b) {
        return Err(Error::new(
            field,
            format!("{} is not a size; expected a positive size, e.g. 1448, \"75KB\", \"1MB\", \"1MiB\"", shown(q)),
        ));
    }
    Ok(b.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn a_duration_that_rounds_to_zero_is_not_positive() {
        for q in ["0.4ns", "0.0000000004s"] {
            let e = duration(&q.into(), "record.interval", DurationRange::Positive).unwrap_err();
            assert!(e.msg.contains("whole nanoseconds"), "{}", e.msg);
        }
        assert_eq!(duration(&"0.4ns".into(), "d", DurationRange::NonNegative).unwrap(), SimTime::ZERO);
        assert_eq!(duration(&"0.6ns".into(), "d", DurationRange::Positive).unwrap(), SimTime::from_ns(1));
    }

    #[test]
    fn parses_units() {
        assert_eq!(duration(&"500ms".into(), "d", DurationRange::Positive).unwrap(), SimTime::from_ms(500));
        assert_eq!(duration(&Quantity::Float(0.2), "d", DurationRange::Positive).unwrap(), SimTime::from_ms(200));
        assert_eq!(rate(&"10Gbps".into(), "r").unwrap(), 10_000_000_000);
        assert_eq!(bytes(&"75KB".into(), "b").unwrap(), 75_000);
        let e = rate(&"-100Mbps".into(), "links[0].rate").unwrap_err();
        assert_eq!(e.field, "links[0].rate");
        assert!(e.msg.contains("not a rate"));
        assert!(duration(&"5 parsecs".into(), "d", DurationRange::NonNegative).is_err());
        assert!(duration(&Quantity::Int(0), "d", DurationRange::Positive).is_err());
    }

    #[test]
    fn writes_quantities_back_in_the_largest_exact_unit() {
        let d = |t: SimTime| Quantity::from_duration(t);
        assert_eq!(d(SimTime::from_ms(40)), "40ms".into());
        assert_eq!(d(SimTime::from_secs(10)), "10s".into());
        assert_eq!(d(SimTime::from_us(10)), "10us".into());
        assert_eq!(d(SimTime(1_500)), "1500ns".into());
        assert_eq!(d(SimTime(0)), "0s".into());
        assert_eq!(Quantity::from_rate(550_000), "550kbps".into());
        assert_eq!(Quantity::from_rate(10_000_000_000), "10Gbps".into());
        assert_eq!(Quantity::from_rate(1_234), "1234bps".into());
        assert_eq!(Quantity::from_bytes(6 << 20), "6MiB".into());
        assert_eq!(Quantity::from_bytes(1500), "1500B".into());
        for q in ["40ms", "10s", "10us", "1500ns"] {
            assert_eq!(d(duration(&q.into(), "d", DurationRange::NonNegative).unwrap()), q.into());
        }
    }
}
