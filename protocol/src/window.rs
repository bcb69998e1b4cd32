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
        to_f64(self.sum) / self.samples.len() as f64
    }

    /// Population variance (divides by n, as Akka and Orleans do).
    pub fn variance(&self) -> f64 {
        let n = self.samples.len() as u128;
        if n == 0 {
            return 0.0;
        }
        // n^2 * variance = n * sum(x^2) - sum(x)^2, exact in integers while it
        // fits in u128 (always, for intervals under a day and windows under a
        // million); otherwise fall back to floats.
        match (
            n.checked_mul(self.sum_of_squares),
            self.sum.checked_mul(self.sum),
        ) {
            (Some(a), Some(b)) => to_f64(a.saturating_sub(b)) / to_f64(n * n),
            _ => {
                let mean = self.mean();
                (to_f64(self.sum_of_squares) / n as f64 - mean * mean).max(0.0)
            }
        }
    }

    /// Population standard deviation.
    pub fn std_dev(&self) -> f64 {
        self.variance().sqrt()
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
        lo as f64
    } else {
        (hi as f64) * TWO_64 + lo as f64
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
    }
}
