//! An async host for fdlab's sans-IO detectors.
//!
//! [`node::Node`] runs the detectors of `fdlab-protocol`, unchanged, in a loop
//! written against two small traits ([`Transport`], [`Clock`]). Implementations:
//!
//! - `madsim_io` (only under `--cfg madsim`, i.e. `cargo simtest`): madsim
//!   0.2.34's simulated `net::Endpoint` and virtual time. The cross-check tests
//!   in `tests/madsim_crosscheck.rs` run the same faults in madsim and in
//!   fdlab's own simulator and compare the detection times and mistakes.
//! - `tokio_io` (normal builds): tokio's UDP sockets and clock, for the
//!   one process per node of `fdlab live` (`src/live.rs`).
//!
//! [`faulty::FaultyTransport`] wraps any transport with a sans-IO fault filter
//! (partitions, loss, slow links on the datagrams a node sends), which is how
//! `fdlab live` injects network faults in user space.

pub mod faulty;
pub mod node;
pub mod wire;

#[cfg(madsim)]
pub mod madsim_io;

#[cfg(not(madsim))]
pub mod tokio_io;

pub use node::{Clock, Node, Sent, Transport, Watch};
