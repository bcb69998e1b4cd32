//! `lockrpc.csv` (one row per scenario × policy) and the console tables:
//! the policies' costs, and RustFS's six lock metrics by label
//! ([`RUSTFS_METRICS`]).

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use fdlab_protocol::lockrpc::ChannelCounters;
use fdlab_protocol::Nanos;

use super::metrics::{LockrpcMetrics, LockrpcSummary};
use super::LOCKRPC_CSV;
use crate::atomic::write_atomically;
use crate::tables::terminal::aligned;

/// One of RustFS's lock metrics (`rustfs_io_metrics::lock_metrics`): its
/// name in the tables, the prefix of its `lockrpc.csv` columns, and its
/// label values, each with the counter behind it.
pub(crate) struct RustfsMetric {
    pub title: &'static str,
    pub prefix: &'static str,
    pub labels: &'static [(&'static str, Counter)],
}

/// Reads one counter of a policy's summed [`ChannelCounters`].
pub(crate) type Counter = fn(&ChannelCounters) -> u64;

impl RustfsMetric {
    /// The `lockrpc.csv` column of `label`: the prefix, then the label.
    pub fn column(&self, label: &str) -> String {
        format!("{}{label}", self.prefix)
    }
}

/// RustFS's six lock metrics, in RustFS's order, with their labels.
pub(crate) const RUSTFS_METRICS: [RustfsMetric; 6] = [
    RustfsMetric {
        title: "timeouts",
        prefix: "timeouts_",
        labels: &[
            ("lock", |c| c.timeouts.lock),
            ("unlock", |c| c.timeouts.unlock),
            ("ping", |c| c.timeouts.ping),
            ("refresh", |c| c.timeouts.refresh),
        ],
    },
    RustfsMetric {
        title: "evictions",
        prefix: "evictions_",
        labels: &[
            ("timeout", |c| c.evictions_timeout),
            ("transport", |c| c.evictions_transport),
        ],
    },
    RustfsMetric {
        title: "suppressed",
        prefix: "suppressed_",
        labels: &[
            ("peer_recently_served", |c| {
                c.suppressed_peer_recently_served
            }),
            ("cooling_down", |c| c.suppressed_cooling_down),
        ],
    },
    RustfsMetric {
        title: "timed-out RPCs",
        prefix: "",
        labels: &[("detached", |c| c.detached), ("aborted", |c| c.aborted)],
    },
    RustfsMetric {
        title: "late completions",
        prefix: "late_",
        labels: &[("success", |c| c.late_success), ("error", |c| c.late_error)],
    },
    RustfsMetric {
        title: "late releases",
        prefix: "late_",
        labels: &[
            ("released", |c| c.late_released),
            ("partial", |c| c.late_partial),
            ("failed", |c| c.late_failed),
        ],
    },
];

/// The columns of [`RUSTFS_METRICS`] `lockrpc.csv` did not have before
/// (`detached` was there), in order.
const RUSTFS_COLUMNS: [&str; 14] = [
    "timeouts_lock",
    "timeouts_unlock",
    "timeouts_ping",
    "timeouts_refresh",
    "evictions_timeout",
    "evictions_transport",
    "suppressed_peer_recently_served",
    "suppressed_cooling_down",
    "aborted",
    "late_success",
    "late_error",
    "late_released",
    "late_partial",
    "late_failed",
];

/// The value of `lockrpc.csv`'s column `name` among [`RUSTFS_METRICS`].
fn rustfs_value(c: &ChannelCounters, name: &str) -> u64 {
    RUSTFS_METRICS
        .iter()
        .flat_map(|m| m.labels.iter().map(move |(label, f)| (m.column(label), f)))
        .find(|(column, _)| column == name)
        .map(|(_, f)| f(c))
        .unwrap_or_else(|| panic!("{name} is no RustFS lock metric column"))
}

