//! What a placement run's ledger reacts to besides requests, read off the
//! detectors' run ([`RunOutcome`]) or a membership run
//! ([`ClusterOutcome`]): each client's detector verdicts (or view) on each
//! server, when a server is down *for a client* (its must-detect windows:
//! crashed, paused past tolerance, or cut off from that client), and when
//! a server crashes or stops (and its cache is lost).

use fdlab_protocol::{Nanos, Verdict};

use crate::faults::Schedule;
use crate::membership::outcome::ClusterOutcome;
use crate::outcome::{FaultRecord, RunOutcome, Window};
use crate::scenario::FaultKind;

/// One change, in the order the ledger applies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Server `server` becomes unreachable (`down`) or reachable again for
    /// client `client` (ground truth).
    Down {
        client: u32,
        server: u32,
        down: bool,
    },
    /// The set of crashed servers may have changed (ground truth).
    Crashes,
    /// Client `client`'s detector says Failed (`failed`) of `server`, or
    /// stops saying it.
    Verdict {
        client: u32,
        server: u32,
        failed: bool,
    },
}

/// The changes of one detector's run, sorted by time (then in the order
/// above, then by client and server: ground truth first, so a
/// declaration is judged against the truth of its instant).
pub fn changes(outcome: &RunOutcome, detector: usize, servers: u32) -> Vec<(Nanos, Change)> {
    let mut out = Vec::new();
    for pair in &outcome.pairs {
        debug_assert!(pair.monitor >= servers && pair.target < servers);
        let (client, server) = (pair.monitor - servers, pair.target);
        for w in &pair.must_detect {
            let (start, end) = (w.window.start, w.window.end);
            let down = |down| Change::Down {
                client,
                server,
                down,
            };
            out.push((start, down(true)));
            if end < outcome.duration {
                out.push((end, down(false)));
            }
        }
        let mut failed = false;
        for &(at, verdict) in &pair.detectors[detector].changes {
            let now = verdict == Verdict::Failed;
            if now != failed {
                failed = now;
                out.push((
                    at,
                    Change::Verdict {
                        client,
                        server,
                        failed,
                    },
                ));
            }
        }
    }
    for (_, w) in crash_windows(outcome) {
        out.push((w.start, Change::Crashes));
        out.push((w.end, Change::Crashes));
    }
    in_order(out)
}

/// The changes of a membership run whose clients place keys by their
/// views (SPEC §9: "or a membership view"): a client marks a server dead
/// while its view holds the server's latest generation Dead. A server is
/// down for a client while the schedule says the client must detect it
/// (`schedule`, the run's own) or while its process is down
/// ([`cluster_down`]: a crash, or an Orleans silo that read itself Dead
/// and stopped), and its cache is lost when its process stops.
pub fn cluster_changes(
    cluster: &ClusterOutcome,
    schedule: &Schedule,
    servers: u32,
) -> Vec<(Nanos, Change)> {
    let down = cluster_down(cluster, servers);
    let clients = cluster.nodes.len() as u32 - servers;
    let mut out = Vec::new();
    for client in 0..clients {
        for server in 0..servers {
            let windows: Vec<Window> = schedule
                .must_detect(servers + client, server)
                .iter()
                .map(|m| m.window)
                .chain(down.iter().filter(|d| d.0 == server).map(|d| d.1))
                .collect();
            for w in Window::union(windows) {
                let down = |down| Change::Down {
                    client,
                    server,
                    down,
                };
                out.push((w.start, down(true)));
                if w.end < cluster.duration {
                    out.push((w.end, down(false)));
                }
            }
        }
    }
    for (_, w) in &down {
        out.push((w.start, Change::Crashes));
        out.push((w.end, Change::Crashes));
    }
    for v in &cluster.views {
        debug_assert!(v.client >= servers && v.server < servers);
        out.push((
            v.at,
            Change::Verdict {
                client: v.client - servers,
                server: v.server,
                failed: v.dead,
            },
        ));
    }
    in_order(out)
}

/// `out` sorted by time, then in the order of [`Change::rank`] (stable: a
/// pair's own changes keep their order within an instant), with the crash
/// marks of one instant as one.
fn in_order(mut out: Vec<(Nanos, Change)>) -> Vec<(Nanos, Change)> {
    out.sort_by_key(|&(at, change)| (at, change.rank()));
    out.dedup_by(|a, b| a.0 == b.0 && a.1 == Change::Crashes && b.1 == Change::Crashes);
    out
}

impl Change {
    /// Within an instant: ground truth, then verdicts.
    fn rank(self) -> u8 {
        match self {
            Change::Down { .. } => 0,
            Change::Crashes => 1,
            Change::Verdict { .. } => 2,
        }
    }
}

/// The crash windows `[start, end)` of nodes (a restart ends one): when a
/// detector run's servers lose their caches.
pub fn crash_windows(outcome: &RunOutcome) -> Vec<(u32, Window)> {
    outcome
        .faults
        .iter()
        .filter(|f| f.kind == FaultKind::Crash)
        .filter_map(|f| f.node.map(|n| (n, f.window)))
        .collect()
}

/// When a membership run's servers' processes were down: their caches
/// are lost as they stop.
pub fn cluster_down(cluster: &ClusterOutcome, servers: u32) -> Vec<(u32, Window)> {
    cluster
        .stopped
        .iter()
        .filter(|(node, _)| *node < servers)
        .copied()
        .collect()
}

/// Whether server `server` is down (in one of `down`) at `at`.
pub fn crashed(down: &[(u32, Window)], server: u32, at: Nanos) -> bool {
    down.iter()
        .any(|&(s, w)| s == server && w.start <= at && at < w.end)
}

/// Server-time not crashed, summed over servers.
pub fn healthy_server_time(faults: &[FaultRecord], duration: Nanos, servers: u32) -> Nanos {
    let mut total = 0u128;
    for s in 0..servers {
        let mut down: Vec<(Nanos, Nanos)> = faults
            .iter()
            .filter(|f| f.kind == FaultKind::Crash && f.node == Some(s))
            .map(|f| (f.window.start, f.window.end.min(duration)))
            .collect();
        down.sort_unstable();
        // Overlapping windows count once.
        let (mut covered, mut reach) = (0u128, Nanos::ZERO);
        for (start, end) in down {
            let start = start.max(reach);
            if end > start {
                covered += u128::from((end - start).as_nanos());
                reach = end;
            }
        }
        total += u128::from(duration.as_nanos()) - covered;
    }
    Nanos(u64::try_from(total).unwrap_or(u64::MAX))
}
