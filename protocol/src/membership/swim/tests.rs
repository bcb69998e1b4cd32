//! Unit tests of the SWIM agent, driven by hand: the peers' answers are
//! scripted step by step, or handed over from other agents one packet at
//! a time. memberlist's own mechanisms (probe timing, TCP ping, push/pull,
//! forgetting the dead) are in `memberlist_tests.rs`, a whole cluster over
//! a fake network in `network_tests.rs`, property tests in `proptests.rs`.

use super::*;
use crate::time::Nanos;

pub(super) fn id(n: u32) -> MemberId {
    MemberId(n)
}

pub(super) fn ms(x: u64) -> Nanos {
    Nanos::from_millis(x)
}

pub(super) fn s(x: u64) -> Nanos {
    Nanos::from_secs(x)
}

pub(super) fn ids(n: u32) -> Vec<MemberId> {
    (0..n).map(MemberId).collect()
}

pub(super) fn agent(variant: Variant, me: u32, n: u32) -> SwimAgent {
    SwimAgent::new(SwimConfig::preset(variant), id(me), &ids(n), s(0), 7)
}

pub(super) fn drain(a: &mut SwimAgent) -> Vec<Transmit> {
    std::iter::from_fn(|| a.poll_transmit()).collect()
}

pub(super) fn events(a: &mut SwimAgent) -> Vec<SwimEvent> {
    std::iter::from_fn(|| a.poll_event()).collect()
}

pub(super) fn packet(messages: &[Message]) -> Packet {
    Packet {
        messages: messages.to_vec(),
    }
}

pub(super) fn suspect(incarnation: u32, member: u32, from: u32) -> Message {
    Message::Suspect {
        incarnation,
        member: id(member),
        from: id(from),
    }
}

pub(super) fn alive(incarnation: u32, member: u32) -> Message {
    Message::Alive {
        incarnation,
        member: id(member),
    }
}

/// What the scripted run of [`silent_peer_run`] saw.
#[derive(Debug, Default)]
struct Trace {
    first_ping: Option<Nanos>,
    ping_reqs: Vec<(Nanos, MemberId, bool)>,
    suspected: Option<Nanos>,
    declared: Option<(Nanos, u32)>,
    /// Pings to the suspect, and whether they carried the suspicion.
    pings_while_suspect: Vec<bool>,
    health_after_first_failure: Option<u32>,
}

