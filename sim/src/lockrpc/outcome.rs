//! What one lock-RPC run (one policy, one seed) produced: counts and
//! spans; reports compute rates from these alone.

use fdlab_protocol::lockrpc::{ChannelCounters, PolicyKind};
use fdlab_protocol::Nanos;

/// Channel events split by the peer's state when they happened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerSplit {
    /// The peer's server was crashed (a dead peer).
    pub dead: u64,
    /// The peer's server was up (healthy, slow, paused or behind a slow link).
    pub live: u64,
}

impl PeerSplit {
    pub fn add(&mut self, dead: bool) {
        if dead {
            self.dead += 1;
        } else {
            self.live += 1;
        }
    }
    pub fn total(&self) -> u64 {
        self.dead + self.live
    }
}

/// How fast the clients stopped sending to one crashed server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadPeerStop {
    pub server: u32,
    /// The crash window (to the restart, or the end of the run).
    pub start: Nanos,
    pub end: Nanos,
    /// From the crash to the last RPC any client sent the server in the
    /// window, breaker probes aside (zero when none was sent).
    pub stop_after: Nanos,
    /// Whether traffic stopped: no RPC but probes in the window's last
    /// [`super::STOPPED_MARGIN`].
    pub stopped: bool,
    /// RPCs sent to it in the window (probes included) and dials.
    pub rpcs: u64,
    pub probes: u64,
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
    pub redials: PeerSplit,
    pub resets: PeerSplit,
    pub teardowns: PeerSplit,
    pub timeouts: PeerSplit,
    pub acquisitions: u64,
    pub acquired: u64,
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
}
