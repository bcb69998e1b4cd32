//! Hosts that drive fdlab's sans-IO detectors: the seeded discrete-event
//! simulator and the recorded-trace replayer ([`trace`]).

pub mod outcome;
pub mod scenario;
pub mod trace;
