//! Lifeguard's Local Health Multiplier (LHM): how much this member
//! distrusts its own judgement.
//!
//! Source: hashicorp/memberlist `awareness.go` (`ApplyDelta`,
//! `ScaleTimeout`) and where `state.go` applies deltas (`probeNode`,
//! `refute`); Lifeguard's LHA-Probe (Dadgar et al. 2018, §IV-A); SPEC §8.2.
//!
//! A score in `0..awareness_max_multiplier` (0 healthy). Durations it
//! scales are multiplied by score + 1. The events that move it:
//! - -1 after a probe that got its ack (directly or through a ping-req);
//! - after a probe that failed, + the nacks that did not come (each
//!   ping-req asked for one); +1 if no nack was asked for (no member could
//!   probe indirectly): memberlist's `awarenessDelta`;
//! - +1 each time this member must refute a suspicion (or a death) of
//!   itself.
//!
//! With `local_health_multiplier` off the agent never applies a delta,
//! and the score stays 0 (plain SWIM).

use crate::time::Nanos;

/// The local health score and its bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Awareness {
    /// The score stays below this (`awareness_max_multiplier`).
    max: u32,
    score: u32,
}

impl Awareness {
    /// A healthy member (score 0); `max` is at least 1.
    pub fn new(max: u32) -> Awareness {
        debug_assert!(max >= 1);
        Awareness {
            max: max.max(1),
            score: 0,
        }
    }

    /// Adds `delta`, clamped to `0..max`.
    pub fn apply_delta(&mut self, delta: i64) {
        let top = i64::from(self.max - 1);
        self.score = (i64::from(self.score) + delta).clamp(0, top) as u32;
        debug_assert!(self.score < self.max);
    }

    pub fn score(&self) -> u32 {
        self.score
    }

    /// `duration x (score + 1)`.
    pub fn scale(&self, duration: Nanos) -> Nanos {
        Nanos(
            duration
                .as_nanos()
                .saturating_mul(u64::from(self.score) + 1),
        )
    }

    /// The delta after a failed probe that asked `expected` members for a
    /// nack and got `received` of them.
    pub fn failed_probe_delta(expected: u32, received: u32) -> i64 {
        if expected == 0 {
            1
        } else {
            i64::from(expected.saturating_sub(received))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_bounds() {
        let mut a = Awareness::new(8);
        assert_eq!(a.score(), 0);
        // A success at 0 stays at 0.
        a.apply_delta(-1);
        assert_eq!(a.score(), 0);
        // A failed probe with 3 ping-reqs and 1 nack back: +2.
        a.apply_delta(Awareness::failed_probe_delta(3, 1));
        assert_eq!(a.score(), 2);
        // A refutation: +1.
        a.apply_delta(1);
        assert_eq!(a.score(), 3);
        // A success: -1.
        a.apply_delta(-1);
        assert_eq!(a.score(), 2);
        // Every nack back: no change.
        a.apply_delta(Awareness::failed_probe_delta(3, 3));
        assert_eq!(a.score(), 2);
        // No ping-req could be sent: +1.
        a.apply_delta(Awareness::failed_probe_delta(0, 0));
        assert_eq!(a.score(), 3);
        // Capped at max - 1 = 7.
        a.apply_delta(100);
        assert_eq!(a.score(), 7);
        a.apply_delta(Awareness::failed_probe_delta(3, 0));
        assert_eq!(a.score(), 7);
        a.apply_delta(-100);
        assert_eq!(a.score(), 0);
    }

    #[test]
    fn scales_by_score_plus_one() {
        let mut a = Awareness::new(8);
        assert_eq!(a.scale(Nanos::from_secs(1)), Nanos::from_secs(1));
        a.apply_delta(3);
        assert_eq!(a.scale(Nanos::from_secs(1)), Nanos::from_secs(4));
        assert_eq!(a.scale(Nanos::from_millis(500)), Nanos::from_secs(2));
        // A multiplier of 1: the score can not move.
        let mut one = Awareness::new(1);
        one.apply_delta(5);
        assert_eq!(one.score(), 0);
    }
}
