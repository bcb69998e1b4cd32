//! A fixed-capacity FIFO window of samples with running sums, so that mean and
//! standard deviation cost O(1) per sample and per query whatever the window size.
//!
//! Sums are kept exactly in integers (samples are nanoseconds): unlike the
//! floating running sums of Akka's `HeartbeatHistory` or Orleans'
//! `PhiAccrualFailureDetector`, they never drift however long a detector runs,
//! and removing the oldest sample restores exactly the sum without it.

/// Largest sample kept: 2^50 ns, about 13 days. Larger samples are clamped so
/// that the exact sums cannot overflow (2^100 per square, 2^20 samples at most).
pub const MAX_SAMPLE: u64 = 1 << 50;

use crate::time::u64_to_f64;

/// A FIFO window of at most `capacity` samples (nanoseconds).
#[derive(Debug)]
pub struct SampleWindow {
    samples: Vec<u64>,
    capacity: usize,
    /// Index of the oldest sample once the window is full.
    next: usize,
    sum: u128,
    sum_of_squares: u128,
}

impl Clone for SampleWindow {
    /// Keeps the reserved capacity (a derived clone would drop it), so a cloned
    /// detector does not allocate while its window fills.
    fn clone(&self) -> Self {
        let mut samples = Vec::with_capacity(self.capacity);
        samples.extend_from_slice(&self.samples);
        SampleWindow {
            samples,
            capacity: self.capacity,
            next: self.next,
            sum: self.sum,
            sum_of_squares: self.sum_of_squares,
        }
    }
}

impl SampleWindow {
    /// An empty window; `capacity` is at least 1.
    pub fn new(capacity: usize) -> SampleWindow {
        let capacity = capacity.max(1);
        SampleWindow {
            samples: Vec::with_capacity(capacity),
            capacity,
            next: 0,
            sum: 0,
            sum_of_squares: 0,
        }
    }

