//! Hosts that drive fdlab's sans-IO detectors: the seeded discrete-event
//! simulator and the recorded-trace replayer ([`trace`]).

pub mod clock;
pub mod dist;
pub mod engine;
pub mod faults;
pub mod outcome;
pub mod queue;
pub mod rng;
pub mod scenario;
pub mod scores;
pub mod topology;
pub mod trace;
