//! Unit tests of the memberlist v0.2.2 mechanisms of the SWIM agent:
//! probe timing and the health score, the TCP fallback ping, the
//! incarnation a probe copies, push/pull and forgetting the dead. Driven
//! by hand, as `tests.rs`.

use super::tests::{agent, alive, drain, events, id, ids, ms, packet, s, suspect};
use super::*;
use crate::time::Nanos;

/// memberlist v0.2.2 `probeNode` (state.go:289, 366) and its ticker: a
/// probe that gets its ack ends there, and the next starts at the next
/// tick of the 1 s ticker whatever the score; each ack lowers the score.
#[test]
fn health_falls_with_successful_probes_and_the_ticker_keeps_its_period() {
    let mut a = agent(Variant::Lifeguard, 0, 5);
    // Two refutations: +2.
    a.handle_packet(s(0), id(1), &packet(&[suspect(0, 0, 1)]));
    a.handle_packet(s(0), id(1), &packet(&[suspect(1, 0, 2)]));
    assert_eq!(a.health_score(), 2);
    assert_eq!(a.incarnation(), 2);
    let mut entropy = 0;
    let mut rounds = Vec::new();
    while rounds.len() < 3 {
        let now = a.poll_timeout().unwrap();
        assert!(now < s(30), "{rounds:?}");
        entropy += 1;
        a.handle_timeout(now, entropy);
        for t in drain(&mut a) {
            if let Message::Ping { seq, .. } = t.packet.messages[0] {
                rounds.push((now, a.health_score()));
                a.handle_packet(now, t.to, &packet(&[Message::Ack { seq }]));
            }
        }
    }
    // Acks lower the score; the score only stretches a probe's ack
    // deadline, so answered probes keep the ticker's 1 s.
    let scores: Vec<u32> = rounds.iter().map(|r| r.1).collect();
    assert_eq!(scores, [2, 1, 0]);
    assert_eq!(rounds[1].0 - rounds[0].0, s(1));
    assert_eq!(rounds[2].0 - rounds[1].0, s(1));
    assert_eq!(a.health_score(), 0);
}

/// memberlist v0.2.2 `probeNode` (state.go:384 and its comment): the
/// direct wait is `probe_timeout` whatever the score; the score stretches
/// the deadline of the whole probe (line 317), so the probe of a silent
/// member lasts 3 s at score 2 and the next starts at once (the ticker's
/// kept tick).
#[test]
fn the_health_score_scales_the_probe_deadline_not_the_direct_wait() {
    let mut a = agent(Variant::Lifeguard, 0, 5);
    a.handle_packet(s(0), id(1), &packet(&[suspect(0, 0, 1)]));
    a.handle_packet(s(0), id(1), &packet(&[suspect(1, 0, 2)]));
    assert_eq!(a.health_score(), 2);
    let mut entropy = 0;
    let mut pings = Vec::new();
    let mut reqs = Vec::new();
    while pings.len() < 2 {
        let now = a.poll_timeout().unwrap();
        assert!(now < s(10));
        entropy += 1;
        a.handle_timeout(now, entropy);
        for t in drain(&mut a) {
            match t.packet.messages[0] {
                Message::Ping { .. } => pings.push(now),
                // Nobody answers: the ping-reqs come after 500 ms.
                Message::PingReq { .. } => reqs.push(now),
                _ => {}
            }
        }
    }
    assert_eq!(reqs[0], pings[0] + ms(500));
    assert_eq!(pings[1], pings[0] + s(3));
    // And a TCP ping went with the ping-reqs (state.go:438-454).
    let tcp = a.poll_stream().expect("a TCP ping");
    assert!(matches!(tcp.message, Stream::Ping { .. }), "{tcp:?}");
}

/// Runs `a` until its first probe's direct wait ends (the ping-reqs and
/// the TCP ping are out); returns the probe's start, its target, the TCP
/// ping's sequence number.
fn to_indirect_phase(a: &mut SwimAgent) -> (Nanos, MemberId, u32) {
    let mut entropy = 0;
    let mut start = None;
    loop {
        let now = a.poll_timeout().unwrap();
        assert!(now < s(10));
        entropy += 1;
        a.handle_timeout(now, entropy);
        for t in drain(a) {
            if let Message::Ping { target, .. } = t.packet.messages[0] {
                start = start.or(Some((now, target)));
            }
        }
        if let Some(t) = a.poll_stream() {
            let Stream::Ping { seq, target } = t.message else {
                panic!("{t:?}")
            };
            let (at, to) = start.unwrap();
            assert_eq!((to, now), (target, at + ms(500)));
            return (at, target, seq);
        }
    }
}

