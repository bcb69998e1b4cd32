//! The data plane of a dataflow: one link per pair of adjacent stages, each
//! with a send buffer at its sender, a window of frames in flight or queued
//! at the receiver (credit comes back as the receiver serves a frame), and
//! frames delivered in order after a sampled latency. A send buffer over
//! [`BACKPRESSURE_SHARE`] full makes its sender emit backpressure frames; an
//! idle link carries stream heartbeats; sources emit on the workload's
//! intervals, in on/off bursts when the workload says so.
//!
//! Invariants: `window_used` counts the data frames (and in-band heartbeats)
//! in flight plus those queued at the receiver, never more than the
//! receive queue; frames arrive in the order they were sent; a cut link
//! sends nothing (its frames wait in the buffer, its control frames are
//! dropped).

use std::collections::VecDeque;

use fdlab_protocol::{Frame, Nanos};
use rand_chacha::ChaCha8Rng;

use super::ids::{IdVec, LinkId, NodeId, PairId, StreamId};
use super::nodes::Status;
use super::observer::Observer;
use super::{Event, Simulation};
use crate::dist::Sampler;
use crate::queue::Queue;

/// Size of a stream-heartbeat frame on a data link.
pub const STREAM_HEARTBEAT_BYTES: u64 = 16;
/// A send buffer fuller than this share makes its sender emit backpressure frames.
pub const BACKPRESSURE_SHARE: f64 = 0.8;

/// What travels on a data link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Item {
    Data,
    /// An in-band heartbeat of a heartbeat stream (`heartbeat_channel = "data"`).
    Heartbeat {
        stream: StreamId,
    },
    /// A control frame: bypasses the send buffer and the window.
    Control(Frame),
}

/// One data link.
pub(super) struct Link {
    pub(super) from: NodeId,
    pub(super) to: NodeId,
    /// The monitored pair `(to, from)` whose stream detectors read it.
    pub(super) pair: PairId,
    pub(super) buffer: VecDeque<Item>,
    pub(super) in_flight: VecDeque<Item>,
    /// Window use: data items in flight plus queued at the receiver.
    pub(super) window_used: u32,
    pub(super) last_arrival: Nanos,
    pub(super) last_sent: Nanos,
    pub(super) emit_gen: u32,
    pub(super) idle_gen: u32,
    /// End of the current "on" period of a bursty source.
    pub(super) on_until: Option<Nanos>,
    pub(super) workload_rng: ChaCha8Rng,
    pub(super) latency_rng: ChaCha8Rng,
}

/// Every data link of a run, with the dataflow's workload.
pub(super) struct DataPlane {
    pub(super) links: IdVec<LinkId, Link>,
    /// The data link of each monitored pair, if any.
    pub(super) pairs_link: IdVec<PairId, Option<LinkId>>,
    /// A send buffer holding this many frames is over
    /// [`BACKPRESSURE_SHARE`] full (the share of its capacity, rounded up).
    pub(super) backpressure_at: usize,
    /// Service-time streams of the stages (empty without data links).
    pub(super) service_rngs: IdVec<NodeId, ChaCha8Rng>,
    pub(super) data_latency: Sampler,
    pub(super) interval: Sampler,
    pub(super) service: Sampler,
    pub(super) on: Option<Sampler>,
    pub(super) off: Option<Sampler>,
}

