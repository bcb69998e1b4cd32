//! When each node is down and when it is paused, from all its crash,
//! restart and pause faults together: what overlapping faults of one node
//! mean.
//!
//! - **Crashes merge.** A node is down from a crash until the last end of the
//!   crash windows that overlap it (a crash of a node already down adds no
//!   new outage, only, if longer, more downtime); a crash with a `duration`
//!   ends in a restart, one without keeps the node down to the end of the
//!   run.
//! - **A restart fault starts the process**: on a node that is down, it ends
//!   the outage there (the rest of the crash windows then open no new one);
//!   on a running node, it is a crash and an immediate restart.
//! - **Pauses merge.** A node is paused while any pause holds it. A pause
//!   takes hold only if it starts while the node is up, and a crash ends it
//!   (the stopped process is gone; its successor runs).
//!
//! The engine and `fdlab live` see one clean sequence per node (crash,
//! restart, pause start, pause end, never overlapping), and the ground truth
//! ([`super::truth`]) clips each fault's must-detect window to when the fault
//! really holds its node.

use fdlab_protocol::Nanos;

use crate::outcome::Window;

/// A crash, restart or pause fault of one node, as scheduled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum NodeFault {
    /// Down over `window`; `restarts`: it has a `duration` (its end is a
    /// restart, even at the end of the run).
    Crash {
        window: Window,
        restarts: bool,
    },
    Restart {
        at: Nanos,
    },
    /// Paused over `window`; `planned`: announced downstream.
    Pause {
        window: Window,
        planned: bool,
    },
}

impl NodeFault {
    fn at(&self) -> Nanos {
        match self {
            NodeFault::Crash { window, .. } | NodeFault::Pause { window, .. } => window.start,
            NodeFault::Restart { at } => *at,
        }
    }
}

/// One node's outages, resolved.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Outages {
    /// When the node is down (sorted, disjoint), and whether each outage
    /// ends in a restart.
    pub(super) down: Vec<(Window, bool)>,
    /// Restart faults of the running node (a crash and an immediate restart).
    pub(super) instant_restarts: Vec<Nanos>,
    /// When the node is paused (sorted, disjoint, never while down), and the
    /// planned length of each pause announced downstream.
    pub(super) paused: Vec<(Window, Option<Nanos>)>,
}

impl Outages {
    /// The outages of one node's `faults` (in scenario order) in a run that
    /// ends at `end`.
    pub(super) fn resolve(faults: &[NodeFault], end: Nanos) -> Outages {
        let mut order: Vec<usize> = (0..faults.len()).collect();
        // By start; ties in scenario order (a stable sort).
        order.sort_by_key(|&i| faults[i].at());
        let mut out = Outages::default();
        // The outage in progress: since, until, whether it ends in a restart.
        let mut down: Option<(Nanos, Nanos, bool)> = None;
        for &i in &order {
            let at = faults[i].at();
            if let Some((since, until, restarts)) = down {
                if until <= at {
                    out.close(since, until, restarts);
                    down = None;
                }
            }
            match faults[i] {
                NodeFault::Crash { window, restarts } => match &mut down {
                    None => down = Some((window.start, window.end, restarts)),
                    Some((_, until, ends_in_restart)) => {
                        if window.end > *until {
                            *until = window.end;
                            *ends_in_restart = restarts;
                        }
                    }
                },
                NodeFault::Restart { at } => match down.take() {
                    // (Down since this very instant: the restart comes after
                    // the crash, in scenario order, and ends a 0 s outage.)
                    Some((since, _, _)) => out.close(since, at, true),
                    None => out.instant_restarts.push(at),
                },
                NodeFault::Pause { .. } => {}
            }
        }
        if let Some((since, until, restarts)) = down {
            out.close(since, until.min(end), restarts);
        }
        out.paused = out.pauses(faults, &order);
        out
    }

    fn close(&mut self, since: Nanos, until: Nanos, restarts: bool) {
        debug_assert!(self.down.last().is_none_or(|(w, _)| w.end <= since));
        self.down.push((
            Window {
                start: since,
                end: until,
            },
            restarts,
        ));
    }

    /// The outage the node is in at `at`, if any.
    pub(super) fn down_at(&self, at: Nanos) -> Option<Window> {
        // Outages are sorted and disjoint: only the last one that starts by
        // `at` can hold it.
        let i = self.down.partition_point(|(w, _)| w.start <= at);
        let w = self.down[..i].last()?.0;
        (at < w.end).then_some(w)
    }

    /// The outage a crash starting at `at` belongs to: the one in progress
    /// at `at`, else one starting then (a crash and a restart at the same
    /// instant make an outage of no length).
    pub(super) fn outage_of_crash(&self, at: Nanos) -> Option<Window> {
        let i = self.down.partition_point(|(w, _)| w.start < at);
        match (self.down[..i].last(), self.down.get(i)) {
            (Some(&(w, _)), _) if at < w.end => Some(w),
            (_, Some(&(w, _))) if w.start == at => Some(w),
            _ => None,
        }
    }

