//! Summary statistics of durations shared by every host and report: count,
//! exact mean and nearest-rank percentiles.
//!
//! They live in `sim` (not `reports`) so that hosts which summarize their own
//! samples, like the trace evaluator ([`crate::heartbeat_eval`]), compute
//! percentiles exactly as the QoS reports do, without `sim` depending on
//! `reports`. Percentiles are by **nearest rank** (the value at 1-based rank
//! ⌈p·n⌉ of the sorted samples), so every percentile is a sample that really
//! happened; the mean is an exact integer mean.

use fdlab_protocol::Nanos;

/// Count, mean and nearest-rank percentiles of a list of durations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationStats {
    pub n: usize,
    /// Exact integer mean, rounded to the nearest nanosecond.
    pub mean: Nanos,
    pub p50: Nanos,
    pub p90: Nanos,
    pub p99: Nanos,
    pub max: Nanos,
}

impl DurationStats {
    /// `None` when there are no samples.
    pub fn from_samples(samples: impl IntoIterator<Item = Nanos>) -> Option<DurationStats> {
        let mut sorted: Vec<Nanos> = samples.into_iter().collect();
        sorted.sort_unstable();
        let sum: u128 = sorted.iter().map(|t| u128::from(t.0)).sum();
        Some(DurationStats {
            n: sorted.len(),
            mean: mean_nanos(sum, sorted.len() as u128)?,
            p50: nearest_rank(&sorted, 50)?,
            p90: nearest_rank(&sorted, 90)?,
            p99: nearest_rank(&sorted, 99)?,
            max: *sorted.last()?,
        })
    }
}

/// The `percent`-th percentile of `sorted` (ascending) by nearest rank: the
/// value at 1-based rank ⌈percent·n/100⌉, at least 1 and at most n. Integer
/// arithmetic, so ranks are exact. `None` if `sorted` is empty.
pub fn nearest_rank(sorted: &[Nanos], percent: u32) -> Option<Nanos> {
    let n = sorted.len() as u128;
    if n == 0 {
        return None;
    }
    let rank = (u128::from(percent) * n).div_ceil(100).clamp(1, n);
    sorted.get(rank as usize - 1).copied()
}

/// The integer mean of `n` durations summing to `sum`, rounded to the nearest
/// nanosecond (halves up); `None` when `n` is zero.
pub fn mean_nanos(sum: u128, n: u128) -> Option<Nanos> {
    if n == 0 {
        return None;
    }
    let mean = (sum + n / 2) / n;
    Some(Nanos(u64::try_from(mean).unwrap_or(u64::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_known_samples() {
        let s = DurationStats::from_samples((1..=100).rev().map(Nanos)).unwrap();
        assert_eq!(s.n, 100);
        assert_eq!(s.mean, Nanos(51)); // 50.5 rounds half up
        assert_eq!(
            (s.p50, s.p90, s.p99, s.max),
            (Nanos(50), Nanos(90), Nanos(99), Nanos(100))
        );
        assert_eq!(DurationStats::from_samples(std::iter::empty()), None);
        assert_eq!(nearest_rank(&[Nanos(7)], 99), Some(Nanos(7)));
    }
}
