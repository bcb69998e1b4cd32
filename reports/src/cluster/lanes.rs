//! What the timeline of one cluster run shows, computed from its outcome
//! and its replay log ([`ClusterTimeline::of`]); drawn by
//! [`super::timeline`].
//!
//! One **lane per node** (all its generations, one after another):
//! - **state bands**, from the log's Node and Row records: joining (from
//!   a start until its Active write), active, paused, *declared Dead while
//!   still running* (the table says Dead, the process has not yet read it:
//!   a paused silo falsely declared), down and declared Dead, and down but
//!   not (yet) declared (from a crash to its Dead write: the detection
//!   latency, seen); before a node's first start, nothing;
//! - **generation changes**: a new generation's start, labelled `#g`;
//! - **suspicions** against the node (any monitor), **votes** (a Row
//!   record whose votes gained one, not a Dead write), **withheld votes**
//!   (the connection-liveness check), and **Dead declarations** (a Row
//!   record whose status became Dead), false ones (per the outcome's
//!   `declarations`) apart;
//! - **view lag**: while the node's process runs and has a view, how many
//!   versions its view is behind the table's (the highest version any Row
//!   or View record has shown by then);
//! - the faults that hit the node.
//!
//! Above the lanes: every fault window, and the table's unreachable
//! (`table-outage`) and slow (`slow-table`) windows.
//!
//! The view lags are computed by [`super::lag`]; beyond
//! [`super::fold::MAX_LANES`] nodes, the quietest share one lane
//! ([`super::fold`]).

use std::collections::BTreeMap;

use fdlab_protocol::membership::{SiloId, SiloStatus, Vote};
use fdlab_protocol::Nanos;
use fdlab_sim::membership::outcome::{ClusterLogRecord, ClusterOutcome, NodeChange};
use fdlab_sim::outcome::Window;
use fdlab_sim::scenario::FaultKind;

use super::fold::fold;
use super::lag::{view_lag, Lag};

/// A node's state in its lane, worst last (a folded lane shows the worst).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LaneState {
    Active,
    Joining,
    Paused,
    /// Down (crashed, stopped, gave up) and its row is Dead.
    Down,
    /// Down and its row not (yet) Dead.
    DownUndeclared,
    /// The row is Dead but the process still runs (or is paused).
    DeclaredWhileUp,
}

impl LaneState {
    pub const ALL: [LaneState; 6] = [
        LaneState::Joining,
        LaneState::Active,
        LaneState::Paused,
        LaneState::DeclaredWhileUp,
        LaneState::DownUndeclared,
        LaneState::Down,
    ];

    /// How the timeline's key names it.
    pub fn label(self) -> &'static str {
        match self {
            LaneState::Joining => "joining",
            LaneState::Active => "active",
            LaneState::Paused => "paused",
            LaneState::DeclaredWhileUp => "declared Dead, still running",
            LaneState::DownUndeclared => "down, not declared",
            LaneState::Down => "down, declared Dead",
        }
    }
}

/// A span of one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Band {
    pub window: Window,
    pub state: LaneState,
}

/// One lane: one node, or the folded rest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lane {
    pub name: String,
    pub nodes: Vec<u32>,
    /// In time order, not overlapping.
    pub bands: Vec<Band>,
    /// Starts of generations after the node's first: `(at, generation)`.
    pub generations: Vec<(Nanos, u32)>,
    /// Suspected by some monitor: sorted, disjoint.
    pub suspected: Vec<Window>,
    pub votes: Vec<Nanos>,
    pub withheld: Vec<Nanos>,
    /// Dead declarations: `(at, false)`.
    pub declarations: Vec<(Nanos, bool)>,
    /// Sorted, disjoint.
    pub lag: Vec<Lag>,
    /// Faults that hit the node.
    pub faults: Vec<Window>,
}

/// A fault as the timeline's strip shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct StripFault {
    pub label: String,
    pub kind: FaultKind,
    pub window: Window,
}

/// Everything the timeline of one cluster run shows.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterTimeline {
    pub scenario: String,
    pub seed: u64,
    pub judge: String,
    pub duration: Nanos,
    /// Every node and table fault, in the outcome's order.
    pub faults: Vec<StripFault>,
    pub lanes: Vec<Lane>,
    /// Nodes in all.
    pub nodes: usize,
    /// Nodes folded into the last lane (0: every node has its own).
    pub folded: usize,
}

impl ClusterTimeline {
    /// The title: which run, which judge.
    pub fn title(&self) -> String {
        format!(
            "{} seed {}, judge {}: cluster membership",
            self.scenario, self.seed, self.judge
        )
    }

