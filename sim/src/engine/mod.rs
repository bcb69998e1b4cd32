//! The discrete-event engine: one run of one scenario with one seed.
//!
//! Virtual time is integer nanoseconds of true time; one event queue ordered
//! by `(time, insertion sequence)`, except that timers come after every other
//! event of their instant; no wall clock anywhere. Every detector is driven
//! only through its sans-IO interface: inputs with the monitor's local time,
//! and a timeout at the instant `poll_timeout` names.
//!
//! Shadow mode: every detector of the scenario has its own instance on every
//! monitored pair and its liveness traffic is sent by the simulated nodes and
//! counted for it, while faults, the data plane and the ground truth are
//! shared. Detectors of a pair that ask for heartbeats at the same interval
//! receive the same heartbeat stream (each counts it as its own overhead): they
//! are then compared on exactly the same arrivals, and the simulator sends one
//! message where a deployment of either would send one. Every random stream
//! comes from the run's [`crate::plan::RunPlan`], so adding a detector changes no other draw.
//!
//! One file per simulated thing (as TigerBeetle's `src/testing/`):
//!
//! | file | what it models |
//! |---|---|
//! | `mod.rs` | the run loop and the dispatch of each event to its owner |
//! | `nodes.rs` | processes: up, paused, degraded, crashed, restarted |
//! | `monitoring.rs` | the detectors on each monitored pair, their verdicts |
//! | `timers.rs` | each pair's one timer over its detectors' deadlines |
//! | `liveness.rs` | heartbeat and probe datagrams on the control network |
//! | `data_plane.rs` | data links: send buffers, windows, backpressure |
//! | `stages.rs` | a dataflow stage's input queue and service |
//! | `faults.rs` | the fault schedule acting on all of these |
//! | `build.rs` | a run's state from its plan |
//! | `outcome.rs` | timelines and counts at the end of a run |
//! | `split.rs` | the public entry points; parts of a run that can run apart |
//! | `fast.rs` | the run loop of a pair simulated on its own, with its fast path |
//! | `observer.rs` | the replay's event log and score sampling |
//! | `calls.rs` | a run's detector calls, recorded to be made again alone |
//! | `ids.rs` | typed indices of all of the above |

mod build;
mod calls;
mod data_plane;
mod fast;
mod faults;
mod ids;
mod liveness;
mod monitoring;
mod nodes;
mod observer;
mod outcome;
mod split;
mod stages;
mod timers;

use fdlab_protocol::Nanos;

use crate::faults::{Action, Schedule};
use crate::queue::Queue;
use crate::topology::Layout;
use crate::valid::ValidScenario;

use data_plane::DataPlane;
use ids::{IdVec, LinkId, NodeId, PairId, SlotId, StreamId};
use liveness::{Liveness, Msg};
use monitoring::Monitors;
use nodes::Node;
use observer::Observer;
use timers::Timers;

pub use calls::{Call, CallLog, ReplayResult};
pub use data_plane::{BACKPRESSURE_SHARE, STREAM_HEARTBEAT_BYTES};
pub use liveness::LIVENESS_MESSAGE_BYTES;
pub use nodes::DEGRADED_HEALTH_SCORE;
pub use observer::LogRecord;
pub use split::{
    part_count, run, run_recording_calls, run_with_scores, RunResult, MAX_PART_PAIRS, MIN_PARTS,
};

/// What the queue holds: each kind names the thing that owns it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Event {
    HeartbeatTick {
        stream: StreamId,
        gen: u32,
    },
    /// The earliest deadline among a monitored pair's detectors; it comes
    /// after every other event of its instant (a deadline is checked once
    /// the instant's inputs are in, whichever detectors share the pair).
    PairTimer {
        pair: PairId,
        gen: u32,
    },
    /// One detector's deadline that came while its monitor was paused, in
    /// the monitor's backlog among the inputs that came then.
    SlotTimeout {
        slot: SlotId,
    },
    /// A datagram reaches its receiver (which [`Simulation::receiver`]
    /// names: keeping the event at 16 bytes keeps the queue's entries at 32).
    Arrive {
        msg: Msg,
    },
    Fault {
        action: u32,
    },
    /// Start or end of a fault, for the replay's event log.
    Mark {
        record: u32,
        end: bool,
    },
    SourceEmit {
        link: LinkId,
        gen: u32,
    },
    DataArrive {
        link: LinkId,
    },
    ServiceDone {
        node: NodeId,
        gen: u32,
    },
    IdleCheck {
        link: LinkId,
        gen: u32,
    },
}

