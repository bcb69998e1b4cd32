//! SPEC §10's acceptance items at the protocol level: one channel driven by
//! a tiny scripted host (no simulator) against slow, dead and refusing peers.

use std::collections::BTreeMap;

use super::channel::{ChannelEvent, ConnState, Decision, PeerChannel, Reply, RpcId, RpcKind};
use super::config::{ChannelConfig, PolicyKind};
use super::verdict::{Trigger, Verdict};
use crate::time::Nanos;

/// How the peer treats a request sent in a phase.
#[derive(Clone, Copy, Debug)]
pub(super) enum Peer {
    /// Replies `reply` after `service`.
    Answers { service: Nanos, reply: Reply },
    /// Never replies (black hole).
    Silent,
    /// Refuses the connection at once.
    Refuses,
}

const fn answers(service_ms: u64) -> Peer {
    Peer::Answers {
        service: Nanos::from_millis(service_ms),
        reply: Reply::Granted,
    }
}

/// What a run saw.
pub(super) struct Run {
    pub channel: PeerChannel,
    pub events: Vec<(Nanos, ChannelEvent)>,
}

impl Run {
    pub fn times(&self, wanted: impl Fn(&ChannelEvent) -> bool) -> Vec<Nanos> {
        self.events
            .iter()
            .filter(|(_, e)| wanted(e))
            .map(|&(at, _)| at)
            .collect()
    }
}

