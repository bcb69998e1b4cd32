//! One client's lock-RPC channel to one peer, as a sans-IO state machine.
//!
//! Sources (facts, not code): rustfs/rustfs
//! `crates/ecstore/src/cluster/rpc/remote_locker.rs` (`execute_rpc`,
//! `maybe_evict_connection`, `detach_timed_out_rpc`, `late_release_hook`,
//! `release_late_acquisitions`, the six `lock_metrics` counters) and issues
//! rustfs/rustfs#7363 (cancel → `RST_STREAM` → `GOAWAY too_many_resets` →
//! every stream on the connection fails → re-dial) and #7962.
//!
//! The host drives it:
//! - [`PeerChannel::handle_request`] before sending an RPC: send, re-dial
//!   first, or skip (breaker open);
//! - [`PeerChannel::handle_reply`] when an answer arrives (in time, or late
//!   for a detached RPC);
//! - [`PeerChannel::handle_transport_error`] when the current connection
//!   fails (refused, reset, GOAWAY);
//! - [`PeerChannel::handle_timeout`] at [`PeerChannel::poll_timeout`]:
//!   RPC deadlines and the expiry of detached RPCs;
//! - [`PeerChannel::handle_reconnected`] when, under
//!   `disconnect = "offline"`, the host's background dial (which the
//!   host times, after [`ChannelEvent::Offline`]) connected;
//! - [`PeerChannel::poll_event`] for what to carry out or record.
//!
//! - [`PeerChannel::handle_goaway`] when the server closed a connection
//!   (h2's `GOAWAY`, e.g. `ENHANCE_YOUR_CALM too_many_resets`).
//!
//! On a deadline the RPC's caller fails; the policy judges the failure
//! (see [`super::verdict`]), then leaves the RPC running (detached, while
//! fewer than `detached_limit` are) or cancels it ([`ChannelEvent::Reset`]:
//! the host sends `RST_STREAM` if the request left, and drops it unsent if
//! it still waits for its dial). Whether resets close the connection is
//! the server's rule (h2 counts only resets of streams it has not yet
//! accepted), so the host tells the channel with `handle_goaway`: every
//! RPC on that connection fails, each a transport failure judged in turn.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::breaker::{Admission, Breaker};
use super::config::{ChannelConfig, Disconnect};
pub use super::counters::{ChannelCounters, OpCounts};
use super::verdict::{eviction_verdict, ChannelHealth, Failure, Trigger, Verdict};
use crate::time::Nanos;

/// The host's name for one RPC; fresh for every request.
pub type RpcId = u64;
/// A connection to the peer; each re-dial opens the next one.
pub type ConnId = u64;

/// What an RPC does (RustFS's `op` label, coarsened).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RpcKind {
    /// Acquire a lock: subject to the breaker; a late grant is released.
    Lock,
    Unlock,
    /// Health ping, with its own deadline.
    Ping,
    /// dsync refresh call, with `dsync.refresh_call_deadline`; counted with
    /// the pings.
    Refresh,
}

/// What the host does with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Send,
    /// The channel was evicted or broken: dial a new connection, then send.
    RedialAndSend,
    /// The breaker is open, or the connection is offline: fail the
    /// request without sending it.
    Skip,
}

/// An answer from the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The RPC completed and succeeded (lock granted, unlocked, pong).
    Granted,
    /// The RPC completed and the server said no (lock busy, not found).
    Denied,
    /// An application status from a healthy server (unauthenticated, not
    /// ready): neither a completion nor a channel failure.
    Status,
}

/// How a host's release of a late grant ended (RustFS's labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LateReleaseOutcome {
    Released,
    Partial,
    Failed,
}

/// An output for the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelEvent {
    /// A new connection is dialled.
    Redial { connection: ConnId },
    /// An RPC's deadline passed: its caller fails.
    TimedOut { rpc: RpcId },
    /// The timed-out RPC is left running.
    Detached { rpc: RpcId },
    /// The timed-out RPC is cancelled: send `RST_STREAM` on its connection
    /// (or, if the request has not left yet, drop it unsent).
    Reset { rpc: RpcId, connection: ConnId },
    /// The server closed the connection (GOAWAY).
    TearDown { connection: ConnId },
    /// An in-flight RPC failed with its connection; its caller fails.
    Failed { rpc: RpcId },
    /// The channel is evicted; the next request re-dials.
    Evicted { trigger: Trigger },
    /// A channel failure did not evict, for this reason.
    Suppressed { verdict: Verdict },
    /// A detached RPC ended (`success`: it completed).
    LateCompletion { rpc: RpcId, success: bool },
    /// A lock was granted after its caller gave up: release it now.
    Release { rpc: RpcId },
    /// Under `disconnect = "offline"`: the connection failed; requests fail
    /// at once until the host's background dial connects
    /// ([`PeerChannel::handle_reconnected`]).
    Offline,
}