    /// The lanes of `outcome`'s run from its log (records in time order).
    pub fn of(outcome: &ClusterOutcome, log: &[ClusterLogRecord]) -> ClusterTimeline {
        let count = node_count(outcome, log);
        let mut lanes: Vec<Lane> = (0..count)
            .map(|n| Lane {
                name: outcome
                    .nodes
                    .get(n)
                    .cloned()
                    .unwrap_or_else(|| format!("n{n}")),
                nodes: vec![n as u32],
                ..Lane::default()
            })
            .collect();
        let end = outcome.duration;
        // In time order (a stable sort: records of one instant keep theirs).
        let mut log: Vec<&ClusterLogRecord> = log.iter().collect();
        log.sort_by_key(|r| r.at());
        walk_log(outcome, &log, end, &mut lanes);
        view_lag(&log, end, &mut lanes);
        for s in &outcome.suspicions {
            if let Some(lane) = lanes.get_mut(s.target.node as usize) {
                lane.suspected.push(Window {
                    start: s.start,
                    end: s.end.unwrap_or(end).min(end),
                });
            }
        }
        for f in &outcome.faults {
            if let Some(lane) = f.node.and_then(|n| lanes.get_mut(n as usize)) {
                lane.faults.push(f.window);
            }
        }
        for lane in &mut lanes {
            lane.suspected = Window::union(std::mem::take(&mut lane.suspected));
        }
        let faults = outcome
            .faults
            .iter()
            .map(|f| StripFault {
                label: format!("{} {}", f.kind.name(), f.target),
                kind: f.kind,
                window: f.window,
            })
            .collect();
        let (lanes, folded) = fold(lanes);
        ClusterTimeline {
            scenario: outcome.scenario.clone(),
            seed: outcome.seed,
            judge: outcome.label.clone(),
            duration: end,
            faults,
            lanes,
            nodes: count,
            folded,
        }
    }
}

/// Nodes named by the outcome or seen in the log, whichever is more.
fn node_count(outcome: &ClusterOutcome, log: &[ClusterLogRecord]) -> usize {
    let seen = log
        .iter()
        .map(|r| match r {
            ClusterLogRecord::Row { silo, .. }
            | ClusterLogRecord::View { silo, .. }
            | ClusterLogRecord::Node { silo, .. } => silo.node,
            ClusterLogRecord::Suspicion {
                monitor, target, ..
            }
            | ClusterLogRecord::Withheld {
                monitor, target, ..
            } => monitor.node.max(target.node),
        })
        .max()
        .map_or(0, |n| n as usize + 1);
    outcome.nodes.len().max(seen)
}

