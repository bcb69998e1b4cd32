//! The replay of one cluster run (one judge, one seed): `trace.csv`, one
//! row per record of the run's log, and its timeline as `timeline.svg` and
//! a self-contained `timeline.html` around it (the same file names as the
//! replay of a detector run, [`crate::replay`]). The trace's SHA-256
//! digest says that a replay is byte for byte the run seen before.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use fdlab_protocol::membership::Vote;
use fdlab_protocol::Nanos;
use fdlab_sim::membership::outcome::{ClusterLogRecord, ClusterOutcome};
use sha2::{Digest, Sha256};

use super::lanes::ClusterTimeline;
use super::timeline::cluster_timeline_svg;
use crate::atomic::{write_atomically, write_file};
use crate::charts::{fmt_seconds, inline_svg, xml_escape};
use crate::replay::{TIMELINE_HTML, TIMELINE_SVG, TRACE_CSV};
use crate::report_dir::{publish, ReportKind};

/// Columns of a cluster run's `trace.csv`. `record` is `row` (a table
/// write that changed a row's status or votes: the row after it, `by` the
/// writer, `version` the table's), `view` (a silo's view moved to
/// `version`, seeing `active` silos Active and `dead` Dead), `node` (a
/// silo process `change`d: started, joined, crashed, terminated, gave-up,
/// paused, resumed), `suspicion-start` / `suspicion-end` (`silo` the
/// monitor, `peer` the target) or `withheld` (a vote of `silo` against
/// `peer` withheld by the connection-liveness check). `votes` lists
/// `voter@time_ms`, `;`-separated, the times by each voter's clock. Times
/// in milliseconds, exact (no trailing zeros).
pub const CLUSTER_TRACE_HEADER: [&str; 11] = [
    "time_ms", "record", "silo", "peer", "by", "version", "status", "votes", "change", "active",
    "dead",
];

fn millis(t: Nanos) -> String {
    let mut s = String::new();
    t.fmt_millis(&mut s);
    s
}

fn votes_field(votes: &[Vote]) -> String {
    let list: Vec<String> = votes
        .iter()
        .map(|v| format!("{}@{}", v.voter, millis(v.time)))
        .collect();
    list.join(";")
}

/// Writes the trace as CSV into `out`.
pub fn write_cluster_trace(out: &mut dyn Write, log: &[ClusterLogRecord]) -> io::Result<()> {
    let mut csv = csv::Writer::from_writer(out);
    csv.write_record(CLUSTER_TRACE_HEADER)?;
    for r in log {
        let mut row: [String; 11] = Default::default();
        row[0] = millis(r.at());
        match r {
            ClusterLogRecord::Row {
                version,
                silo,
                status,
                votes,
                by,
                ..
            } => {
                row[1] = "row".into();
                row[2] = silo.to_string();
                row[4] = by.to_string();
                row[5] = version.to_string();
                row[6] = status.name().into();
                row[7] = votes_field(votes);
            }
            ClusterLogRecord::View {
                silo,
                version,
                active,
                dead,
                ..
            } => {
                row[1] = "view".into();
                row[2] = silo.to_string();
                row[5] = version.to_string();
                row[9] = active.to_string();
                row[10] = dead.to_string();
            }
            ClusterLogRecord::Node { silo, change, .. } => {
                row[1] = "node".into();
                row[2] = silo.to_string();
                row[8] = change.name().into();
            }
            ClusterLogRecord::Suspicion {
                monitor,
                target,
                started,
                ..
            } => {
                row[1] = if *started {
                    "suspicion-start"
                } else {
                    "suspicion-end"
                }
                .into();
                row[2] = monitor.to_string();
                row[3] = target.to_string();
            }
            ClusterLogRecord::Withheld {
                monitor, target, ..
            } => {
                row[1] = "withheld".into();
                row[2] = monitor.to_string();
                row[3] = target.to_string();
            }
        }
        csv.write_record(&row)?;
    }
    csv.flush()
}

/// The trace as CSV bytes and their SHA-256 (hex).
pub fn cluster_trace_bytes(log: &[ClusterLogRecord]) -> io::Result<(Vec<u8>, String)> {
    let mut bytes = Vec::new();
    write_cluster_trace(&mut bytes, log)?;
    let digest = Sha256::digest(&bytes);
    let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok((bytes, hex))
}

/// Writes the replay of one cluster run to `dir`, whole: `trace.csv`,
/// `timeline.svg` and `timeline.html`, in a directory that is created, or
/// replaces an earlier report of `fdlab replay` ([`crate::report_dir`]).
/// `log` is the run's log in time order. Returns the trace's digest.
pub fn write_cluster_replay(
    dir: &Path,
    outcome: &ClusterOutcome,
    log: &[ClusterLogRecord],
) -> io::Result<String> {
    let (bytes, digest) = cluster_trace_bytes(log)?;
    let timeline = ClusterTimeline::of(outcome, log);
    let svg = cluster_timeline_svg(&timeline)?;
    let page = timeline_page(outcome, &timeline, &svg);
    publish(dir, ReportKind::Replay, |d| {
        write_atomically(&d.join(TRACE_CSV), |out| out.write_all(&bytes))?;
        write_file(&d.join(TIMELINE_SVG), svg.as_bytes())?;
        write_file(&d.join(TIMELINE_HTML), page.as_bytes())
    })?;
    Ok(digest)
}

fn at(t: Option<Nanos>) -> String {
    t.map_or_else(|| "never".into(), |t| fmt_seconds(t.as_secs_f64()))
}

