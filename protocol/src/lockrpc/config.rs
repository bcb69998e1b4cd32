//! Every constant of the lock-RPC channel policies, with SPEC §10's defaults.
//!
//! Sources (facts only, no code): rustfs/rustfs
//! `crates/ecstore/src/cluster/rpc/remote_locker.rs` (`rpc_timeout`,
//! `LOCK_RPC_LIVENESS_WINDOW_DEADLINES` = 2, `eviction_cooldown`,
//! `detached_rpc_limit`, `LOCK_RPC_REQUEST_BACKOFF_THRESHOLD` = 3, first
//! window `deadline / 2`, `LOCK_RPC_REQUEST_BACKOFF_MAX` = 30 s),
//! rustfs/rustfs `crates/lock/src/distributed_lock.rs` (`UNLOCK_RETRY_ATTEMPTS`
//! = 3 attempts, `UNLOCK_RETRY_BACKOFF` = 100 ms times the attempt number),
//! `crates/config/src/constants/internode.rs` (connect and RPC timeouts),
//! h2 v0.4.18 `src/proto/mod.rs:34` `DEFAULT_REMOTE_RESET_STREAM_MAX` = 20
//! (the `GOAWAY too_many_resets` of rustfs/rustfs#7363; the server's
//! limit, applied by the simulated server), minio/minio
//! `internal/dsync/drwmutex.go` (`drwMutexRefreshInterval` = 10 s,
//! `drwMutexRefreshCallTimeout` = 5 s, write quorum) and `cmd/lock-rest-server.go`
//! (`lockValidityDuration` = 1 min).

use serde::{Deserialize, Serialize};

use crate::config::{ensure, ensure_bounded, ensure_positive, ConfigError};
use crate::time::Nanos;

/// `reset_limit` of a transport with no reset budget (grid's muxes).
pub const NO_RESET_LIMIT: u32 = u32::MAX;
/// `detached_limit` of a client that never cancels: the largest the key
/// takes.
pub const DETACH_ALWAYS: u32 = 1_000_000;
/// The deadline grid gives a request that has none (`Connection.Request`).
pub const GRID_REQUEST_DEADLINE: Nanos = Nanos::from_secs(60);
/// RustFS's internode RPC timeout (tonic's `Endpoint::timeout`): a
/// detached RPC ends there (rustfs/rustfs
/// `crates/config/src/constants/internode.rs:40`,
/// `DEFAULT_INTERNODE_RPC_TIMEOUT_SECS` = 30, at 20d1266, 1.0.0-rc.3).
pub const RUSTFS_INTERNODE_RPC_TIMEOUT: Nanos = Nanos::from_secs(30);
/// RustFS's internode connect timeout (same file, line 17,
/// `DEFAULT_INTERNODE_CONNECT_TIMEOUT_SECS` = 3; `crates/protos/src/lib.rs`
/// `build_channel` sets it on the tonic `Endpoint`).
pub const RUSTFS_CONNECT_TIMEOUT: Nanos = Nanos::from_secs(3);
/// MinIO dsync's unlock call timeout (`drwMutexUnlockCallTimeout`).
pub const DSYNC_UNLOCK_CALL_TIMEOUT: Nanos = Nanos::from_secs(30);
/// MinIO grid's dial timeout (`internal/grid/connection.go`,
/// `defaultDialTimeout`).
pub const GRID_DIAL_TIMEOUT: Nanos = Nanos::from_secs(2);
/// MinIO grid's background re-dial: `defaultDialTimeout` (2 s) plus up to
/// 2 s of jitter, halved, from the previous dial's start.
pub const GRID_RECONNECT_MIN: Nanos = Nanos::from_secs(1);
pub const GRID_RECONNECT_MAX: Nanos = Nanos::from_secs(2);

/// The policies SPEC §10 compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Evict (tear down, re-dial) on every timeout; cancel the timed-out RPC.
    EvictOnTimeout,
    /// RustFS: eviction verdicts, detached RPCs, eviction cooldown.
    Rustfs,
    /// RustFS plus its per-peer request breaker.
    RustfsBreaker,
    /// MinIO dsync-like holding: refresh every 10 s, lost only past quorum.
    Dsync,
}

