//! Orleans' two back-off rules, each a random wait drawn from the agent's
//! entropy.
//!
//! - [`exponential`] is `ExponentialBackoff.Next(attempt)`
//!   (`src/Orleans.Core/Async/AsyncExecutorWithRetries.cs:368-388` at
//!   10.2.2, 367-387 in main, the same code): uniform in `[min, min(max, min + step x 2^attempt))`.
//!   The suspect loop waits `Next(runningFailureCount)` after a table error
//!   (`MembershipTableManager.ProcessSuspectOrKillLists`, 10.2.2 line 724)
//!   with 1 s, 1 min and a 2 s step; joining retries a conflicting write
//!   with `Next(attempt)` on 2 s, 64 s, 2 s and an error on 1 s, 1 min, 2 s
//!   (`MembershipExecuteWithRetries`, lines 299-313).
//! - [`computed`] is `BackoffComputation.ComputeBackoffDelay(failures, baseMin,
//!   baseMax, cap)` (`src/Orleans.Core/Utils/BackoffComputation.cs:9-32`):
//!   uniform in `[baseMin x 2^s, baseMax x 2^s)`, s = failures - 1 (at
//!   most 30), and `[cap / 2, cap)` once that reaches the cap. The refresh
//!   loop and the IAmAlive loop wait this after a failure (2 s, 4 s, 64 s).
//!
//! Deviation kept faithful on purpose: C# masks an `int` shift count to its
//! five low bits, so `1 << 31` is negative (Orleans then falls back to
//! `max`) and `1 << 32` is 1 again; [`exponential`] does the same.

use crate::time::Nanos;

use super::entropy::Entropy;

/// Orleans' `EXP_BACKOFF_STEP` (`MembershipTableManager.cs:29`).
pub const STEP: Nanos = Nanos::from_secs(2);

/// `ExponentialBackoff(min, max, step).Next(attempt)`; `min < max`.
pub fn exponential(attempt: u32, min: Nanos, max: Nanos, step: Nanos, rng: &mut Entropy) -> Nanos {
    debug_assert!(min < max);
    // C#: `checked(1 << attempt)` on an int: the count is masked to 0..31
    // and `1 << 31` is int.MinValue, whose product Orleans catches as an
    // overflow and replaces by `max`.
    let shift = attempt % 32;
    let high = if shift == 31 {
        max
    } else {
        let multiple = 1u64 << shift;
        min.as_nanos()
            .checked_add(step.as_nanos().saturating_mul(multiple))
            .map_or(max, Nanos)
            .min(max)
    };
    rng.between(min, high)
}

/// `BackoffComputation.ComputeBackoffDelay(failures, base_min, base_max,
/// cap)`; `base_min < base_max <= cap`.
pub fn computed(
    failures: u32,
    base_min: Nanos,
    base_max: Nanos,
    cap: Nanos,
    rng: &mut Entropy,
) -> Nanos {
    debug_assert!(base_min < base_max && base_max <= cap);
    /// `BackoffComputation.MaxBoundShift`.
    const MAX_BOUND_SHIFT: u32 = 30;
    let shift = if failures <= 1 {
        0
    } else {
        (failures - 1).min(MAX_BOUND_SHIFT)
    };
    let shifted = |v: Nanos| v.as_nanos().checked_mul(1u64 << shift);
    let (mut low, mut high) = match (shifted(base_min), shifted(base_max)) {
        (Some(low), Some(high)) if high < cap.as_nanos() => (low, high),
        _ => (cap.as_nanos() / 2, cap.as_nanos()),
    };
    if low >= high {
        low = high.saturating_sub(1).max(1);
        high = high.max(low + 1);
    }
    rng.between(Nanos(low), Nanos(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }

    /// The range of many draws.
    fn range(mut draw: impl FnMut(&mut Entropy) -> Nanos) -> (Nanos, Nanos) {
        let mut rng = Entropy::new(7);
        let mut lo = Nanos::MAX;
        let mut hi = Nanos::ZERO;
        for _ in 0..4_000 {
            let d = draw(&mut rng);
            lo = lo.min(d);
            hi = hi.max(d);
        }
        (lo, hi)
    }

    #[test]
    fn exponential_is_orleans_error_backoff() {
        // The suspect loop after its first table error: [1 s, 1 + 2 x 2 s).
        let (lo, hi) = range(|r| exponential(1, s(1), s(60), STEP, r));
        assert!(lo >= s(1) && lo < Nanos::from_millis(1_100), "{lo}");
        assert!(hi < s(5) && hi > Nanos::from_millis(4_900), "{hi}");
        // Capped at a minute from the fifth failure (1 + 2 x 32 > 60).
        let (_, hi) = range(|r| exponential(5, s(1), s(60), STEP, r));
        assert!(hi < s(60) && hi > s(59), "{hi}");
        // C#'s masked shift: 31 is the cap, 32 is 1 << 0 again.
        let (_, hi) = range(|r| exponential(31, s(1), s(60), STEP, r));
        assert!(hi > s(59), "{hi}");
        let (_, hi) = range(|r| exponential(32, s(1), s(60), STEP, r));
        assert!(hi < s(3), "{hi}");
    }

    #[test]
    fn computed_is_orleans_refresh_backoff() {
        // BackoffComputation.cs:15: the first failure is not shifted.
        let (lo, hi) = range(|r| computed(1, s(2), s(4), s(64), r));
        assert!(lo >= s(2) && hi < s(4), "{lo} {hi}");
        let (lo, hi) = range(|r| computed(3, s(2), s(4), s(64), r));
        assert!(lo >= s(8) && hi < s(16), "{lo} {hi}");
        // From 2^4 x 4 s = 64 s on: [32 s, 64 s).
        let (lo, hi) = range(|r| computed(5, s(2), s(4), s(64), r));
        assert!(lo >= s(32) && hi < s(64), "{lo} {hi}");
        let (lo, hi) = range(|r| computed(1_000, s(2), s(4), s(64), r));
        assert!(lo >= s(32) && hi < s(64), "{lo} {hi}");
    }
}
