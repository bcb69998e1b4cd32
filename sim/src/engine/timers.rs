//! Timers: each monitored pair has one timer event, at the earliest of its
//! detectors' deadlines, kept lazily (an earlier pending one is left in
//! place and re-armed when it fires, so a heartbeat that pushes a deadline
//! back costs no queue operation); when it fires, every detector that is
//! due gets its timeout, in detector order.
//!
//! Invariants: a pair's pending timer event is at or before every armed
//! deadline of its detectors; a stale event (an older generation) does
//! nothing; a timeout is never handed to a detector before its deadline;
//! no timer is armed in the past.

use fdlab_protocol::{FailureDetector, Nanos};

use super::calls::Call;
use super::ids::{IdVec, NodeId, PairId, SlotId};
use super::observer::Observer;
use super::{Event, Simulation};
use crate::queue::Queue;

/// A slot's next deadline in true time, as last computed, in one word: a
/// pair's timer scans its slots' deadlines on every firing (a sweep puts a
/// thousand slots on a pair), and a plain comparison per slot keeps that
/// scan branch-light. Besides instants it holds three markers:
/// [`Deadline::UNKNOWN`] (ask the detector), [`Deadline::HELD`] (it came
/// while the monitor was paused: an [`Event::SlotTimeout`] waits in the
/// backlog, and the resume makes the deadline unknown) and
/// [`Deadline::NEVER`] (`poll_timeout` said none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Deadline(pub(super) u64);

impl Deadline {
    /// Not known: ask the detector. An instant 0 reads as this too, which is
    /// harmless: asking again gives it back.
    pub(super) const UNKNOWN: Deadline = Deadline(0);
    /// Above every instant, so that a scan's minimum ignores it.
    pub(super) const HELD: Deadline = Deadline(u64::MAX - 1);
    pub(super) const NEVER: Deadline = Deadline(u64::MAX);

    /// An instant (one at the far end of time, centuries away, is kept
    /// below the markers).
    pub(super) fn at(time: Nanos) -> Deadline {
        Deadline(time.as_nanos().min(Deadline::HELD.0 - 1))
    }

    /// The instant, if this is one.
    pub(super) fn time(self) -> Option<Nanos> {
        (self != Deadline::UNKNOWN && self.0 < Deadline::HELD.0).then_some(Nanos(self.0))
    }
}

/// The one timer event of a monitored pair: it fires at the earliest of its
/// detectors' deadlines and serves every detector that is due. One event per
/// pair rather than per detector keeps the queue small when a sweep puts a
/// thousand detectors on each pair (they would otherwise each re-arm after
/// almost every frame); a detector's deadlines stay exact either way.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PairTimer {
    /// The pending event's time (at or before every armed deadline).
    at: Option<Nanos>,
    gen: u32,
}

impl PairTimer {
    /// Keeps the pending event at or before `at` (lazily: an earlier one is
    /// left to fire and look again): the generation of the event to push at
    /// `at`, when one is needed and the pair's timer is not being served
    /// (`serving`: its firing pushes one event at the end).
    #[inline(always)]
    pub(super) fn arm(&mut self, at: Nanos, serving: bool) -> Option<u32> {
        if self.at.is_some_and(|pending| at >= pending) {
            return None;
        }
        self.at = Some(at);
        if serving {
            return None;
        }
        self.gen += 1;
        Some(self.gen)
    }

    /// Whether the event of generation `gen` is this timer's pending one
    /// (not one it has since replaced).
    #[inline(always)]
    pub(super) fn is_pending(&self, gen: u32) -> bool {
        self.gen == gen
    }

    /// After a firing that served no detector: the pending event goes to
    /// `next`, the earliest deadline (none: no event); the generation of the
    /// event to push there.
    #[inline(always)]
    pub(super) fn refire(&mut self, next: Option<Nanos>) -> Option<u32> {
        self.at = next;
        next?;
        self.gen += 1;
        Some(self.gen)
    }
}

/// Every pair's timer.
pub(super) struct Timers {
    pub(super) pairs: IdVec<PairId, PairTimer>,
    /// The pair whose timer is being served: its detectors' new deadlines
    /// gather in its `at` and one event is pushed at the end.
    pub(super) serving: Option<PairId>,
}

