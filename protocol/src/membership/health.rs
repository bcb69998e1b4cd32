//! The local health score of a silo (0 healthy .. 8): a silo that may
//! itself be the problem waits longer before blaming others, and its
//! failure reports as an intermediary are not believed. What the score
//! counts differs between the versions.
//!
//! **10.2** (`LocalSiloHealthMonitor.GetLocalHealthDegradationScore`,
//! `src/Orleans.Runtime/MembershipService/LocalSiloHealthMonitor.cs:103-134`
//! at v10.2.2), read at the instant it is needed:
//! - 8 while the silo is not Active (`CheckSuspectingNodes`, line 160);
//! - +1 per fresh vote against it by an Active silo (lines 169-179);
//! - +1 per whole second of thread-pool queue delay (`CheckThreadPoolQueueDelay`,
//!   lines 136-152): the delay of the last work item the pool ran, which in
//!   fdlab is the lateness of the event the silo is handling now (a stall
//!   the host reported at this instant);
//! - once the silo has been in a cluster of two or more for
//!   `probe_timeout x num_missed_probes_limit` (lines 110-128): +1 if none of
//!   its monitors heard a response within that window while it monitors
//!   more than one silo (`ProbingSiloHealthMonitor.CheckReceivedProbeResponses`),
//!   +1 if no probe arrived within it while more than two silos are Active
//!   (`CheckReceivedProbeRequests`).
//!
//! **main** (`LocalSiloHealthMonitor.cs` at e558829b): the probe wait and an
//! intermediary's answer use the *Local* category only
//! (`SiloHealthMonitor.GetLocalDegradationScore`, `MembershipSystemTarget.ProbeIndirectly`):
//! the worst thread-pool delay sampled within the interval asked about
//! (whole seconds, sampled every second, kept a minute: lines 115-116,
//! 353-376), plus 1 for a runtime stall longer than two 1 s watchdog
//! heartbeats (`Watchdog.cs:119`). Votes, status and probe traffic are the
//! *Network* category, which main only logs.
//!
//! Deviations: the health-check participants (+1 for each of
//! `MembershipTableManager`, `ClusterHealthMonitor` and `MembershipAgent`
//! whose timer is more than 3 s late when the score is read) are left out:
//! whether a timer is still late when the score is read depends on the
//! order threads resume after a stall, and the thread-pool delay of such a
//! stall already scores 3 or more. The cluster's size is taken from the
//! silo's view when the score is read, not sampled every ten seconds.

use std::collections::VecDeque;

use crate::time::{Nanos, NANOS_PER_SEC};

use super::config::{OrleansConfig, MAX_HEALTH_SCORE};

/// main keeps a minute of health history (`HistoryDuration`).
const HISTORY: Nanos = Nanos::from_secs(60);
/// main's watchdog counts a runtime stall past two of its 1 s heartbeats
/// (`Watchdog.cs:26` and `:119`).
const RUNTIME_STALL: Nanos = Nanos::from_secs(2);

#[derive(Clone, Debug)]
pub(crate) struct Health {
    /// When the silo became Active (its cluster's "clustered since").
    active_since: Nanos,
    /// The last probe that arrived (`ElapsedSinceLastProbeRequest`), if any.
    last_probe_request: Option<Nanos>,
    /// The lateness of the event handled at `delay_at` (10.2's thread pool).
    delay: Nanos,
    delay_at: Nanos,
    /// main: recent stalls `(ended, length)` within the history, with
    /// strictly decreasing lengths (a later, longer stall hides an earlier
    /// one for every window that ends after both).
    stalls: VecDeque<(Nanos, Nanos)>,
    /// The score last told to the judges.
    pub(crate) reported: u32,
}

/// What the 10.2 score reads from the silo's state.
pub(crate) struct Inputs {
    pub(crate) active: bool,
    pub(crate) votes_against_me: u32,
    /// Silos Active in the view.
    pub(crate) active_silos: usize,
    /// Silos this one monitors, and the latest response any of them had.
    pub(crate) monitors: usize,
    pub(crate) last_response: Option<Nanos>,
}

impl Health {
    pub(crate) fn new(now: Nanos) -> Health {
        Health {
            active_since: now,
            last_probe_request: None,
            delay: Nanos::ZERO,
            delay_at: now,
            stalls: VecDeque::new(),
            reported: MAX_HEALTH_SCORE,
        }
    }

    pub(crate) fn activated(&mut self, now: Nanos) {
        self.active_since = now;
    }

    pub(crate) fn probe_request(&mut self, now: Nanos) {
        self.last_probe_request = Some(now);
    }

    /// The event handled at `now` waited `stall` past its due time.
    pub(crate) fn stall(&mut self, now: Nanos, stall: Nanos) {
        self.delay = stall;
        self.delay_at = now;
        while self
            .stalls
            .front()
            .is_some_and(|&(at, _)| now - at > HISTORY)
        {
            self.stalls.pop_front();
        }
        while self.stalls.back().is_some_and(|&(_, len)| len <= stall) {
            self.stalls.pop_back();
        }
        self.stalls.push_back((now, stall));
    }

