//! The `[placement]` table: memcached-style clients that place keys on
//! servers and react to their own detectors' verdicts (SPEC §9).
//!
//! A placement scenario is a mesh whose first `servers` nodes are the
//! servers and whose other nodes are the clients: every client runs every
//! detector of the scenario on every server (and nothing else is
//! monitored), so the detectors' own report is that of the clients. Each
//! distribution then places the same request stream through each
//! detector's verdicts (`fdlab_sim::placement`).

use fdlab_protocol::placement::{DistributionKind, SockHash, TwemproxyHash};
use serde::{Deserialize, Serialize};

/// Keys of the workload, by default.
pub const DEFAULT_KEYS: u32 = 100_000;
/// Most keys of a workload: every client holds an owner per key and
/// distribution.
pub const MAX_KEYS: u32 = 10_000_000;
/// Most servers: the servers holding a key are a 64-bit set.
pub const MAX_SERVERS: u32 = 64;
/// Requests per second of each client, by default.
pub const DEFAULT_REQUESTS_PER_SECOND: f64 = 100.0;
/// The Zipf exponent of key popularity, by default (YCSB's 0.99).
pub const DEFAULT_ZIPF: f64 = 0.99;
/// Namespace groups, by default: keys `ns0.item.<i>`, `ns1.item.<i>`, and
/// the servers split between the two in list order.
pub const DEFAULT_NAMESPACES: u32 = 2;
/// The port every server listens on (what ketama hashes: `n3:11211-0`...).
pub const SERVER_PORT: u16 = 11211;

/// The `[placement]` table.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlacementSetup {
    /// Nodes `n0`..`n{servers-1}` are servers; the rest are clients.
    pub servers: u32,
    #[serde(default = "default_keys")]
    pub keys: u32,
    /// Key `i` (from 1, most popular first) is requested with probability
    /// proportional to `1 / i^zipf`.
    #[serde(default = "default_zipf")]
    pub zipf: f64,
    /// Each client's requests per second (a Poisson process).
    #[serde(default = "default_rate")]
    pub requests_per_second: f64,
    /// Default: all six.
    #[serde(default)]
    pub distributions: Option<Vec<String>>,
    /// Per server, in list order (default 1 each).
    #[serde(default)]
    pub weights: Option<Vec<u32>>,
    /// sockiopool and namespace: `old-compat`, `new-compat` or `native`.
    #[serde(default)]
    pub hash: Option<String>,
    /// modulo-eject and twemproxy-ketama: the pool's `hash:` in
    /// twemproxy's names, `fnv1a_64` (twemproxy's default) or `md5`.
    #[serde(default)]
    pub twemproxy_hash: Option<String>,
    /// sockiopool and namespace: rehash a dead server's keys (else the
    /// request fails).
    #[serde(default = "default_failover")]
    pub failover: bool,
    /// Namespace groups (see [`DEFAULT_NAMESPACES`]).
    #[serde(default = "default_namespaces")]
    pub namespaces: u32,
    /// Clients whose server list is in another order (they split keys
    /// with the others).
    #[serde(default)]
    pub orders: Vec<ClientOrder>,
}

/// `[[placement.orders]]`: these clients list the servers in this order.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClientOrder {
    pub clients: Vec<String>,
    pub servers: Vec<String>,
}

fn default_keys() -> u32 {
    DEFAULT_KEYS
}
fn default_zipf() -> f64 {
    DEFAULT_ZIPF
}
fn default_rate() -> f64 {
    DEFAULT_REQUESTS_PER_SECOND
}
fn default_failover() -> bool {
    true
}
fn default_namespaces() -> u32 {
    DEFAULT_NAMESPACES
}

impl PlacementSetup {
    /// The distributions, in report order (valid scenarios only).
    pub fn kinds(&self) -> Vec<DistributionKind> {
        match &self.distributions {
            None => DistributionKind::SCENARIO_DEFAULT.to_vec(),
            Some(names) => names
                .iter()
                .filter_map(|n| DistributionKind::from_name(n))
                .collect(),
        }
    }

    /// The sockiopool hash (valid scenarios only).
    pub fn sock_hash(&self) -> SockHash {
        match self.hash.as_deref() {
            Some("old-compat") => SockHash::OldCompat,
            Some("native") => SockHash::Native,
            _ => SockHash::NewCompat,
        }
    }

    /// The twemproxy pool's hash (valid scenarios only).
    pub fn twemproxy_hash(&self) -> TwemproxyHash {
        self.twemproxy_hash
            .as_deref()
            .and_then(TwemproxyHash::from_name)
            .unwrap_or_default()
    }

    /// Server `i`'s weight.
    pub fn weight(&self, i: usize) -> u32 {
        self.weights
            .as_ref()
            .and_then(|w| w.get(i).copied())
            .unwrap_or(1)
    }

    /// The name of key `i` (from 0): `ns<g>.item.<i>`, g = i mod namespaces.
    pub fn key_name(&self, i: u32) -> String {
        format!("ns{}.item.{i}", i % self.namespaces.max(1))
    }

    /// The servers (indices) of namespace group `g`: the list split into
    /// `namespaces` contiguous runs, the first ones one longer.
    pub fn group_servers(&self, g: u32) -> std::ops::Range<usize> {
        let (n, groups) = (self.servers as usize, self.namespaces.max(1) as usize);
        let (base, extra) = (n / groups, n % groups);
        let g = g as usize;
        let start = g * base + g.min(extra);
        start..start + base + usize::from(g < extra)
    }
}
