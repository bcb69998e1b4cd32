//! The cluster-level metrics of SPEC §8.3, per judge, pooled over the seeds
//! of one membership scenario ([`JudgeSummary`], the row of
//! `membership.csv`). The definitions are in [`super`].

use fdlab_protocol::Nanos;
use fdlab_sim::membership::outcome::{ClusterOutcome, Declaration};
use fdlab_sim::outcome::FaultRecord;
use fdlab_sim::stats::{mean_nanos, DurationStats};

use super::compare::{compare_judges, JudgeComparison, JudgeRuns};
use super::totals::{summarize_totals, ClusterRunTotals};
use crate::metrics::rates::{per_second, rate_per_hour};
use crate::metrics::MeanCi;

/// One judge over all runs (seeds) of one membership scenario.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JudgeSummary {
    pub judge: String,
    /// How tables and charts name the judge (`classic (10.2)`); the name
    /// itself where no run says more (a sweep's totals).
    pub label: String,
    /// Runs (seeds) of this judge.
    pub runs: usize,
    /// Crashes the cluster had to declare, summed over runs.
    pub crashes: usize,
    /// Of those, crashes whose row was written Dead.
    pub declared: usize,
    /// Crash to its first Dead write, pooled over runs (`n` = `declared`).
    pub declare: Option<DurationStats>,
    /// 95% interval of the mean time to declaration (nanoseconds), over
    /// per-run means (runs with at least one declared crash).
    pub declare_ci: Option<MeanCi>,
    /// Crash to every live Active silo's view showing it Dead.
    pub agree: Option<DurationStats>,
    /// Crashes whose views never agreed (declared or not).
    pub never_agreed: usize,
    /// Dead writes, true and false.
    pub declarations: usize,
    /// Dead writes about a live silo.
    pub false_declarations: usize,
    /// Of the false declarations, those of a silo that was neither paused
    /// nor starved at the time (a healthy member: SPEC §8.2's split).
    pub false_declarations_healthy: usize,
    /// 95% interval of the per-run rates of those per node-hour.
    pub healthy_false_rate_ci: Option<MeanCi>,
    /// 95% interval of the false declarations per node-hour, over per-run
    /// rates (runs with node-time).
    pub false_rate_ci: Option<MeanCi>,
    /// Node-time the false declarations destroyed, nanoseconds.
    pub destroyed: u128,
    pub suspicions: usize,
    /// Suspicions during which the target was not declared Dead.
    pub suspicions_undeclared: usize,
    pub votes: u128,
    pub votes_withheld: u128,
    pub table_reads: u128,
    pub table_writes: u128,
    pub table_conflicts: u128,
    pub table_unavailable: u128,
    pub messages: u128,
    pub bytes: u128,
    pub self_terminations: u128,
    pub join_give_ups: u128,
    pub restarts: u128,
    /// Must be zero: instants at which one node had two generations Active.
    pub two_active_generations: u128,
    /// False-positive events as the Lifeguard paper counts them: each
    /// member that moved a live member to Dead, by whether that observer
    /// was healthy or itself paused or starved.
    pub observer_false_healthy: u128,
    pub observer_false_starved: u128,
    /// Node-time up (sum over nodes and runs of the time a silo process
    /// ran), nanoseconds: the exposure of the rates.
    pub node_time: u128,
    /// Simulation events processed.
    pub events: u128,
}

impl JudgeSummary {
    /// Crashes never written Dead.
    pub fn never_declared(&self) -> usize {
        self.crashes - self.declared
    }
    /// False declarations per node-hour up.
    pub fn false_rate(&self) -> Option<f64> {
        rate_per_hour(self.false_declarations as u128, self.node_time)
    }
    /// Suspicions that led to no declaration per node-hour up.
    pub fn undeclared_suspicion_rate(&self) -> Option<f64> {
        rate_per_hour(self.suspicions_undeclared as u128, self.node_time)
    }
    /// False declarations of healthy silos per node-hour up.
    pub fn healthy_false_rate(&self) -> Option<f64> {
        rate_per_hour(self.false_declarations_healthy as u128, self.node_time)
    }
    /// `count` per node-hour up.
    pub fn rate(&self, count: u128) -> Option<f64> {
        rate_per_hour(count, self.node_time)
    }
    /// Mean node-time destroyed by one false declaration.
    pub fn mean_destroyed(&self) -> Option<Nanos> {
        mean_nanos(self.destroyed, self.false_declarations as u128)
    }
    /// `total` divided by the number of runs.
    pub fn per_run(&self, total: u128) -> Option<f64> {
        (self.runs > 0).then(|| total as f64 / self.runs as f64)
    }
    /// Messages between silos per node per second up.
    pub fn messages_per_node_second(&self) -> Option<f64> {
        per_second(self.messages, self.node_time)
    }
    /// Their bytes per node per second up.
    pub fn bytes_per_node_second(&self) -> Option<f64> {
        per_second(self.bytes, self.node_time)
    }
}

