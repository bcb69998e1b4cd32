//! Property tests of the channel: random inputs never panic, the counters
//! stay consistent, and the same inputs give the same outputs.

use proptest::prelude::*;

use super::channel::{ChannelEvent, ConnState, PeerChannel, Reply, RpcKind};
use super::config::{ChannelConfig, Disconnect, PolicyKind, POLICY_KINDS};
use crate::time::Nanos;

#[derive(Clone, Copy, Debug)]
enum Input {
    /// Advance the clock, then send a fresh RPC.
    Request {
        advance_ms: u64,
        kind: RpcKind,
    },
    /// Advance, then answer the `pick`-th RPC sent so far.
    Reply {
        advance_ms: u64,
        pick: usize,
        reply: Reply,
    },
    TransportError {
        advance_ms: u64,
    },
    /// Advance; the server closes the connection `back` dials ago.
    GoAway {
        advance_ms: u64,
        back: u64,
    },
    /// Advance; an offline channel's background dial connects.
    Reconnected {
        advance_ms: u64,
    },
    /// Advance to the next timer if any, else by `advance_ms`.
    Timeout {
        advance_ms: u64,
    },
}

fn kind() -> impl Strategy<Value = RpcKind> {
    prop_oneof![
        Just(RpcKind::Lock),
        Just(RpcKind::Unlock),
        Just(RpcKind::Ping),
        Just(RpcKind::Refresh)
    ]
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        Just(Reply::Granted),
        Just(Reply::Denied),
        Just(Reply::Status)
    ]
}

fn input() -> impl Strategy<Value = Input> {
    let ms = 0u64..5_000;
    prop_oneof![
        4 => (ms.clone(), kind()).prop_map(|(advance_ms, kind)| Input::Request { advance_ms, kind }),
        3 => (ms.clone(), 0usize..1_000, reply())
            .prop_map(|(advance_ms, pick, reply)| Input::Reply { advance_ms, pick, reply }),
        1 => ms.clone().prop_map(|advance_ms| Input::TransportError { advance_ms }),
        1 => (ms.clone(), 0u64..3).prop_map(|(advance_ms, back)| Input::GoAway { advance_ms, back }),
        1 => ms.clone().prop_map(|advance_ms| Input::Reconnected { advance_ms }),
        3 => ms.prop_map(|advance_ms| Input::Timeout { advance_ms }),
    ]
}

fn config(kind: PolicyKind, detached_limit: u32, reset_limit: u32) -> ChannelConfig {
    ChannelConfig {
        detached_limit,
        reset_limit,
        ..ChannelConfig::preset(kind)
    }
}

/// Runs the inputs; returns every event with its instant.
fn drive(config: ChannelConfig, inputs: &[Input]) -> (PeerChannel, Vec<(Nanos, ChannelEvent)>) {
    let mut ch = PeerChannel::new(config);
    let mut now = Nanos::ZERO;
    let mut sent = 0u64;
    let mut events = Vec::new();
    for &input in inputs {
        // The host never passes a due timer by.
        let advance = |now: &mut Nanos, ch: &mut PeerChannel, ms: u64| {
            let target = *now + Nanos::from_millis(ms);
            let mut fired = Vec::new();
            while let Some(at) = ch.poll_timeout().filter(|&at| at <= target) {
                *now = at.max(*now);
                ch.handle_timeout(*now);
                while let Some(e) = ch.poll_event() {
                    fired.push((*now, e));
                }
            }
            *now = target;
            fired
        };
        match input {
            Input::Request { advance_ms, kind } => {
                events.extend(advance(&mut now, &mut ch, advance_ms));
                ch.handle_request(now, sent, kind);
                sent += 1;
            }
            Input::Reply {
                advance_ms,
                pick,
                reply,
            } => {
                events.extend(advance(&mut now, &mut ch, advance_ms));
                if sent > 0 {
                    ch.handle_reply(now, pick as u64 % sent, reply);
                }
            }
            Input::TransportError { advance_ms } => {
                events.extend(advance(&mut now, &mut ch, advance_ms));
                ch.handle_transport_error(now);
            }
            Input::GoAway { advance_ms, back } => {
                events.extend(advance(&mut now, &mut ch, advance_ms));
                ch.handle_goaway(now, ch.connection().saturating_sub(back));
            }
            Input::Reconnected { advance_ms } => {
                events.extend(advance(&mut now, &mut ch, advance_ms));
                if ch.state() == ConnState::Offline {
                    ch.handle_reconnected(now);
                }
            }
            Input::Timeout { advance_ms } => match ch.poll_timeout() {
                Some(at) => {
                    now = at.max(now);
                    ch.handle_timeout(now);
                }
                None => events.extend(advance(&mut now, &mut ch, advance_ms)),
            },
        }
        while let Some(e) = ch.poll_event() {
            events.push((now, e));
        }
        check(&ch);
    }
    (ch, events)
}

