//! The detectors on the monitored pairs (shadow mode: every detector of the
//! scenario has its own instance, a *slot*, on every pair) and what the host
//! does after each input to one: carry out its probes, note a verdict
//! change, keep the pair's timer armed.
//!
//! Invariants: nothing reaches a detector but through a `handle_*` call
//! followed by [`Simulation::after_input`] (or, for a stall, a forgotten
//! deadline and [`Simulation::record`]), so a slot's cached verdict and
//! deadline are those of its detector; verdict changes reach the log in
//! time order.

use fdlab_protocol::{Detector, FailureDetector, Frame, Nanos, Verdict};
use rand_chacha::ChaCha8Rng;

use super::calls::Call;
use super::ids::{IdVec, NodeId, PairId, SlotId};
use super::liveness::Msg;
use super::observer::Observer;
use super::timers::Deadline;
use super::{Event, Simulation};
use crate::outcome::DetectorTimeline;
use crate::plan::RunPlan;
use crate::queue::Queue;

/// Verdict changes logged before they move to their timelines (16 bytes each).
pub(super) const CHANGE_BATCH: usize = 1 << 14;

/// One detector on one monitored pair: the small fields every event touches.
/// The detector, its random stream and its timeline live in parallel vectors
/// of [`Monitors`]: with tens of thousands of slots, an event then touches a
/// few cache lines instead of a 650-byte struct.
pub(super) struct Slot {
    /// Its detector's position in the scenario.
    pub(super) det: u16,
    pub(super) verdict: Verdict,
    pub(super) pair: PairId,
    /// The detector's next deadline in true time, as `after_input` last
    /// computed it: a timer that fires early re-arms there without asking
    /// the detector again.
    pub(super) deadline: Deadline,
    /// Liveness messages and bytes sent for it (copied to its timeline at the end).
    pub(super) messages: u64,
    pub(super) bytes: u64,
}

/// Per-detector facts the host needs.
pub(super) struct DetInfo {
    pub(super) heartbeat: Option<Nanos>,
    pub(super) probes: bool,
}

/// Every detector slot of a run (or of a part of it).
pub(super) struct Monitors<'a> {
    /// The monitored pairs this part simulates, `(monitor, target)`, with
    /// the part's numbers of their nodes ...
    pub(super) pairs: Vec<(NodeId, NodeId)>,
    /// ... and as the layout's pairs from `first_pair` on.
    pub(super) layout_pairs: &'a [(u32, u32)],
    pub(super) first_pair: usize,
    pub(super) slots: IdVec<SlotId, Slot>,
    pub(super) detectors: IdVec<SlotId, Detector>,
    /// Each slot's liveness stream (its probes' latency and loss).
    pub(super) rngs: IdVec<SlotId, ChaCha8Rng>,
    pub(super) timelines: IdVec<SlotId, DetectorTimeline>,
    /// The latest verdict changes as `(slot, time, verdict)`, in time order,
    /// moved to the slots' timelines [`CHANGE_BATCH`] at a time. A sweep puts
    /// a thousand flapping detectors on each pair: a push onto each one's own
    /// vector at the moment of the change was a cache miss in the middle of
    /// the event loop; in a batch the misses overlap.
    pub(super) changes: Vec<(SlotId, Nanos, Verdict)>,
    /// Slots whose monitor is each node.
    pub(super) by_monitor: IdVec<NodeId, Vec<SlotId>>,
    /// By detector position in the scenario.
    pub(super) dets: Vec<DetInfo>,
    /// The detectors that read the data stream, in detector order (a data
    /// frame goes to these alone).
    pub(super) stream_dets: Vec<u32>,
}

impl Monitors<'_> {
    /// `(monitor, target)` of a pair.
    #[inline(always)]
    pub(super) fn pair_nodes(&self, pair: PairId) -> (NodeId, NodeId) {
        self.pairs[pair.ix()]
    }

    /// `(monitor, target)` of a slot's pair.
    #[inline(always)]
    pub(super) fn slot_nodes(&self, slot: SlotId) -> (NodeId, NodeId) {
        self.pair_nodes(self.slots[slot].pair)
    }

    /// Detector `d` of `pair`.
    #[inline(always)]
    pub(super) fn slot_of(&self, pair: PairId, d: usize) -> SlotId {
        SlotId::of(pair, d, self.dets.len())
    }

    /// Counts a liveness message sent for a slot's detector.
    #[inline(always)]
    pub(super) fn count(&mut self, slot: SlotId, bytes: u64) {
        let s = &mut self.slots[slot];
        s.messages += 1;
        s.bytes += bytes;
    }

    /// Notes a slot's new verdict at `now`.
    #[inline(always)]
    pub(super) fn note_change(&mut self, slot: SlotId, now: Nanos, verdict: Verdict) {
        self.slots[slot].verdict = verdict;
        self.changes.push((slot, now, verdict));
        if self.changes.len() == CHANGE_BATCH {
            self.file_changes();
        }
    }

    /// Moves the logged verdict changes to their slots' timelines.
    pub(super) fn file_changes(&mut self) {
        for (slot, time, verdict) in self.changes.drain(..) {
            self.timelines[slot].changes.push((time, verdict));
        }
    }
}