/// Every policy, in a fixed order.
pub const POLICY_KINDS: [PolicyKind; 4] = [
    PolicyKind::EvictOnTimeout,
    PolicyKind::Rustfs,
    PolicyKind::RustfsBreaker,
    PolicyKind::Dsync,
];

impl PolicyKind {
    /// The name scenario files and reports use.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::EvictOnTimeout => "evict-on-timeout",
            PolicyKind::Rustfs => "rustfs",
            PolicyKind::RustfsBreaker => "rustfs-breaker",
            PolicyKind::Dsync => "dsync",
        }
    }

    /// The policy called `name`, if any.
    pub fn from_name(name: &str) -> Option<PolicyKind> {
        POLICY_KINDS.into_iter().find(|kind| kind.name() == name)
    }
}

/// The request breaker of rustfs/rustfs PR #7970 (issue #7962).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    /// Off: every request passes.
    pub enabled: bool,
    /// Consecutive lock-RPC timeouts (or transport failures) that open it.
    pub threshold: u32,
    /// The first open window (RustFS: half the RPC deadline).
    pub first_window: Nanos,
    /// Each further timeout while degraded multiplies the window by this.
    pub window_factor: u32,
    /// The window's cap.
    pub max_window: Nanos,
    /// Requests let through at once once a window has passed (half-open).
    pub probes: u32,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            enabled: false,
            threshold: 3,
            first_window: Nanos::from_millis(1_500),
            window_factor: 2,
            max_window: Nanos::from_secs(30),
            probes: 1,
        }
    }
}

/// Retries of an unlock that failed (SPEC §10).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UnlockConfig {
    /// Quick retries after the first failed attempt.
    pub quick_retries: u32,
    /// The k-th quick retry waits k times this (RustFS: 100 ms).
    pub quick_retry_step: Nanos,
    /// The first slow retry waits this long after the last quick failure.
    pub backoff_first: Nanos,
    /// Each slow retry waits this many times the previous wait.
    pub backoff_factor: u32,
    /// Slow retries (1, 2, 4, 8, 16 s: five).
    pub backoff_steps: u32,
    /// After the last retry the server's lease reclaims the lock.
    pub server_lease: Nanos,
}

impl Default for UnlockConfig {
    fn default() -> Self {
        UnlockConfig {
            // rustfs/rustfs `crates/lock/src/distributed_lock.rs:39-40`
            // (20d1266): `UNLOCK_RETRY_ATTEMPTS` = 3 attempts, the k-th
            // failure waiting `UNLOCK_RETRY_BACKOFF` (100 ms) x k before
            // the next (`release_entries`, :718-754): 100 ms, 200 ms.
            quick_retries: 2,
            quick_retry_step: Nanos::from_millis(100),
            backoff_first: Nanos::from_secs(1),
            backoff_factor: 2,
            backoff_steps: 5,
            server_lease: Nanos::from_secs(60),
        }
    }
}

/// What a client's transport does once its connection to a peer failed
/// (refused, reset, GOAWAY).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Disconnect {
    /// tonic (RustFS): the next request dials a new connection, then goes.
    Redial,
    /// MinIO grid (`internal/grid/connection.go`): the connection is
    /// offline; every request fails at once without being sent
    /// (`ErrDisconnected`) while the transport re-dials in the background,
    /// `reconnect_min` to `reconnect_max` after its previous dial started.
    /// Deadlines never evict: grid keeps a connection until it fails.
    Offline,
}

