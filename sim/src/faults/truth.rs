//! The ground truth of a run: when each monitor must declare which target
//! Failed, and when a monitor is down and its verdicts are not judged.
//!
//! A fault with `expect = "detect"` must be detected over the time it really
//! holds its node ([`super::outages`]): a crash until its node is back,
//! whatever its `duration` said; a pause while it holds the node (a crash
//! ends it). Must-detect windows of one target that overlap or touch merge
//! into one, attributed to the fault that began first (ties: scenario
//! order): one outage is detected once, however many faults make it.

use std::collections::BTreeMap;

use fdlab_protocol::Nanos;

use super::outages::Outages;
use super::Schedule;
use crate::outcome::{MustDetect, Window};
use crate::scenario::FaultKind;

/// Who a detect-fault must be detected by.
#[derive(Clone, Copy, Debug)]
pub(super) enum Affected {
    /// Every monitor of this node.
    Target(u32),
    /// Every monitor that can no longer hear its target.
    Partition(usize),
    /// Every monitor whose target's messages cross the link fault.
    Link(usize),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct DetectRule {
    pub(super) record: usize,
    pub(super) window: Window,
    pub(super) affected: Affected,
}

impl Schedule {
    /// Clips the must-detect windows of crashes and pauses to when they hold
    /// their node, then merges those of one target that overlap.
    pub(super) fn settle_truth(&mut self, outages: &BTreeMap<u32, Outages>) {
        let of = |node: u32| outages.get(&node);
        for rule in &mut self.detect {
            let Affected::Target(node) = rule.affected else {
                continue;
            };
            let Some(o) = of(node) else {
                continue;
            };
            let start = rule.window.start;
            match self.records[rule.record].kind {
                FaultKind::Crash => {
                    if let Some(w) = o.outage_of_crash(start) {
                        rule.window.end = w.end;
                        self.records[rule.record].window.end = w.end;
                    }
                }
                FaultKind::Pause => {
                    rule.window = o
                        .pause_hold(rule.window)
                        .unwrap_or(Window { start, end: start });
                }
                _ => {}
            }
        }
        self.merge_target_rules();
    }

    /// Merges the must-detect windows of each target that overlap or touch.
    fn merge_target_rules(&mut self) {
        let mut targets: Vec<(u32, Nanos, usize, usize)> = self
            .detect
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r.affected {
                Affected::Target(n) if r.window.end > r.window.start => {
                    Some((n, r.window.start, r.record, i))
                }
                _ => None,
            })
            .collect();
        targets.sort_unstable();
        let mut gone = vec![false; self.detect.len()];
        let mut open: Option<(u32, usize)> = None;
        for &(node, start, _, i) in &targets {
            match open {
                Some((n, first)) if n == node && start <= self.detect[first].window.end => {
                    let end = self.detect[i].window.end;
                    let merged = &mut self.detect[first].window;
                    merged.end = merged.end.max(end);
                    gone[i] = true;
                }
                _ => open = Some((node, i)),
            }
        }
        let mut k = 0;
        self.detect.retain(|_| {
            k += 1;
            !gone[k - 1]
        });
    }

    /// When `monitor` must declare `target` Failed.
    pub fn must_detect(&self, monitor: u32, target: u32) -> Vec<MustDetect> {
        let mut out: Vec<MustDetect> = self
            .detect
            .iter()
            .filter(|rule| match rule.affected {
                Affected::Target(n) => n == target && n != monitor,
                Affected::Partition(p) => {
                    let part = &self.partitions[p];
                    part.cuts(target, monitor, rule.window.start)
                }
                Affected::Link(l) => {
                    self.link_faults[l].applies(target, monitor, rule.window.start)
                }
            })
            .filter(|rule| rule.window.end > rule.window.start)
            .map(|rule| MustDetect {
                window: rule.window,
                fault: rule.record,
            })
            .collect();
        out.sort_by_key(|m| (m.window, m.fault));
        out
    }

    /// When `monitor` is down and its verdicts are not judged.
    pub fn unjudged(&self, monitor: u32) -> Vec<Window> {
        self.downtime
            .iter()
            .filter(|(n, _)| *n == monitor)
            .map(|&(_, w)| w)
            .collect()
    }
}
