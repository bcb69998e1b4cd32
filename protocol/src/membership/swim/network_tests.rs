//! A cluster of SWIM agents over a fake network with a fixed latency:
//! a crashed member is declared by the others and nobody else is.

use super::tests::{id, ids, ms, s};
use super::*;
use crate::time::Nanos;

/// A cluster of agents over a fake network with a fixed latency; the
/// crashed members neither receive nor send.
struct Cluster {
    agents: Vec<SwimAgent>,
    crashed: Vec<bool>,
    /// (delivery time, order, to, from, packet)
    net: Vec<(Nanos, u64, usize, MemberId, Packet)>,
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
                    let (_, _, to, from, p) = self.net.swap_remove(k);
                    if !self.crashed[to] {
                        self.agents[to].handle_packet(d, from, &p);
                        self.collect(d, to);
                    }
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
            self.net
                .push((now + ms(1), self.order, t.to.0 as usize, me, t.packet));
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
