//! Quality-of-service metrics of failure detectors, computed from the verdict
//! timelines and the ground truth of simulated runs.
//!
//! The metrics are those of Chen, Toueg & Aguilera, "On the Quality of Service
//! of Failure Detectors" (IEEE Transactions on Computers 51(5), 2002): a
//! detector is judged by how fast it notices a real failure (*detection time*
//! T_D) and by how rarely and how briefly it is wrong about a live peer
//! (*mistake rate* λ_M, *mistake duration* T_M, *query accuracy probability*
//! P_A; their mistake recurrence time T_MR is 1/λ_M). Chen et al. define them
//! for one monitor–target pair over an infinite run with the target either
//! crashed or never crashing; a simulated run is finite and faults come and go,
//! so every figure here is measured inside the stretches of time where the
//! ground truth says what the verdict must be (§5 of the spec):
//!
//! - **Verdict timeline.** [`DetectorTimeline::changes`](fdlab_sim::outcome::DetectorTimeline::changes) is a list of
//!   `(true time, verdict)`, Alive before the first change. Several changes may
//!   share an instant; the last one at an instant is the verdict from then on
//!   (a Suspect then Failed in one instant is a Failed). Changes are taken in
//!   time order (a stable sort, so an out-of-order list still has a meaning);
//!   changes at or after the end of the run are ignored.
//! - **Judged time** of a pair is `[0, duration)` minus its `unjudged` windows
//!   (its monitor was down and had no opinion). **Must-detect time** is the
//!   union of its `must_detect` windows within judged time; **must-not-detect
//!   time** is judged time minus must-detect time.
//! - **Detection time** T_D of one must-detect window `[onset, end)` (end clipped
//!   to the end of the run): from the onset to the first judged instant `t` in
//!   `[onset, end)` at which the verdict is Failed and stays Failed at every
//!   judged instant until the fault ends. This is Chen et al.'s T_D ("the time
//!   from the crash until the final, permanent suspicion"), with "permanent"
//!   meaning "for as long as the fault lasts": a Failed that flaps back to Alive
//!   during the fault does not count, the later lasting one does. A verdict
//!   already Failed at the onset that stays so gives T_D = 0. If there is no
//!   such instant, the window is a **missed** detection. The same is measured to
//!   Suspect (the first Suspect-or-worse that lasts until the fault ends).
//!   Windows entirely outside judged time (the monitor was down for the whole
//!   fault) are skipped, neither detected nor missed; empty windows likewise.
//! - **Mistakes**: a transition from Alive into Suspect or Failed at an instant
//!   of must-not-detect time (Chen et al.'s "S-transition" while the target is
//!   up). A mistake lasts until the verdict returns to Alive, or until
//!   must-not-detect time ends (the next must-detect window starts, the monitor
//!   goes down, or the run ends), whichever comes first: after that instant the
//!   verdict is no longer a mistake, or no longer judged. A Suspect that turns
//!   into Failed is one mistake, not two.
//! - **λ_M** = mistakes / (must-not-detect time in hours, summed over pairs): the
//!   mistake rate per monitored-pair-hour. **T_M** = mean mistake duration.
//!   **P_A** = share of must-not-detect time during which the verdict was Alive
//!   (the probability that a query at a random instant of must-not-detect time
//!   gets a correct answer). Verdicts that stay non-Alive after a fault heals
//!   lower P_A but are not new mistakes (no transition happened then).
//! - **Overhead**: liveness messages and bytes per monitored pair per second:
//!   the sum over pairs divided by (pairs × run duration in seconds).
//!
//! Aggregates per scenario × detector ([`DetectorSummary`]) pool all pairs and
//! all seeds. Percentiles are by **nearest rank** ([`nearest_rank`]: the value at
//! 1-based rank ⌈p·n⌉ of the sorted samples), so every percentile is a
//! detection time that really happened. Every figure carries the number of
//! samples behind it.
//!
//! **Confidence intervals** (95%, [`mean_ci95`]) treat the runs (seeds) as the
//! independent replications: within one run, samples are correlated (one crash
//! is detected by several monitors at nearly the same time, one long pause
//! causes mistakes on every monitor of the paused node), so pooling them as if
//! independent would give intervals that are far too narrow. For the mean
//! detection time, the interval is a Student-t interval over the per-run means
//! (runs with at least one detection); for the mistake rate, a Student-t
//! interval over the per-run rates λ_M (runs with must-not-detect time). Both
//! need at least two runs, and lower bounds are clamped at zero. The interval is
//! for the mean of per-run values, which equals the pooled figure when all runs
//! carry the same weight (the same faults and pairs every seed, the usual case).
//! When every run has zero mistakes the rate interval is `[0, 0]`: seeds did not
//! disagree, which says nothing about rates below one mistake per run.
//! The ratio of the means of two sets of per-run values paired by seed (one
//! judge's false declarations per node-hour against another's) gets
//! Fieller's interval ([`ratio_ci95`]), which uses the pairing.
//!
//! Determinism: no hash maps; sums of times are exact integer sums (`u128`
//! nanoseconds); float sums run in a fixed order (pairs in order, seeds in the
//! order given, detectors in the scenario's order).

mod ci;
mod classes;
mod judge;
pub(crate) mod rates;
mod ratio_ci;
mod recovery;
mod run;
mod spans;
mod summary;

#[cfg(test)]
mod judge_tests;
#[cfg(test)]
mod recovery_tests;
#[cfg(test)]
pub(crate) mod tests;

pub use ci::{mean_ci95, MeanCi};
pub use classes::{summarize_classes, ClassSummary, LinkClass};
/// Moved to `fdlab_sim::stats` so that hosts in `sim` (the trace evaluator)
/// compute percentiles the same way; re-exported here for existing users.
pub use fdlab_sim::stats::{nearest_rank, DurationStats};
pub use judge::{pair_metrics, Detection, Mistake, MistakeEnd, PairMetrics};
pub use ratio_ci::{ratio_ci95, RatioCi};
pub use recovery::Recovery;
pub use run::{run_metrics, DetectorRun, RunMetrics, RunTotals};
pub use summary::{summarize, summarize_totals, DetectorSummary};

use fdlab_sim::outcome::RunOutcome;

/// The runs of one scenario, in seed order, as the caller ran them.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioResult {
    pub scenario: String,
    pub runs: Vec<RunOutcome>,
}

/// Everything computed for one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioMetrics {
    pub scenario: String,
    /// In the order of [`ScenarioResult::runs`].
    pub runs: Vec<RunMetrics>,
    /// One per detector name, in order of first appearance.
    pub summary: Vec<DetectorSummary>,
    /// Per detector, in the same order, one per link class with pairs.
    pub classes: Vec<ClassSummary>,
}

/// Computes per-run and aggregate metrics of one scenario.
pub fn scenario_metrics(result: &ScenarioResult) -> ScenarioMetrics {
    let runs: Vec<RunMetrics> = result.runs.iter().map(run_metrics).collect();
    let summary = summarize(&runs);
    let classes = summarize_classes(&runs);
    ScenarioMetrics {
        scenario: result.scenario.clone(),
        runs,
        summary,
        classes,
    }
}
