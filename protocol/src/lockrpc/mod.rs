//! Lock-RPC channel policies: SPEC §10, "slow is not dead".
//!
//! A client holds one channel per lock-server peer. When a lock RPC misses
//! its deadline, the policy decides whether the peer is slow (keep the
//! channel) or gone (evict it and re-dial), and whether the timed-out RPC
//! is left running (detached) or cancelled (a stream reset; too many and
//! the server tears the connection down). Sans-IO like the detectors
//! (SPEC §2): `handle_*(now, ..)` inputs, `poll_*` outputs, `poll_timeout`;
//! no clock, IO or randomness; ordered collections wherever iteration
//! order reaches an output.
//!
//! | file | concept |
//! |---|---|
//! | [`config`] | [`PolicyKind`], [`ChannelConfig`] and its presets, quorum rules |
//! | [`verdict`] | RustFS's `eviction_verdict` as a pure function |
//! | [`breaker`] | RustFS's per-peer request breaker |
//! | [`channel`] | [`PeerChannel`]: one client's channel to one peer |
//! | [`counters`] | [`ChannelCounters`]: what a channel counts |
//! | [`unlock`] | the retry schedule of a failed unlock |
//! | [`dsync`] | a MinIO-dsync-like lock holder (refresh, quorum), acquisition backoff |
//! | [`dsync_unlock`] | MinIO dsync's release rounds until a quorum released |
//!
//! Sources (facts carried over; no code copied):
//! - rustfs/rustfs `crates/ecstore/src/cluster/rpc/remote_locker.rs`:
//!   `eviction_verdict`, `LockPeerChannelHealth`, `maybe_evict_connection`,
//!   `detach_timed_out_rpc`, `late_release_hook`, `admit_lock_request`,
//!   `record_request_timeout`, `is_transport_failure`; the metrics of
//!   `rustfs_io_metrics::lock_metrics`;
//! - rustfs/rustfs `crates/lock/src/distributed_lock.rs` (unlock retries);
//! - issues rustfs/rustfs#7363 (reset / GOAWAY / re-dial storm), #7962
//!   (hours of timeouts against a slow peer), #4567 (statuses are not
//!   transport failures); PR #7970 (the request breaker);
//! - h2 v0.4.18 `DEFAULT_REMOTE_RESET_STREAM_MAX` = 20 (`reset_limit`, the
//!   server's limit; see deviation 2);
//! - minio/minio `internal/dsync/drwmutex.go` (refresh interval and call
//!   deadline, `refreshLock`'s rule, write quorum) and
//!   `cmd/lock-rest-server.go` (1 min lock validity).
//!
//! Deviations from the sources, and modelling choices:
//! 1. RustFS keeps one health record per peer address, shared by every
//!    client task of a process; a [`PeerChannel`] is that record plus the
//!    connection, for one process (node) and one peer. The host shares it
//!    among the node's clients.
//! 2. Resets: whether resets close a connection is h2's server-side rule
//!    (h2 v0.4.18 `src/proto/streams/recv.rs` `recv_reset`: only streams
//!    reset while pending accept count, GOAWAY past
//!    `DEFAULT_REMOTE_RESET_STREAM_MAX` = 20, `src/proto/mod.rs:34`); the
//!    host's simulated server applies it and tells the channel through
//!    [`PeerChannel::handle_goaway`]. `reset_limit` is that server's limit.
//! 3. A tear-down or transport error fails every RPC in flight on the
//!    connection, each judged as a transport failure (RustFS sees each
//!    stream's error separately, with the same result); detached RPCs on it
//!    end as late errors. After one the next request re-dials even when the
//!    verdict kept the channel (tonic re-connects a broken channel by
//!    itself); only `Evict` counts as an eviction.
//! 4. A detached RPC that gets no reply ends as a late error
//!    `detached_expiry` after it was sent: RustFS's internode RPC timeout,
//!    30 s (`crates/config/src/constants/internode.rs:40` at 20d1266). The
//!    newest `remote_locker.rs` (PR #7970) also sets a 3 s gRPC deadline
//!    on lock RPCs, which would end them sooner; not followed.
//! 5. Release: after a late grant, a late error, an abort or a transport
//!    failure of a Lock RPC (`late_release_hook`,
//!    `late_release_failure_hook` in the #7970 `remote_locker.rs`) the
//!    channel asks for a release ([`ChannelEvent::Release`]); a channel
//!    that goes offline (MinIO grid) asks only after a late grant
//!    (`drwmutex.go:532-543`). The retries (100 ms, 500 ms, 1 s) and the
//!    in-flight budget (32) belong to the host, which reports outcomes
//!    through `record_late_release`.
//! 6. The breaker's first window is a key (`breaker.first_window`, 1.5 s =
//!    the 3 s deadline / 2), not derived from the deadline; RustFS's
//!    in-flight admission limit while degraded is not modelled.
//! 7. Health pings go through the same channel path (own 1 s deadline,
//!    verdict, detach or cancel) but never through the breaker, which,
//!    as RustFS's, guards lock acquisitions only.
//! 8. The quick unlock retries wait 100 ms times the attempt number, as
//!    RustFS's; the slow tail (1, 2, 4, 8, 16 s) is SPEC §10's.
//! 9. dsync: offline servers (error, no answer by the 5 s call deadline)
//!    count for neither side, as in current MinIO, so a holder cut off from
//!    every server keeps its lock until servers answer "not found". Its
//!    channel is MinIO grid's (`internal/grid/connection.go`):
//!    `disconnect = "offline"` (requests fail at once with
//!    `ErrDisconnected` while a background dial retries every 1 to 2 s), a
//!    timed-out Lock call is never cancelled (dsync's `lock` gives its
//!    calls no deadline, grid adds 1 min, and a grant that comes after the
//!    caller stopped waiting is released) and no timeout evicts. Grid's connection pings (10 s; dead after 20 s without a pong)
//!    are not modelled: a paused or slow server stays connected.
//! 10. `PolicyKind::Dsync` is a label: [`ChannelConfig::preset`] gives the
//!     keys; a TOML table starting from the default gets RustFS's keys
//!     whatever its `policy` says.

pub mod breaker;
pub mod channel;
pub mod config;
pub mod counters;
pub mod dsync;
pub mod dsync_unlock;
pub mod unlock;
pub mod verdict;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use breaker::{Admission, Breaker, BreakerState};
pub use channel::{
    ChannelCounters, ChannelEvent, ConnId, ConnState, Decision, LateReleaseOutcome, OpCounts,
    PeerChannel, Reply, RpcId, RpcKind,
};
pub use config::{
    read_quorum, write_quorum, BreakerConfig, ChannelConfig, Disconnect, DsyncConfig, PolicyKind,
    UnlockConfig, DSYNC_UNLOCK_CALL_TIMEOUT, POLICY_KINDS,
};
pub use dsync::{retry_wait, DsyncEvent, DsyncHolder, RefreshReply};
pub use dsync_unlock::{DsyncUnlock, DsyncUnlockEvent, DSYNC_UNLOCK_ROUND_PAUSE};
pub use unlock::{UnlockEvent, UnlockRetry};
pub use verdict::{eviction_verdict, ChannelHealth, Failure, Trigger, Verdict};
