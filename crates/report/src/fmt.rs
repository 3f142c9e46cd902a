//! Deterministic, compact number formatting for JSON and CSV output.

/// Significant digits kept by [`fmt_f64`].
const SIG_DIGITS: usize = 6;

/// Formats `x` compactly and deterministically for JSON/CSV.
///
/// Rules:
/// * Values are rounded to 6 significant digits, but digits of the integer
///   part are never dropped: `1.23456789 → "1.23457"`,
///   `12345678.9 → "12345679"`. The relative rounding error is at most 5·10⁻⁶.
/// * Trailing zeros and a trailing `.` are removed; integers print without
///   `.0` (`1.0 → "1"`). `-0.0` prints as `"0"`.
/// * Magnitudes below 10⁻⁶ or from 10¹⁵ up use exponent notation with the
///   same 6 significant digits: `1.5e-7`, `1e15`, `-2.5e20` (valid JSON
///   numbers; no `+` sign, no exponent padding).
/// * NaN and ±infinity, which JSON cannot represent, print as `"null"`.
///   That is a valid JSON value, and common CSV readers (e.g. pandas) read it
///   as a missing value; [`CsvWriter`](crate::csv::CsvWriter) writes an empty
///   field instead.
///
/// The output depends only on the bits of `x` (Rust's float formatting is
/// exact and platform-independent).
///
/// ```
/// use ccsim_report::fmt_f64;
/// assert_eq!(fmt_f64(1.0), "1");
/// assert_eq!(fmt_f64(0.1 + 0.2), "0.3");
/// assert_eq!(fmt_f64(2.0 / 3.0), "0.666667");
/// assert_eq!(fmt_f64(1.5e-7), "1.5e-7");
/// assert_eq!(fmt_f64(f64::NAN), "null");
/// ```
pub fn fmt_f64(x: f64) -> String {
    if !x.is_finite() {
        return "null".to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    // Scientific formatting performs the 6-significant-digit rounding and
    // tells us the decimal exponent *after* rounding (999999.7 -> 1.00000e6).
    let sci = format!("{:.*e}", SIG_DIGITS - 1, x);
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` output has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    // The notation is chosen on the unrounded magnitude so that every
    // integer below 10^15 prints exactly.
    if !(1e-6..1e15).contains(&x.abs()) {
        return format!("{}e{}", trim_fraction(mantissa), exp);
    }
    let decimals = (SIG_DIGITS as i32 - 1 - exp).max(0) as usize;
    let fixed = format!("{:.*}", decimals, x);
    let s = trim_fraction(&fixed);
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Removes trailing zeros after a decimal point, then a dangling `.`.
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::fmt_f64;

    #[test]
    fn examples() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.0, "-1"),
            (1.5, "1.5"),
            (-2.25, "-2.25"),
            (0.1 + 0.2, "0.3"),
            (1.0 / 3.0, "0.333333"),
            (2.0 / 3.0, "0.666667"),
            (1.23456789, "1.23457"),
            (123456789.0, "123456789"),
            (12345678.9, "12345679"),
            (100.0, "100"),
            (1e14, "100000000000000"),
            (0.000123456789, "0.000123457"),
            (0.000001, "0.000001"),
            (999999.9999999, "1000000"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (-1.23456789e-9, "-1.23457e-9"),
            (1e15, "1e15"),
            (2.5e20, "2.5e20"),
            (f64::MIN_POSITIVE, "2.22507e-308"),
            (f64::MAX, "1.79769e308"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
            (f64::NEG_INFINITY, "null"),
        ];
        for &(x, want) in cases {
            assert_eq!(fmt_f64(x), want, "formatting {x:e}");
        }
    }

    #[test]
    fn round_trips_within_relative_precision() {
        let mut state = 0x2545F4914F6CDD1Du64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state);
            if !x.is_finite() {
                continue;
            }
            let s = fmt_f64(x);
            let y: f64 = s.parse().unwrap_or_else(|_| panic!("unparsable {s:?} for {x:e}"));
            assert!((x - y).abs() <= 5.000001e-6 * x.abs(), "{x:e} -> {s} -> {y:e}");
            // Compact: no trailing zeros after a point, no "+" and no ".e".
            assert!(!s.contains('+') && !s.contains(".e"), "{s}");
            let mantissa = s.split('e').next().unwrap();
            if mantissa.contains('.') {
                assert!(!mantissa.ends_with('0') && !mantissa.ends_with('.'), "{s}");
            }
        }
    }

    #[test]
    fn integers_are_exact() {
        for i in [-999_999_999_999_999i64, -7, 0, 42, 65535, 1 << 40, 999_999_999_999_999] {
            assert_eq!(fmt_f64(i as f64), i.to_string());
        }
    }
}