/// MinIO dsync's lock holding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DsyncConfig {
    /// Period of the refresh rounds (`drwMutexRefreshInterval`).
    pub refresh_interval: Nanos,
    /// Deadline of one round's refresh calls (`drwMutexRefreshCallTimeout`).
    pub refresh_call_deadline: Nanos,
    /// How long one acquisition attempt waits for a quorum of grants
    /// (`drwMutexAcquireTimeout` = 1 s, `drwmutex.go:70`, at 7aac2a2); the
    /// Lock calls themselves have no deadline (grid's 1 min).
    pub acquire_wait: Nanos,
    /// How long an acquisition keeps retrying: MinIO's object layer asks
    /// for its locks with `globalOperationTimeout`, a dynamic timeout that
    /// starts at 10 min (`cmd/globals.go:320`).
    pub acquire_timeout: Nanos,
    /// The wait before attempt k + 1 is a uniform draw in (0, min(
    /// `retry_min` + k x `retry_step`, `retry_max`)] (`lockRetryMinInterval`
    /// = 250 ms, `backoffWait(.., 100 ms, 5 s)`, `drwmutex.go:48-61`,
    /// `internal/dsync/utils.go:25-39`).
    pub retry_min: Nanos,
    pub retry_step: Nanos,
    pub retry_max: Nanos,
}

impl Default for DsyncConfig {
    fn default() -> Self {
        DsyncConfig {
            refresh_interval: Nanos::from_secs(10),
            refresh_call_deadline: Nanos::from_secs(5),
            acquire_wait: Nanos::from_secs(1),
            acquire_timeout: Nanos::from_secs(600),
            retry_min: Nanos::from_millis(250),
            retry_step: Nanos::from_millis(100),
            retry_max: Nanos::from_secs(5),
        }
    }
}

/// The quorum of a write lock on `servers` lock servers (MinIO dsync):
/// `servers - servers / 2`, plus one when that equals `servers / 2` (even
/// counts), so that two writers can never both hold a quorum.
pub fn write_quorum(servers: u32) -> u32 {
    let tolerance = servers / 2;
    let quorum = servers - tolerance;
    if quorum == tolerance {
        quorum + 1
    } else {
        quorum
    }
}

/// The quorum of a read lock on `servers` lock servers: `servers - servers / 2`.
pub fn read_quorum(servers: u32) -> u32 {
    servers - servers / 2
}

/// One client's channel policy towards its peers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChannelConfig {
    /// Which policy these keys came from (reports name it).
    pub policy: PolicyKind,
    /// Deadline of a lock or unlock RPC.
    pub rpc_deadline: Nanos,
    /// Deadline of a health ping.
    pub health_ping_deadline: Nanos,
    /// A peer that completed an RPC within this many deadlines is "recently
    /// served" and a deadline on it does not evict (0: never).
    pub recently_served_deadlines: u32,
    /// No eviction within this span of the last one (0: none).
    pub eviction_cooldown: Nanos,
    /// Timed-out RPCs left running per peer; past it they are cancelled
    /// (0: always cancel).
    pub detached_limit: u32,
    /// A detached RPC that has not completed this long after it was sent
    /// ends on its own, as an error (the transport's own RPC timeout).
    pub detached_expiry: Nanos,
    /// The server's h2 limit: streams reset while still pending accept
    /// that may wait in its accept queue; one more and it closes the
    /// connection (`GOAWAY ENHANCE_YOUR_CALM too_many_resets`). Applied by
    /// the host's simulated server, not by the channel.
    pub reset_limit: u32,
    /// What a failed connection does to the requests that follow.
    pub disconnect: Disconnect,
    /// How long a dial waits for its handshake before it fails (a peer
    /// behind a partition answers no SYN): RustFS's
    /// `DEFAULT_INTERNODE_CONNECT_TIMEOUT_SECS` (3 s), MinIO grid's
    /// `defaultDialTimeout` (2 s).
    pub connect_timeout: Nanos,
    /// Under `disconnect = "offline"`: the background re-dial waits a
    /// uniform draw from `reconnect_min` to `reconnect_max` after the
    /// previous dial started (MinIO grid: half of 2 s + U[0, 2 s)). The
    /// host draws it: the channel holds no randomness.
    pub reconnect_min: Nanos,
    pub reconnect_max: Nanos,
    pub breaker: BreakerConfig,
    pub unlock: UnlockConfig,
    pub dsync: DsyncConfig,
}

