//! The "Lock RPCs" section of one lock-RPC scenario in `index.html` and
//! `report.md`: the per-policy table, RustFS's lock metrics by label, a
//! key to them, the verdict and the chart of [`super::chart`].

use std::fmt::Write as _;

use super::tables::{cells, rustfs_caption, rustfs_cells, CONSOLE_HEADER, RUSTFS_METRICS};
use super::LockrpcMetrics;
use crate::charts::{xml_escape, Chart, Palette};
use crate::html_parts as html;
use crate::markdown_table::{self as markdown, cell};

/// One lock-RPC scenario as the reports show it.
pub struct LockrpcSection<'a> {
    pub metrics: &'a LockrpcMetrics,
    pub anchor: String,
    pub chart: Chart,
    /// The chart's file, relative to the output directory.
    pub chart_file: String,
}

/// What the columns mean.
pub const KEY: [(&str, &str); 12] = [
    (
        "policies",
        "evict-on-timeout: tear the channel down and re-dial on every timeout, cancel the RPC; rustfs: RustFS's eviction verdicts (a peer that served within 2 deadlines is slow, not gone), detached timed-out RPCs, 5 s eviction cooldown; rustfs-breaker: rustfs plus the per-peer request breaker; dsync: MinIO dsync's refresh of held locks over a grid-like channel (a timeout never evicts; a failed connection is offline, requests fail at once while it re-dials in the background every 1 to 2 s)",
    ),
    (
        "lock p50 / p99",
        "time from the start of an acquisition to a write quorum of grants, successful acquisitions only",
    ),
    (
        "failed acq.",
        "acquisitions that did not get a quorum (refused, timed out, failed, or skipped by the breaker), and their share",
    ),
    (
        "evictions healthy / slow / dead",
        "channel evictions while the peer's server was up and healthy; up but slow (degraded, paused, or behind a slow link from that client); crashed. Live evictions per hour count the first two",
    ),
    (
        "re-dials, resets, tear-downs",
        "new connections after the first; cancelled streams; connections torn down by too many resets (GOAWAY), all clients together",
    ),
    (
        "orphaned lock-s",
        "server-side lock time while no client wanted the lock: from a grant (or its client giving up, whichever is later) to its release or lease expiry",
    ),
    (
        "stop RPCs to dead peer",
        "mean over crash windows of the time from the crash to the last RPC any client sent the dead server on a connection (breaker probes aside); the whole window when RPCs went on to its end. A refused dial carries no RPC",
    ),
    (
        "stop using dead peer",
        "the same for any use by a request: an RPC, or a dial made for a request (breaker probes and background re-dials aside)",
    ),
    (
        "dials/min to dead peer",
        "dials to a crashed server (for requests and in the background) per minute it was crashed, all clients together",
    ),
    (
        "RustFS lock metrics",
        "RustFS's six lock-RPC metrics (rustfs_io_metrics::lock_metrics, rustfs_remote_lock_*_total), one column per label value, counted by every client's channel to every server, all seeds summed: timeouts per op (lock, unlock, ping, refresh; fdlab's clients send no health pings; refresh is dsync's); channel evictions per trigger (timeout: a deadline passed; transport: a refused dial, a reset or a GOAWAY); evictions suppressed per verdict (peer_recently_served: a deadline on a peer that completed an RPC within 2 deadlines; cooling_down: any failure within the cooldown of the last eviction); timed-out RPCs detached (left running) or aborted (cancelled: the detach budget was spent, or always under evict-on-timeout); late completions of detached RPCs (success; error: a status, an expiry or a failed connection); late releases of late grants by outcome (released, partial, failed). dsync makes no verdicts: its evictions and suppressions stay 0",
    ),
    (
        "reading the RustFS metrics",
        "as RustFS's runbook: a slow but healthy peer shows rising timeouts with peer_recently_served suppressions and at most one eviction per cooldown; a dead peer shows transport evictions once per cooldown while the connection re-dials, with cooling_down suppressions between. Every fdlab client has its own channel: once per cooldown is per client",
    ),
    (
        "same seeds",
        "every policy of a seed sees the same acquisitions (arrivals, lock names) and the same faults",
    ),
];

fn meta(m: &LockrpcMetrics) -> String {
    format!(
        "Lock RPCs: {} servers, {} clients; {} seed{} per policy; every client sends each acquisition's Lock RPC to every server and needs a write quorum.",
        m.servers,
        m.clients,
        m.seeds,
        if m.seeds == 1 { "" } else { "s" }
    )
}