/// The columns of `lockrpc.csv` before [`RUSTFS_COLUMNS`].
const BASE_COLUMNS: [&str; 48] = [
    "scenario",
    "policy",
    "runs",
    "clients",
    "acquisitions",
    "acquired",
    "failed_acquisitions",
    "failed_share",
    "lock_latency_p50_s",
    "lock_latency_p99_s",
    "timeouts_healthy",
    "timeouts_slow",
    "timeouts_dead",
    "timeouts_per_client_second",
    "evictions_healthy",
    "evictions_slow",
    "evictions_dead",
    "evictions_live_per_hour",
    "evictions_per_minute",
    "redials_healthy",
    "redials_slow",
    "redials_dead",
    "redials_per_minute",
    "resets_healthy",
    "resets_slow",
    "resets_dead",
    "teardowns_healthy",
    "teardowns_slow",
    "teardowns_dead",
    "suppressed",
    "detached",
    "skipped",
    "late_releases",
    "orphaned_lock_s",
    "unlock_retries",
    "unlock_give_ups",
    "lease_expiries",
    "dead_windows",
    "dead_peer_stop_mean_s",
    "dead_windows_stopped",
    "dead_peer_rpc_stop_mean_s",
    "dead_windows_rpcs_stopped",
    "rpcs_to_dead",
    "dials_to_dead",
    "background_dials_to_dead",
    "dials_to_dead_per_minute",
    "offline_skipped",
    "dead_time_s",
];

/// The header of `lockrpc.csv`: [`BASE_COLUMNS`], then [`RUSTFS_COLUMNS`].
pub fn lockrpc_header() -> impl Iterator<Item = &'static str> {
    BASE_COLUMNS.into_iter().chain(RUSTFS_COLUMNS)
}

/// Writes `lockrpc.csv` into `dir`.
pub fn write_lockrpc_table(dir: &Path, metrics: &[LockrpcMetrics]) -> io::Result<()> {
    write_atomically(&dir.join(LOCKRPC_CSV), |out| write_lockrpc(out, metrics))
}

/// Writes the rows of `lockrpc.csv` into `out`.
pub fn write_lockrpc(out: &mut dyn Write, metrics: &[LockrpcMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(lockrpc_header())?;
    for m in metrics {
        for s in &m.summary {
            w.write_record(row(&m.scenario, s))?;
        }
    }
    w.flush()
}

fn secs(t: Option<Nanos>) -> String {
    t.map_or_else(String::new, |t| format!("{:.6}", t.as_secs_f64()))
}

fn row(scenario: &str, s: &LockrpcSummary) -> Vec<String> {
    let mut row = vec![
        scenario.to_string(),
        s.policy.clone(),
        s.runs.to_string(),
        s.clients.to_string(),
        s.acquisitions.to_string(),
        s.acquired.to_string(),
        s.failed.to_string(),
        s.failed_share()
            .map_or_else(String::new, |v| format!("{v:.6}")),
        secs(s.latency_p50),
        secs(s.latency_p99),
        s.timeouts.healthy.to_string(),
        s.timeouts.slow.to_string(),
        s.timeouts.dead.to_string(),
        format!("{:.6}", s.timeouts_per_client_second()),
        s.evictions.healthy.to_string(),
        s.evictions.slow.to_string(),
        s.evictions.dead.to_string(),
        format!("{:.3}", s.live_evictions_per_hour()),
        format!("{:.3}", s.per_minute(s.evictions.total())),
        s.redials.healthy.to_string(),
        s.redials.slow.to_string(),
        s.redials.dead.to_string(),
        format!("{:.3}", s.per_minute(s.redials.total())),
        s.resets.healthy.to_string(),
        s.resets.slow.to_string(),
        s.resets.dead.to_string(),
        s.teardowns.healthy.to_string(),
        s.teardowns.slow.to_string(),
        s.teardowns.dead.to_string(),
        s.counters.suppressed().to_string(),
        s.counters.detached.to_string(),
        s.counters.skipped.to_string(),
        s.counters.late_releases.to_string(),
        format!("{:.3}", s.orphaned.as_secs_f64()),
        s.unlock_retries.to_string(),
        s.unlock_give_ups.to_string(),
        s.lease_expiries.to_string(),
        s.dead_windows.to_string(),
        secs(s.stop_mean),
        s.dead_windows_stopped.to_string(),
        secs(s.rpc_stop_mean),
        s.dead_windows_rpcs_stopped.to_string(),
        s.rpcs_to_dead.to_string(),
        s.dials_to_dead.to_string(),
        s.background_dials_to_dead.to_string(),
        s.dead_dials_per_minute()
            .map_or_else(String::new, |v| format!("{v:.3}")),
        s.counters.offline_skipped.to_string(),
        format!("{:.3}", s.dead_time.as_secs_f64()),
    ];
    row.extend(
        RUSTFS_COLUMNS
            .iter()
            .map(|name| rustfs_value(&s.counters, name).to_string()),
    );
    row
}

/// A duration in milliseconds, or `-`.
pub(crate) fn ms(t: Option<Nanos>) -> String {
    t.map_or_else(|| "-".into(), |t| format!("{:.1}", t.as_millis_f64()))
}

/// A mean time to stop, in seconds, with how many windows stopped (`-`
/// with no dead peer).
pub(crate) fn stop(mean: Option<Nanos>, stopped: u32, windows: u32) -> String {
    match mean {
        None => "-".into(),
        Some(t) => format!("{:.1} ({stopped}/{windows} stopped)", t.as_secs_f64()),
    }
}

/// A rate with 2 decimals below 10, none above.
pub(crate) fn rate(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.0}")
    }
}

