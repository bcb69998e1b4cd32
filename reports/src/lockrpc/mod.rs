//! What each lock-RPC channel policy costs (SPEC §10, "slow is not
//! dead"): the reports of lock-RPC scenarios ([`fdlab_sim::lockrpc`]).
//!
//! Per policy, pooled over seeds ([`LockrpcSummary`]): channel evictions,
//! re-dials, stream resets and connection tear-downs, each split by
//! whether the peer was dead (its server crashed) or live at the time;
//! timeouts per client per second; lock latency p50/p99 of successful
//! acquisitions; failed acquisitions; orphaned-lock time; unlock retries;
//! the time to stop using a dead peer; evictions of live peers per hour.
//!
//! Outputs: `lockrpc.csv` and the console table ([`tables`]), the verdict
//! ([`verdict`]), a chart of the time to stop using a dead peer against
//! evictions of live peers per hour ([`chart`]), and the "Lock RPCs"
//! sections of `index.html` and `report.md` ([`section`]).

pub mod chart;
pub mod metrics;
pub mod section;
pub mod tables;
pub mod verdict;

pub use metrics::{lockrpc_metrics, LockrpcMetrics, LockrpcSummary};
pub use tables::{lockrpc_terminal_table, write_lockrpc_table};
pub use verdict::lockrpc_verdict;

/// The lock-RPC table's file name.
pub const LOCKRPC_CSV: &str = "lockrpc.csv";