impl Default for ChannelConfig {
    fn default() -> Self {
        ChannelConfig::preset(PolicyKind::Rustfs)
    }
}

impl ChannelConfig {
    /// SPEC §10's keys for one policy.
    pub fn preset(kind: PolicyKind) -> ChannelConfig {
        let rustfs = ChannelConfig {
            policy: kind,
            rpc_deadline: Nanos::from_secs(3),
            health_ping_deadline: Nanos::from_secs(1),
            recently_served_deadlines: 2,
            eviction_cooldown: Nanos::from_secs(5),
            detached_limit: 256,
            detached_expiry: RUSTFS_INTERNODE_RPC_TIMEOUT,
            reset_limit: 20,
            disconnect: Disconnect::Redial,
            connect_timeout: RUSTFS_CONNECT_TIMEOUT,
            reconnect_min: GRID_RECONNECT_MIN,
            reconnect_max: GRID_RECONNECT_MAX,
            breaker: BreakerConfig::default(),
            unlock: UnlockConfig::default(),
            dsync: DsyncConfig::default(),
        };
        match kind {
            PolicyKind::EvictOnTimeout => ChannelConfig {
                recently_served_deadlines: 0,
                eviction_cooldown: Nanos::ZERO,
                detached_limit: 0,
                ..rustfs
            },
            PolicyKind::Rustfs => rustfs,
            // MinIO's lock RPCs ride grid: dsync's `lock` never cancels
            // a Lock call (no deadline of its own; grid adds 1 min) and
            // releases every grant that comes after it stopped waiting; a
            // timeout never evicts; a failed connection is offline until
            // grid's background dial succeeds.
            PolicyKind::Dsync => ChannelConfig {
                // An unlock call's timeout (`drwMutexUnlockCallTimeout` =
                // 30 s, `drwmutex.go:72`); a Lock call has none of its own
                // (grid's 1 min), and is abandoned by the acquisition's
                // 1 s wait long before either.
                rpc_deadline: DSYNC_UNLOCK_CALL_TIMEOUT,
                recently_served_deadlines: 0,
                eviction_cooldown: Nanos::ZERO,
                detached_limit: DETACH_ALWAYS,
                detached_expiry: GRID_REQUEST_DEADLINE,
                reset_limit: NO_RESET_LIMIT,
                disconnect: Disconnect::Offline,
                connect_timeout: GRID_DIAL_TIMEOUT,
                ..rustfs
            },
            PolicyKind::RustfsBreaker => ChannelConfig {
                breaker: BreakerConfig {
                    enabled: true,
                    ..BreakerConfig::default()
                },
                ..rustfs
            },
        }
    }

    /// The recently-served window: `recently_served_deadlines x rpc_deadline`.
    pub fn recently_served_window(&self) -> Nanos {
        Nanos(self.rpc_deadline.as_nanos() * u64::from(self.recently_served_deadlines))
    }

