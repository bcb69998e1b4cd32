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
use super::Simulation;
use crate::faults::Action;
use crate::scenario::Expect;

impl<O: Observer> Simulation<'_, O> {
    pub(super) fn fault(&mut self, action: u32) {
        let (_, action) = self.schedule.actions[action as usize];
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
