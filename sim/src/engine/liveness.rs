//! Liveness traffic on the control network: heartbeat streams (one per
//! pair and interval, shared by the pair's detectors with that interval),
//! probes and probe replies, as datagrams that a partition drops or holds,
//! that loss drops, and that arrive after a sampled latency.
//!
//! A heartbeat's fate (loss draw, then latency) comes from its stream's own
//! random stream, a probe's and its reply's from the probing slot's: the
//! draw order is the one [`crate::plan::RunPlan`] documents, which
//! `fdlab live` keeps in step with.
//!
//! Invariants: a heartbeat tick of a stale generation does nothing; every
//! message sent is counted once for every detector it serves, whatever its
//! fate; a datagram arrives at the receiver its kind names.

use fdlab_protocol::{FailureDetector, Nanos, ProbeId};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::calls::Call;
use super::data_plane::Item;
use super::ids::{IdVec, NodeId, SlotId, StreamId};
use super::observer::Observer;
use super::{Event, Simulation};
use crate::dist::Sampler;
use crate::plan::RunPlan;
use crate::queue::Queue;
use crate::scenario::Channel;

/// Size of a heartbeat or probe datagram, for the overhead figures (a small
/// UDP payload with its headers).
pub const LIVENESS_MESSAGE_BYTES: u64 = 64;

/// A datagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Msg {
    Heartbeat { stream: StreamId },
    Probe { slot: SlotId, id: u64 },
    ProbeReply { slot: SlotId, id: u64 },
}

/// The heartbeats one target sends one monitor at one interval, for every
/// detector of the pair with that interval.
pub(super) struct HbStream {
    pub(super) pair: super::ids::PairId,
    pub(super) interval: Nanos,
    pub(super) gen: u32,
    /// The slots that receive it, in detector order.
    pub(super) slots: Vec<SlotId>,
}

/// The control network's liveness traffic.
pub(super) struct Liveness {
    pub(super) streams: IdVec<StreamId, HbStream>,
    pub(super) rngs: IdVec<StreamId, ChaCha8Rng>,
    /// Heartbeat streams whose target is each node.
    pub(super) by_target: IdVec<NodeId, Vec<StreamId>>,
    /// Datagrams a holding partition keeps, by partition, until it heals.
    pub(super) held: Vec<Vec<(NodeId, NodeId, Msg)>>,
    /// The control network's latency.
    pub(super) latency: Sampler,
}

