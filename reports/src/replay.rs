//! The trace of `fdlab replay`: every fault, message delivery or drop, and
//! verdict change of one run, in time order, and its SHA-256 digest.
//!
//! The digest is what a user compares to check that a replay is byte for byte
//! the run they saw: same scenario, seed and fdlab version, same digest, on any
//! machine and with any `--jobs`.

use std::io::{self, Write};
use std::path::Path;

use fdlab_sim::engine::TraceRecord;
use fdlab_sim::outcome::RunOutcome;
use sha2::{Digest, Sha256};

use crate::atomic::write_atomically;

/// Columns of `trace.csv`.
pub const TRACE_HEADER: [&str; 6] = ["time_ms", "event", "node", "peer", "detector", "detail"];

/// Writes the trace as CSV into `out`.
pub fn write_trace(
    out: &mut dyn Write,
    outcome: &RunOutcome,
    records: &[TraceRecord],
) -> io::Result<()> {
    let mut csv = csv::Writer::from_writer(out);
    csv.write_record(TRACE_HEADER)?;
    let mut time = String::new();
    for r in records {
        time.clear();
        r.time.fmt_millis(&mut time);
        let node = |i: u32| outcome.nodes.get(i as usize).map_or("", String::as_str);
        let detector = r
            .detector
            .and_then(|d| outcome.detectors.get(d as usize))
            .map_or("", String::as_str);
        csv.write_record([
            time.as_str(),
            r.event,
            r.node.map_or("", node),
            r.peer.map_or("", node),
            detector,
            r.detail.as_str(),
        ])?;
    }
    csv.flush()?;
    Ok(())
}

/// The trace as CSV bytes and their SHA-256 (hex).
pub fn trace_bytes(outcome: &RunOutcome, records: &[TraceRecord]) -> io::Result<(Vec<u8>, String)> {
    let mut bytes = Vec::new();
    write_trace(&mut bytes, outcome, records)?;
    let digest = Sha256::digest(&bytes);
    let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok((bytes, hex))
}

/// Writes `trace.csv` into `dir` atomically and returns its digest.
pub fn write_trace_file(
    dir: &Path,
    outcome: &RunOutcome,
    records: &[TraceRecord],
) -> io::Result<String> {
    let (bytes, digest) = trace_bytes(outcome, records)?;
    std::fs::create_dir_all(dir)?;
    write_atomically(&dir.join("trace.csv"), |out| out.write_all(&bytes))?;
    Ok(digest)
}
