//! The run loop of one monitored pair simulated on its own (see [`super::split`]),
//! with the two events that make nearly all of a mesh's traffic handled
//! on a fast path: a heartbeat tick and a heartbeat's arrival, while the
//! node that owns the event is up.
//!
//! A pair on its own has two nodes, one pair and a few streams and slots:
//! the general handlers' indirections (which pair a stream serves, which
//! node a datagram goes to, its channel, the partitions and link faults of
//! the schedule) are settled once per pair here instead of once per event.
//! Each fast handler does what the general one does for that case, in the
//! same order and with the same draws, so a pair's events, timelines and
//! counts are those of the general loop (the tests compare every pair of a
//! split run with the traced whole run, which never takes this path).
//! Everything else (timers, faults, events of a paused or crashed node,
//! probes, partitions, link faults) goes to [`Simulation::dispatch`].

use fdlab_protocol::{FailureDetector, Nanos, Verdict};
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
        self.start();
        let end = self.scenario.duration.as_nanos();
        while let Some((time, event)) = self.queue.pop() {
            if time > end {
                break;
            }
            debug_assert!(time >= self.now.as_nanos(), "an event in the past");
            self.now = Nanos(time);
            self.popped += 1;
            match event {
                Event::HeartbeatTick { stream, gen } if plain && self.runs_now(t) => {
                    self.fast_tick(stream, gen, t);
                }
                Event::Arrive {
                    msg: Msg::Heartbeat { stream },
                } if !probing && self.runs_now(m) => self.fast_arrive(stream, m),
                _ => self.dispatch(event),
            }
        }
        self.now = Nanos(end);
        self.finish()
    }

    /// Whether node `n` handles its events as they come: the fast case of
    /// [`Simulation::admit`].
    #[inline(always)]
    fn runs_now(&self, n: NodeId) -> bool {
        let node = &self.nodes[n];
        node.status == Status::Up && node.slowdown.is_zero() && self.now >= node.busy_until
    }

    /// [`Simulation::heartbeat_tick`] of a plain pair's stream, sent by its
    /// target `t` (which is up): the count, the loss draw and the latency
    /// of [`Simulation::send`] and [`Simulation::transmit_datagram`] with no
    /// partition or link fault, and the next tick. The state is borrowed
    /// field by field, so that nothing is read again after a call.
    #[inline(always)]
    fn fast_tick(&mut self, stream: StreamId, gen: u32, t: NodeId) {
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
            return;
        }
        for &slot in &st.slots {
            mon.count(slot, LIVENESS_MESSAGE_BYTES);
        }
        let keep = 1.0 - scenario.network.loss;
        let rng = &mut hb.rngs[stream];
        if !(keep < 1.0 && rng.random::<f64>() >= keep) {
            let latency = hb.latency.sample(rng);
            let msg = Msg::Heartbeat { stream };
            queue.push((now + latency).as_nanos(), Event::Arrive { msg });
        }
        let clock = nodes[t].clock;
        let next = clock.true_at(clock.local(now) + st.interval, now + Nanos(1));
        queue.push(next.as_nanos(), Event::HeartbeatTick { stream, gen });
    }

    /// [`Simulation::arrive`] of a heartbeat at its monitor `m` (which is
    /// up): every slot it serves takes it, then what
    /// [`Simulation::after_input`] does for a detector that does not probe
    /// (the verdict, the deadline, the pair's timer, outside a firing).
    #[inline(always)]
    fn fast_arrive(&mut self, stream: StreamId, m: NodeId) {
        let now = self.now;
        let clock = self.nodes[m].clock;
        let local = clock.local(now);
        let Simulation {
            hb,
            mon,
            timers,
            queue,
            ..
        } = self;
        debug_assert!(timers.serving.is_none());
        for &slot in &hb.streams[stream].slots {
            debug_assert!(!mon.dets[mon.slots[slot].det as usize].probes);
            let detector = &mut mon.detectors[slot];
            detector.handle_heartbeat(local);
            let verdict = detector.verdict();
            let local_due = detector.poll_timeout();
            if verdict != mon.slots[slot].verdict {
                changed(mon, slot, now, verdict);
            }
            let s = &mut mon.slots[slot];
            let Some(local_due) = local_due else {
                s.deadline = Deadline::NEVER;
                continue;
            };
            let due = clock.true_at(local_due, now);
            s.deadline = Deadline::at(due);
            let pair = s.pair;
            if let Some(gen) = timers.pairs[pair].arm(due, false) {
                queue.push_last(due.as_nanos(), Event::PairTimer { pair, gen });
            }
        }
    }
}

/// A verdict change on the fast path (rare: out of line).
#[cold]
#[inline(never)]
fn changed(mon: &mut Monitors<'_>, slot: SlotId, now: Nanos, verdict: Verdict) {
    mon.note_change(slot, now, verdict);
}