/// Sends a lock request every `every` through the phases `(until, peer)`.
pub(super) fn run(config: ChannelConfig, every: Nanos, phases: &[(Nanos, Peer)]) -> Run {
    let end = phases.last().map_or(Nanos::ZERO, |&(until, _)| until);
    let mut channel = PeerChannel::new(config);
    let mut replies: BTreeMap<(Nanos, RpcId), Reply> = BTreeMap::new();
    let mut reply_at: BTreeMap<RpcId, Nanos> = BTreeMap::new();
    let mut out = Run {
        channel: PeerChannel::new(ChannelConfig::default()),
        events: Vec::new(),
    };
    let mut next_request = Nanos::ZERO;
    let mut next_id: RpcId = 0;
    loop {
        let now = [
            Some(next_request),
            replies.keys().next().map(|&(at, _)| at),
            channel.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("a request is always due");
        if now >= end {
            break;
        }
        if let Some((&(at, rpc), &reply)) = replies.iter().next() {
            if at == now {
                replies.remove(&(at, rpc));
                reply_at.remove(&rpc);
                channel.handle_reply(now, rpc, reply);
            }
        }
        if channel.poll_timeout() == Some(now) {
            channel.handle_timeout(now);
        }
        let mut refused = false;
        if next_request == now {
            next_request = now + every;
            let rpc = next_id;
            next_id += 1;
            let peer = phases
                .iter()
                .find(|&&(until, _)| now < until)
                .map(|&(_, p)| p)
                .expect("inside a phase");
            if channel.handle_request(now, rpc, RpcKind::Lock) != Decision::Skip {
                match peer {
                    Peer::Answers { service, reply } => {
                        replies.insert((now + service, rpc), reply);
                        reply_at.insert(rpc, now + service);
                    }
                    Peer::Silent => {}
                    Peer::Refuses => refused = true,
                }
            }
        }
        if refused {
            channel.handle_transport_error(now);
        }
        while let Some(event) = channel.poll_event() {
            match event {
                ChannelEvent::Reset { rpc, .. } | ChannelEvent::Failed { rpc } => {
                    if let Some(at) = reply_at.remove(&rpc) {
                        replies.remove(&(at, rpc));
                    }
                }
                _ => {}
            }
            out.events.push((now, event));
        }
    }
    out.channel = channel;
    out
}

fn s(secs: u64) -> Nanos {
    Nanos::from_secs(secs)
}

fn ms(n: u64) -> Nanos {
    Nanos::from_millis(n)
}

fn preset(kind: PolicyKind) -> ChannelConfig {
    ChannelConfig::preset(kind)
}

/// Healthy for 10 s, then every reply takes 4 s (deadline 3 s) for 60 s.
fn slow_peer(kind: PolicyKind) -> Run {
    run(
        preset(kind),
        ms(100),
        &[(s(10), answers(10)), (s(70), answers(4_000))],
    )
}

#[test]
fn slow_peer_rustfs_keeps_the_channel() {
    let r = slow_peer(PolicyKind::Rustfs);
    let c = r.channel.counters();
    assert!(c.timeouts.lock > 500, "{c:?}");
    assert_eq!(c.evictions(), 0, "{c:?}");
    assert_eq!(c.suppressed_peer_recently_served, c.timeouts.lock);
    assert_eq!(c.redials, 0);
    assert_eq!(c.teardowns, 0);
    assert_eq!(c.aborted, 0);
    assert!(c.late_success > 500);
    // Every late grant is handed back.
    assert_eq!(c.late_releases, c.late_success);
    assert_eq!(r.channel.state(), ConnState::Connected);
}

#[test]
fn slow_peer_evict_on_timeout_evicts_and_redials_every_time() {
    let r = slow_peer(PolicyKind::EvictOnTimeout);
    let c = r.channel.counters();
    assert!(c.timeouts.lock > 500, "{c:?}");
    assert_eq!(c.evictions_timeout, c.timeouts.lock);
    assert_eq!(c.suppressed(), 0);
    assert_eq!(c.aborted, c.timeouts.lock);
    assert_eq!(
        r.times(|e| matches!(e, ChannelEvent::Reset { .. })).len() as u64,
        c.timeouts.lock
    );
    // Every request after an eviction re-dials.
    assert!(c.redials + 1 >= c.timeouts.lock, "{c:?}");
    assert_eq!(c.late_success, 0);
}

#[test]
fn breaker_caps_timeouts_after_its_first_window() {
    let every = ms(10);
    let phases = [(s(10), answers(10)), (s(130), answers(4_000))];
    let plain = run(preset(PolicyKind::Rustfs), every, &phases);
    let braked = run(preset(PolicyKind::RustfsBreaker), every, &phases);
    let late = |r: &Run| {
        r.times(|e| matches!(e, ChannelEvent::TimedOut { .. }))
            .into_iter()
            .filter(|&at| at >= s(70))
            .count()
    };
    // The slow phase starts at 10 s; the first timeouts come at 13 s.
    assert!(late(&plain) > 5_000, "{}", late(&plain));
    // From 70 s on, windows are 30 s long: a probe or two per window.
    assert!(late(&braked) <= 3, "{}", late(&braked));
    assert!(braked.channel.counters().skipped > 10_000);
    assert_eq!(braked.channel.breaker().window(), s(30));
}

#[test]
fn dead_peer_rustfs_evicts_at_most_once_per_cooldown() {
    let phases = [(s(5), answers(10)), (s(65), Peer::Silent)];
    let r = run(preset(PolicyKind::Rustfs), ms(100), &phases);
    let evictions = r.times(|e| matches!(e, ChannelEvent::Evicted { .. }));
    assert!(!evictions.is_empty());
    assert!(
        evictions.windows(2).all(|w| w[1] - w[0] >= s(5)),
        "{evictions:?}"
    );
    assert!(evictions.len() <= 60 / 5 + 1);
    let c = r.channel.counters();
    assert!(c.suppressed_cooling_down > 0);
    // Evict-on-timeout: one eviction per timeout.
    let e = run(preset(PolicyKind::EvictOnTimeout), ms(100), &phases);
    let c = e.channel.counters();
    assert_eq!(c.evictions_timeout, c.timeouts.lock);
    assert!(c.evictions_timeout > 500);
}

#[test]
fn refusing_peer_one_transport_eviction_per_cooldown() {
    let phases = [(s(5), answers(10)), (s(65), Peer::Refuses)];
    let r = run(preset(PolicyKind::Rustfs), ms(100), &phases);
    let evictions = r.times(|e| {
        matches!(
            e,
            ChannelEvent::Evicted {
                trigger: Trigger::Transport
            }
        )
    });
    assert!(
        evictions.windows(2).all(|w| w[1] - w[0] >= s(5)),
        "{evictions:?}"
    );
    assert!((12..=13).contains(&evictions.len()), "{evictions:?}");
    // A refused dial fails the request at once: no timeouts.
    assert_eq!(r.channel.counters().timeouts.total(), 0);
    let e = run(preset(PolicyKind::EvictOnTimeout), ms(100), &phases);
    let c = e.channel.counters();
    assert_eq!(c.evictions_transport, c.failed);
    assert!(c.failed >= 599, "{c:?}");
}

#[test]
fn application_statuses_never_evict() {
    let status = Peer::Answers {
        service: ms(10),
        reply: Reply::Status,
    };
    for kind in [PolicyKind::EvictOnTimeout, PolicyKind::Rustfs] {
        let r = run(preset(kind), ms(100), &[(s(60), status)]);
        let c = r.channel.counters();
        assert!(c.statuses >= 599);
        assert_eq!(
            (c.evictions(), c.suppressed(), c.redials),
            (0, 0, 0),
            "{c:?}"
        );
    }
}

#[test]
fn resets_only_once_the_detach_budget_is_exhausted() {
    let phases = [(s(5), answers(10)), (s(35), Peer::Silent)];
    // Default budget (256): ~135 detached at a time, never a reset.
    let r = run(preset(PolicyKind::Rustfs), ms(200), &phases);
    let c = r.channel.counters();
    assert_eq!((c.aborted, c.teardowns), (0, 0), "{c:?}");
    assert!(r
        .times(|e| matches!(e, ChannelEvent::Reset { .. }))
        .is_empty());
    // A budget of 4 is exhausted: resets.
    let mut small = preset(PolicyKind::Rustfs);
    small.detached_limit = 4;
    let r = run(small, ms(100), &phases);
    let c = r.channel.counters();
    assert!(c.aborted > 0, "{c:?}");
    // Whenever a reset is asked, the budget is full: every detach so far,
    // less every detached RPC that ended, is 4.
    let mut open = 0i64;
    for (_, e) in &r.events {
        match e {
            ChannelEvent::Detached { .. } => open += 1,
            ChannelEvent::LateCompletion { .. } => open -= 1,
            ChannelEvent::Reset { .. } => assert_eq!(open, 4),
            _ => {}
        }
    }
    // The channel never closes a connection over resets: that is the
    // server's rule (h2), told through `handle_goaway`.
    assert_eq!(c.teardowns, 0, "{c:?}");
}

#[test]
fn goaway_fails_the_connection_s_rpcs_and_only_those() {
    let mut ch = PeerChannel::new(preset(PolicyKind::Rustfs));
    assert_eq!(ch.handle_request(s(0), 1, RpcKind::Lock), Decision::Send);
    ch.handle_timeout(s(3));
    assert_eq!(ch.detached(), 1);
    ch.handle_transport_error(s(4));
    // Connection 0 broke; the next request re-dials connection 1.
    assert_eq!(
        ch.handle_request(s(4), 2, RpcKind::Lock),
        Decision::RedialAndSend
    );
    assert_eq!(ch.handle_request(s(4), 3, RpcKind::Unlock), Decision::Send);
    while ch.poll_event().is_some() {}
    // A GOAWAY on connection 1: both RPCs on it fail.
    ch.handle_goaway(s(5), 1);
    let events: Vec<_> = std::iter::from_fn(|| ch.poll_event()).collect();
    let failed: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ChannelEvent::Failed { rpc } => Some(*rpc),
            _ => None,
        })
        .collect();
    assert_eq!(failed, vec![2, 3], "{events:?}");
    assert!(events.contains(&ChannelEvent::TearDown { connection: 1 }));
    assert_eq!(ch.counters().teardowns, 1);
    assert_eq!(ch.in_flight(), 0);
}

