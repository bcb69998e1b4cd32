//! Key placement: which memcached server a client sends a key to, given
//! the servers it believes dead (SPEC §9). API SKELETON: bodies to be
//! written (branch placement-api only; never merged as is).

use crate::time::Nanos;

/// memcached's longest key, bytes.
pub const MAX_KEY_BYTES: usize = 250;

/// One server of a client's list: `name` is "host:port" (what ketama
/// hashes), `weight` at least 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    pub name: String,
    pub weight: u32,
}

/// The distributions of SPEC §9.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DistributionKind {
    SockIoPool,
    Namespace,
    ModuloFailover,
    ModuloEject,
    Ketama,
    Rendezvous,
}

impl DistributionKind {
    pub const ALL: [DistributionKind; 6] = [
        DistributionKind::SockIoPool,
        DistributionKind::Namespace,
        DistributionKind::ModuloFailover,
        DistributionKind::ModuloEject,
        DistributionKind::Ketama,
        DistributionKind::Rendezvous,
    ];
    /// "sockiopool", "namespace", "modulo-failover", "modulo-eject", "ketama", "rendezvous".
    pub fn name(self) -> &'static str {
        todo!()
    }
    pub fn from_name(name: &str) -> Option<DistributionKind> {
        todo!()
    }
}

/// SockIOPool's hash algorithms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SockHash {
    OldCompat,
    #[default]
    NewCompat,
    Native,
}

/// A namespace group: keys whose prefix (before the first '.') is `prefix`
/// go to the servers `servers` (indices into the server list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceGroup {
    pub prefix: String,
    pub servers: Vec<usize>,
}

/// How one client places keys.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementConfig {
    pub kind: DistributionKind,
    /// sockiopool and namespace.
    pub hash: SockHash,
    /// sockiopool and namespace: rehash a dead server's keys (else fail).
    pub failover: bool,
    /// namespace only; keys matching no group go to the whole list.
    pub groups: Vec<NamespaceGroup>,
    /// How long a dead mark holds at least (python-memcached's dead_retry,
    /// twemproxy's server_retry_timeout); zero: the mark follows the detector.
    pub dead_retry: Nanos,
}

impl PlacementConfig {
    /// The defaults of `kind` as the named client ships them.
    pub fn defaults(kind: DistributionKind) -> PlacementConfig {
        todo!()
    }
}

/// A placement error: names what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementError(pub String);

/// A client's placement over one server list (precomputed buckets / ring).
#[derive(Clone, Debug)]
pub struct Placement {}

impl Placement {
    pub fn new(servers: &[Server], config: &PlacementConfig) -> Result<Placement, PlacementError> {
        todo!()
    }
    pub fn servers(&self) -> &[Server] {
        todo!()
    }
    /// The key's hash (the costly part: computed once per key).
    pub fn key_hash(&self, key: &str) -> u64 {
        todo!()
    }
    /// The server of `key` (whose `key_hash` is `hash`) when `live[i]` is
    /// false for each server marked dead; None: the request fails.
    pub fn owner(&self, key: &str, hash: u64, live: &[bool]) -> Option<usize> {
        todo!()
    }
}

/// Checks a key: valid UTF-8, 1 to 250 bytes, no space or control
/// character (memcached's text protocol).
pub fn check_key(key: &[u8]) -> Result<&str, String> {
    todo!()
}

/// A client's view of which servers are dead (sans-IO): fed the
/// detector's verdicts; a dead mark holds at least `dead_retry`.
#[derive(Clone, Debug)]
pub struct DeadMarks {}

impl DeadMarks {
    pub fn new(servers: usize, dead_retry: Nanos) -> DeadMarks {
        todo!()
    }
    /// The detector on `server` says Failed (`failed`) or no longer.
    pub fn handle_verdict(&mut self, now: Nanos, server: usize, failed: bool) {
        todo!()
    }
    /// Due at the next time a mark may lift.
    pub fn handle_timeout(&mut self, now: Nanos) {
        todo!()
    }
    pub fn poll_timeout(&self) -> Option<Nanos> {
        todo!()
    }
    /// `live[i]`: server i is not marked dead.
    pub fn live(&self) -> &[bool] {
        todo!()
    }
}
