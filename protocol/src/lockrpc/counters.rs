//! What a [`super::PeerChannel`] counts: RustFS's six lock-RPC metrics
//! (`rustfs_io_metrics::lock_metrics`) and fdlab's additions.

use super::channel::RpcKind;

/// Counts per RPC kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
    pub lock: u64,
    pub unlock: u64,
    pub ping: u64,
    /// dsync's refresh calls.
    pub refresh: u64,
}

impl OpCounts {
    pub(super) fn add(&mut self, kind: RpcKind) {
        match kind {
            RpcKind::Lock => self.lock += 1,
            RpcKind::Unlock => self.unlock += 1,
            RpcKind::Ping => self.ping += 1,
            RpcKind::Refresh => self.refresh += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.lock + self.unlock + self.ping + self.refresh
    }

    /// Adds `other`, field by field. Destructured without `..`: a count
    /// added to the struct fails to compile here until it is summed too.
    pub fn add_all(&mut self, other: &OpCounts) {
        let OpCounts {
            lock,
            unlock,
            ping,
            refresh,
        } = *other;
        self.lock += lock;
        self.unlock += unlock;
        self.ping += ping;
        self.refresh += refresh;
    }
}

/// RustFS's six metrics, and fdlab's additions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelCounters {
    /// RPCs sent.
    pub sent: OpCounts,
    /// Completed in time (granted or denied).
    pub completed: u64,
    /// Application statuses in time.
    pub statuses: u64,
    /// In-flight RPCs failed by a transport error or a tear-down.
    pub failed: u64,
    /// RustFS metric 1: timeouts, per op.
    pub timeouts: OpCounts,
    /// RustFS metric 2: channel evictions, per trigger.
    pub evictions_timeout: u64,
    pub evictions_transport: u64,
    /// RustFS metric 3: evictions suppressed, per verdict.
    pub suppressed_peer_recently_served: u64,
    pub suppressed_cooling_down: u64,
    /// RustFS metric 4: timed-out RPCs detached or aborted (cancelled).
    pub detached: u64,
    pub aborted: u64,
    /// RustFS metric 5: late completions of detached RPCs; an expiry or a failed
    /// connection counts as an error.
    pub late_success: u64,
    pub late_error: u64,
    /// RustFS metric 6: late releases: asked for (`Release` events: after a
    /// late grant or a late error of a Lock RPC), then as the host reports them.
    pub late_releases: u64,
    pub late_released: u64,
    pub late_partial: u64,
    pub late_failed: u64,
    /// Connections dialled after the first.
    pub redials: u64,
    /// Connections the server closed (GOAWAY) under this channel.
    pub teardowns: u64,
    /// Requests skipped by the breaker.
    pub skipped: u64,
    /// Requests failed at once because the connection was offline.
    pub offline_skipped: u64,
    /// Background dials that connected an offline channel.
    pub reconnects: u64,
    /// Replies to RPCs no longer tracked (cancelled, failed, unknown).
    pub ignored_replies: u64,
}

impl ChannelCounters {
    /// Adds `c`, field by field (every channel of a run, every run of a
    /// policy). Destructured without `..`: a counter added to the struct
    /// fails to compile here until it is summed too.
    pub fn add(&mut self, c: &ChannelCounters) {
        let ChannelCounters {
            sent,
            completed,
            statuses,
            failed,
            timeouts,
            evictions_timeout,
            evictions_transport,
            suppressed_peer_recently_served,
            suppressed_cooling_down,
            detached,
            aborted,
            late_success,
            late_error,
            late_releases,
            late_released,
            late_partial,
            late_failed,
            redials,
            teardowns,
            skipped,
            offline_skipped,
            reconnects,
            ignored_replies,
        } = *c;
        self.sent.add_all(&sent);
        self.timeouts.add_all(&timeouts);
        self.completed += completed;
        self.statuses += statuses;
        self.failed += failed;
        self.evictions_timeout += evictions_timeout;
        self.evictions_transport += evictions_transport;
        self.suppressed_peer_recently_served += suppressed_peer_recently_served;
        self.suppressed_cooling_down += suppressed_cooling_down;
        self.detached += detached;
        self.aborted += aborted;
        self.late_success += late_success;
        self.late_error += late_error;
        self.late_releases += late_releases;
        self.late_released += late_released;
        self.late_partial += late_partial;
        self.late_failed += late_failed;
        self.redials += redials;
        self.teardowns += teardowns;
        self.skipped += skipped;
        self.offline_skipped += offline_skipped;
        self.reconnects += reconnects;
        self.ignored_replies += ignored_replies;
    }

    pub fn evictions(&self) -> u64 {
        self.evictions_timeout + self.evictions_transport
    }
    pub fn suppressed(&self) -> u64 {
        self.suppressed_peer_recently_served + self.suppressed_cooling_down
    }
}
