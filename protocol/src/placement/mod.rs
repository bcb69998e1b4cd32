//! Key placement: which memcached server a client sends a key to, given the
//! servers it believes dead (SPEC §9).
//!
//! A [`Placement`] is one client's distribution over its server list,
//! precomputed once (bucket lists, rings); [`Placement::key_hash`] is the
//! costly per-key part, computed once per key, and [`Placement::owner`] maps a
//! key and its hash to a server given which servers are live, in a bucket
//! look-up when the key's first server is live. [`DeadMarks`] turns a
//! client's detector verdicts into that live list. Nothing here reads a clock
//! or draws a random number.
//!
//! | distribution | module | source |
//! |---|---|---|
//! | `sockiopool` | [`sockiopool`] | memcacheddotnet / Memcached.ClientLibrary `SockIOPool.cs` `GetSock` (Java Whalin `SockIOPool.java`) |
//! | `namespace` | [`namespace`] | fdlab: a SockIOPool per key namespace |
//! | `modulo-failover` | [`modulo`] | python-memcached 1.59 `memcache.py` `Client._get_server` |
//! | `modulo-eject` | [`modulo`], [`twemproxy`] | twemproxy 0.5.0 `src/hashkit/nc_modula.c`, `auto_eject_hosts` |
//! | `ketama` | [`ketama`] | libketama `ketama.c` |
//! | `twemproxy-ketama` | [`ketama`], [`twemproxy`] | twemproxy 0.5.0 `src/hashkit/nc_ketama.c` |
//! | `rendezvous` | [`rendezvous`] | fdlab: highest random weight, FNV-1a + fmix64 |
//!
//! The two twemproxy distributions follow twemproxy's server names, order
//! and `hash:` ([`twemproxy`]); the others the list as given.
//!
//! docs/placement.md says the same for users, with each deviation.

pub mod buckets;
pub mod hash;
pub mod ketama;
pub mod keys;
pub mod marks;
pub mod modulo;
pub mod namespace;
pub mod rendezvous;
pub mod sockiopool;
pub mod twemproxy;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

use crate::time::Nanos;

pub use keys::{check_key, MAX_KEY_BYTES};
pub use marks::DeadMarks;
pub use twemproxy::TwemproxyHash;

use buckets::Buckets;
use ketama::Ketama;
use modulo::{ModuloEject, ModuloFailover};
use namespace::Namespaces;
use rendezvous::Rendezvous;
use sockiopool::SockIoPool;

/// One server of a client's list: `name` is "host:port" (what libketama
/// hashes, and how fdlab names the server), `weight` at least 1, `label`
/// the name a twemproxy configuration gives it (`host:port:weight label`),
/// which twemproxy hashes and sorts by instead ([`twemproxy::name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    pub name: String,
    pub weight: u32,
    pub label: Option<String>,
}

impl Server {
    /// A server with no twemproxy name.
    pub fn new(name: impl Into<String>, weight: u32) -> Server {
        Server {
            name: name.into(),
            weight,
            label: None,
        }
    }
}

/// The distributions of SPEC §9.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DistributionKind {
    SockIoPool,
    Namespace,
    ModuloFailover,
    ModuloEject,
    Ketama,
    TwemproxyKetama,
    Rendezvous,
}