/// Member 0 of five; member 3 never answers. The others ack pings at
/// once and nack a ping-req for member 3 `nack_after` later (as a relay
/// does after its `probe_timeout`), if the ping-req asked for one.
fn silent_peer_run(variant: Variant, nack_after: Nanos) -> Trace {
    let silent = id(3);
    let mut a = agent(variant, 0, 5);
    let mut trace = Trace::default();
    let mut nacks: Vec<(Nanos, MemberId, u32)> = Vec::new();
    let mut entropy = 0;
    while trace.declared.is_none() {
        let timer = a.poll_timeout().unwrap();
        let nack = nacks.iter().position(|n| n.0 < timer);
        let now = match nack {
            Some(k) => {
                let (at, from, seq) = nacks.remove(k);
                a.handle_packet(at, from, &packet(&[Message::Nack { seq }]));
                at
            }
            None => {
                entropy += 1;
                a.handle_timeout(timer, entropy);
                timer
            }
        };
        assert!(now < s(60), "no declaration: {trace:?}");
        for e in events(&mut a) {
            match e {
                SwimEvent::SuspicionStarted { target } => {
                    assert_eq!(target, silent);
                    trace.suspected = Some(now);
                    trace.health_after_first_failure = Some(a.health_score());
                }
                SwimEvent::Declared {
                    target,
                    incarnation,
                } => {
                    assert_eq!(target, silent);
                    trace.declared = Some((now, incarnation));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        for t in drain(&mut a) {
            match t.packet.messages[0] {
                Message::Ping { seq, target } if target != silent => {
                    a.handle_packet(now, t.to, &packet(&[Message::Ack { seq }]));
                }
                Message::Ping { .. } => {
                    trace.first_ping.get_or_insert(now);
                    if trace.suspected.is_some() {
                        let buddy = t.packet.messages.get(1) == Some(&suspect(0, 3, 0));
                        trace.pings_while_suspect.push(buddy);
                    }
                }
                Message::PingReq { seq, target, nack } => {
                    assert_eq!(target, silent);
                    if trace.suspected.is_none() {
                        trace.ping_reqs.push((now, t.to, nack));
                    }
                    if nack {
                        nacks.push((now + nack_after, t.to, seq));
                    }
                }
                _ => {}
            }
        }
    }
    trace
}

#[test]
fn a_silent_peer_goes_ping_then_ping_req_then_suspect_then_dead_in_swim() {
    let t = silent_peer_run(Variant::Swim, ms(500));
    let ping = t.first_ping.unwrap();
    // Three ping-reqs, to three distinct members other than 0 and 3, at
    // the end of the 500 ms direct wait; no nack asked for.
    assert_eq!(t.ping_reqs.len(), 3);
    let mut via: Vec<MemberId> = t.ping_reqs.iter().map(|r| r.1).collect();
    via.sort_unstable();
    assert_eq!(via, [id(1), id(2), id(4)]);
    assert!(t.ping_reqs.iter().all(|r| r.0 == ping + ms(500) && !r.2));
    // Suspect at the end of the 1 s round, Dead 4 s later:
    // 4 x max(1, log10 5) x 1 s.
    let suspected = t.suspected.unwrap();
    assert_eq!(suspected, ping + s(1));
    assert_eq!(t.declared, Some((suspected + s(4), 0)));
    // Plain SWIM: no health score, and pings to the suspect (if the probe
    // order comes back to it within the 4 s) are plain.
    assert_eq!(t.health_after_first_failure, Some(0));
    assert!(t.pings_while_suspect.iter().all(|&buddy| !buddy));
}

#[test]
fn a_silent_peer_goes_ping_then_ping_req_then_suspect_then_dead_in_lifeguard() {
    // The relays nack 100 ms after the ping-req: in time.
    let t = silent_peer_run(Variant::Lifeguard, ms(100));
    let ping = t.first_ping.unwrap();
    assert_eq!(t.ping_reqs.len(), 3);
    assert!(t.ping_reqs.iter().all(|r| r.0 == ping + ms(500) && r.2));
    let suspected = t.suspected.unwrap();
    assert_eq!(suspected, ping + s(1));
    // No confirmations: max = 6 x 4 s = 24 s.
    assert_eq!(t.declared, Some((suspected + s(24), 0)));
    // Every nack came back: the failed probe does not raise the score.
    assert_eq!(t.health_after_first_failure, Some(0));
    // The buddy system: every ping to the suspect carries the suspicion.
    assert!(!t.pings_while_suspect.is_empty());
    assert!(t.pings_while_suspect.iter().all(|&buddy| buddy));
}

#[test]
fn missing_nacks_raise_the_health_score() {
    // A relay nacks `probe_timeout` (500 ms) after the ping-req: exactly
    // at the end of a 1 s round, too late to count (as in memberlist with
    // its LAN defaults), so all three are missing.
    let t = silent_peer_run(Variant::Lifeguard, ms(500));
    assert_eq!(t.health_after_first_failure, Some(3));
    // The score scales the probe rounds, not the suspicion timeout.
    let suspected = t.suspected.unwrap();
    assert_eq!(t.declared, Some((suspected + s(24), 0)));
}

#[test]
fn a_relayed_ack_saves_the_target_and_a_silent_one_gets_a_nack() {
    let mut agents: Vec<SwimAgent> = (0..5).map(|m| agent(Variant::Lifeguard, m, 5)).collect();
    // Score 1 for member 0, so that a success shows.
    agents[0].handle_packet(s(0), id(2), &packet(&[suspect(0, 0, 2)]));
    let mut entropy = 0;
    let (ping_to, ping_at) = loop {
        let now = agents[0].poll_timeout().unwrap();
        entropy += 1;
        agents[0].handle_timeout(now, entropy);
        let ping = drain(&mut agents[0])
            .into_iter()
            .find(|t| matches!(t.packet.messages[0], Message::Ping { .. }));
        if let Some(t) = ping {
            break (t.to, now);
        }
    };
    // The direct ping is lost; after 500 ms (never scaled), the ping-reqs
    // (gossip rounds run in between); the probe lasts 2 x 1 s (score 1).
    let wait = ping_at + ms(500);
    let reqs = loop {
        let now = agents[0].poll_timeout().unwrap();
        assert!(now <= wait);
        agents[0].handle_timeout(now, 0);
        let reqs: Vec<Transmit> = drain(&mut agents[0])
            .into_iter()
            .filter(|t| matches!(t.packet.messages[0], Message::PingReq { .. }))
            .collect();
        if !reqs.is_empty() {
            assert_eq!(now, wait);
            break reqs;
        }
    };
    assert_eq!(reqs.len(), 3);
    let at = wait + ms(100);
    // The first relay reaches the target, which acks; the relay forwards
    // the ack with the requester's sequence number.
    let relay = reqs[0].to.0 as usize;
    // (An earlier ping-req uses up the relay's first sequence number, so
    // that its own numbers differ from the requester's.)
    let busy = Message::PingReq {
        seq: 77,
        target: id(if relay == 1 { 2 } else { 1 }),
        nack: false,
    };
    agents[relay].handle_packet(at, id(4), &packet(&[busy]));
    drain(&mut agents[relay]);
    agents[relay].handle_packet(at, id(0), &reqs[0].packet);
    let ping = drain(&mut agents[relay]).remove(0);
    assert_eq!(ping.to, ping_to);
    agents[ping_to.0 as usize].handle_packet(at, id(relay as u32), &ping.packet);
    let ack = drain(&mut agents[ping_to.0 as usize]).remove(0);
    agents[relay].handle_packet(at, ping_to, &ack.packet);
    let forwarded = drain(&mut agents[relay]).remove(0);
    let Message::PingReq { seq, .. } = reqs[0].packet.messages[0] else {
        unreachable!()
    };
    assert_eq!(forwarded.to, id(0));
    assert_eq!(forwarded.packet.messages[0], Message::Ack { seq });
    // Late in the indirect phase, the ack still counts: a success.
    agents[0].handle_packet(ping_at + ms(1_900), id(relay as u32), &forwarded.packet);
    assert_eq!(agents[0].health_score(), 0);
    agents[0].handle_timeout(ping_at + s(2), 0);
    assert!(!events(&mut agents[0])
        .iter()
        .any(|e| matches!(e, SwimEvent::SuspicionStarted { .. })));
    // The second relay never hears from the target: a nack after its
    // own probe_timeout (500 ms, unscaled).
    let other = reqs[1].to.0 as usize;
    agents[other].handle_packet(at, id(0), &reqs[1].packet);
    drain(&mut agents[other]);
    let nacks = |a: &mut SwimAgent| -> Vec<Transmit> {
        drain(a)
            .into_iter()
            .filter(|t| matches!(t.packet.messages[0], Message::Nack { .. }))
            .collect()
    };
    agents[other].handle_timeout(at + ms(499), 0);
    assert!(nacks(&mut agents[other]).is_empty());
    agents[other].handle_timeout(at + ms(500), 0);
    let nack = nacks(&mut agents[other]).remove(0);
    assert_eq!(
        (nack.to, nack.packet.messages[0]),
        (id(0), Message::Nack { seq })
    );
}

#[test]
fn a_suspected_member_refutes_and_the_others_clear_the_suspicion() {
    let mut target = agent(Variant::Lifeguard, 0, 5);
    let mut other = agent(Variant::Lifeguard, 1, 5);
    let gossip = packet(&[suspect(0, 0, 2)]);
    other.handle_packet(ms(10), id(2), &gossip);
    assert_eq!(
        events(&mut other),
        [SwimEvent::SuspicionStarted { target: id(0) }]
    );
    assert_eq!(other.state_of(id(0)), Some(MemberState::Suspect));
    target.handle_packet(ms(10), id(2), &gossip);
    assert_eq!(events(&mut target), [SwimEvent::Refuted { incarnation: 1 }]);
    assert_eq!(target.incarnation(), 1);
    assert_eq!(target.health_score(), 1);
    // The same accusation again is old news.
    target.handle_packet(ms(11), id(2), &gossip);
    assert!(events(&mut target).is_empty());
    // The refutation rides on the next packet: an ack to a ping.
    target.handle_packet(
        ms(20),
        id(1),
        &packet(&[Message::Ping {
            seq: 9,
            target: id(0),
        }]),
    );
    let reply = drain(&mut target).remove(0);
    assert_eq!(reply.to, id(1));
    assert_eq!(
        reply.packet.messages,
        [Message::Ack { seq: 9 }, alive(1, 0)]
    );
    other.handle_packet(ms(21), id(0), &reply.packet);
    assert_eq!(
        events(&mut other),
        [SwimEvent::SuspicionEnded { target: id(0) }]
    );
    assert_eq!(other.state_of(id(0)), Some(MemberState::Alive));
    assert_eq!(other.incarnation_of(id(0)), Some(1));
    assert_eq!(other.suspicion_deadline(id(0)), None);
}

#[test]
fn an_alive_must_be_newer_than_the_suspicion_to_clear_it() {
    let mut a = agent(Variant::Swim, 1, 5);
    a.handle_packet(ms(1), id(2), &packet(&[suspect(2, 0, 2)]));
    assert_eq!(a.state_of(id(0)), Some(MemberState::Suspect));
    // Older, then equal: the suspicion stands.
    a.handle_packet(ms(2), id(0), &packet(&[alive(1, 0), alive(2, 0)]));
    assert_eq!(a.state_of(id(0)), Some(MemberState::Suspect));
    // An older suspect does not restart anything either.
    a.handle_packet(ms(3), id(2), &packet(&[suspect(1, 0, 3)]));
    assert_eq!(a.suspicion_deadline(id(0)), Some(ms(1) + s(4)));
    a.handle_packet(ms(4), id(0), &packet(&[alive(3, 0)]));
    assert_eq!(a.state_of(id(0)), Some(MemberState::Alive));
    assert_eq!(
        events(&mut a),
        [
            SwimEvent::SuspicionStarted { target: id(0) },
            SwimEvent::SuspicionEnded { target: id(0) }
        ]
    );
}

#[test]
fn a_member_declared_dead_refutes_and_is_revived() {
    let mut a = agent(Variant::Swim, 0, 5);
    let dead = Message::Dead {
        incarnation: 4,
        member: id(0),
        from: id(2),
    };
    a.handle_packet(ms(1), id(2), &packet(&[dead]));
    assert_eq!(events(&mut a), [SwimEvent::Refuted { incarnation: 5 }]);
    // SWIM: no health score.
    assert_eq!(a.health_score(), 0);
    let mut b = agent(Variant::Swim, 1, 5);
    b.handle_packet(ms(1), id(2), &packet(&[dead]));
    assert_eq!(events(&mut b), [SwimEvent::LearnedDead { target: id(0) }]);
    b.handle_packet(ms(2), id(0), &packet(&[alive(5, 0)]));
    assert_eq!(
        events(&mut b),
        [SwimEvent::Revived {
            target: id(0),
            incarnation: 5
        }]
    );
    assert_eq!(b.state_of(id(0)), Some(MemberState::Alive));
}

#[test]
fn the_buddy_system_lets_a_suspect_refute_at_once() {
    for (variant, refutes) in [(Variant::Lifeguard, true), (Variant::Swim, false)] {
        // A long suspicion (20 s or more), so that the probe order comes
        // back to the suspect before it is declared.
        let config = SwimConfig {
            suspicion_mult: 20,
            ..SwimConfig::preset(variant)
        };
        let mut prober = SwimAgent::new(config.clone(), id(0), &ids(5), s(0), 7);
        let mut suspect_agent = SwimAgent::new(config, id(3), &ids(5), s(0), 7);
        prober.handle_packet(ms(1), id(2), &packet(&[suspect(0, 3, 2)]));
        let mut entropy = 0;
        // Until the gossip of the suspicion is over (so that no ping to 3
        // carries it piggybacked), then until the next ping to 3.
        let ping = loop {
            let now = prober.poll_timeout().unwrap();
            assert!(now < s(20), "no ping to 3");
            entropy += 1;
            let quiet = prober.queued_updates() == 0;
            prober.handle_timeout(now, entropy);
            let mut sent = drain(&mut prober);
            // The others ack.
            for t in sent.iter().filter(|t| t.to != id(3)) {
                if let Message::Ping { seq, .. } = t.packet.messages[0] {
                    prober.handle_packet(now, t.to, &packet(&[Message::Ack { seq }]));
                }
            }
            let to_3 = sent.iter().position(|t| {
                t.to == id(3) && matches!(t.packet.messages[0], Message::Ping { .. })
            });
            if let Some(k) = to_3.filter(|_| quiet) {
                break sent.remove(k);
            }
        };
        let Message::Ping { seq, .. } = ping.packet.messages[0] else {
            unreachable!()
        };
        if refutes {
            let buddy = [Message::Ping { seq, target: id(3) }, suspect(0, 3, 0)];
            assert_eq!(ping.packet.messages, buddy);
        } else {
            // A plain ping (other updates may ride on it, none about 3).
            assert!(ping.packet.messages[1..]
                .iter()
                .all(|m| m.subject() != Some(id(3))));
        }
        suspect_agent.handle_packet(ms(900), id(0), &ping.packet);
        let refuted = events(&mut suspect_agent).contains(&SwimEvent::Refuted { incarnation: 1 });
        assert_eq!(refuted, refutes, "{variant:?}");
        assert!(matches!(
            drain(&mut suspect_agent)[0].packet.messages[0],
            Message::Ack { .. }
        ));
    }
}

#[test]
fn independent_confirmations_shorten_the_timeout() {
    // N = 100: min 8 s, max 48 s, k = 2 (see the hand computation in
    // `suspicion.rs`).
    let mut a = SwimAgent::new(SwimConfig::default(), id(0), &ids(100), s(0), 7);
    a.handle_packet(s(10), id(1), &packet(&[suspect(0, 50, 1)]));
    assert_eq!(a.suspicion_deadline(id(50)), Some(s(58)));
    // The starter again is no confirmation.
    a.handle_packet(s(11), id(1), &packet(&[suspect(0, 50, 1)]));
    assert_eq!(a.confirmations(id(50)), Some(0));
    // A first independent confirmation: 48 - 40 ln 2 / ln 3 = 22.762 s.
    a.handle_packet(s(11), id(2), &packet(&[suspect(0, 50, 2)]));
    assert_eq!(a.suspicion_deadline(id(50)), Some(s(10) + ms(22_762)));
    // Counted confirmations are re-gossiped.
    assert_eq!(a.queued_updates(), 1);
    assert!(events(&mut a) == [SwimEvent::SuspicionStarted { target: id(50) }]);
    // The second brings it to min, 8 s after the start: already past.
    a.handle_packet(s(20), id(3), &packet(&[suspect(0, 50, 3)]));
    assert_eq!(
        events(&mut a),
        [SwimEvent::Declared {
            target: id(50),
            incarnation: 0
        }]
    );
    assert_eq!(a.state_of(id(50)), Some(MemberState::Dead));

    // Plain SWIM: min from the start; confirmations change nothing.
    let mut b = SwimAgent::new(SwimConfig::preset(Variant::Swim), id(0), &ids(100), s(0), 7);
    b.handle_packet(s(10), id(1), &packet(&[suspect(0, 50, 1)]));
    b.handle_packet(s(11), id(2), &packet(&[suspect(0, 50, 2)]));
    assert_eq!(b.suspicion_deadline(id(50)), Some(s(18)));
    assert_eq!(b.confirmations(id(50)), Some(0));
}

#[test]
fn each_update_goes_out_retransmit_limit_times_to_gossip_nodes_members_a_round() {
    let mut a = agent(Variant::Swim, 0, 5);
    a.handle_packet(ms(1), id(2), &packet(&[suspect(0, 3, 2)]));
    let mut sent = 0;
    let mut entropy = 0;
    // Two seconds: ten gossip rounds, two probe rounds.
    while a.poll_timeout().unwrap() < s(2) {
        let now = a.poll_timeout().unwrap();
        entropy += 1;
        a.handle_timeout(now, entropy);
        let out = drain(&mut a);
        let gossip: Vec<&Transmit> = out
            .iter()
            .filter(|t| t.packet.messages[0] == suspect(0, 3, 2))
            .collect();
        assert!(gossip.len() <= 3);
        let mut to: Vec<MemberId> = gossip.iter().map(|t| t.to).collect();
        to.sort_unstable();
        to.dedup();
        assert_eq!(to.len(), gossip.len());
        assert!(!to.contains(&id(0)));
        sent += out
            .iter()
            .flat_map(|t| &t.packet.messages)
            .filter(|&&m| m == suspect(0, 3, 2))
            .count();
        assert!(out.iter().all(|t| t.packet.payload_bytes() <= 1_400));
    }
    // 4 x ceil(log10(5 + 1)) = 4 transmissions in all.
    assert_eq!(sent, 4);
    assert_eq!(a.queued_updates(), 0);
}
