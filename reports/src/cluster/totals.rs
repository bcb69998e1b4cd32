//! What one cluster run contributes to a judge's figures, and nothing more
//! ([`ClusterRunTotals`]): the per-run totals a [`JudgeSummary`] is pooled
//! from. A run's outcome holds every declaration and suspicion; its totals
//! are a few numbers and one delay per crash, small enough to be written
//! as one line of a sweep's units and read back (`fdlab sweep` of a
//! membership scenario resumes, like a detector sweep, from them).
//!
//! [`summarize_totals`] is the definition of the pooled figures:
//! [`super::summarize_judge`] goes through it, so a sweep's row and a
//! run's `membership.csv` row of the same runs are the same figures.

use fdlab_protocol::Nanos;
use fdlab_sim::membership::outcome::{ClusterCounts, ClusterOutcome};
use fdlab_sim::stats::DurationStats;

use super::metrics::JudgeSummary;
use crate::metrics::mean_ci95;
use crate::metrics::rates::{mean_f64, rate_per_hour};

/// The totals of one cluster run (one judge on one seed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterRunTotals {
    /// Per crash, in the run's order: crash to its first Dead write
    /// (`None`: never declared).
    pub declare: Vec<Option<Nanos>>,
    /// Per crash, the same order: crash to every live Active silo's view
    /// showing it Dead (`None`: never).
    pub agree: Vec<Option<Nanos>>,
    /// Dead writes, true and false.
    pub declarations: u64,
    /// Dead writes about a live silo.
    pub false_declarations: u64,
    /// Of those, about a silo that was neither paused nor starved.
    pub false_declarations_healthy: u64,
    /// Node-time the false declarations destroyed, nanoseconds.
    pub destroyed: u128,
    pub suspicions: u64,
    /// Suspicions during which the target was not declared Dead.
    pub suspicions_undeclared: u64,
    pub counts: ClusterCounts,
    /// Node-time up.
    pub node_time: Nanos,
    /// Simulation events processed.
    pub events: u64,
}

impl ClusterRunTotals {
    /// The totals of `outcome`.
    pub fn of(outcome: &ClusterOutcome) -> ClusterRunTotals {
        let false_ones = outcome.declarations.iter().filter(|d| d.false_positive);
        ClusterRunTotals {
            declare: outcome
                .crashes
                .iter()
                .map(|c| c.declared.map(|at| at.saturating_sub(c.at)))
                .collect(),
            agree: outcome
                .crashes
                .iter()
                .map(|c| c.agreed.map(|at| at.saturating_sub(c.at)))
                .collect(),
            declarations: outcome.declarations.len() as u64,
            false_declarations: false_ones.clone().count() as u64,
            false_declarations_healthy: false_ones.clone().filter(|d| !d.impaired).count() as u64,
            destroyed: false_ones.map(|d| u128::from(d.destroyed.0)).sum(),
            suspicions: outcome.suspicions.len() as u64,
            suspicions_undeclared: outcome.suspicions.iter().filter(|s| !s.declared).count() as u64,
            counts: outcome.counts.clone(),
            node_time: outcome.node_time,
            events: outcome.events,
        }
    }
}

