//! Network faults of a `fdlab live` node: which fault windows of the seed's
//! schedule concern the datagrams this node sends ([`link_plan`]), and the
//! random draws that decide losses ([`MirrorDice`]).
//!
//! The simulator decides a control datagram's fate when it is sent
//! (partition, then loss, then latency), so a live node filters what it
//! sends, with `fdlab_driver::faulty` and the same schedule.
//!
//! Randomness: a heartbeat's fate is drawn from the very stream the
//! simulator draws it from ([`RunPlan::heartbeat_stream`], keyed by monitor, target
//! and interval, after the phase draw), with the same draws in the same
//! order: a loss draw when some loss is in force, then the latency sample.
//! Only the target sends on that stream, so a live run loses the same
//! heartbeats as the simulated run of the same seed, as long as both send
//! the same sequence of heartbeats (a heartbeat sent within the real
//! machine's timer lateness of a window's edge can fall on the other side
//! of it; from then on that stream's draws differ). A probe and its reply
//! share their pair's `Liveness` stream in the simulator, which two
//! processes cannot; live, each node draws its probes' and replies' losses
//! from its own stream per peer ([`RunPlan::live_probe_stream`]): seeded and
//! reproducible, but not the simulator's draws.

use std::collections::BTreeMap;

use fdlab_driver::faulty::{Dice, Effect, LinkPlan, LinkWindow, Loss};
use fdlab_driver::wire::Msg;
use fdlab_protocol::Nanos;
use fdlab_sim::dist::Sampler;
use fdlab_sim::faults::Schedule;
use fdlab_sim::plan::RunPlan;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// The fault windows on the links from node `me` to every other node, whose
/// addresses are `addrs` (by node index), and the scenario's background loss.
/// Partitions come first, in schedule order: the first that cuts decides, as
/// in the simulator.
pub fn link_plan<A: Clone>(
    schedule: &Schedule,
    base_loss: f64,
    me: u32,
    addrs: &[A],
) -> LinkPlan<A> {
    let peers = || (0..addrs.len() as u32).filter(move |&j| j != me);
    let mut windows = Vec::new();
    for p in &schedule.partitions {
        let (start, end) = (p.window.start, p.window.end);
        for j in peers() {
            // A partition cuts the same links for its whole window.
            if start < end && p.cuts(me, j, start) {
                windows.push(LinkWindow {
                    peer: addrs[j as usize].clone(),
                    start,
                    end,
                    effect: Effect::Cut { hold: p.hold },
                });
            }
        }
    }
    for lf in &schedule.link_faults {
        let (start, end) = (lf.window.start, lf.window.end);
        let loss = match lf.loss() {
            None => Loss::None,
            Some((p, None)) => Loss::Independent(p),
            Some((p, Some(bursts))) => Loss::Bursts {
                p,
                bursts: bursts.iter().map(|w| (w.start, w.end)).collect(),
            },
        };
        for j in peers() {
            if start < end && lf.applies(me, j, start) {
                windows.push(LinkWindow {
                    peer: addrs[j as usize].clone(),
                    start,
                    end,
                    effect: Effect::Degrade {
                        extra_latency: lf.extra_latency,
                        loss: loss.clone(),
                    },
                });
            }
        }
    }
    LinkPlan { base_loss, windows }
}

/// Loss draws of one live node (see the module comment).
pub struct MirrorDice<A> {
    /// Peer address -> node index.
    nodes: Vec<(A, u32)>,
    /// (monitor, interval) -> the heartbeat stream this node sends it.
    heartbeats: BTreeMap<(u32, Nanos), ChaCha8Rng>,
    /// Peer -> this node's probe and probe-reply loss stream to it.
    probes: BTreeMap<u32, ChaCha8Rng>,
    /// The scenario's control latency, sampled only to keep each heartbeat
    /// stream's draws aligned with the simulator's.
    latency: Sampler,
}

impl<A: PartialEq> MirrorDice<A> {
    /// The dice of node `me` of `plan`'s run, whose nodes have the
    /// addresses `addrs` (by node index).
    pub fn new(plan: &RunPlan<'_>, me: u32, addrs: Vec<A>, latency: Sampler) -> Self {
        let probes = (0..addrs.len() as u32)
            .filter(|&peer| peer != me)
            .map(|peer| (peer, plan.live_probe_stream(me, peer)))
            .collect();
        MirrorDice {
            nodes: addrs.into_iter().zip(0..).collect(),
            heartbeats: BTreeMap::new(),
            probes,
            latency,
        }
    }

