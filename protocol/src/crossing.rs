//! When a score crosses a threshold, to the nanosecond: the smallest
//! elapsed time `dt` (integer ns) at which the float expression
//! `(dt - shift) / den` reaches `y`, searched outward from the closed
//! form's guess. Phi accrual's crossings (`crate::phi`) are the user.
//!
//! Every heartbeat of a phi-accrual pair asks for a crossing, which tests
//! the expression at the guess and the nanosecond before (two divisions).
//! [`Crossing::reaches`] settles nearly every test without its division:
//! when `dt - shift` is clear of the product `y * den` by a margin that no
//! rounding can cross, the answer is the division's; only a test within
//! the margin (about one in a million at heartbeat scales) divides. The
//! answers, and so the crossings, are the division's, bit for bit (the
//! proof is at [`Crossing::reaches`]; a property test checks it).

/// The relative margin of [`Crossing::reaches`]: far above the 2^-53 of
/// one rounding, so that the three roundings of the test cannot matter.
const MARGIN: f64 = 1.0 / (1u64 << 40) as f64;

use crate::time::u64_to_f64;

/// A crossing of `y` by `(dt - shift) / den`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Crossing {
    shift: f64,
    den: f64,
    y: f64,
    /// `x >= above` settles `x / den >= y` as true; `x <= below` as false
    /// (both NaN, settling nothing, outside the case of the proof).
    above: f64,
    below: f64,
}

impl Crossing {
    pub(crate) fn new(shift: f64, den: f64, y: f64) -> Crossing {
        let t = y * den;
        // The proof's case: y normal and positive (the float below it is
        // then within 2^-52 of it), den positive, their product finite and
        // far from underflow (so that `t * MARGIN` is exact).
        let settles = y.is_normal() && y > 0.0 && den > 0.0 && t.is_finite() && t > 1e-200;
        let (above, below) = if settles {
            let m = t * MARGIN;
            (t + m, t - m)
        } else {
            (f64::NAN, f64::NAN)
        };
        Crossing {
            shift,
            den,
            y,
            above,
            below,
        }
    }

    /// The closed form: `shift + y * den` (the expression phi accrual has
    /// always guessed with).
    pub(crate) fn guess(&self) -> f64 {
        self.shift + self.y * self.den
    }

    /// Whether `(dt - shift) / den >= y` in floats, as the division says.
    ///
    /// With `x = fl(dt - shift)`, `t = fl(y * den)` and `m = t * 2^-40`
    /// (exact), for `y, den > 0`:
    /// - `x >= fl(t + m)` gives `x >= (t + m)(1 - 2^-53) >= t (1 + 2^-41)`,
    ///   and `t >= y den (1 - 2^-53)`, so `x > y den`: the real quotient
    ///   is at least `y`, and so is its rounding (rounding is monotone and
    ///   `y` a float);
    /// - `x <= fl(t - m)` gives `x <= (t - m)(1 + 2^-53) < y den (1 - 2^-41)`:
    ///   a real quotient below `y (1 - 2^-52)`, at most the float below
    ///   `y`, so its rounding is below `y`.
    #[inline]
    pub(crate) fn reaches(&self, dt: u64) -> bool {
        let x = u64_to_f64(dt) - self.shift;
        if x >= self.above {
            true
        } else if x <= self.below {
            false
        } else {
            x / self.den >= self.y
        }
    }

    /// The smallest `dt` at which [`Crossing::reaches`], if any.
    pub(crate) fn first(&self) -> Option<u64> {
        let guess = self.guess();
        let guess = if guess.is_finite() {
            ceil_u64(guess.max(0.0))
        } else {
            u64::MAX
        };
        first_true(guess, |dt| self.reaches(dt))
    }
}

/// 2^63: below it, a `u64` converts to and from `f64` through `i64`, one
/// instruction each way on x86-64 (a `u64` takes several), with the same
/// value (both conversions round correctly; `crate::time::u64_to_f64`).
const SIGNED_LIMIT: f64 = 9_223_372_036_854_775_808.0;

