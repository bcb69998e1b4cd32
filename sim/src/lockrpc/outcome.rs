//! What one lock-RPC run (one policy, one seed) produced: counts and
//! spans; reports compute rates from these alone.

use fdlab_protocol::lockrpc::{ChannelCounters, PolicyKind};
use fdlab_protocol::Nanos;

use crate::outcome::FaultRecord;

/// What a peer was, from one client, when something happened on its
/// channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerClass {
    /// Up, not paused, not degraded, no slow link between them.
    Healthy,
    /// Up but paused, degraded, or behind a slow link from this client.
    Slow,
    /// Its server was crashed.
    Dead,
}

/// Channel events split by the peer's class when they happened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerSplit {
    pub healthy: u64,
    pub slow: u64,
    pub dead: u64,
}

impl PeerSplit {
    pub fn add(&mut self, class: PeerClass) {
        match class {
            PeerClass::Healthy => self.healthy += 1,
            PeerClass::Slow => self.slow += 1,
            PeerClass::Dead => self.dead += 1,
        }
    }
    /// Up peers: healthy or slow.
    pub fn live(&self) -> u64 {
        self.healthy + self.slow
    }
    pub fn total(&self) -> u64 {
        self.healthy + self.slow + self.dead
    }
    pub fn merge(&mut self, other: &PeerSplit) {
        self.healthy += other.healthy;
        self.slow += other.slow;
        self.dead += other.dead;
    }
}

/// How fast the clients stopped using one crashed server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadPeerStop {
    pub server: u32,
    /// The crash window (to the restart, or the end of the run).
    pub start: Nanos,
    pub end: Nanos,
    /// From the crash to the last RPC any client sent the server on a
    /// connection, breaker probes aside (zero when none was sent). A
    /// refused dial carries no RPC.
    pub rpc_stop_after: Nanos,
    /// Whether RPCs stopped: none but probes in the window's last
    /// [`super::STOPPED_MARGIN`].
    pub rpcs_stopped: bool,
    /// From the crash to the last time a request used the server: an RPC,
    /// or a dial made for a request (breaker probes and background
    /// re-dials aside).
    pub stop_after: Nanos,
    /// Whether use stopped, by the same margin.
    pub stopped: bool,
    /// RPCs sent to it in the window (probes included).
    pub rpcs: u64,
    pub probes: u64,
    /// Dials made for a request, and background re-dials (MinIO grid).
    pub dials: u64,
    pub background_dials: u64,
}

/// One policy over one run.
#[derive(Clone, Debug, PartialEq)]
pub struct LockOutcome {
    pub scenario: String,
    pub seed: u64,
    pub policy: PolicyKind,
    pub duration: Nanos,
    pub servers: u32,
    pub clients: u32,
    /// Simulated events.
    pub events: u64,
    /// Every channel's counters, summed (RustFS's six metrics and more).
    pub counters: ChannelCounters,
    pub evictions: PeerSplit,
    /// Dial attempts after the first connection: for a request, or in the
    /// background (MinIO grid).
    pub redials: PeerSplit,
    /// `RST_STREAM`s sent (a cancelled request that had left).
    pub resets: PeerSplit,
    /// Cancelled requests that never left (they waited for a dial): no
    /// reset is sent for them.
    pub unsent_cancels: u64,
    pub teardowns: PeerSplit,
    pub timeouts: PeerSplit,
    pub acquisitions: u64,
    pub acquired: u64,
    /// dsync: acquisition attempts that failed and were tried again.
    pub retried_attempts: u64,
    pub failed_acquisitions: u64,
    /// Lock latency of each successful acquisition, microseconds.
    pub latencies_us: Vec<u32>,
    /// Server-side lock time while no client wanted the lock, summed.
    pub orphaned: Nanos,
    /// Unlock attempts after a first failed one, and unlocks given up.
    pub unlock_retries: u64,
    pub unlock_give_ups: u64,
    /// Locks a server's lease reclaimed.
    pub lease_expiries: u64,
    /// dsync: held locks lost by a failed refresh round.
    pub locks_lost: u64,
    /// Time some server was not crashed, summed over servers.
    pub live_server_time: Nanos,
    pub dead_peers: Vec<DeadPeerStop>,
    /// The first eviction of a peer under no fault: when, by which node,
    /// of which server.
    pub first_healthy_eviction: Option<(Nanos, u32, u32)>,
    /// The run's faults as they were resolved for its seed.
    pub faults: Vec<FaultRecord>,
}
