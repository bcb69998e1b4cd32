//! The suspicion timer: how long a member stays Suspect before it is
//! declared Dead.
//!
//! Source: hashicorp/memberlist `suspicion.go` (`newSuspicion`,
//! `remainingSuspicionTime`, `Confirm`), `util.go` (`suspicionTimeout`) and
//! `state.go` (`suspectNode`: the choice of k); Lifeguard's LHA-Suspicion
//! (Dadgar et al. 2018, §IV-B); SPEC §8.2.
//!
//! - `min = suspicion_mult x max(1, log10 N) x probe_interval`, N the
//!   members in the list (this one included). As memberlist does, the
//!   scale `max(1, log10 N)` is kept to a thousandth (truncated).
//! - `max = suspicion_max_timeout_mult x min`.
//! - Plain SWIM waits `min`. Lifeguard starts at `max` and, after n
//!   independent confirmations (Suspect messages about the same member
//!   from distinct members, not counting the one that started it), waits
//!   `max - (max - min) x ln(n + 1) / ln(k + 1)` from the start, never less
//!   than `min`; memberlist floors it to a whole millisecond. k =
//!   `suspicion_mult - 2` ("hit the nominal timeout two probe intervals
//!   short"), or 0 when fewer than k members other than the suspect and
//!   this one exist; with k = 0 the timeout is `min` from the start.
//!   Confirmations past k are not counted (nor re-gossiped).
//!
//! Transcendental functions come from `libm`, as in [`crate::phi`], so a
//! run gives the same instants on every platform.

use crate::time::{Nanos, NANOS_PER_MILLI};

use super::config::SwimConfig;
use super::members::MemberId;

/// Thousandths: memberlist keeps the cluster-size scale to 1/1000.
const SCALE_PRECISION: f64 = 1_000.0;

/// The shortest suspicion timeout for a list of `n` members:
/// `suspicion_mult x max(1, log10 n) x probe_interval`.
pub fn suspicion_min(suspicion_mult: u32, n: usize, probe_interval: Nanos) -> Nanos {
    let scale = libm::log10((n as f64).max(1.0)).max(1.0);
    // `as` truncates, as memberlist's `time.Duration(nodeScale * 1000)`.
    let milli_scale = (scale * SCALE_PRECISION) as u128;
    let ns = u128::from(suspicion_mult) * milli_scale * u128::from(probe_interval.as_nanos())
        / SCALE_PRECISION as u128;
    Nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// The timeout, counted from the start of the suspicion, after
/// `confirmations` of the `k` wanted (memberlist's
/// `remainingSuspicionTime` plus the elapsed time).
pub fn suspicion_timeout(confirmations: u32, k: u32, min: Nanos, max: Nanos) -> Nanos {
    if k == 0 {
        return min;
    }
    if confirmations == 0 {
        return max;
    }
    let frac = libm::log(f64::from(confirmations) + 1.0) / libm::log(f64::from(k) + 1.0);
    let raw = max.as_secs_f64() - frac * (max.as_secs_f64() - min.as_secs_f64());
    let millis = libm::floor(1_000.0 * raw).max(0.0) as u64;
    Nanos(millis.saturating_mul(NANOS_PER_MILLI)).max(min)
}

/// The parameters of a suspicion started in a list of `n` members:
/// `(k, min, max)`.
pub fn suspicion_bounds(config: &SwimConfig, n: usize) -> (u32, Nanos, Nanos) {
    let wanted = if config.dogpile {
        config.suspicion_mult.saturating_sub(2)
    } else {
        0
    };
    // Not counting this member and the suspect.
    let others = n.saturating_sub(2);
    let k = if others < wanted as usize { 0 } else { wanted };
    let min = suspicion_min(config.suspicion_mult, n, config.probe_interval);
    let max = Nanos(
        min.as_nanos()
            .saturating_mul(u64::from(config.suspicion_max_timeout_mult)),
    );
    (k, min, max)
}

/// One running suspicion of one member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suspicion {
    start: Nanos,
    k: u32,
    min: Nanos,
    max: Nanos,
    confirmations: u32,
    /// The member that started it, then every confirmer (at most k + 1).
    seen: Vec<MemberId>,
}

impl Suspicion {
    /// A suspicion started at `start` on the word of `from` (who will not
    /// count as a confirmation: our own suspicion may be gossiped back).
    pub fn new(from: MemberId, start: Nanos, k: u32, min: Nanos, max: Nanos) -> Suspicion {
        debug_assert!(min <= max);
        Suspicion {
            start,
            k,
            min,
            max,
            confirmations: 0,
            seen: vec![from],
        }
    }