#[test]
fn late_grant_is_released_late_denial_is_not() {
    let mut ch = PeerChannel::new(preset(PolicyKind::Rustfs));
    assert_eq!(ch.handle_request(s(0), 1, RpcKind::Lock), Decision::Send);
    assert_eq!(ch.handle_request(s(0), 2, RpcKind::Lock), Decision::Send);
    assert_eq!(ch.poll_timeout(), Some(s(3)));
    ch.handle_timeout(s(3));
    let events: Vec<_> = std::iter::from_fn(|| ch.poll_event()).collect();
    assert_eq!(
        events,
        [
            ChannelEvent::TimedOut { rpc: 1 },
            ChannelEvent::Evicted {
                trigger: Trigger::Timeout
            },
            ChannelEvent::Detached { rpc: 1 },
            ChannelEvent::TimedOut { rpc: 2 },
            ChannelEvent::Suppressed {
                verdict: Verdict::CoolingDown
            },
            ChannelEvent::Detached { rpc: 2 },
        ]
    );
    // Detached RPCs expire 30 s after they were sent (RustFS's internode
    // RPC timeout).
    assert_eq!(ch.poll_timeout(), Some(s(30)));
    ch.handle_reply(s(4), 1, Reply::Granted);
    ch.handle_reply(s(4), 2, Reply::Denied);
    let events: Vec<_> = std::iter::from_fn(|| ch.poll_event()).collect();
    assert_eq!(
        events,
        [
            ChannelEvent::LateCompletion {
                rpc: 1,
                success: true
            },
            ChannelEvent::Release { rpc: 1 },
            ChannelEvent::LateCompletion {
                rpc: 2,
                success: true
            },
        ]
    );
    assert_eq!(ch.counters().late_releases, 1);
    assert_eq!(ch.poll_timeout(), None);
    // A reply to nothing tracked is ignored.
    ch.handle_reply(s(5), 1, Reply::Granted);
    assert_eq!(ch.counters().ignored_replies, 1);
    // The evicted channel re-dials on the next request.
    assert_eq!(
        ch.handle_request(s(6), 3, RpcKind::Ping),
        Decision::RedialAndSend
    );
    assert_eq!(ch.poll_timeout(), Some(s(7)));
}

