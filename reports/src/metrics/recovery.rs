//! Recovery lag: how long a detector keeps distrusting a target after the
//! fault that it rightly suspected has ended.
//!
//! Chen, Toueg & Aguilera (2002) judge a detector on runs where the target
//! either crashes for good or never fails, so their query accuracy P_A (the
//! probability that the verdict is right at a random instant while the target
//! is up) has no "after the fault" to account for. In a simulated run faults
//! heal (a partition ends, a paused process resumes, a node restarts), and a
//! detector that declared the target Failed needs fresh evidence (a heartbeat,
//! a frame, a probe reply) before it trusts it again. That stretch is not a
//! mistake (no wrong suspicion began: the suspicion was right when it began),
//! yet the verdict is wrong during it. Counting it against P_A mixes two
//! different questions: "does it cry wolf about healthy peers?" and "how fast
//! does it notice a peer is back?". fdlab answers them apart:
//!
//! - A **recovery** begins at the end of must-detect time (the instant its
//!   last detect-fault ended), when that instant is judged (the monitor is up)
//!   and falls before the end of the run, and the verdict just before it was
//!   Suspect or Failed (the detector was suspecting the target when the fault
//!   ended). It ends at the first instant from then on at which the verdict is
//!   Alive: the **recovery lag** is that instant minus the fault's end (zero
//!   when the verdict turns Alive at the very instant the fault ends). When the
//!   verdict is not Alive again before must-not-detect time ends (another
//!   detect-fault begins, the monitor goes down, or the run ends), the
//!   recovery is **unfinished**: it has no lag, and is counted apart, like a
//!   missed detection.
//! - **Healthy time** is must-not-detect time minus every recovery window
//!   (`[fault end, first Alive)`, or to the end of that must-not-detect time
//!   for an unfinished recovery). Query accuracy over healthy time, P_A, is
//!   then Chen et al.'s question alone: the share of healthy time with an
//!   Alive verdict. A detector that makes no mistake has P_A = 100%, however
//!   slowly it recovers. (The one other way a verdict can be wrong in healthy
//!   time without a mistake, a verdict already non-Alive when the monitor's
//!   own downtime ends, does not occur in simulated runs: a restarted monitor
//!   starts a fresh detector, which trusts every peer.)

use fdlab_protocol::{Nanos, Verdict};
use fdlab_sim::outcome::PairOutcome;

use super::judge::Truth;

/// One recovery of one pair, as one detector went through it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recovery {
    pub monitor: u32,
    pub target: u32,
    /// Index into [`RunOutcome::faults`](fdlab_sim::outcome::RunOutcome::faults):
    /// the fault whose end ended must-detect time.
    pub fault: usize,
    /// When must-detect time ended.
    pub from: Nanos,
    /// When the verdict was Alive again; `None`: not before must-not-detect
    /// time ended (the recovery is unfinished).
    pub alive_at: Option<Nanos>,
    /// The end of the recovery window: `alive_at`, or the end of that
    /// must-not-detect time.
    pub until: Nanos,
}

impl Recovery {
    /// The recovery lag; `None` for an unfinished recovery.
    pub fn lag(&self) -> Option<Nanos> {
        self.alive_at.map(|t| t - self.from)
    }
}

/// The recoveries of one pair, in time order. `changes` are the effective
/// verdict changes (one per instant, each a change, before `end`).
pub(super) fn recoveries(
    pair: &PairOutcome,
    truth: &Truth,
    changes: &[(u64, Verdict)],
    end: u64,
) -> Vec<Recovery> {
    let mut out = Vec::new();
    let mnd = &truth.must_not_detect;
    for &(_, fault_end) in &truth.must_detect {
        // Judged and before the end of the run: must-not-detect time follows.
        let i = mnd.partition_point(|&(_, e)| e <= fault_end);
        let Some(&(start, stop)) = mnd.get(i) else {
            continue;
        };
        if start > fault_end || fault_end >= end {
            continue;
        }
        let k = changes.partition_point(|&(t, _)| t < fault_end);
        let before = if k == 0 {
            Verdict::Alive
        } else {
            changes[k - 1].1
        };
        if before == Verdict::Alive {
            continue;
        }
        let Some(fault) = pair
            .must_detect
            .iter()
            .find(|m| m.window.end.0.min(end) == fault_end)
            .map(|m| m.fault)
        else {
            continue;
        };
        let alive_at = changes[k..]
            .iter()
            .take_while(|&&(t, _)| t < stop)
            .find(|&&(_, v)| v == Verdict::Alive)
            .map(|&(t, _)| t);
        out.push(Recovery {
            monitor: pair.monitor,
            target: pair.target,
            fault,
            from: Nanos(fault_end),
            alive_at: alive_at.map(Nanos),
            until: Nanos(alive_at.unwrap_or(stop)),
        });
    }
    out
}
