//! What shrinking a swarm's findings may cost (`fdlab swarm`; the shrinker
//! is [`crate::swarm::shrink`]), for `--dry-run` and the memory check.
//!
//! Each finding (a property violated by a detector, judge or policy) is
//! shrunk on its own: candidate schedules are built, validated and run,
//! in batches, until none is smaller. The runs are a few dozen per
//! finding whatever the schedule's size (each keeps one subject of the
//! run's); what grows with the faults `f` of the schedule is the
//! validation of the candidates, which the fault step builds all at once
//! (about `2f` schedules of up to `f` faults: all out, each half, each
//! quarter, ..., each fault) and builds again after each success: about
//! `2.7 f²` faults validated, and `2 f²` held at once. A schedule of 1,000
//! faults takes seconds to validate, far more than its runs.

use crate::scenario::{Fault, Scenario};

/// Candidate runs of a finding. Measured: 22 to 68 per finding, whatever
/// the schedule's size (`fdlab bench --only swarm`: 10 faults, 43-68;
/// `scenarios/swarm/` with `faults = [f, f]`: 39-51 at 1 to 1,000 faults
/// for `pipeline-freezes`, 49-65 at 100 and 1,000 for `lock-dead-peers`,
/// 22 at one): the fault step drops halves first, so a long schedule
/// loses most of its faults in a few runs.
const SHRINK_RUNS_PER_FINDING: f64 = 70.0;
/// Faults validated per finding, per square of its schedule's faults: the
/// fault step's `2f²`, then again on each half kept (a geometric sum,
/// 2 × 4/3).
const FAULT_CHECKS_PER_FAULT_SQUARED: f64 = 2.7;
/// Faults of the fault step's candidates per square of the schedule's
/// faults, built and held at once before any of them runs: about `2f`
/// candidates of up to `f` faults. Measured: 643 MiB at the peak of a
/// 1,000-fault schedule's shrinking (`size_of::<Fault>()` = 320).
const FAULTS_PER_STEP_PER_FAULT_SQUARED: f64 = 2.0;

/// What shrinking a swarm's findings may cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Shrinking {
    /// Findings at most: one per property checked and subject.
    pub findings: u64,
    /// Candidate runs of one finding.
    pub runs_per_finding: f64,
    /// The share of a whole run a candidate run costs: one subject's, in
    /// a scenario whose subjects are runs of their own (judges, policies);
    /// a detector scenario's candidate keeps its traffic, so all of it.
    pub run_share: f64,
    /// Faults validated for one finding.
    pub fault_checks_per_finding: f64,
    /// Faults validated by its largest step (the fault step on the whole
    /// schedule), all before the step's first run.
    pub step_fault_checks: f64,
    /// Bytes the candidates of one step hold at once.
    pub bytes: u64,
}

/// The cost of shrinking the findings of a swarm over `scenario` (its
/// world, without faults) whose runs draw up to `faults` faults and are
/// checked for `checks` properties.
pub fn shrinking(scenario: &Scenario, faults: u32, checks: usize) -> Shrinking {
    let subjects = if scenario.membership.is_some() {
        scenario.judge_names().len()
    } else if let Some(l) = &scenario.lockrpc {
        l.kinds().len()
    } else {
        scenario.detectors.len()
    }
    .max(1);
    let separate_runs = scenario.membership.is_some() || scenario.lockrpc.is_some();
    let f = f64::from(faults);
    Shrinking {
        findings: (checks * subjects) as u64,
        runs_per_finding: SHRINK_RUNS_PER_FINDING,
        run_share: if separate_runs {
            1.0 / subjects as f64
        } else {
            1.0
        },
        fault_checks_per_finding: FAULT_CHECKS_PER_FAULT_SQUARED * f * f,
        step_fault_checks: FAULTS_PER_STEP_PER_FAULT_SQUARED * f * f,
        bytes: (FAULTS_PER_STEP_PER_FAULT_SQUARED * f * f * std::mem::size_of::<Fault>() as f64)
            as u64,
    }
}