    /// 10.2's score at `now`.
    pub(crate) fn score_10_2(&self, now: Nanos, config: &OrleansConfig, inputs: &Inputs) -> u32 {
        let mut score = if inputs.active { 0 } else { MAX_HEALTH_SCORE };
        score += inputs.votes_against_me;
        if self.delay_at == now {
            score += whole_seconds(self.delay);
        }
        let window = config.failure_detection_window();
        if inputs.active && inputs.active_silos > 1 && now - self.active_since > window {
            let quiet = |last: Option<Nanos>| last.is_none_or(|t| now - t > window);
            if inputs.monitors > 1 && quiet(inputs.last_response) {
                score += 1;
            }
            if inputs.active_silos > 2 && quiet(self.last_probe_request) {
                score += 1;
            }
        }
        score.min(MAX_HEALTH_SCORE)
    }

    /// main's Local score over `[now - lookback, now]` (at most a minute).
    pub(crate) fn score_main(&self, now: Nanos, lookback: Nanos) -> u32 {
        let since = now.saturating_sub(lookback.min(HISTORY));
        let worst = self
            .stalls
            .iter()
            .filter(|&&(at, _)| at >= since && at <= now)
            .map(|&(_, len)| len)
            .max()
            .unwrap_or_default();
        let stalled = u32::from(worst > RUNTIME_STALL);
        (whole_seconds(worst) + stalled).min(MAX_HEALTH_SCORE)
    }
}

fn whole_seconds(d: Nanos) -> u32 {
    u32::try_from(d.as_nanos() / NANOS_PER_SEC).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::membership::config::OrleansVersion;

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }

    fn inputs(active_silos: usize, last_response: Option<Nanos>) -> Inputs {
        Inputs {
            active: true,
            votes_against_me: 0,
            active_silos,
            monitors: 4,
            last_response,
        }
    }

    /// LocalSiloHealthMonitor.cs (v10.2.2) lines 103-134.
    #[test]
    fn the_10_2_score_counts_votes_delay_and_quiet_probes() {
        let c = OrleansConfig::default(); // window 15 s
        let mut h = Health::new(s(0));
        h.activated(s(10));
        h.probe_request(s(10));
        assert_eq!(h.score_10_2(s(20), &c, &inputs(5, Some(s(19)))), 0);
        // No response and no probe for more than 15 s: +1 each.
        assert_eq!(h.score_10_2(s(26), &c, &inputs(5, Some(s(10)))), 2);
        // Two silos: the request check is off (ProbingSiloHealthMonitor:
        // activeNodeCount <= 2), one monitor: the response check too.
        let two = Inputs {
            monitors: 1,
            ..inputs(2, Some(s(10)))
        };
        assert_eq!(h.score_10_2(s(26), &c, &two), 0);
        // Fresh votes against it, and not Active.
        let voted = Inputs {
            votes_against_me: 2,
            ..inputs(5, Some(s(19)))
        };
        h.probe_request(s(19));
        assert_eq!(h.score_10_2(s(20), &c, &voted), 2);
        let joining = Inputs {
            active: false,
            ..inputs(5, None)
        };
        assert_eq!(h.score_10_2(s(20), &c, &joining), MAX_HEALTH_SCORE);
        // A 3.5 s delay counts for the event handled at that instant only.
        h.stall(s(21), Nanos::from_millis(3_500));
        assert_eq!(h.score_10_2(s(21), &c, &inputs(5, Some(s(21)))), 3);
        assert_eq!(h.score_10_2(s(22), &c, &inputs(5, Some(s(21)))), 0);
    }

    /// main: the worst Local event in the interval asked about.
    #[test]
    fn the_main_score_is_the_worst_stall_of_the_interval() {
        let c = OrleansConfig::of(OrleansVersion::Main);
        let _ = c;
        let mut h = Health::new(s(0));
        h.stall(s(10), Nanos::from_millis(1_500));
        assert_eq!(h.score_main(s(11), s(5)), 1);
        // Past 2 s the watchdog's runtime stall adds one.
        h.stall(s(12), Nanos::from_millis(3_200));
        assert_eq!(h.score_main(s(13), s(5)), 4);
        // Out of the lookback: gone; a shorter later stall stays visible.
        h.stall(s(14), Nanos::from_millis(1_100));
        assert_eq!(h.score_main(s(16), Nanos::from_millis(2_500)), 1);
        assert_eq!(h.score_main(s(30), Nanos::from_millis(2_500)), 0);
        // Capped at 8, and the history is a minute.
        h.stall(s(40), s(30));
        assert_eq!(h.score_main(s(41), s(5)), MAX_HEALTH_SCORE);
        assert_eq!(h.score_main(s(110), s(120)), 0);
    }
}