/// One declaration of one run, for `declarations.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclarationRow {
    pub judge: String,
    pub seed: u64,
    pub declaration: Declaration,
}

/// Everything computed for one membership scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterMetrics {
    pub scenario: String,
    /// One per judge, in order of first appearance.
    pub summary: Vec<JudgeSummary>,
    /// Seeds, in order of first appearance.
    pub seeds: Vec<u64>,
    /// Every declaration: runs in the order given, then time order.
    pub declarations: Vec<DeclarationRow>,
    /// Every ordered pair of judges (A before B in judge order), paired by
    /// seed ([`super::compare`]).
    pub comparisons: Vec<JudgeComparison>,
    /// Per seed (in `seeds` order): the run's length and its faults, the
    /// same for every judge (identical traffic), for the summary to put
    /// false declarations down to faults.
    pub faults: Vec<(u64, Nanos, Vec<FaultRecord>)>,
}

impl ClusterMetrics {
    /// Runs (judges × seeds) summed over judges.
    pub fn runs(&self) -> usize {
        self.summary.iter().map(|s| s.runs).sum()
    }
    /// Events summed over every run.
    pub fn events(&self) -> u128 {
        self.summary.iter().map(|s| s.events).sum()
    }
}

/// Computes the metrics of one membership scenario from its runs (every
/// judge × seed, in judge order then seed order, as the caller ran them).
pub fn cluster_metrics(scenario: &str, outcomes: &[ClusterOutcome]) -> ClusterMetrics {
    let mut judges: Vec<&str> = Vec::new();
    let mut seeds: Vec<u64> = Vec::new();
    for o in outcomes {
        if !judges.contains(&o.judge.as_str()) {
            judges.push(&o.judge);
        }
        if !seeds.contains(&o.seed) {
            seeds.push(o.seed);
        }
    }
    // Per judge, the seed and totals of each of its runs, in run order.
    let runs: Vec<(Vec<u64>, Vec<ClusterRunTotals>)> = judges
        .iter()
        .map(|&judge| {
            outcomes
                .iter()
                .filter(|o| o.judge == judge)
                .map(|o| (o.seed, ClusterRunTotals::of(o)))
                .unzip()
        })
        .collect();
    let summary = judges
        .iter()
        .zip(&runs)
        .map(|(&judge, (_, totals))| {
            let mut s = summarize_totals(judge, totals);
            if let Some(o) = outcomes.iter().find(|o| o.judge == judge) {
                s.label.clone_from(&o.label);
            }
            s
        })
        .collect();
    let judge_runs: Vec<JudgeRuns> = judges
        .iter()
        .zip(&runs)
        .map(|(&judge, (seeds, totals))| JudgeRuns {
            judge,
            seeds,
            totals,
        })
        .collect();
    let comparisons = compare_judges(&judge_runs, &seeds);
    let declarations = outcomes
        .iter()
        .flat_map(|o| {
            o.declarations.iter().map(|d| DeclarationRow {
                judge: o.judge.clone(),
                seed: o.seed,
                declaration: d.clone(),
            })
        })
        .collect();
    let faults = seeds
        .iter()
        .filter_map(|&seed| {
            let o = outcomes.iter().find(|o| o.seed == seed)?;
            Some((seed, o.duration, o.faults.clone()))
        })
        .collect();
    ClusterMetrics {
        scenario: scenario.to_string(),
        summary,
        seeds,
        declarations,
        comparisons,
        faults,
    }
}

/// Pools one judge's runs, in the order given (through their
/// [`ClusterRunTotals`], as a sweep pools its units).
pub fn summarize_judge(judge: &str, runs: &[&ClusterOutcome]) -> JudgeSummary {
    let totals: Vec<ClusterRunTotals> = runs.iter().map(|o| ClusterRunTotals::of(o)).collect();
    let mut s = summarize_totals(judge, &totals);
    if let Some(first) = runs.first() {
        s.label.clone_from(&first.label);
    }
    s
}
