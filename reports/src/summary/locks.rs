//! The lock-RPC part of the summary: per group of lock-RPC scenarios that
//! ran the same policies, one row per eviction policy, pooled over the
//! group's seeds.
//!
//! *Stops using a dead peer*: in every crash window the clients' use of the
//! crashed server (RPCs and dials for requests) stopped before the window
//! ended. *Spares live peers*: no healthy or slow peer was evicted.
//!
//! **The pick**, in this order: (1) stops using every dead peer; (2) fewest
//! evictions of live peers; (3) fewest failed acquisitions; rates within a
//! factor of [`super::weigh::SAME_WITHIN`] weigh the same in (2) and (3); (4) fastest to
//! stop using a dead peer.

use fdlab_protocol::Nanos;

use super::blame::and_list;
use super::weigh::{bucket, smallest_positive as floor};
use super::words::{duration, figure};
use super::{by_lineup, Cell, Column, Group, Part, Row};
use crate::lockrpc::{LockrpcMetrics, LockrpcSummary};

/// One policy's pooled counts.
#[derive(Clone, Debug, Default)]
struct Pool {
    name: String,
    dead_windows: u64,
    stopped: u64,
    /// Sum over crash windows of the time to stop using the peer.
    stop_sum: u128,
    live_evictions: u64,
    run_hours: f64,
    run_minutes: f64,
    acquisitions: u64,
    failed: u64,
    worst_p99: Option<Nanos>,
    dials_to_dead: u64,
    dead_minutes: f64,
    redials: u64,
}

impl Pool {
    fn add(&mut self, s: &LockrpcSummary) {
        self.dead_windows += u64::from(s.dead_windows);
        self.stopped += u64::from(s.dead_windows_stopped);
        if let Some(mean) = s.stop_mean {
            self.stop_sum += u128::from(mean.0) * u128::from(s.dead_windows);
        }
        self.live_evictions += s.evictions.live();
        self.run_hours += s.run_time.as_secs_f64() / 3600.0;
        self.run_minutes += s.run_time.as_secs_f64() / 60.0;
        self.acquisitions += s.acquisitions;
        self.failed += s.failed;
        self.worst_p99 = self.worst_p99.max(s.latency_p99);
        self.dials_to_dead += s.dials_to_dead + s.background_dials_to_dead;
        self.dead_minutes += s.dead_time.as_secs_f64() / 60.0;
        self.redials += s.redials.total();
    }
    fn stop_mean(&self) -> Option<Nanos> {
        (self.dead_windows > 0).then(|| {
            Nanos(u64::try_from(self.stop_sum / u128::from(self.dead_windows)).unwrap_or(u64::MAX))
        })
    }
    fn failed_share(&self) -> Option<f64> {
        (self.acquisitions > 0).then(|| self.failed as f64 / self.acquisitions as f64)
    }
    fn live_evictions_per_hour(&self) -> Option<f64> {
        (self.run_hours > 0.0).then(|| self.live_evictions as f64 / self.run_hours)
    }
    fn per_minute(n: u64, minutes: f64) -> Option<f64> {
        (minutes > 0.0).then(|| n as f64 / minutes)
    }
}

/// The part for the run's lock-RPC scenarios, in the order given.
pub fn locks_part(metrics: &[LockrpcMetrics]) -> Part {
    let lineups: Vec<Vec<String>> = metrics
        .iter()
        .map(|m| m.summary.iter().map(|s| s.policy.clone()).collect())
        .collect();
    let groups = by_lineup(&lineups)
        .into_iter()
        .map(|(lineup, members)| {
            let scenarios: Vec<&LockrpcMetrics> = members.iter().map(|&i| &metrics[i]).collect();
            group(&lineup, &scenarios)
        })
        .collect();
    Part {
        id: "lock-rpc".into(),
        title: "Lock-RPC eviction policies".into(),
        candidate: "policy".into(),
        groups,
    }
}

