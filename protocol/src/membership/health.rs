//! The local health score of a silo (0 healthy .. 8), after Orleans'
//! `LocalSiloHealthMonitor`: a silo that may itself be the problem waits
//! longer before blaming others, and refuses to judge for others as an
//! intermediary.
//!
//! Components, as SPEC §8.1 lists them: +1 per fresh vote against the silo
//! itself; +1 per whole second of processing delay (a stall the host
//! reported within the last `probe_timeout x num_missed_probes_limit`);
//! +1 if none of its probes was answered in that window; +1 if no probe of
//! it arrived in that window while more than two silos are Active; 8 while
//! it is not Active. Deviation: Orleans samples these on a timer; fdlab
//! computes them at the instant they are needed.

use crate::time::Nanos;

use super::config::{OrleansConfig, MAX_HEALTH_SCORE};

#[derive(Clone, Debug)]
pub(crate) struct Health {
    active_since: Nanos,
    last_probe_success: Nanos,
    last_probe_request: Nanos,
    /// The largest recent stall: when it ended, and its length.
    stall_at: Nanos,
    stall: Nanos,
    /// The score last told to the judges.
    pub(crate) reported: u32,
}

impl Health {
    pub(crate) fn new(now: Nanos) -> Health {
        Health {
            active_since: now,
            last_probe_success: now,
            last_probe_request: now,
            stall_at: now,
            stall: Nanos::ZERO,
            reported: MAX_HEALTH_SCORE,
        }
    }

    pub(crate) fn activated(&mut self, now: Nanos) {
        self.active_since = now;
    }

    pub(crate) fn probe_answered(&mut self, now: Nanos) {
        self.last_probe_success = now;
    }

    pub(crate) fn probe_request(&mut self, now: Nanos) {
        self.last_probe_request = now;
    }

    /// A stall of `stall` ended at `now`: kept if it is the largest within
    /// the window.
    pub(crate) fn stall(&mut self, now: Nanos, stall: Nanos, window: Nanos) {
        if stall >= self.stall || now - self.stall_at >= window {
            self.stall = stall;
            self.stall_at = now;
        }
    }

    pub(crate) fn score(
        &self,
        now: Nanos,
        config: &OrleansConfig,
        votes_against_me: u32,
        monitoring: bool,
        active_silos: usize,
    ) -> u32 {
        let window = config.health_window();
        let mut score = votes_against_me;
        if now - self.stall_at < window {
            score += (self.stall.as_nanos() / crate::time::NANOS_PER_SEC) as u32;
        }
        let quiet = |since: Nanos| now - since.max(self.active_since) >= window;
        if monitoring && quiet(self.last_probe_success) {
            score += 1;
        }
        if active_silos > 2 && quiet(self.last_probe_request) {
            score += 1;
        }
        score.min(MAX_HEALTH_SCORE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }

    #[test]
    fn steps_of_the_score() {
        let c = OrleansConfig::default(); // window 15 s
        let mut h = Health::new(s(0));
        h.activated(s(10));
        assert_eq!(h.score(s(20), &c, 0, true, 5), 0);
        // No probe answered and none received for 15 s: +1 each.
        assert_eq!(h.score(s(25), &c, 0, true, 5), 2);
        // Not monitoring anyone, two silos: neither counts.
        assert_eq!(h.score(s(25), &c, 0, false, 2), 0);
        h.probe_answered(s(24));
        h.probe_request(s(24));
        assert_eq!(h.score(s(25), &c, 0, true, 5), 0);
        // Votes against me.
        assert_eq!(h.score(s(25), &c, 2, true, 5), 2);
        // A 3.5 s stall: 3 whole seconds, for the window after it.
        h.stall(s(26), Nanos::from_millis(3_500), c.health_window());
        assert_eq!(h.score(s(27), &c, 0, true, 5), 3);
        assert_eq!(h.score(s(38), &c, 0, true, 5), 3);
        assert_eq!(h.score(s(41), &c, 0, true, 5), 2); // stall expired; probes now quiet
                                                       // Capped at 8.
        h.stall(s(50), s(30), c.health_window());
        assert_eq!(h.score(s(51), &c, 1, true, 5), MAX_HEALTH_SCORE);
    }
}
