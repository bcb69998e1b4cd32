//! The clients' side of a lock-RPC run: acquisitions (a Lock RPC to every
//! server through that server's `PeerChannel`, a write quorum of grants
//! within the deadline), holds, unlocks with `UnlockRetry`, late releases,
//! and dsync's refresh rounds through `DsyncHolder`.
//!
//! Sources: MinIO `internal/dsync/drwmutex.go` (lock every server, keep
//! the lock with a write quorum of grants, release partial grants on
//! failure, refresh); RustFS `crates/lock/src/distributed_lock.rs`
//! (unlock retries). An acquisition is tried once under RustFS's policies
//! (deviation: RustFS's `distributed_lock.rs` retries after 1 s attempts);
//! under dsync each attempt waits `dsync.acquire_wait` and is retried with
//! MinIO's backoff (`drwmutex.go:215-271`) for `dsync.acquire_timeout`.

use std::collections::BTreeMap;

use fdlab_protocol::lockrpc::{
    retry_wait, Decision, DsyncEvent, DsyncHolder, DsyncUnlock, DsyncUnlockEvent, PolicyKind,
    RefreshReply, Reply, RpcKind, UnlockEvent, UnlockRetry, DSYNC_UNLOCK_CALL_TIMEOUT,
    DSYNC_UNLOCK_ROUND_PAUSE,
};
use fdlab_protocol::Nanos;
use rand::RngExt;

use super::network::Draw;
use super::server::{Job, Op};
use super::world::{Acq, AcqState, Ev, RpcInfo, What, World};
use crate::dist::exponential;