    /// Checks every key; the error names the first key out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // Spans are multiplied by small factors: keep them far from overflow.
        let longest = Nanos(crate::time::MAX_DURATION.as_nanos() / 1024);
        let short = |value: Nanos, key: &str| {
            ensure(
                value <= longest,
                key,
                &format!("{value} is too long (at most {longest})"),
            )
        };
        ensure_positive(self.rpc_deadline, "rpc_deadline")?;
        short(self.rpc_deadline, "rpc_deadline")?;
        ensure_positive(self.health_ping_deadline, "health_ping_deadline")?;
        ensure(
            self.recently_served_deadlines <= 1_000,
            "recently_served_deadlines",
            "must be at most 1000",
        )?;
        ensure_bounded(self.eviction_cooldown, "eviction_cooldown")?;
        ensure(
            self.detached_limit <= DETACH_ALWAYS,
            "detached_limit",
            &format!("must be at most {DETACH_ALWAYS}"),
        )?;
        ensure(
            self.detached_expiry > self.rpc_deadline,
            "detached_expiry",
            "must be longer than `rpc_deadline` (a detached RPC outlives its caller)",
        )?;
        short(self.detached_expiry, "detached_expiry")?;
        ensure_positive(self.connect_timeout, "connect_timeout")?;
        short(self.connect_timeout, "connect_timeout")?;
        ensure(self.reset_limit >= 1, "reset_limit", "must be at least 1")?;
        ensure_positive(self.reconnect_min, "reconnect_min")?;
        short(self.reconnect_max, "reconnect_max")?;
        ensure(
            self.reconnect_min <= self.reconnect_max,
            "reconnect_max",
            "must not be shorter than `reconnect_min`",
        )?;
        let b = &self.breaker;
        ensure(b.threshold >= 1, "breaker.threshold", "must be at least 1")?;
        ensure_positive(b.first_window, "breaker.first_window")?;
        ensure(
            b.window_factor >= 1 && b.window_factor <= 1_000,
            "breaker.window_factor",
            "must be between 1 and 1000",
        )?;
        ensure_positive(b.max_window, "breaker.max_window")?;
        short(b.max_window, "breaker.max_window")?;
        ensure(
            b.first_window <= b.max_window,
            "breaker.max_window",
            "must not be shorter than `breaker.first_window`",
        )?;
        ensure(
            b.probes >= 1 && b.probes <= 1_000,
            "breaker.probes",
            "must be between 1 and 1000",
        )?;
        let u = &self.unlock;
        ensure(
            u.quick_retries <= 100,
            "unlock.quick_retries",
            "must be at most 100",
        )?;
        short(u.quick_retry_step, "unlock.quick_retry_step")?;
        ensure_positive(u.backoff_first, "unlock.backoff_first")?;
        ensure(
            u.backoff_factor >= 1 && u.backoff_factor <= 16,
            "unlock.backoff_factor",
            "must be between 1 and 16",
        )?;
        ensure(
            u.backoff_steps <= 16,
            "unlock.backoff_steps",
            "must be at most 16",
        )?;
        // The last slow wait is first x factor^(steps - 1): bound it.
        let last = u64::from(u.backoff_factor)
            .checked_pow(u.backoff_steps.saturating_sub(1))
            .and_then(|f| f.checked_mul(u.backoff_first.as_nanos()));
        ensure(
            last.is_some_and(|ns| Nanos(ns) <= longest),
            "unlock.backoff_steps",
            "the last wait (`backoff_first x backoff_factor^(backoff_steps - 1)`) is too long",
        )?;
        ensure_positive(u.server_lease, "unlock.server_lease")?;
        ensure_positive(self.dsync.refresh_interval, "dsync.refresh_interval")?;
        short(self.dsync.refresh_interval, "dsync.refresh_interval")?;
        ensure_positive(
            self.dsync.refresh_call_deadline,
            "dsync.refresh_call_deadline",
        )?;
        ensure(
            self.dsync.refresh_call_deadline <= self.dsync.refresh_interval,
            "dsync.refresh_call_deadline",
            "must not be longer than `dsync.refresh_interval` (rounds would overlap)",
        )?;
        let d = &self.dsync;
        for (value, key) in [
            (d.acquire_wait, "dsync.acquire_wait"),
            (d.acquire_timeout, "dsync.acquire_timeout"),
            (d.retry_min, "dsync.retry_min"),
            (d.retry_max, "dsync.retry_max"),
        ] {
            ensure_positive(value, key)?;
            short(value, key)?;
        }
        short(d.retry_step, "dsync.retry_step")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in POLICY_KINDS {
            assert_eq!(PolicyKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(
            PolicyKind::from_name("rustfs-breaker"),
            Some(PolicyKind::RustfsBreaker)
        );
        assert_eq!(PolicyKind::from_name("Rustfs"), None);
    }

    #[test]
    fn presets_are_spec_and_valid() {
        for kind in POLICY_KINDS {
            ChannelConfig::preset(kind).validate().unwrap();
        }
        let r = ChannelConfig::preset(PolicyKind::Rustfs);
        assert_eq!(r.rpc_deadline, Nanos::from_secs(3));
        assert_eq!(r.recently_served_window(), Nanos::from_secs(6));
        assert_eq!(r.eviction_cooldown, Nanos::from_secs(5));
        assert_eq!(r.detached_limit, 256);
        assert_eq!(r.health_ping_deadline, Nanos::from_secs(1));
        assert!(!r.breaker.enabled);
        let e = ChannelConfig::preset(PolicyKind::EvictOnTimeout);
        assert_eq!(e.eviction_cooldown, Nanos::ZERO);
        assert_eq!(e.detached_limit, 0);
        assert_eq!(e.recently_served_window(), Nanos::ZERO);
        let b = ChannelConfig::preset(PolicyKind::RustfsBreaker).breaker;
        assert!(b.enabled);
        assert_eq!((b.threshold, b.probes, b.window_factor), (3, 1, 2));
        assert_eq!(b.first_window, Nanos::from_millis(1_500));
        assert_eq!(b.max_window, Nanos::from_secs(30));
        let d = ChannelConfig::preset(PolicyKind::Dsync);
        assert_eq!(d.dsync.refresh_interval, Nanos::from_secs(10));
        assert_eq!(d.dsync.refresh_call_deadline, Nanos::from_secs(5));
        assert_eq!(d.disconnect, Disconnect::Offline);
        assert_eq!(
            (d.reconnect_min, d.reconnect_max),
            (GRID_RECONNECT_MIN, GRID_RECONNECT_MAX)
        );
        assert_eq!(
            (d.detached_limit, d.eviction_cooldown),
            (DETACH_ALWAYS, Nanos::ZERO)
        );
        assert_eq!(d.detached_expiry, GRID_REQUEST_DEADLINE);
        assert_eq!(r.disconnect, Disconnect::Redial);
        assert_eq!(r.unlock.server_lease, Nanos::from_secs(60));
    }

    #[test]
    fn quorums_are_minio_s() {
        assert_eq!(
            (1..=8).map(write_quorum).collect::<Vec<_>>(),
            [1, 2, 2, 3, 3, 4, 4, 5]
        );
        assert_eq!(
            (1..=8).map(read_quorum).collect::<Vec<_>>(),
            [1, 1, 2, 2, 3, 3, 4, 4]
        );
    }

    #[test]
    fn errors_name_the_key() {
        let key = |c: ChannelConfig| c.validate().unwrap_err().key;
        let base = ChannelConfig::default;
        assert_eq!(
            key(ChannelConfig {
                rpc_deadline: Nanos::ZERO,
                ..base()
            }),
            "rpc_deadline"
        );
        assert_eq!(
            key(ChannelConfig {
                reset_limit: 0,
                ..base()
            }),
            "reset_limit"
        );
        assert_eq!(
            key(ChannelConfig {
                detached_expiry: Nanos::from_secs(1),
                ..base()
            }),
            "detached_expiry"
        );
        let mut c = base();
        c.breaker.first_window = Nanos::from_secs(60);
        assert_eq!(key(c), "breaker.max_window");
        let mut c = base();
        c.unlock.backoff_steps = 17;
        assert_eq!(key(c), "unlock.backoff_steps");
        let mut c = base();
        c.dsync.refresh_call_deadline = Nanos::from_secs(11);
        assert_eq!(key(c), "dsync.refresh_call_deadline");
    }

    #[test]
    fn toml_keys() {
        let c: ChannelConfig =
            toml::from_str("policy = \"evict-on-timeout\"\n[breaker]\nthreshold = 5").unwrap();
        assert_eq!(c.policy, PolicyKind::EvictOnTimeout);
        assert_eq!(c.breaker.threshold, 5);
        assert!(toml::from_str::<ChannelConfig>("rpc_dedline = \"2s\"").is_err());
    }
}