/// Pools one judge's runs, in the order given (see [`super`] for what each
/// figure means).
pub fn summarize_totals(judge: &str, runs: &[ClusterRunTotals]) -> JudgeSummary {
    let mut s = JudgeSummary {
        judge: judge.to_string(),
        label: judge.to_string(),
        runs: runs.len(),
        ..JudgeSummary::default()
    };
    let mut declare = Vec::new();
    let mut agree = Vec::new();
    let mut run_means = Vec::new();
    let mut run_rates = Vec::new();
    let mut healthy_rates = Vec::new();
    for t in runs {
        s.crashes += t.declare.len();
        let before = declare.len();
        declare.extend(t.declare.iter().flatten().copied());
        s.declared += declare.len() - before;
        if let Some(mean) = mean_f64(&declare[before..]) {
            run_means.push(mean);
        }
        agree.extend(t.agree.iter().flatten().copied());
        s.never_agreed += t.agree.iter().filter(|a| a.is_none()).count();
        s.declarations += t.declarations as usize;
        s.false_declarations += t.false_declarations as usize;
        s.false_declarations_healthy += t.false_declarations_healthy as usize;
        s.destroyed += t.destroyed;
        s.suspicions += t.suspicions as usize;
        s.suspicions_undeclared += t.suspicions_undeclared as usize;
        let c = &t.counts;
        s.votes += u128::from(c.votes);
        s.votes_withheld += u128::from(c.votes_withheld);
        s.table_reads += u128::from(c.table_reads);
        s.table_writes += u128::from(c.table_writes);
        s.table_conflicts += u128::from(c.table_conflicts);
        s.table_unavailable += u128::from(c.table_unavailable);
        s.messages += u128::from(c.messages);
        s.bytes += u128::from(c.bytes);
        s.self_terminations += u128::from(c.self_terminations);
        s.join_give_ups += u128::from(c.join_give_ups);
        s.restarts += u128::from(c.restarts);
        s.two_active_generations += u128::from(c.two_active_generations);
        s.observer_false_healthy += u128::from(c.observer_false_healthy);
        s.observer_false_starved += u128::from(c.observer_false_starved);
        let node_time = u128::from(t.node_time.0);
        s.node_time += node_time;
        if let Some(rate) = rate_per_hour(u128::from(t.false_declarations), node_time) {
            run_rates.push(rate);
        }
        if let Some(rate) = rate_per_hour(u128::from(t.false_declarations_healthy), node_time) {
            healthy_rates.push(rate);
        }
        s.events += u128::from(t.events);
    }
    s.declare = DurationStats::from_samples(declare);
    s.agree = DurationStats::from_samples(agree);
    s.declare_ci = mean_ci95(&run_means);
    s.false_rate_ci = mean_ci95(&run_rates);
    s.healthy_false_rate_ci = mean_ci95(&healthy_rates);
    s
}

/// The median time to declaration over every crash of `runs`, a crash
/// never declared ranking after every declared one (nearest rank): `None`
/// when half the crashes or more were never declared, or there was no
/// crash. Unlike the p50 of [`JudgeSummary::declare`], which is over the
/// declared crashes only, a judge cannot look fast by declaring few.
pub fn strict_declare_p50(runs: &[ClusterRunTotals]) -> Option<Nanos> {
    let crashes: usize = runs.iter().map(|t| t.declare.len()).sum();
    if crashes == 0 {
        return None;
    }
    let mut declared: Vec<Nanos> = runs
        .iter()
        .flat_map(|t| t.declare.iter().flatten().copied())
        .collect();
    declared.sort_unstable();
    let rank = (50 * crashes).div_ceil(100).max(1);
    declared.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(declare: &[Option<u64>]) -> ClusterRunTotals {
        ClusterRunTotals {
            declare: declare.iter().map(|d| d.map(Nanos::from_secs)).collect(),
            agree: declare.iter().map(|_| None).collect(),
            node_time: Nanos::from_secs(3600),
            ..ClusterRunTotals::default()
        }
    }

    #[test]
    fn a_crash_never_declared_counts_as_never_in_the_strict_median() {
        assert_eq!(strict_declare_p50(&[]), None);
        assert_eq!(strict_declare_p50(&[run(&[])]), None);
        let s = |d: &[Option<u64>]| strict_declare_p50(&[run(d)]);
        assert_eq!(s(&[Some(5), Some(7), None]), Some(Nanos::from_secs(7)));
        assert_eq!(s(&[Some(5), None]), Some(Nanos::from_secs(5)));
        assert_eq!(s(&[Some(5), None, None]), None);
        // Across runs.
        assert_eq!(
            strict_declare_p50(&[run(&[Some(9)]), run(&[Some(3)]), run(&[Some(4)])]),
            Some(Nanos::from_secs(4))
        );
    }

    #[test]
    fn never_agreed_counts_declared_and_undeclared_crashes() {
        let mut t = run(&[Some(5), None]);
        t.agree = vec![Some(Nanos::from_secs(6)), None];
        let s = summarize_totals("classic", &[t.clone(), t]);
        assert_eq!((s.crashes, s.declared, s.never_agreed), (4, 2, 2));
        assert_eq!(s.agree.unwrap().n, 2);
        assert_eq!(s.declare_ci.unwrap().runs, 2);
    }
}