impl World<'_> {
    pub(super) fn schedule_arrival(&mut self, client: u32) {
        let mean = 1e9 / self.setup.acquisitions_per_second;
        let gap = exponential(&mut self.clients[client as usize].arrivals, mean);
        let at = self.now + Nanos::from_nanos_f64(gap);
        if at <= self.setup.duration {
            self.push(at, Ev::Arrive { client });
        }
    }

    pub(super) fn arrive(&mut self, client: u32) {
        let key = self.clients[client as usize]
            .arrivals
            .random_range(0..self.setup.keys);
        self.schedule_arrival(client);
        self.out.acquisitions += 1;
        self.attempt(client, key, self.now, 1);
    }

    /// Attempt `attempt` of client `client`'s acquisition of `key`, wanted
    /// since `started`: a Lock RPC to every server.
    pub(super) fn attempt(&mut self, client: u32, key: u32, started: Nanos, attempt: u32) {
        let id = self.wanted_until.len() as u64;
        self.wanted_until.push(u64::MAX);
        self.acqs.insert(
            id,
            Acq {
                client,
                key,
                started,
                attempt,
                state: AcqState::Pending,
                grants: 0,
                failures: 0,
                outstanding: 0,
                unlocks: BTreeMap::new(),
                releasing: 0,
                group: None,
                holder: None,
            },
        );
        if self.config.policy == PolicyKind::Dsync {
            let wait = self.config.dsync.acquire_wait;
            self.push(self.now + wait, Ev::AcquireWait { acquisition: id });
        }
        for server in 0..self.setup.servers {
            if self.acqs.get(&id).map(|a| a.state) != Some(AcqState::Pending) {
                break;
            }
            if !self.send(client, server, id, What::Lock) {
                self.lock_result(id, server, false);
            }
        }
    }

    /// dsync: an attempt still without a quorum when its wait ends gives
    /// up (its replies still to come count as failures,
    /// `drwmutex.go:507-513`).
    pub(super) fn acquire_wait(&mut self, acq: u64) {
        if self.acqs.get(&acq).map(|a| a.state) == Some(AcqState::Pending) {
            self.give_up(acq);
        }
    }

    /// Sends an RPC for acquisition `acq` to `server` through the client's
    /// channel; false when the breaker skipped it.
    pub(super) fn send(&mut self, client: u32, server: u32, acq: u64, what: What) -> bool {
        let Some(a) = self.acqs.get_mut(&acq) else {
            return false;
        };
        let key = a.key;
        let rpc = self.next_rpc;
        self.next_rpc += 1;
        let (kind, op) = match what {
            What::Lock => (RpcKind::Lock, Op::Lock),
            What::Unlock | What::GroupUnlock | What::LateUnlock { .. } => {
                (RpcKind::Unlock, Op::Unlock)
            }
            What::Refresh { .. } => (RpcKind::Refresh, Op::Refresh),
        };
        let node = self.clients[client as usize].node;
        let ch = &mut self.nodes[node as usize].channels[server as usize];
        let decision = ch.handle_request(self.now, rpc, kind);
        let connection = ch.connection();
        if decision == Decision::Skip {
            self.after_channel(node, server);
            return false;
        }
        if let Some(a) = self.acqs.get_mut(&acq) {
            a.outstanding += 1;
        }
        self.rpcs.insert(
            rpc,
            RpcInfo {
                acquisition: acq,
                server,
                what,
                timed_out: false,
            },
        );
        // Breaker probes and late releases (the aftermath of a failed
        // request, at most 32 per peer) are booked apart from the use of
        // a dead peer.
        let probe = self.probing(node, server) || matches!(what, What::LateUnlock { .. });
        let job = Job {
            rpc,
            client,
            node,
            connection,
            op,
            key,
            acquisition: acq,
        };
        let pending = self.nodes[node as usize].pending_dial[server as usize];
        if decision == Decision::RedialAndSend {
            // The dial goes first; the request follows once it connected.
            self.nodes[node as usize].pending_dial[server as usize] = Some(connection);
            self.note_dial(server, probe, false);
            self.dial(server, job, probe);
        } else if pending == Some(connection) {
            // The connection is still being dialled: wait for it.
            self.note_use(server, probe);
            self.dial(server, job, probe);
        } else {
            self.note_send(server, probe);
            if let Some(at) = self.transit(Draw::Client(client), node, server) {
                self.push(at, Ev::AtServer { server, job });
            }
        }
        self.after_channel(node, server);
        true
    }

    pub(super) fn at_client(&mut self, client: u32, server: u32, rpc: u64, ok: bool) {
        let info = self.rpcs.get(&rpc).copied();
        let reply = if ok { Reply::Granted } else { Reply::Denied };
        let node = self.clients[client as usize].node;
        self.nodes[node as usize].channels[server as usize].handle_reply(self.now, rpc, reply);
        if let Some(info) = info.filter(|i| !i.timed_out) {
            self.take_rpc(rpc);
            self.result(info, ok, false);
        }
        self.after_channel(node, server);
        if let Some((_, info)) = self.last_late.take() {
            self.maybe_forget(info.acquisition);
        }
    }

    /// The outcome of an RPC for its caller: `ok` (an answer saying yes)
    /// or not; `failed`: no answer (deadline, transport).
    pub(super) fn result(&mut self, info: RpcInfo, ok: bool, failed: bool) {
        let (acq, server) = (info.acquisition, info.server);
        match info.what {
            What::Lock => self.lock_result(acq, server, ok),
            What::GroupUnlock => {
                if let Some(g) = self.acqs.get_mut(&acq).and_then(|a| a.group.as_mut()) {
                    g.handle_reply(self.now, server, !failed);
                    self.drive_group(acq);
                }
            }
            What::Unlock => {
                if let Some(u) = self
                    .acqs
                    .get_mut(&acq)
                    .and_then(|a| a.unlocks.get_mut(&server))
                {
                    // A server that answers has no lock left for us.
                    if failed {
                        u.handle_failure(self.now);
                    } else {
                        u.handle_success(self.now);
                    }
                    self.drive_unlock(acq, server);
                }
            }
            What::LateUnlock { release } => self.late_release_result(release, failed),
            What::Refresh { round } => {
                let reply = match (failed, ok) {
                    (true, _) => RefreshReply::Offline,
                    (false, true) => RefreshReply::Refreshed,
                    (false, false) => RefreshReply::NotFound,
                };
                if let Some(h) = self.acqs.get_mut(&acq).and_then(|a| a.holder.as_mut()) {
                    h.handle_refresh_reply(self.now, round, server, reply);
                    self.drive_dsync(acq);
                }
            }
        }
        self.maybe_forget(acq);
    }

    pub(super) fn lock_result(&mut self, acq: u64, server: u32, granted: bool) {
        let (servers, quorum) = (self.setup.servers, self.setup.quorum);
        let Some(a) = self.acqs.get_mut(&acq) else {
            return;
        };
        match a.state {
            AcqState::Pending => {
                if granted {
                    a.grants |= 1 << server;
                    if a.grants.count_ones() >= quorum {
                        self.acquired(acq);
                    }
                } else {
                    a.failures += 1;
                    if a.failures > servers - quorum {
                        self.give_up(acq);
                    }
                }
            }
            AcqState::Held => {
                if granted {
                    a.grants |= 1 << server;
                }
            }
            AcqState::Released | AcqState::Failed => {
                if granted {
                    self.start_unlock(acq, server);
                }
            }
        }
    }

    fn acquired(&mut self, acq: u64) {
        let now = self.now;
        let policy = self.config.policy;
        let dsync = self.config.dsync.clone();
        let (servers, quorum) = (self.setup.servers, self.setup.quorum);
        let Some(a) = self.acqs.get_mut(&acq) else {
            return;
        };
        a.state = AcqState::Held;
        let client = a.client;
        let micros = (now - a.started).as_nanos() / 1_000;
        self.out
            .latencies_us
            .push(micros.min(u64::from(u32::MAX)) as u32);
        self.out.acquired += 1;
        if policy == PolicyKind::Dsync {
            let h = DsyncHolder::granted(now, dsync, servers, quorum);
            let first = h.poll_timeout();
            a.holder = Some(Box::new(h));
            if let Some(at) = first {
                self.push(at, Ev::DsyncTimer { acquisition: acq });
            }
        }
        let hold = self
            .setup
            .hold
            .sample(&mut self.clients[client as usize].rng);
        self.push(now + hold, Ev::HoldEnd { acquisition: acq });
    }

    /// The attempt failed: it releases what it got. Under dsync the
    /// client tries again after MinIO's backoff while its acquisition
    /// timeout allows (`lockBlocking`, `drwmutex.go:215-271`); otherwise
    /// the acquisition failed.
    fn give_up(&mut self, acq: u64) {
        let dsync = self.config.dsync.clone();
        let retry = self.config.policy == PolicyKind::Dsync;
        let Some(a) = self.acqs.get_mut(&acq) else {
            return;
        };
        a.state = AcqState::Failed;
        let (grants, client, key, started, attempt) =
            (a.grants, a.client, a.key, a.started, a.attempt);
        self.wanted_until[acq as usize] = self.now.as_nanos();
        let again = retry.then(|| {
            let jitter = self.clients[client as usize].rng.random::<f64>();
            self.now + retry_wait(&dsync, attempt, jitter)
        });
        match again.filter(|&at| at < started + dsync.acquire_timeout) {
            Some(at) => {
                self.out.retried_attempts += 1;
                self.push(
                    at,
                    Ev::Retry {
                        client,
                        key,
                        started,
                        attempt: attempt + 1,
                    },
                );
            }
            None => self.out.failed_acquisitions += 1,
        }
        // MinIO's failed `lock()` calls `releaseAll` once.
        self.release_all(acq, grants, false);
    }

    pub(super) fn hold_end(&mut self, acq: u64) {
        let Some(a) = self.acqs.get_mut(&acq) else {
            return;
        };
        if a.state != AcqState::Held {
            return;
        }
        a.state = AcqState::Released;
        if let Some(h) = a.holder.as_mut() {
            h.release();
        }
        let grants = a.grants;
        self.release_all(acq, grants, true);
        self.maybe_forget(acq);
    }

    /// Releases what acquisition `acq` was granted: under dsync, MinIO's
    /// release rounds to every server (`retry`: until a quorum released or
    /// 30 s passed, as `Unlock`; else one round, as a failed `lock()`);
    /// otherwise each granted server's unlock with its retries.
    fn release_all(&mut self, acq: u64, grants: u64, retry: bool) {
        if self.config.policy != PolicyKind::Dsync {
            self.unlock_all(acq, grants);
            return;
        }
        let give_up_after = if retry {
            DSYNC_UNLOCK_CALL_TIMEOUT
        } else {
            Nanos::ZERO
        };
        let (servers, quorum) = (self.setup.servers, self.setup.quorum);
        if let Some(a) = self.acqs.get_mut(&acq) {
            a.group = Some(Box::new(DsyncUnlock::start(
                self.now,
                servers,
                quorum,
                give_up_after,
            )));
            self.drive_group(acq);
        }
    }

    /// Carries out acquisition `acq`'s dsync release rounds.
    pub(super) fn drive_group(&mut self, acq: u64) {
        loop {
            let Some(a) = self.acqs.get_mut(&acq) else {
                return;
            };
            let client = a.client;
            let Some(g) = a.group.as_mut() else {
                return;
            };
            match g.poll_event() {
                Some(DsyncUnlockEvent::Round { round }) => {
                    if round > 1 {
                        self.out.unlock_retries += u64::from(self.setup.servers);
                    }
                    for server in 0..self.setup.servers {
                        if !self.send(client, server, acq, What::GroupUnlock) {
                            // Offline: failed at once, unsent.
                            if let Some(g) = self.acqs.get_mut(&acq).and_then(|a| a.group.as_mut())
                            {
                                g.handle_reply(self.now, server, false);
                            }
                        }
                    }
                }
                Some(DsyncUnlockEvent::Wait) => {
                    let pause = DSYNC_UNLOCK_ROUND_PAUSE.as_nanos();
                    let draw = self.clients[client as usize].rng.random_range(0..pause);
                    if let Some(g) = self.acqs.get_mut(&acq).and_then(|a| a.group.as_mut()) {
                        g.handle_wait(self.now, Nanos(draw));
                    }
                }
                Some(DsyncUnlockEvent::Released) => {}
                Some(DsyncUnlockEvent::GaveUp) => {
                    self.out.unlock_give_ups += 1;
                    let w = &mut self.wanted_until[acq as usize];
                    *w = (*w).min(self.now.as_nanos());
                }
                None => {
                    if let Some(at) = g.poll_timeout() {
                        self.push(at, Ev::GroupUnlockTimer { acquisition: acq });
                    }
                    return;
                }
            }
        }
    }

    pub(super) fn group_unlock_timer(&mut self, acq: u64) {
        if let Some(g) = self.acqs.get_mut(&acq).and_then(|a| a.group.as_mut()) {
            if g.poll_timeout() == Some(self.now) {
                g.handle_timeout(self.now);
                self.drive_group(acq);
            }
        }
        self.maybe_forget(acq);
    }

    fn unlock_all(&mut self, acq: u64, grants: u64) {
        for server in 0..self.setup.servers {
            if grants & (1 << server) != 0 {
                self.start_unlock(acq, server);
            }
        }
    }

    fn start_unlock(&mut self, acq: u64, server: u32) {
        let config = self.config.unlock.clone();
        let Some(a) = self.acqs.get_mut(&acq) else {
            return;
        };
        if a.unlocks.contains_key(&server) {
            return;
        }
        a.unlocks.insert(server, UnlockRetry::start(config));
        self.drive_unlock(acq, server);
    }

    pub(super) fn drive_unlock(&mut self, acq: u64, server: u32) {
        loop {
            let Some(a) = self.acqs.get_mut(&acq) else {
                return;
            };
            let client = a.client;
            let Some(u) = a.unlocks.get_mut(&server) else {
                return;
            };
            match u.poll_event() {
                Some(UnlockEvent::Attempt { attempt }) => {
                    if attempt > 1 {
                        self.out.unlock_retries += 1;
                    }
                    // Skipped (an offline channel): failed at once.
                    if !self.send(client, server, acq, What::Unlock) {
                        if let Some(u) = self
                            .acqs
                            .get_mut(&acq)
                            .and_then(|a| a.unlocks.get_mut(&server))
                        {
                            u.handle_failure(self.now);
                        }
                    }
                }
                Some(UnlockEvent::Released) => {
                    a.unlocks.remove(&server);
                }
                Some(UnlockEvent::GaveUp) => {
                    a.unlocks.remove(&server);
                    self.out.unlock_give_ups += 1;
                    let w = &mut self.wanted_until[acq as usize];
                    *w = (*w).min(self.now.as_nanos());
                }
                None => {
                    if let Some(at) = u.poll_timeout() {
                        self.push(
                            at,
                            Ev::UnlockTimer {
                                acquisition: acq,
                                server,
                            },
                        );
                    }
                    return;
                }
            }
        }
    }

    pub(super) fn dsync_timer(&mut self, acq: u64) {
        if let Some(h) = self.acqs.get_mut(&acq).and_then(|a| a.holder.as_mut()) {
            if h.poll_timeout() == Some(self.now) {
                h.handle_timeout(self.now);
                self.drive_dsync(acq);
            }
        }
    }

    fn drive_dsync(&mut self, acq: u64) {
        loop {
            let Some(a) = self.acqs.get_mut(&acq) else {
                return;
            };
            let client = a.client;
            let Some(h) = a.holder.as_mut() else {
                return;
            };
            match h.poll_event() {
                Some(DsyncEvent::Refresh { round }) => {
                    for server in 0..self.setup.servers {
                        if !self.send(client, server, acq, What::Refresh { round }) {
                            self.result(
                                RpcInfo {
                                    acquisition: acq,
                                    server,
                                    what: What::Refresh { round },
                                    timed_out: true,
                                },
                                false,
                                true,
                            );
                        }
                    }
                }
                Some(DsyncEvent::Kept { .. }) => {}
                Some(DsyncEvent::Lost { .. }) => {
                    self.out.locks_lost += 1;
                    self.hold_end(acq);
                }
                None => {
                    if let Some(at) = h.poll_timeout() {
                        self.push(at, Ev::DsyncTimer { acquisition: acq });
                    }
                    return;
                }
            }
        }
    }

    /// Drops an acquisition nothing refers to any more.
    pub(super) fn maybe_forget(&mut self, acq: u64) {
        let Some(a) = self.acqs.get(&acq) else {
            return;
        };
        let over = matches!(a.state, AcqState::Released | AcqState::Failed);
        let holder_done = a.holder.as_ref().is_none_or(|h| h.poll_timeout().is_none())
            && a.group.as_ref().is_none_or(|g| g.is_done());
        if over && a.unlocks.is_empty() && holder_done && a.outstanding == 0 && a.releasing == 0 {
            self.acqs.remove(&acq);
        }
    }

    /// Stops tracking RPC `rpc`.
    pub(super) fn take_rpc(&mut self, rpc: u64) -> Option<RpcInfo> {
        let info = self.rpcs.remove(&rpc)?;
        if let Some(a) = self.acqs.get_mut(&info.acquisition) {
            debug_assert!(a.outstanding > 0);
            a.outstanding -= 1;
        }
        Some(info)
    }
}