/// The section in `index.html`.
pub fn html_section(out: &mut String, s: &LockrpcSection<'_>, palette: &Palette, first: bool) {
    let m = s.metrics;
    let title = format!("{}: lock RPCs", m.scenario);
    html::open_section(out, &s.anchor, Some("lockrpc"), &title);
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", xml_escape(&meta(m)));
    html::table(out, &CONSOLE_HEADER, m.summary.iter().map(cells), palette);
    rustfs_html_table(out, m, palette);
    out.push_str("<ul>\n");
    for line in super::lockrpc_verdict(m) {
        let _ = writeln!(out, "<li>{}</li>", xml_escape(&line));
    }
    out.push_str("</ul>\n");
    if first {
        html::key(out, "How to read the lock-RPC tables", &KEY);
    }
    html::chart(out, &s.chart);
    html::close_section(out);
}

/// "RustFS lock metrics" in `index.html`: the metrics' names over their
/// labels, one row per policy, a rule before each metric's first column.
fn rustfs_html_table(out: &mut String, m: &LockrpcMetrics, palette: &Palette) {
    const RULE: &str = "border-left:1px solid #ccc";
    let _ = writeln!(
        out,
        "<p class=\"meta\"><b>RustFS lock metrics</b> ({})</p>",
        xml_escape(&rustfs_caption(m))
    );
    out.push_str(
        "<div class=\"table\"><table class=\"rustfs\">\n<thead><tr><th rowspan=\"2\">policy</th>",
    );
    for metric in &RUSTFS_METRICS {
        let _ = write!(
            out,
            "<th colspan=\"{}\" style=\"text-align:center;{RULE}\">{}</th>",
            metric.labels.len(),
            xml_escape(metric.title)
        );
    }
    out.push_str("</tr>\n<tr>");
    for metric in &RUSTFS_METRICS {
        for (j, (label, _)) in metric.labels.iter().enumerate() {
            let rule = if j == 0 { RULE } else { "" };
            let _ = write!(
                out,
                "<th style=\"text-align:right;{rule}\" title=\"{}\">{}</th>",
                xml_escape(&metric.column(label)),
                xml_escape(label)
            );
        }
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    // Where each metric's first column is.
    let firsts: Vec<bool> = RUSTFS_METRICS
        .iter()
        .flat_map(|m| (0..m.labels.len()).map(|j| j == 0))
        .collect();
    for s in &m.summary {
        let _ = write!(
            out,
            "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td>",
            palette.css(&s.policy),
            xml_escape(&s.policy)
        );
        for (cell, first) in rustfs_cells(s).iter().zip(&firsts) {
            if *first {
                let _ = write!(out, "<td style=\"{RULE}\">{cell}</td>");
            } else {
                let _ = write!(out, "<td>{cell}</td>");
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
}

/// The section in `report.md`.
pub fn markdown_section(out: &mut String, s: &LockrpcSection<'_>) {
    let m = s.metrics;
    let _ = writeln!(out, "## {}: lock RPCs\n", cell(&m.scenario));
    let _ = writeln!(out, "{}\n", meta(m));
    markdown::table(out, &CONSOLE_HEADER, 1, m.summary.iter().map(cells));
    let _ = writeln!(out, "RustFS lock metrics ({}):\n", rustfs_caption(m));
    let columns: Vec<String> = RUSTFS_METRICS
        .iter()
        .flat_map(|r| r.labels.iter().map(|(label, _)| r.column(label)))
        .collect();
    let header: Vec<&str> = ["policy"]
        .into_iter()
        .chain(columns.iter().map(String::as_str))
        .collect();
    markdown::table(
        out,
        &header,
        1,
        m.summary.iter().map(|s| {
            let mut row = vec![s.policy.clone()];
            row.extend(rustfs_cells(s));
            row
        }),
    );
    for line in super::lockrpc_verdict(m) {
        let _ = writeln!(out, "- {line}");
    }
    out.push('\n');
    match &s.chart {
        Chart::Svg(_) => {
            let _ = writeln!(
                out,
                "![dead-peer traffic against live-peer evictions of {}]({})\n",
                cell(&m.scenario),
                s.chart_file
            );
        }
        Chart::Nothing(line) => {
            let _ = writeln!(out, "{line}\n");
        }
    }
}

/// The key of the lock-RPC table, for the end of `report.md`.
pub fn markdown_key(out: &mut String) {
    out.push_str("## How to read the lock-RPC tables\n\n");
    for (term, meaning) in KEY {
        let _ = writeln!(out, "- **{term}**: {meaning}");
    }
}
