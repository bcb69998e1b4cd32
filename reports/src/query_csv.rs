//! The output of `fdlab trace`: one row per `query` event,
//! `time_ms,value,verdict`.

use std::io::{self, Write};

use fdlab_sim::event_replay::QueryRow;

/// Column names, in order.
pub const HEADER: [&str; 3] = ["time_ms", "value", "verdict"];

/// Decimal places of `value` (phi, health score, timeout in ms): enough to tell
/// apart any two thresholds a user would set, and stable across platforms
/// (Rust formats floats exactly, with no locale).
pub const VALUE_DECIMALS: usize = 6;

/// Streams query rows as CSV.
pub struct QueryCsvWriter<W: Write> {
    out: csv::Writer<W>,
    time: String,
    value: String,
}

impl<W: Write> QueryCsvWriter<W> {
    /// Starts the file with its header.
    pub fn new(out: W) -> io::Result<QueryCsvWriter<W>> {
        let mut out = csv::Writer::from_writer(out);
        out.write_record(HEADER)?;
        Ok(QueryCsvWriter {
            out,
            time: String::new(),
            value: String::new(),
        })
    }

    pub fn write(&mut self, row: &QueryRow) -> io::Result<()> {
        use std::fmt::Write as _;
        self.time.clear();
        row.time.fmt_millis(&mut self.time);
        self.value.clear();
        // `+ 0.0` turns -0.0 (phi of a fresh heartbeat) into 0.0.
        let _ = write!(self.value, "{:.*}", VALUE_DECIMALS, row.value + 0.0);
        self.out.write_record([
            self.time.as_str(),
            self.value.as_str(),
            row.verdict.as_str(),
        ])?;
        Ok(())
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::{Nanos, Verdict};

    #[test]
    fn writes_header_and_rows() {
        let mut w = QueryCsvWriter::new(Vec::new()).unwrap();
        w.write(&QueryRow {
            time: Nanos(1_500_000),
            value: 4.73669,
            verdict: Verdict::Suspect,
        })
        .unwrap();
        w.write(&QueryRow {
            time: Nanos::from_millis(2),
            value: f64::INFINITY,
            verdict: Verdict::Failed,
        })
        .unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            "time_ms,value,verdict\n1.5,4.736690,suspect\n2,inf,failed\n"
        );
    }
}