/// state.go:456-475 (v0.2.2): a probe whose UDP pings and ping-reqs got no
/// ack, but whose TCP ping did, is no failure: no suspicion, and the
/// score drops as after a success.
#[test]
fn a_tcp_ack_saves_a_member_whose_udp_is_lost() {
    let mut a = agent(Variant::Lifeguard, 0, 5);
    a.handle_packet(s(0), id(2), &packet(&[suspect(0, 0, 2)]));
    assert_eq!(a.health_score(), 1);
    let (start, target, seq) = to_indirect_phase(&mut a);
    a.handle_stream(start + ms(600), target, &Stream::Ack { seq });
    // The probe still waits for UDP until its end (2 s at score 1).
    while let Some(now) = a.poll_timeout().filter(|&t| t <= start + s(2)) {
        a.handle_timeout(now, 0);
        drain(&mut a);
    }
    assert!(!events(&mut a)
        .iter()
        .any(|e| matches!(e, SwimEvent::SuspicionStarted { .. })));
    assert_eq!(a.health_score(), 0);
    // With TCP pings off, the same silence is a failure.
    let mut b = SwimAgent::new(
        SwimConfig {
            disable_tcp_pings: true,
            ..SwimConfig::preset(Variant::Lifeguard)
        },
        id(0),
        &ids(5),
        s(0),
        7,
    );
    let mut entropy = 0;
    while let Some(now) = b.poll_timeout().filter(|&t| t <= s(3)) {
        entropy += 1;
        b.handle_timeout(now, entropy);
        drain(&mut b);
        assert!(b.poll_stream().is_none());
    }
    assert!(events(&mut b)
        .iter()
        .any(|e| matches!(e, SwimEvent::SuspicionStarted { .. })));
}

/// state.go:237-239 and 495 (v0.2.2): the suspicion names the incarnation
/// the probe copied when it began; a refutation heard meanwhile makes it
/// too old to count.
#[test]
fn the_suspicion_names_the_incarnation_known_when_the_probe_began() {
    let mut a = agent(Variant::Swim, 0, 5);
    let (start, target, _) = to_indirect_phase(&mut a);
    a.handle_packet(start + ms(700), id(4), &packet(&[alive(1, target.0)]));
    while let Some(now) = a.poll_timeout().filter(|&t| t <= start + s(1)) {
        a.handle_timeout(now, 0);
        drain(&mut a);
    }
    assert_eq!(a.state_of(target), Some(MemberState::Alive));
    assert!(!events(&mut a)
        .iter()
        .any(|e| matches!(e, SwimEvent::SuspicionStarted { .. })));
}

/// Push/pull (state.go:622-657, 1283-1309 at v0.2.2): a member that holds
/// another Dead on its own, at an incarnation the others have moved past,
/// takes it back at its next exchange; the receiver answers with its state
/// as it was, then merges, and a Dead it hears is only a suspicion.
#[test]
fn push_pull_undoes_a_private_stale_death() {
    let mut a = agent(Variant::Lifeguard, 0, 4);
    let mut b = agent(Variant::Lifeguard, 1, 4);
    // a alone holds n3 Dead at incarnation 0; n3 refuted to 1 since, and b
    // knows it.
    let dead = Message::Dead {
        incarnation: 0,
        member: id(3),
        from: id(2),
    };
    a.handle_packet(ms(1), id(2), &packet(&[dead]));
    b.handle_packet(ms(1), id(3), &packet(&[alive(1, 3)]));
    assert_eq!(a.state_of(id(3)), Some(MemberState::Dead));
    // a's exchange with b, and b's answer.
    let push = Stream::PushPull {
        state: a.local_state(),
        reply: false,
    };
    b.handle_stream(ms(2), id(0), &push);
    let answer = b.poll_stream().expect("b answers");
    assert_eq!(answer.to, id(0));
    a.handle_stream(ms(3), id(1), &answer.message);
    assert_eq!(a.state_of(id(3)), Some(MemberState::Alive));
    assert_eq!(a.incarnation_of(id(3)), Some(1));
    // b heard "n3 Dead at 0" from a: older than its 1, ignored.
    assert_eq!(b.state_of(id(3)), Some(MemberState::Alive));
    // A Dead at the known incarnation is a suspicion, from the merger.
    let mut c = agent(Variant::Lifeguard, 2, 4);
    c.handle_stream(
        ms(4),
        id(0),
        &Stream::PushPull {
            state: a.local_state(),
            reply: true,
        },
    );
    assert_eq!(
        c.state_of(id(3)),
        Some(MemberState::Alive),
        "a has n3 at 1 now"
    );
    let mut d = agent(Variant::Lifeguard, 2, 4);
    let mut stale = (*b.local_state()).clone();
    // Every member is there, only n3 (at incarnation 1) in what can change.
    assert_eq!(stale.members, 4);
    assert_eq!(stale.changed.len(), 1);
    stale.changed[0].state = MemberState::Dead;
    d.handle_stream(
        ms(4),
        id(1),
        &Stream::PushPull {
            state: std::sync::Arc::new(stale),
            reply: true,
        },
    );
    assert_eq!(d.state_of(id(3)), Some(MemberState::Suspect));
}

