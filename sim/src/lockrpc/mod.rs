//! Lock-RPC channel policies under slow peers, dead peers and storms (SPEC
//! §10, "slow is not dead"): clients take quorum locks on lock servers,
//! each through one `fdlab_protocol::lockrpc::PeerChannel` per server, and
//! each policy is a separate run on the same seed and faults.
//!
//! | file | what it holds |
//! |---|---|
//! | `setup.rs` | the `[lockrpc]` table resolved |
//! | `server.rs` | a lock server: FIFO queue, workers, locks, leases |
//! | `world.rs` | the event loop, the servers' queues, service and leases |
//! | `h2.rs` | a server's HTTP/2 layer: accepting streams, resets, GOAWAY |
//! | `faults.rs` | faults on the servers, dead-peer windows |
//! | `network.rs` | messages over TCP: latency, loss, partitions, SYNs |
//! | `node.rs` | a node's process: one channel per server, shared by its clients |
//! | `client.rs` | acquisitions, holds, unlocks, dsync refresh |
//! | `release.rs` | late releases and their retries |
//! | `dial.rs` | dials: a request's handshake, grid's background re-dials |
//! | `ids.rs` | RPCs and acquisitions by id |
//! | `outcome.rs` | what a run produced |
//!
//! Model (see docs/lockrpc.md): every node of the mesh runs one lock
//! server and `clients_per_node` clients; a client starts acquisitions as
//! a Poisson process (its `rpcs_per_second` divided by the servers), sends
//! a Lock RPC to every server and holds the lock once a write quorum
//! granted; it gives up as soon as more than servers − quorum refused,
//! timed out or failed, and releases what it was granted. Faults hit the
//! servers only (a client's own process never fails): a crash kills the
//! server's process (its connections are reset, new ones refused, its
//! queue and locks lost), a pause freezes it, a degrade adds its
//! `slowdown` to every RPC's service, a slow link adds latency.
//! A dial to a crashed server is refused one round trip after it
//! started, and the request it was for is never sent: a refused dial is
//! a dial, not an RPC. Deviations: a timed-out unlock's late reply is not
//! used; events at equal instants run in push order.

mod client;
mod dial;
mod faults;
mod h2;
mod ids;
mod network;
mod node;
pub mod outcome;
mod release;
mod server;
pub mod setup;
mod world;

#[cfg(test)]
mod tests;

use fdlab_protocol::Nanos;
use rayon::prelude::*;

pub use outcome::{DeadPeerStop, LockOutcome, PeerClass, PeerSplit};
pub use setup::Setup;

use crate::scenario::Scenario;

/// A dead peer counts as no longer sent RPCs (or used) when none but
/// breaker probes (and background re-dials) went to it in the last
/// this-long of its crash window.
pub const STOPPED_MARGIN: Nanos = Nanos::from_secs(1);

/// Runs policy `policy` (an index into `setup.policies`) on `seed`.
pub fn run(scenario: &Scenario, setup: &Setup, seed: u64, policy: usize) -> LockOutcome {
    world::World::new(scenario, setup, seed, policy).run()
}

/// Runs every policy on `seed`, in report order.
pub fn run_all(scenario: &Scenario, setup: &Setup, seed: u64) -> Vec<LockOutcome> {
    (0..setup.policies.len())
        .into_par_iter()
        .map(|p| run(scenario, setup, seed, p))
        .collect()
}
