//! Choosing the recommended setting among evaluated grid points, whatever
//! produced the figures (a recorded trace or simulated scenarios).
//!
//! The question a user asks is Chen, Toueg & Aguilera's (2002, §5): the fastest
//! detection whose mistakes stay within a bound. A point *meets the
//! constraint* when its mistakes per hour are at most the bound (default 0: no
//! mistake at all). Among those, fewer missed detections come first (a missed
//! crash is infinitely slow), then the objective (p99 or mean detection time),
//! then the other of the two, then fewer mistakes, then the grid order, so the
//! ranking is total and deterministic. When no point meets the constraint, the
//! points are ranked by mistakes per hour first, to show the least wrong one.

use std::cmp::Ordering;

use clap::ValueEnum;
use fdlab_protocol::Nanos;
use fdlab_sim::stats::DurationStats;

/// Which detection-time figure to minimize.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Objective {
    /// The 99th percentile (nearest rank): the slow detections that hurt.
    #[default]
    P99,
    /// The mean.
    Mean,
}

impl Objective {
    pub const fn name(self) -> &'static str {
        match self {
            Objective::P99 => "p99",
            Objective::Mean => "mean",
        }
    }

    /// This objective's figure of `stats`.
    pub fn of(self, stats: &DurationStats) -> Nanos {
        match self {
            Objective::P99 => stats.p99,
            Objective::Mean => stats.mean,
        }
    }

    fn other(self) -> Objective {
        match self {
            Objective::P99 => Objective::Mean,
            Objective::Mean => Objective::P99,
        }
    }
}

/// The evidence about one evaluated grid point: what the ranking compares and
/// what the report shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Crashes the detection times were measured on (cuts of a trace, or
    /// crash faults of simulated runs).
    pub crashes: usize,
    /// Detection times of the detected crashes; `None` if none was detected.
    pub detection: Option<DurationStats>,
    /// Crashes never detected.
    pub missed: usize,
    /// Mistakes (transitions from Alive while the peer was up).
    pub mistakes: usize,
    /// Mistakes per hour of observed time (λ_M).
    pub mistakes_per_hour: f64,
    /// Mean mistake duration (T_M), `None` without mistakes.
    pub mean_mistake: Option<Nanos>,
    /// Share of observed time with a correct (Alive) verdict (P_A).
    pub query_accuracy: f64,
}

impl Candidate {
    /// The objective's figure; `Nanos::MAX` when nothing was detected.
    pub fn objective(&self, objective: Objective) -> Nanos {
        self.detection
            .as_ref()
            .map_or(Nanos::MAX, |s| objective.of(s))
    }
}

/// Candidates in order of preference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranking {
    /// Indices into the candidates, best first; those meeting the constraint
    /// come before all others.
    pub order: Vec<usize>,
    /// How many candidates meet the constraint (the first `feasible` of `order`).
    pub feasible: usize,
}

impl Ranking {
    /// The recommended candidate, if any candidate meets the constraint.
    pub fn best(&self) -> Option<usize> {
        (self.feasible > 0).then(|| self.order[0])
    }
}

/// Ranks `candidates` (see the module documentation).
pub fn rank(candidates: &[Candidate], objective: Objective, max_mistakes_per_hour: f64) -> Ranking {
    let meets = |c: &Candidate| c.mistakes_per_hour <= max_mistakes_per_hour;
    let speed = |a: &Candidate, b: &Candidate| {
        a.missed
            .cmp(&b.missed)
            .then(a.objective(objective).cmp(&b.objective(objective)))
            .then(
                a.objective(objective.other())
                    .cmp(&b.objective(objective.other())),
            )
    };
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (&candidates[i], &candidates[j]);
        match (meets(a), meets(b)) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (true, true) => speed(a, b).then(a.mistakes.cmp(&b.mistakes)),
            (false, false) => a
                .mistakes_per_hour
                .total_cmp(&b.mistakes_per_hour)
                .then_with(|| speed(a, b)),
        }
        .then(i.cmp(&j))
    });
    let feasible = candidates.iter().filter(|c| meets(c)).count();
    Ranking { order, feasible }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(p99_ms: u64, mean_ms: u64, missed: usize, mistakes: usize) -> Candidate {
        let ms = Nanos::from_millis;
        Candidate {
            crashes: 100 + missed,
            detection: Some(DurationStats {
                n: 100,
                mean: ms(mean_ms),
                p50: ms(mean_ms),
                p90: ms(p99_ms),
                p99: ms(p99_ms),
                max: ms(p99_ms),
            }),
            missed,
            mistakes,
            mistakes_per_hour: mistakes as f64,
            mean_mistake: None,
            query_accuracy: 1.0,
        }
    }

    #[test]
    fn fastest_within_the_constraint_wins() {
        let c = [
            cand(3_000, 2_500, 0, 0),
            cand(1_000, 900, 0, 2), // fastest, but makes mistakes
            cand(2_000, 1_500, 0, 0),
            cand(1_500, 1_000, 3, 0), // misses crashes
        ];
        let r = rank(&c, Objective::P99, 0.0);
        assert_eq!(r.order, [2, 0, 3, 1]);
        assert_eq!((r.feasible, r.best()), (3, Some(2)));
        let r = rank(&c, Objective::P99, 2.0);
        assert_eq!(r.order, [1, 2, 0, 3]);
    }

    #[test]
    fn objective_and_ties() {
        let c = [
            cand(2_000, 1_500, 0, 0),
            cand(1_900, 1_600, 0, 0),
            cand(2_000, 1_500, 0, 0),
            cand(2_000, 1_400, 0, 0),
        ];
        assert_eq!(rank(&c, Objective::P99, 0.0).order, [1, 3, 0, 2]);
        assert_eq!(rank(&c, Objective::Mean, 0.0).order, [3, 0, 2, 1]);
    }

    #[test]
    fn nothing_feasible_ranks_by_fewest_mistakes() {
        let c = [
            cand(1_000, 900, 0, 5),
            cand(3_000, 2_000, 0, 1),
            cand(2_000, 1_000, 0, 1),
        ];
        let r = rank(&c, Objective::P99, 0.5);
        assert_eq!((r.feasible, r.best()), (0, None));
        assert_eq!(r.order, [2, 1, 0]);
    }

    #[test]
    fn undetected_is_slowest() {
        let mut none = cand(0, 0, 10, 0);
        none.detection = None;
        let c = [none, cand(9_000, 9_000, 10, 0)];
        assert_eq!(rank(&c, Objective::P99, 0.0).order, [1, 0]);
    }
}