/// Cells of one policy, in [`CONSOLE_HEADER`] order.
pub(crate) fn cells(s: &LockrpcSummary) -> Vec<String> {
    vec![
        s.policy.clone(),
        ms(s.latency_p50),
        ms(s.latency_p99),
        format!(
            "{} ({:.1}%)",
            s.failed,
            100.0 * s.failed_share().unwrap_or(0.0)
        ),
        format!("{:.3}", s.timeouts_per_client_second()),
        format!(
            "{} / {} / {}",
            s.evictions.healthy, s.evictions.slow, s.evictions.dead
        ),
        rate(s.live_evictions_per_hour()),
        rate(s.per_minute(s.redials.total())),
        format!("{} / {}", s.resets.total(), s.teardowns.total()),
        format!("{:.1}", s.orphaned.as_secs_f64()),
        s.unlock_retries.to_string(),
        stop(s.rpc_stop_mean, s.dead_windows_rpcs_stopped, s.dead_windows),
        stop(s.stop_mean, s.dead_windows_stopped, s.dead_windows),
        s.dead_dials_per_minute().map_or_else(|| "-".into(), rate),
    ]
}

/// The console table's header.
pub(crate) const CONSOLE_HEADER: [&str; 14] = [
    "policy",
    "lock p50 (ms)",
    "lock p99 (ms)",
    "failed acq.",
    "timeouts/client/s",
    "evictions healthy / slow / dead",
    "live evictions/h",
    "re-dials/min",
    "resets / tear-downs",
    "orphaned lock-s",
    "unlock retries",
    "stop RPCs to dead peer (s)",
    "stop using dead peer (s)",
    "dials/min to dead peer",
];

/// The console tables: the policies' costs, one line per policy, then
/// [`rustfs_terminal_table`].
pub fn lockrpc_terminal_table(m: &LockrpcMetrics) -> String {
    let mut rows: Vec<Vec<String>> = vec![CONSOLE_HEADER.iter().map(|h| h.to_string()).collect()];
    rows.extend(m.summary.iter().map(cells));
    format!(
        "{} (lock RPCs: {} servers, {} clients; {} run{} per policy, same seeds and faults)\n{}\n{}",
        m.scenario,
        m.servers,
        m.clients,
        m.seeds,
        if m.seeds == 1 { "" } else { "s" },
        aligned(&rows),
        rustfs_terminal_table(m)
    )
}

