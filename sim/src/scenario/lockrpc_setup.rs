//! The `[lockrpc]` table: clients that take quorum locks on lock servers
//! through per-peer channels under each lock-RPC channel policy (SPEC §10,
//! "slow is not dead"), and what makes a lock scenario valid.
//!
//! A lock scenario is a mesh whose every node runs one lock server and
//! `clients_per_node` clients. It has no detectors, and is neither a
//! membership nor a placement scenario. Each policy is a separate run on
//! the same seed and faults (`fdlab_sim::lockrpc`).

use fdlab_protocol::lockrpc::{ChannelConfig, PolicyKind, POLICY_KINDS};
use fdlab_protocol::Nanos;
use serde::{Deserialize, Serialize};

use super::validate::{check, ScenarioError};
use super::{Dist, FaultKind, MonitorCount, Scenario, Topology};

/// Clients on each node, by default.
pub const DEFAULT_CLIENTS_PER_NODE: u32 = 8;
/// Lock RPCs each client sends per second, by default (an acquisition
/// sends one to every server, so acquisitions per second are this divided
/// by the servers).
pub const DEFAULT_RPCS_PER_SECOND: f64 = 200.0;
/// Workers of a lock server (RPCs served at once), by default.
pub const DEFAULT_WORKERS: u32 = 4;
/// Lock names acquisitions draw from (uniformly), by default.
pub const DEFAULT_KEYS: u32 = 1024;
/// Most lock servers: a client's grants are a 64-bit set.
pub const MAX_LOCK_SERVERS: u32 = 64;
/// Most clients of a run.
pub const MAX_LOCK_CLIENTS: u32 = 100_000;
/// Most lock RPCs of one run (clients × rate × duration), per policy.
pub const MAX_LOCK_RPCS: f64 = 2e9;

/// The `[lockrpc]` table.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LockrpcSetup {
    #[serde(default = "default_clients")]
    pub clients_per_node: u32,
    /// Lock RPCs per second of each client (a Poisson process of
    /// acquisitions at this rate divided by the servers).
    #[serde(default = "default_rate")]
    pub rpcs_per_second: f64,
    /// Default: all four, in [`POLICY_KINDS`] order.
    #[serde(default)]
    pub policies: Option<Vec<String>>,
    /// Time a server worker spends on one RPC.
    #[serde(default = "default_service")]
    pub service_time: Dist,
    /// RPCs a server serves at once (a FIFO queue feeds them).
    #[serde(default = "default_workers")]
    pub workers: u32,
    /// Serialise lock acquisitions on a server: one at a time, FIFO (unlocks
    /// and refreshes keep the other workers).
    #[serde(default)]
    pub convoy: bool,
    /// How long a client holds a lock it acquired.
    #[serde(default = "default_hold")]
    pub hold: Dist,
    /// Lock names drawn from.
    #[serde(default = "default_keys")]
    pub keys: u32,
    /// Overrides of every policy's `ChannelConfig` keys.
    #[serde(default)]
    pub rpc_deadline: Option<Nanos>,
    #[serde(default)]
    pub eviction_cooldown: Option<Nanos>,
    #[serde(default)]
    pub detached_limit: Option<u32>,
    #[serde(default)]
    pub server_lease: Option<Nanos>,
}

fn default_clients() -> u32 {
    DEFAULT_CLIENTS_PER_NODE
}
fn default_rate() -> f64 {
    DEFAULT_RPCS_PER_SECOND
}
fn default_workers() -> u32 {
    DEFAULT_WORKERS
}
fn default_keys() -> u32 {
    DEFAULT_KEYS
}
/// 2 ms median (SPEC §10's example service time), sigma 0.5.
fn default_service() -> Dist {
    Dist::Lognormal {
        median: Nanos::from_millis(2),
        sigma: 0.5,
    }
}
/// 10 ms median, sigma 1 (a short critical section with a tail).
fn default_hold() -> Dist {
    Dist::Lognormal {
        median: Nanos::from_millis(10),
        sigma: 1.0,
    }
}

impl Default for LockrpcSetup {
    /// Every key at its default.
    fn default() -> Self {
        LockrpcSetup {
            clients_per_node: DEFAULT_CLIENTS_PER_NODE,
            rpcs_per_second: DEFAULT_RPCS_PER_SECOND,
            policies: None,
            service_time: default_service(),
            workers: DEFAULT_WORKERS,
            convoy: false,
            hold: default_hold(),
            keys: DEFAULT_KEYS,
            rpc_deadline: None,
            eviction_cooldown: None,
            detached_limit: None,
            server_lease: None,
        }
    }
}

impl LockrpcSetup {
    /// The policies, in report order (valid scenarios only).
    pub fn kinds(&self) -> Vec<PolicyKind> {
        match &self.policies {
            None => POLICY_KINDS.to_vec(),
            Some(names) => names
                .iter()
                .filter_map(|n| PolicyKind::from_name(n))
                .collect(),
        }
    }

