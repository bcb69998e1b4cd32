//! `lockrpc.csv` (one row per scenario × policy) and the console table.

use std::io::{self, Write};
use std::path::Path;

use fdlab_protocol::Nanos;

use super::metrics::{LockrpcMetrics, LockrpcSummary};
use super::LOCKRPC_CSV;
use crate::atomic::write_atomically;
use crate::tables::terminal::aligned;

/// The header of `lockrpc.csv`.
pub const LOCKRPC_HEADER: [&str; 47] = [
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
];

/// Writes `lockrpc.csv` into `dir`.
pub fn write_lockrpc_table(dir: &Path, metrics: &[LockrpcMetrics]) -> io::Result<()> {
    write_atomically(&dir.join(LOCKRPC_CSV), |out| write_lockrpc(out, metrics))
}

/// Writes the rows of `lockrpc.csv` into `out`.
pub fn write_lockrpc(out: &mut dyn Write, metrics: &[LockrpcMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(LOCKRPC_HEADER)?;
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
    vec![
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
    ]
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

/// The console table: one line per policy.
pub fn lockrpc_terminal_table(m: &LockrpcMetrics) -> String {
    let mut rows: Vec<Vec<String>> = vec![CONSOLE_HEADER.iter().map(|h| h.to_string()).collect()];
    rows.extend(m.summary.iter().map(cells));
    format!(
        "{} (lock RPCs: {} servers, {} clients; {} run{} per policy, same seeds and faults)\n{}",
        m.scenario,
        m.servers,
        m.clients,
        m.seeds,
        if m.seeds == 1 { "" } else { "s" },
        aligned(&rows)
    )
}
