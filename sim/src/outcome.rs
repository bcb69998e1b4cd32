//! What one simulated run produced: for every monitored pair and every
//! detector, the verdict timeline; for every pair, the ground truth; plus
//! traffic counts. Metrics (`reports`) are computed from this alone.
//!
//! All instants are true (simulation) time, the time of the ground truth, not
//! a node's local clock.

use fdlab_protocol::{Nanos, Verdict};

use crate::scenario::{Expect, FaultKind};

/// A half-open span `[start, end)` of true time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Window {
    pub start: Nanos,
    pub end: Nanos,
}

impl Window {
    /// The sorted, disjoint union of `spans` (empty ones dropped; spans
    /// that overlap or touch become one).
    pub fn union(mut spans: Vec<Window>) -> Vec<Window> {
        spans.retain(|w| w.start < w.end);
        spans.sort();
        let mut out: Vec<Window> = Vec::with_capacity(spans.len());
        for w in spans {
            match out.last_mut() {
                Some(last) if w.start <= last.end => last.end = last.end.max(w.end),
                _ => out.push(w),
            }
        }
        out
    }

    /// How long this window and `other` share (0 s if they do not meet).
    pub fn overlap(self, other: Window) -> Nanos {
        let (start, end) = (self.start.max(other.start), self.end.min(other.end));
        if start < end {
            end - start
        } else {
            Nanos::ZERO
        }
    }
}

/// A period during which a monitor must declare its target Failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MustDetect {
    pub window: Window,
    /// Index into [`RunOutcome::faults`].
    pub fault: usize,
}

/// One fault as it happened in this run (random times resolved).
#[derive(Clone, Debug, PartialEq)]
pub struct FaultRecord {
    pub kind: FaultKind,
    /// What it hit, for people (`n3`, `s1.0 <-> *`, `n1 -> n2`).
    pub target: String,
    /// The node it is about, where there is one (the crashed node, the
    /// isolated node, the sender of a slow link).
    pub node: Option<u32>,
    /// The nodes it stops or cuts off, in index order: a node fault's node;
    /// a partition's named side (the isolated node, or `nodes` but the
    /// bridge; the side a swarm draws is the minority); a link fault's
    /// sender. A must-detect fault excuses declaring these
    /// (`no_live_declared_dead`).
    pub held: Vec<u32>,
    pub window: Window,
    pub expect: Expect,
}

/// One detector's view of one pair.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DetectorTimeline {
    /// Verdict changes in time order; the verdict is Alive before the first.
    /// Equal times keep their order (Suspect then Failed within one instant).
    pub changes: Vec<(Nanos, Verdict)>,
    /// Liveness messages sent for this detector on this pair (heartbeats,
    /// probes and replies), and their bytes.
    pub messages: u64,
    pub bytes: u64,
}

/// One monitored pair: `monitor` watches `target`.
#[derive(Clone, Debug, PartialEq)]
pub struct PairOutcome {
    pub monitor: u32,
    pub target: u32,
    /// When the target must be detected; at all other judged times it must not.
    pub must_detect: Vec<MustDetect>,
    /// Times when the monitor itself was down (crashed or not yet restarted):
    /// its verdicts are not judged then.
    pub unjudged: Vec<Window>,
    /// One timeline per detector, in the scenario's detector order.
    pub detectors: Vec<DetectorTimeline>,
}

/// Everything a run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    pub scenario: String,
    pub seed: u64,
    /// Simulated time of the run.
    pub duration: Nanos,
    /// Detector names, in the scenario's order.
    pub detectors: Vec<String>,
    pub nodes: Vec<String>,
    /// For a dataflow pipeline, the layer of each node by index (0 = the
    /// sources); empty for a mesh. Reports group pairs by it (a source link
    /// or a forwarded one); nothing in the simulation reads it.
    pub layers: Vec<u32>,
    pub faults: Vec<FaultRecord>,
    /// Monitored pairs, ordered by (monitor, target).
    pub pairs: Vec<PairOutcome>,
    /// Simulation events processed.
    pub events: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_union_merges_what_overlaps_or_touches_and_drops_empty_spans() {
        let w = |start, end| Window {
            start: Nanos(start),
            end: Nanos(end),
        };
        let spans = vec![w(5, 7), w(1, 3), w(3, 4), w(9, 9), w(6, 8), w(10, 12)];
        assert_eq!(Window::union(spans), [w(1, 4), w(5, 8), w(10, 12)]);
    }
}