    /// Policy `kind`'s channel keys with this table's overrides.
    pub fn channel_config(&self, kind: PolicyKind) -> ChannelConfig {
        let mut c = ChannelConfig::preset(kind);
        // dsync's calls keep MinIO's timeouts (its unlock call's 30 s; a
        // Lock call has none, the acquisition waits 1 s).
        if let Some(d) = self.rpc_deadline.filter(|_| kind != PolicyKind::Dsync) {
            c.rpc_deadline = d;
            // Keep a detached RPC outliving its caller.
            c.detached_expiry = c.detached_expiry.max(d + d);
        }
        // evict-on-timeout is "cooldown 0, cancel", dsync "no eviction,
        // never cancel": overrides leave them so.
        if matches!(kind, PolicyKind::Rustfs | PolicyKind::RustfsBreaker) {
            if let Some(c0) = self.eviction_cooldown {
                c.eviction_cooldown = c0;
            }
            if let Some(l) = self.detached_limit {
                c.detached_limit = l;
            }
        }
        if let Some(l) = self.server_lease {
            c.unlock.server_lease = l;
        }
        c
    }
}

impl Scenario {
    /// Whether this is a lock-RPC scenario (it has a `[lockrpc]` table).
    pub fn is_lockrpc(&self) -> bool {
        self.lockrpc.is_some()
    }

    pub(super) fn validate_lockrpc(&self, l: &LockrpcSetup) -> Result<(), ScenarioError> {
        let key = |k: &str| format!("lockrpc.{k}");
        check(
            !self.is_membership() && self.placement.is_none(),
            || "lockrpc".into(),
            "a lock-RPC scenario is neither a membership cluster nor key placement: keep one of [lockrpc], [membership], [placement]",
        )?;
        check(
            self.detectors.is_empty(),
            || "detectors".into(),
            "a lock-RPC scenario runs no detectors: its clients judge peers by their channel policies (lockrpc.policies)",
        )?;
        let nodes = match &self.topology {
            Topology::Mesh {
                nodes,
                monitors_per_node: MonitorCount::All,
            } => *nodes,
            _ => {
                return Err(ScenarioError::new(
                    "topology.kind",
                    "a lock-RPC scenario needs `kind = \"mesh\"` without `monitors_per_node`: every node runs a lock server and its clients",
                ))
            }
        };
        check(
            (2..=MAX_LOCK_SERVERS).contains(&nodes),
            || "topology.nodes".into(),
            &format!("a lock-RPC scenario has 2 to {MAX_LOCK_SERVERS} lock servers (nodes), and has {nodes}"),
        )?;
        check(
            l.clients_per_node >= 1 && nodes * l.clients_per_node <= MAX_LOCK_CLIENTS,
            || key("clients_per_node"),
            &format!("must be at least 1, with at most {MAX_LOCK_CLIENTS} clients in all"),
        )?;
        check(
            l.rpcs_per_second.is_finite() && l.rpcs_per_second > 0.0,
            || key("rpcs_per_second"),
            &format!("must be a positive rate, and is {}", l.rpcs_per_second),
        )?;
        let rpcs =
            l.rpcs_per_second * f64::from(nodes * l.clients_per_node) * self.duration.as_secs_f64();
        check(
            rpcs <= MAX_LOCK_RPCS,
            || key("rpcs_per_second"),
            &format!("{rpcs:.3e} lock RPCs per run; at most {MAX_LOCK_RPCS:.0e}"),
        )?;
        if let Some(names) = &l.policies {
            check(
                !names.is_empty(),
                || key("policies"),
                "must name at least one policy",
            )?;
            for (i, name) in names.iter().enumerate() {
                check(
                    PolicyKind::from_name(name).is_some(),
                    || format!("lockrpc.policies[{i}]"),
                    &format!(
                        "unknown policy `{name}`; one of {}",
                        POLICY_KINDS
                            .iter()
                            .map(|k| format!("`{}`", k.name()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )?;
                check(
                    !names[..i].contains(name),
                    || format!("lockrpc.policies[{i}]"),
                    &format!("`{name}` is listed twice"),
                )?;
            }
        }
        l.service_time.validate(&key("service_time"))?;
        l.hold.validate(&key("hold"))?;
        check(
            (1..=4096).contains(&l.workers),
            || key("workers"),
            "must be 1 to 4096",
        )?;
        check(l.keys >= 1, || key("keys"), "must be at least 1")?;
        for kind in l.kinds() {
            l.channel_config(kind).validate().map_err(|e| {
                let k = match e.key.as_str() {
                    "unlock.server_lease" => "server_lease".to_string(),
                    other => other.to_string(),
                };
                ScenarioError::new(key(&k), e.problem)
            })?;
        }
        check(
            self.random_faults.is_empty(),
            || "random_faults".into(),
            "a lock-RPC scenario takes scheduled [[faults]] only",
        )?;
        check(
            self.clocks.is_empty(),
            || "clocks".into(),
            "a lock-RPC scenario has no clocks to skew",
        )?;
        Ok(())
    }

    /// Whether a lock-RPC scenario takes faults of `kind`.
    pub(super) fn lockrpc_takes(kind: FaultKind) -> bool {
        matches!(
            kind,
            FaultKind::Crash
                | FaultKind::Pause
                | FaultKind::Degrade
                | FaultKind::SlowLink
                | FaultKind::Partition
                | FaultKind::Loss
        )
    }

    /// Whether fault `kind` applies to a lock-RPC scenario.
    pub(super) fn lockrpc_fault_fits(
        &self,
        kind: FaultKind,
        path: impl Fn() -> String,
    ) -> Result<(), ScenarioError> {
        check(
            !self.is_lockrpc() || Scenario::lockrpc_takes(kind),
            &path,
            &format!(
                "`{}` does not apply to a lock-RPC scenario; use crash (a dead peer; with `duration`, it restarts), pause, degrade (`slowdown`: extra service time per RPC), slow-link, partition or loss",
                kind.name()
            ),
        )
    }
}