/// What a lane knows of its node as the log goes by.
#[derive(Clone, Copy, Default)]
struct NodeState {
    started: bool,
    generation: u32,
    process: Process,
    row: Option<SiloStatus>,
    since: Nanos,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Process {
    #[default]
    Up,
    Paused,
    Down,
}

impl NodeState {
    fn state(&self) -> Option<LaneState> {
        let dead = self.row == Some(SiloStatus::Dead);
        Some(match (self.process, dead) {
            _ if !self.started => return None,
            (Process::Down, true) => LaneState::Down,
            (Process::Down, false) => LaneState::DownUndeclared,
            (_, true) => LaneState::DeclaredWhileUp,
            (Process::Paused, _) => LaneState::Paused,
            (Process::Up, _)
                if matches!(
                    self.row,
                    Some(SiloStatus::Active | SiloStatus::ShuttingDown)
                ) =>
            {
                LaneState::Active
            }
            (Process::Up, _) => LaneState::Joining,
        })
    }
}

/// Bands, generations, votes and declarations of every lane.
fn walk_log(outcome: &ClusterOutcome, log: &[&ClusterLogRecord], end: Nanos, lanes: &mut [Lane]) {
    let mut states = vec![NodeState::default(); lanes.len()];
    // Every row's last status and votes.
    let mut rows: BTreeMap<SiloId, (SiloStatus, Vec<Vote>)> = BTreeMap::new();
    for r in log.iter().filter(|r| r.at() < end) {
        let at = r.at();
        let node = match r {
            ClusterLogRecord::Node { silo, .. } | ClusterLogRecord::Row { silo, .. } => silo.node,
            ClusterLogRecord::Withheld { target, .. } => {
                lanes[target.node as usize].withheld.push(at);
                continue;
            }
            _ => continue,
        } as usize;
        let before = states[node];
        let s = &mut states[node];
        match r {
            ClusterLogRecord::Node { silo, change, .. } => match change {
                NodeChange::Started => {
                    if s.started && silo.generation != s.generation {
                        lanes[node].generations.push((at, silo.generation));
                    }
                    *s = NodeState {
                        started: true,
                        generation: silo.generation,
                        process: Process::Up,
                        row: None,
                        since: s.since,
                    };
                }
                NodeChange::Joined if s.row != Some(SiloStatus::Dead) => {
                    s.row = Some(SiloStatus::Active);
                }
                NodeChange::Crashed | NodeChange::Terminated | NodeChange::GaveUp => {
                    s.process = Process::Down;
                }
                NodeChange::Paused if s.process == Process::Up => s.process = Process::Paused,
                NodeChange::Resumed if s.process == Process::Paused => s.process = Process::Up,
                _ => {}
            },
            ClusterLogRecord::Row {
                silo,
                status,
                votes: now,
                ..
            } => {
                let (was, previous) = rows
                    .insert(*silo, (*status, now.clone()))
                    .unwrap_or((SiloStatus::Created, Vec::new()));
                let was_dead = was == SiloStatus::Dead;
                if *status == SiloStatus::Dead {
                    if !was_dead {
                        let false_positive = outcome
                            .declarations
                            .iter()
                            .any(|d| d.target == *silo && d.at == at && d.false_positive);
                        lanes[node].declarations.push((at, false_positive));
                    }
                } else if now.iter().any(|v| !previous.contains(v)) {
                    lanes[node].votes.push(at);
                }
                if silo.generation == s.generation {
                    s.row = Some(*status);
                }
            }
            _ => {}
        }
        if s.state() != before.state() {
            if let Some(state) = before.state() {
                push_band(&mut lanes[node].bands, before.since, at, state);
            }
            s.since = at;
        }
    }
    for (lane, s) in lanes.iter_mut().zip(&states) {
        if let Some(state) = s.state() {
            push_band(&mut lane.bands, s.since, end, state);
        }
    }
}

pub(super) fn push_band(bands: &mut Vec<Band>, start: Nanos, end: Nanos, state: LaneState) {
    if start >= end {
        return;
    }
    match bands.last_mut() {
        Some(last) if last.state == state && last.window.end == start => last.window.end = end,
        _ => bands.push(Band {
            window: Window { start, end },
            state,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{secs, synthetic};
    use super::*;

    fn band_at(lane: &Lane, t: f64) -> Option<LaneState> {
        let t = secs(t);
        lane.bands
            .iter()
            .find(|b| b.window.start <= t && t < b.window.end)
            .map(|b| b.state)
    }

    #[test]
    fn every_node_its_states_and_markers() {
        let (o, log) = synthetic(20, 1, "classic", 0);
        let t = ClusterTimeline::of(&o, &log);
        assert_eq!((t.lanes.len(), t.folded, t.nodes), (20, 0, 20));
        let n5 = &t.lanes[5];
        assert_eq!(band_at(n5, 1.0), Some(LaneState::Joining));
        assert_eq!(band_at(n5, 30.0), Some(LaneState::Active));
        assert_eq!(band_at(n5, 70.0), Some(LaneState::DownUndeclared));
        assert_eq!(band_at(n5, 90.0), Some(LaneState::Down));
        assert_eq!(n5.declarations, [(secs(80.0), false)]);
        assert_eq!(n5.votes, [secs(75.1)]);
        assert_eq!(n5.suspected.len(), 1);
        let n12 = &t.lanes[12];
        assert_eq!(band_at(n12, 130.0), Some(LaneState::Paused));
        assert_eq!(band_at(n12, 150.0), Some(LaneState::DeclaredWhileUp));
        assert_eq!(band_at(n12, 165.0), Some(LaneState::Down));
        assert_eq!(band_at(n12, 171.0), Some(LaneState::Joining));
        assert_eq!(band_at(n12, 200.0), Some(LaneState::Active));
        assert_eq!(n12.declarations, [(secs(140.0), true)]);
        assert_eq!(n12.generations, [(secs(170.3), 1)]);
        assert_eq!(n12.faults.len(), 1);
        // The paused n12 hears nothing: its view is behind from the vote
        // at 135.2 s until it resumes.
        let lag_at = |lane: &Lane, t: f64| {
            let t = secs(t);
            lane.lag
                .iter()
                .find(|l| l.window.start <= t && t < l.window.end)
                .map_or(0, |l| l.lag)
        };
        assert_eq!(
            n12.lag
                .iter()
                .find(|l| l.window.start >= secs(130.0))
                .unwrap()
                .window
                .start,
            secs(135.2)
        );
        // Two writes missed (the vote, then the Dead write) until it resumes.
        assert_eq!((lag_at(n12, 137.0), lag_at(n12, 155.0)), (2, 2));
        assert_eq!(lag_at(n12, 161.0), 0);
        // n15 misses the vote against it while cut off.
        let n15 = &t.lanes[15];
        let long: Vec<&Lag> = n15
            .lag
            .iter()
            .filter(|l| l.window.end - l.window.start > secs(1.0))
            .collect();
        assert_eq!(long.len(), 1, "{long:?}");
        assert_eq!(long[0].window.start, secs(246.2));
        assert_eq!(t.lanes[7].withheld, [secs(212.5)]);
        // A quiet node: joining, then active to the end; no marker.
        let n3 = &t.lanes[3];
        assert_eq!(n3.bands.len(), 2);
        assert_eq!(n3.bands[1].window.end, o.duration);
        assert!(n3.declarations.is_empty() && n3.suspected.is_empty());
    }
}