/// Counts of one policy, one per label of [`RUSTFS_METRICS`] in order.
pub(crate) fn rustfs_cells(s: &LockrpcSummary) -> Vec<String> {
    RUSTFS_METRICS
        .iter()
        .flat_map(|m| m.labels.iter().map(|(_, f)| f(&s.counters).to_string()))
        .collect()
}

/// What the RustFS table's title line says after its name: whose counts,
/// and the crash windows' time (an operator's "one transport eviction
/// per cooldown" is read against it).
pub(crate) fn rustfs_caption(m: &LockrpcMetrics) -> String {
    let dead = m.summary.first().map_or(Nanos::ZERO, |s| s.dead_time);
    let dead = if dead.is_zero() {
        "no crash window".to_string()
    } else {
        format!("crash windows {:.1} s in all", dead.as_secs_f64())
    };
    format!(
        "labels of rustfs_io_metrics::lock_metrics; all {} clients, {} run{} summed; {dead}",
        m.clients,
        m.seeds,
        if m.seeds == 1 { "" } else { "s" }
    )
}

/// What parts two metrics' columns in [`rustfs_terminal_table`].
const GAP: &str = "  ";

/// The second console table, "RustFS lock metrics": one line per policy,
/// one column per label under its metric's name. Labels of one metric
/// are one space apart, metrics two ([`GAP`]), so that the fifteen
/// columns stay near 160 characters.
pub fn rustfs_terminal_table(m: &LockrpcMetrics) -> String {
    let rows: Vec<Vec<String>> = m.summary.iter().map(rustfs_cells).collect();
    let policy_width = m
        .summary
        .iter()
        .map(|s| s.policy.chars().count())
        .chain(["policy".len()])
        .max()
        .unwrap_or(0);
    // Each label's width: its values' and its own; a metric's name wider
    // than its labels widens its first one.
    let mut widths: Vec<usize> = Vec::new();
    for metric in &RUSTFS_METRICS {
        let first = widths.len();
        for (label, _) in metric.labels {
            let i = widths.len();
            let values = rows.iter().map(|r| r[i].chars().count());
            widths.push(values.chain([label.len()]).max().unwrap_or(0));
        }
        let span: usize = widths[first..].iter().sum::<usize>() + metric.labels.len() - 1;
        widths[first] += metric.title.len().saturating_sub(span);
    }
    let line = |cells: &mut dyn Iterator<Item = String>, first: &str| {
        let mut out = format!("{first:<policy_width$}");
        let mut i = 0;
        for metric in &RUSTFS_METRICS {
            out.push_str(GAP);
            for j in 0..metric.labels.len() {
                if j > 0 {
                    out.push(' ');
                }
                let cell = cells.next().unwrap_or_default();
                let _ = write!(out, "{cell:>w$}", w = widths[i]);
                i += 1;
            }
        }
        out.trim_end().to_string()
    };
    let mut out = format!("RustFS lock metrics ({})\n", rustfs_caption(m));
    // The metrics' names, left-aligned over their labels.
    let mut titles = format!("{:policy_width$}", "");
    let mut i = 0;
    for metric in &RUSTFS_METRICS {
        let n = metric.labels.len();
        let span: usize = widths[i..i + n].iter().sum::<usize>() + n - 1;
        let _ = write!(titles, "{GAP}{:<span$}", metric.title);
        i += n;
    }
    out.push_str(titles.trim_end());
    out.push('\n');
    let mut labels = RUSTFS_METRICS
        .iter()
        .flat_map(|m| m.labels.iter().map(|(l, _)| l.to_string()));
    out.push_str(&line(&mut labels, "policy"));
    out.push('\n');
    for (s, row) in m.summary.iter().zip(rows) {
        out.push_str(&line(&mut row.into_iter(), &s.policy));
        out.push('\n');
    }
    out
}
