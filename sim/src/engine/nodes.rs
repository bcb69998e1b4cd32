//! The simulated processes (spec §4): each node is up, paused, or crashed,
//! may be degraded (slowed down), and runs on its own clock.
//!
//! - A crashed node handles nothing and loses its events; a restart brings
//!   it back as a new incarnation that monitors from scratch.
//! - A paused node handles nothing, sends nothing and fires no timer, then
//!   handles its backlog late, in order, when it resumes (after telling its
//!   detectors how long it stalled).
//! - A degraded node spends `slowdown` on every event it handles, so events
//!   queue behind each other.
//!
//! Invariants: a node's backlog is empty unless it is paused; `busy_until`
//! is in the future only for a degraded (or formerly degraded) node.

use fdlab_protocol::{FailureDetector, Frame, Nanos};

use super::calls::Call;
use super::data_plane::Item;
use super::ids::NodeId;
use super::observer::Observer;
use super::stages::Stage;
use super::timers::Deadline;
use super::{Event, Simulation};
use crate::clock::Clock;
use crate::queue::Queue;

/// Local health degradation score a degraded node reports to its probing
/// detectors (Orleans counts one point per failing local health check).
pub const DEGRADED_HEALTH_SCORE: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    Up,
    Crashed,
    Paused { since: Nanos },
}

/// One process.
pub(super) struct Node {
    pub(super) status: Status,
    pub(super) clock: Clock,
    /// A degraded node is busy with its last event until then.
    pub(super) busy_until: Nanos,
    /// Time a degraded node spends on every event (zero at full speed).
    pub(super) slowdown: Nanos,
    /// Events that came while it was paused, in order.
    pub(super) backlog: Vec<Event>,
    /// Its dataflow stage (idle and empty on a mesh).
    pub(super) stage: Stage,
}

impl Node {
    pub(super) fn new(clock: Clock) -> Node {
        Node {
            status: Status::Up,
            clock,
            busy_until: Nanos::ZERO,
            slowdown: Nanos::ZERO,
            backlog: Vec::new(),
            stage: Stage::default(),
        }
    }
}

