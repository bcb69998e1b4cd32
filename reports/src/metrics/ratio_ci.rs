//! A 95% confidence interval for the ratio of two means of **paired**
//! per-run values ([`ratio_ci95`]): "judge A makes R× the false
//! declarations judge B makes", where `a[i]` and `b[i]` come from the same
//! seed. As for [`super::mean_ci95`], the runs (seeds) are the independent
//! replications.
//!
//! The interval is Fieller's (E. C. Fieller, "Some problems in interval
//! estimation", Journal of the Royal Statistical Society B 16(2), 1954,
//! pp. 175–185). For the ratio ρ = E[a] / E[b], the quantity ā − ρ b̄ has
//! mean zero and, with paired samples, variance
//! v_aa − 2ρ v_ab + ρ² v_bb, where v_aa = s_aa / n and v_bb = s_bb / n are
//! the variances of the two sample means and v_ab = s_ab / n their
//! covariance (s the sample variances and covariance, n − 1 in the
//! denominator). The 95% set is every ρ with
//!
//! ```text
//! (ā − ρ b̄)² ≤ t² (v_aa − 2ρ v_ab + ρ² v_bb),   t = t(0.975, n − 1)
//! ```
//!
//! that is `A ρ² − 2 B ρ + C ≤ 0` with `A = b̄² − t² v_bb`,
//! `B = ā b̄ − t² v_ab`, `C = ā² − t² v_aa`, and discriminant
//! `D = B² − A C`. The estimate ā / b̄ always lies in the set (there the
//! left side is 0 and the right side a variance). Unlike the ratio of two
//! separate intervals' ends, it uses the pairing: a seed that is hard for
//! both judges moves a and b together (v_ab > 0), which narrows the
//! interval.
//!
//! The values are rates, non-negative, so the interval is of non-negative
//! ratios: a lower end below zero is reported as 0.

use super::ci::t_975;

/// A 95% interval for the ratio of the means of paired per-run values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioCi {
    /// mean(a) / mean(b); `None` when mean(b) is 0 (b was 0 on every run).
    pub ratio: Option<f64>,
    /// The lower end, at least 0.
    pub low: f64,
    /// The upper end; `None`: the interval has no upper bound (mean(b) is
    /// not significantly above zero with these runs).
    pub high: Option<f64>,
    /// How many pairs (seeds) it rests on.
    pub seeds: usize,
}

impl RatioCi {
    /// The interval of mean(b) / mean(a), from this one of mean(a) /
    /// mean(b): Fieller's set for 1/ρ is the set of the reciprocals of the
    /// set for ρ (divide both sides of its inequality by ρ²), so this is
    /// what [`ratio_ci95`]`(b, a)` returns. `None` when the ratio is
    /// undefined or 0 (one of the means is 0): the reversed interval then
    /// depends on more than this one holds.
    pub fn reciprocal(&self) -> Option<RatioCi> {
        let ratio = self.ratio.filter(|&r| r > 0.0)?;
        // The estimate lies in the interval (up to rounding).
        let slack = 1e-9 * ratio;
        debug_assert!(
            ratio >= self.low - slack && self.high.is_none_or(|h| h >= ratio - slack),
            "{self:?}"
        );
        Some(match self.high {
            // [lo, hi] with 0 < lo: [1/hi, 1/lo]. With lo = 0 (the set
            // reached zero or below), the reciprocals of its positive part
            // have no upper bound: [1/hi, unbounded).
            Some(high) => RatioCi {
                ratio: Some(1.0 / ratio),
                low: 1.0 / high,
                high: (self.low > 0.0).then(|| 1.0 / self.low),
                seeds: self.seeds,
            },
            // [lo, unbounded) with lo > 0: (0, 1/lo]. [0, unbounded) stays.
            None => RatioCi {
                ratio: Some(1.0 / ratio),
                low: 0.0,
                high: (self.low > 0.0).then(|| 1.0 / self.low),
                seeds: self.seeds,
            },
        })
    }
}

