//! Judge against judge, seed by seed: how many times the false declarations
//! of one judge are another's ([`JudgeComparison`], the rows of
//! `comparisons.csv`), with a 95% interval.
//!
//! Every judge runs on the same seeds and fault schedule, so the runs of two
//! judges are **paired by seed**: a seed whose faults are hard for one judge
//! tends to be hard for the other. For every ordered pair of judges (A
//! before B in judge order) and each seed both ran, each run gives its rate
//! per node-hour up (false declarations, and those of healthy members, over
//! the run's own node-time, [`ClusterRunTotals::node_time`]); the ratio is
//! mean(A's rates) / mean(B's rates), with Fieller's 95% interval for a
//! ratio of paired means ([`ratio_ci95`]; Fieller 1954, "Some problems in
//! interval estimation", J. R. Stat. Soc. B 16(2)).
//!
//! A seed only one of the two judges ran, or on which either run had no
//! node-time (no rate), is left out of the pair; the counts are over the
//! seeds kept, so they and the ratio rest on the same runs.

use std::collections::BTreeMap;

use super::totals::ClusterRunTotals;
use crate::metrics::rates::rate_per_hour;
use crate::metrics::{ratio_ci95, RatioCi};

/// One kind of false declaration, judge A against judge B, over the seeds
/// both ran.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairedRatio {
    /// A's count, summed over the paired seeds.
    pub a_count: u64,
    /// B's count, the same seeds.
    pub b_count: u64,
    /// mean(A's per-seed rates per node-hour) / mean(B's): `None` when B's
    /// are all 0, or no seed was paired.
    pub ratio: Option<f64>,
    /// Its 95% interval (Fieller): `None` with fewer than two paired seeds.
    pub ci: Option<RatioCi>,
}

impl PairedRatio {
    /// The figures of the paired per-seed counts and rates of A and B.
    fn of(counts: &[(u64, u64)], a_rates: &[f64], b_rates: &[f64]) -> PairedRatio {
        debug_assert!(counts.len() == a_rates.len() && a_rates.len() == b_rates.len());
        let ci = ratio_ci95(a_rates, b_rates);
        let ratio = match ci {
            Some(ci) => ci.ratio,
            // One seed (or none): its ratio, with no interval.
            None => match (a_rates, b_rates) {
                ([a], [b]) if *b > 0.0 => Some(a / b),
                _ => None,
            },
        };
        PairedRatio {
            a_count: counts.iter().map(|c| c.0).sum(),
            b_count: counts.iter().map(|c| c.1).sum(),
            ratio,
            ci,
        }
    }
}

/// Judge A against judge B in one membership scenario.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JudgeComparison {
    pub judge_a: String,
    pub judge_b: String,
    /// Seeds both ran with node-time: the pairs behind every figure here.
    pub seeds: usize,
    /// False declarations of healthy members (neither paused nor starved).
    pub false_healthy: PairedRatio,
    /// All false declarations (of live silos).
    pub false_declarations: PairedRatio,
    /// False-positive events at healthy observers (the Lifeguard paper's
    /// count: every member that moved a live member to Dead).
    pub observer_healthy: PairedRatio,
    /// Those at every observer, healthy or not.
    pub observer_all: PairedRatio,
}

/// The runs of one judge: the seed and totals of each, in run order.
#[derive(Clone, Copy, Debug)]
pub struct JudgeRuns<'a> {
    pub judge: &'a str,
    pub seeds: &'a [u64],
    pub totals: &'a [ClusterRunTotals],
}

