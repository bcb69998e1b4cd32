//! Choosing the recommended setting among evaluated grid points, whatever
//! produced the figures (a recorded trace or simulated scenarios).
//!
//! The question a user asks is Chen, Toueg & Aguilera's (2002, §5): the fastest
//! detection whose mistakes stay within a bound. Mistakes come in two kinds
//! that cost differently: a *false Failed* (the verdict reached Failed about a
//! healthy peer: a failover, an eviction) and a *suspicion* (Suspect only,
//! back to Alive before any Failed). A [`Constraint`] bounds either, both, or
//! their sum, per hour; a point *meets the constraint* when it is within every
//! bound given (default, with no bound given: no mistake at all). Among those,
//! fewer missed detections come first (a missed crash is infinitely slow),
//! then the objective (p99 or mean detection time), then the other of the two,
//! then fewer false Failed, then fewer mistakes, then the grid order, so the
//! ranking is total and deterministic. When no point meets the constraint, the
//! points are ranked by how far they are past it (the sum over the bounds of
//! the rate above each), to show the least wrong one.

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
    /// The median: the typical detection (on a membership scenario, the
    /// default: the typical time to a Dead declaration).
    P50,
}

impl Objective {
    pub const fn name(self) -> &'static str {
        match self {
            Objective::P99 => "p99",
            Objective::Mean => "mean",
            Objective::P50 => "p50",
        }
    }

    /// This objective's figure of `stats`.
    pub fn of(self, stats: &DurationStats) -> Nanos {
        match self {
            Objective::P99 => stats.p99,
            Objective::Mean => stats.mean,
            Objective::P50 => stats.p50,
        }
    }

    fn other(self) -> Objective {
        match self {
            Objective::P99 | Objective::P50 => Objective::Mean,
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
    /// Mistakes that reached Failed; the rest are suspicions.
    pub false_failed: usize,
    /// `false_failed` per hour of observed time.
    pub false_failed_per_hour: f64,
    /// Suspicions (mistakes that never reached Failed) per hour.
    pub suspicions_per_hour: f64,
    /// Mean mistake duration (T_M), `None` without mistakes.
    pub mean_mistake: Option<Nanos>,
    /// Share of healthy time (observed time outside recovery lags) with a
    /// correct (Alive) verdict (P_A).
    pub query_accuracy: f64,
}

impl Candidate {
    /// Mistakes that never reached Failed.
    pub fn suspicions(&self) -> usize {
        self.mistakes - self.false_failed
    }

    /// The objective's figure; `Nanos::MAX` when nothing was detected.
    pub fn objective(&self, objective: Objective) -> Nanos {
        self.detection
            .as_ref()
            .map_or(Nanos::MAX, |s| objective.of(s))
    }
}

/// The most mistakes per hour a setting may make: false Failed, suspicions,
/// and all mistakes together; `None` where there is no bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Constraint {
    pub max_false_failed: Option<f64>,
    pub max_suspicions: Option<f64>,
    pub max_mistakes: Option<f64>,
}

impl Constraint {
    /// The constraint of `fdlab tune`'s flags: the bounds given, or, with
    /// none, no mistake at all.
    pub fn from_flags(
        max_false_failed: Option<f64>,
        max_suspicions: Option<f64>,
        max_mistakes: Option<f64>,
    ) -> Constraint {
        let none = max_false_failed.is_none() && max_suspicions.is_none();
        Constraint {
            max_false_failed,
            max_suspicions,
            max_mistakes: max_mistakes.or(none.then_some(0.0)),
        }
    }

    /// Each bound with the candidate's figure.
    fn bounds(&self, c: &Candidate) -> [(Option<f64>, f64); 3] {
        [
            (self.max_false_failed, c.false_failed_per_hour),
            (self.max_suspicions, c.suspicions_per_hour),
            (self.max_mistakes, c.mistakes_per_hour),
        ]
    }

    /// Whether `c` is within every bound.
    pub fn meets(&self, c: &Candidate) -> bool {
        self.bounds(c)
            .iter()
            .all(|&(bound, value)| bound.is_none_or(|b| value <= b))
    }

    /// How far `c` is past the bounds: the sum of its rates above them.
    pub fn excess(&self, c: &Candidate) -> f64 {
        self.bounds(c)
            .iter()
            .filter_map(|&(bound, value)| bound.map(|b| (value - b).max(0.0)))
            .sum()
    }