impl<O: Observer, Q: Queue<Event>> Simulation<'_, O, Q> {
    /// The pair's timer: every detector whose deadline has come gets its
    /// timeout, in detector order; the others keep theirs. While the monitor
    /// is paused, a timeout that came waits in its backlog instead, in time
    /// order among the inputs it missed, as if each detector had its own
    /// timer (so a detector's outcome never depends on the others').
    pub(super) fn pair_timer(&mut self, pair: PairId, gen: u32, paused: bool) {
        let timer = &mut self.timers.pairs[pair];
        if timer.gen != gen {
            return;
        }
        timer.at = None;
        self.timers.serving = Some(pair);
        let m = self.mon.pair_nodes(pair).0;
        let first = self.mon.slot_of(pair, 0);
        // The earliest deadline not yet due (those that are due and re-arm
        // add theirs through `arm`); the markers are above every instant.
        // Nearly every firing is early (inputs since pushed the deadlines
        // back), so one branch-free pass over the cached deadlines first:
        // when none has come, that minimum is the next firing.
        let now = self.now.as_nanos();
        let d_count = self.mon.dets.len();
        let range = first.ix()..first.ix() + d_count;
        let earliest = self.mon.slots.as_slice()[range]
            .iter()
            .fold(Deadline::NEVER.0, |min, s| min.min(s.deadline.0));
        let mut later = Deadline::NEVER.0;
        if earliest > now {
            later = earliest;
        } else {
            for slot in first.0..first.0 + d_count as u32 {
                let slot = SlotId(slot);
                let cached = self.mon.slots[slot].deadline.0;
                if cached > now {
                    // Not yet, held, or never: keep it.
                    later = later.min(cached);
                    continue;
                }
                let due = match self.due(slot) {
                    Some(due) if due > self.now => {
                        later = later.min(due.as_nanos());
                        continue;
                    }
                    Some(due) => due,
                    None => continue,
                };
                debug_assert!(due <= self.now);
                if paused {
                    self.mon.slots[slot].deadline = Deadline::HELD;
                    self.nodes[m].backlog.push(Event::SlotTimeout { slot });
                } else {
                    self.time_out(slot);
                }
            }
        }
        self.timers.serving = None;
        let timer = &mut self.timers.pairs[pair];
        if let Some(l) = Deadline(later).time() {
            timer.at = Some(timer.at.map_or(l, |at| at.min(l)));
        }
        if let Some(at) = timer.at {
            timer.gen += 1;
            let gen = timer.gen;
            self.push(at, Event::PairTimer { pair, gen });
        }
    }

    /// A deadline that came during a pause, handled from the backlog.
    pub(super) fn slot_timeout(&mut self, slot: SlotId) {
        if self.mon.slots[slot].deadline == Deadline::HELD {
            self.mon.slots[slot].deadline = Deadline::UNKNOWN;
        }
        match self.due(slot) {
            Some(due) if due <= self.now => self.time_out(slot),
            Some(due) => self.arm(slot, due),
            None => {}
        }
    }

    /// A slot's deadline in true time (`None`: none, or already held).
    /// `true_at` gave the first instant whose local time reaches the
    /// detector's, so it is due exactly when `now` has reached it (the clock
    /// has not changed since: a change re-arms).
    fn due(&mut self, slot: SlotId) -> Option<Nanos> {
        let cached = self.mon.slots[slot].deadline;
        if cached != Deadline::UNKNOWN {
            return cached.time();
        }
        let m = self.mon.slot_nodes(slot).0;
        self.note_call(slot, Call::PollTimeout);
        let due = self.mon.detectors[slot]
            .poll_timeout()
            .map(|local_due| self.nodes[m].clock.true_at(local_due, self.now));
        self.mon.slots[slot].deadline = due.map_or(Deadline::NEVER, Deadline::at);
        due
    }

    fn time_out(&mut self, slot: SlotId) {
        let local = self.local(self.mon.slot_nodes(slot).0);
        self.note_call(slot, Call::Timeout(local));
        self.mon.detectors[slot].handle_timeout(local);
        self.after_input(slot);
    }

    /// Keeps the pair's timer event at or before `at` (lazily: an earlier
    /// pending one is left to fire and look again). Inlined: after nearly
    /// every input it only compares two instants, less than a call costs.
    #[inline(always)]
    pub(super) fn arm(&mut self, slot: SlotId, at: Nanos) {
        debug_assert!(at >= self.now, "a deadline armed in the past");
        let pair = self.mon.slots[slot].pair;
        let serving = self.timers.serving == Some(pair);
        if let Some(gen) = self.timers.pairs[pair].arm(at, serving) {
            self.push(at, Event::PairTimer { pair, gen });
        }
    }

    /// Forgets the pending timers of the pairs `node` monitors (their
    /// detectors are about to be asked again).
    pub(super) fn disarm_monitor(&mut self, node: NodeId) {
        let d_count = self.mon.dets.len();
        for &slot in &self.mon.by_monitor[node] {
            let timer = &mut self.timers.pairs[slot.pair(d_count)];
            timer.at = None;
            timer.gen += 1;
        }
    }

    /// Re-arms every timer of `node` (its clock changed).
    pub(super) fn rearm_node(&mut self, node: NodeId) {
        self.disarm_monitor(node);
        for i in 0..self.mon.by_monitor[node].len() {
            let slot = self.mon.by_monitor[node][i];
            self.after_input(slot);
        }
        for i in 0..self.hb.by_target[node].len() {
            let stream = self.hb.by_target[node][i];
            self.start_heartbeats(stream);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_is_an_instant_or_a_marker_above_every_instant() {
        assert_eq!(Deadline::at(Nanos(5)).time(), Some(Nanos(5)));
        // An instant at the far end of time stays below the markers.
        let far = Deadline::at(Nanos(u64::MAX));
        assert!(far.0 < Deadline::HELD.0 && far.time().is_some());
        for marker in [Deadline::UNKNOWN, Deadline::HELD, Deadline::NEVER] {
            assert_eq!(marker.time(), None);
        }
        // A scan's minimum over instants and markers is the earliest instant.
        let scan = [Deadline::NEVER, Deadline::at(Nanos(9)), Deadline::HELD];
        let min = scan.iter().fold(Deadline::NEVER.0, |m, d| m.min(d.0));
        assert_eq!(min, 9);
    }
}
