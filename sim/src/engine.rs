//! The discrete-event engine: one run of one scenario with one seed.
//!
//! Virtual time is integer nanoseconds of true time; one event queue ordered
//! by `(time, insertion sequence)`, except that timers come after every other
//! event of their instant; no wall clock anywhere. Every detector is driven
//! only through its sans-IO interface: inputs with the monitor's local time,
//! and a timeout at the instant `poll_timeout` names. A monitored pair has one
//! timer event, at the earliest of its detectors' deadlines, kept lazily (an
//! earlier pending one is left in place and re-armed when it fires, so a
//! heartbeat that pushes a deadline back costs no queue operation); when it
//! fires, every detector that is due gets its timeout, in detector order.
//!
//! Shadow mode: every detector of the scenario has its own instance on every
//! monitored pair and its liveness traffic is sent by the simulated nodes and
//! counted for it, while faults, the data plane and the ground truth are
//! shared. Detectors of a pair that ask for heartbeats at the same interval
//! receive the same heartbeat stream (each counts it as its own overhead): they
//! are then compared on exactly the same arrivals, and the simulator sends one
//! message where a deployment of either would send one. Every heartbeat stream
//! (by pair and interval) and every prober (by pair and detector name) has its
//! own random stream, so adding a detector changes no other draw.
//!
//! Node semantics (spec §4): a crashed node handles nothing and loses its
//! events; a paused node handles nothing, sends nothing and fires no timer,
//! then handles its backlog late, in order, when it resumes (after telling its
//! detectors how long it stalled); a degraded node spends `slowdown` on every
//! event it handles, so events queue behind each other.

use std::collections::VecDeque;
use std::ops::Range;

use fdlab_protocol::{Detector, FailureDetector, Frame, Nanos, ProbeId, Verdict};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::clock::Clock;
use crate::dist::Sampler;
use crate::faults::{Action, Schedule};
use crate::outcome::{DetectorTimeline, PairOutcome, RunOutcome};
use crate::queue::EventQueue;
use crate::rng::{name_hash, Purpose, Streams};
use crate::scenario::{Channel, Scenario, ScenarioError};
use crate::scores::ScoreSampler;
use crate::topology::Layout;

/// Size of a heartbeat or probe datagram, for the overhead figures (a small
/// UDP payload with its headers).
pub const LIVENESS_MESSAGE_BYTES: u64 = 64;
/// Size of a stream-heartbeat frame on a data link.
pub const STREAM_HEARTBEAT_BYTES: u64 = 16;
/// A send buffer fuller than this share makes its sender emit backpressure frames.
pub const BACKPRESSURE_SHARE: f64 = 0.8;
/// Local health degradation score a degraded node reports to its probing
/// detectors (Orleans counts one point per failing local health check).
pub const DEGRADED_HEALTH_SCORE: u32 = 1;

