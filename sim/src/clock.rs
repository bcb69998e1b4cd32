//! A node's local clock: `local = true * (1 + drift) + offset`, with offset
//! steps and drift changes as faults.
//!
//! Local clocks start at [`LOCAL_EPOCH`] rather than zero so that a negative
//! offset stays representable as an unsigned instant. Detectors only ever see
//! local time, so their behaviour under drift and steps is what the simulation
//! shows.

use fdlab_protocol::Nanos;

/// Where local clocks start: 10^6 s, far enough from zero for any offset step.
pub const LOCAL_EPOCH: Nanos = Nanos::from_secs(1_000_000);

/// A piecewise-linear map from true time to local time.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    anchor_true: u64,
    anchor_local: i64,
    rate: f64,
    /// `rate == 1.0`, kept: a flag is one test on every reading, a float
    /// comparison three instructions and a load.
    exact: bool,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            anchor_true: 0,
            anchor_local: LOCAL_EPOCH.as_nanos() as i64,
            rate: 1.0,
            exact: true,
        }
    }
}

/// `elapsed` ns of true time on a clock running at `rate`, rounded. Out of
/// line: where it was inlined, the compiler computed the rounding (a
/// library call on x86-64's baseline) on every clock reading, drifting or
/// not, and kept the result only for a drifting clock: 3% of a large
/// mesh's run, where no clock drifts.
#[inline(never)]
fn drifted(elapsed: u64, rate: f64) -> i64 {
    (elapsed as f64 * rate).round() as i64
}

impl Clock {
    /// A clock with a drift (1e-4 = 100 ppm fast) and an initial offset in ns.
    pub fn new(drift: f64, offset: i64) -> Clock {
        Clock {
            anchor_true: 0,
            anchor_local: LOCAL_EPOCH.as_nanos() as i64 + offset,
            rate: 1.0 + drift,
            exact: 1.0 + drift == 1.0,
        }
    }

    #[inline(always)]
    fn local_i64(&self, at: Nanos) -> i64 {
        let elapsed = at.as_nanos().saturating_sub(self.anchor_true);
        let scaled = if self.exact {
            elapsed as i64
        } else {
            drifted(elapsed, self.rate)
        };
        self.anchor_local.saturating_add(scaled)
    }

    /// Local time at true time `at`.
    pub fn local(&self, at: Nanos) -> Nanos {
        Nanos(self.local_i64(at).max(0) as u64)
    }

    /// The first true instant, not before `not_before`, at which local time has
    /// reached `local`.
    pub fn true_at(&self, local: Nanos, not_before: Nanos) -> Nanos {
        let target = local.as_nanos() as i64;
        if self.local_i64(not_before) >= target {
            return not_before;
        }
        if self.exact {
            // A clock without drift is a shift: invert it exactly.
            let ahead = (target - self.anchor_local) as u64;
            return Nanos(self.anchor_true.saturating_add(ahead)).max(not_before);
        }
        self.true_at_drifting(target, not_before)
    }

    /// [`Clock::true_at`] of a drifting clock (out of line, as [`drifted`]).
    #[inline(never)]
    fn true_at_drifting(&self, target: i64, not_before: Nanos) -> Nanos {
        let ahead = (target - self.anchor_local) as f64 / self.rate;
        let mut t = Nanos(
            self.anchor_true
                .saturating_add(ahead.ceil().max(0.0) as u64),
        );
        // Rounding of the float map: step to the first instant that qualifies.
        while self.local_i64(t) < target && t < Nanos::MAX {
            t = t + Nanos(1);
        }
        while t > not_before && self.local_i64(t - Nanos(1)) >= target {
            t = t - Nanos(1);
        }
        t.max(not_before)
    }

    /// Steps the clock by `offset` ns at true time `at`.
    pub fn step(&mut self, at: Nanos, offset: i64) {
        self.reanchor(at);
        self.anchor_local = self.anchor_local.saturating_add(offset);
    }

    /// Sets a new drift from true time `at` on, without a jump.
    pub fn set_drift(&mut self, at: Nanos, drift: f64) {
        self.reanchor(at);
        self.rate = 1.0 + drift;
        self.exact = self.rate == 1.0;
    }

    fn reanchor(&mut self, at: Nanos) {
        self.anchor_local = self.local_i64(at);
        self.anchor_true = at.as_nanos();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_clock_is_the_epoch_plus_true_time() {
        let c = Clock::default();
        assert_eq!(c.local(Nanos(5)), LOCAL_EPOCH + Nanos(5));
        assert_eq!(c.true_at(LOCAL_EPOCH + Nanos(99), Nanos::ZERO), Nanos(99));
    }

    #[test]
    fn drift_and_steps_invert() {
        let mut c = Clock::new(0.01, -2_000_000_000);
        c.step(Nanos::from_secs(10), 5_000_000);
        c.set_drift(Nanos::from_secs(20), -0.003);
        for t in [0u64, 1, 999, 10_000_000_000, 15_123_456_789, 40_000_000_001] {
            let local = c.local(Nanos(t));
            let back = c.true_at(local, Nanos::ZERO);
            assert!(c.local(back) >= local);
            assert!(
                back == Nanos::ZERO || c.local(back - Nanos(1)) < local,
                "{t}"
            );
        }
        // 1% fast: 10 s of true time are 10.1 s of local time.
        let c = Clock::new(0.01, 0);
        assert_eq!(
            c.local(Nanos::from_secs(10)) - c.local(Nanos::ZERO),
            Nanos::from_millis(10_100)
        );
    }
}
