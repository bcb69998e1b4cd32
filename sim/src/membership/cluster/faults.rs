//! The fault schedule acting on a membership run's nodes: crashes and
//! restarts, pauses and their end (the silo notices the stall, catches up
//! with its timers, then handles what arrived meanwhile), degraded
//! processing, and clock steps and drift.

use fdlab_protocol::Nanos;
use rand::RngExt;

use crate::dist::Sampler;
use crate::faults::Action;
use crate::scenario::FaultKind;

use super::super::outcome::NodeChange;
use super::{udp_bytes, Cluster};

impl Cluster {
    /// The fault record of a crash or restart of `node` starting at `at`.
    fn crash_record(&self, node: u32, at: Nanos) -> Option<usize> {
        self.schedule.records.iter().position(|r| {
            matches!(r.kind, FaultKind::Crash | FaultKind::Restart)
                && r.node == Some(node)
                && r.window.start == at
        })
    }

    pub(super) fn fault(&mut self, now: Nanos, i: usize) {
        let (_, action) = self.schedule.actions[i];
        match action {
            Action::Crash { node } => {
                let record = self.crash_record(node, now);
                self.stop(now, node, NodeChange::Crashed, record);
            }
            Action::Restart { node } => {
                let n = &self.nodes[node as usize];
                if n.agent.is_some() {
                    let record = self.crash_record(node, now);
                    self.stop(now, node, NodeChange::Crashed, record);
                }
                let after = Some(self.nodes[node as usize].generation);
                let started = self.nodes[node as usize].started;
                self.start(now, node, if started { after } else { None });
            }
            Action::PauseStart { node, .. } => {
                let n = &mut self.nodes[node as usize];
                let generation = n.generation;
                if let Some(agent) = n.agent.as_ref() {
                    if n.paused_at.is_none() {
                        n.paused_at = Some(now);
                        self.ledger.impaired(node, true);
                        let silo = agent.me(generation);
                        self.ledger.node_change(now, silo, NodeChange::Paused);
                    }
                }
            }
            Action::PauseEnd { node } => self.resume(now, node),
            Action::DegradeStart {
                node,
                slowdown,
                processing,
            } => {
                let n = &mut self.nodes[node as usize];
                n.slowdown = slowdown;
                n.degraded = true;
                n.processing =
                    processing.map(|i| Sampler::new(&self.schedule.processing[i as usize]));
                self.ledger.impaired(node, true);
            }
            Action::DegradeEnd { node } => {
                let n = &mut self.nodes[node as usize];
                n.slowdown = Nanos::ZERO;
                n.degraded = false;
                n.processing = None;
                let still = n.impaired();
                self.ledger.impaired(node, still);
            }
            Action::ClockStep { node, offset } => {
                self.nodes[node as usize].clock.step(now, offset);
                self.rearm(now, node);
            }
            Action::ClockDrift { node, drift } => {
                self.nodes[node as usize].clock.set_drift(now, drift);
                self.rearm(now, node);
            }
            // Partitions deliver held messages by themselves (see
            // `network`); backpressure is refused in membership scenarios.
            Action::Heal { .. }
            | Action::BackpressureStart { .. }
            | Action::BackpressureEnd { .. } => {}
        }
    }

    /// A clock changed: the timer's true instant moves.
    fn rearm(&mut self, now: Nanos, node: u32) {
        let n = &mut self.nodes[node as usize];
        n.timer = None;
        n.epoch += 1;
        self.arm(now, node);
    }

    /// The end of a pause: the silo notices the stall, catches up with its
    /// timers, then handles what arrived meanwhile, in order.
    pub(super) fn resume(&mut self, now: Nanos, node: u32) {
        let n = &mut self.nodes[node as usize];
        let Some(since) = n.paused_at.take() else {
            return;
        };
        let still = n.impaired();
        self.ledger.impaired(node, still);
        let held = std::mem::take(&mut n.held);
        let local = n.clock.local(now);
        let generation = n.generation;
        let Some(agent) = n.agent.as_mut() else {
            return;
        };
        let silo = agent.me(generation);
        agent.handle_stall(local, now - since);
        let entropy = self.entropy[node as usize].random::<u64>();
        agent.handle_timeout(local, entropy);
        self.ledger.node_change(now, silo, NodeChange::Resumed);
        for item in held {
            if let Some(bytes) = udp_bytes(&item) {
                self.nodes[node as usize].read_udp(bytes);
            }
            self.push_last(now, item);
        }
        self.nodes[node as usize].timer = None;
        self.nodes[node as usize].epoch += 1;
        self.schedule_inbox(now, node);
        self.drain(now, node);
    }
}