    /// A confirmation from `from`: true if it was new (and counted).
    pub fn confirm(&mut self, from: MemberId) -> bool {
        if self.confirmations >= self.k || self.seen.contains(&from) {
            return false;
        }
        self.seen.push(from);
        self.confirmations += 1;
        debug_assert!(self.seen.len() as u32 == self.confirmations + 1);
        true
    }

    pub fn start(&self) -> Nanos {
        self.start
    }

    pub fn confirmations(&self) -> u32 {
        self.confirmations
    }

    /// The whole timeout, from the start, given the confirmations so far.
    pub fn timeout(&self) -> Nanos {
        suspicion_timeout(self.confirmations, self.k, self.min, self.max)
    }

    /// When the suspect is declared Dead unless it refutes first.
    pub fn deadline(&self) -> Nanos {
        self.start + self.timeout()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }

    #[test]
    fn min_and_max_for_100_members_with_lan_defaults() {
        let c = SwimConfig::default();
        // 4 x log10(100) x 1 s = 4 x 2 x 1 s = 8 s; max = 6 x 8 s = 48 s.
        let (k, min, max) = suspicion_bounds(&c, 100);
        assert_eq!((k, min, max), (2, s(8), s(48)));
    }

    #[test]
    fn the_scale_is_kept_to_a_thousandth_and_at_least_one() {
        // log10(50) = 1.69897..., kept as 1.698: 4 x 1.698 x 1 s = 6.792 s.
        assert_eq!(suspicion_min(4, 50, s(1)), Nanos::from_millis(6_792));
        // log10(5) < 1: the scale is 1.
        assert_eq!(suspicion_min(4, 5, s(1)), s(4));
        assert_eq!(suspicion_min(4, 0, s(1)), s(4));
        // 1,000 members: 4 x 3 x 1 s.
        assert_eq!(suspicion_min(4, 1_000, s(1)), s(12));
    }

    #[test]
    fn lifeguard_timeout_after_confirmations_by_hand() {
        // N = 100: min 8 s, max 48 s, k = 4 - 2 = 2.
        // n = 0: max = 48 s.
        // n = 1: 48 - 40 x ln 2 / ln 3 = 48 - 40 x 0.630929753... = 22.76280985... s,
        //        floored to the millisecond: 22.762 s.
        // n = 2: 48 - 40 x ln 3 / ln 3 = 8 s = min.
        let (k, min, max) = suspicion_bounds(&SwimConfig::default(), 100);
        let from = MemberId(7);
        let mut sus = Suspicion::new(from, s(100), k, min, max);
        assert_eq!(sus.timeout(), s(48));
        assert_eq!(sus.deadline(), s(148));
        // The starter's own word, gossiped back, is no confirmation.
        assert!(!sus.confirm(from));
        assert!(sus.confirm(MemberId(1)));
        assert_eq!(sus.timeout(), Nanos::from_millis(22_762));
        // The same confirmer twice counts once.
        assert!(!sus.confirm(MemberId(1)));
        assert_eq!(sus.confirmations(), 1);
        assert!(sus.confirm(MemberId(2)));
        assert_eq!(sus.timeout(), s(8));
        // Past k, nothing more is counted.
        assert!(!sus.confirm(MemberId(3)));
        assert_eq!(sus.confirmations(), 2);
        assert_eq!(sus.deadline(), s(108));
    }

    #[test]
    fn plain_swim_waits_min_whatever_the_confirmations() {
        let c = SwimConfig::preset(super::super::config::Variant::Swim);
        let (k, min, max) = suspicion_bounds(&c, 100);
        assert_eq!(k, 0);
        let mut sus = Suspicion::new(MemberId(7), s(0), k, min, max);
        assert_eq!(sus.timeout(), s(8));
        assert!(!sus.confirm(MemberId(1)));
        assert_eq!(sus.timeout(), s(8));
    }

    #[test]
    fn small_clusters_want_no_confirmations() {
        // Three members: one other than me and the suspect, fewer than k = 2.
        let (k, min, _) = suspicion_bounds(&SwimConfig::default(), 3);
        assert_eq!(k, 0);
        assert_eq!(
            suspicion_timeout(0, k, min, Nanos(6 * min.as_nanos())),
            s(4)
        );
        // Four members: two others, k = 2.
        assert_eq!(suspicion_bounds(&SwimConfig::default(), 4).0, 2);
    }

    #[test]
    fn never_below_min() {
        // More confirmations than k (not reachable through `confirm`) still
        // give min.
        assert_eq!(suspicion_timeout(9, 2, s(8), s(48)), s(8));
    }
}
