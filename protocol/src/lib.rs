//! fdlab's failure detectors as sans-IO state machines.
//!
//! Nothing in this crate reads a clock, does IO, sleeps, spawns or draws random
//! numbers: time and any jitter are inputs. Every detector implements
//! [`FailureDetector`] (see [`detector`] for the driving contract) and is built
//! from a [`DetectorConfig`] through [`Detector::new`], or from one validated
//! once ([`ValidConfig`]) through [`Detector::start`].
//!
//! | kind | module | source of the algorithm |
//! |---|---|---|
//! | `fixed-timeout` | [`fixed`] | classic heartbeat deadline |
//! | `phi-accrual` | [`phi`] | Hayashibara et al. 2004; Akka; Cassandra |
//! | `adaptive-probe` | [`probe`] | Orleans' `SiloHealthMonitor` |
//! | `dataflow-decay` | [`decay`] | health score carried by the data stream |
//! | `two-stage` | [`two_stage`] | fast suspicion, slow confirmation |
//!
//! [`lockrpc`] holds the lock-RPC channel policies of SPEC §10 (RustFS, MinIO dsync).

pub mod config;
mod crossing;
pub mod decay;
pub mod detector;
pub mod fixed;
pub mod lockrpc;
pub mod membership;
pub mod phi;
pub mod placement;
pub mod probe;
pub mod time;
pub mod two_stage;
pub mod verdict;
pub mod window;

pub use config::{ConfigError, DetectorConfig, ValidConfig, KINDS};
pub use detector::{Detector, FailureDetector, Frame, ProbeId, ProbeOutcome, Transmit};
pub use time::Nanos;
pub use verdict::Verdict;