    /// The bounds for people, `unit` after the last (`per hour`): `at most 0
    /// false Failed and at most 50 suspicions per hour`.
    pub fn describe(&self, unit: &str) -> String {
        let parts: Vec<String> = [
            (self.max_false_failed, "false Failed"),
            (self.max_suspicions, "suspicions"),
            (self.max_mistakes, "mistakes"),
        ]
        .iter()
        .filter_map(|&(bound, what)| bound.map(|b| format!("at most {b} {what}")))
        .collect();
        format!("{} {unit}", parts.join(" and "))
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
pub fn rank(candidates: &[Candidate], objective: Objective, constraint: &Constraint) -> Ranking {
    let meets = |c: &Candidate| constraint.meets(c);
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
            (true, true) => speed(a, b)
                .then(a.false_failed.cmp(&b.false_failed))
                .then(a.mistakes.cmp(&b.mistakes)),
            (false, false) => constraint
                .excess(a)
                .total_cmp(&constraint.excess(b))
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
            false_failed: 0,
            false_failed_per_hour: 0.0,
            suspicions_per_hour: mistakes as f64,
            mean_mistake: None,
            query_accuracy: 1.0,
        }
    }

    /// At most `max` mistakes per hour, as `--max-mistakes-per-hour`.
    fn at_most(max: f64) -> Constraint {
        Constraint::from_flags(None, None, Some(max))
    }

    #[test]
    fn fastest_within_the_constraint_wins() {
        let c = [
            cand(3_000, 2_500, 0, 0),
            cand(1_000, 900, 0, 2), // fastest, but makes mistakes
            cand(2_000, 1_500, 0, 0),
            cand(1_500, 1_000, 3, 0), // misses crashes
        ];
        let r = rank(&c, Objective::P99, &at_most(0.0));
        assert_eq!(r.order, [2, 0, 3, 1]);
        assert_eq!((r.feasible, r.best()), (3, Some(2)));
        let r = rank(&c, Objective::P99, &at_most(2.0));
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
        assert_eq!(rank(&c, Objective::P99, &at_most(0.0)).order, [1, 3, 0, 2]);
        assert_eq!(rank(&c, Objective::Mean, &at_most(0.0)).order, [3, 0, 2, 1]);
    }

    #[test]
    fn nothing_feasible_ranks_by_fewest_mistakes() {
        let c = [
            cand(1_000, 900, 0, 5),
            cand(3_000, 2_000, 0, 1),
            cand(2_000, 1_000, 0, 1),
        ];
        let r = rank(&c, Objective::P99, &at_most(0.5));
        assert_eq!((r.feasible, r.best()), (0, None));
        assert_eq!(r.order, [2, 1, 0]);
    }

    #[test]
    fn undetected_is_slowest() {
        let mut none = cand(0, 0, 10, 0);
        none.detection = None;
        let c = [none, cand(9_000, 9_000, 10, 0)];
        assert_eq!(rank(&c, Objective::P99, &at_most(0.0)).order, [1, 0]);
    }

    #[test]
    fn false_failed_and_suspicions_are_bounded_apart() {
        // Fast with flicker only, faster with false Failed, slow with none.
        let mut flicker = cand(1_000, 900, 0, 50);
        flicker.suspicions_per_hour = 50.0;
        let mut failing = cand(500, 400, 0, 3);
        failing.false_failed = 3;
        failing.false_failed_per_hour = 3.0;
        failing.suspicions_per_hour = 0.0;
        let clean = cand(4_000, 3_000, 0, 0);
        let c = [flicker, failing, clean];
        // No flag: no mistake at all.
        let none = Constraint::from_flags(None, None, None);
        assert_eq!(none, at_most(0.0));
        assert_eq!(rank(&c, Objective::P99, &none).best(), Some(2));
        assert_eq!(none.describe("per hour"), "at most 0 mistakes per hour");
        // No false Failed, any flicker: the flickering one.
        let no_false = Constraint::from_flags(Some(0.0), None, None);
        assert_eq!(no_false.max_mistakes, None);
        let r = rank(&c, Objective::P99, &no_false);
        assert_eq!((r.best(), r.feasible), (Some(0), 2));
        assert_eq!(
            no_false.describe("per hour"),
            "at most 0 false Failed per hour"
        );
        // Both bounded: only the clean one; past them, the least excess first.
        let both = Constraint::from_flags(Some(0.0), Some(10.0), None);
        let r = rank(&c, Objective::P99, &both);
        assert_eq!(r.order, [2, 1, 0]);
        assert_eq!(r.feasible, 1);
        assert_eq!(
            both.describe("per pair-hour"),
            "at most 0 false Failed and at most 10 suspicions per pair-hour"
        );
        // The sum bounds them together.
        let sum = Constraint::from_flags(Some(5.0), None, Some(4.0));
        assert_eq!(rank(&c, Objective::P99, &sum).best(), Some(1));
    }
}
