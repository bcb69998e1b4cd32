//! A run's state from its plan: the nodes with their starting clocks, the
//! data links, one slot per detector and monitored pair (pair-major), the
//! heartbeat streams (one per pair and interval), each with the random
//! stream the plan gives it.
//!
//! Invariants established here: every data link is a monitored pair (its
//! receiver monitors its sender); slot `SlotId::of(p, d)` holds detector `d`
//! of pair `p`; a heartbeat stream lists its slots in detector order.

use std::collections::VecDeque;
use std::ops::Range;

use fdlab_protocol::{Nanos, Verdict};

use super::data_plane::{DataPlane, Link, BACKPRESSURE_SHARE};
use super::faults::localize;
use super::ids::{IdVec, LinkId, NodeId, PairId, SlotId, StreamId};
use super::liveness::{HbStream, Liveness};
use super::monitoring::{DetInfo, Monitors, Slot};
use super::nodes::Node;
use super::observer::Observer;
use super::timers::{Deadline, PairTimer, Timers};
use super::{Event, Simulation};
use crate::dist::Sampler;
use crate::outcome::DetectorTimeline;
use crate::plan::RunPlan;
use crate::queue::Queue;

impl<'a, O: Observer, Q: Queue<Event>> Simulation<'a, O, Q> {
    /// Builds the part of a run that simulates the monitored pairs `range`
    /// of `plan`'s layout, on `queue`. Its state is that of these pairs and
    /// of their nodes alone (a [`NodeId`] numbers the part's nodes), so a
    /// part of one pair of a 100,000-node mesh is as cheap to build as one
    /// of a 10-node mesh.
    pub(super) fn new(
        plan: &'a RunPlan<'a>,
        range: Range<usize>,
        observer: O,
        queue: Q,
    ) -> Simulation<'a, O, Q> {
        let (scenario, layout, schedule) = (plan.scenario(), plan.layout(), plan.schedule());
        let first_pair = range.start;
        let layout_pairs = &layout.pairs[range];
        // The part's nodes: its pairs' ends (every data link is a pair, and
        // a run with links is never split).
        debug_assert!(layout.links.is_empty() || layout_pairs.len() == layout.pairs.len());
        let mut globals: Vec<u32> = layout_pairs.iter().flat_map(|&(m, t)| [m, t]).collect();
        globals.sort_unstable();
        globals.dedup();
        let local = |g: u32| globals.binary_search(&g).ok().map(NodeId::from);
        let n = globals.len();
        let end = |g: u32| local(g).expect("a pair's end is a node of its part");
        let pairs: Vec<(NodeId, NodeId)> = layout_pairs
            .iter()
            .map(|&(m, t)| (end(m), end(t)))
            .collect();
        let mut nodes: IdVec<NodeId, Node> = globals
            .iter()
            .map(|&g| Node::new(plan.clock(g)))
            .collect::<Vec<_>>()
            .into();
        // Faults on other nodes change nothing here (and are counted once
        // for the whole run, see `outcome::assemble`).
        let actions = schedule
            .actions
            .iter()
            .filter_map(|&(at, action)| Some((at, localize(action, |g| local(g).map(|n| n.0))?)))
            .collect();
        let service_rngs = if layout.links.is_empty() {
            Vec::new()
        } else {
            globals.iter().map(|&g| plan.service_stream(g)).collect()
        };
        let dets: Vec<DetInfo> = scenario
            .detectors
            .iter()
            .map(|d| DetInfo {
                heartbeat: d.config.heartbeat_interval(),
                probes: d.config.uses_probes(),
            })
            .collect();
        let stream_dets = (0..scenario.detectors.len() as u32)
            .filter(|&d| scenario.detectors[d as usize].config.uses_data_stream())
            .collect();
        let pair_count = pairs.len();
        let mut pairs_link: IdVec<PairId, Option<LinkId>> = vec![None; pair_count].into();
        let mut links: IdVec<LinkId, Link> = IdVec::default();
        for l in &layout.links {
            let pair = layout_pairs
                .binary_search(&(l.to, l.from))
                .expect("every data link is a monitored pair (Layout::build)");
            let pair = PairId::from(pair);
            let (from, to) = (end(l.from), end(l.to));
            let id = links.push(Link {
                from,
                to,
                pair,
                buffer: VecDeque::new(),
                in_flight: VecDeque::new(),
                window_used: 0,
                last_arrival: Nanos::ZERO,
                last_sent: Nanos::ZERO,
                emit_gen: 0,
                idle_gen: 0,
                on_until: None,
                workload_rng: plan.workload_stream(*l),
                latency_rng: plan.data_link_stream(*l),
            });
            pairs_link[pair] = Some(id);
            nodes[from].stage.downstream.push(id);
        }
        let d_count = scenario.detectors.len();
        let count = pair_count * d_count;
        let mut slots = Vec::with_capacity(count);
        let mut detectors = Vec::with_capacity(count);
        let mut rngs = Vec::with_capacity(count);
        for (p, (&(m, t), &(lm, _))) in layout_pairs.iter().zip(&pairs).enumerate() {
            let start = nodes[lm].clock.local(Nanos::ZERO);
            for d in 0..d_count {
                slots.push(Slot {
                    det: d as u16,
                    verdict: Verdict::Alive,
                    pair: PairId::from(p),
                    deadline: Deadline::UNKNOWN,
                    messages: 0,
                    bytes: 0,
                });
                detectors.push(plan.detector(d, start));
                rngs.push(plan.liveness_stream(m, t, d));
            }
        }
        let mut hb_streams: IdVec<StreamId, HbStream> = IdVec::default();
        let mut hb_rngs = Vec::new();
        let mut by_target: IdVec<NodeId, Vec<StreamId>> = vec![Vec::new(); n].into();
        for (p, (&(m, t), &(_, lt))) in layout_pairs.iter().zip(&pairs).enumerate() {
            let first = hb_streams.len();
            for (d, info) in dets.iter().enumerate() {
                let Some(interval) = info.heartbeat else {
                    continue;
                };
                let slot = SlotId::of(PairId::from(p), d, d_count);
                match hb_streams.as_slice()[first..]
                    .iter()
                    .position(|s| s.interval == interval)
                {
                    Some(i) => hb_streams[StreamId::from(first + i)].slots.push(slot),
                    None => {
                        by_target[lt].push(StreamId::from(hb_streams.len()));
                        hb_rngs.push(plan.heartbeat_stream(m, t, interval));
                        hb_streams.push(HbStream {
                            pair: PairId::from(p),
                            interval,
                            gen: 0,
                            slots: vec![slot],
                        });
                    }
                }
            }
        }
        let mut by_monitor: IdVec<NodeId, Vec<SlotId>> = vec![Vec::new(); n].into();
        for (i, slot) in slots.iter().enumerate() {
            by_monitor[pairs[slot.pair.ix()].0].push(SlotId::from(i));
        }
        let net = &scenario.network;
        let workload = &scenario.workload;
        Simulation {
            scenario,
            layout,
            schedule,
            actions,
            globals: globals.into(),
            now: Nanos::ZERO,
            queue,
            popped: 0,
            uncounted: 0,
            nodes,
            mon: Monitors {
                pairs,
                layout_pairs,
                first_pair,
                slots: slots.into(),
                detectors: detectors.into(),
                rngs: rngs.into(),
                timelines: (0..count)
                    .map(|_| DetectorTimeline::default())
                    .collect::<Vec<_>>()
                    .into(),
                changes: Vec::new(),
                by_monitor,
                dets,
                stream_dets,
            },
            timers: Timers {
                pairs: vec![PairTimer::default(); pair_count].into(),
                serving: None,
            },
            hb: Liveness {
                streams: hb_streams,
                rngs: hb_rngs.into(),
                by_target,
                held: vec![Vec::new(); schedule.partitions.len()],
                latency: Sampler::new(&net.latency),
            },
            data: DataPlane {
                links,
                pairs_link,
                backpressure_at: (BACKPRESSURE_SHARE * net.send_buffer as f64).ceil() as usize,
                service_rngs: service_rngs.into(),
                data_latency: Sampler::new(net.data_latency.as_ref().unwrap_or(&net.latency)),
                interval: Sampler::new(&workload.interval),
                service: Sampler::new(&workload.service_time),
                on: workload.on.as_ref().map(Sampler::new),
                off: workload.off.as_ref().map(Sampler::new),
            },
            observer,
        }
    }
}