#[test]
fn transport_error_fails_in_flight_and_detached_rpcs() {
    let mut ch = PeerChannel::new(preset(PolicyKind::Rustfs));
    ch.handle_request(s(0), 1, RpcKind::Lock);
    ch.handle_reply(s(0), 1, Reply::Granted);
    ch.handle_request(s(1), 2, RpcKind::Lock);
    ch.handle_timeout(s(4)); // 2 detached, kept: served 4 s ago
    ch.handle_request(s(4), 3, RpcKind::Unlock);
    while ch.poll_event().is_some() {}
    ch.handle_transport_error(s(5));
    let events: Vec<_> = std::iter::from_fn(|| ch.poll_event()).collect();
    assert_eq!(
        events,
        [
            ChannelEvent::Failed { rpc: 3 },
            ChannelEvent::Evicted {
                trigger: Trigger::Transport
            },
            ChannelEvent::LateCompletion {
                rpc: 2,
                success: false
            },
            // The server may hold what it granted: RustFS releases it.
            ChannelEvent::Release { rpc: 2 },
        ]
    );
    assert_eq!((ch.in_flight(), ch.detached()), (0, 0));
    assert_eq!(ch.state(), ConnState::Evicted);
    assert_eq!(ch.poll_timeout(), None);
}

#[test]
fn dsync_goes_offline_on_a_transport_failure_and_sends_nothing_until_reconnected() {
    let mut ch = PeerChannel::new(preset(PolicyKind::Dsync));
    assert_eq!(ch.handle_request(s(0), 1, RpcKind::Lock), Decision::Send);
    ch.handle_transport_error(s(1));
    let events: Vec<_> = std::iter::from_fn(|| ch.poll_event()).collect();
    assert_eq!(
        events,
        [ChannelEvent::Failed { rpc: 1 }, ChannelEvent::Offline]
    );
    assert_eq!(ch.state(), ConnState::Offline);
    // Offline: every kind fails at once, nothing is sent, nothing evicted.
    for (rpc, kind) in [
        (2, RpcKind::Lock),
        (3, RpcKind::Unlock),
        (4, RpcKind::Refresh),
    ] {
        assert_eq!(ch.handle_request(s(2), rpc, kind), Decision::Skip);
    }
    assert_eq!(ch.counters().offline_skipped, 3);
    assert_eq!(ch.counters().evictions(), 0);
    assert_eq!(ch.poll_timeout(), None);
    // A second failure report while offline is not a second `Offline`.
    ch.handle_transport_error(s(3));
    assert_eq!(ch.poll_event(), None);
    ch.handle_reconnected(s(4));
    assert_eq!(ch.state(), ConnState::Connected);
    assert_eq!(ch.connection(), 1);
    assert_eq!(ch.handle_request(s(4), 5, RpcKind::Refresh), Decision::Send);
    // A refresh call has dsync's 5 s deadline, not the ping's 1 s.
    assert_eq!(ch.poll_timeout(), Some(s(9)));
}

#[test]
fn dsync_deadlines_never_evict_a_slow_peer() {
    // dsync's calls wait 30 s (its unlock call timeout): a peer 40 s slow.
    let r = run(
        preset(PolicyKind::Dsync),
        ms(100),
        &[(s(10), answers(10)), (s(70), answers(40_000))],
    );
    let c = r.channel.counters();
    assert!(c.timeouts.lock > 100, "{c:?}");
    assert_eq!(c.evictions(), 0, "{c:?}");
    assert_eq!(c.suppressed(), 0, "{c:?}");
    // dsync never cancels a call: no reset, no tear-down.
    assert_eq!((c.aborted, c.teardowns), (0, 0), "{c:?}");
    assert_eq!(c.detached, c.timeouts.total(), "{c:?}");
    assert_eq!(c.redials, 0, "{c:?}");
}
