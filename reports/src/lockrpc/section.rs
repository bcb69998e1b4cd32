//! The "Lock RPCs" section of one lock-RPC scenario in `index.html` and
//! `report.md`: the per-policy table, a key to it, the verdict and the
//! chart of [`super::chart`].

use std::fmt::Write as _;

use super::tables::{cells, CONSOLE_HEADER};
use super::LockrpcMetrics;
use crate::charts::{xml_escape, Chart, Palette};
use crate::html;
use crate::markdown::{self, cell};

/// One lock-RPC scenario as the reports show it.
pub struct LockrpcSection<'a> {
    pub metrics: &'a LockrpcMetrics,
    pub anchor: String,
    pub chart: Chart,
    /// The chart's file, relative to the output directory.
    pub chart_file: String,
}

/// What the columns mean.
pub const KEY: [(&str, &str); 10] = [
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
    let _ = writeln!(
        out,
        "<section id=\"{}\" class=\"lockrpc\">\n<h2>{}: lock RPCs</h2>",
        xml_escape(&s.anchor),
        xml_escape(&m.scenario)
    );
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", xml_escape(&meta(m)));
    html::table(out, &CONSOLE_HEADER, m.summary.iter().map(cells), palette);
    out.push_str("<ul>\n");
    for line in super::lockrpc_verdict(m) {
        let _ = writeln!(out, "<li>{}</li>", xml_escape(&line));
    }
    out.push_str("</ul>\n");
    if first {
        html::key(out, "How to read the lock-RPC table", &KEY);
    }
    html::chart(out, &s.chart);
    out.push_str("</section>\n");
}

/// The section in `report.md`.
pub fn markdown_section(out: &mut String, s: &LockrpcSection<'_>) {
    let m = s.metrics;
    let _ = writeln!(out, "## {}: lock RPCs\n", cell(&m.scenario));
    let _ = writeln!(out, "{}\n", meta(m));
    markdown::table(out, &CONSOLE_HEADER, 1, m.summary.iter().map(cells));
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