/// The page: the chart, what it shows, then the crashes, declarations and
/// faults as text (exact times, for reading next to `trace.csv`).
fn timeline_page(o: &ClusterOutcome, t: &ClusterTimeline, svg: &str) -> String {
    let mut out = String::new();
    let title = xml_escape(&t.title());
    let c = &o.counts;
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<title>{title}</title>\n<style>\n\
body {{ font-family: sans-serif; margin: 24px 32px; color: #222; }}\n\
svg {{ max-width: 100%; height: auto; }}\n\
table {{ border-collapse: collapse; font-size: 13.5px; }}\n\
th, td {{ padding: 3px 10px; border-bottom: 1px solid #e2e2e2; text-align: left; }}\n\
p.warn {{ color: #b00; font-weight: 600; }}\n\
</style>\n</head>\n<body>\n<h1>{title}</h1>\n\
<p>One lane per node, over the run's true time: its state (joining, active, paused; \
declared Dead while still running, which is what a false declaration does to a live silo; \
down, first undeclared then declared), a tick and <code>#g</code> where it restarts as generation g, \
an amber strip over the lane while some monitor suspects it, ▼ for each vote against it (hollow: withheld \
by the connection-liveness check), ✕ where its row was written Dead (a red dot: a false declaration), \
an outline while a fault hits it, and a thin blue strip under it while its view of the table \
is behind the table's version (drawn only where that lasts at least half a pixel column). \
The strip on top shows every fault and, in the table's row, when the table was unreachable \
(shaded pink through every lane too: no silo can be declared Dead then) or slow.</p>\n"
    );
    if t.folded > 0 {
        let _ = writeln!(
            out,
            "<p>{} nodes in all: the {} with the most to show (faults on them, suspicions, \
declarations, restarts) have a lane each; the other {} share the last lane, \
<code>+{} nodes</code>, which shows the worst state of any of them at each instant, \
all their marks, and their longest view lag.</p>",
            t.nodes,
            t.lanes.len() - 1,
            t.folded,
            t.folded
        );
    }
    let _ = writeln!(
        out,
        "<p>Judge <code>{}</code>, seed {}: {} declarations ({} false), {} suspicions, {} votes \
({} withheld), table: {} reads, {} writes, {} conflicts, {} unreachable; {} self-terminations, \
{} restarts, {} join give-ups.</p>",
        xml_escape(&o.label),
        o.seed,
        o.declarations.len(),
        o.declarations.iter().filter(|d| d.false_positive).count(),
        o.suspicions.len(),
        c.votes,
        c.votes_withheld,
        c.table_reads,
        c.table_writes,
        c.table_conflicts,
        c.table_unavailable,
        c.self_terminations,
        c.restarts,
        c.join_give_ups
    );
    if c.two_active_generations > 0 {
        let _ = writeln!(
            out,
            "<p class=\"warn\">Two generations of one node were Active at once {} time(s): \
a safety violation.</p>",
            c.two_active_generations
        );
    }
    out.push_str(&inline_svg(svg));
    out.push_str("\n<h2>Crashes</h2>\n<table>\n<tr><th>silo</th><th>crashed</th><th>declared Dead</th><th>after</th><th>views agreed</th></tr>\n");
    for x in &o.crashes {
        let after = x.declared.map(|d| d.saturating_sub(x.at));
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            x.silo,
            at(Some(x.at)),
            at(x.declared),
            after.map_or_else(|| "-".into(), |a| fmt_seconds(a.as_secs_f64())),
            at(x.agreed)
        );
    }
    out.push_str("</table>\n<h2>Declarations</h2>\n<table>\n<tr><th>time</th><th>silo</th><th>by</th><th>false</th><th>node-time destroyed</th><th>views agreed</th></tr>\n");
    for d in &o.declarations {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            at(Some(d.at)),
            d.target,
            d.by,
            if d.false_positive { "yes" } else { "" },
            if d.false_positive {
                fmt_seconds(d.destroyed.as_secs_f64())
            } else {
                String::new()
            },
            at(d.agreed)
        );
    }
    out.push_str(
        "</table>\n<h2>Faults</h2>\n<table>\n<tr><th>fault</th><th>from</th><th>to</th></tr>\n",
    );
    for f in &t.faults {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            xml_escape(&f.label),
            at(Some(f.window.start)),
            at(Some(f.window.end))
        );
    }
    out.push_str("</table>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixture::synthetic;
    use super::*;

    #[test]
    fn trace_rows_have_stable_columns_and_a_digest() {
        let (o, log) = synthetic(20, 1, "classic", 0);
        let (bytes, digest) = cluster_trace_bytes(&log).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap(), CLUSTER_TRACE_HEADER.join(","));
        assert_eq!(text.lines().count(), log.len() + 1);
        assert!(text.contains("\n80000,row,n5#0,,n7#0,"), "{text}");
        assert!(text.contains(",dead,n6#0@75000;n7#0@79900,"));
        assert!(text.contains("\n160300,node,n12#0,,,,,,terminated,,\n"));
        assert!(text.contains("\n212500,withheld,n8#0,n7#0,"));
        assert!(text.contains(",suspicion-start,n13#0,n12#0,"));
        assert_eq!(digest.len(), 64);
        assert_eq!(cluster_trace_bytes(&log).unwrap().1, digest);

        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("replay");
        assert_eq!(write_cluster_replay(&out, &o, &log).unwrap(), digest);
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [".fdlab-report", TIMELINE_HTML, TIMELINE_SVG, TRACE_CSV]
        );
        let page = std::fs::read_to_string(out.join(TIMELINE_HTML)).unwrap();
        assert!(page.contains("<svg data-chart=\"timeline\""));
        assert!(!page.contains("http") && !page.contains("<script"));
        assert!(page.contains("<td>n12#0</td><td>n14#0</td><td>yes</td><td>32.3 s</td>"));
    }
}