impl<O: Observer, Q: Queue<Event>> Simulation<'_, O, Q> {
    /// Node `node`'s local time now.
    #[inline(always)]
    pub(super) fn local(&self, node: NodeId) -> Nanos {
        self.nodes[node].clock.local(self.now)
    }

    /// Whether node `n` handles its `event` now: at once when it is up and
    /// at full speed (nearly always; inlined), else see [`Self::admit_slow`].
    #[inline(always)]
    pub(super) fn admit(&mut self, n: NodeId, event: Event) -> bool {
        let node = &self.nodes[n];
        if node.status == Status::Up && node.slowdown.is_zero() && self.now >= node.busy_until {
            return true;
        }
        self.admit_slow(n, event)
    }

    /// The event is lost (a crashed node), waits in the backlog (a paused
    /// one; a pair's timer files its due deadlines there itself), comes back
    /// when the node is free (a degraded one, still busy with an earlier
    /// event), or runs now and keeps the degraded node busy.
    #[inline(never)]
    fn admit_slow(&mut self, n: NodeId, event: Event) -> bool {
        let node = &mut self.nodes[n];
        match node.status {
            Status::Up => {
                if self.now < node.busy_until {
                    let at = node.busy_until;
                    self.push(at, event);
                    return false;
                }
                if !node.slowdown.is_zero() {
                    node.busy_until = self.now + node.slowdown;
                }
                true
            }
            Status::Crashed => {
                self.lost_at_crashed(n, event);
                false
            }
            Status::Paused { .. } => {
                if let Event::PairTimer { pair, gen } = event {
                    self.pair_timer(pair, gen, true);
                } else {
                    node.backlog.push(event);
                }
                false
            }
        }
    }

    /// An event owned by a crashed node is lost; data in flight to it still
    /// leaves the link (and frees its window).
    fn lost_at_crashed(&mut self, node: NodeId, event: Event) {
        match event {
            Event::DataArrive { link } => {
                let l = &mut self.data.links[link];
                if let Some(item) = l.in_flight.pop_front() {
                    if !matches!(item, Item::Control(_)) {
                        debug_assert!(
                            l.window_used > 0,
                            "a data frame in flight outside the window"
                        );
                        l.window_used -= 1;
                    }
                }
                let from = l.from;
                self.log("drop", node, Some(from), None, || {
                    "data frame: receiver crashed".into()
                });
                self.try_transmit(link);
            }
            Event::Arrive { msg, .. } => {
                let det = self.msg_detector(msg);
                self.log("drop", node, None, det, || {
                    format!("{msg:?}: receiver crashed")
                });
            }
            _ => {}
        }
    }

    pub(super) fn crash(&mut self, node: NodeId) {
        if self.nodes[node].status == Status::Crashed {
            return;
        }
        let n = &mut self.nodes[node];
        n.status = Status::Crashed;
        n.backlog.clear();
        n.stage.clear();
        for link in self.data.links.iter_mut() {
            if link.from == node {
                link.buffer.clear();
            }
            if link.to == node {
                // Its input queue is gone: the window frees up.
                let in_flight_data = link
                    .in_flight
                    .iter()
                    .filter(|i| !matches!(i, Item::Control(_)))
                    .count();
                link.window_used = in_flight_data as u32;
            }
        }
    }

    /// A pause starts: a node that is up stops handling anything; a planned
    /// pause is announced downstream first when the workload says so.
    pub(super) fn pause(&mut self, node: NodeId, planned: Option<Nanos>) {
        if self.nodes[node].status != Status::Up {
            return;
        }
        if let Some(pause) = planned {
            if self.scenario.workload.maintenance_frames {
                let outputs = self.nodes[node].stage.downstream.clone();
                for link in outputs {
                    self.send_control(link, Frame::Maintenance { pause });
                }
            }
        }
        self.nodes[node].status = Status::Paused { since: self.now };
    }

    pub(super) fn set_health(&mut self, node: NodeId, score: u32) {
        if self.nodes[node].status == Status::Crashed {
            return;
        }
        let local = self.local(node);
        for i in 0..self.mon.by_monitor[node].len() {
            let slot = self.mon.by_monitor[node][i];
            self.note_call(slot, Call::LocalHealth(local, score));
            self.mon.detectors[slot].handle_local_health(local, score);
            self.after_input(slot);
        }
    }

    pub(super) fn resume(&mut self, node: NodeId) {
        let Status::Paused { since } = self.nodes[node].status else {
            return;
        };
        self.nodes[node].status = Status::Up;
        let stall = self.now - since;
        let local = self.local(node);
        // Detectors learn of the stall before the backlog reaches them.
        for i in 0..self.mon.by_monitor[node].len() {
            let slot = self.mon.by_monitor[node][i];
            self.note_call(slot, Call::LocalStall(local, stall));
            self.mon.detectors[slot].handle_local_stall(local, stall);
            self.mon.slots[slot].deadline = Deadline::UNKNOWN;
            self.record(slot);
        }
        let backlog = std::mem::take(&mut self.nodes[node].backlog);
        for event in backlog {
            self.push(self.now, event);
        }
        let outputs = self.nodes[node].stage.downstream.clone();
        for link in outputs {
            self.try_transmit(link);
        }
    }

    pub(super) fn restart(&mut self, node: NodeId) {
        if self.nodes[node].status != Status::Crashed {
            // A restart of a running process: it crashes and comes back at once.
            self.crash(node);
        }
        let n = &mut self.nodes[node];
        n.status = Status::Up;
        n.busy_until = self.now;
        let local = self.local(node);
        self.disarm_monitor(node);
        for i in 0..self.mon.by_monitor[node].len() {
            // A new incarnation monitors from scratch.
            let slot = self.mon.by_monitor[node][i];
            let det = self.mon.slots[slot].det as usize;
            self.mon.detectors[slot] = self.scenario.start_detector(det, local);
            self.note_started(slot);
            self.start_monitoring(slot);
        }
        for i in 0..self.hb.by_target[node].len() {
            let stream = self.hb.by_target[node][i];
            self.start_heartbeats(stream);
        }
        for link in self.data.links.ids() {
            if self.data.links[link].from == node {
                self.start_link(link);
            }
        }
    }
}
