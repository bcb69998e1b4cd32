//! Who monitors whom, and the data links of a dataflow pipeline.

use rand::RngExt;

use crate::rng::{splitmix64, Streams};
use crate::scenario::{MonitorCount, Topology};

/// A data link of a dataflow topology: `from` sends frames to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataLink {
    pub from: u32,
    pub to: u32,
}

/// The built topology of one run.
#[derive(Clone, Debug)]
pub struct Layout {
    pub nodes: Vec<String>,
    /// Monitored pairs `(monitor, target)`, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// Data links, by (layer, upstream, downstream); empty for a mesh.
    pub links: Vec<DataLink>,
    /// Layer of each node (0 for every mesh node).
    pub layer: Vec<u32>,
}

impl Layout {
    /// The layer of each node of a dataflow pipeline (a topology with data
    /// links); empty for a mesh, whose nodes have no layers.
    pub fn dataflow_layers(&self) -> Vec<u32> {
        if self.links.is_empty() {
            Vec::new()
        } else {
            self.layer.clone()
        }
    }
}

impl Layout {
    pub(crate) fn build(topology: &Topology, streams: &Streams) -> Layout {
        let nodes = topology.node_names();
        match topology {
            Topology::Mesh {
                nodes: n,
                monitors_per_node,
            } => {
                let n = *n;
                let mut pairs = match monitors_per_node {
                    MonitorCount::All => (0..n)
                        .flat_map(|m| (0..n).filter(move |&t| t != m).map(move |t| (m, t)))
                        .collect(),
                    MonitorCount::Count(k) => ring_pairs(n, *k, streams),
                };
                pairs.sort_unstable();
                Layout {
                    nodes,
                    pairs,
                    links: Vec::new(),
                    layer: vec![0; n as usize],
                }
            }
            Topology::Dataflow { layers } => {
                let mut first = Vec::with_capacity(layers.len());
                let mut layer = Vec::new();
                let mut next = 0u32;
                for (l, &count) in layers.iter().enumerate() {
                    first.push(next);
                    layer.extend(std::iter::repeat_n(l as u32, count as usize));
                    next += count;
                }
                let mut links = Vec::new();
                for l in 0..layers.len().saturating_sub(1) {
                    for u in 0..layers[l] {
                        for d in 0..layers[l + 1] {
                            links.push(DataLink {
                                from: first[l] + u,
                                to: first[l + 1] + d,
                            });
                        }
                    }
                }
                let mut pairs: Vec<(u32, u32)> = links.iter().map(|l| (l.to, l.from)).collect();
                pairs.sort_unstable();
                Layout {
                    nodes,
                    pairs,
                    links,
                    layer,
                }
            }
        }
    }
}

/// Each node monitors its successor on each of `k` seeded hash rings (the
/// next node on the ring that it does not monitor yet), as Orleans spreads
/// monitoring over several rings so that no two nodes share all their monitors.
fn ring_pairs(n: u32, k: u32, streams: &Streams) -> Vec<(u32, u32)> {
    let mut rng = streams.topology();
    let mut pairs = Vec::with_capacity((n * k) as usize);
    let rings: Vec<Vec<u32>> = (0..k)
        .map(|_| {
            let ring_seed: u64 = rng.random();
            let mut order: Vec<u32> = (0..n).collect();
            order.sort_unstable_by_key(|&node| (splitmix64(ring_seed ^ u64::from(node)), node));
            order
        })
        .collect();
    let positions: Vec<Vec<usize>> = rings
        .iter()
        .map(|ring| {
            let mut position = vec![0usize; n as usize];
            for (i, &node) in ring.iter().enumerate() {
                position[node as usize] = i;
            }
            position
        })
        .collect();
    let mut chosen: Vec<u32> = Vec::with_capacity(k as usize);
    for m in 0..n {
        chosen.clear();
        for (ring, position) in rings.iter().zip(&positions) {
            let start = position[m as usize];
            for step in 1..n as usize {
                let candidate = ring[(start + step) % n as usize];
                if !chosen.contains(&candidate) {
                    chosen.push(candidate);
                    break;
                }
            }
        }
        pairs.extend(chosen.iter().map(|&t| (m, t)));
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_monitoring_is_balanced_and_seeded() {
        let streams = Streams::new(11);
        let topo = Topology::Mesh {
            nodes: 50,
            monitors_per_node: MonitorCount::Count(4),
        };
        let layout = Layout::build(&topo, &streams);
        assert_eq!(layout.pairs.len(), 200);
        assert!(layout.pairs.iter().all(|(m, t)| m != t));
        // Every node monitors 4 distinct peers.
        for m in 0..50 {
            let mut targets: Vec<u32> = layout
                .pairs
                .iter()
                .filter(|p| p.0 == m)
                .map(|p| p.1)
                .collect();
            targets.dedup();
            assert_eq!(targets.len(), 4);
        }
        let again = Layout::build(&topo, &Streams::new(11));
        assert_eq!(layout.pairs, again.pairs);
        assert_ne!(layout.pairs, Layout::build(&topo, &Streams::new(12)).pairs);
    }

    #[test]
    fn dataflow_links_and_pairs() {
        let layout = Layout::build(
            &Topology::Dataflow {
                layers: vec![2, 2, 2],
            },
            &Streams::new(1),
        );
        assert_eq!(layout.nodes[2], "s1.0");
        assert_eq!(layout.links.len(), 8);
        assert_eq!(layout.pairs.len(), 8);
        assert!(layout.pairs.contains(&(2, 0)), "s1.0 monitors s0.0");
        assert_eq!(layout.layer, vec![0, 0, 1, 1, 2, 2]);
    }
}
