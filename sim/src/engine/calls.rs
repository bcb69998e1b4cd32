//! Every call a run makes to its detectors, recorded in order, so that the
//! same calls can be made again on the same detectors with no simulator
//! around them: what the detectors' own work costs on a run's traffic, the
//! part of a run's time that no event loop can take away.
//!
//! `fdlab bench --only pipeline` prints it beside the run and the bare heap
//! loop (issue 9/9's dataflow target; the figures are in docs/perf.md). The
//! replay makes the very calls of the run: each input with its arguments,
//! and each `poll_timeout`, `poll_transmit` and `verdict` the engine made
//! after it, on clones of the detectors the run started with (and those a
//! restart gave it), so it sees the run's verdict changes (a test checks
//! this on random scenarios).

use fdlab_protocol::{Detector, FailureDetector, Frame, Nanos, ProbeId, Verdict};

use super::observer::{LogRecord, Observer};
use super::Simulation;
use crate::clock::Clock;
use crate::queue::Queue;

/// One call to a monitored pair's detector (the slot's), with its
/// arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Call {
    /// The slot's detector is `CallLog::detectors[index]` from now on (the
    /// run's start, or a restart of its monitor).
    Start {
        index: u32,
    },
    Heartbeat(Nanos),
    Frame(Nanos, Frame),
    StartProbing(Nanos, f64),
    ProbeReply(Nanos, ProbeId),
    LocalStall(Nanos, Nanos),
    LocalHealth(Nanos, u32),
    Timeout(Nanos),
    PollTimeout,
    PollTransmit,
    Verdict,
}

/// A run's detector calls, in the order it made them.
#[derive(Clone, Debug, Default)]
pub struct CallLog {
    /// `(slot, call)`; a slot is one detector on one monitored pair.
    pub calls: Vec<(u32, Call)>,
    /// The detectors the [`Call::Start`]s name, as they were when started.
    pub detectors: Vec<Detector>,
    /// Slots in the run.
    pub slots: usize,
}

/// What [`CallLog::replay`] returns: enough of the results that nothing is
/// optimised away, and the verdicts to check the replay by.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayResult {
    /// A sum over every `poll_timeout` answer and probe sent.
    pub checksum: u64,
    /// Each slot's verdict changes, as its `verdict` calls saw them (from
    /// Alive, as the engine notes them): the run's timelines, less the times.
    pub changes: Vec<Vec<Verdict>>,
}

impl CallLog {
    /// Makes the recorded calls again, in order, on fresh clones of the
    /// started detectors (all cloned before the first call: the run made
    /// its first ones before its first event, and restarts are rare).
    pub fn replay(&self) -> ReplayResult {
        let mut fresh: Vec<Option<Detector>> = self.detectors.iter().cloned().map(Some).collect();
        let mut live: Vec<Option<Detector>> = vec![None; self.slots];
        let mut last = vec![Verdict::Alive; self.slots];
        let mut changes = vec![Vec::new(); self.slots];
        let mut sum = 0u64;
        for &(slot, call) in &self.calls {
            let s = slot as usize;
            if let Call::Start { index } = call {
                live[s] = fresh[index as usize].take();
                continue;
            }
            let d = live[s]
                .as_mut()
                .expect("a call before its detector started");
            match call {
                Call::Start { .. } => unreachable!("handled above"),
                Call::Heartbeat(now) => d.handle_heartbeat(now),
                Call::Frame(now, frame) => d.handle_frame(now, frame),
                Call::StartProbing(now, jitter) => d.handle_start_probing(now, jitter),
                Call::ProbeReply(now, id) => d.handle_probe_reply(now, id),
                Call::LocalStall(now, stall) => d.handle_local_stall(now, stall),
                Call::LocalHealth(now, score) => d.handle_local_health(now, score),
                Call::Timeout(now) => d.handle_timeout(now),
                Call::PollTimeout => {
                    sum = sum.wrapping_add(d.poll_timeout().map_or(1, Nanos::as_nanos));
                }
                Call::PollTransmit => {
                    sum = sum.wrapping_add(d.poll_transmit().map_or(3, |t| t.probe.0));
                }
                Call::Verdict => {
                    let verdict = d.verdict();
                    if verdict != last[s] {
                        last[s] = verdict;
                        changes[s].push(verdict);
                    }
                }
            }
        }
        ReplayResult {
            checksum: sum,
            changes,
        }
    }
}

impl CallLog {
    /// The walk of [`CallLog::replay`] over the calls, reading each with its
    /// arguments but calling nothing: what reading the log costs a replay,
    /// to take out of its time. Returns a sum of the arguments read.
    pub fn walk(&self) -> u64 {
        let mut sum = 0u64;
        for &(slot, call) in &self.calls {
            let arg = match call {
                Call::Start { index } => u64::from(index),
                Call::Heartbeat(now) | Call::Timeout(now) => now.as_nanos(),
                Call::Frame(now, _) | Call::StartProbing(now, _) => now.as_nanos() ^ 1,
                Call::ProbeReply(now, id) => now.as_nanos() ^ id.0,
                Call::LocalStall(now, stall) => now.as_nanos() ^ stall.as_nanos(),
                Call::LocalHealth(now, score) => now.as_nanos() ^ u64::from(score),
                Call::PollTimeout => 2,
                Call::PollTransmit => 3,
                Call::Verdict => 5,
            };
            sum = sum.wrapping_add(arg ^ u64::from(slot));
        }
        sum
    }
}

/// The observer of a recorded run: keeps the detector calls, nothing else.
pub(crate) struct Recorder {
    pub(crate) log: CallLog,
}

impl Observer for Recorder {
    const LOGS: bool = false;
    const SAMPLES: bool = false;
    const CALLS: bool = true;

    fn log(&mut self, _: LogRecord) {}

    fn detector_input(&mut self, _: (u32, u32), _: u16, _: Nanos, _: Clock, _: &Detector) {}

    fn call(&mut self, slot: u32, call: Call) {
        self.log.calls.push((slot, call));
    }

    fn started(&mut self, slot: u32, detector: &Detector) {
        let index = self.log.detectors.len() as u32;
        self.log.detectors.push(detector.clone());
        self.log.calls.push((slot, Call::Start { index }));
    }

    fn into_log(self) -> Option<Vec<LogRecord>> {
        None
    }

    fn take_calls(&mut self) -> Option<CallLog> {
        Some(std::mem::take(&mut self.log))
    }
}

impl<O: Observer, Q: Queue<super::Event>> Simulation<'_, O, Q> {
    /// Notes a call about to be made to `slot`'s detector (compiled away
    /// unless the observer records calls).
    #[inline(always)]
    pub(super) fn note_call(&mut self, slot: super::ids::SlotId, call: Call) {
        if O::CALLS {
            self.observer.call(slot.0, call);
        }
    }

    /// Notes that `slot` has a new detector (the run's first, or a restart's).
    #[inline(always)]
    pub(super) fn note_started(&mut self, slot: super::ids::SlotId) {
        if O::CALLS {
            self.observer.started(slot.0, &self.mon.detectors[slot]);
        }
    }
}
