//! The lock-RPC verdict: which policy stops using a dead peer fastest,
//! which evicts live peers least, and whether a policy storms.

use super::metrics::{LockrpcMetrics, LockrpcSummary};

/// Re-dials per minute, all clients together, above which a policy is said
/// to storm: one per client every 6 s (ten per client per minute would be
/// a connection every 6 s to each of a few peers).
pub const STORM_REDIALS_PER_CLIENT_MINUTE: f64 = 10.0;

fn names(v: &[&LockrpcSummary]) -> String {
    v.iter()
        .map(|s| s.policy.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One sentence per finding.
pub fn lockrpc_verdict(m: &LockrpcMetrics) -> Vec<String> {
    let mut out = Vec::new();
    let s = &m.summary;
    if s.is_empty() {
        return out;
    }
    if s.iter().any(|x| x.dead_windows > 0) {
        let best = s
            .iter()
            .filter_map(|x| Some((x, x.stop_mean?)))
            .min_by_key(|(_, t)| *t);
        if let Some((b, t)) = best {
            let stopped: Vec<&LockrpcSummary> =
                s.iter().filter(|x| x.dead_windows_stopped > 0).collect();
            out.push(format!(
                "Stops using a dead peer fastest: {} ({:.1} s on average over {} crash window{}); use (RPCs and dials for requests) stopped at all under: {}.",
                b.policy,
                t.as_secs_f64(),
                b.dead_windows,
                if b.dead_windows == 1 { "" } else { "s" },
                if stopped.is_empty() { "none (every policy kept dialling until the peer came back or the run ended)".to_string() } else { names(&stopped) }
            ));
        }
        let never: Vec<&LockrpcSummary> = s
            .iter()
            .filter(|x| x.dead_windows_rpcs_stopped < x.dead_windows)
            .collect();
        let slowest = s.iter().filter_map(|x| x.rpc_stop_mean).max();
        out.push(match (never.is_empty(), slowest) {
            (true, Some(t)) => format!(
                "RPCs to a dead peer stopped under every policy, {:.1} s after the crash at most on average.",
                t.as_secs_f64()
            ),
            _ => format!("RPCs to a dead peer went on to the end of a crash window under: {}.", names(&never)),
        });
    } else {
        out.push("No peer was dead: the time to stop using one is not measured.".to_string());
    }
    let least = s.iter().map(|x| x.evictions.live()).min().unwrap_or(0);
    let fewest: Vec<&LockrpcSummary> = s.iter().filter(|x| x.evictions.live() == least).collect();
    out.push(format!(
        "Evicts live peers least: {} ({} eviction{} of a live peer, {:.1} per hour).",
        names(&fewest),
        least,
        if least == 1 { "" } else { "s" },
        fewest[0].live_evictions_per_hour()
    ));
    let storms: Vec<String> = s
        .iter()
        .filter(|x| {
            x.per_minute(x.redials.total()) / f64::from(x.clients.max(1))
                > STORM_REDIALS_PER_CLIENT_MINUTE
        })
        .map(|x| {
            format!(
                "{} ({:.0} re-dials/min, {} tear-downs)",
                x.policy,
                x.per_minute(x.redials.total()),
                x.teardowns.total()
            )
        })
        .collect();
    if storms.is_empty() {
        out.push(format!(
            "No re-dial storm: every policy stayed under {STORM_REDIALS_PER_CLIENT_MINUTE} re-dials per client per minute."
        ));
    } else {
        out.push(format!("Re-dial storm: {}.", storms.join("; ")));
    }
    if let Some(w) = s.iter().filter(|x| x.failed > 0).max_by(|a, b| {
        a.failed_share()
            .unwrap_or(0.0)
            .total_cmp(&b.failed_share().unwrap_or(0.0))
    }) {
        out.push(format!(
            "Most failed acquisitions: {} ({:.1}%).",
            w.policy,
            100.0 * w.failed_share().unwrap_or(0.0)
        ));
    }
    out
}
