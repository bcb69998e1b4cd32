//! Hosts that drive fdlab's sans-IO detectors: the seeded discrete-event
//! simulator, the recorded-trace replayer ([`trace`]) and the evaluation of a
//! detector on a recorded heartbeat trace ([`trace_eval`]).

pub mod clock;
pub mod dist;
pub mod engine;
pub mod faults;
pub mod outcome;
pub mod plan;
pub mod queue;
pub mod rng;
pub mod scenario;
pub mod scores;
pub mod stats;
pub mod topology;
pub mod trace;
pub mod trace_eval;
pub mod valid;
