//! The median of measured figures (`fdlab bench`'s repetitions, `fdlab
//! live`'s detection delays), by nearest rank like every percentile fdlab
//! reports.
//!
//! `fdlab_sim::stats::nearest_rank` is the project's definition (the value
//! at 1-based rank ⌈p·n/100⌉ of the sorted samples, so a percentile is a
//! sample that really happened), but it takes integer durations; this is the
//! same rule for `f64` figures (milliseconds, seconds, nanoseconds per
//! call). With an even count it picks the lower of the two middle values,
//! rank n/2, and never averages them.

/// The median of `values` by nearest rank: the value at 1-based rank
/// ⌈n/2⌉ once sorted (`values` is left sorted). `None` when `values` is
/// empty or holds a NaN, which has no rank.
pub fn median_nearest_rank(values: &mut [f64]) -> Option<f64> {
    if values.iter().any(|v| v.is_nan()) {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let rank = values.len().div_ceil(2);
    values.get(rank.checked_sub(1)?).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_odd_count_gives_the_middle_value() {
        assert_eq!(median_nearest_rank(&mut [7.0]), Some(7.0));
        assert_eq!(median_nearest_rank(&mut [3.0, 1.0, 2.0]), Some(2.0));
        let mut v = [5.0, -1.0, 4.0, 2.5, 9.0];
        assert_eq!(median_nearest_rank(&mut v), Some(4.0));
        assert_eq!(v, [-1.0, 2.5, 4.0, 5.0, 9.0], "left sorted");
    }

    #[test]
    fn an_even_count_gives_the_lower_middle_value_not_an_average() {
        assert_eq!(median_nearest_rank(&mut [2.0, 1.0]), Some(1.0));
        assert_eq!(median_nearest_rank(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.0));
        assert_eq!(
            median_nearest_rank(&mut [10.0, 40.0, 20.0, 30.0, 60.0, 50.0]),
            Some(30.0)
        );
    }

    #[test]
    fn agrees_with_the_simulators_nearest_rank() {
        use fdlab_protocol::Nanos;
        use fdlab_sim::stats::nearest_rank;
        for n in 1..=9u64 {
            let sorted: Vec<Nanos> = (1..=n).map(|k| Nanos(k * 10)).collect();
            let mut values: Vec<f64> = sorted.iter().rev().map(|t| t.0 as f64).collect();
            let want = nearest_rank(&sorted, 50).map(|t| t.0 as f64);
            assert_eq!(median_nearest_rank(&mut values), want, "n = {n}");
        }
    }

    #[test]
    fn no_values_or_a_nan_give_none() {
        assert_eq!(median_nearest_rank(&mut []), None);
        assert_eq!(median_nearest_rank(&mut [1.0, f64::NAN, 2.0]), None);
        assert_eq!(median_nearest_rank(&mut [f64::NAN]), None);
    }
}