/// One row per ordered pair of `judges` (A before B, in the order given),
/// pairing their runs by seed in the order of `seeds`. A judge with two
/// runs of one seed is paired by the first.
pub fn compare_judges(judges: &[JudgeRuns<'_>], seeds: &[u64]) -> Vec<JudgeComparison> {
    // Per judge, its run of each seed.
    let by_seed: Vec<BTreeMap<u64, &ClusterRunTotals>> = judges
        .iter()
        .map(|j| {
            debug_assert_eq!(j.seeds.len(), j.totals.len());
            let mut runs = BTreeMap::new();
            for (&seed, totals) in j.seeds.iter().zip(j.totals) {
                runs.entry(seed).or_insert(totals);
            }
            runs
        })
        .collect();
    let mut rows = Vec::new();
    for (i, a) in judges.iter().enumerate() {
        for (k, b) in judges.iter().enumerate().skip(i + 1) {
            rows.push(compare_two(
                a.judge,
                &by_seed[i],
                b.judge,
                &by_seed[k],
                seeds,
            ));
        }
    }
    rows
}

fn compare_two(
    judge_a: &str,
    a: &BTreeMap<u64, &ClusterRunTotals>,
    judge_b: &str,
    b: &BTreeMap<u64, &ClusterRunTotals>,
    seeds: &[u64],
) -> JudgeComparison {
    // Per paired seed: (A's count, B's count), and the two rates per
    // node-hour up.
    let (mut healthy, mut healthy_a, mut healthy_b) = (Vec::new(), Vec::new(), Vec::new());
    let (mut all, mut all_a, mut all_b) = (Vec::new(), Vec::new(), Vec::new());
    let (mut obs_h, mut obs_h_a, mut obs_h_b) = (Vec::new(), Vec::new(), Vec::new());
    let (mut obs, mut obs_a, mut obs_b) = (Vec::new(), Vec::new(), Vec::new());
    let observed = |t: &ClusterRunTotals| {
        (
            t.counts.observer_false_healthy,
            t.counts.observer_false_healthy + t.counts.observer_false_starved,
        )
    };
    for seed in seeds {
        let (Some(ta), Some(tb)) = (a.get(seed), b.get(seed)) else {
            continue;
        };
        let rate = |count: u64, t: &ClusterRunTotals| {
            rate_per_hour(u128::from(count), u128::from(t.node_time.0))
        };
        let (Some(ha), Some(hb), Some(fa), Some(fb)) = (
            rate(ta.false_declarations_healthy, ta),
            rate(tb.false_declarations_healthy, tb),
            rate(ta.false_declarations, ta),
            rate(tb.false_declarations, tb),
        ) else {
            continue;
        };
        healthy.push((ta.false_declarations_healthy, tb.false_declarations_healthy));
        healthy_a.push(ha);
        healthy_b.push(hb);
        all.push((ta.false_declarations, tb.false_declarations));
        all_a.push(fa);
        all_b.push(fb);
        let ((oha, oa), (ohb, ob)) = (observed(ta), observed(tb));
        // Same node-time as above, so the rates exist.
        let per_hour = |count: u64, t: &ClusterRunTotals| rate(count, t).unwrap_or_default();
        obs_h.push((oha, ohb));
        obs_h_a.push(per_hour(oha, ta));
        obs_h_b.push(per_hour(ohb, tb));
        obs.push((oa, ob));
        obs_a.push(per_hour(oa, ta));
        obs_b.push(per_hour(ob, tb));
    }
    JudgeComparison {
        judge_a: judge_a.to_string(),
        judge_b: judge_b.to_string(),
        seeds: healthy.len(),
        false_healthy: PairedRatio::of(&healthy, &healthy_a, &healthy_b),
        false_declarations: PairedRatio::of(&all, &all_a, &all_b),
        observer_healthy: PairedRatio::of(&obs_h, &obs_h_a, &obs_h_b),
        observer_all: PairedRatio::of(&obs, &obs_a, &obs_b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::Nanos;

    /// A run of one node-hour (or `hours`) with `healthy` false
    /// declarations of healthy members and `impaired` more.
    fn run(healthy: u64, impaired: u64, hours: u64) -> ClusterRunTotals {
        ClusterRunTotals {
            false_declarations: healthy + impaired,
            false_declarations_healthy: healthy,
            node_time: Nanos::from_secs(3_600 * hours),
            ..ClusterRunTotals::default()
        }
    }

    #[test]
    fn pairs_by_seed_and_skips_seeds_one_judge_lacks() {
        // swim: seeds 1, 2, 3, 5; lifeguard: seeds 3, 1, 5 (not 2), in
        // another order. Seed 4 neither ran; on seed 5 swim had no
        // node-time (no rate).
        let swim = [run(30, 1, 1), run(500, 0, 1), run(56, 0, 2), run(9, 0, 0)];
        let lifeguard = [run(11, 0, 1), run(9, 3, 1), run(1, 0, 1)];
        let judges = [
            JudgeRuns {
                judge: "swim",
                seeds: &[1, 2, 3, 5],
                totals: &swim,
            },
            JudgeRuns {
                judge: "lifeguard",
                seeds: &[3, 1, 5],
                totals: &lifeguard,
            },
        ];
        let rows = compare_judges(&judges, &[1, 2, 3, 4, 5]);
        assert_eq!(rows.len(), 1);
        let c = &rows[0];
        assert_eq!(
            (c.judge_a.as_str(), c.judge_b.as_str()),
            ("swim", "lifeguard")
        );
        assert_eq!(c.seeds, 2);
        // Seed 1: 30 against 9; seed 3: 56 in 2 h = 28 per node-hour
        // against 11.
        let h = c.false_healthy;
        assert_eq!((h.a_count, h.b_count), (86, 20));
        // Rates [30, 28] against [9, 11]: 29 / 10.
        assert_eq!(h.ratio, Some(2.9));
        // Fieller by hand: deviations a: 1, −1; b: −1, 1; s_aa = s_bb = 2,
        // s_ab = −2; over n = 2: v_aa = v_bb = 1, v_ab = −1.
        // t(0.975, 1)² = 12.7062² = 161.44751844.
        // A = 100 − 161.44751844 = −61.44751844 ≤ 0: no upper bound.
        // B = 290 + 161.44751844 = 451.44751844
        // C = 841 − 161.44751844 = 679.55248156 > 0
        // D = B² − AC = 245561.67554724, √D = 495.54180
        // low = C / (B + √D) = 0.71759255.
        let ci = h.ci.unwrap();
        assert_eq!((ci.seeds, ci.high), (2, None));
        assert!((ci.low - 0.717_592_551_814_041_9).abs() < 1e-9, "{ci:?}");
        // All false: [31, 28] against [12, 11] per node-hour.
        let f = c.false_declarations;
        assert_eq!((f.a_count, f.b_count), (87, 23));
        assert_eq!(f.ratio, Some(29.5 / 11.5));
    }

    #[test]
    fn every_ordered_pair_once_in_judge_order() {
        let t = [run(1, 0, 1), run(2, 0, 1)];
        let judges: Vec<JudgeRuns> = ["a", "b", "c"]
            .iter()
            .map(|&judge| JudgeRuns {
                judge,
                seeds: &[1, 2],
                totals: &t,
            })
            .collect();
        let rows = compare_judges(&judges, &[1, 2]);
        let pairs: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.judge_a.as_str(), r.judge_b.as_str()))
            .collect();
        assert_eq!(pairs, [("a", "b"), ("a", "c"), ("b", "c")]);
        // The same runs, rates [1, 2] each: a ratio of 1, but Fieller's
        // set is every ρ with (1 − ρ)² (b̄² − t² v_bb) ≤ 0, and b̄² = 2.25
        // is below t² v_bb = 161.45 × 0.25: [0, unbounded).
        let ci = rows[0].false_healthy.ci.unwrap();
        assert_eq!((ci.ratio, ci.low, ci.high), (Some(1.0), 0.0, None));
        assert!(compare_judges(&judges[..1], &[1, 2]).is_empty());
    }

    #[test]
    fn one_seed_has_a_ratio_but_no_interval_and_none_of_b_no_ratio() {
        let (a, b) = ([run(6, 0, 2)], [run(1, 0, 1)]);
        let judges = [
            JudgeRuns {
                judge: "a",
                seeds: &[7],
                totals: &a,
            },
            JudgeRuns {
                judge: "b",
                seeds: &[7],
                totals: &b,
            },
        ];
        let c = &compare_judges(&judges, &[7])[0];
        // 3 per node-hour against 1.
        assert_eq!((c.seeds, c.false_healthy.ratio), (1, Some(3.0)));
        assert_eq!(c.false_healthy.ci, None);
        let zero = [run(0, 0, 1), run(0, 0, 1)];
        let some = [run(2, 0, 1), run(5, 0, 1)];
        let judges = [
            JudgeRuns {
                judge: "a",
                seeds: &[1, 2],
                totals: &some,
            },
            JudgeRuns {
                judge: "b",
                seeds: &[1, 2],
                totals: &zero,
            },
        ];
        let c = &compare_judges(&judges, &[1, 2])[0];
        let h = c.false_healthy;
        assert_eq!((h.a_count, h.b_count, h.ratio), (7, 0, None));
        let ci = h.ci.unwrap();
        assert_eq!((ci.ratio, ci.low, ci.high), (None, 0.0, None));
    }
}