    /// When a pause starting at `start` and scheduled until `end` holds the
    /// node: from its start, if the node is up then, until its end or the
    /// node's next crash.
    pub(super) fn pause_hold(&self, window: Window) -> Option<Window> {
        if self.down_at(window.start).is_some() {
            return None;
        }
        // The first crash after the start: an outage's, or an instant
        // restart's (both lists are sorted).
        let i = self.down.partition_point(|(w, _)| w.start <= window.start);
        let j = self
            .instant_restarts
            .partition_point(|&t| t <= window.start);
        let crash = self
            .down
            .get(i)
            .map(|&(w, _)| w.start)
            .into_iter()
            .chain(self.instant_restarts.get(j).copied())
            .min();
        let end = crash.map_or(window.end, |c| c.min(window.end));
        (end > window.start).then_some(Window {
            start: window.start,
            end,
        })
    }

    /// The union of the pauses' holds, each merged interval planned as its
    /// first pause was.
    fn pauses(&self, faults: &[NodeFault], order: &[usize]) -> Vec<(Window, Option<Nanos>)> {
        let mut merged: Vec<(Window, bool)> = Vec::new();
        for &i in order {
            let NodeFault::Pause { window, planned } = faults[i] else {
                continue;
            };
            let Some(hold) = self.pause_hold(window) else {
                continue;
            };
            match merged.last_mut() {
                Some((w, _)) if hold.start <= w.end => w.end = w.end.max(hold.end),
                _ => merged.push((hold, planned)),
            }
        }
        merged
            .into_iter()
            .map(|(w, planned)| (w, planned.then(|| w.end - w.start)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const END: Nanos = Nanos::from_secs(100);

    fn w(a: u64, b: u64) -> Window {
        Window {
            start: Nanos::from_secs(a),
            end: Nanos::from_secs(b),
        }
    }

    fn crash(a: u64, b: Option<u64>) -> NodeFault {
        NodeFault::Crash {
            window: w(a, b.unwrap_or(100)),
            restarts: b.is_some(),
        }
    }

    fn pause(a: u64, b: u64) -> NodeFault {
        NodeFault::Pause {
            window: w(a, b),
            planned: false,
        }
    }

    #[test]
    fn a_node_is_paused_while_any_pause_holds_it() {
        // A 2 s pause a second before a 9 s one: paused through the 9 s one.
        let o = Outages::resolve(&[pause(0, 2), pause(1, 10)], END);
        assert_eq!(o.paused, vec![(w(0, 10), None)]);
        // Apart, they stay apart; inside another, nothing changes.
        let o = Outages::resolve(&[pause(5, 6), pause(1, 3), pause(2, 3)], END);
        assert_eq!(o.paused, vec![(w(1, 3), None), (w(5, 6), None)]);
    }

    #[test]
    fn crashes_of_a_node_merge_into_one_outage() {
        // A crash of a crashed node adds nothing.
        let o = Outages::resolve(&[crash(10, None), crash(20, None)], END);
        assert_eq!(o.down, vec![(w(10, 100), false)]);
        // A 1 s and a 10 s crash at the same instant: down for 10 s.
        let o = Outages::resolve(&[crash(0, Some(1)), crash(0, Some(10))], END);
        assert_eq!(o.down, vec![(w(0, 10), true)]);
        // Overlapping: down from the first start to the last end.
        let o = Outages::resolve(&[crash(5, Some(20)), crash(0, Some(10))], END);
        assert_eq!(o.down, vec![(w(0, 20), true)]);
        // Apart: two outages.
        let o = Outages::resolve(&[crash(0, Some(1)), crash(5, Some(6))], END);
        assert_eq!(o.down, vec![(w(0, 1), true), (w(5, 6), true)]);
    }

    #[test]
    fn a_restart_ends_an_outage_or_restarts_a_running_node() {
        let restart = |at| NodeFault::Restart {
            at: Nanos::from_secs(at),
        };
        let o = Outages::resolve(&[crash(0, Some(10)), restart(5), crash(7, Some(12))], END);
        assert_eq!(o.down, vec![(w(0, 5), true), (w(7, 12), true)]);
        let o = Outages::resolve(&[restart(3)], END);
        assert_eq!(o.instant_restarts, vec![Nanos::from_secs(3)]);
        assert!(o.down.is_empty());
    }

    #[test]
    fn a_crash_ends_a_pause_and_a_crashed_node_is_not_paused() {
        let o = Outages::resolve(&[pause(0, 10), crash(5, Some(7))], END);
        assert_eq!(o.paused, vec![(w(0, 5), None)]);
        assert_eq!(o.down, vec![(w(5, 7), true)]);
        let o = Outages::resolve(&[crash(0, Some(4)), pause(2, 6)], END);
        assert!(o.paused.is_empty());
        assert_eq!(o.pause_hold(w(2, 6)), None);
    }

    #[test]
    fn a_planned_merged_pause_announces_its_whole_length() {
        let planned = NodeFault::Pause {
            window: w(1, 3),
            planned: true,
        };
        let o = Outages::resolve(&[planned, pause(2, 5)], END);
        assert_eq!(o.paused, vec![(w(1, 5), Some(Nanos::from_secs(4)))]);
    }
}