    /// The stream of this node's heartbeats to `monitor` every `interval`,
    /// after its phase draw (from [`RunPlan::heartbeat_sender`]).
    pub fn add_heartbeats(&mut self, monitor: u32, interval: Nanos, rng: ChaCha8Rng) {
        self.heartbeats.insert((monitor, interval), rng);
    }

    fn node(&self, addr: &A) -> Option<u32> {
        self.nodes.iter().find(|(a, _)| a == addr).map(|&(_, n)| n)
    }
}

impl<A: PartialEq> Dice<A> for MirrorDice<A> {
    fn keeps(&mut self, to: &A, bytes: &[u8], keep: f64) -> bool {
        let Some(peer) = self.node(to) else {
            // Not a node of the run: nothing to mirror, only the probability.
            return keep >= 1.0;
        };
        match Msg::decode(bytes) {
            Some(Msg::Heartbeat { interval }) => {
                if let Some(rng) = self.heartbeats.get_mut(&(peer, interval)) {
                    // The simulator's `transmit_datagram`: a loss draw only
                    // when some loss is in force, then the latency sample.
                    if keep < 1.0 && rng.random::<f64>() >= keep {
                        return false;
                    }
                    let _ = self.latency.sample(rng);
                    return true;
                }
            }
            Some(Msg::Probe { .. } | Msg::ProbeReply { .. } | Msg::Frame(_)) | None => {}
        }
        if keep >= 1.0 {
            return true;
        }
        match self.probes.get_mut(&peer) {
            Some(rng) => rng.random::<f64>() < keep,
            // To itself: nothing to mirror.
            None => keep >= 1.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_scenarios::parse_scenario;
    use fdlab_sim::engine;
    use fdlab_sim::valid::ValidScenario;

    fn schedule(toml: &str) -> (ValidScenario, Schedule) {
        let s = parse_scenario("test.toml", toml, None).unwrap();
        let sched = RunPlan::build(&s, 1).schedule().clone();
        (s, sched)
    }

    const HEAD: &str = r#"
description = "x"
duration = "60s"
[topology]
kind = "mesh"
nodes = 4
monitors_per_node = "all"
[[detectors]]
name = "fixed"
kind = "fixed-timeout"
"#;

    fn s(ms: u64) -> Nanos {
        Nanos::from_millis(ms)
    }

    #[test]
    fn an_isolating_partition_cuts_every_link_of_its_node_both_ways() {
        let (_, sched) = schedule(&format!(
            "{HEAD}[[faults]]\nkind = \"partition\"\nshape = \"isolate\"\nnode = \"n2\"\nmode = \"hold\"\nat = \"10s\"\nduration = \"5s\"\n"
        ));
        let addrs = ["a0", "a1", "a2", "a3"];
        let n2 = link_plan(&sched, 0.0, 2, &addrs);
        let peers: Vec<&str> = n2.windows.iter().map(|w| w.peer).collect();
        assert_eq!(peers, ["a0", "a1", "a3"]);
        for w in &n2.windows {
            assert_eq!((w.start, w.end), (s(10_000), s(15_000)));
            assert_eq!(w.effect, Effect::Cut { hold: true });
        }
        let n0 = link_plan(&sched, 0.0, 0, &addrs);
        let peers: Vec<&str> = n0.windows.iter().map(|w| w.peer).collect();
        assert_eq!(peers, ["a2"]);
    }

    #[test]
    fn a_one_way_partition_concerns_only_its_sender() {
        let (_, sched) = schedule(&format!(
            "{HEAD}[[faults]]\nkind = \"partition\"\nshape = \"isolate\"\nnode = \"n1\"\ndirection = \"one-way\"\nat = \"5s\"\nduration = \"5s\"\n"
        ));
        let addrs = [0, 1, 2, 3];
        assert_eq!(link_plan(&sched, 0.0, 1, &addrs).windows.len(), 3);
        for me in [0, 2, 3] {
            assert!(link_plan(&sched, 0.0, me, &addrs).windows.is_empty());
        }
    }

    #[test]
    fn slow_links_and_bursty_loss_follow_their_links() {
        let (_, sched) = schedule(&format!(
            "{HEAD}[[faults]]\nkind = \"slow-link\"\nfrom = \"n0\"\nto = \"n1\"\nextra_latency = \"300ms\"\nat = \"1s\"\nduration = \"2s\"\n\
             [[faults]]\nkind = \"loss\"\nprobability = 0.5\nburst = \"1s\"\ngap = \"2s\"\nat = \"20s\"\nduration = \"20s\"\n"
        ));
        let addrs = [0, 1, 2, 3];
        let n1 = link_plan(&sched, 0.01, 1, &addrs);
        assert_eq!(n1.base_loss, 0.01);
        // Both directions of n0 <-> n1, and the loss on every link.
        let slow: Vec<_> = n1
            .windows
            .iter()
            .filter(|w| matches!(w.effect, Effect::Degrade { extra_latency, .. } if extra_latency == s(300)))
            .map(|w| w.peer)
            .collect();
        assert_eq!(slow, [0]);
        let lossy: Vec<_> = n1
            .windows
            .iter()
            .filter_map(|w| match &w.effect {
                Effect::Degrade {
                    loss: Loss::Bursts { p, bursts },
                    ..
                } => Some((w.peer, *p, bursts.len())),
                _ => None,
            })
            .collect();
        assert_eq!(lossy.len(), 3);
        assert!(lossy.iter().all(|&(_, p, n)| p == 0.5 && n > 0));
        assert!(link_plan(&sched, 0.0, 2, &addrs)
            .windows
            .iter()
            .all(|w| !matches!(w.effect, Effect::Degrade { extra_latency, .. } if extra_latency > Nanos::ZERO)));
    }

    /// A live node's heartbeat phases and loss draws are the simulator's:
    /// with a constant latency, the instants the simulator delivers a pair's
    /// heartbeats at are exactly those a live sender with the same plan
    /// would have delivered (send at the phase, then every interval; keep
    /// each one the dice keep). A different phase or a different loss draw
    /// moves or removes a delivery.
    #[test]
    fn heartbeat_phases_and_losses_are_the_simulators() {
        let latency_us = 250;
        let (scenario, _) = schedule(&format!(
            "{HEAD}[network]\nloss = 0.3\nlatency = {{ dist = \"constant\", value = \"{latency_us}us\" }}\n"
        ));
        let seed = 11;
        let (_, log) = engine::run(&scenario, seed, true);
        let log = log.unwrap();
        let plan = RunPlan::build(&scenario, seed);
        let latency = Nanos::from_micros(latency_us);
        let interval = scenario.detectors[0].config.heartbeat_interval().unwrap();
        let mut compared = 0;
        for &(m, t) in plan.pairs() {
            let simulated: Vec<Nanos> = log
                .iter()
                .filter(|r| {
                    r.event == "deliver"
                        && r.detail == "heartbeat"
                        && r.node == Some(m)
                        && r.peer == Some(t)
                })
                .map(|r| r.time)
                .collect();
            let addrs: Vec<u32> = (0..plan.nodes().len() as u32).collect();
            let mut dice = MirrorDice::new(&plan, t, addrs, Sampler::Constant(latency));
            let (phase, rng) = plan.heartbeat_sender(m, t, interval);
            dice.add_heartbeats(m, interval, rng);
            let beat = Msg::Heartbeat { interval }.encode();
            let keep = 1.0 - scenario.network.loss;
            let mut live = Vec::new();
            let mut sent = phase;
            while sent < scenario.duration {
                if dice.keeps(&m, &beat, keep) && sent + latency <= scenario.duration {
                    live.push(sent + latency);
                }
                sent = sent + interval;
            }
            assert!(live.len() > 10, "{m} -> {t}: {} deliveries", live.len());
            assert_eq!(live, simulated, "heartbeats {t} -> {m}");
            compared += 1;
        }
        assert_eq!(compared, 12);
    }

    #[test]
    fn probe_losses_are_seeded_and_reproducible() {
        let (scenario, _) = schedule(HEAD);
        let plan = RunPlan::build(&scenario, 7);
        let latency = Sampler::Constant(Nanos::from_micros(100));
        let probe = Msg::Probe { watch: 0, id: 1 }.encode();
        let addrs = vec![10, 11, 12, 13];
        let mut a = MirrorDice::new(&plan, 1, addrs.clone(), latency.clone());
        let mut b = MirrorDice::new(&plan, 1, addrs, latency);
        let fa: Vec<bool> = (0..100).map(|_| a.keeps(&10, &probe, 0.5)).collect();
        let fb: Vec<bool> = (0..100).map(|_| b.keeps(&10, &probe, 0.5)).collect();
        assert_eq!(fa, fb);
        assert!(fa.iter().any(|&k| k) && fa.iter().any(|&k| !k));
        assert!(a.keeps(&10, &probe, 1.0));
    }
}