/// Fieller's 95% interval (see the module documentation) for
/// mean(a) / mean(b) of paired values: `a[i]` and `b[i]` come from the same
/// run (seed); every value is non-negative (a rate).
///
/// `None` with fewer than two pairs, slices of different lengths, or a
/// non-finite value. Otherwise, with `A`, `B`, `C`, `D` as in the module
/// documentation:
///
/// - `A > 0` (mean(b) significantly above zero): the bounded interval
///   between the roots, `[(B − √D) / A, (B + √D) / A]`, its lower end
///   clamped at 0. When every a is 0 it is `[0, 0]`.
/// - `A ≤ 0` and `C > 0` (mean(a) significantly above zero, mean(b) not):
///   the set is the ρ beyond the roots, and its non-negative part is
///   `[positive root, unbounded)`: `low` = the positive root
///   `C / (B + √D)`, `high = None`.
/// - `A ≤ 0` and `C ≤ 0` (neither mean significantly above zero): `low` =
///   0, `high = None`. The set may exclude a band of positive ratios
///   between two positive roots; `[0, unbounded)` covers it, and says
///   that these runs tell nothing about the ratio.
/// - mean(b) = 0 (every b is 0): `ratio = None`, `low` = 0, `high = None`.
///   Fieller's set is then every ρ (`C ≤ 0`) or none at all (`C > 0`: a
///   ratio to zero has no finite value); either way no bound is claimed.
pub fn ratio_ci95(a: &[f64], b: &[f64]) -> Option<RatioCi> {
    debug_assert_eq!(a.len(), b.len(), "paired samples");
    let n = a.len();
    if n < 2 || b.len() != n || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    debug_assert!(a.iter().chain(b).all(|&v| v >= 0.0), "rates");
    let count = n as f64;
    let mean = |xs: &[f64]| {
        let mut sum = 0.0;
        for x in xs {
            sum += x;
        }
        sum / count
    };
    let (mean_a, mean_b) = (mean(a), mean(b));
    // Sample variances and covariance, in one pass in run order.
    let (mut s_aa, mut s_bb, mut s_ab) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        let (dx, dy) = (x - mean_a, y - mean_b);
        s_aa += dx * dx;
        s_bb += dy * dy;
        s_ab += dx * dy;
    }
    // Divided by n − 1 for the sample (co)variances, by n for those of the
    // means.
    let of_mean = (count - 1.0) * count;
    let (v_aa, v_bb, v_ab) = (s_aa / of_mean, s_bb / of_mean, s_ab / of_mean);
    let t = t_975(n - 1);
    let t2 = t * t;
    let quad_a = mean_b * mean_b - t2 * v_bb;
    let quad_b = mean_a * mean_b - t2 * v_ab;
    let quad_c = mean_a * mean_a - t2 * v_aa;
    // D ≥ 0 whenever A > 0 (the estimate is in the set); a negative D
    // there is rounding only.
    let disc = quad_b * quad_b - quad_a * quad_c;
    let ratio = (mean_b > 0.0).then(|| mean_a / mean_b);
    let unbounded = |low: f64| RatioCi {
        ratio,
        low,
        high: None,
        seeds: n,
    };
    if mean_b == 0.0 {
        return Some(unbounded(0.0));
    }
    if quad_a > 0.0 {
        let root = disc.max(0.0).sqrt();
        let low = ((quad_b - root) / quad_a).max(0.0);
        let high = (quad_b + root) / quad_a;
        debug_assert!(high >= low, "{low} > {high}");
        return Some(RatioCi {
            ratio,
            low,
            high: Some(high),
            seeds: n,
        });
    }
    if quad_c > 0.0 {
        // A ≤ 0 < C: D = B² − AC ≥ B², so B + √D ≥ 0, and > 0 unless
        // A = 0 and B ≤ 0 (then no positive ρ is in the set).
        let denominator = quad_b + disc.sqrt();
        let low = if denominator > 0.0 {
            quad_c / denominator
        } else {
            0.0
        };
        return Some(unbounded(low));
    }
    Some(unbounded(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// t(0.975, 2)², as in the table of `t_975`.
    const T2_DF2: f64 = 4.3027 * 4.3027;

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-9, "{got} != {want}");
    }

    #[test]
    fn a_bounded_interval_by_hand() {
        // a = [30, 28, 32], b = [9, 10, 11]: ā = 30, b̄ = 10, ratio 3.
        // Deviations a: 0, −2, 2; b: −1, 0, 1. s_aa = 8/2 = 4,
        // s_bb = 2/2 = 1, s_ab = 2/2 = 1; over n = 3: v_aa = 4/3,
        // v_bb = v_ab = 1/3. t² = 4.3027² = 18.51322729, t²/3 = 6.17107576.
        // A = 100 − 6.17107576 = 93.82892424
        // B = 300 − 6.17107576 = 293.82892424
        // C = 900 − 24.68430305 = 875.31569695
        // D = B² − AC = 86335.43... − 82129.93... = 4205.50650610
        // √D = 64.85003860; roots (B ∓ √D)/A = 2.44038871, 3.82268905.
        let ci = ratio_ci95(&[30.0, 28.0, 32.0], &[9.0, 10.0, 11.0]).unwrap();
        assert_eq!(ci.ratio, Some(3.0));
        assert_eq!(ci.seeds, 3);
        close(ci.low, 2.440_388_711_840_868);
        close(ci.high.unwrap(), 3.822_689_046_474_592);
        // Both ends solve (ā − ρ b̄)² = t² (v_aa − 2ρ v_ab + ρ² v_bb).
        for rho in [ci.low, ci.high.unwrap()] {
            let left = (30.0 - rho * 10.0_f64).powi(2);
            let right = T2_DF2 * (4.0 - 2.0 * rho + rho * rho) / 3.0;
            assert!((left - right).abs() < 1e-9, "{left} != {right}");
        }
    }

    #[test]
    fn the_lower_end_is_clamped_at_zero() {
        // a = [0, 1, 2], b = [9, 10, 11]: ā = 1, b̄ = 10; s_aa = s_bb =
        // s_ab = 1, v = 1/3 each. A = 100 − 6.17107576 = 93.82892424,
        // B = 10 − 6.17107576 = 3.82892424, C = 1 − 6.17107576 =
        // −5.17107576, D = 14.66066... + 485.19647... = 499.85713683,
        // √D = 22.35748503: roots −0.19747174 (below 0: 0) and 0.27908675.
        let ci = ratio_ci95(&[0.0, 1.0, 2.0], &[9.0, 10.0, 11.0]).unwrap();
        assert_eq!(ci.ratio, Some(0.1));
        assert_eq!(ci.low, 0.0);
        close(ci.high.unwrap(), 0.279_086_747_278_440_1);
        // None of a: exactly [0, 0].
        let ci = ratio_ci95(&[0.0, 0.0, 0.0], &[9.0, 10.0, 11.0]).unwrap();
        assert_eq!((ci.ratio, ci.low, ci.high), (Some(0.0), 0.0, Some(0.0)));
    }

    #[test]
    fn no_upper_bound_when_b_is_not_clearly_above_zero() {
        // a = [10, 12, 14], b = [0, 1, 2]: ā = 12, b̄ = 1, ratio 12.
        // s_aa = 4, s_bb = 1, s_ab = 2: v_aa = 4/3, v_bb = 1/3, v_ab = 2/3.
        // A = 1 − 6.17107576 = −5.17107576 ≤ 0: no upper bound.
        // B = 12 − 12.34215153 = −0.34215153
        // C = 144 − 24.68430305 = 119.31569695 > 0
        // D = 0.11706767 + 616.99050866 = 617.10757633, √D = 24.84165005
        // positive root C / (B + √D) = 119.31569695 / 24.49949852
        //   = 4.87012813.
        let ci = ratio_ci95(&[10.0, 12.0, 14.0], &[0.0, 1.0, 2.0]).unwrap();
        assert_eq!(ci.ratio, Some(12.0));
        close(ci.low, 4.870_128_134_199_862);
        assert_eq!(ci.high, None);
        // Neither mean clearly above zero (a = b = [0, 1, 2]: A = B = C =
        // 1 − 6.17107576 < 0): [0, unbounded).
        let ci = ratio_ci95(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0]).unwrap();
        assert_eq!((ci.ratio, ci.low, ci.high), (Some(1.0), 0.0, None));
    }

    #[test]
    fn b_all_zero_has_no_ratio_and_no_bound() {
        // b̄ = 0: A = B = 0; C = 4 − 6.17107576 < 0 for a = [1, 2, 3],
        // C = 121 − 6.17107576 > 0 for a = [10, 11, 12]. No ratio either way.
        for a in [[1.0, 2.0, 3.0], [10.0, 11.0, 12.0], [0.0; 3]] {
            let ci = ratio_ci95(&a, &[0.0; 3]).unwrap();
            assert_eq!((ci.ratio, ci.low, ci.high, ci.seeds), (None, 0.0, None, 3));
        }
    }

    #[test]
    fn too_few_or_bad_values_give_none() {
        assert_eq!(ratio_ci95(&[1.0], &[2.0]), None);
        assert_eq!(ratio_ci95(&[], &[]), None);
        assert_eq!(ratio_ci95(&[1.0, f64::NAN], &[2.0, 3.0]), None);
        assert_eq!(ratio_ci95(&[1.0, 2.0], &[f64::INFINITY, 3.0]), None);
        // Constant pairs: an interval of no width.
        let ci = ratio_ci95(&[2.0, 2.0], &[1.0, 1.0]).unwrap();
        assert_eq!((ci.ratio, ci.low, ci.high), (Some(2.0), 2.0, Some(2.0)));
    }

    #[test]
    fn on_many_samples_the_estimate_is_inside_and_the_ends_solve_the_equation() {
        // Paired counts: a shared per-seed difficulty plus each judge's own
        // noise (xorshift, deterministic), 2 to 31 seeds.
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut draw = |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        for case in 0..500 {
            let n = 2 + (case % 30);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..n {
                let hard = draw(6);
                a.push((3 * hard + draw(4)) as f64);
                b.push((hard + draw(3)) as f64);
            }
            let ci = ratio_ci95(&a, &b).unwrap();
            let Some(ratio) = ci.ratio else {
                assert!(b.iter().all(|&v| v == 0.0));
                continue;
            };
            let slack = 1e-9 * ratio.max(1.0);
            assert!(ci.low <= ratio + slack, "{a:?} {b:?} {ci:?}");
            assert!(ci.high.is_none_or(|h| ratio <= h + slack), "{ci:?}");
            // An end that is a root (not clamped) solves the equation.
            let (ma, mb) = (a.iter().sum::<f64>() / n as f64, ratio_mean(&b));
            let t2 = t_975(n - 1).powi(2);
            let var = |rho: f64| {
                let d: f64 = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| {
                        let e = (x - ma) - rho * (y - mb);
                        e * e
                    })
                    .sum();
                d / ((n - 1) * n) as f64
            };
            for rho in [Some(ci.low).filter(|&l| l > 0.0), ci.high]
                .into_iter()
                .flatten()
            {
                let (left, right) = ((ma - rho * mb).powi(2), t2 * var(rho));
                assert!(
                    (left - right).abs() <= 1e-7 * left.max(right).max(1.0),
                    "{rho}: {left} != {right} ({a:?} {b:?})"
                );
            }
            // The reverse, as the reciprocal.
            if let Some(flipped) = ci.reciprocal() {
                let reverse = ratio_ci95(&b, &a).unwrap();
                let near = |x: f64, y: f64| (x - y).abs() <= 1e-7 * x.abs().max(1.0);
                assert!(near(flipped.low, reverse.low), "{flipped:?} {reverse:?}");
                match (flipped.high, reverse.high) {
                    (Some(x), Some(y)) => assert!(near(x, y), "{flipped:?} {reverse:?}"),
                    (x, y) => assert_eq!(x, y, "{a:?} {b:?}"),
                }
            }
        }
    }

    fn ratio_mean(xs: &[f64]) -> f64 {
        xs.iter().sum::<f64>() / xs.len() as f64
    }

    #[test]
    fn the_reverse_ratio_is_the_reciprocal_interval() {
        let cases: [([f64; 3], [f64; 3]); 4] = [
            // Bounded both ways: [2.44, 3.82] and [0.2616, 0.4098].
            ([30.0, 28.0, 32.0], [9.0, 10.0, 11.0]),
            // Bounded one way with the lower end clamped; at least 1/0.279
            // the other way.
            ([0.0, 1.0, 2.0], [9.0, 10.0, 11.0]),
            ([10.0, 12.0, 14.0], [0.0, 1.0, 2.0]),
            ([0.0, 1.0, 2.0], [0.0, 1.0, 2.0]),
        ];
        for (a, b) in cases {
            let forward = ratio_ci95(&a, &b).unwrap();
            let reverse = ratio_ci95(&b, &a).unwrap();
            let flipped = forward.reciprocal().unwrap();
            close(flipped.ratio.unwrap(), reverse.ratio.unwrap());
            close(flipped.low, reverse.low);
            match (flipped.high, reverse.high) {
                (Some(x), Some(y)) => close(x, y),
                (x, y) => assert_eq!(x, y, "{a:?} / {b:?}"),
            }
        }
        // Hand check of the first: 1/3.82268905 = 0.26159596.
        let ci = ratio_ci95(&[9.0, 10.0, 11.0], &[30.0, 28.0, 32.0]).unwrap();
        close(ci.low, 0.261_595_957_150_172_2);
        // An undefined or zero ratio has no reciprocal here.
        let none_of_b = ratio_ci95(&[1.0, 2.0], &[0.0, 0.0]).unwrap();
        assert_eq!(none_of_b.reciprocal(), None);
        let none_of_a = ratio_ci95(&[0.0, 0.0], &[1.0, 2.0]).unwrap();
        assert_eq!(none_of_a.reciprocal(), None);
    }
}
