//! The engine's entry points, and the parts a run can be split into.
//!
//! Monitored pairs interact only through a node's data plane (links, stage
//! queues) and a degraded node's processing queue, where one pair's events
//! delay another's. Without those, every other shared thing is fixed before
//! the run (faults, clocks, topology: the [`RunPlan`]) or per pair (heartbeat
//! and probe streams with their own random streams), so each pair's events,
//! and therefore its timelines, are exactly those of the whole run (a test
//! compares them); only the interleaving of different pairs' events changes.
//! A replay is never split, so its event log keeps the one global order.
//!
//! Such a run is split into parts of pairs (units of work for rayon's
//! threads), and each pair of a part is simulated on its own, one after
//! another, on a [`SmallQueue`] of its few pending events instead of a
//! timing wheel, by the loop of [`super::fast`]. A pair's state (its
//! detectors, its random streams, its two nodes) then stays in the core's
//! first-level cache for its whole run, and a part's state is that of one
//! pair whatever the size of the mesh.

use std::ops::Range;

use rayon::prelude::*;

use super::calls::{CallLog, Recorder};
use super::observer::{LogRecord, Observer, Quiet, Replay};
use super::outcome::{assemble, Part};
use super::Simulation;
use crate::faults::Action;
use crate::outcome::RunOutcome;
use crate::plan::RunPlan;
use crate::queue::EventQueue;
use crate::scores::ScoreSampler;
use crate::small_queue::SmallQueue;
use crate::valid::ValidScenario;

/// A run split into parts (see [`run`]) makes at least this many, when it
/// has as many pairs: enough for every thread to take several and finish
/// together with the others.
pub const MIN_PARTS: usize = 64;
/// Most pairs in one part: a part is a unit of work for a thread, a few
/// milliseconds to a second of simulation.
pub const MAX_PART_PAIRS: usize = 256;

/// What one run returns: its outcome, and its event log when asked for.
pub type RunResult = (RunOutcome, Option<Vec<LogRecord>>);

/// Into how many parts an unlogged run of `scenario` with `seed` is split
/// (see [`run`]).
pub fn part_count(scenario: &ValidScenario, seed: u64) -> usize {
    parts(&RunPlan::build(scenario, seed), false).len()
}

/// Whether the run's monitored pairs interact (see the module comment):
/// through data links, or a degraded node's queue.
fn coupled(plan: &RunPlan<'_>) -> bool {
    !plan.layout().links.is_empty()
        || plan
            .schedule()
            .actions
            .iter()
            .any(|(_, a)| matches!(a, Action::DegradeStart { .. }))
}

/// The ranges of monitored pairs a run can be split into, each simulated on
/// its own (in parallel when threads are free).
fn parts(plan: &RunPlan<'_>, logged: bool) -> Vec<Range<usize>> {
    let n = plan.pairs().len();
    if logged || coupled(plan) || n == 0 {
        return std::iter::once(0..n).collect();
    }
    let size = (n / MIN_PARTS).clamp(1, MAX_PART_PAIRS);
    (0..n)
        .step_by(size)
        .map(|start| start..(start + size).min(n))
        .collect()
}

/// Runs `scenario` with `seed`; `log` also returns the replay's event log.
///
/// A run without a log whose monitored pairs do not interact (see the
/// module comment) is split into parts of a few pairs to [`MAX_PART_PAIRS`],
/// run in parallel on rayon's pool, each pair on its own, and joined in
/// pair order: the outcome is the one a single pass gives.
pub fn run(scenario: &ValidScenario, seed: u64, log: bool) -> RunResult {
    debug_assert!(
        !scenario.is_membership(),
        "a membership scenario runs in `membership::run`"
    );
    let plan = RunPlan::build(scenario, seed);
    if log {
        let replay = Replay {
            log: Vec::new(),
            scores: None,
        };
        return run_whole(&plan, replay);
    }
    let ranges = parts(&plan, false);
    let coupled = coupled(&plan);
    let simulate = |range: &Range<usize>| {
        if coupled {
            Simulation::new(&plan, range.clone(), Quiet, EventQueue::new()).run()
        } else {
            run_pairs(&plan, range.clone())
        }
    };
    let results: Vec<Part> = if ranges.len() == 1 {
        ranges.iter().map(simulate).collect()
    } else {
        ranges.par_iter().map(simulate).collect()
    };
    assemble(&plan, results)
}

/// The pairs `range` of a run whose pairs do not interact, each simulated
/// on its own (see the module comment), joined in pair order.
fn run_pairs(plan: &RunPlan<'_>, range: Range<usize>) -> Part {
    let mut part = Part {
        pairs: Vec::with_capacity(range.len()),
        events: 0,
        log: None,
        calls: None,
        range: range.clone(),
    };
    for p in range {
        let one = Simulation::new(plan, p..p + 1, Quiet, SmallQueue::new()).run_pair();
        debug_assert_eq!(one.range.start, p);
        part.pairs.extend(one.pairs);
        part.events += one.events;
    }
    part
}

/// [`run`] with the event log, also sampling the detector scores of the
/// pair of `sampler` (see [`crate::scores`]); the sampler's series end where
/// the run ends once [`ScoreSampler::finish`] is called with its duration.
pub fn run_with_scores(
    scenario: &ValidScenario,
    seed: u64,
    sampler: &mut ScoreSampler,
) -> RunResult {
    let plan = RunPlan::build(scenario, seed);
    let replay = Replay {
        log: Vec::new(),
        scores: Some(sampler),
    };
    run_whole(&plan, replay)
}

/// [`run`] in one pass over every pair, keeping every call it makes to its
/// detectors, to be made again alone ([`CallLog::replay`]): the outcome is
/// the one [`run`] gives.
pub fn run_recording_calls(scenario: &ValidScenario, seed: u64) -> (RunOutcome, CallLog) {
    let plan = RunPlan::build(scenario, seed);
    let recorder = Recorder {
        log: CallLog::default(),
    };
    let all = 0..plan.pairs().len();
    let mut part = Simulation::new(&plan, all, recorder, EventQueue::new()).run();
    let calls = part.calls.take().unwrap_or_default();
    (assemble(&plan, vec![part]).0, calls)
}

/// One pass over every pair.
fn run_whole<O: Observer>(plan: &RunPlan<'_>, observer: O) -> RunResult {
    let all = 0..plan.pairs().len();
    let part = Simulation::new(plan, all, observer, EventQueue::new()).run();
    assemble(plan, vec![part])
}