/// resetNodes (state.go:541-562 at v0.2.2) forgets a member dead for longer
/// than `gossip_to_the_dead_time`; an Alive above incarnation 0 brings it
/// back as a new node, and Suspect or Dead about it are ignored.
#[test]
fn a_member_dead_long_enough_is_forgotten() {
    let mut a = agent(Variant::Swim, 0, 3);
    let dead = Message::Dead {
        incarnation: 4,
        member: id(2),
        from: id(1),
    };
    a.handle_packet(ms(1), id(1), &packet(&[dead]));
    assert_eq!(a.num_members(), 3);
    // Probe passes go on (n1 answers) until n2 is reaped at a pass's end.
    let mut entropy = 0;
    while a.num_members() == 3 {
        let now = a.poll_timeout().unwrap();
        assert!(now < s(120));
        entropy += 1;
        a.handle_timeout(now, entropy);
        for t in drain(&mut a) {
            if let Message::Ping { seq, .. } = t.packet.messages[0] {
                a.handle_packet(now, t.to, &packet(&[Message::Ack { seq }]));
            }
        }
    }
    let now = a.poll_timeout().unwrap();
    a.handle_packet(now, id(1), &packet(&[suspect(9, 2, 1)]));
    assert_eq!(a.state_of(id(2)), Some(MemberState::Dead));
    // Forgotten: incarnation 1 is news (it was 4 before).
    a.handle_packet(now, id(2), &packet(&[alive(1, 2)]));
    assert_eq!(a.state_of(id(2)), Some(MemberState::Alive));
    assert_eq!(a.num_members(), 3);
}

/// memberlist v0.2.2 `schedule` (state.go:104-141, from `Create`,
/// memberlist.go:227-238) makes the probe and gossip tickers when the member
/// is created, and `triggerFunc`'s stagger (state.go:146-162) ends before
/// their first tick: members created together probe at the same instants,
/// at their creation plus whole intervals.
#[test]
fn created_members_probe_at_their_creation_plus_whole_intervals() {
    let config = SwimConfig::preset(Variant::Lifeguard);
    let members = ids(5);
    // Created 300 ms and 2.3 s before 10 s, with different entropy: the
    // same ticks (probe at 10.7 s, gossip at 10.1 s).
    let early = SwimAgent::created(config.clone(), id(0), &members, s(10), ms(2_300), 7);
    let late = SwimAgent::created(config.clone(), id(1), &members, s(10), ms(300), 8);
    for a in [&early, &late] {
        assert_eq!((a.next_probe, a.next_gossip), (ms(10_700), ms(10_100)));
    }
    // Created at 10 s: the first ticks one interval later.
    let now = SwimAgent::created(config.clone(), id(2), &members, s(10), Nanos::ZERO, 9);
    assert_eq!((now.next_probe, now.next_gossip), (s(11), ms(10_200)));
    // Probes stay on that grid: each round starts at a whole second.
    let mut a = late;
    let mut starts = Vec::new();
    let mut entropy = 0;
    while starts.len() < 3 {
        let t = a.poll_timeout().unwrap();
        assert!(t < s(20), "{starts:?}");
        entropy += 1;
        a.handle_timeout(t, entropy);
        for x in drain(&mut a) {
            if let Message::Ping { seq, .. } = x.packet.messages[0] {
                starts.push(t);
                a.handle_packet(t, x.to, &packet(&[Message::Ack { seq }]));
            }
        }
    }
    assert_eq!(starts, [ms(10_700), ms(11_700), ms(12_700)]);
    // A member whose creation the host does not give draws its phases:
    // two such members (other entropy) do not tick together.
    let drawn = |e| SwimAgent::new(config.clone(), id(3), &members, s(10), e);
    let (x, y) = (drawn(1), drawn(2));
    assert_ne!(x.next_probe, y.next_probe);
    assert!(x.next_probe >= s(10) && x.next_probe < s(11));
}
