//! The fault schedule acting on the simulated things: each resolved action
//! of [`crate::faults::Schedule`] (crash, restart, pause, partition heal,
//! backpressure, degradation, clock step or drift) handed to the thing it
//! changes, and each fault's start and end written to a replay's log.
//!
//! Invariant: an action only changes state through the owner's own methods
//! (a node's lifecycle in [`super::nodes`], timers in [`super::timers`]).

use fdlab_protocol::Nanos;

use super::ids::NodeId;
use super::nodes::DEGRADED_HEALTH_SCORE;
use super::observer::{LogRecord, Observer};
use super::{Event, Simulation};
use crate::faults::Action;
use crate::queue::Queue;
use crate::scenario::Expect;

/// `action` for a part whose nodes `local` numbers: its node's number in
/// the part, or `None` when the node is not one of the part's (the action
/// then changes nothing there). A partition's heal concerns every part.
pub(super) fn localize(action: Action, local: impl Fn(u32) -> Option<u32>) -> Option<Action> {
    Some(match action {
        Action::Crash { node } => Action::Crash { node: local(node)? },
        Action::Restart { node } => Action::Restart { node: local(node)? },
        Action::PauseStart { node, planned } => Action::PauseStart {
            node: local(node)?,
            planned,
        },
        Action::PauseEnd { node } => Action::PauseEnd { node: local(node)? },
        Action::Heal { partition } => Action::Heal { partition },
        Action::BackpressureStart { node, capacity } => Action::BackpressureStart {
            node: local(node)?,
            capacity,
        },
        Action::BackpressureEnd { node } => Action::BackpressureEnd { node: local(node)? },
        Action::DegradeStart {
            node,
            slowdown,
            processing,
        } => Action::DegradeStart {
            node: local(node)?,
            slowdown,
            processing,
        },
        Action::DegradeEnd { node } => Action::DegradeEnd { node: local(node)? },
        Action::ClockStep { node, offset } => Action::ClockStep {
            node: local(node)?,
            offset,
        },
        Action::ClockDrift { node, drift } => Action::ClockDrift {
            node: local(node)?,
            drift,
        },
    })
}

impl<O: Observer, Q: Queue<Event>> Simulation<'_, O, Q> {
    /// Carries out the part's fault action `action` (its nodes numbered in
    /// the part, see [`localize`]).
    pub(super) fn fault(&mut self, action: u32) {
        let (_, action) = self.actions[action as usize];
        match action {
            Action::Crash { node } => self.crash(NodeId(node)),
            Action::Restart { node } => self.restart(NodeId(node)),
            Action::PauseStart { node, planned } => self.pause(NodeId(node), planned),
            Action::PauseEnd { node } => self.resume(NodeId(node)),
            Action::Heal { partition } => {
                let held = std::mem::take(&mut self.hb.held[partition as usize]);
                for (from, to, msg) in held {
                    self.transmit_datagram(from, to, msg);
                }
                for link in self.data.links.ids() {
                    self.try_transmit(link);
                }
            }
            Action::BackpressureStart { node, capacity } => {
                self.nodes[NodeId(node)].stage.capacity = capacity;
            }
            Action::BackpressureEnd { node } => self.nodes[NodeId(node)].stage.capacity = 1.0,
            Action::DegradeStart { node, slowdown, .. } => {
                self.nodes[NodeId(node)].slowdown = slowdown;
                self.set_health(NodeId(node), DEGRADED_HEALTH_SCORE);
            }
            Action::DegradeEnd { node } => {
                self.nodes[NodeId(node)].slowdown = Nanos::ZERO;
                self.set_health(NodeId(node), 0);
            }
            Action::ClockStep { node, offset } => {
                let now = self.now;
                self.nodes[NodeId(node)].clock.step(now, offset);
                self.rearm_node(NodeId(node));
            }
            Action::ClockDrift { node, drift } => {
                let now = self.now;
                self.nodes[NodeId(node)].clock.set_drift(now, drift);
                self.rearm_node(NodeId(node));
            }
        }
    }

    /// Writes a fault's start or end into the replay's log.
    pub(super) fn mark(&mut self, record: u32, end: bool) {
        if !O::LOGS {
            return;
        }
        let r = &self.schedule.records[record as usize];
        let expect = match r.expect {
            Expect::Detect => "detect",
            Expect::Tolerate => "tolerate",
        };
        let detail = format!("{} {} (expect {expect})", r.kind.name(), r.target);
        self.observer.log(LogRecord {
            time: self.now,
            event: if end { "fault-end" } else { "fault" },
            node: r.node,
            peer: None,
            detector: None,
            detail,
        });
    }
}
