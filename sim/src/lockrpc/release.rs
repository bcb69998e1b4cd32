//! Late releases: a Lock RPC that ended after its caller gave up (a late
//! grant, or a late error after which the server may hold the lock all the
//! same) is released by the client's process, with retries.
//!
//! Source (facts, not code): rustfs/rustfs
//! `crates/ecstore/src/cluster/rpc/remote_locker.rs` (`late_release_hook`,
//! `release_late_acquisitions`: an unlock sent at once, retried after
//! 100 ms, 500 ms and 1 s, `LATE_RELEASE_RETRY_DELAYS`; at most
//! `LATE_RELEASE_IN_FLIGHT_LIMIT` = 32 per peer, past which a release is
//! `failed` at once, unsent; the outcome is RustFS's `late_release` label:
//! released, partial or failed). Read in the version of
//! `remote_locker.rs` that carries PR rustfs/rustfs#7970 (lines 73-74,
//! 432-441, 718-784; the public index holds it without a commit id).
//! RustFS releases after a late grant, a late error, an abort and a
//! transport failure of a Lock RPC (`late_release_hook`,
//! `late_release_failure_hook`). Deviation: each late release frees one
//! grant on one server, so `partial` (some of a batch released) does not
//! occur here.

use fdlab_protocol::lockrpc::{Disconnect, LateReleaseOutcome};
use fdlab_protocol::Nanos;

use super::world::{Ev, What, World};

/// The waits before each retry of a late release that failed.
pub(super) const LATE_RELEASE_RETRIES: [Nanos; 3] = [
    Nanos::from_millis(100),
    Nanos::from_millis(500),
    Nanos::from_secs(1),
];

/// Late releases one node has under way towards one peer, at most.
pub(super) const LATE_RELEASE_IN_FLIGHT_LIMIT: u32 = 32;

/// A late release between its attempts.
#[derive(Clone, Copy, Debug)]
pub(super) struct LateRelease {
    pub acquisition: u64,
    pub server: u32,
    /// Attempts made so far.
    pub attempts: u32,
}

impl World<'_> {
    /// Starts releasing the grant RPC `rpc` of `acquisition` got (or may
    /// have got) on `server`.
    pub(super) fn start_late_release(&mut self, rpc: u64, acquisition: u64, server: u32) {
        let release = LateRelease {
            acquisition,
            server,
            attempts: 0,
        };
        let budget = self.rustfs_releases();
        let Some(a) = self.acqs.get_mut(&acquisition) else {
            return;
        };
        let node = self.clients[a.client as usize].node as usize;
        let in_flight = &mut self.nodes[node].late_in_flight[server as usize];
        if budget && *in_flight >= LATE_RELEASE_IN_FLIGHT_LIMIT {
            self.nodes[node].channels[server as usize]
                .record_late_release(LateReleaseOutcome::Failed);
            return;
        }
        *in_flight += 1;
        a.releasing += 1;
        self.late_releases.insert(rpc, release);
        self.late_release_attempt(rpc);
    }

    fn late_release_attempt(&mut self, rpc: u64) {
        let Some(r) = self.late_releases.get_mut(&rpc) else {
            return;
        };
        r.attempts += 1;
        let r = *r;
        let Some(client) = self.acqs.get(&r.acquisition).map(|a| a.client) else {
            self.late_releases.remove(&rpc);
            return;
        };
        if !self.send(
            client,
            r.server,
            r.acquisition,
            What::LateUnlock { release: rpc },
        ) {
            self.late_release_result(rpc, true);
        }
    }

    /// An attempt of late release `release` ended (`failed`: no answer).
    pub(super) fn late_release_result(&mut self, release: u64, failed: bool) {
        let Some(r) = self.late_releases.get(&release).copied() else {
            return;
        };
        let retry = LATE_RELEASE_RETRIES
            .get(r.attempts as usize - 1)
            .filter(|_| self.rustfs_releases());
        let outcome = match (failed, retry) {
            (true, Some(&wait)) => {
                self.push(self.now + wait, Ev::LateReleaseRetry { rpc: release });
                return;
            }
            (true, None) => LateReleaseOutcome::Failed,
            (false, _) => LateReleaseOutcome::Released,
        };
        self.late_releases.remove(&release);
        let Some(a) = self.acqs.get_mut(&r.acquisition) else {
            return;
        };
        debug_assert!(a.releasing > 0);
        a.releasing -= 1;
        let node = self.clients[a.client as usize].node as usize;
        let n = &mut self.nodes[node];
        debug_assert!(n.late_in_flight[r.server as usize] > 0);
        n.late_in_flight[r.server as usize] -= 1;
        n.channels[r.server as usize].record_late_release(outcome);
        self.maybe_forget(r.acquisition);
    }

    pub(super) fn late_release_retry(&mut self, rpc: u64) {
        self.late_release_attempt(rpc);
    }

    /// Whether late releases follow RustFS (a budget, retries). MinIO's
    /// dsync (grid's channel, which goes offline) releases an abandoned
    /// grant with one `sendRelease` and no budget (`drwmutex.go:532-543`,
    /// `:698-728`).
    fn rustfs_releases(&self) -> bool {
        self.config.disconnect == Disconnect::Redial
    }
}
