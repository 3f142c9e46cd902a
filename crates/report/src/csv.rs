//! Minimal CSV writer (RFC 4180 quoting, `\n` line endings).

use std::io::{self, Write};

use crate::fmt::fmt_f64;

/// One CSV field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// A number, written with [`fmt_f64`]; NaN and infinities are written as
    /// an empty field (the usual CSV spelling of a missing value).
    Num(f64),
    /// Text, quoted only if it contains `,`, `"`, `\r` or `\n`.
    Str(&'a str),
    /// A time in whole nanoseconds, written exactly in seconds (`10.000010001`, `0.5`, `3`).
    Nanos(u64),
    /// A time in whole nanoseconds, written exactly in milliseconds (`0.123456`).
    NanosAsMillis(u64),
}

/// `ns` nanoseconds as an exact decimal number of seconds, without trailing zeros.
pub fn secs_exact(ns: u64) -> String {
    decimal_exact(ns, 9)
}

/// `units` / 10^`scale` as an exact decimal, without trailing zeros.
fn decimal_exact(units: u64, scale: u32) -> String {
    let div = 10u64.pow(scale);
    let (whole, frac) = (units / div, units % div);
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:0width$}", width = scale as usize);
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

impl From<f64> for Cell<'_> {
    fn from(x: f64) -> Self {
        Cell::Num(x)
    }
}

impl<'a> From<&'a str> for Cell<'a> {
    fn from(s: &'a str) -> Self {
        Cell::Str(s)
    }
}

impl<'a> From<&'a String> for Cell<'a> {
    fn from(s: &'a String) -> Self {
        Cell::Str(s)
    }
}

/// Writes a header line and then rows with the same number of fields.
///
/// Each row is assembled in memory and written with one `write_all`; wrap
/// files in a [`std::io::BufWriter`] when writing many rows.
///
/// ```
/// use ccsim_report::{Cell, CsvWriter};
///
/// let mut w = CsvWriter::new(Vec::new(), &["time_s", "flow", "cwnd"]).unwrap();
/// w.write_row(&[Cell::Num(0.5), Cell::Str("a,b"), Cell::Num(10.0)]).unwrap();
/// w.write_nums(&[1.0, 2.0, 1.0 / 3.0]).unwrap();
/// let text = String::from_utf8(w.into_inner()).unwrap();
/// assert_eq!(text, "time_s,flow,cwnd\n0.5,\"a,b\",10\n1,2,0.333333\n");
/// ```
#[derive(Debug)]
pub struct CsvWriter<W: Write> {
    inner: W,
    columns: usize,
    rows: u64,
    line: String,
}

impl<W: Write> CsvWriter<W> {
    /// Creates a writer and immediately writes the `header` line.
    /// The header fixes the number of columns of every following row.
    pub fn new(inner: W, header: &[&str]) -> io::Result<Self> {
        let mut w = CsvWriter { inner, columns: header.len(), rows: 0, line: String::new() };
        w.line.clear();
        for (i, name) in header.iter().enumerate() {
            if i > 0 {
                w.line.push(',');
            }
            push_str_field(&mut w.line, name);
        }
        w.line.push('\n');
        w.inner.write_all(w.line.as_bytes())?;
        Ok(w)
    }

    /// Writes one row of mixed numeric and text fields.
    ///
    /// Returns an [`io::ErrorKind::InvalidInput`] error, writing nothing, if
    /// the row length differs from the header length.
    pub fn write_row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        self.check_len(cells.len())?;
        self.line.clear();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            match *cell {
                Cell::Num(x) => push_num_field(&mut self.line, x),
                Cell::Str(s) => push_str_field(&mut self.line, s),
                Cell::Nanos(ns) => self.line.push_str(&secs_exact(ns)),
                Cell::NanosAsMillis(ns) => self.line.push_str(&decimal_exact(ns, 6)),
            }
        }
        self.finish_line()
    }

    /// Writes one row of numbers (see [`Cell::Num`]).
    ///
    /// Same length check as [`write_row`](CsvWriter::write_row).
    pub fn write_nums(&mut self, values: &[f64]) -> io::Result<()> {
        self.check_len(values.len())?;
        self.line.clear();
        for (i, &x) in values.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            push_num_field(&mut self.line, x);
        }
        self.finish_line()
    }

    /// Number of data rows written so far (the header is not counted).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    /// Returns the underlying writer (not flushed).
    pub fn into_inner(self) -> W {
        self.inner
    }

    fn check_len(&self, len: usize) -> io::Result<()> {
        if len == self.columns {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CSV row has {len} fields, header has {}", self.columns),
            ))
        }
    }

    fn finish_line(&mut self) -> io::Result<()> {
        self.line.push('\n');
        self.inner.write_all(self.line.as_bytes())?;
        self.rows += 1;
        Ok(())
    }
}

fn push_num_field(out: &mut String, x: f64) {
    if x.is_finite() {
        out.push_str(&fmt_f64(x));
    }
}

fn push_str_field(out: &mut String, s: &str) {
    if s.contains([',', '"', '\r', '\n']) {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(s);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn nanoseconds_are_exact_seconds() {
        assert_eq!(super::secs_exact(0), "0");
        assert_eq!(super::secs_exact(3_000_000_000), "3");
        assert_eq!(super::secs_exact(500_000_000), "0.5");
        assert_eq!(super::secs_exact(10_000_010_001), "10.000010001");
        assert_eq!(super::secs_exact(70_891), "0.000070891");
        assert_eq!(super::decimal_exact(123_456_789, 6), "123.456789");
        let mut w = super::CsvWriter::new(Vec::new(), &["t_s"]).unwrap();
        w.write_row(&[super::Cell::Nanos(10_000_010_000)]).unwrap();
        assert_eq!(String::from_utf8(w.into_inner()).unwrap(), "t_s\n10.00001\n");
    }

    use super::*;

    fn text(w: CsvWriter<Vec<u8>>) -> String {
        String::from_utf8(w.into_inner()).unwrap()
    }

    #[test]
    fn header_and_rows() {
        let mut w = CsvWriter::new(Vec::new(), &["t", "name", "v"]).unwrap();
        w.write_row(&[0.25.into(), "plain".into(), Cell::Num(1e-9)]).unwrap();
        let owned = String::from("x");
        w.write_row(&[Cell::Num(2.0), (&owned).into(), Cell::Num(-3.5)]).unwrap();
        w.write_nums(&[1.0, f64::NAN, f64::INFINITY]).unwrap();
        assert_eq!(w.rows(), 3);
        assert_eq!(text(w), "t,name,v\n0.25,plain,1e-9\n2,x,-3.5\n1,,\n");
    }

    #[test]
    fn quoting() {
        let mut w = CsvWriter::new(Vec::new(), &["a,b", "c"]).unwrap();
        w.write_row(&[Cell::Str("say \"hi\""), Cell::Str("two\nlines")]).unwrap();
        assert_eq!(text(w), "\"a,b\",c\n\"say \"\"hi\"\"\",\"two\nlines\"\n");
    }

    #[test]
    fn wrong_length_is_rejected_without_output() {
        let mut w = CsvWriter::new(Vec::new(), &["a", "b"]).unwrap();
        let err = w.write_nums(&[1.0]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(w.write_row(&[Cell::Num(1.0); 3]).is_err());
        assert_eq!(w.rows(), 0);
        assert_eq!(text(w), "a,b\n");
    }
}
