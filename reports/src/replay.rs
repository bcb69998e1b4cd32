//! The outputs of `fdlab replay`: the trace (every fault, message delivery or
//! drop, and verdict change of one run, in time order) and its SHA-256
//! digest; and the timeline of one monitored pair, as `timeline.svg` and as
//! a self-contained `timeline.html` page around it.
//!
//! The digest is what a user compares to check that a replay is byte for byte
//! the run they saw: same scenario, seed and fdlab version, same digest, on any
//! machine and with any `--jobs`.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use fdlab_sim::engine::LogRecord;
use fdlab_sim::outcome::RunOutcome;
use sha2::{Digest, Sha256};

use crate::atomic::{write_atomically, write_file};
use crate::charts::timeline::{timeline_svg, Timeline};
use crate::charts::{fmt_seconds, inline_svg, xml_escape, Palette};
use crate::report_dir::{publish, ReportKind};

pub const TRACE_CSV: &str = "trace.csv";
pub const TIMELINE_SVG: &str = "timeline.svg";
pub const TIMELINE_HTML: &str = "timeline.html";

/// Columns of `trace.csv`.
pub const EVENT_LOG_HEADER: [&str; 6] = ["time_ms", "event", "node", "peer", "detector", "detail"];

/// Writes the trace as CSV into `out`.
pub fn write_event_log(
    out: &mut dyn Write,
    outcome: &RunOutcome,
    records: &[LogRecord],
) -> io::Result<()> {
    let mut csv = csv::Writer::from_writer(out);
    csv.write_record(EVENT_LOG_HEADER)?;
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
pub fn event_log_bytes(
    outcome: &RunOutcome,
    records: &[LogRecord],
) -> io::Result<(Vec<u8>, String)> {
    let mut bytes = Vec::new();
    write_event_log(&mut bytes, outcome, records)?;
    let digest = Sha256::digest(&bytes);
    let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok((bytes, hex))
}

/// Writes `trace.csv` into `dir` atomically and returns its digest.
pub fn write_event_log_file(
    dir: &Path,
    outcome: &RunOutcome,
    records: &[LogRecord],
) -> io::Result<String> {
    let (bytes, digest) = event_log_bytes(outcome, records)?;
    std::fs::create_dir_all(dir)?;
    write_atomically(&dir.join(TRACE_CSV), |out| out.write_all(&bytes))?;
    Ok(digest)
}

/// Writes the replay's report to `dir`, whole: `trace.csv` and the
/// timeline, in a directory that is created, or replaces an earlier report
/// of `fdlab replay` ([`crate::report_dir`]). Returns the trace's digest.
pub fn write_replay(
    dir: &Path,
    outcome: &RunOutcome,
    records: &[LogRecord],
    timeline: &Timeline,
) -> io::Result<String> {
    let mut digest = String::new();
    publish(dir, ReportKind::Replay, |d| {
        digest = write_event_log_file(d, outcome, records)?;
        write_timeline(d, timeline)
    })?;
    Ok(digest)
}

/// Writes `timeline.svg` and `timeline.html` of `timeline` into `dir`
/// (created if missing). Detector colours follow the scenario's detector
/// order, as in the report of a run of that scenario alone.
pub fn write_timeline(dir: &Path, timeline: &Timeline) -> io::Result<()> {
    let palette = Palette::new(timeline.detectors.iter().map(|d| d.name.as_str()));
    let svg = timeline_svg(timeline, &palette)?;
    std::fs::create_dir_all(dir)?;
    write_file(&dir.join(TIMELINE_SVG), svg.as_bytes())?;
    write_file(
        &dir.join(TIMELINE_HTML),
        timeline_page(timeline, &svg).as_bytes(),
    )
}

/// A page around the timeline: the chart, then the faults and every verdict
/// change of the pair as text (exact times, for reading next to `trace.csv`).
fn timeline_page(t: &Timeline, svg: &str) -> String {
    let mut out = String::new();
    let title = xml_escape(&t.title());
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<title>{title}</title>\n<style>\n\
body {{ font-family: sans-serif; margin: 24px 32px; color: #222; }}\n\
svg {{ max-width: 100%; height: auto; }}\n\
table {{ border-collapse: collapse; font-size: 13.5px; }}\n\
th, td {{ padding: 3px 10px; border-bottom: 1px solid #e2e2e2; text-align: left; }}\n\
</style>\n</head>\n<body>\n<h1>{title}</h1>\n\
<p>Each panel is one detector's score on this pair over the run: phi, the health score, \
a fixed timeout's silence (the time since the last heartbeat, Failed once above the timeout) \
or an adaptive probe's learned timeout, \
with its Suspect (amber) and Failed (red) periods shaded and its thresholds dashed; \
dashed vertical lines mark the start and end of the faults that hit this pair. \
Where a score changes faster than a pixel can show (the health score dips at every late frame), \
its line follows the level it rests at and a light band shows how far it strayed; \
Suspect and Failed periods too brief to see are drawn 2 px wide. \
The top strip is the ground truth: the faults, and when the monitor must declare the target Failed.</p>\n"
    );
    out.push_str(&inline_svg(svg));
    out.push_str("\n<h2>Faults</h2>\n<table>\n<tr><th>fault</th><th>from</th><th>to</th><th>on this pair</th></tr>\n");
    for f in &t.faults {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            xml_escape(&f.label),
            fmt_seconds(f.window.start.as_secs_f64()),
            fmt_seconds(f.window.end.as_secs_f64()),
            if f.on_pair { "yes" } else { "" }
        );
    }
    out.push_str("</table>\n<h2>Verdict changes</h2>\n<table>\n<tr><th>time (ms)</th><th>detector</th><th>verdict</th></tr>\n");
    let mut changes: Vec<(fdlab_protocol::Nanos, usize, &str)> = t
        .detectors
        .iter()
        .enumerate()
        .flat_map(|(i, d)| d.changes.iter().map(move |&(at, v)| (at, i, v.as_str())))
        .collect();
    changes.sort_by_key(|&(at, i, _)| (at, i));
    for (at, i, verdict) in changes {
        let mut ms = String::new();
        at.fmt_millis(&mut ms);
        let _ = writeln!(
            out,
            "<tr><td>{ms}</td><td>{}</td><td>{verdict}</td></tr>",
            xml_escape(&t.detectors[i].name)
        );
    }
    out.push_str("</table>\n</body>\n</html>\n");
    out
}
