//! What a placement run's ledger reacts to besides requests, read off the
//! detectors' run ([`RunOutcome`]): each client's detector verdicts on
//! each server, when a server is down *for a client* (its must-detect
//! windows: crashed, paused past tolerance, or cut off from that client),
//! and when a server crashes (and its cache is lost).

use fdlab_protocol::{Nanos, Verdict};

use crate::outcome::RunOutcome;
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
    for f in crashes(outcome) {
        out.push((f.0, Change::Crashes));
        out.push((f.1, Change::Crashes));
    }
    // Stable: a pair's own changes keep their order within an instant.
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

/// The crash windows `[start, end)` of servers (a restart ends one).
fn crashes(outcome: &RunOutcome) -> impl Iterator<Item = (Nanos, Nanos)> + '_ {
    outcome
        .faults
        .iter()
        .filter(|f| f.kind == FaultKind::Crash && f.node.is_some())
        .map(|f| (f.window.start, f.window.end))
}

/// Whether server `server` is crashed at `at`.
pub fn crashed(outcome: &RunOutcome, server: u32, at: Nanos) -> bool {
    outcome.faults.iter().any(|f| {
        f.kind == FaultKind::Crash
            && f.node == Some(server)
            && f.window.start <= at
            && at < f.window.end
    })
}

/// Server-time not crashed, summed over servers.
pub fn healthy_server_time(outcome: &RunOutcome, servers: u32) -> Nanos {
    let mut total = 0u128;
    for s in 0..servers {
        let mut down: Vec<(Nanos, Nanos)> = outcome
            .faults
            .iter()
            .filter(|f| f.kind == FaultKind::Crash && f.node == Some(s))
            .map(|f| (f.window.start, f.window.end.min(outcome.duration)))
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
        total += u128::from(outcome.duration.as_nanos()) - covered;
    }
    Nanos(u64::try_from(total).unwrap_or(u64::MAX))
}