/// `x.ceil() as u64` for a finite `x >= 0`, the same value without `ceil`,
/// a library call on x86-64's baseline (SSE4.1 makes it one instruction) on
/// every crossing: `as` truncates and saturates, and a whole `x` survives
/// the round trip through `u64` exactly (every `x` from 2^53 up is whole).
#[inline]
fn ceil_u64(x: f64) -> u64 {
    debug_assert!(x.is_finite() && x >= 0.0, "{x}");
    if x < SIGNED_LIMIT {
        // At most the float below 2^63: `whole + 1` cannot overflow.
        let whole = x as i64;
        return if (whole as f64) < x {
            (whole + 1) as u64
        } else {
            whole as u64
        };
    }
    let whole = x as u64;
    if (whole as f64) < x {
        // Past u64::MAX (`whole` saturated), `ceil() as u64` saturates too.
        whole.saturating_add(1)
    } else {
        whole
    }
}

/// The smallest `x` with `pred(x)`, for a predicate that is false then true
/// along `u64`, searching outward from `guess`; `None` if never true.
fn first_true(guess: u64, pred: impl Fn(u64) -> bool) -> Option<u64> {
    // Bracket the switch in (lo, hi] with !pred(lo) (or lo absent) and pred(hi).
    let (lo, mut hi): (Option<u64>, u64);
    if pred(guess) {
        if guess == 0 || !pred(guess - 1) {
            return Some(guess);
        }
        let mut step = 2u64;
        hi = guess - 1;
        loop {
            let probe = hi.saturating_sub(step);
            if !pred(probe) {
                lo = Some(probe);
                break;
            }
            if probe == 0 {
                return Some(0);
            }
            hi = probe;
            step = step.saturating_mul(2);
        }
    } else {
        let mut step = 1u64;
        let mut below = guess;
        loop {
            if below == u64::MAX {
                return None;
            }
            let probe = below.saturating_add(step);
            if pred(probe) {
                hi = probe;
                lo = Some(below);
                break;
            }
            below = probe;
            step = step.saturating_mul(2);
        }
    }
    let mut lo = lo.unwrap_or(0);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The division alone, as phi accrual tested before the margin.
    fn divided(c: &Crossing, dt: u64) -> bool {
        (dt as f64 - c.shift) / c.den >= c.y
    }

    proptest! {
        /// The guess of a crossing rounds up exactly as `ceil` does.
        #[test]
        fn ceil_u64_is_ceil(bits in any::<u64>(), small in 0.0f64..1e6) {
            for x in [f64::from_bits(bits >> 1), small, small.floor(), 2f64.powi(53) + 2.0, 2f64.powi(64), 1e300] {
                if x.is_finite() && x >= 0.0 {
                    prop_assert_eq!(ceil_u64(x), x.ceil() as u64, "{}", x);
                }
            }
        }

        /// The margin settles every test as the division does: at every
        /// nanosecond around the crossing and at random points, for
        /// heartbeat-like scales and for any floats at all.
        #[test]
        fn reaches_is_the_division(
            shift in prop_oneof![0.0f64..1e10, Just(0.0), any::<f64>()],
            den in prop_oneof![1e-3f64..1e10, Just(1.0), any::<f64>()],
            y in prop_oneof![-10.0f64..600.0, Just(5.226), any::<f64>()],
            dts in proptest::collection::vec(any::<u64>(), 8),
        ) {
            let c = Crossing::new(shift, den, y);
            let guess = c.guess();
            let near = if guess.is_finite() && guess >= 0.0 { ceil_u64(guess) } else { 0 };
            for dt in (near.saturating_sub(64)..near.saturating_add(64)).chain(dts) {
                prop_assert_eq!(c.reaches(dt), divided(&c, dt), "dt {} shift {} den {} y {}", dt, shift, den, y);
            }
        }
    }

    #[test]
    fn the_margin_settles_nearly_every_test() {
        // A phi-accrual-like crossing: mean 1 s, sd 0.1 s, y of phi = 8.
        let c = Crossing::new(1e9, 1e8, 5.6);
        let near = ceil_u64(c.guess());
        let settled = (near - 1000..near + 1000)
            .filter(|&dt| {
                let x = dt as f64 - c.shift;
                x >= c.above || x <= c.below
            })
            .count();
        assert!(settled >= 1998, "{settled}");
        assert_eq!(c.first(), first_true(near, |dt| divided(&c, dt)));
    }

    #[test]
    fn first_true_finds_the_switch() {
        for switch in [0u64, 1, 2, 17, 1000, 1 << 40] {
            for guess in [0u64, 1, 5, 999, 1001, 1 << 41] {
                assert_eq!(first_true(guess, |x| x >= switch), Some(switch));
            }
        }
        assert_eq!(first_true(3, |_| false), None);
    }
}