/// One line of a replay trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRecord {
    pub time: Nanos,
    pub event: &'static str,
    /// The node where it happened (none for a fault on every link).
    pub node: Option<u32>,
    pub peer: Option<u32>,
    pub detector: Option<u16>,
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Msg {
    Heartbeat { stream: u32 },
    Probe { slot: u32, id: u64 },
    ProbeReply { slot: u32, id: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Event {
    HeartbeatTick {
        stream: u32,
        gen: u32,
    },
    /// The earliest deadline among a monitored pair's detectors; it comes
    /// after every other event of its instant (a deadline is checked once
    /// the instant's inputs are in, whichever detectors share the pair).
    PairTimer {
        pair: u32,
        gen: u32,
    },
    /// One detector's deadline that came while its monitor was paused, in
    /// the monitor's backlog among the inputs that came then.
    SlotTimeout {
        slot: u32,
    },
    /// A datagram reaches its receiver (which `Msg::receiver` names: keeping
    /// the event at 16 bytes keeps the queue's entries at 32).
    Arrive {
        msg: Msg,
    },
    Fault {
        action: u32,
    },
    /// Start or end of a fault, for the replay trace.
    Mark {
        record: u32,
        end: bool,
    },
    SourceEmit {
        link: u32,
        gen: u32,
    },
    DataArrive {
        link: u32,
    },
    ServiceDone {
        node: u32,
        gen: u32,
    },
    IdleCheck {
        link: u32,
        gen: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Up,
    Crashed,
    Paused { since: Nanos },
}

struct Node {
    status: Status,
    clock: Clock,
    busy_until: Nanos,
    slowdown: Nanos,
    backlog: Vec<Event>,
    // Dataflow stage state.
    input: VecDeque<u32>,
    busy: bool,
    /// Output link a finished frame waits for (its send buffer was full).
    blocked_on: Option<u32>,
    service_gen: u32,
    /// The output link the next finished frame goes to (round robin).
    next_output: usize,
    capacity: f64,
    downstream: Vec<u32>,
}

impl Node {
    /// A stage free to start on a frame: not serving one, not waiting on a
    /// full output.
    fn idle(&self) -> bool {
        !self.busy && self.blocked_on.is_none()
    }
}

/// Verdict changes logged before they move to their timelines (16 bytes each).
const CHANGE_BATCH: usize = 1 << 14;

/// One detector on one monitored pair: the small fields every event touches.
/// The detector, its random stream and its timeline live in parallel vectors
/// (`detectors`, `rngs`, `timelines`): with tens of thousands of slots, an
/// event then touches a few cache lines instead of a 650-byte struct.
struct Slot {
    det: u16,
    verdict: Verdict,
    /// Its monitored pair (an index into `pairs`).
    pair: u32,
    /// The detector's next deadline in true time, as `after_input` last
    /// computed it: a timer that fires early re-arms there without asking
    /// the detector again (nothing reaches a detector but through
    /// `after_input`, except a stall, which forgets it).
    deadline: Deadline,
    /// Liveness messages and bytes sent for it (copied to its timeline at the end).
    messages: u64,
    bytes: u64,
}

/// A slot's next deadline in true time, as last computed, in one word: a
/// pair's timer scans its slots' deadlines on every firing (a sweep puts a
/// thousand slots on a pair), and a plain comparison per slot keeps that
/// scan branch-light. Besides instants it holds three markers:
/// [`Deadline::UNKNOWN`] (ask the detector), [`Deadline::HELD`] (it came
/// while the monitor was paused: an [`Event::SlotTimeout`] waits in the
/// backlog, and the resume makes the deadline unknown) and
/// [`Deadline::NEVER`] (`poll_timeout` said none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Deadline(u64);

impl Deadline {
    /// Not known: ask the detector. An instant 0 reads as this too, which is
    /// harmless: asking again gives it back.
    const UNKNOWN: Deadline = Deadline(0);
    /// Above every instant, so that a scan's minimum ignores it.
    const HELD: Deadline = Deadline(u64::MAX - 1);
    const NEVER: Deadline = Deadline(u64::MAX);

    /// An instant (one at the far end of time, centuries away, is kept
    /// below the markers).
    fn at(time: Nanos) -> Deadline {
        Deadline(time.as_nanos().min(Deadline::HELD.0 - 1))
    }

    /// The instant, if this is one.
    fn time(self) -> Option<Nanos> {
        (self != Deadline::UNKNOWN && self.0 < Deadline::HELD.0).then_some(Nanos(self.0))
    }
}

/// The one timer event of a monitored pair: it fires at the earliest of its
/// detectors' deadlines and serves every detector that is due. One event per
/// pair rather than per detector keeps the queue small when a sweep puts a
/// thousand detectors on each pair (they would otherwise each re-arm after
/// almost every frame); a detector's deadlines stay exact either way.
#[derive(Clone, Copy, Debug, Default)]
struct PairTimer {
    /// The pending event's time (at or before every armed deadline).
    at: Option<Nanos>,
    gen: u32,
}

/// The heartbeats one target sends one monitor at one interval, for every
/// detector of the pair with that interval.
struct HbStream {
    pair: u32,
    interval: Nanos,
    gen: u32,
    /// The slots that receive it, in detector order.
    slots: Vec<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Item {
    Data,
    /// An in-band heartbeat of a heartbeat stream (`heartbeat_channel = "data"`).
    Heartbeat {
        stream: u32,
    },
    /// A control frame: bypasses the send buffer and the window.
    Control(Frame),
}

struct Link {
    from: u32,
    to: u32,
    pair: u32,
    buffer: VecDeque<Item>,
    in_flight: VecDeque<Item>,
    /// Window use: data items in flight plus queued at the receiver.
    window_used: u32,
    last_arrival: Nanos,
    last_sent: Nanos,
    emit_gen: u32,
    idle_gen: u32,
    /// End of the current "on" period of a bursty source.
    on_until: Option<Nanos>,
    workload_rng: ChaCha8Rng,
    latency_rng: ChaCha8Rng,
}

/// Per-detector facts the host needs.
struct DetInfo {
    heartbeat: Option<Nanos>,
    probes: bool,
}

/// One run of a scenario.
struct Simulation<'a> {
    scenario: &'a Scenario,
    now: Nanos,
    queue: EventQueue<Event>,
    /// Events handled, and those of them that are not counted as simulated
    /// events (see [`Simulation::run`]); counted apart so that the common
    /// event pays one increment.
    popped: u64,
    uncounted: u64,
    /// Whether this part counts the events every part handles (faults), so
    /// that a run split into parts counts each once.
    counts_world: bool,
    nodes: Vec<Node>,
    /// Service-time streams of the stages (empty without data links).
    service_rngs: Vec<ChaCha8Rng>,
    layout: &'a Layout,
    /// The monitored pairs this part simulates (all of them unless the run is
    /// split; see [`run`]); a pair index is a position in this slice.
    pairs: &'a [(u32, u32)],
    pairs_link: Vec<Option<u32>>,
    slots: Vec<Slot>,
    pair_timers: Vec<PairTimer>,
    /// The pair whose timer is being served: its detectors' new deadlines
    /// gather in its `at` and one event is pushed at the end.
    serving: Option<u32>,
    detectors: Vec<Detector>,
    rngs: Vec<ChaCha8Rng>,
    timelines: Vec<DetectorTimeline>,
    /// The latest verdict changes as `(slot, time, verdict)`, in time order,
    /// moved to the slots' timelines [`CHANGE_BATCH`] at a time. A sweep puts
    /// a thousand flapping detectors on each pair: a push onto each one's own
    /// vector at the moment of the change was a cache miss in the middle of
    /// the event loop; in a batch the misses overlap.
    changes: Vec<(u32, Nanos, Verdict)>,
    hb_streams: Vec<HbStream>,
    hb_rngs: Vec<ChaCha8Rng>,
    /// Heartbeat streams whose target is each node.
    hb_by_target: Vec<Vec<u32>>,
    /// Slots whose monitor is each node.
    by_monitor: Vec<Vec<u32>>,
    dets: Vec<DetInfo>,
    /// A send buffer holding this many frames is over
    /// [`BACKPRESSURE_SHARE`] full (the share of its capacity, rounded up).
    backpressure_at: usize,
    /// The detectors that read the data stream, in detector order (a data
    /// frame goes to these alone).
    stream_dets: Vec<u32>,
    links: Vec<Link>,
    schedule: &'a Schedule,
    held: Vec<Vec<(u32, u32, Msg)>>,
    latency: Sampler,
    data_latency: Sampler,
    interval: Sampler,
    service: Sampler,
    on: Option<Sampler>,
    off: Option<Sampler>,
    trace: Option<Vec<TraceRecord>>,
    /// Replays only: samples one pair's detector scores ([`run_with_scores`]).
    scores: Option<&'a mut ScoreSampler>,
}

impl<'a> Simulation<'a> {
    /// Builds the part of a run that simulates the monitored pairs `pairs` of
    /// `world` (a scenario that passed [`Scenario::validate`], which [`run`]
    /// checks).
    fn new(
        scenario: &'a Scenario,
        world: &'a World,
        pairs: Range<usize>,
        trace: bool,
        counts_world: bool,
    ) -> Simulation<'a> {
        let (layout, schedule, streams) = (&world.layout, &world.schedule, &world.streams);
        let n = layout.nodes.len();
        let mut nodes: Vec<Node> = (0..n)
            .map(|_| Node {
                status: Status::Up,
                clock: Clock::default(),
                busy_until: Nanos::ZERO,
                slowdown: Nanos::ZERO,
                backlog: Vec::new(),
                input: VecDeque::new(),
                busy: false,
                blocked_on: None,
                service_gen: 0,
                next_output: 0,
                capacity: 1.0,
                downstream: Vec::new(),
            })
            .collect();
        let service_rngs = if layout.links.is_empty() {
            Vec::new()
        } else {
            (0..n)
                .map(|i| streams.stream(Purpose::Service, &[i as u64]))
                .collect()
        };
        let pairs = &layout.pairs[pairs];
        for c in &scenario.clocks {
            if let Some(i) = layout.nodes.iter().position(|x| *x == c.node) {
                nodes[i].clock = Clock::new(c.drift, c.offset.0);
            }
        }
        let dets: Vec<DetInfo> = scenario
            .detectors
            .iter()
            .map(|d| DetInfo {
                heartbeat: d.config.heartbeat_interval(),
                probes: d.config.uses_probes(),
            })
            .collect();
        let stream_dets = (0..scenario.detectors.len() as u32)
            .filter(|&d| scenario.detectors[d as usize].config.uses_data_stream())
            .collect();
        let mut pairs_link = vec![None; pairs.len()];
        let mut links = Vec::with_capacity(layout.links.len());
        for (i, l) in layout.links.iter().enumerate() {
            let pair = pairs
                .binary_search(&(l.to, l.from))
                .expect("every data link is a monitored pair");
            pairs_link[pair] = Some(i as u32);
            nodes[l.from as usize].downstream.push(i as u32);
            let ids = [u64::from(l.from), u64::from(l.to)];
            links.push(Link {
                from: l.from,
                to: l.to,
                pair: pair as u32,
                buffer: VecDeque::new(),
                in_flight: VecDeque::new(),
                window_used: 0,
                last_arrival: Nanos::ZERO,
                last_sent: Nanos::ZERO,
                emit_gen: 0,
                idle_gen: 0,
                on_until: None,
                workload_rng: streams.stream(Purpose::Workload, &ids),
                latency_rng: streams.stream(Purpose::DataLink, &ids),
            });
        }
        let count = pairs.len() * scenario.detectors.len();
        let mut slots = Vec::with_capacity(count);
        let mut detectors = Vec::with_capacity(count);
        let mut rngs = Vec::with_capacity(count);
        // Detectors that start at the same local instant start identical:
        // build each once and clone it (phi accrual's threshold search and
        // window reservation are then paid once, not per pair).
        let mut prototypes: Vec<(usize, Nanos, Detector)> = Vec::new();
        for (p, &(m, t)) in pairs.iter().enumerate() {
            for (d, setup) in scenario.detectors.iter().enumerate() {
                let ids = [u64::from(m), u64::from(t), name_hash(&setup.name)];
                let start = nodes[m as usize].clock.local(Nanos::ZERO);
                let detector = match prototypes
                    .iter()
                    .find(|(pd, ps, _)| *pd == d && *ps == start)
                {
                    Some((_, _, proto)) => proto.clone(),
                    None => {
                        let fresh =
                            Detector::new(setup.config.clone(), start).expect("validated scenario");
                        prototypes.push((d, start, fresh.clone()));
                        fresh
                    }
                };
                slots.push(Slot {
                    det: d as u16,
                    verdict: Verdict::Alive,
                    pair: p as u32,
                    deadline: Deadline::UNKNOWN,
                    messages: 0,
                    bytes: 0,
                });
                detectors.push(detector);
                rngs.push(streams.stream(Purpose::Liveness, &ids));
            }
        }
        let d_count = scenario.detectors.len();
        let mut hb_streams: Vec<HbStream> = Vec::new();
        let mut hb_rngs = Vec::new();
        let mut hb_by_target = vec![Vec::new(); n];
        for (p, &(m, t)) in pairs.iter().enumerate() {
            let first = hb_streams.len();
            for (d, info) in dets.iter().enumerate() {
                let Some(interval) = info.heartbeat else {
                    continue;
                };
                let slot = (p * d_count + d) as u32;
                match hb_streams[first..]
                    .iter_mut()
                    .find(|s| s.interval == interval)
                {
                    Some(stream) => stream.slots.push(slot),
                    None => {
                        hb_by_target[t as usize].push(hb_streams.len() as u32);
                        let ids = [u64::from(m), u64::from(t), interval.as_nanos()];
                        hb_rngs.push(streams.stream(Purpose::Heartbeat, &ids));
                        hb_streams.push(HbStream {
                            pair: p as u32,
                            interval,
                            gen: 0,
                            slots: vec![slot],
                        });
                    }
                }
            }
        }
        let mut by_monitor = vec![Vec::new(); n];
        for (i, slot) in slots.iter().enumerate() {
            by_monitor[pairs[slot.pair as usize].0 as usize].push(i as u32);
        }
        let net = &scenario.network;
        let held = vec![Vec::new(); schedule.partitions.len()];
        Simulation {
            scenario,
            now: Nanos::ZERO,
            queue: EventQueue::new(),
            popped: 0,
            uncounted: 0,
            counts_world,
            nodes,
            service_rngs,
            layout,
            pairs,
            pairs_link,
            slots,
            pair_timers: vec![PairTimer::default(); pairs.len()],
            serving: None,
            detectors,
            rngs,
            timelines: (0..count).map(|_| DetectorTimeline::default()).collect(),
            changes: Vec::with_capacity(CHANGE_BATCH),
            hb_streams,
            hb_rngs,
            hb_by_target,
            by_monitor,
            dets,
            backpressure_at: (BACKPRESSURE_SHARE * scenario.network.send_buffer as f64).ceil()
                as usize,
            stream_dets,
            links,
            held,
            latency: Sampler::new(&net.latency),
            data_latency: Sampler::new(net.data_latency.as_ref().unwrap_or(&net.latency)),
            interval: Sampler::new(&scenario.workload.interval),
            service: Sampler::new(&scenario.workload.service_time),
            on: scenario.workload.on.as_ref().map(Sampler::new),
            off: scenario.workload.off.as_ref().map(Sampler::new),
            schedule,
            trace: trace.then(Vec::new),
            scores: None,
        }
    }

    #[inline(always)]
    fn push(&mut self, time: Nanos, event: Event) {
        if let Event::PairTimer { .. } = event {
            self.queue.push_last(time.as_nanos(), event);
        } else {
            self.queue.push(time.as_nanos(), event);
        }
    }

    fn log(
        &mut self,
        event: &'static str,
        node: u32,
        peer: Option<u32>,
        detector: Option<u16>,
        detail: impl FnOnce() -> String,
    ) {
        if let Some(trace) = &mut self.trace {
            trace.push(TraceRecord {
                time: self.now,
                event,
                node: Some(node),
                peer,
                detector,
                detail: detail(),
            });
        }
    }

    fn local(&self, node: u32) -> Nanos {
        self.nodes[node as usize].clock.local(self.now)
    }

    /// Slots are laid out pair-major: detector `d` of pair `pair`.
    fn slot_of(&self, pair: u32, d: usize) -> u32 {
        pair * self.dets.len() as u32 + d as u32
    }

    fn pair(&self, slot: u32) -> (u32, u32) {
        self.pairs[self.slots[slot as usize].pair as usize]
    }

    /// Runs to the end and returns what happened (and the trace, if asked).
    fn run(mut self) -> Part {
        self.start();
        let end = self.scenario.duration;
        while let Some((time, event)) = self.queue.pop() {
            if time > end.as_nanos() {
                break;
            }
            self.now = Nanos(time);
            // Trace marks are bookkeeping, not simulation, and faults happen
            // in every part of a split run but count once: their arms of
            // `dispatch` uncount them.
            self.popped += 1;
            self.dispatch(event);
        }
        self.now = end;
        self.finish()
    }

    fn start(&mut self) {
        for i in 0..self.schedule.actions.len() {
            let t = self.schedule.actions[i].0;
            self.push(t, Event::Fault { action: i as u32 });
        }
        if self.trace.is_some() {
            for (i, r) in self.schedule.records.iter().enumerate() {
                let (start, end) = (r.window.start, r.window.end);
                self.queue.push(
                    start.as_nanos(),
                    Event::Mark {
                        record: i as u32,
                        end: false,
                    },
                );
                if end < self.scenario.duration {
                    self.queue.push(
                        end.as_nanos(),
                        Event::Mark {
                            record: i as u32,
                            end: true,
                        },
                    );
                }
            }
        }
        for stream in 0..self.hb_streams.len() as u32 {
            self.start_heartbeats(stream);
        }
        for slot in 0..self.slots.len() as u32 {
            self.start_monitoring(slot);
        }
        for link in 0..self.links.len() as u32 {
            self.start_link(link);
        }
    }

    /// (Re)starts a heartbeat stream's sender, at a random phase.
    fn start_heartbeats(&mut self, stream: u32) {
        let st = &mut self.hb_streams[stream as usize];
        st.gen += 1;
        let (gen, interval) = (st.gen, st.interval);
        let rng = &mut self.hb_rngs[stream as usize];
        let phase = Nanos(rng.random_range(0..interval.as_nanos().max(1)));
        self.push(self.now + phase, Event::HeartbeatTick { stream, gen });
    }

    fn stream_pair(&self, stream: u32) -> (u32, u32) {
        self.pairs[self.hb_streams[stream as usize].pair as usize]
    }

    /// Counts a message for every detector a heartbeat stream serves.
    fn count_stream(&mut self, stream: u32, bytes: u64) {
        for i in 0..self.hb_streams[stream as usize].slots.len() {
            let slot = self.hb_streams[stream as usize].slots[i];
            self.count(slot, bytes);
        }
    }

    fn start_monitoring(&mut self, slot: u32) {
        let det = self.slots[slot as usize].det as usize;
        if self.dets[det].probes {
            let (m, _) = self.pair(slot);
            let local = self.local(m);
            let jitter: f64 = self.rngs[slot as usize].random();
            self.detectors[slot as usize].handle_start_probing(local, jitter);
        }
        self.after_input(slot);
    }

    fn start_link(&mut self, link: u32) {
        let from = self.links[link as usize].from;
        let l = &mut self.links[link as usize];
        l.emit_gen += 1;
        l.idle_gen += 1;
        l.last_sent = self.now;
        let (emit_gen, idle_gen) = (l.emit_gen, l.idle_gen);
        if self.layout.layer[from as usize] == 0 {
            let gap = self
                .interval
                .sample(&mut self.links[link as usize].workload_rng);
            self.push(
                self.now + gap,
                Event::SourceEmit {
                    link,
                    gen: emit_gen,
                },
            );
        }
        let idle = self.scenario.workload.idle_frame_interval;
        self.push(
            self.now + idle,
            Event::IdleCheck {
                link,
                gen: idle_gen,
            },
        );
    }

    /// Handles `event`. Each kind names the node that owns it (whose state
    /// decides whether it runs now, later or never) in the same match that
    /// runs it: one branch on the kind per event, not two.
    #[inline(always)]
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::HeartbeatTick { stream, gen } => {
                if self.admit(self.stream_pair(stream).1, event) {
                    self.heartbeat_tick(stream, gen);
                }
            }
            Event::PairTimer { pair, gen } => {
                if self.admit(self.pairs[pair as usize].0, event) {
                    self.pair_timer(pair, gen, false);
                }
            }
            Event::SlotTimeout { slot } => {
                if self.admit(self.pair(slot).0, event) {
                    self.slot_timeout(slot);
                }
            }
            Event::Arrive { msg } => {
                let to = self.receiver(msg);
                if self.admit(to, event) {
                    self.arrive(to, msg);
                }
            }
            Event::Fault { action } => {
                if !self.counts_world {
                    self.uncounted += 1;
                }
                self.fault(action);
            }
            Event::Mark { record, end } => {
                self.uncounted += 1;
                self.mark(record, end);
            }
            Event::SourceEmit { link, gen } => {
                if self.admit(self.links[link as usize].from, event) {
                    self.source_emit(link, gen);
                }
            }
            Event::DataArrive { link } => {
                if self.admit(self.links[link as usize].to, event) {
                    self.data_arrive(link);
                }
            }
            Event::ServiceDone { node, gen } => {
                if self.admit(node, event) {
                    self.service_done(node, gen);
                }
            }
            Event::IdleCheck { link, gen } => {
                if self.admit(self.links[link as usize].from, event) {
                    self.idle_check(link, gen);
                }
            }
        }
    }

    /// Whether node `n` handles its `event` now: at once when it is up and
    /// at full speed (nearly always; inlined), else see [`Self::admit_slow`].
    #[inline(always)]
    fn admit(&mut self, n: u32, event: Event) -> bool {
        let node = &self.nodes[n as usize];
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
    fn admit_slow(&mut self, n: u32, event: Event) -> bool {
        let node = &mut self.nodes[n as usize];
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
    fn lost_at_crashed(&mut self, node: u32, event: Event) {
        match event {
            Event::DataArrive { link } => {
                let l = &mut self.links[link as usize];
                if let Some(item) = l.in_flight.pop_front() {
                    if !matches!(item, Item::Control(_)) {
                        l.window_used = l.window_used.saturating_sub(1);
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

    // ---- liveness traffic -------------------------------------------------

    fn heartbeat_tick(&mut self, stream: u32, gen: u32) {
        let st = &self.hb_streams[stream as usize];
        if st.gen != gen {
            return;
        }
        let (interval, pair) = (st.interval, st.pair as usize);
        let (m, t) = self.pairs[pair];
        match (
            self.scenario.network.heartbeat_channel,
            self.pairs_link[pair],
        ) {
            (Channel::Data, Some(link)) => {
                self.count_stream(stream, LIVENESS_MESSAGE_BYTES);
                let cap = self.scenario.network.send_buffer as usize;
                if self.links[link as usize].buffer.len() < cap {
                    self.links[link as usize]
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
        let clock = self.nodes[t as usize].clock;
        let next = clock.true_at(clock.local(self.now) + interval, self.now + Nanos(1));
        self.push(next, Event::HeartbeatTick { stream, gen });
    }

    /// Where a datagram goes: a heartbeat and a probe reply to the monitor, a
    /// probe to the target.
    fn receiver(&self, msg: Msg) -> u32 {
        match msg {
            Msg::Heartbeat { stream } => self.stream_pair(stream).0,
            Msg::Probe { slot, .. } => self.pair(slot).1,
            Msg::ProbeReply { slot, .. } => self.pair(slot).0,
        }
    }

    /// The detector a message is for, if only one (heartbeats may serve several).
    fn msg_detector(&self, msg: Msg) -> Option<u16> {
        match msg {
            Msg::Heartbeat { .. } => None,
            Msg::Probe { slot, .. } | Msg::ProbeReply { slot, .. } => {
                Some(self.slots[slot as usize].det)
            }
        }
    }

    fn count(&mut self, slot: u32, bytes: u64) {
        let s = &mut self.slots[slot as usize];
        s.messages += 1;
        s.bytes += bytes;
    }

    /// Sends a control datagram.
    fn send(&mut self, from: u32, to: u32, msg: Msg) {
        match msg {
            Msg::Heartbeat { stream } => self.count_stream(stream, LIVENESS_MESSAGE_BYTES),
            Msg::Probe { slot, .. } | Msg::ProbeReply { slot, .. } => {
                self.count(slot, LIVENESS_MESSAGE_BYTES)
            }
        }
        let now = self.now;
        if let Some(p) = self
            .schedule
            .partitions
            .iter()
            .position(|p| p.cuts(from, to, now))
        {
            let det = self.msg_detector(msg);
            if self.schedule.partitions[p].hold {
                self.held[p].push((from, to, msg));
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

    fn transmit_datagram(&mut self, from: u32, to: u32, msg: Msg) {
        let now = self.now;
        let mut keep = 1.0 - self.scenario.network.loss;
        let mut extra = Nanos::ZERO;
        for lf in &self.schedule.link_faults {
            if lf.applies(from, to, now) {
                keep *= 1.0 - lf.loss_at(now);
                extra = extra + lf.extra_latency;
            }
        }
        let rng = match msg {
            Msg::Heartbeat { stream } => &mut self.hb_rngs[stream as usize],
            Msg::Probe { slot, .. } | Msg::ProbeReply { slot, .. } => &mut self.rngs[slot as usize],
        };
        if keep < 1.0 && rng.random::<f64>() >= keep {
            let det = self.msg_detector(msg);
            self.log("drop", from, Some(to), det, || format!("{msg:?}: loss"));
            return;
        }
        let latency = self.latency.sample(rng) + extra;
        debug_assert_eq!(self.receiver(msg), to);
        self.push(now + latency, Event::Arrive { msg });
    }

    /// A heartbeat of `stream` reaches its monitor, and every detector it serves.
    fn deliver_heartbeat(&mut self, stream: u32, local: Nanos) {
        for i in 0..self.hb_streams[stream as usize].slots.len() {
            let slot = self.hb_streams[stream as usize].slots[i];
            self.detectors[slot as usize].handle_heartbeat(local);
            self.after_input(slot);
        }
    }

    fn arrive(&mut self, to: u32, msg: Msg) {
        let local = self.local(to);
        match msg {
            Msg::Heartbeat { stream } => {
                let (_, t) = self.stream_pair(stream);
                self.log("deliver", to, Some(t), None, || "heartbeat".into());
                self.deliver_heartbeat(stream, local);
            }
            Msg::Probe { slot, id } => {
                let (m, _) = self.pair(slot);
                let det = self.slots[slot as usize].det;
                self.log("deliver", to, Some(m), Some(det), || format!("probe {id}"));
                self.send(to, m, Msg::ProbeReply { slot, id });
            }
            Msg::ProbeReply { slot, id } => {
                let (_, t) = self.pair(slot);
                let det = self.slots[slot as usize].det;
                self.log("deliver", to, Some(t), Some(det), || {
                    format!("probe reply {id}")
                });
                self.detectors[slot as usize].handle_probe_reply(local, ProbeId(id));
                self.after_input(slot);
            }
        }
    }

    /// After any input to a slot's detector: send its probes, record a verdict
    /// change, and keep its timer armed.
    fn after_input(&mut self, slot: u32) {
        let (det, pair) = {
            let s = &self.slots[slot as usize];
            (s.det, s.pair)
        };
        if self.dets[det as usize].probes {
            self.send_probes(slot);
        }
        self.record(slot);
        let Some(local_due) = self.detectors[slot as usize].poll_timeout() else {
            self.slots[slot as usize].deadline = Deadline::NEVER;
            return;
        };
        let m = self.pairs[pair as usize].0;
        let due = self.nodes[m as usize].clock.true_at(local_due, self.now);
        self.slots[slot as usize].deadline = Deadline::at(due);
        self.arm(slot, due);
    }

    /// Sends the probes a probing detector asks for.
    #[inline(never)]
    fn send_probes(&mut self, slot: u32) {
        let (m, t) = self.pair(slot);
        while let Some(tx) = self.detectors[slot as usize].poll_transmit() {
            let id = tx.probe.0;
            self.send(m, t, Msg::Probe { slot, id });
        }
    }

    /// Notes the slot's verdict after an input: a change goes to the log
    /// (rare, so kept out of line), and a replay's score sampler looks.
    #[inline(always)]
    fn record(&mut self, slot: u32) {
        if self.scores.is_some() {
            self.sample_scores(slot);
        }
        let verdict = self.detectors[slot as usize].verdict();
        if verdict != self.slots[slot as usize].verdict {
            self.verdict_changed(slot, verdict);
        }
    }

    #[inline(never)]
    fn sample_scores(&mut self, slot: u32) {
        if let Some(scores) = self.scores.as_deref_mut() {
            let (m, t) = self.pairs[self.slots[slot as usize].pair as usize];
            let clock = self.nodes[m as usize].clock;
            let det = self.slots[slot as usize].det;
            scores.observe((m, t), det, self.now, clock, &self.detectors[slot as usize]);
        }
    }

    #[inline(never)]
    fn verdict_changed(&mut self, slot: u32, verdict: Verdict) {
        let s = &mut self.slots[slot as usize];
        s.verdict = verdict;
        let det = s.det;
        self.changes.push((slot, self.now, verdict));
        if self.changes.len() == CHANGE_BATCH {
            self.file_changes();
        }
        let (m, t) = self.pair(slot);
        self.log("verdict", m, Some(t), Some(det), || verdict.as_str().into());
    }

    /// The pair's timer: every detector whose deadline has come gets its
    /// timeout, in detector order; the others keep theirs. While the monitor
    /// is paused, a timeout that came waits in its backlog instead, in time
    /// order among the inputs it missed, as if each detector had its own
    /// timer (so a detector's outcome never depends on the others').
    fn pair_timer(&mut self, pair: u32, gen: u32, paused: bool) {
        let timer = &mut self.pair_timers[pair as usize];
        if timer.gen != gen {
            return;
        }
        timer.at = None;
        self.serving = Some(pair);
        let m = self.pairs[pair as usize].0;
        let first = self.slot_of(pair, 0);
        // The earliest deadline not yet due (those that are due and re-arm
        // add theirs through `arm`); the markers are above every instant.
        // Nearly every firing is early (inputs since pushed the deadlines
        // back), so one branch-free pass over the cached deadlines first:
        // when none has come, that minimum is the next firing.
        let now = self.now.as_nanos();
        let d_count = self.dets.len();
        let range = first as usize..first as usize + d_count;
        let earliest = self.slots[range]
            .iter()
            .fold(Deadline::NEVER.0, |min, s| min.min(s.deadline.0));
        let mut later = Deadline::NEVER.0;
        if earliest > now {
            later = earliest;
        } else {
            for slot in first..first + d_count as u32 {
                let cached = self.slots[slot as usize].deadline.0;
                if cached > now {
                    // Not yet, held, or never: keep it.
                    later = later.min(cached);
                    continue;
                }
                let due = match self.due(slot) {
                    Some(due) if due > self.now => {
                        later = later.min(due.as_nanos());
                        continue;
                    }
                    Some(due) => due,
                    None => continue,
                };
                debug_assert!(due <= self.now);
                if paused {
                    self.slots[slot as usize].deadline = Deadline::HELD;
                    self.nodes[m as usize]
                        .backlog
                        .push(Event::SlotTimeout { slot });
                } else {
                    self.time_out(slot);
                }
            }
        }
        self.serving = None;
        let timer = &mut self.pair_timers[pair as usize];
        if let Some(l) = Deadline(later).time() {
            timer.at = Some(timer.at.map_or(l, |at| at.min(l)));
        }
        if let Some(at) = timer.at {
            timer.gen += 1;
            let gen = timer.gen;
            self.push(at, Event::PairTimer { pair, gen });
        }
    }

    /// A deadline that came during a pause, handled from the backlog.
    fn slot_timeout(&mut self, slot: u32) {
        if self.slots[slot as usize].deadline == Deadline::HELD {
            self.slots[slot as usize].deadline = Deadline::UNKNOWN;
        }
        match self.due(slot) {
            Some(due) if due <= self.now => self.time_out(slot),
            Some(due) => self.arm(slot, due),
            None => {}
        }
    }

    /// A slot's deadline in true time (`None`: none, or already held).
    /// `true_at` gave the first instant whose local time reaches the
    /// detector's, so it is due exactly when `now` has reached it (the clock
    /// has not changed since: a change re-arms).
    fn due(&mut self, slot: u32) -> Option<Nanos> {
        let cached = self.slots[slot as usize].deadline;
        if cached != Deadline::UNKNOWN {
            return cached.time();
        }
        let m = self.pair(slot).0;
        let due = self.detectors[slot as usize]
            .poll_timeout()
            .map(|local_due| self.nodes[m as usize].clock.true_at(local_due, self.now));
        self.slots[slot as usize].deadline = due.map_or(Deadline::NEVER, Deadline::at);
        due
    }

    fn time_out(&mut self, slot: u32) {
        let local = self.local(self.pair(slot).0);
        self.detectors[slot as usize].handle_timeout(local);
        self.after_input(slot);
    }

    /// Keeps the pair's timer event at or before `at` (lazily: an earlier
    /// pending one is left to fire and look again). Inlined: after nearly
    /// every input it only compares two instants, less than a call costs.
    #[inline(always)]
    fn arm(&mut self, slot: u32, at: Nanos) {
        let pair = self.slots[slot as usize].pair;
        let timer = &mut self.pair_timers[pair as usize];
        if timer.at.is_none_or(|pending| at < pending) {
            timer.at = Some(at);
            if self.serving != Some(pair) {
                timer.gen += 1;
                let gen = timer.gen;
                self.push(at, Event::PairTimer { pair, gen });
            }
        }
    }

    /// Forgets the pending timers of the pairs `node` monitors (their
    /// detectors are about to be asked again).
    fn disarm_monitor(&mut self, node: u32) {
        let d_count = self.dets.len() as u32;
        for &slot in &self.by_monitor[node as usize] {
            let timer = &mut self.pair_timers[(slot / d_count) as usize];
            timer.at = None;
            timer.gen += 1;
        }
    }

    /// Re-arms every timer of `node` (its clock changed).
    fn rearm_node(&mut self, node: u32) {
        self.disarm_monitor(node);
        for i in 0..self.by_monitor[node as usize].len() {
            let slot = self.by_monitor[node as usize][i];
            self.after_input(slot);
        }
        for i in 0..self.hb_by_target[node as usize].len() {
            let stream = self.hb_by_target[node as usize][i];
            self.start_heartbeats(stream);
        }
    }

    // ---- faults -----------------------------------------------------------

    fn fault(&mut self, action: u32) {
        let (_, action) = self.schedule.actions[action as usize];
        match action {
            Action::Crash { node } => self.crash(node),
            Action::Restart { node } => self.restart(node),
            Action::PauseStart { node, planned } => {
                if self.nodes[node as usize].status != Status::Up {
                    return;
                }
                if let Some(pause) = planned {
                    if self.scenario.workload.maintenance_frames {
                        let outputs = self.nodes[node as usize].downstream.clone();
                        for link in outputs {
                            self.send_control(link, Frame::Maintenance { pause });
                        }
                    }
                }
                self.nodes[node as usize].status = Status::Paused { since: self.now };
            }
            Action::PauseEnd { node } => self.resume(node),
            Action::Heal { partition } => {
                let held = std::mem::take(&mut self.held[partition as usize]);
                for (from, to, msg) in held {
                    self.transmit_datagram(from, to, msg);
                }
                for link in 0..self.links.len() as u32 {
                    self.try_transmit(link);
                }
            }
            Action::BackpressureStart { node, capacity } => {
                self.nodes[node as usize].capacity = capacity;
            }
            Action::BackpressureEnd { node } => self.nodes[node as usize].capacity = 1.0,
            Action::DegradeStart { node, slowdown } => {
                self.nodes[node as usize].slowdown = slowdown;
                self.set_health(node, DEGRADED_HEALTH_SCORE);
            }
            Action::DegradeEnd { node } => {
                self.nodes[node as usize].slowdown = Nanos::ZERO;
                self.set_health(node, 0);
            }
            Action::ClockStep { node, offset } => {
                let now = self.now;
                self.nodes[node as usize].clock.step(now, offset);
                self.rearm_node(node);
            }
            Action::ClockDrift { node, drift } => {
                let now = self.now;
                self.nodes[node as usize].clock.set_drift(now, drift);
                self.rearm_node(node);
            }
        }
    }

    /// Writes a fault's start or end into the replay trace.
    fn mark(&mut self, record: u32, end: bool) {
        let r = &self.schedule.records[record as usize];
        let expect = match r.expect {
            crate::scenario::Expect::Detect => "detect",
            crate::scenario::Expect::Tolerate => "tolerate",
        };
        let detail = format!("{} {} (expect {expect})", r.kind.name(), r.target);
        let node = r.node;
        if let Some(trace) = &mut self.trace {
            trace.push(TraceRecord {
                time: self.now,
                event: if end { "fault-end" } else { "fault" },
                node,
                peer: None,
                detector: None,
                detail,
            });
        }
    }

    fn crash(&mut self, node: u32) {
        if self.nodes[node as usize].status == Status::Crashed {
            return;
        }
        let n = &mut self.nodes[node as usize];
        n.status = Status::Crashed;
        n.backlog.clear();
        n.input.clear();
        n.busy = false;
        n.blocked_on = None;
        n.service_gen += 1;
        for link in &mut self.links {
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

    fn set_health(&mut self, node: u32, score: u32) {
        if self.nodes[node as usize].status == Status::Crashed {
            return;
        }
        let local = self.local(node);
        for i in 0..self.by_monitor[node as usize].len() {
            let slot = self.by_monitor[node as usize][i];
            self.detectors[slot as usize].handle_local_health(local, score);
            self.after_input(slot);
        }
    }

    fn resume(&mut self, node: u32) {
        let Status::Paused { since } = self.nodes[node as usize].status else {
            return;
        };
        self.nodes[node as usize].status = Status::Up;
        let stall = self.now - since;
        let local = self.local(node);
        // Detectors learn of the stall before the backlog reaches them.
        for i in 0..self.by_monitor[node as usize].len() {
            let slot = self.by_monitor[node as usize][i];
            self.detectors[slot as usize].handle_local_stall(local, stall);
            self.slots[slot as usize].deadline = Deadline::UNKNOWN;
            self.record(slot);
        }
        let backlog = std::mem::take(&mut self.nodes[node as usize].backlog);
        for event in backlog {
            self.push(self.now, event);
        }
        let outputs = self.nodes[node as usize].downstream.clone();
        for link in outputs {
            self.try_transmit(link);
        }
    }

    fn restart(&mut self, node: u32) {
        if self.nodes[node as usize].status != Status::Crashed {
            // A restart of a running process: it crashes and comes back at once.
            self.crash(node);
        }
        let n = &mut self.nodes[node as usize];
        n.status = Status::Up;
        n.busy_until = self.now;
        let local = self.local(node);
        self.disarm_monitor(node);
        for i in 0..self.by_monitor[node as usize].len() {
            // A new incarnation monitors from scratch.
            let slot = self.by_monitor[node as usize][i];
            let det = self.slots[slot as usize].det as usize;
            let config = self.scenario.detectors[det].config.clone();
            self.detectors[slot as usize] =
                Detector::new(config, local).expect("validated scenario");
            self.start_monitoring(slot);
        }
        for i in 0..self.hb_by_target[node as usize].len() {
            let stream = self.hb_by_target[node as usize][i];
            self.start_heartbeats(stream);
        }
        for link in 0..self.links.len() as u32 {
            if self.links[link as usize].from == node {
                self.start_link(link);
            }
        }
    }

    // ---- data plane -------------------------------------------------------

    fn source_emit(&mut self, link: u32, gen: u32) {
        if self.links[link as usize].emit_gen != gen {
            return;
        }
        let now = self.now;
        // Bursty sources: idle through an "off" period.
        if let (Some(on), Some(off)) = (&self.on, &self.off) {
            let l = &mut self.links[link as usize];
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
            .interval
            .sample(&mut self.links[link as usize].workload_rng);
        self.push(now + gap.max(Nanos(1)), Event::SourceEmit { link, gen });
    }

    /// Puts a frame in a link's send buffer; returns false if it is full. A
    /// buffer over [`BACKPRESSURE_SHARE`] full also sends a backpressure frame.
    fn offer(&mut self, link: u32, item: Item) -> bool {
        let cap = self.scenario.network.send_buffer as usize;
        let len = self.links[link as usize].buffer.len();
        if len >= self.backpressure_at {
            self.send_control(link, Frame::Backpressure);
        }
        if len >= cap {
            return false;
        }
        let l = &self.links[link as usize];
        if len == 0
            && l.window_used < self.scenario.network.receive_queue
            && self.nodes[l.from as usize].status == Status::Up
            && self.nodes[l.from as usize].blocked_on != Some(link)
            && !self.link_cut(link)
        {
            // Straight onto the wire: what `transmit` would do with the one
            // frame in the buffer, without the buffer's round trip. (The
            // checks of `link_open` are spelled out: in this order, with the
            // sender read once, the hottest send costs 0.6% fewer
            // instructions on the pipeline.)
            self.links[link as usize].window_used += 1;
            self.put_on_wire(link, item);
            return true;
        }
        self.links[link as usize].buffer.push_back(item);
        self.try_transmit(link);
        true
    }

    /// Whether frames can leave on `link` (sent by `from`) now: its sender
    /// is up and no partition cuts it (what every send on a data link
    /// checks first).
    #[inline(always)]
    fn link_open(&self, from: u32, link: u32) -> bool {
        self.nodes[from as usize].status == Status::Up && !self.link_cut(link)
    }

    #[inline]
    fn link_cut(&self, link: u32) -> bool {
        !self.schedule.partitions.is_empty() && self.link_cut_by_partition(link)
    }

    #[inline(never)]
    fn link_cut_by_partition(&self, link: u32) -> bool {
        let l = &self.links[link as usize];
        self.schedule
            .partitions
            .iter()
            .any(|p| p.cuts(l.from, l.to, self.now))
    }

    /// Moves frames from the send buffer onto the wire while the window
    /// allows. Most calls (a frame's window credit coming back, say) find
    /// nothing to send: that is checked inline.
    #[inline]
    fn try_transmit(&mut self, link: u32) {
        let l = &self.links[link as usize];
        if l.buffer.is_empty() || l.window_used >= self.scenario.network.receive_queue {
            return;
        }
        self.transmit(link);
    }

    #[inline(never)]
    fn transmit(&mut self, link: u32) {
        let from = self.links[link as usize].from;
        if !self.link_open(from, link) {
            return;
        }
        let window = self.scenario.network.receive_queue;
        let mut sent_any = false;
        loop {
            let l = &mut self.links[link as usize];
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
            if let Some(blocked) = self.nodes[from as usize].blocked_on {
                if blocked == link {
                    self.nodes[from as usize].blocked_on = None;
                    if self.offer(link, Item::Data) {
                        self.start_service(from);
                    } else {
                        self.nodes[from as usize].blocked_on = Some(link);
                    }
                }
            }
        }
    }

    fn put_on_wire(&mut self, link: u32, item: Item) {
        let now = self.now;
        let (from, to) = (self.links[link as usize].from, self.links[link as usize].to);
        let mut extra = Nanos::ZERO;
        for lf in &self.schedule.link_faults {
            if lf.applies(from, to, now) {
                extra = extra + lf.extra_latency;
            }
        }
        let l = &mut self.links[link as usize];
        let latency = self.data_latency.sample(&mut l.latency_rng) + extra;
        let arrival = (now + latency).max(l.last_arrival);
        l.last_arrival = arrival;
        l.last_sent = now;
        l.in_flight.push_back(item);
        self.push(arrival, Event::DataArrive { link });
    }

    /// A control frame: not buffered, not counted in the window, but ordered
    /// with the stream (a cut link drops it).
    fn send_control(&mut self, link: u32, frame: Frame) {
        let from = self.links[link as usize].from;
        if !self.link_open(from, link) {
            return;
        }
        if frame == Frame::StreamHeartbeat {
            let pair = self.links[link as usize].pair;
            for i in 0..self.stream_dets.len() {
                let slot = self.slot_of(pair, self.stream_dets[i] as usize);
                self.count(slot, STREAM_HEARTBEAT_BYTES);
            }
        }
        self.put_on_wire(link, Item::Control(frame));
    }

    fn data_arrive(&mut self, link: u32) {
        let Some(item) = self.links[link as usize].in_flight.pop_front() else {
            return;
        };
        let (to, from, pair) = {
            let l = &self.links[link as usize];
            (l.to, l.from, l.pair)
        };
        let local = self.local(to);
        match item {
            Item::Data => {
                self.log("deliver", to, Some(from), None, || "data".into());
                self.stream_frame(pair, local, Frame::Data);
                let n = &mut self.nodes[to as usize];
                if !n.idle() || !n.input.is_empty() {
                    n.input.push_back(link);
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
                self.links[link as usize].window_used -= 1;
                self.deliver_heartbeat(stream, local);
                self.try_transmit(link);
            }
            Item::Control(frame) => {
                self.log("deliver", to, Some(from), None, || format!("{frame:?}"));
                self.stream_frame(pair, local, frame);
            }
        }
    }

    /// A data-channel frame reaches the data-stream detectors of `pair`
    /// (inlined into its two callers: one per data frame).
    #[inline(always)]
    fn stream_frame(&mut self, pair: u32, local: Nanos, frame: Frame) {
        for i in 0..self.stream_dets.len() {
            let slot = self.slot_of(pair, self.stream_dets[i] as usize);
            self.detectors[slot as usize].handle_frame(local, frame);
            self.after_input(slot);
        }
    }

    fn start_service(&mut self, node: u32) {
        let n = &mut self.nodes[node as usize];
        if !n.idle() {
            return;
        }
        let Some(link) = n.input.pop_front() else {
            return;
        };
        self.serve(node, link);
    }

    /// An idle stage starts on a frame that came over `link`.
    #[inline(always)]
    fn serve(&mut self, node: u32, link: u32) {
        let n = &mut self.nodes[node as usize];
        n.busy = true;
        n.service_gen += 1;
        let gen = n.service_gen;
        let base = self.service.sample(&mut self.service_rngs[node as usize]);
        let took = if n.capacity == 1.0 {
            base
        } else {
            Nanos::from_nanos_f64(base.as_nanos_f64() / n.capacity)
        };
        self.push(self.now + took, Event::ServiceDone { node, gen });
        // The frame left the receive queue: window credit back to the sender.
        let l = &mut self.links[link as usize];
        l.window_used = l.window_used.saturating_sub(1);
        self.try_transmit(link);
    }

    fn service_done(&mut self, node: u32, gen: u32) {
        let n = &mut self.nodes[node as usize];
        if n.service_gen != gen || !n.busy {
            return;
        }
        n.busy = false;
        if !n.downstream.is_empty() {
            // Round robin over the outputs (kept below their count: no
            // division per frame).
            let link = n.downstream[n.next_output];
            n.next_output += 1;
            if n.next_output == n.downstream.len() {
                n.next_output = 0;
            }
            if !self.offer(link, Item::Data) {
                self.nodes[node as usize].blocked_on = Some(link);
                return;
            }
        }
        self.start_service(node);
    }

    fn idle_check(&mut self, link: u32, gen: u32) {
        if self.links[link as usize].idle_gen != gen {
            return;
        }
        let idle = self.scenario.workload.idle_frame_interval;
        let due = self.links[link as usize].last_sent + idle;
        if self.now >= due {
            self.send_control(link, Frame::StreamHeartbeat);
            // Sent nothing (cut link, or blocked)? Try again a period later.
            let l = &mut self.links[link as usize];
            l.last_sent = l.last_sent.max(self.now);
            let next = self.now + idle;
            self.push(next, Event::IdleCheck { link, gen });
        } else {
            self.push(due, Event::IdleCheck { link, gen });
        }
    }

    // ---- outcome ----------------------------------------------------------

    /// Moves the logged verdict changes to their slots' timelines.
    fn file_changes(&mut self) {
        for (slot, time, verdict) in self.changes.drain(..) {
            self.timelines[slot as usize].changes.push((time, verdict));
        }
    }

    fn finish(mut self) -> Part {
        self.file_changes();
        let d = self.scenario.detectors.len();
        let mut timelines = self
            .timelines
            .into_iter()
            .zip(&self.slots)
            .map(|(mut tl, s)| {
                tl.messages = s.messages;
                tl.bytes = s.bytes;
                tl
            });
        let pairs = self
            .pairs
            .iter()
            .map(|&(m, t)| PairOutcome {
                monitor: m,
                target: t,
                must_detect: self.schedule.must_detect(m, t),
                unjudged: self.schedule.unjudged(m),
                detectors: timelines.by_ref().take(d).collect(),
            })
            .collect();
        Part {
            pairs,
            events: self.popped - self.uncounted,
            trace: self.trace,
        }
    }
}

/// What one part of a run produced.
struct Part {
    pairs: Vec<PairOutcome>,
    events: u64,
    trace: Option<Vec<TraceRecord>>,
}

/// What every part of a run shares: its random streams, its topology and its
/// resolved faults.
struct World {
    streams: Streams,
    layout: Layout,
    schedule: Schedule,
}

impl World {
    fn build(scenario: &Scenario, seed: u64) -> World {
        let streams = Streams::new(seed);
        let layout = Layout::build(&scenario.topology, &streams);
        let schedule = Schedule::resolve(scenario, &layout.nodes, &streams);
        World {
            streams,
            layout,
            schedule,
        }
    }
}

/// Into how many parts an untraced run of `scenario` with `seed` is split
/// (see [`run`]).
pub fn part_count(scenario: &Scenario, seed: u64) -> Result<usize, ScenarioError> {
    scenario.validate()?;
    Ok(parts(scenario, &World::build(scenario, seed), false).len())
}

/// Detector state a part of a split run aims to keep (bytes): small enough
/// that a part's detectors, sample windows included, stay in a core's
/// private cache while its events run, instead of every event touching a
/// different corner of a large mesh's state.
pub const PART_STATE_BYTES: u64 = 256 << 10;

/// The ranges of monitored pairs a run can be split into, each simulated on
/// its own (in parallel when threads are free).
///
/// Monitored pairs interact only through a node's data plane (links, stage
/// queues) and a degraded node's processing queue, where one pair's events
/// delay another's. Without those, every other shared thing is fixed before
/// the run (faults, clocks, topology) or per pair (heartbeat and probe streams
/// with their own random streams), so each pair's events, and therefore its
/// timelines, are exactly those of the whole run (a test compares them); only
/// the interleaving of different pairs' events changes. A traced run is never
/// split, so its trace keeps the one global order.
fn parts(scenario: &Scenario, world: &World, trace: bool) -> Vec<Range<usize>> {
    let n = world.layout.pairs.len();
    let coupled = !world.layout.links.is_empty()
        || world
            .schedule
            .actions
            .iter()
            .any(|(_, a)| matches!(a, Action::DegradeStart { .. }));
    if trace || coupled || n == 0 {
        return std::iter::once(0..n).collect();
    }
    let per_pair: u64 = scenario
        .detectors
        .iter()
        .map(|d| d.config.memory_estimate() + SLOT_OVERHEAD_BYTES)
        .sum();
    let size = (PART_STATE_BYTES / per_pair.max(1)).max(1) as usize;
    (0..n)
        .step_by(size)
        .map(|start| start..(start + size).min(n))
        .collect()
}

/// Host-side bytes per detector slot (slot, random stream, timeline), for
/// sizing parts.
const SLOT_OVERHEAD_BYTES: u64 = 512;

/// What one run returns: its outcome, and its trace when asked for.
pub type RunResult = (RunOutcome, Option<Vec<TraceRecord>>);

/// Validates `scenario`, then runs it with `seed`; `trace` also returns the
/// full event trace.
///
/// An untraced run whose monitored pairs do not interact (see [`parts`]) is
/// split into parts of a few hundred KiB of detector state, run in parallel on
/// rayon's pool and joined in pair order: the outcome is the one a single
/// pass gives, but a large mesh then runs from the cache rather than from
/// memory (a 1,000-node mesh ran 3.6 times faster on one core).
pub fn run(scenario: &Scenario, seed: u64, trace: bool) -> Result<RunResult, ScenarioError> {
    scenario.validate()?;
    let world = World::build(scenario, seed);
    let ranges = parts(scenario, &world, trace);
    let simulate = |(i, range): (usize, &Range<usize>)| {
        Simulation::new(scenario, &world, range.clone(), trace, i == 0).run()
    };
    let results: Vec<Part> = if ranges.len() == 1 {
        ranges.iter().enumerate().map(simulate).collect()
    } else {
        ranges.par_iter().enumerate().map(simulate).collect()
    };
    Ok(assemble(scenario, seed, world, results))
}

/// The outcome of a run from its parts, joined in pair order.
fn assemble(scenario: &Scenario, seed: u64, world: World, parts: Vec<Part>) -> RunResult {
    let mut pairs = Vec::with_capacity(world.layout.pairs.len());
    let mut events = 0;
    let mut records = None;
    for part in parts {
        pairs.extend(part.pairs);
        events += part.events;
        records = records.or(part.trace);
    }
    let outcome = RunOutcome {
        scenario: scenario.name.clone(),
        seed,
        duration: scenario.duration,
        detectors: scenario.detectors.iter().map(|d| d.name.clone()).collect(),
        nodes: world.layout.nodes,
        faults: world.schedule.records,
        pairs,
        events,
    };
    (outcome, records)
}

/// [`run`] with the trace, also sampling the detector scores of the pair of
/// `sampler` (see [`crate::scores`]); the sampler's series end where the
/// run ends once [`ScoreSampler::finish`] is called with its duration.
pub fn run_with_scores(
    scenario: &Scenario,
    seed: u64,
    sampler: &mut ScoreSampler,
) -> Result<RunResult, ScenarioError> {
    scenario.validate()?;
    let world = World::build(scenario, seed);
    let all = 0..world.layout.pairs.len();
    let mut sim = Simulation::new(scenario, &world, all, true, true);
    sim.scores = Some(sampler);
    let part = sim.run();
    Ok(assemble(scenario, seed, world, vec![part]))
}