impl<O: Observer, Q: Queue<Event>> Simulation<'_, O, Q> {
    /// (Re)starts a heartbeat stream's sender, at a random phase.
    pub(super) fn start_heartbeats(&mut self, stream: StreamId) {
        let st = &mut self.hb.streams[stream];
        st.gen += 1;
        let (gen, interval) = (st.gen, st.interval);
        let phase = RunPlan::heartbeat_phase(&mut self.hb.rngs[stream], interval);
        self.push(self.now + phase, Event::HeartbeatTick { stream, gen });
    }

    /// `(monitor, target)` of a heartbeat stream.
    #[inline(always)]
    pub(super) fn stream_pair(&self, stream: StreamId) -> (NodeId, NodeId) {
        self.mon.pair_nodes(self.hb.streams[stream].pair)
    }

    /// Counts a message for every detector a heartbeat stream serves.
    fn count_stream(&mut self, stream: StreamId, bytes: u64) {
        for i in 0..self.hb.streams[stream].slots.len() {
            let slot = self.hb.streams[stream].slots[i];
            self.mon.count(slot, bytes);
        }
    }

    pub(super) fn heartbeat_tick(&mut self, stream: StreamId, gen: u32) {
        let st = &self.hb.streams[stream];
        if st.gen != gen {
            return;
        }
        let (interval, pair) = (st.interval, st.pair);
        let (m, t) = self.mon.pair_nodes(pair);
        match (
            self.scenario.network.heartbeat_channel,
            self.data.pairs_link[pair],
        ) {
            (Channel::Data, Some(link)) => {
                self.count_stream(stream, LIVENESS_MESSAGE_BYTES);
                let cap = self.scenario.network.send_buffer as usize;
                if self.data.links[link].buffer.len() < cap {
                    self.data.links[link]
                        .buffer
                        .push_back(Item::Heartbeat { stream });
                    self.try_transmit(link);
                } else {
                    self.log("drop", t, Some(m), None, || {
                        format!("heartbeat every {interval}: send buffer full")
                    });
                }
            }
            _ => self.send(t, m, Msg::Heartbeat { stream }),
        }
        // Next tick on the sender's local clock (a fixed-delay timer: after a
        // pause it fires once, late, then resumes its period).
        let clock = self.nodes[t].clock;
        let next = clock.true_at(clock.local(self.now) + interval, self.now + Nanos(1));
        self.push(next, Event::HeartbeatTick { stream, gen });
    }

    /// Where a datagram goes: a heartbeat and a probe reply to the monitor, a
    /// probe to the target.
    #[inline(always)]
    pub(super) fn receiver(&self, msg: Msg) -> NodeId {
        match msg {
            Msg::Heartbeat { stream } => self.stream_pair(stream).0,
            Msg::Probe { slot, .. } => self.mon.slot_nodes(slot).1,
            Msg::ProbeReply { slot, .. } => self.mon.slot_nodes(slot).0,
        }
    }

    /// The detector a message is for, if only one (heartbeats may serve several).
    pub(super) fn msg_detector(&self, msg: Msg) -> Option<u16> {
        match msg {
            Msg::Heartbeat { .. } => None,
            Msg::Probe { slot, .. } | Msg::ProbeReply { slot, .. } => {
                Some(self.mon.slots[slot].det)
            }
        }
    }

    /// Sends a control datagram.
    pub(super) fn send(&mut self, from: NodeId, to: NodeId, msg: Msg) {
        match msg {
            Msg::Heartbeat { stream } => self.count_stream(stream, LIVENESS_MESSAGE_BYTES),
            Msg::Probe { slot, .. } | Msg::ProbeReply { slot, .. } => {
                self.mon.count(slot, LIVENESS_MESSAGE_BYTES)
            }
        }
        let now = self.now;
        if let Some(p) = self
            .schedule
            .partitions
            .iter()
            .position(|p| p.cuts(self.globals[from], self.globals[to], now))
        {
            let det = self.msg_detector(msg);
            if self.schedule.partitions[p].hold {
                self.hb.held[p].push((from, to, msg));
                self.log("hold", from, Some(to), det, || format!("{msg:?}"));
            } else {
                self.log("drop", from, Some(to), det, || {
                    format!("{msg:?}: partition")
                });
            }
            return;
        }
        self.transmit_datagram(from, to, msg);
    }

    /// A datagram leaves: a loss draw when some loss is in force, then its
    /// latency (the draw order of [`RunPlan::heartbeat_stream`]).
    pub(super) fn transmit_datagram(&mut self, from: NodeId, to: NodeId, msg: Msg) {
        let now = self.now;
        let mut keep = 1.0 - self.scenario.network.loss;
        let mut extra = Nanos::ZERO;
        for lf in &self.schedule.link_faults {
            if lf.applies(self.globals[from], self.globals[to], now) {
                keep *= 1.0 - lf.loss_at(now);
                extra = extra + lf.extra_latency;
            }
        }
        let rng = match msg {
            Msg::Heartbeat { stream } => &mut self.hb.rngs[stream],
            Msg::Probe { slot, .. } | Msg::ProbeReply { slot, .. } => &mut self.mon.rngs[slot],
        };
        if keep < 1.0 && rng.random::<f64>() >= keep {
            let det = self.msg_detector(msg);
            self.log("drop", from, Some(to), det, || format!("{msg:?}: loss"));
            return;
        }
        let latency = self.hb.latency.sample(rng) + extra;
        debug_assert_eq!(self.receiver(msg), to);
        self.push(now + latency, Event::Arrive { msg });
    }

    /// A heartbeat of `stream` reaches its monitor, and every detector it serves.
    pub(super) fn deliver_heartbeat(&mut self, stream: StreamId, local: Nanos) {
        for i in 0..self.hb.streams[stream].slots.len() {
            let slot = self.hb.streams[stream].slots[i];
            self.note_call(slot, Call::Heartbeat(local));
            self.mon.detectors[slot].handle_heartbeat(local);
            self.after_input(slot);
        }
    }

    pub(super) fn arrive(&mut self, to: NodeId, msg: Msg) {
        let local = self.local(to);
        match msg {
            Msg::Heartbeat { stream } => {
                let (_, t) = self.stream_pair(stream);
                self.log("deliver", to, Some(t), None, || "heartbeat".into());
                self.deliver_heartbeat(stream, local);
            }
            Msg::Probe { slot, id } => {
                let (m, _) = self.mon.slot_nodes(slot);
                let det = self.mon.slots[slot].det;
                self.log("deliver", to, Some(m), Some(det), || format!("probe {id}"));
                self.send(to, m, Msg::ProbeReply { slot, id });
            }
            Msg::ProbeReply { slot, id } => {
                let (_, t) = self.mon.slot_nodes(slot);
                let det = self.mon.slots[slot].det;
                self.log("deliver", to, Some(t), Some(det), || {
                    format!("probe reply {id}")
                });
                self.note_call(slot, Call::ProbeReply(local, ProbeId(id)));
                self.mon.detectors[slot].handle_probe_reply(local, ProbeId(id));
                self.after_input(slot);
            }
        }
    }
}