/// The counters' bookkeeping identities.
fn check(ch: &PeerChannel) {
    let c = ch.counters();
    let cfg = ch.config();
    // Every timeout is detached or aborted.
    assert_eq!(c.detached + c.aborted, c.timeouts.total());
    // Every detached RPC ends late once, or is still running.
    assert_eq!(
        c.detached,
        c.late_success + c.late_error + ch.detached() as u64
    );
    // Every sent RPC is answered, failed, timed out, or still in flight.
    assert_eq!(
        c.sent.total(),
        c.completed + c.statuses + c.failed + c.timeouts.total() + ch.in_flight() as u64
    );
    assert!(ch.detached() <= cfg.detached_limit as usize);
    // A release follows a Lock RPC whose grant may be held: a late grant or
    // a late error (never a late "no"), an abort, a transport failure.
    assert!(c.late_releases <= c.late_success + c.late_error + c.aborted + c.failed);
    // Each channel failure is judged (evicted or suppressed), plus the
    // transport errors that found nothing in flight; a transport that goes
    // offline judges none.
    if cfg.disconnect == Disconnect::Offline {
        assert_eq!(c.evictions() + c.suppressed(), 0);
        assert_eq!(c.redials, 0);
    } else {
        assert!(c.evictions() + c.suppressed() >= c.timeouts.total() + c.failed);
        assert_eq!(c.offline_skipped + c.reconnects, 0);
    }
    assert!(c.evictions_timeout <= c.timeouts.total());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_inputs_keep_counters_consistent(
        policy in 0usize..4,
        detached_limit in 0u32..6,
        reset_limit in 1u32..4,
        inputs in proptest::collection::vec(input(), 0..200),
    ) {
        let cfg = config(POLICY_KINDS[policy], detached_limit, reset_limit);
        let (ch, events) = drive(cfg.clone(), &inputs);
        // Evictions never come closer than the cooldown.
        let evictions: Vec<Nanos> = events
            .iter()
            .filter(|(_, e)| matches!(e, ChannelEvent::Evicted { .. }))
            .map(|&(at, _)| at)
            .collect();
        for w in evictions.windows(2) {
            prop_assert!(w[1] - w[0] >= cfg.eviction_cooldown);
        }
        let c = ch.counters();
        prop_assert_eq!(
            events.iter().filter(|(_, e)| matches!(e, ChannelEvent::Release { .. })).count() as u64,
            c.late_releases
        );
    }

    #[test]
    fn same_inputs_same_outputs(
        policy in 0usize..4,
        inputs in proptest::collection::vec(input(), 0..150),
    ) {
        let cfg = config(POLICY_KINDS[policy], 3, 2);
        let (a, ea) = drive(cfg.clone(), &inputs);
        let (b, eb) = drive(cfg, &inputs);
        prop_assert_eq!(ea, eb);
        prop_assert_eq!(a.counters(), b.counters());
        prop_assert_eq!(a.poll_timeout(), b.poll_timeout());
    }
}
