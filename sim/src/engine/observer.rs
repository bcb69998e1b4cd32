//! What a run shows besides its outcome: the replay's event log (every
//! fault, delivery, drop and verdict change, written to `trace.csv`) and the
//! replay's detector scores ([`crate::scores`]).
//!
//! The engine takes its observer as a type parameter: a plain run's
//! [`Quiet`] observer does nothing and says so in a constant, so every log
//! call and score sample compiles away, and the event loop pays no check
//! per input for what only a replay wants.

use fdlab_protocol::{Detector, Nanos};

use super::calls::{Call, CallLog};
use crate::clock::Clock;
use crate::scores::ScoreSampler;

/// One line of a replay's event log.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRecord {
    pub time: Nanos,
    pub event: &'static str,
    /// The node where it happened (none for a fault on every link).
    pub node: Option<u32>,
    pub peer: Option<u32>,
    pub detector: Option<u16>,
    pub detail: String,
}

/// Watches a run.
pub(crate) trait Observer {
    /// Whether [`Observer::log`] keeps anything (the engine builds no record
    /// otherwise).
    const LOGS: bool;
    /// Whether [`Observer::detector_input`] looks at anything.
    const SAMPLES: bool;
    /// Whether [`Observer::call`] and [`Observer::started`] keep anything
    /// (the engine notes no call otherwise).
    const CALLS: bool = false;

    fn log(&mut self, record: LogRecord);

    /// Detector `det` of pair `(monitor, target)` has taken an input at true
    /// time `now`, on a monitor whose clock is `clock`.
    fn detector_input(
        &mut self,
        pair: (u32, u32),
        det: u16,
        now: Nanos,
        clock: Clock,
        detector: &Detector,
    );

    /// A call about to be made to slot `slot`'s detector.
    fn call(&mut self, _slot: u32, _call: Call) {}

    /// Slot `slot` has a new detector, `detector`.
    fn started(&mut self, _slot: u32, _detector: &Detector) {}

    /// The log, if this observer keeps one.
    fn into_log(self) -> Option<Vec<LogRecord>>;

    /// The detector calls, if this observer keeps them.
    fn take_calls(&mut self) -> Option<CallLog> {
        None
    }
}

/// A plain run's observer: sees nothing.
pub(crate) struct Quiet;

impl Observer for Quiet {
    const LOGS: bool = false;
    const SAMPLES: bool = false;

    #[inline(always)]
    fn log(&mut self, _: LogRecord) {}

    #[inline(always)]
    fn detector_input(&mut self, _: (u32, u32), _: u16, _: Nanos, _: Clock, _: &Detector) {}

    fn into_log(self) -> Option<Vec<LogRecord>> {
        None
    }
}

/// A replay's observer: keeps the event log, and feeds one pair's detectors
/// to a score sampler when given one.
pub(crate) struct Replay<'s> {
    pub(crate) log: Vec<LogRecord>,
    pub(crate) scores: Option<&'s mut ScoreSampler>,
}

impl Observer for Replay<'_> {
    const LOGS: bool = true;
    const SAMPLES: bool = true;

    fn log(&mut self, record: LogRecord) {
        self.log.push(record);
    }

    #[inline(never)]
    fn detector_input(
        &mut self,
        pair: (u32, u32),
        det: u16,
        now: Nanos,
        clock: Clock,
        detector: &Detector,
    ) {
        if let Some(scores) = self.scores.as_deref_mut() {
            scores.observe(pair, det, now, clock, detector);
        }
    }

    fn into_log(self) -> Option<Vec<LogRecord>> {
        Some(self.log)
    }
}