fn group(lineup: &[String], scenarios: &[&LockrpcMetrics]) -> Group {
    let pools: Vec<Pool> = lineup
        .iter()
        .map(|name| {
            let mut pool = Pool {
                name: name.clone(),
                ..Pool::default()
            };
            for s in scenarios
                .iter()
                .flat_map(|m| &m.summary)
                .filter(|s| &s.policy == name)
            {
                pool.add(s);
            }
            pool
        })
        .collect();
    let columns = vec![
        Column::new("stops_using_dead_peer", "stops using a dead peer", None),
        Column::new("spares_live_peers", "spares live peers", None),
        Column::new("stop_mean_s", "time to stop", Some("s")),
        Column::new("lock_p99_worst_ms", "lock p99, worst", Some("ms")),
        Column::new(
            "failed_acquisitions_percent",
            "failed acquisitions",
            Some("%"),
        ),
        Column::new(
            "dials_to_dead_per_minute",
            "dials to a dead peer",
            Some("per min"),
        ),
        Column::new("redials_per_minute", "re-dials", Some("per min")),
    ];
    let rows = pools
        .iter()
        .map(|p| Row {
            name: p.name.clone(),
            cells: vec![
                match (p.dead_windows, p.stopped) {
                    (0, _) => Cell::None,
                    (n, s) if s == n => Cell::Pass {
                        text: format!("yes ({n})"),
                    },
                    (n, s) => Cell::Fail {
                        text: format!("{s} of {n}"),
                    },
                },
                if p.live_evictions == 0 {
                    Cell::Pass { text: "yes".into() }
                } else {
                    Cell::Fail {
                        text: format!("{} evicted", p.live_evictions),
                    }
                },
                Cell::maybe(p.stop_mean().map(Nanos::as_secs_f64), 3),
                Cell::maybe(p.worst_p99.map(|t| t.as_secs_f64() * 1e3), 1),
                Cell::maybe(p.failed_share().map(|v| v * 100.0), 2),
                Cell::maybe(Pool::per_minute(p.dials_to_dead, p.dead_minutes), 1),
                Cell::maybe(Pool::per_minute(p.redials, p.run_minutes), 0),
            ],
        })
        .collect();
    let (pick, sentences) = weigh(&pools);
    Group {
        scenarios: scenarios.iter().map(|m| m.scenario.clone()).collect(),
        columns,
        rows,
        pick,
        sentences,
    }
}

fn weigh(pools: &[Pool]) -> (Option<String>, Vec<String>) {
    let evict_floor = floor(pools.iter().map(Pool::live_evictions_per_hour));
    let failed_floor = floor(pools.iter().map(Pool::failed_share));
    let mut order: Vec<usize> = (0..pools.len()).collect();
    order.sort_by_key(|&i| {
        let p = &pools[i];
        (
            p.stopped < p.dead_windows,
            bucket(p.live_evictions_per_hour(), evict_floor),
            bucket(p.failed_share(), failed_floor),
            p.stop_mean().unwrap_or(Nanos::ZERO),
            i,
        )
    });
    let Some(&pick) = order.first() else {
        return (None, Vec::new());
    };
    let p = &pools[pick];
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0));
    let mut clauses = Vec::new();
    if p.dead_windows > 0 {
        clauses.push(match p.stop_mean() {
            Some(t) if p.stopped == p.dead_windows => format!(
                "stops using a dead peer in every crash ({} on average)",
                duration(t)
            ),
            _ => format!(
                "stops using a dead peer in {} of {} crashes",
                p.stopped, p.dead_windows
            ),
        });
    }
    clauses.push(format!(
        "{} evictions of live peers per hour",
        figure(p.live_evictions_per_hour().unwrap_or(0.0))
    ));
    clauses.push(format!("{} of acquisitions failed", pct(p.failed_share())));
    let mut sentences = vec![format!("pick `{}`: {}", p.name, and_list(&clauses))];
    let storms: Vec<String> = pools
        .iter()
        .filter_map(|q| {
            let rate = Pool::per_minute(q.redials, q.run_minutes)?;
            let pick_rate = Pool::per_minute(p.redials, p.run_minutes).unwrap_or(0.0);
            (rate > 0.0 && rate > pick_rate * 10.0)
                .then(|| format!("`{}` re-dials {} times a minute", q.name, figure(rate)))
        })
        .collect();
    if !storms.is_empty() {
        sentences.push(format!("re-dial storms: {}", and_list(&storms)));
    }
    (Some(p.name.clone()), sentences)
}