impl DistributionKind {
    pub const ALL: [DistributionKind; 7] = [
        DistributionKind::SockIoPool,
        DistributionKind::Namespace,
        DistributionKind::ModuloFailover,
        DistributionKind::ModuloEject,
        DistributionKind::Ketama,
        DistributionKind::TwemproxyKetama,
        DistributionKind::Rendezvous,
    ];
    /// A `[placement]` table's distributions when it names none: SPEC §9's
    /// six (`twemproxy-ketama` differs from `ketama` only in the names it
    /// hashes and its key hash, so a scenario lists it when it matters).
    pub const SCENARIO_DEFAULT: [DistributionKind; 6] = [
        DistributionKind::SockIoPool,
        DistributionKind::Namespace,
        DistributionKind::ModuloFailover,
        DistributionKind::ModuloEject,
        DistributionKind::Ketama,
        DistributionKind::Rendezvous,
    ];
    /// "sockiopool", "namespace", "modulo-failover", "modulo-eject", "ketama",
    /// "twemproxy-ketama", "rendezvous".
    pub fn name(self) -> &'static str {
        match self {
            DistributionKind::SockIoPool => "sockiopool",
            DistributionKind::Namespace => "namespace",
            DistributionKind::ModuloFailover => "modulo-failover",
            DistributionKind::ModuloEject => "modulo-eject",
            DistributionKind::Ketama => "ketama",
            DistributionKind::TwemproxyKetama => "twemproxy-ketama",
            DistributionKind::Rendezvous => "rendezvous",
        }
    }
    pub fn from_name(name: &str) -> Option<DistributionKind> {
        DistributionKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for DistributionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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

impl SockHash {
    pub const ALL: [SockHash; 3] = [SockHash::OldCompat, SockHash::NewCompat, SockHash::Native];
    /// "old-compat", "new-compat", "native".
    pub fn name(self) -> &'static str {
        match self {
            SockHash::OldCompat => "old-compat",
            SockHash::NewCompat => "new-compat",
            SockHash::Native => "native",
        }
    }
    pub fn from_name(name: &str) -> Option<SockHash> {
        SockHash::ALL.into_iter().find(|h| h.name() == name)
    }
}

impl fmt::Display for SockHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A namespace group: keys whose prefix (before the first '.') is `prefix`
/// go to the servers `servers` (indices into the server list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceGroup {
    pub prefix: String,
    pub servers: Vec<usize>,
}

/// SockIOPool's first dead-host hold: `createSocket` ignores a host that
/// failed to connect for 1000 ms, doubling at each further failure
/// (memcacheddotnet `SockIOPool.cs`); fdlab holds the first figure.
pub const SOCKIOPOOL_DEAD_RETRY: Nanos = Nanos::from_secs(1);

/// python-memcached's `_DEAD_RETRY`, 30 s (memcache.py 1.59).
pub const PYTHON_DEAD_RETRY: Nanos = Nanos::from_secs(30);

/// twemproxy's default `server_retry_timeout`, 30 000 ms (src/nc_conf.h
/// `CONF_DEFAULT_SERVER_RETRY_TIMEOUT`).
pub const TWEMPROXY_SERVER_RETRY_TIMEOUT: Nanos = Nanos::from_secs(30);

/// The longest bucket list, i.e. the largest total weight: the clients list
/// each server `weight` times (SockIOPool's count is a 32-bit `int`); a
/// million buckets is far past any real deployment.
pub const MAX_TOTAL_WEIGHT: u64 = 1_000_000;

/// How one client places keys.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementConfig {
    pub kind: DistributionKind,
    /// sockiopool and namespace.
    pub hash: SockHash,
    /// modulo-eject and twemproxy-ketama: the pool's `hash:`.
    pub twemproxy_hash: TwemproxyHash,
    /// sockiopool and namespace: rehash a dead server's keys (else fail).
    pub failover: bool,
    /// namespace only; keys matching no group go to the whole list.
    pub groups: Vec<NamespaceGroup>,
    /// How long a dead mark holds at least (python-memcached's dead_retry,
    /// twemproxy's server_retry_timeout); zero: the mark follows the detector.
    pub dead_retry: Nanos,
}