/// The connection's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnState {
    Connected,
    /// Evicted by the policy; re-dial on the next request.
    Evicted,
    /// Failed under the client (transport error, tear-down) without an
    /// eviction; the next request re-dials all the same.
    Broken,
    /// Failed, under `disconnect = "offline"`: requests are skipped until
    /// a background dial connects.
    Offline,
}

#[derive(Clone, Copy, Debug)]
struct Rpc {
    kind: RpcKind,
    connection: ConnId,
    sent_at: Nanos,
    /// Its deadline while in flight, its expiry once detached.
    timer: Nanos,
    /// Admitted as the breaker's probe; holds the slot until it ends.
    probe: bool,
}

/// One client's channel to one peer under one policy.
#[derive(Clone, Debug)]
pub struct PeerChannel {
    config: ChannelConfig,
    state: ConnState,
    connection: ConnId,
    in_flight: BTreeMap<RpcId, Rpc>,
    detached: BTreeMap<RpcId, Rpc>,
    timers: BTreeSet<(Nanos, RpcId)>,
    health: ChannelHealth,
    breaker: Breaker,
    events: VecDeque<ChannelEvent>,
    counters: ChannelCounters,
}

impl PeerChannel {
    /// A channel with its first connection up. `config` must be valid.
    pub fn new(config: ChannelConfig) -> PeerChannel {
        debug_assert!(config.validate().is_ok(), "invalid channel config");
        PeerChannel {
            breaker: Breaker::new(config.breaker.clone()),
            config,
            state: ConnState::Connected,
            connection: 0,
            in_flight: BTreeMap::new(),
            detached: BTreeMap::new(),
            timers: BTreeSet::new(),
            health: ChannelHealth::default(),
            events: VecDeque::new(),
            counters: ChannelCounters::default(),
        }
    }

    /// The host wants to send RPC `rpc` at `now`. On `Send` or
    /// `RedialAndSend` the RPC is in flight until a reply, its deadline or a
    /// transport failure. An id already tracked breaks the contract: the
    /// request is skipped.
    pub fn handle_request(&mut self, now: Nanos, rpc: RpcId, kind: RpcKind) -> Decision {
        let known = self.in_flight.contains_key(&rpc) || self.detached.contains_key(&rpc);
        debug_assert!(!known, "rpc id {rpc} reused");
        if known {
            return Decision::Skip;
        }
        if self.state == ConnState::Offline {
            self.counters.offline_skipped += 1;
            return Decision::Skip;
        }
        let probe = match kind {
            RpcKind::Lock => match self.breaker.admit(now) {
                Admission::Skip => {
                    self.counters.skipped += 1;
                    return Decision::Skip;
                }
                Admission::Probe => true,
                Admission::Pass => false,
            },
            RpcKind::Unlock | RpcKind::Ping | RpcKind::Refresh => false,
        };
        let decision = if self.state == ConnState::Connected {
            Decision::Send
        } else {
            self.redial();
            Decision::RedialAndSend
        };
        let deadline = match kind {
            RpcKind::Ping => self.config.health_ping_deadline,
            RpcKind::Refresh => self.config.dsync.refresh_call_deadline,
            RpcKind::Lock | RpcKind::Unlock => self.config.rpc_deadline,
        };
        let timer = now + deadline;
        let entry = Rpc {
            kind,
            connection: self.connection,
            sent_at: now,
            timer,
            probe,
        };
        self.in_flight.insert(rpc, entry);
        self.timers.insert((timer, rpc));
        self.counters.sent.add(kind);
        decision
    }

    /// The peer answered RPC `rpc` at `now`.
    pub fn handle_reply(&mut self, now: Nanos, rpc: RpcId, reply: Reply) {
        if let Some(entry) = self.in_flight.remove(&rpc) {
            self.timers.remove(&(entry.timer, rpc));
            match reply {
                Reply::Granted | Reply::Denied => {
                    self.health.last_success = Some(now);
                    self.counters.completed += 1;
                    if entry.kind == RpcKind::Lock {
                        self.breaker.handle_success(now, entry.probe);
                    }
                }
                Reply::Status => {
                    self.counters.statuses += 1;
                    self.breaker.handle_probe_ended(entry.probe);
                }
            }
        } else if let Some(entry) = self.detached.remove(&rpc) {
            self.timers.remove(&(entry.timer, rpc));
            self.breaker.handle_probe_ended(entry.probe);
            let success = reply != Reply::Status;
            self.events
                .push_back(ChannelEvent::LateCompletion { rpc, success });
            if success {
                // RustFS: a late completion proves the peer alive, but is
                // not a breaker success.
                self.health.last_success = Some(now);
                self.counters.late_success += 1;
            } else {
                self.counters.late_error += 1;
            }
            // A late grant holds the lock; after a late error the server
            // may have granted it all the same: RustFS releases both. A
            // late "no" holds nothing.
            match reply {
                Reply::Granted if entry.kind == RpcKind::Lock => self.release(rpc),
                Reply::Status => self.release_after_error(rpc, entry.kind),
                _ => {}
            }
        } else {
            self.counters.ignored_replies += 1;
        }
    }

