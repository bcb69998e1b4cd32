//! The run loop of one monitored pair simulated on its own (see [`super::split`]),
//! with the three events that make nearly all of a mesh's traffic handled
//! on a fast path: a heartbeat tick, a heartbeat's arrival and a firing of
//! the pair's timer that finds no deadline come, while the node that owns
//! the event is up.
//!
//! A pair on its own has two nodes, one pair and a few streams and slots:
//! the general handlers' indirections (which pair a stream serves, which
//! node a datagram goes to, its channel, the partitions and link faults of
//! the schedule) are settled once per pair here instead of once per event.
//! Each fast handler does what the general one does for that case, in the
//! same order and with the same draws, so a pair's events, timelines and
//! counts are those of the general loop (the tests compare every pair of a
//! split run with the traced whole run, which never takes this path). A
//! heartbeat that arrives before every other event of its pair is handled
//! as soon as it is sent, without a trip through the queue, with the
//! sequence number it would have had there; the next tick waits beside
//! the queue, not in it, with its sequence number too.
//! Everything else (deadlines that come, faults, events of a paused or
//! crashed node, probes, partitions, link faults) goes to
//! [`Simulation::dispatch`].

use std::ops::Range;

use fdlab_protocol::{FailureDetector, Nanos};
use rand::RngExt;

use super::ids::{NodeId, PairId, SlotId, StreamId};
use super::liveness::{Msg, LIVENESS_MESSAGE_BYTES};
use super::monitoring::Monitors;
use super::nodes::Status;
use super::observer::Quiet;
use super::outcome::Part;
use super::timers::Deadline;
use super::{Event, Simulation};
use crate::queue::Queue;
use crate::small_queue::SmallQueue;

/// A pair's next heartbeat tick, kept out of its queue: a push and a pop
/// of the queue's cells less per heartbeat. It pops in the queue's order
/// ([`SmallQueue::pop_before`]) with the sequence number its push would
/// have had.
#[derive(Clone, Copy)]
struct KeptTick {
    time: u64,
    seq: u64,
    event: Event,
}

