//! A node of a membership run: the silo process it runs (an agent, or none
//! while it is down), its generation, its clock, and what slows it: a
//! stop-the-world pause holds everything it would handle until the pause
//! ends; CPU starvation (`degrade`) makes every event it handles cost
//! `slowdown` more (or a draw of `processing`), so its inbox backs up.
//!
//! What waits (held in a pause, or queued behind the node's work) sits in
//! the process's UDP receive buffer, as the kernel keeps datagrams a
//! process has not read yet: a SWIM datagram that does not fit is dropped
//! (`udp_receive_buffer`; memberlist v0.2.2 asks the kernel for
//! `udpRecvBufSize`, `net_transport.go:24` and `:357`). Stream messages and timers are not in it.

use std::collections::VecDeque;

use fdlab_protocol::Nanos;

use rand_chacha::ChaCha8Rng;

use crate::clock::Clock;
use crate::dist::Sampler;

use super::agents::Agent;
use super::cluster::Item;

#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) clock: Clock,
    /// The running silo; none while the node is down.
    pub(crate) agent: Option<Agent>,
    /// The generation of the running silo, or of the last one.
    pub(crate) generation: u32,
    /// Whether any silo ran on this node yet.
    pub(crate) started: bool,
    /// When the current pause began, if paused.
    pub(crate) paused_at: Option<Nanos>,
    /// What arrived during the pause, in arrival order.
    pub(crate) held: Vec<Item>,
    /// Extra processing time of every event (CPU starvation).
    pub(crate) slowdown: Nanos,
    /// Or each event's processing time drawn from a distribution, with the
    /// node's own stream.
    pub(crate) processing: Option<Sampler>,
    pub(crate) processing_rng: ChaCha8Rng,
    /// When the node finishes what it is handling.
    pub(crate) busy_until: Nanos,
    /// What arrived while it was busy, in arrival order, and whether its
    /// next turn is scheduled; the epoch tells a turn for a stopped silo.
    pub(crate) inbox: VecDeque<Item>,
    pub(crate) inbox_due: bool,
    pub(crate) inbox_epoch: u64,
    /// The timer armed for the agent: true time and epoch.
    pub(crate) timer: Option<Nanos>,
    pub(crate) epoch: u64,
    /// Under a `degrade` fault (also while a duty cycle runs it).
    pub(crate) degraded: bool,
    /// Bytes of datagrams waiting unread, and the buffer's size.
    pub(crate) udp_queued: u64,
    pub(crate) udp_buffer: u64,
}

impl Node {
    /// A node whose process reads datagrams from a buffer of `udp_buffer`
    /// bytes (`u64::MAX`: unbounded, for what has no such buffer).
    pub(crate) fn new(clock: Clock, processing_rng: ChaCha8Rng, udp_buffer: u64) -> Node {
        Node {
            clock,
            agent: None,
            generation: 0,
            started: false,
            paused_at: None,
            held: Vec::new(),
            slowdown: Nanos::ZERO,
            processing: None,
            processing_rng,
            busy_until: Nanos::ZERO,
            inbox: VecDeque::new(),
            inbox_due: false,
            inbox_epoch: 0,
            timer: None,
            epoch: 0,
            degraded: false,
            udp_queued: 0,
            udp_buffer,
        }
    }

    /// A datagram of `bytes` waits to be read: whether the buffer takes it
    /// (a full buffer drops it, as the kernel does).
    pub(crate) fn admit_udp(&mut self, bytes: u64) -> bool {
        if self.udp_queued + bytes > self.udp_buffer {
            return false;
        }
        self.udp_queued += bytes;
        true
    }

    /// A datagram of `bytes` left the receive buffer.
    pub(crate) fn read_udp(&mut self, bytes: u64) {
        debug_assert!(self.udp_queued >= bytes);
        self.udp_queued -= bytes;
    }

    /// The time handling one event takes now (zero: not starved).
    #[inline]
    pub(crate) fn cost(&mut self) -> Nanos {
        match &self.processing {
            Some(sampler) => sampler.sample(&mut self.processing_rng),
            None => self.slowdown,
        }
    }

    /// Whether the node is starved or paused.
    pub(crate) fn impaired(&self) -> bool {
        self.degraded || self.paused_at.is_some()
    }

    /// Takes the node down: the silo, what it held, its timer.
    pub(crate) fn stop(&mut self) -> Option<Agent> {
        self.paused_at = None;
        self.held.clear();
        self.inbox.clear();
        self.inbox_due = false;
        self.inbox_epoch += 1;
        self.timer = None;
        self.epoch += 1;
        self.udp_queued = 0;
        self.agent.take()
    }
}
