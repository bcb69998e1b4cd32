//! main's learned probe timeout, one per monitored silo: Orleans'
//! `PhiAccrualFailureDetector`
//! (`src/Orleans.Runtime/MembershipService/PhiAccrualFailureDetector.cs` at
//! e558829b; absent in 10.2, which waits a fixed `probe_timeout`).
//!
//! The round trips of successful *direct* probes (lines 30-50; indirect
//! ones never enter, `SiloHealthMonitor.ProbeDirectly`) fill a window of
//! 100 (line 8). With fewer than 4 (line 9) the timeout is `probe_timeout`;
//! then `mean + k x max(std_dev, probe_timeout / (2k))` (lines 77-83), k the
//! z at which the logistic phi reaches 8 (lines 85-103, the same search as
//! [`crate::probe::threshold_std_devs`]). A probe waits that times its
//! extension factor (1 + local health score, + 1 if indirect), clamped to
//! `[min_probe_timeout, max_probe_timeout]` (lines 57-65,
//! `SiloHealthMonitor.CalculateProbeTimeout`). On a LAN the learned value
//! is about `mean + probe_timeout / 2`, so main probes a healthy peer every
//! ~2.5 s instead of every 5 s.
//!
//! The sums are exact integers ([`crate::window::SampleWindow`]) where
//! Orleans keeps floating running sums; the two agree to the nanosecond
//! for any window a run fills.

use crate::probe::{MIN_RTT_SAMPLES, RTT_WINDOW};
use crate::time::Nanos;
use crate::window::SampleWindow;

#[derive(Clone, Debug)]
pub(crate) struct LearnedTimeout {
    samples: SampleWindow,
}

impl LearnedTimeout {
    pub(crate) fn new() -> LearnedTimeout {
        LearnedTimeout {
            samples: SampleWindow::new(RTT_WINDOW),
        }
    }

    /// A direct probe answered after `rtt` (`RecordResponseTime`).
    pub(crate) fn record(&mut self, rtt: Nanos) {
        self.samples.push(rtt.as_nanos());
    }

    /// `GetTimeout()`: `initial` until enough samples, then the learned one.
    pub(crate) fn timeout(&self, initial: Nanos, k: f64) -> Nanos {
        if self.samples.len() < MIN_RTT_SAMPLES {
            return initial;
        }
        let floor = initial.as_nanos_f64() / (2.0 * k);
        let sd = self.samples.std_dev().max(floor);
        Nanos::from_nanos_f64(self.samples.mean() + k * sd)
    }

    /// `GetTimeout(min, max, extensionFactor)`.
    pub(crate) fn bounded(
        &self,
        initial: Nanos,
        k: f64,
        min: Nanos,
        max: Nanos,
        factor: u32,
    ) -> Nanos {
        debug_assert!(min <= max && factor >= 1);
        let t = self.timeout(initial, k).as_nanos_f64() * f64::from(factor);
        Nanos::from_nanos_f64(t.clamp(min.as_nanos_f64(), max.as_nanos_f64()))
    }
}

/// main's `CalculateIndirectProbeTargetTimeout` (`SiloHealthMonitor.cs:310-318`):
/// the intermediary waits the requester's timeout less a share left for
/// its answer to travel back, `timeout / (2 + score)`; 10.2 hands the
/// intermediary the whole timeout, so a target that does not answer makes
/// the requester give up first.
pub(crate) fn intermediary_wait(timeout: Nanos, score: u32) -> Nanos {
    /// A .NET tick: the least `Math.Max(1, ...)` leaves.
    const TICK: u64 = 100;
    let allowance = (timeout.as_nanos() / (u64::from(score) + 2)).max(TICK);
    timeout.saturating_sub(Nanos(allowance))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::threshold_std_devs;

    #[test]
    fn learns_mean_plus_half_the_initial_timeout_on_a_lan() {
        let k = threshold_std_devs();
        let initial = Nanos::from_secs(5);
        let (min, max) = (Nanos::from_millis(2_500), Nanos::from_secs(20));
        let mut t = LearnedTimeout::new();
        // PhiAccrualFailureDetector.cs:52-55: the initial timeout until 4.
        for _ in 0..3 {
            t.record(Nanos::from_millis(2));
        }
        assert_eq!(t.bounded(initial, k, min, max, 1), initial);
        t.record(Nanos::from_millis(2));
        // 2 ms + k x 5000/(2k) ms = 2.502 s.
        let learned = t.bounded(initial, k, min, max, 1);
        assert!(
            learned > Nanos::from_millis(2_501) && learned < Nanos::from_millis(2_503),
            "{learned}"
        );
        // An indirect probe (factor 2) and a stalled silo (factor 9).
        assert_eq!(
            t.bounded(initial, k, min, max, 2).as_nanos() / 1_000_000,
            5_004
        );
        assert_eq!(t.bounded(initial, k, min, max, 9), max);
    }

    #[test]
    fn the_intermediary_leaves_room_for_its_answer() {
        // SiloHealthMonitor.cs:310-318 (main): 5 s, score 0: 5 - 5/2.
        assert_eq!(
            intermediary_wait(Nanos::from_secs(5), 0),
            Nanos::from_millis(2_500)
        );
        assert_eq!(
            intermediary_wait(Nanos::from_secs(9), 1),
            Nanos::from_secs(6)
        );
    }
}
