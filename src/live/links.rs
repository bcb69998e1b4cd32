//! Network faults of a `fdlab live` node: which fault windows of the seed's
//! schedule concern the datagrams this node sends ([`link_plan`]), and the
//! random draws that decide losses ([`MirrorDice`]).
//!
//! The simulator decides a control datagram's fate when it is sent
//! (partition, then loss, then latency), so a live node filters what it
//! sends, with `fdlab_driver::faulty` and the same schedule.
//!
//! Randomness: a heartbeat's fate is drawn from the very stream the
//! simulator draws it from (`Purpose::Heartbeat`, keyed by monitor, target
//! and interval, after the phase draw), with the same draws in the same
//! order: a loss draw when some loss is in force, then the latency sample.
//! Only the target sends on that stream, so a live run loses the same
//! heartbeats as the simulated run of the same seed, as long as both send
//! the same sequence of heartbeats (a heartbeat sent within the real
//! machine's timer lateness of a window's edge can fall on the other side
//! of it; from then on that stream's draws differ). A probe and its reply
//! share their pair's `Liveness` stream in the simulator, which two
//! processes cannot; live, each node draws its probes' and replies' losses
//! from its own `Purpose::LiveProbe` stream per peer: seeded and
//! reproducible, but not the simulator's draws.

use std::collections::BTreeMap;

use fdlab_driver::faulty::{Dice, Effect, LinkPlan, LinkWindow, Loss};
use fdlab_driver::wire::Msg;
use fdlab_protocol::Nanos;
use fdlab_sim::dist::Sampler;
use fdlab_sim::faults::Schedule;
use fdlab_sim::rng::{Purpose, Streams};
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

/// The heartbeat stream's phase, drawn first from its stream as the
/// simulator does, and the stream left to draw the heartbeats' fates.
pub fn heartbeat_stream(
    streams: &Streams,
    monitor: u32,
    target: u32,
    interval: Nanos,
) -> (Nanos, ChaCha8Rng) {
    let ids = [u64::from(monitor), u64::from(target), interval.as_nanos()];
    let mut rng = streams.stream(Purpose::Heartbeat, &ids);
    let phase = Nanos(rng.random_range(0..interval.as_nanos().max(1)));
    (phase, rng)
}

/// Loss draws of one live node (see the module comment).
pub struct MirrorDice<A> {
    /// Peer address -> node index.
    nodes: Vec<(A, u32)>,
    /// (monitor, interval) -> the heartbeat stream this node sends it.
    heartbeats: BTreeMap<(u32, Nanos), ChaCha8Rng>,
    /// Peer -> this node's probe and probe-reply loss stream to it.
    probes: BTreeMap<u32, ChaCha8Rng>,
    streams: Streams,
    me: u32,
    /// The scenario's control latency, sampled only to keep each heartbeat
    /// stream's draws aligned with the simulator's.
    latency: Sampler,
}

impl<A: PartialEq> MirrorDice<A> {
    pub fn new(streams: Streams, me: u32, addrs: Vec<A>, latency: Sampler) -> Self {
        MirrorDice {
            nodes: addrs.into_iter().zip(0..).collect(),
            heartbeats: BTreeMap::new(),
            probes: BTreeMap::new(),
            streams,
            me,
            latency,
        }
    }

    /// The stream of this node's heartbeats to `monitor` every `interval`,
    /// after its phase draw (from [`heartbeat_stream`]).
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
        let (streams, me) = (self.streams, self.me);
        let rng = self.probes.entry(peer).or_insert_with(|| {
            streams.stream(Purpose::LiveProbe, &[u64::from(me), u64::from(peer)])
        });
        rng.random::<f64>() < keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_scenarios::parse_scenario;
    use fdlab_sim::scenario::Scenario;
    use fdlab_sim::topology::Layout;

    fn schedule(toml: &str) -> (Scenario, Schedule) {
        let s = parse_scenario("test.toml", toml, None).unwrap();
        let streams = Streams::new(1);
        let layout = Layout::build(&s.topology, &streams);
        let sched = Schedule::resolve(&s, &layout.nodes, &streams);
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

    #[test]
    fn heartbeat_draws_follow_the_simulators_stream() {
        let streams = Streams::new(7);
        let interval = s(100);
        let (phase, rng) = heartbeat_stream(&streams, 0, 1, interval);
        assert!(phase < interval);
        let latency = Sampler::Constant(Nanos::from_micros(100));
        let mut dice = MirrorDice::new(streams, 1, vec![10, 11], latency.clone());
        dice.add_heartbeats(0, interval, rng);
        // The simulator's stream: the phase, then per heartbeat a loss draw
        // (loss in force) or none.
        let mut sim = streams.stream(Purpose::Heartbeat, &[0, 1, interval.as_nanos()]);
        let _: u64 = sim.random_range(0..interval.as_nanos());
        let beat = Msg::Heartbeat { interval }.encode();
        let mut kept = 0;
        for i in 0..1000 {
            let keep = if i % 3 == 0 { 1.0 } else { 0.5 };
            let expect = !(keep < 1.0 && sim.random::<f64>() >= keep);
            assert_eq!(dice.keeps(&10, &beat, keep), expect, "heartbeat {i}");
            kept += usize::from(expect);
        }
        assert!(kept > 500 && kept < 900, "{kept}");
        // Probes: their own stream, reproducible.
        let probe = Msg::Probe { watch: 0, id: 1 }.encode();
        let mut a = MirrorDice::new(streams, 1, vec![10, 11], latency.clone());
        let mut b = MirrorDice::new(streams, 1, vec![10, 11], latency);
        let fa: Vec<bool> = (0..100).map(|_| a.keeps(&10, &probe, 0.5)).collect();
        let fb: Vec<bool> = (0..100).map(|_| b.keeps(&10, &probe, 0.5)).collect();
        assert_eq!(fa, fb);
        assert!(fa.iter().any(|&k| k) && fa.iter().any(|&k| !k));
        assert!(a.keeps(&10, &probe, 1.0));
    }
}