impl<O: Observer, Q: Queue<Event>> Simulation<'_, O, Q> {
    pub(super) fn start_monitoring(&mut self, slot: SlotId) {
        let det = self.mon.slots[slot].det as usize;
        if self.mon.dets[det].probes {
            let (m, _) = self.mon.slot_nodes(slot);
            let local = self.local(m);
            let jitter = RunPlan::probe_jitter(&mut self.mon.rngs[slot]);
            self.note_call(slot, Call::StartProbing(local, jitter));
            self.mon.detectors[slot].handle_start_probing(local, jitter);
        }
        self.after_input(slot);
    }

    /// After any input to a slot's detector: send its probes, record a verdict
    /// change, and keep its timer armed.
    pub(super) fn after_input(&mut self, slot: SlotId) {
        let (det, pair) = {
            let s = &self.mon.slots[slot];
            (s.det, s.pair)
        };
        if self.mon.dets[det as usize].probes {
            self.send_probes(slot);
        }
        self.record(slot);
        self.note_call(slot, Call::PollTimeout);
        let Some(local_due) = self.mon.detectors[slot].poll_timeout() else {
            self.mon.slots[slot].deadline = Deadline::NEVER;
            return;
        };
        let m = self.mon.pair_nodes(pair).0;
        let due = self.nodes[m].clock.true_at(local_due, self.now);
        self.mon.slots[slot].deadline = Deadline::at(due);
        self.arm(slot, due);
    }

    /// Sends the probes a probing detector asks for.
    #[inline(never)]
    fn send_probes(&mut self, slot: SlotId) {
        let (m, t) = self.mon.slot_nodes(slot);
        loop {
            self.note_call(slot, Call::PollTransmit);
            let Some(tx) = self.mon.detectors[slot].poll_transmit() else {
                break;
            };
            let id = tx.probe.0;
            self.send(m, t, Msg::Probe { slot, id });
        }
    }

    /// Notes the slot's verdict after an input: a change goes to the log
    /// (rare, so kept out of line), and a replay's score sampler looks.
    #[inline(always)]
    pub(super) fn record(&mut self, slot: SlotId) {
        if O::SAMPLES {
            self.sample_scores(slot);
        }
        self.note_call(slot, Call::Verdict);
        let verdict = self.mon.detectors[slot].verdict();
        if verdict != self.mon.slots[slot].verdict {
            self.verdict_changed(slot, verdict);
        }
    }

    #[inline(never)]
    fn sample_scores(&mut self, slot: SlotId) {
        let (m, t) = self.mon.slot_nodes(slot);
        let clock = self.nodes[m].clock;
        let det = self.mon.slots[slot].det;
        let detector = &self.mon.detectors[slot];
        self.observer.detector_input(
            (self.globals[m], self.globals[t]),
            det,
            self.now,
            clock,
            detector,
        );
    }

    #[inline(never)]
    fn verdict_changed(&mut self, slot: SlotId, verdict: Verdict) {
        self.mon.note_change(slot, self.now, verdict);
        let det = self.mon.slots[slot].det;
        let (m, t) = self.mon.slot_nodes(slot);
        self.log("verdict", m, Some(t), Some(det), || verdict.as_str().into());
    }

    /// A data-channel frame reaches the data-stream detectors of `pair`
    /// (inlined into its two callers: one per data frame).
    #[inline(always)]
    pub(super) fn stream_frame(&mut self, pair: PairId, local: Nanos, frame: Frame) {
        for i in 0..self.mon.stream_dets.len() {
            let slot = self.mon.slot_of(pair, self.mon.stream_dets[i] as usize);
            self.note_call(slot, Call::Frame(local, frame));
            self.mon.detectors[slot].handle_frame(local, frame);
            self.after_input(slot);
        }
    }
}
