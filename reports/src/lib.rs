//! fdlab's outputs. Every file is written atomically ([`atomic`]); for now the
//! query table of `fdlab trace` ([`trace_csv`]); QoS metrics, charts and the
//! HTML report join them.

pub mod atomic;
pub mod trace_csv;