    /// Appends a sample (clamped to [`MAX_SAMPLE`]), evicting the oldest one
    /// when full. No allocation once the window has filled.
    pub fn push(&mut self, sample: u64) {
        let sample = sample.min(MAX_SAMPLE);
        let square = u128::from(sample) * u128::from(sample);
        if self.samples.len() < self.capacity {
            self.samples.push(sample);
        } else {
            let old = std::mem::replace(&mut self.samples[self.next], sample);
            self.sum -= u128::from(old);
            self.sum_of_squares -= u128::from(old) * u128::from(old);
            self.next = (self.next + 1) % self.capacity;
        }
        self.sum += u128::from(sample);
        self.sum_of_squares += square;
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Mean of the samples (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.samples.is_empty() {
            return 0.0;
        }
        to_f64(self.sum) / self.samples.len() as i64 as f64
    }

    /// Population variance (divides by n, as Akka and Orleans do).
    pub fn variance(&self) -> f64 {
        let n = self.samples.len() as u128;
        if n == 0 {
            return 0.0;
        }
        match self.exact_variance() {
            Some((num, den)) => num / den,
            None => {
                let mean = self.mean();
                (to_f64(self.sum_of_squares) / n as f64 - mean * mean).max(0.0)
            }
        }
    }

    /// `n^2 * variance` and `n^2` as floats, the variance being their
    /// quotient: `n * sum(x^2) - sum(x)^2` is exact in integers while it
    /// fits in u128 (always, for intervals under a day and windows under a
    /// million); `None` beyond (the variance then falls back to floats) or
    /// for an empty window.
    #[inline]
    fn exact_variance(&self) -> Option<(f64, f64)> {
        let n = self.samples.len() as u128;
        if n == 0 {
            return None;
        }
        let a = n.checked_mul(self.sum_of_squares)?;
        let b = self.sum.checked_mul(self.sum)?;
        Some((to_f64(a.saturating_sub(b)), to_f64(n * n)))
    }

    /// Population standard deviation.
    pub fn std_dev(&self) -> f64 {
        self.variance().sqrt()
    }

    /// `self.std_dev().max(floor)`, the same value, without the division
    /// and the square root when the spread is clearly below `floor` (phi
    /// accrual's and adaptive probing's floors of the standard deviation,
    /// read after every input: a heartbeat stream of a little jitter sits
    /// below Akka's 100 ms floor nearly all the time).
    ///
    /// With `num / den` the variance's quotient, `F = fl(floor^2)`, `P =
    /// fl(F den)` and `Q = fl(P (1 - 2^-40))`, `num <= Q` gives
    /// `num < floor^2 den (1 + 2^-53)^3 (1 - 2^-40) < floor^2 den (1 -
    /// 2^-41)`: the real variance is below `floor^2 (1 - 2^-41)`, its
    /// rounding below `floor^2`, the real square root of that below
    /// `floor`, and its rounding at most `floor`; the maximum is `floor`.
    #[inline]
    pub fn std_dev_at_least(&self, floor: f64) -> f64 {
        const BELOW: f64 = 1.0 - 1.0 / (1u64 << 40) as f64;
        if let Some((num, den)) = self.exact_variance() {
            if floor.is_finite() && floor >= 1e-100 {
                let p = floor * floor * den;
                if p.is_finite() && num <= p * BELOW {
                    return floor;
                }
            }
            return (num / den).sqrt().max(floor);
        }
        self.std_dev().max(floor)
    }
}

/// `u128` to `f64` by its two 64-bit halves: two hardware conversions and one
/// multiply-add instead of the software routine `as` compiles to. The result
/// may differ from the correctly rounded one in the last bit; it is the same on
/// every IEEE-754 machine, which is what replays need.
fn to_f64(x: u128) -> f64 {
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    let (hi, lo) = ((x >> 64) as u64, x as u64);
    if hi == 0 {
        u64_to_f64(lo)
    } else {
        u64_to_f64(hi) * TWO_64 + u64_to_f64(lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn evicts_oldest_first() {
        let mut w = SampleWindow::new(3);
        for s in [10, 20, 30, 40] {
            w.push(s);
        }
        assert_eq!(w.len(), 3);
        assert_eq!(w.mean(), 30.0);
        w.push(50);
        assert_eq!(w.mean(), 40.0);
    }

    proptest! {
        /// The running sums equal a recomputation over the retained samples.
        #[test]
        fn running_sums_match_recomputation(
            cap in 1usize..20,
            samples in proptest::collection::vec(0u64..10_000_000_000, 0..100),
        ) {
            let mut w = SampleWindow::new(cap);
            for &s in &samples {
                w.push(s);
            }
            let kept: Vec<f64> = samples.iter().rev().take(cap).map(|&s| s as f64).collect();
            let n = kept.len() as f64;
            if !kept.is_empty() {
                let mean = kept.iter().sum::<f64>() / n;
                let var = kept.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
                prop_assert!((w.mean() - mean).abs() <= 1e-6 * mean.max(1.0));
                prop_assert!((w.variance() - var).abs() <= 1e-6 * var.max(1.0));
            }
        }

        /// The floored standard deviation is `std_dev().max(floor)`, bit
        /// for bit, for floors around the deviation itself and anywhere.
        #[test]
        fn std_dev_at_least_is_the_max(
            cap in 1usize..50,
            samples in proptest::collection::vec(prop_oneof![0u64..10_000_000_000, 999_000_000u64..1_001_000_000], 0..120),
            floor in prop_oneof![0.0f64..1e9, Just(0.0), Just(1e8), any::<f64>()],
            nudge in -4i64..=4,
        ) {
            let mut w = SampleWindow::new(cap);
            for &s in &samples {
                w.push(s);
                let sd = w.std_dev();
                // The floor anywhere, and within a few floats of the
                // deviation itself (where the margin decides).
                let near = f64::from_bits((sd.to_bits() as i64 + nudge).max(0) as u64);
                for f in [floor, near, sd] {
                    let want = w.std_dev().max(f);
                    let got = w.std_dev_at_least(f);
                    prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "floor {} sd {}: {} against {}", f, sd, got, want);
                }
            }
        }
    }
}
