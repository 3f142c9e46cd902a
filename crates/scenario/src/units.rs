//! Quantities with units in scenario files: durations ("20s", "500ms", "62us", or a number of
//! seconds), rates ("100Mbps", "10Gbps", or bits per second) and sizes ("1MB", "75KB", bytes).

use crate::error::{Error, Result};
use ccsim_engine::SimTime;
use serde::{Deserialize, Serialize};

/// A number or a string with a unit, as written in the file.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Quantity {
    Int(i64),
    Float(f64),
    Str(String),
}

/// Read by hand rather than as serde's untagged enum, whose error ("data did not match any
/// variant of untagged enum Quantity") says nothing a user can act on.
impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or a quantity with its unit, e.g. \"10Gbps\", \"20ms\", \"75KB\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Quantity, E> {
                Ok(Quantity::Int(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Quantity, E> {
                i64::try_from(v)
                    .map(Quantity::Int)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<Quantity, E> {
                Ok(Quantity::Float(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Quantity, E> {
                Ok(Quantity::Str(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
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

/// The rate units a scenario takes, case-sensitive: bits (`b`, `bit`) and bytes (`B`, `Byte`)
/// are distinct. Bits per second: `bps`, `b/s`, `bit/s`, `bit` (tc's spelling) after a prefix
/// `k`/`K`, `M`, `G`, `T` (`100Mbps`, `100Mb/s`, `100Mbit/s`, `100Mbit`; tc's lower-case `kbit`,
/// `mbit`, `gbit`, `tbit` too), or the prefix alone (`10G`: 10 Gbit/s, as link speeds are
/// named). Bytes per second: `Bps`, `B/s`, `Byte/s` after a prefix (`100MBps`, `1.25GB/s`).
/// A plain number is bits per second. Refused as ambiguous: `mbps`, `gbps`, `tbps` (tc reads
/// them as bytes per second, most people as bits) and a lower-case `m` prefix elsewhere (milli).
pub const RATE_UNITS: &str = "bits per second as 100Mbps, 100Mb/s, 100Mbit/s, 100Mbit, 10G (prefixes k K M G T), \
bytes per second as 100MBps or 100MB/s, or a plain number of bits per second";

/// The multiplier to bits per second of a rate unit (`RATE_UNITS`), or why it is refused.
fn rate_unit(unit: &str) -> std::result::Result<f64, String> {
    let prefix = |p: &str| match p {
        "" => Some(1.0),
        "k" | "K" => Some(1e3),
        "M" => Some(1e6),
        "G" => Some(1e9),
        "T" => Some(1e12),
        _ => None,
    };
    if let Some(p) = ["mbps", "gbps", "tbps"].iter().find(|u| unit == **u) {
        let up = p[..1].to_uppercase();
        return Err(format!(
            "`{unit}` is ambiguous (tc reads it as bytes per second); write {up}bps or {up}bit/s for bits, {up}Bps for bytes"
        ));
    }
    // tc's spellings, bits explicit.
    if let Some(m) = match unit {
        "kbit" => Some(1e3),
        "mbit" => Some(1e6),
        "gbit" => Some(1e9),
        "tbit" => Some(1e12),
        _ => None,
    } {
        return Ok(m);
    }
    for (suffix, per_bit) in
        [("bps", 1.0), ("b/s", 1.0), ("bit/s", 1.0), ("bit", 1.0), ("Bps", 8.0), ("B/s", 8.0), ("Byte/s", 8.0)]
    {
        if let Some(p) = unit.strip_suffix(suffix) {
            if let Some(m) = prefix(p) {
                return Ok(m * per_bit);
            }
        }
    }
    // A prefix alone: bits per second ("10G"); but not "" (a plain number, handled by the caller).
    if unit != "b" && unit != "B" {
        if let Some(m) = prefix(unit) {
            return Ok(m);
        }
    }
    Err(format!("`{unit}` is not a rate unit"))
}

/// A link rate in bits per second, > 0 (`RATE_UNITS`).
pub fn rate(q: &Quantity, field: &str) -> Result<u64> {
    let (v, unit) = value(q);
    let mult = match unit.as_str() {
        "" => Ok(1.0),
        u => rate_unit(u),
    };
    let bps = match mult {
        Ok(m) => v * m,
        Err(why) => {
            return Err(Error::new(field, format!("{} is not a rate: {why}; allowed: {RATE_UNITS}", shown(q))));
        }
    };
    if !bps.is_finite() || !(1.0..=1e15).contains(&bps) {
        return Err(Error::new(
            field,
            format!("{} is not a positive rate from 1 bit/s up to 1000Tbps; allowed: {RATE_UNITS}", shown(q)),
        ));
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
    fn rate_units_are_case_sensitive_and_bits_are_not_bytes() {
        let r = |s: &str| rate(&s.into(), "r");
        for (text, bps) in [
            ("100Mbps", 100_000_000u64),
            ("100Mb/s", 100_000_000),
            ("100Mbit/s", 100_000_000),
            ("100Mbit", 100_000_000),
            ("100mbit", 100_000_000),
            ("10G", 10_000_000_000),
            ("10Gbps", 10_000_000_000),
            ("550kbps", 550_000),
            ("550Kbps", 550_000),
            ("100MBps", 800_000_000),
            ("1.25GB/s", 10_000_000_000),
            ("1234", 1234),
            ("1234bps", 1234),
        ] {
            assert_eq!(r(text).unwrap(), bps, "{text}");
        }
        for bad in ["100mbps", "10gbps", "100mb/s", "100MBit", "10g", "100 furlongs", "100b", "0Gbps"] {
            let e = r(bad).unwrap_err();
            assert_eq!(e.field, "r");
            assert!(e.msg.contains("allowed"), "{bad}: {}", e.msg);
        }
        assert!(r("100mbps").unwrap_err().msg.contains("ambiguous"));
    }

    #[test]
    fn parses_units() {
        assert_eq!(duration(&"500ms".into(), "d", DurationRange::Positive).unwrap(), SimTime::from_ms(500));
        assert_eq!(duration(&Quantity::Float(0.2), "d", DurationRange::Positive).unwrap(), SimTime::from_ms(200));
        assert_eq!(rate(&"10Gbps".into(), "r").unwrap(), 10_000_000_000);
        assert_eq!(bytes(&"75KB".into(), "b").unwrap(), 75_000);
        let e = rate(&"-100Mbps".into(), "links[0].rate").unwrap_err();
        assert_eq!(e.field, "links[0].rate");
        assert!(e.msg.contains("not a positive rate"), "{}", e.msg);
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
