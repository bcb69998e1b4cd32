//! A dataflow stage: the frames a node has received and not yet served, the
//! one it is serving, and where finished frames go (round robin over its
//! output links).
//!
//! Invariants: a stage serves at most one frame at a time; a stage blocked
//! on a full output serves nothing until that output's send buffer has room;
//! every served frame gives its link one window credit back.

use std::collections::VecDeque;

use fdlab_protocol::Nanos;

use super::data_plane::Item;
use super::ids::{LinkId, NodeId};
use super::observer::Observer;
use super::{Event, Simulation};
use crate::queue::Queue;

/// A node's stage state.
pub(super) struct Stage {
    /// Received frames waiting for service, by the link they came over.
    pub(super) input: VecDeque<LinkId>,
    /// Serving a frame now.
    pub(super) busy: bool,
    /// Output link a finished frame waits for (its send buffer was full).
    pub(super) blocked_on: Option<LinkId>,
    /// Generation of the service in progress (a crash makes it stale).
    pub(super) service_gen: u32,
    /// The output link the next finished frame goes to (round robin).
    pub(super) next_output: usize,
    /// Share of its normal speed (backpressure faults lower it).
    pub(super) capacity: f64,
    pub(super) downstream: Vec<LinkId>,
}

impl Default for Stage {
    fn default() -> Stage {
        Stage {
            input: VecDeque::new(),
            busy: false,
            blocked_on: None,
            service_gen: 0,
            next_output: 0,
            capacity: 1.0,
            downstream: Vec::new(),
        }
    }
}

impl Stage {
    /// Free to start on a frame: not serving one, not waiting on a full
    /// output.
    #[inline(always)]
    pub(super) fn idle(&self) -> bool {
        !self.busy && self.blocked_on.is_none()
    }

    /// A crash: the input queue and the frame in service are lost.
    pub(super) fn clear(&mut self) {
        self.input.clear();
        self.busy = false;
        self.blocked_on = None;
        self.service_gen += 1;
    }
}

impl<O: Observer, Q: Queue<Event>> Simulation<'_, O, Q> {
    pub(super) fn start_service(&mut self, node: NodeId) {
        let stage = &mut self.nodes[node].stage;
        if !stage.idle() {
            return;
        }
        let Some(link) = stage.input.pop_front() else {
            return;
        };
        self.serve(node, link);
    }

    /// An idle stage starts on a frame that came over `link`.
    #[inline(always)]
    pub(super) fn serve(&mut self, node: NodeId, link: LinkId) {
        let stage = &mut self.nodes[node].stage;
        debug_assert!(stage.idle());
        stage.busy = true;
        stage.service_gen += 1;
        let gen = stage.service_gen;
        let base = self.data.service.sample(&mut self.data.service_rngs[node]);
        let took = if stage.capacity == 1.0 {
            base
        } else {
            Nanos::from_nanos_f64(base.as_nanos_f64() / stage.capacity)
        };
        self.push(self.now + took, Event::ServiceDone { node, gen });
        // The frame left the receive queue: window credit back to the sender.
        let l = &mut self.data.links[link];
        debug_assert!(l.window_used > 0, "a served frame outside the window");
        l.window_used -= 1;
        self.try_transmit(link);
    }

    pub(super) fn service_done(&mut self, node: NodeId, gen: u32) {
        let stage = &mut self.nodes[node].stage;
        if stage.service_gen != gen || !stage.busy {
            return;
        }
        stage.busy = false;
        if !stage.downstream.is_empty() {
            // Round robin over the outputs (kept below their count: no
            // division per frame).
            let link = stage.downstream[stage.next_output];
            stage.next_output += 1;
            if stage.next_output == stage.downstream.len() {
                stage.next_output = 0;
            }
            if !self.offer(link, Item::Data) {
                self.nodes[node].stage.blocked_on = Some(link);
                return;
            }
        }
        self.start_service(node);
    }
}
