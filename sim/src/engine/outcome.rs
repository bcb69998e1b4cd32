//! What a run leaves: every slot's timeline of verdict changes with its
//! message counts, per monitored pair with its ground truth, and the count
//! of simulated events; a run split into parts is joined here in pair
//! order, so its outcome is the one a single pass gives.

use std::ops::Range;

use super::observer::{LogRecord, Observer};
use super::{Event, Simulation};
use crate::outcome::{PairOutcome, RunOutcome};
use crate::plan::RunPlan;
use crate::queue::Queue;

/// What one part of a run produced.
pub(super) struct Part {
    pub(super) pairs: Vec<PairOutcome>,
    pub(super) events: u64,
    pub(super) log: Option<Vec<LogRecord>>,
    /// The detector calls, when a [`super::calls::Recorder`] kept them.
    pub(super) calls: Option<super::calls::CallLog>,
    /// The layout's pairs it simulated.
    pub(super) range: Range<usize>,
}

impl<O: Observer, Q: Queue<Event>> Simulation<'_, O, Q> {
    pub(super) fn finish(mut self) -> Part {
        self.mon.file_changes();
        let d = self.scenario.detectors.len();
        let mut timelines = self
            .mon
            .timelines
            .into_vec()
            .into_iter()
            .zip(self.mon.slots.iter())
            .map(|(mut tl, s)| {
                tl.messages = s.messages;
                tl.bytes = s.bytes;
                tl
            });
        let pairs = self
            .mon
            .layout_pairs
            .iter()
            .map(|&(m, t)| PairOutcome {
                monitor: m,
                target: t,
                must_detect: self.schedule.must_detect(m, t),
                unjudged: self.schedule.unjudged(m),
                detectors: timelines.by_ref().take(d).collect(),
            })
            .collect();
        debug_assert!(self.uncounted <= self.popped);
        let start = self.mon.first_pair;
        Part {
            pairs,
            events: self.popped - self.uncounted,
            calls: self.observer.take_calls().map(|mut calls| {
                calls.slots = self.mon.slots.len();
                calls
            }),
            log: self.observer.into_log(),
            range: start..start + self.mon.layout_pairs.len(),
        }
    }
}

/// The outcome of a run from its parts, joined in pair order (with the
/// replay's log, when one part kept it).
pub(super) fn assemble(
    plan: &RunPlan<'_>,
    parts: Vec<Part>,
) -> (RunOutcome, Option<Vec<LogRecord>>) {
    let mut pairs = Vec::with_capacity(plan.pairs().len());
    // Every fault action in the run counts once, whichever parts it
    // concerns (each part uncounts its own, see `Simulation::run`).
    let end = plan.scenario().duration;
    let mut events = plan
        .schedule()
        .actions
        .iter()
        .filter(|(at, _)| *at <= end)
        .count() as u64;
    let mut log = None;
    for part in parts {
        debug_assert_eq!(part.range.start, pairs.len(), "parts joined out of order");
        pairs.extend(part.pairs);
        events += part.events;
        log = log.or(part.log);
    }
    let scenario = plan.scenario();
    let outcome = RunOutcome {
        scenario: scenario.name.clone(),
        seed: plan.seed(),
        duration: scenario.duration,
        detectors: scenario.detectors.iter().map(|d| d.name.clone()).collect(),
        nodes: plan.nodes().to_vec(),
        layers: plan.layout().dataflow_layers(),
        faults: plan.faults().to_vec(),
        pairs,
        events,
    };
    (outcome, log)
}
