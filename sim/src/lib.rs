//! Hosts that drive fdlab's sans-IO detectors: the seeded discrete-event
//! simulator ([`engine`], on a [`plan::RunPlan`]), the replayer of a recorded
//! event list through one detector ([`event_replay`], behind `fdlab trace`)
//! and the evaluation of a detector on recorded heartbeat arrivals
//! ([`heartbeat_eval`], behind `fdlab tune --trace`); and the schedules of
//! `fdlab swarm` ([`swarm`]: drawn per seed, then shrunk).
//!
//! Words: the *event log* is what a replay of a simulated run writes
//! (`trace.csv`, [`engine::LogRecord`]); a *recorded event list* is the CSV
//! input of `fdlab trace`; a *heartbeat recording* is the `time_ms` CSV input
//! of `fdlab tune --trace`. The commands and files keep their names.

pub mod baseline;
pub mod clock;
pub mod dist;
pub mod engine;
pub mod estimate;
pub mod event_replay;
pub mod faults;
pub mod heartbeat_eval;
pub mod lockrpc;
pub mod membership;
pub mod outcome;
pub mod placement;
pub mod plan;
pub mod printable;
pub mod queue;
pub mod rng;
pub mod scenario;
pub mod scores;
pub mod small_queue;
pub mod stats;
pub mod swarm;
pub mod topology;
pub mod valid;