/// One run of a scenario, or one part of it (see [`split`]), on the event
/// queue `Q`.
struct Simulation<'a, O: Observer, Q: Queue<Event>> {
    scenario: &'a ValidScenario,
    layout: &'a Layout,
    schedule: &'a Schedule,
    /// The schedule's actions on this part's nodes (numbered in the part).
    actions: Vec<(Nanos, Action)>,
    /// The layout's number of each node of the part.
    globals: IdVec<NodeId, u32>,
    now: Nanos,
    queue: Q,
    /// Events handled, and those of them that are not counted as simulated
    /// events (see [`Simulation::run`]); counted apart so that the common
    /// event pays one increment.
    popped: u64,
    uncounted: u64,
    nodes: IdVec<NodeId, Node>,
    mon: Monitors<'a>,
    timers: Timers,
    hb: Liveness,
    data: DataPlane,
    observer: O,
}

impl<O: Observer, Q: Queue<Event>> Simulation<'_, O, Q> {
    /// Runs to the end and returns what happened.
    fn run(mut self) -> outcome::Part {
        self.start();
        let end = self.scenario.duration;
        while let Some((time, event)) = self.queue.pop() {
            if time > end.as_nanos() {
                break;
            }
            debug_assert!(time >= self.now.as_nanos(), "an event in the past");
            self.now = Nanos(time);
            // Event-log marks are bookkeeping, not simulation, and faults
            // happen in every part of a split run but count once, for the
            // whole run (`outcome::assemble`): their arms of `dispatch`
            // uncount them.
            self.popped += 1;
            self.dispatch(event);
        }
        self.now = end;
        self.finish()
    }

    fn start(&mut self) {
        if O::CALLS {
            for slot in self.mon.slots.ids() {
                self.note_started(slot);
            }
        }
        for i in 0..self.actions.len() {
            let t = self.actions[i].0;
            self.push(t, Event::Fault { action: i as u32 });
        }
        if O::LOGS {
            for (i, r) in self.schedule.records.iter().enumerate() {
                let (start, end) = (r.window.start, r.window.end);
                let record = i as u32;
                let mark = Event::Mark { record, end: false };
                self.queue.push(start.as_nanos(), mark);
                if end < self.scenario.duration {
                    let mark = Event::Mark { record, end: true };
                    self.queue.push(end.as_nanos(), mark);
                }
            }
        }
        for stream in self.hb.streams.ids() {
            self.start_heartbeats(stream);
        }
        for slot in self.mon.slots.ids() {
            self.start_monitoring(slot);
        }
        for link in self.data.links.ids() {
            self.start_link(link);
        }
    }

    /// Queues `event` at `time` (never in the past).
    #[inline(always)]
    fn push(&mut self, time: Nanos, event: Event) {
        debug_assert!(time >= self.now, "{event:?} at {time} before {}", self.now);
        if let Event::PairTimer { .. } = event {
            self.queue.push_last(time.as_nanos(), event);
        } else {
            self.queue.push(time.as_nanos(), event);
        }
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
                if self.admit(self.mon.pair_nodes(pair).0, event) {
                    self.pair_timer(pair, gen, false);
                }
            }
            Event::SlotTimeout { slot } => {
                if self.admit(self.mon.slot_nodes(slot).0, event) {
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
                self.uncounted += 1;
                self.fault(action);
            }
            Event::Mark { record, end } => {
                self.uncounted += 1;
                self.mark(record, end);
            }
            Event::SourceEmit { link, gen } => {
                if self.admit(self.data.links[link].from, event) {
                    self.source_emit(link, gen);
                }
            }
            Event::DataArrive { link } => {
                if self.admit(self.data.links[link].to, event) {
                    self.data_arrive(link);
                }
            }
            Event::ServiceDone { node, gen } => {
                if self.admit(node, event) {
                    self.service_done(node, gen);
                }
            }
            Event::IdleCheck { link, gen } => {
                if self.admit(self.data.links[link].from, event) {
                    self.idle_check(link, gen);
                }
            }
        }
    }

    /// Writes one line of the replay's event log (a plain run builds none).
    #[inline(always)]
    fn log(
        &mut self,
        event: &'static str,
        node: NodeId,
        peer: Option<NodeId>,
        detector: Option<u16>,
        detail: impl FnOnce() -> String,
    ) {
        if O::LOGS {
            let record = observer::LogRecord {
                time: self.now,
                event,
                node: Some(self.globals[node]),
                peer: peer.map(|p| self.globals[p]),
                detector,
                detail: detail(),
            };
            self.observer.log(record);
        }
    }
}