    /// The current connection failed at `now` (refused, reset, GOAWAY):
    /// every RPC on it fails, each judged as a transport failure; with none
    /// in flight the failure itself is judged once.
    /// Under `disconnect = "offline"` the channel goes offline instead, and
    /// no verdict is made.
    pub fn handle_transport_error(&mut self, now: Nanos) {
        if self.config.disconnect == Disconnect::Offline {
            let was = self.state;
            self.state = ConnState::Offline;
            self.fail_connection(now, self.connection);
            if was != ConnState::Offline {
                self.events.push_back(ChannelEvent::Offline);
            }
            return;
        }
        if self.state == ConnState::Connected {
            self.state = ConnState::Broken;
        }
        let failed = self.fail_connection(now, self.connection);
        if failed == 0 {
            self.judge(now, Failure::Transport);
        }
    }

    /// Timers due at or before `now` fire.
    pub fn handle_timeout(&mut self, now: Nanos) {
        while let Some(&(at, rpc)) = self.timers.first() {
            if at > now {
                break;
            }
            self.timers.pop_first();
            if let Some(entry) = self.in_flight.remove(&rpc) {
                self.deadline_passed(now, rpc, entry);
            } else if let Some(entry) = self.detached.remove(&rpc) {
                self.end_detached(rpc, entry);
            } else {
                debug_assert!(false, "a timer for untracked rpc {rpc}");
            }
        }
    }

    /// The server closed `connection` at `now` (h2's GOAWAY, heard by the
    /// client): every RPC on it fails, each judged as a transport failure;
    /// detached ones end as late errors. A connection already replaced
    /// only loses its RPCs.
    pub fn handle_goaway(&mut self, now: Nanos, connection: ConnId) {
        debug_assert!(connection <= self.connection, "goaway from the future");
        self.tear_down(now, connection);
    }

    /// An offline channel's background dial connected at `now`: a new
    /// connection is up. Ignored unless the channel is offline.
    pub fn handle_reconnected(&mut self, _now: Nanos) {
        debug_assert_eq!(
            self.state,
            ConnState::Offline,
            "reconnected while not offline"
        );
        if self.state != ConnState::Offline {
            return;
        }
        self.connection += 1;
        self.state = ConnState::Connected;
        self.counters.reconnects += 1;
    }

    /// The host's release of a late grant ended so.
    pub fn record_late_release(&mut self, outcome: LateReleaseOutcome) {
        match outcome {
            LateReleaseOutcome::Released => self.counters.late_released += 1,
            LateReleaseOutcome::Partial => self.counters.late_partial += 1,
            LateReleaseOutcome::Failed => self.counters.late_failed += 1,
        }
    }