impl PlacementConfig {
    /// The defaults of `kind` as the named client ships them, but for
    /// SockIOPool's hash: the .NET and Java clients default to `native`,
    /// which is not reproducible on .NET (see [`hash::java_string_hash`]);
    /// fdlab defaults to `new-compat`, the CRC-32 hash every port shares.
    /// Failover is on (SockIOPool's `failover = true`). `dead_retry`:
    /// [`SOCKIOPOOL_DEAD_RETRY`] for sockiopool and namespace,
    /// [`PYTHON_DEAD_RETRY`] for modulo-failover,
    /// [`TWEMPROXY_SERVER_RETRY_TIMEOUT`] for modulo-eject and ketama, and
    /// python's 30 s for rendezvous, which has no client of its own.
    pub fn defaults(kind: DistributionKind) -> PlacementConfig {
        let dead_retry = match kind {
            DistributionKind::SockIoPool | DistributionKind::Namespace => SOCKIOPOOL_DEAD_RETRY,
            DistributionKind::ModuloFailover | DistributionKind::Rendezvous => PYTHON_DEAD_RETRY,
            DistributionKind::ModuloEject
            | DistributionKind::Ketama
            | DistributionKind::TwemproxyKetama => TWEMPROXY_SERVER_RETRY_TIMEOUT,
        };
        PlacementConfig {
            kind,
            twemproxy_hash: TwemproxyHash::default(),
            hash: SockHash::default(),
            failover: true,
            groups: Vec::new(),
            dead_retry,
        }
    }
}

/// A placement error: names what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementError(pub String);

impl fmt::Display for PlacementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlacementError {}

/// A client's placement over one server list (precomputed buckets / ring).
#[derive(Clone, Debug)]
pub struct Placement {
    servers: Vec<Server>,
    config: PlacementConfig,
    distribution: Distribution,
}

/// The precomputed state of each distribution.
#[derive(Clone, Debug)]
enum Distribution {
    SockIoPool(SockIoPool),
    Namespace(Namespaces),
    ModuloFailover(ModuloFailover),
    ModuloEject(ModuloEject),
    Ketama(Ketama),
    Rendezvous(Rendezvous),
}

impl Placement {
    pub fn new(servers: &[Server], config: &PlacementConfig) -> Result<Placement, PlacementError> {
        check_servers(servers)?;
        if matches!(
            config.kind,
            DistributionKind::ModuloEject | DistributionKind::TwemproxyKetama
        ) {
            twemproxy::check_names(servers).map_err(PlacementError)?;
        }
        if config.kind == DistributionKind::Namespace {
            check_groups(servers, &config.groups)?;
        }
        let weights: Vec<u32> = servers.iter().map(|s| s.weight).collect();
        let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
        let whole = || Buckets::new((0..servers.len()).collect(), |i| weights[i]);
        let distribution = match config.kind {
            DistributionKind::SockIoPool => {
                Distribution::SockIoPool(SockIoPool::new(whole(), config.hash, config.failover))
            }
            DistributionKind::Namespace => Distribution::Namespace(Namespaces::new(
                &weights,
                &config.groups,
                config.hash,
                config.failover,
            )),
            DistributionKind::ModuloFailover => {
                Distribution::ModuloFailover(ModuloFailover::new(whole()))
            }
            DistributionKind::ModuloEject => Distribution::ModuloEject(ModuloEject::new(
                &weights,
                twemproxy::order(servers),
                config.twemproxy_hash,
            )),
            DistributionKind::Ketama => Distribution::Ketama(Ketama::libketama(names, weights)),
            DistributionKind::TwemproxyKetama => Distribution::Ketama(Ketama::twemproxy(
                servers.iter().map(twemproxy::name).collect(),
                weights,
                &twemproxy::order(servers),
                config.twemproxy_hash,
            )),
            DistributionKind::Rendezvous => {
                Distribution::Rendezvous(Rendezvous::new(&names, &weights))
            }
        };
        Ok(Placement {
            servers: servers.to_vec(),
            config: config.clone(),
            distribution,
        })
    }
    pub fn servers(&self) -> &[Server] {
        &self.servers
    }
    /// The configuration this placement was built from.
    pub fn config(&self) -> &PlacementConfig {
        &self.config
    }
    /// The key's hash (the costly part: computed once per key). Opaque: only
    /// [`Placement::owner`] of the same placement reads it.
    pub fn key_hash(&self, key: &str) -> u64 {
        match &self.distribution {
            Distribution::SockIoPool(d) => u64::from(d.key_hash(key) as u32),
            Distribution::Namespace(d) => d.key_hash(key),
            Distribution::ModuloFailover(d) => u64::from(d.key_hash(key)),
            Distribution::ModuloEject(d) => u64::from(d.key_hash(key)),
            Distribution::Ketama(d) => u64::from(d.key_hash(key)),
            Distribution::Rendezvous(d) => d.key_hash(key),
        }
    }
    /// The server of `key` (whose `key_hash` is `hash`) when `live[i]` is
    /// false for each server marked dead; None: the request fails.
    /// `live` has one entry per server (panics if shorter).
    #[inline]
    pub fn owner(&self, key: &str, hash: u64, live: &[bool]) -> Option<usize> {
        debug_assert_eq!(live.len(), self.servers.len(), "one live flag per server");
        let owner = match &self.distribution {
            Distribution::SockIoPool(d) => d.owner(key, hash as u32 as i32, live),
            Distribution::Namespace(d) => d.owner(key, hash, live),
            Distribution::ModuloFailover(d) => d.owner(hash as u32, live),
            Distribution::ModuloEject(d) => d.owner(hash as u32, live),
            Distribution::Ketama(d) => d.owner(hash as u32, live),
            Distribution::Rendezvous(d) => d.owner(hash, live),
        };
        debug_assert!(owner.is_none_or(|s| live[s]), "an owner is live");
        owner
    }
}

