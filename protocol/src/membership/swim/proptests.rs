//! Property tests of the SWIM agent: random packets (well formed or not,
//! about known and unknown members, with stale or huge incarnations) and
//! random timer calls never make it panic, break its invariants or its
//! event contract, and the same inputs always give the same outputs.

use proptest::prelude::*;

use super::tests::{id, ids};
use super::*;
use crate::time::Nanos;

/// Members 0..6 are in the list, 6 is not.
const KNOWN: u32 = 6;
const ME: u32 = 0;

#[derive(Clone, Debug)]
enum Op {
    /// A packet from `from`, `delay` after the last input.
    Packet {
        delay: u64,
        from: u32,
        messages: Vec<Message>,
    },
    /// `handle_timeout` at the agent's `poll_timeout`.
    Timer { entropy: u64 },
    /// `handle_timeout` at an arbitrary later time (early or late).
    Advance { by: u64, entropy: u64 },
}

fn incarnation() -> impl Strategy<Value = u32> {
    prop_oneof![8 => 0u32..4, 1 => Just(u32::MAX - 1), 1 => Just(u32::MAX)]
}

fn member() -> impl Strategy<Value = MemberId> {
    (0..=KNOWN).prop_map(MemberId)
}

fn message() -> impl Strategy<Value = Message> {
    let seq = 0u32..12;
    prop_oneof![
        (seq.clone(), member()).prop_map(|(seq, target)| Message::Ping { seq, target }),
        seq.clone().prop_map(|seq| Message::Ack { seq }),
        (seq.clone(), member(), any::<bool>()).prop_map(|(seq, target, nack)| Message::PingReq {
            seq,
            target,
            nack
        }),
        seq.prop_map(|seq| Message::Nack { seq }),
        (incarnation(), member(), member()).prop_map(|(incarnation, member, from)| {
            Message::Suspect {
                incarnation,
                member,
                from,
            }
        }),
        (incarnation(), member()).prop_map(|(incarnation, member)| Message::Alive {
            incarnation,
            member
        }),
        (incarnation(), member(), member()).prop_map(|(incarnation, member, from)| {
            Message::Dead {
                incarnation,
                member,
                from,
            }
        }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..400_000_000, 1..=KNOWN, proptest::collection::vec(message(), 1..5))
            .prop_map(|(delay, from, messages)| Op::Packet { delay, from, messages }),
        4 => any::<u64>().prop_map(|entropy| Op::Timer { entropy }),
        1 => (0u64..5_000_000_000, any::<u64>())
            .prop_map(|(by, entropy)| Op::Advance { by, entropy }),
    ]
}

fn config(lifeguard: bool, small_packets: bool) -> SwimConfig {
    let variant = if lifeguard {
        Variant::Lifeguard
    } else {
        Variant::Swim
    };
    SwimConfig {
        udp_buffer_size: if small_packets { 256 } else { 1_400 },
        ..SwimConfig::preset(variant)
    }
}

/// Runs `ops` on a fresh agent, checking invariants after every input;
/// returns everything it output, in order.
fn run(config: &SwimConfig, entropy: u64, ops: &[Op]) -> Vec<String> {
    let mut a = SwimAgent::new(config.clone(), id(ME), &ids(KNOWN), Nanos::ZERO, entropy);
    let mut now = Nanos::ZERO;
    let mut out = Vec::new();
    let mut suspected: Vec<MemberId> = Vec::new();
    let mut incarnation = 0;
    for op in ops {
        match op {
            Op::Packet {
                delay,
                from,
                messages,
            } => {
                now = now + Nanos(*delay);
                let packet = Packet {
                    messages: messages.clone(),
                };
                a.handle_packet(now, MemberId(*from), &packet);
            }
            Op::Timer { entropy } => {
                now = now.max(a.poll_timeout().unwrap());
                a.handle_timeout(now, *entropy);
                assert!(
                    a.poll_timeout().unwrap() > now,
                    "due at {:?}, now {now}",
                    a.poll_timeout()
                );
            }
            Op::Advance { by, entropy } => {
                now = now + Nanos(*by);
                a.handle_timeout(now, *entropy);
                assert!(
                    a.poll_timeout().unwrap() > now,
                    "due at {:?}, now {now}",
                    a.poll_timeout()
                );
            }
        }
        while let Some(t) = a.poll_transmit() {
            assert!(!t.packet.messages.is_empty());
            assert!(t.packet.payload_bytes() <= u64::from(config.udp_buffer_size));
            out.push(format!("{now} -> {}: {:?}", t.to, t.packet.messages));
        }
        while let Some(e) = a.poll_event() {
            // Each start is followed by exactly one end, before any restart.
            match e {
                SwimEvent::SuspicionStarted { target } => {
                    assert!(!suspected.contains(&target), "{e:?} twice");
                    suspected.push(target);
                }
                SwimEvent::SuspicionEnded { target } | SwimEvent::Declared { target, .. } => {
                    assert!(suspected.contains(&target), "{e:?} without a start");
                    suspected.retain(|&m| m != target);
                }
                SwimEvent::LearnedDead { target } => suspected.retain(|&m| m != target),
                SwimEvent::Revived { .. } | SwimEvent::Refuted { .. } => {}
            }
            out.push(format!("{now} event {e:?}"));
        }
        let mut held: Vec<MemberId> = a
            .members()
            .filter(|m| m.1 == MemberState::Suspect)
            .map(|m| m.0)
            .collect();
        held.sort_unstable();
        suspected.sort_unstable();
        assert_eq!(held, suspected);
        for &m in &held {
            assert!(a.suspicion_deadline(m).unwrap() > now);
        }
        assert_eq!(a.state_of(id(ME)), Some(MemberState::Alive));
        assert!(a.incarnation() >= incarnation);
        incarnation = a.incarnation();
        assert!(a.health_score() < config.awareness_max_multiplier);
        if !config.local_health_multiplier {
            assert_eq!(a.health_score(), 0);
        }
        out.push(format!("{now} due {:?}", a.poll_timeout()));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// No panic, invariants hold, and the same inputs and entropy give the
    /// same outputs.
    #[test]
    fn random_inputs_are_safe_and_deterministic(
        lifeguard in any::<bool>(),
        small_packets in any::<bool>(),
        entropy in any::<u64>(),
        ops in proptest::collection::vec(op(), 1..150),
    ) {
        let config = config(lifeguard, small_packets);
        let first = run(&config, entropy, &ops);
        let second = run(&config, entropy, &ops);
        prop_assert_eq!(first, second);
    }
}

#[test]
fn different_entropy_gives_different_choices() {
    let ops: Vec<Op> = (0..20).map(|entropy| Op::Timer { entropy }).collect();
    let config = config(true, false);
    assert_ne!(run(&config, 1, &ops), run(&config, 2, &ops));
    // A long quiet run (probes unanswered, suspicions, deaths) stays sane.
    let long: Vec<Op> = (0..2_000).map(|entropy| Op::Timer { entropy }).collect();
    let out = run(&config, 3, &long);
    assert!(out.iter().any(|line| line.contains("Declared")));
}
