//! A cluster of SWIM agents over a fake network with a fixed latency:
//! a crashed member is declared by the others and nobody else is; a
//! member whose datagrams are lost holds a stale Dead until push/pull
//! (over its streams) brings it the refutation.

use super::tests::{id, ids, ms, s};
use super::*;
use crate::time::Nanos;

/// What travels: a datagram or a stream message.
enum Wire {
    Packet(Packet),
    Stream(Stream),
}

/// A cluster of agents over a fake network with a fixed latency; the
/// crashed members neither receive nor send; the datagrams to and from a
/// member with its UDP cut are lost (its streams still pass).
struct Cluster {
    agents: Vec<SwimAgent>,
    crashed: Vec<bool>,
    udp_cut: Vec<bool>,
    /// (delivery time, order, to, from, message)
    net: Vec<(Nanos, u64, usize, MemberId, Wire)>,
    order: u64,
    entropy: u64,
    log: Vec<(Nanos, MemberId, SwimEvent)>,
}

impl Cluster {
    fn new(config: &SwimConfig, n: u32, seed: u64) -> Cluster {
        let members = ids(n);
        let agents = members
            .iter()
            .map(|&m| SwimAgent::new(config.clone(), m, &members, s(0), seed ^ u64::from(m.0)))
            .collect();
        Cluster {
            agents,
            crashed: vec![false; n as usize],
            udp_cut: vec![false; n as usize],
            net: Vec::new(),
            order: 0,
            entropy: seed,
            log: Vec::new(),
        }
    }

    /// Runs every input due up to `until`.
    fn run(&mut self, until: Nanos) {
        loop {
            let timer = (0..self.agents.len())
                .filter(|&i| !self.crashed[i])
                .map(|i| (self.agents[i].poll_timeout().unwrap(), i))
                .min();
            let delivery = self
                .net
                .iter()
                .enumerate()
                .min_by_key(|(_, d)| (d.0, d.1))
                .map(|(k, d)| (d.0, k));
            let (now, i) = match (timer, delivery) {
                (Some((t, i)), Some((d, _))) if t < d => (t, i),
                (Some((t, i)), None) => (t, i),
                (_, Some((d, k))) if d <= until => {
                    let (_, _, to, from, wire) = self.net.swap_remove(k);
                    if self.crashed[to] {
                        continue;
                    }
                    match wire {
                        Wire::Packet(p) if !self.udp_cut[to] => {
                            self.agents[to].handle_packet(d, from, &p)
                        }
                        Wire::Packet(_) => continue,
                        Wire::Stream(m) => self.agents[to].handle_stream(d, from, &m),
                    }
                    self.collect(d, to);
                    continue;
                }
                _ => return,
            };
            if now > until {
                return;
            }
            self.entropy = self.entropy.wrapping_mul(6_364_136_223_846_793_005) + 1;
            self.agents[i].handle_timeout(now, self.entropy);
            // Progress: nothing is left due at `now`.
            assert!(self.agents[i].poll_timeout().unwrap() > now);
            self.collect(now, i);
        }
    }

    fn collect(&mut self, now: Nanos, i: usize) {
        let me = self.agents[i].me();
        while let Some(t) = self.agents[i].poll_transmit() {
            self.order += 1;
            if !self.udp_cut[i] {
                let wire = Wire::Packet(t.packet);
                self.net
                    .push((now + ms(1), self.order, t.to.0 as usize, me, wire));
            }
        }
        while let Some(t) = self.agents[i].poll_stream() {
            self.order += 1;
            let wire = Wire::Stream(t.message);
            self.net
                .push((now + ms(1), self.order, t.to.0 as usize, me, wire));
        }
        while let Some(e) = self.agents[i].poll_event() {
            self.log.push((now, me, e));
        }
    }
}

#[test]
fn a_crash_is_declared_and_agreed_on_and_nobody_else_is_suspected_for_long() {
    for variant in Variant::ALL {
        let mut c = Cluster::new(&SwimConfig::preset(variant), 8, 11);
        c.run(s(5));
        c.crashed[5] = true;
        c.run(s(60));
        for (i, a) in c.agents.iter().enumerate().filter(|&(i, _)| i != 5) {
            assert_eq!(
                a.state_of(id(5)),
                Some(MemberState::Dead),
                "{variant:?} {i}"
            );
            for m in (0..8).filter(|&m| m != 5) {
                assert_eq!(a.state_of(id(m)), Some(MemberState::Alive));
            }
        }
        let declared = c
            .log
            .iter()
            .filter(|e| matches!(e.2, SwimEvent::Declared { target, .. } if target == id(5)))
            .count();
        assert!(declared >= 1, "{variant:?}");
        assert!(c.log.iter().all(|e| match e.2 {
            SwimEvent::SuspicionStarted { target } | SwimEvent::LearnedDead { target } => {
                target == id(5)
            }
            SwimEvent::Declared { target, .. } => target == id(5),
            _ => false,
        }));
    }
}

/// The stale Dead: member 0 alone holds member 3 Dead at
/// incarnation 0 while 3 refuted to 1, and no datagram reaches 0 (nor
/// leaves it). Gossip cannot undo it; push/pull (memberlist
/// `pushPullNode`, `state.go:611` at v0.2.2) does, within two exchange
/// rounds (`push_pull_interval`, 30 s below 32 members), whichever side
/// starts the exchange. Without push/pull it holds.
#[test]
fn push_pull_undoes_a_private_stale_death_within_two_rounds() {
    for push_pull in [true, false] {
        let mut config = SwimConfig::preset(Variant::Lifeguard);
        if !push_pull {
            config.push_pull_interval = Nanos::ZERO;
        }
        let round = SwimConfig::preset(Variant::Lifeguard).push_pull_interval;
        let mut c = Cluster::new(&config, 8, 5);
        c.run(s(5));
        c.udp_cut[0] = true;
        let refuted = packet_of(Message::Alive {
            incarnation: 1,
            member: id(3),
        });
        for i in (1..8).filter(|&i| i != 3) {
            c.agents[i].handle_packet(s(5), id(3), &refuted);
            c.collect(s(5), i);
        }
        let stale = packet_of(Message::Dead {
            incarnation: 0,
            member: id(3),
            from: id(6),
        });
        c.agents[0].handle_packet(s(5), id(6), &stale);
        assert_eq!(c.agents[0].state_of(id(3)), Some(MemberState::Dead));
        c.run(s(5) + round + round);
        let back = c.agents[0].state_of(id(3)) == Some(MemberState::Alive);
        assert_eq!(back, push_pull, "push/pull {push_pull}");
        if push_pull {
            assert!(c.agents[0].incarnation_of(id(3)) >= Some(1));
        }
        // Nobody else took the stale Dead, and 0 itself was kept (its TCP
        // fallback pings answer for it).
        for i in 1..8 {
            assert_eq!(c.agents[i].state_of(id(3)), Some(MemberState::Alive), "{i}");
            assert_eq!(c.agents[i].state_of(id(0)), Some(MemberState::Alive), "{i}");
        }
    }
}

/// One message in a packet, as a peer sends it.
fn packet_of(message: Message) -> Packet {
    Packet {
        messages: vec![message],
    }
}