impl<O: Observer, Q: Queue<Event>> Simulation<'_, O, Q> {
    pub(super) fn start_link(&mut self, link: LinkId) {
        let from = self.data.links[link].from;
        let l = &mut self.data.links[link];
        l.emit_gen += 1;
        l.idle_gen += 1;
        l.last_sent = self.now;
        let (emit_gen, idle_gen) = (l.emit_gen, l.idle_gen);
        if self.layout.layer[self.globals[from] as usize] == 0 {
            let gap = self
                .data
                .interval
                .sample(&mut self.data.links[link].workload_rng);
            let emit = Event::SourceEmit {
                link,
                gen: emit_gen,
            };
            self.push(self.now + gap, emit);
        }
        let idle = self.scenario.workload.idle_frame_interval;
        let check = Event::IdleCheck {
            link,
            gen: idle_gen,
        };
        self.push(self.now + idle, check);
    }

    pub(super) fn source_emit(&mut self, link: LinkId, gen: u32) {
        if self.data.links[link].emit_gen != gen {
            return;
        }
        let now = self.now;
        // Bursty sources: idle through an "off" period.
        if let (Some(on), Some(off)) = (&self.data.on, &self.data.off) {
            let l = &mut self.data.links[link];
            match l.on_until {
                None => l.on_until = Some(now + on.sample(&mut l.workload_rng)),
                Some(until) if now >= until => {
                    let resume = now + off.sample(&mut l.workload_rng);
                    l.on_until = Some(resume + on.sample(&mut l.workload_rng));
                    self.push(resume, Event::SourceEmit { link, gen });
                    return;
                }
                Some(_) => {}
            }
        }
        self.offer(link, Item::Data);
        let gap = self
            .data
            .interval
            .sample(&mut self.data.links[link].workload_rng);
        self.push(now + gap.max(Nanos(1)), Event::SourceEmit { link, gen });
    }

    /// Puts a frame in a link's send buffer; returns false if it is full. A
    /// buffer over [`BACKPRESSURE_SHARE`] full also sends a backpressure frame.
    pub(super) fn offer(&mut self, link: LinkId, item: Item) -> bool {
        let cap = self.scenario.network.send_buffer as usize;
        let len = self.data.links[link].buffer.len();
        if len >= self.data.backpressure_at {
            self.send_control(link, Frame::Backpressure);
        }
        if len >= cap {
            return false;
        }
        let l = &self.data.links[link];
        if len == 0
            && l.window_used < self.scenario.network.receive_queue
            && self.nodes[l.from].status == Status::Up
            && self.nodes[l.from].stage.blocked_on != Some(link)
            && !self.link_cut(link)
        {
            // Straight onto the wire: what `transmit` would do with the one
            // frame in the buffer, without the buffer's round trip. (The
            // checks of `link_open` are spelled out: in this order, with the
            // sender read once, the hottest send costs fewer instructions;
            // see docs/perf-history.md.)
            self.data.links[link].window_used += 1;
            self.put_on_wire(link, item);
            return true;
        }
        self.data.links[link].buffer.push_back(item);
        self.try_transmit(link);
        true
    }

    /// Whether frames can leave on `link` (sent by `from`) now: its sender
    /// is up and no partition cuts it (what every send on a data link
    /// checks first).
    #[inline(always)]
    fn link_open(&self, from: NodeId, link: LinkId) -> bool {
        self.nodes[from].status == Status::Up && !self.link_cut(link)
    }

    #[inline]
    fn link_cut(&self, link: LinkId) -> bool {
        !self.schedule.partitions.is_empty() && self.link_cut_by_partition(link)
    }

    #[inline(never)]
    fn link_cut_by_partition(&self, link: LinkId) -> bool {
        let l = &self.data.links[link];
        self.schedule
            .partitions
            .iter()
            .any(|p| p.cuts(self.globals[l.from], self.globals[l.to], self.now))
    }

    /// Moves frames from the send buffer onto the wire while the window
    /// allows. Most calls (a frame's window credit coming back, say) find
    /// nothing to send: that is checked inline.
    #[inline]
    pub(super) fn try_transmit(&mut self, link: LinkId) {
        let l = &self.data.links[link];
        if l.buffer.is_empty() || l.window_used >= self.scenario.network.receive_queue {
            return;
        }
        self.transmit(link);
    }

    #[inline(never)]
    fn transmit(&mut self, link: LinkId) {
        let from = self.data.links[link].from;
        if !self.link_open(from, link) {
            return;
        }
        let window = self.scenario.network.receive_queue;
        let mut sent_any = false;
        loop {
            let l = &mut self.data.links[link];
            if l.window_used >= window {
                break;
            }
            let Some(item) = l.buffer.pop_front() else {
                break;
            };
            l.window_used += 1;
            self.put_on_wire(link, item);
            sent_any = true;
        }
        if sent_any {
            // Space in the buffer: a stage blocked on this link may go on.
            if self.nodes[from].stage.blocked_on == Some(link) {
                self.nodes[from].stage.blocked_on = None;
                if self.offer(link, Item::Data) {
                    self.start_service(from);
                } else {
                    self.nodes[from].stage.blocked_on = Some(link);
                }
            }
        }
    }

    fn put_on_wire(&mut self, link: LinkId, item: Item) {
        let now = self.now;
        let (from, to) = (self.data.links[link].from, self.data.links[link].to);
        let mut extra = Nanos::ZERO;
        for lf in &self.schedule.link_faults {
            if lf.applies(self.globals[from], self.globals[to], now) {
                extra = extra + lf.extra_latency;
            }
        }
        let l = &mut self.data.links[link];
        let latency = self.data.data_latency.sample(&mut l.latency_rng) + extra;
        let arrival = (now + latency).max(l.last_arrival);
        l.last_arrival = arrival;
        l.last_sent = now;
        l.in_flight.push_back(item);
        self.push(arrival, Event::DataArrive { link });
    }

    /// A control frame: not buffered, not counted in the window, but ordered
    /// with the stream (a cut link drops it).
    pub(super) fn send_control(&mut self, link: LinkId, frame: Frame) {
        let from = self.data.links[link].from;
        if !self.link_open(from, link) {
            return;
        }
        if frame == Frame::StreamHeartbeat {
            let pair = self.data.links[link].pair;
            for i in 0..self.mon.stream_dets.len() {
                let slot = self.mon.slot_of(pair, self.mon.stream_dets[i] as usize);
                self.mon.count(slot, STREAM_HEARTBEAT_BYTES);
            }
        }
        self.put_on_wire(link, Item::Control(frame));
    }

    pub(super) fn data_arrive(&mut self, link: LinkId) {
        let Some(item) = self.data.links[link].in_flight.pop_front() else {
            return;
        };
        let (to, from, pair) = {
            let l = &self.data.links[link];
            (l.to, l.from, l.pair)
        };
        let local = self.local(to);
        match item {
            Item::Data => {
                self.log("deliver", to, Some(from), None, || "data".into());
                self.stream_frame(pair, local, Frame::Data);
                let stage = &mut self.nodes[to].stage;
                if !stage.idle() || !stage.input.is_empty() {
                    stage.input.push_back(link);
                    self.start_service(to);
                } else {
                    // An idle stage takes the frame at once (what the queue
                    // round trip would give, without it).
                    self.serve(to, link);
                }
            }
            Item::Heartbeat { stream } => {
                self.log("deliver", to, Some(from), None, || {
                    "heartbeat (in band)".into()
                });
                let l = &mut self.data.links[link];
                debug_assert!(l.window_used > 0, "an in-band heartbeat outside the window");
                l.window_used -= 1;
                self.deliver_heartbeat(stream, local);
                self.try_transmit(link);
            }
            Item::Control(frame) => {
                self.log("deliver", to, Some(from), None, || format!("{frame:?}"));
                self.stream_frame(pair, local, frame);
            }
        }
    }

    pub(super) fn idle_check(&mut self, link: LinkId, gen: u32) {
        if self.data.links[link].idle_gen != gen {
            return;
        }
        let idle = self.scenario.workload.idle_frame_interval;
        let due = self.data.links[link].last_sent + idle;
        if self.now >= due {
            self.send_control(link, Frame::StreamHeartbeat);
            // Sent nothing (cut link, or blocked)? Try again a period later.
            let l = &mut self.data.links[link];
            l.last_sent = l.last_sent.max(self.now);
            let next = self.now + idle;
            self.push(next, Event::IdleCheck { link, gen });
        } else {
            self.push(due, Event::IdleCheck { link, gen });
        }
    }
}
