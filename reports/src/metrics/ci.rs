//! 95% confidence intervals for the mean of per-run values: the runs (seeds)
//! are the independent replications (see the module documentation of
//! [`crate::metrics`]).

/// A 95% confidence interval for the mean of per-run values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanCi {
    /// The mean of the per-run values (the centre of the interval).
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    /// How many runs (per-run values) it rests on.
    pub runs: usize,
}

/// Student-t 95% interval for the mean of `values` (one value per run, in
/// run order): mean ± t(0.975, n−1) · s / √n, s the sample standard deviation.
/// The lower bound is clamped at zero (every quantity here is non-negative).
/// `None` with fewer than two values or a non-finite value.
pub fn mean_ci95(values: &[f64]) -> Option<MeanCi> {
    let n = values.len();
    if n < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut sum = 0.0;
    for v in values {
        sum += v;
    }
    let mean = sum / n as f64;
    let mut squares = 0.0;
    for v in values {
        squares += (v - mean) * (v - mean);
    }
    let sd = (squares / (n - 1) as f64).sqrt();
    let half = t_975(n - 1) * sd / (n as f64).sqrt();
    Some(MeanCi {
        mean,
        low: (mean - half).max(0.0),
        high: mean + half,
        runs: n,
    })
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom:
/// a table up to 30, then the Cornish–Fisher expansion around the normal
/// quantile (error below 1e-4 there).
pub(crate) fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    ];
    if df == 0 {
        return f64::INFINITY;
    }
    if let Some(&t) = TABLE.get(df - 1) {
        return t;
    }
    let z: f64 = 1.959_963_984_540_054;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    let g1 = (z3 + z) / 4.0;
    let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    let d = df as f64;
    z + g1 / d + g2 / (d * d) + g3 / (d * d * d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_interval() {
        let ci = mean_ci95(&[1.0, 2.0, 3.0]).unwrap();
        // mean 2, s = 1, t(2) = 4.3027: 2 ± 4.3027/√3.
        assert_eq!(ci.mean, 2.0);
        assert!((ci.high - (2.0 + 4.3027 / 3f64.sqrt())).abs() < 1e-12);
        assert_eq!(ci.low, 0.0);
        assert_eq!(mean_ci95(&[1.0]), None);
        assert_eq!(mean_ci95(&[]), None);
        // The expansion continues the table smoothly.
        assert!((t_975(30) - 2.0423).abs() < 1e-4);
        assert!((t_975(31) - 2.0395).abs() < 1e-4);
        assert!((t_975(60) - 2.0003).abs() < 1e-4);
        assert!((t_975(120) - 1.9799).abs() < 1e-4);
    }
}