impl Simulation<'_, Quiet, SmallQueue<Event>> {
    /// Runs a one-pair part to the end (as [`Simulation::run`] does).
    pub(super) fn run_pair(mut self) -> Part {
        debug_assert_eq!(self.mon.pairs.len(), 1, "a part of one pair");
        let (m, t) = self.mon.pair_nodes(PairId(0));
        // Heartbeats go over the control network (a pair of a run without
        // data links), and whether a datagram is cut, lost or delayed
        // depends on nothing but the network's loss unless the schedule
        // has partitions or link faults.
        let plain = self.data.links.len() == 0
            && self.schedule.partitions.is_empty()
            && self.schedule.link_faults.is_empty();
        // A heartbeat makes a probing detector (a two-stage one may both
        // take heartbeats and probe) send its probes: the general path.
        let probing = self.mon.dets.iter().any(|d| d.probes);
        // Each stream's slots as one span of the pair's (they are, unless
        // detectors of another interval come between its own): the fast
        // handlers walk a span without an index per slot.
        let spans: Vec<Range<usize>> = self
            .hb
            .streams
            .iter()
            .map(|st| {
                let first = st.slots[0].ix();
                let contiguous = st
                    .slots
                    .iter()
                    .enumerate()
                    .all(|(i, s)| s.ix() == first + i);
                if contiguous {
                    first..first + st.slots.len()
                } else {
                    0..0
                }
            })
            .collect();
        let fast = !probing && spans.iter().all(|s| !s.is_empty());
        self.start();
        let end = self.scenario.duration.as_nanos();
        let mut kept: Option<KeptTick> = None;
        loop {
            let (time, event) = match kept {
                Some(tick) => self
                    .queue
                    .pop_before(tick.time, tick.seq)
                    .unwrap_or_else(|| {
                        kept = None;
                        (tick.time, tick.event)
                    }),
                None => match self.queue.pop() {
                    Some(popped) => popped,
                    None => break,
                },
            };
            if time > end {
                break;
            }
            debug_assert!(time >= self.now.as_nanos(), "an event in the past");
            self.now = Nanos(time);
            self.popped += 1;
            match event {
                Event::HeartbeatTick { stream, gen } if plain && fast && self.runs_now(t) => {
                    let span = spans[stream.ix()].clone();
                    let Some(at) = self.fast_tick(stream, gen, t, span.clone(), end, &mut kept)
                    else {
                        continue;
                    };
                    // The heartbeat's arrival is the pair's next event, not
                    // queued: handled now, as popping it would be.
                    debug_assert!(at >= self.now);
                    self.now = at;
                    self.popped += 1;
                    let msg = Msg::Heartbeat { stream };
                    if self.runs_now(m) {
                        self.fast_arrive(m, span);
                    } else {
                        self.dispatch_other(Event::Arrive { msg });
                    }
                }
                Event::Arrive {
                    msg: Msg::Heartbeat { stream },
                } if fast && self.runs_now(m) => {
                    self.fast_arrive(m, spans[stream.ix()].clone());
                }
                Event::PairTimer { pair, gen } if self.runs_now(m) => {
                    if !self.fast_timer(pair, gen) {
                        self.dispatch_other(event);
                    }
                }
                _ => self.dispatch_other(event),
            }
        }
        self.now = Nanos(end);
        self.finish()
    }

    /// Every other event, out of line: inlined, the general dispatch of every
    /// kind made the loop one large function whose fast handlers kept
    /// spilling their registers.
    #[inline(never)]
    fn dispatch_other(&mut self, event: Event) {
        self.dispatch(event);
    }

    /// Whether node `n` handles its events as they come: the fast case of
    /// [`Simulation::admit`].
    #[inline(always)]
    fn runs_now(&self, n: NodeId) -> bool {
        let node = &self.nodes[n];
        node.status == Status::Up && node.slowdown.is_zero() && self.now >= node.busy_until
    }

    /// [`Simulation::heartbeat_tick`] of a plain pair's stream, whose slots
    /// are `span`, sent by its target `t` (which is up): the count, the loss
    /// draw and the latency of [`Simulation::send`] and
    /// [`Simulation::transmit_datagram`] with no partition or link fault,
    /// and the next tick. The state is borrowed field by field, so that
    /// nothing is read again after a call.
    ///
    /// A heartbeat that arrives by `end` before every other event of the
    /// pair (nearly always: its latency is short beside the interval) is
    /// not queued: its arrival time is returned, to be handled at once,
    /// which saves a push and a pop per heartbeat. It takes the sequence
    /// number it would have had, so the queue's order is unchanged. The
    /// next tick is `kept` out of the queue, with its sequence number,
    /// unless a tick already is (a pair with a stream per interval).
    #[inline(always)]
    fn fast_tick(
        &mut self,
        stream: StreamId,
        gen: u32,
        t: NodeId,
        span: Range<usize>,
        end: u64,
        kept: &mut Option<KeptTick>,
    ) -> Option<Nanos> {
        let now = self.now;
        let Simulation {
            hb,
            mon,
            queue,
            nodes,
            scenario,
            ..
        } = self;
        let st = &hb.streams[stream];
        if st.gen != gen {
            return None;
        }
        for s in &mut mon.slots.as_mut_slice()[span] {
            s.messages += 1;
            s.bytes += LIVENESS_MESSAGE_BYTES;
        }
        let keep = 1.0 - scenario.network.loss;
        let rng = &mut hb.rngs[stream];
        let arrival = if keep < 1.0 && rng.random::<f64>() >= keep {
            None
        } else {
            Some(now + hb.latency.sample(rng))
        };
        let clock = nodes[t].clock;
        let next = clock.true_at(clock.local(now) + st.interval, now + Nanos(1));
        let tick = Event::HeartbeatTick { stream, gen };
        // Pushed now, the arrival would come before the next tick (which
        // is pushed after it) unless that tick is earlier; a tick kept out
        // of the queue may come before it (not looked at: a rare case).
        let taken = arrival.filter(|&at| {
            kept.is_none()
                && at.as_nanos() <= end
                && at <= next
                && queue.take_if_next(at.as_nanos())
        });
        if let (Some(at), None) = (arrival, taken) {
            let msg = Msg::Heartbeat { stream };
            queue.push(at.as_nanos(), Event::Arrive { msg });
        }
        if kept.is_none() {
            let (time, seq) = (next.as_nanos(), queue.take_seq());
            *kept = Some(KeptTick {
                time,
                seq,
                event: tick,
            });
        } else {
            queue.push(next.as_nanos(), tick);
        }
        taken
    }

    /// [`Simulation::arrive`] of a heartbeat at its monitor `m` (which is
    /// up), for the slots `span` of its stream: each takes it, then what
    /// [`Simulation::after_input`] does for a detector that does not probe
    /// (the verdict, the deadline, the pair's timer, outside a firing).
    #[inline(always)]
    fn fast_arrive(&mut self, m: NodeId, span: Range<usize>) {
        let now = self.now;
        let clock = self.nodes[m].clock;
        let local = clock.local(now);
        let Simulation {
            mon, timers, queue, ..
        } = self;
        debug_assert!(timers.serving.is_none());
        let (first, len) = (span.start, span.len());
        let slots = &mut mon.slots.as_mut_slice()[span.clone()];
        let detectors = &mut mon.detectors.as_mut_slice()[span];
        // Verdict changes are rare: noted after the pass, in slot order.
        let mut changed = 0u64;
        for (i, (s, detector)) in slots.iter_mut().zip(detectors).enumerate() {
            let (verdict, due) = detector.handle_heartbeat_then_poll(local);
            changed |= u64::from(verdict != s.verdict) << (i % 64);
            let Some(local_due) = due else {
                s.deadline = Deadline::NEVER;
                continue;
            };
            let due = clock.true_at(local_due, now);
            s.deadline = Deadline::at(due);
            if let Some(gen) = timers.pairs[s.pair].arm(due, false) {
                let pair = s.pair;
                queue.push_last(due.as_nanos(), Event::PairTimer { pair, gen });
            }
        }
        if changed != 0 {
            note_changes(mon, first..first + len, changed, now);
        }
    }

    /// [`Simulation::pair_timer`] of a firing that finds no deadline come
    /// (nearly every one: the inputs since it was pushed have moved the
    /// deadlines back), whose monitor is up: the timer goes to the earliest
    /// deadline, as the general path leaves it, without the general
    /// dispatch's call. Returns false, having changed nothing, when a
    /// deadline has come (or is unknown): the general path serves it.
    #[inline(always)]
    fn fast_timer(&mut self, pair: PairId, gen: u32) -> bool {
        let Simulation {
            mon, timers, queue, ..
        } = self;
        let timer = &mut timers.pairs[pair];
        if !timer.is_pending(gen) {
            return true;
        }
        let first = mon.slot_of(pair, 0).ix();
        let earliest = mon.slots.as_slice()[first..first + mon.dets.len()]
            .iter()
            .fold(Deadline::NEVER.0, |min, s| min.min(s.deadline.0));
        if earliest <= self.now.as_nanos() {
            return false;
        }
        debug_assert!(timers.serving.is_none());
        let next = Deadline(earliest).time();
        if let (Some(at), Some(gen)) = (next, timer.refire(next)) {
            queue.push_last(at.as_nanos(), Event::PairTimer { pair, gen });
        }
        true
    }
}

/// The verdict changes of the slots `span.start + i` for each bit `i` of
/// `changed` (rare: out of line). A span of more than 64 slots (a sweep's)
/// looks at every slot whose position has a set bit's residue.
#[cold]
#[inline(never)]
fn note_changes(mon: &mut Monitors<'_>, span: Range<usize>, changed: u64, now: Nanos) {
    for (i, slot) in span.enumerate() {
        if changed & (1 << (i % 64)) == 0 {
            continue;
        }
        let slot = SlotId::from(slot);
        let verdict = mon.detectors[slot].verdict();
        if verdict != mon.slots[slot].verdict {
            mon.note_change(slot, now, verdict);
        }
    }
}