/// Non-empty, named, weights 1 or more adding up to at most
/// [`MAX_TOTAL_WEIGHT`], no name twice.
fn check_servers(servers: &[Server]) -> Result<(), PlacementError> {
    if servers.is_empty() {
        return Err(PlacementError(
            "no servers: a client needs at least one".into(),
        ));
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut total = 0u64;
    for (i, server) in servers.iter().enumerate() {
        if server.name.is_empty() {
            return Err(PlacementError(format!("server {} has no name", i + 1)));
        }
        if server.weight == 0 {
            return Err(PlacementError(format!(
                "server `{}` has weight 0; weights are at least 1",
                server.name
            )));
        }
        if let Some(first) = seen.insert(&server.name, i) {
            return Err(PlacementError(format!(
                "server `{}` is listed twice (servers {} and {})",
                server.name,
                first + 1,
                i + 1
            )));
        }
        total += u64::from(server.weight);
    }
    if total > MAX_TOTAL_WEIGHT {
        return Err(PlacementError(format!(
            "the weights add up to {total}, past {MAX_TOTAL_WEIGHT}: the clients list \
             each server `weight` times"
        )));
    }
    Ok(())
}

/// Each group: a prefix that could start a key and has no `.`, given once;
/// one or more servers, each in range and named once.
fn check_groups(servers: &[Server], groups: &[NamespaceGroup]) -> Result<(), PlacementError> {
    let mut prefixes = BTreeMap::new();
    for group in groups {
        let prefix = &group.prefix;
        keys::check_key(prefix.as_bytes())
            .map_err(|e| PlacementError(format!("namespace `{prefix}` {e}")))?;
        if prefix.contains('.') {
            return Err(PlacementError(format!(
                "namespace `{prefix}` contains a `.`; a key's namespace is its text \
                 before the first `.`"
            )));
        }
        if prefixes.insert(prefix.as_str(), ()).is_some() {
            return Err(PlacementError(format!(
                "namespace `{prefix}` is given twice"
            )));
        }
        if group.servers.is_empty() {
            return Err(PlacementError(format!(
                "namespace `{prefix}` has no servers"
            )));
        }
        let mut named = vec![false; servers.len()];
        for &i in &group.servers {
            if i >= servers.len() {
                return Err(PlacementError(format!(
                    "namespace `{prefix}` names server index {i}, but the list has {} \
                     servers (indices from 0)",
                    servers.len()
                )));
            }
            if std::mem::replace(&mut named[i], true) {
                return Err(PlacementError(format!(
                    "namespace `{prefix}` names server `{}` twice",
                    servers[i].name
                )));
            }
        }
    }
    Ok(())
}
