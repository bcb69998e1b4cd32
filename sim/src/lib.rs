//! Hosts that drive fdlab's sans-IO detectors. For now the recorded-trace
//! replayer ([`trace`]); the seeded discrete-event simulator joins it.

pub mod trace;
