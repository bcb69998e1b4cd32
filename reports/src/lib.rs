//! fdlab's outputs. Every file is written atomically ([`atomic`]): the query
//! table of `fdlab trace` ([`trace_csv`]); the QoS metrics of Chen, Toueg &
//! Aguilera computed from run outcomes ([`metrics`]) and their CSV files and
//! terminal table ([`tables`]); the replay trace and its digest ([`replay`]);
//! charts and the HTML report join them.

pub mod atomic;
pub mod gate;
pub mod metrics;
pub mod replay;
pub mod tables;
pub mod trace_csv;