    /// The next instant a timer fires.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.timers.first().map(|&(at, _)| at)
    }

    pub fn poll_event(&mut self) -> Option<ChannelEvent> {
        self.events.pop_front()
    }

    pub fn state(&self) -> ConnState {
        self.state
    }
    pub fn connection(&self) -> ConnId {
        self.connection
    }
    pub fn counters(&self) -> &ChannelCounters {
        &self.counters
    }
    pub fn health(&self) -> &ChannelHealth {
        &self.health
    }
    pub fn breaker(&self) -> &Breaker {
        &self.breaker
    }
    pub fn config(&self) -> &ChannelConfig {
        &self.config
    }
    /// RPCs awaiting a reply within their deadline.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
    /// Timed-out RPCs left running.
    pub fn detached(&self) -> usize {
        self.detached.len()
    }

    fn deadline_passed(&mut self, now: Nanos, rpc: RpcId, mut entry: Rpc) {
        self.counters.timeouts.add(entry.kind);
        self.events.push_back(ChannelEvent::TimedOut { rpc });
        if entry.kind == RpcKind::Lock {
            // The probe slot stays taken while the RPC runs detached.
            self.breaker.handle_timeout(now, false);
        }
        self.judge(now, Failure::Deadline);
        if self.detached.len() < self.config.detached_limit as usize {
            self.counters.detached += 1;
            self.events.push_back(ChannelEvent::Detached { rpc });
            entry.timer = entry.sent_at + self.config.detached_expiry;
            self.timers.insert((entry.timer, rpc));
            self.detached.insert(rpc, entry);
        } else {
            self.counters.aborted += 1;
            self.breaker.handle_probe_ended(entry.probe);
            self.events.push_back(ChannelEvent::Reset {
                rpc,
                connection: entry.connection,
            });
            // The server may have granted it before the reset: RustFS
            // releases after an abort as after a late error.
            self.release_after_error(rpc, entry.kind);
        }
        debug_assert!(self.detached.len() <= self.config.detached_limit as usize);
    }

    /// A detached RPC expired, or its connection failed: a late error.
    fn end_detached(&mut self, rpc: RpcId, entry: Rpc) {
        self.breaker.handle_probe_ended(entry.probe);
        self.counters.late_error += 1;
        self.events.push_back(ChannelEvent::LateCompletion {
            rpc,
            success: false,
        });
        self.release_after_error(rpc, entry.kind);
    }

    /// RustFS's `late_release_failure_hook`: after an error, an abort or
    /// a transport failure of a Lock RPC, release what the server may have
    /// granted. MinIO's dsync (a channel that goes offline, as grid's)
    /// releases only grants that arrive late (`drwmutex.go:532-543`).
    fn release_after_error(&mut self, rpc: RpcId, kind: RpcKind) {
        if kind == RpcKind::Lock && self.config.disconnect == Disconnect::Redial {
            self.release(rpc);
        }
    }

    fn release(&mut self, rpc: RpcId) {
        self.counters.late_releases += 1;
        self.events.push_back(ChannelEvent::Release { rpc });
    }

    fn tear_down(&mut self, now: Nanos, connection: ConnId) {
        self.counters.teardowns += 1;
        self.events.push_back(ChannelEvent::TearDown { connection });
        if connection == self.connection && self.state == ConnState::Connected {
            if self.config.disconnect == Disconnect::Offline {
                self.state = ConnState::Offline;
                self.events.push_back(ChannelEvent::Offline);
            } else {
                self.state = ConnState::Broken;
            }
        }
        self.fail_connection(now, connection);
    }

    /// Fails every RPC on `connection`; returns how many were in flight.
    fn fail_connection(&mut self, now: Nanos, connection: ConnId) -> usize {
        let doomed: Vec<RpcId> = self
            .in_flight
            .iter()
            .filter(|(_, e)| e.connection == connection)
            .map(|(&rpc, _)| rpc)
            .collect();
        for &rpc in &doomed {
            let Some(entry) = self.in_flight.remove(&rpc) else {
                continue;
            };
            self.timers.remove(&(entry.timer, rpc));
            self.counters.failed += 1;
            self.events.push_back(ChannelEvent::Failed { rpc });
            if entry.kind == RpcKind::Lock {
                // RustFS counts a transport failure towards the breaker,
                // and releases what the server may have granted.
                self.breaker.handle_timeout(now, entry.probe);
            }
            self.release_after_error(rpc, entry.kind);
            self.judge(now, Failure::Transport);
        }
        let orphans: Vec<RpcId> = self
            .detached
            .iter()
            .filter(|(_, e)| e.connection == connection)
            .map(|(&rpc, _)| rpc)
            .collect();
        for rpc in orphans {
            if let Some(entry) = self.detached.remove(&rpc) {
                self.timers.remove(&(entry.timer, rpc));
                self.end_detached(rpc, entry);
            }
        }
        doomed.len()
    }

    /// Applies the policy's verdict on a failure at `now`. A transport
    /// that goes offline (MinIO grid) has no verdicts.
    fn judge(&mut self, now: Nanos, failure: Failure) {
        if self.config.disconnect == Disconnect::Offline {
            return;
        }
        let Some(verdict) = eviction_verdict(
            failure,
            now,
            &self.health,
            self.config.recently_served_window(),
            self.config.eviction_cooldown,
        ) else {
            return;
        };
        match verdict {
            Verdict::Evict => {
                let Some(trigger) = failure.trigger() else {
                    return;
                };
                self.health.last_eviction = Some(now);
                self.state = ConnState::Evicted;
                match trigger {
                    Trigger::Timeout => self.counters.evictions_timeout += 1,
                    Trigger::Transport => self.counters.evictions_transport += 1,
                }
                self.events.push_back(ChannelEvent::Evicted { trigger });
            }
            Verdict::PeerRecentlyServed => {
                self.counters.suppressed_peer_recently_served += 1;
                self.events.push_back(ChannelEvent::Suppressed { verdict });
            }
            Verdict::CoolingDown => {
                self.counters.suppressed_cooling_down += 1;
                self.events.push_back(ChannelEvent::Suppressed { verdict });
            }
        }
    }

    fn redial(&mut self) {
        self.connection += 1;
        self.state = ConnState::Connected;
        self.counters.redials += 1;
        self.events.push_back(ChannelEvent::Redial {
            connection: self.connection,
        });
    }
}
