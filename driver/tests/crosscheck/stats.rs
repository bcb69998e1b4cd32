//! The statistics of the comparison: mean, spread and the two-sample
//! Kolmogorov–Smirnov distance.

/// Mean and (sample) standard deviation.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// The largest gap between the two empirical CDFs.
pub fn ks_distance(a: &[f64], b: &[f64]) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        let gap = (i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs();
        d = d.max(gap);
    }
    d
}

/// The KS distance above which "same distribution" is rejected at level
/// 0.001: `c(0.001) * sqrt((n + m) / (n m))` with `c(0.001) = 1.949`.
/// Conservative (rejects less often) for discrete data such as counts.
pub fn ks_critical(n: usize, m: usize) -> f64 {
    let (n, m) = (n as f64, m as f64);
    1.949 * ((n + m) / (n * m)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ks_of_equal_and_disjoint_samples() {
        assert_eq!(ks_distance(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(ks_distance(&[1.0, 2.0], &[3.0, 4.0]), 1.0);
        assert!((ks_distance(&[1.0, 2.0, 3.0, 4.0], &[3.0, 4.0, 5.0, 6.0]) - 0.5).abs() < 1e-12);
        let (m, s) = mean_sd(&[1.0, 3.0]);
        assert_eq!(m, 2.0);
        assert!((s - 2f64.sqrt()).abs() < 1e-12);
    }
}
