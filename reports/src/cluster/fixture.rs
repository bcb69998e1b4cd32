//! Test fixtures of the cluster reports: a realistic synthetic membership
//! run (its outcome and its replay log) built by hand, since the reports
//! must be tested and looked at before the simulator exists. Test code
//! only.
//!
//! The run ([`synthetic`]), 300 s of `nodes` silos (at least 20):
//! - every node starts at `node × 50 ms`, inserts its row Joining and
//!   writes itself Active 2 s later; every table write reaches each
//!   running silo's view 5–60 ms later (gossip), a paused or partitioned
//!   silo's only when it can hear again;
//! - n5 crashes at 60 s; three monitors suspect it from 75 s; a vote at
//!   75.1 s, the Dead write at 80 s; every view agrees by about 80.06 s;
//! - n12 is paused from 120 s to 160 s: suspected from 135 s, voted
//!   against, falsely declared Dead at 140 s; on resuming it reads itself
//!   Dead and stops (160.3 s), and restarts as n12#1 10 s later (Active
//!   at 172.3 s);
//! - the table is unreachable from 200 s to 230 s while a slow link makes
//!   n7 suspected (212–226 s): one vote withheld by the connection
//!   liveness check, no declaration;
//! - n15 is cut off from 240 s to 250 s: a vote against it is written at
//!   246.2 s, which its view only sees after the partition heals;
//! - `extra_pauses` more nodes (n20, n22, ...) are paused 4 s each between
//!   30 s and 290 s, each suspected by one monitor, never declared.

use std::collections::BTreeMap;

use fdlab_protocol::membership::{SiloId, SiloStatus, Vote};
use fdlab_protocol::Nanos;
use fdlab_sim::membership::outcome::{
    ClusterCounts, ClusterLogRecord, ClusterOutcome, CrashOutcome, Declaration, NodeChange,
    Suspicion,
};
use fdlab_sim::outcome::{FaultRecord, Window};
use fdlab_sim::scenario::{Expect, FaultKind};

/// `v` seconds.
pub(crate) fn secs(v: f64) -> Nanos {
    Nanos((v * 1e9).round() as u64)
}

pub(crate) fn silo(node: u32, generation: u32) -> SiloId {
    SiloId { node, generation }
}

pub(crate) fn fault(kind: FaultKind, node: u32, from: f64, to: f64) -> FaultRecord {
    let target = match kind {
        FaultKind::TableOutage | FaultKind::SlowTable => "table".to_string(),
        _ => format!("n{node}"),
    };
    let node = (!matches!(kind, FaultKind::TableOutage | FaultKind::SlowTable)).then_some(node);
    FaultRecord {
        kind,
        target,
        node,
        held: node.into_iter().collect(),
        window: Window {
            start: secs(from),
            end: secs(to),
        },
        expect: if kind == FaultKind::Crash {
            Expect::Detect
        } else {
            Expect::Tolerate
        },
    }
}

const DURATION: f64 = 300.0;

/// Builds the log of a run as it goes: the table, the views, the nodes.
struct Builder {
    nodes: u32,
    log: Vec<ClusterLogRecord>,
    version: u64,
    rows: BTreeMap<SiloId, SiloStatus>,
    /// Per node: its current generation, and from when it can hear gossip
    /// (a pause or partition defers its view updates), and whether it runs.
    generation: Vec<u32>,
    deaf_until: Vec<f64>,
    running: Vec<bool>,
    rng: u64,
    /// Latest view instant per node (views only move forward).
    last_view: Vec<f64>,
    writes: u64,
}

impl Builder {
    fn new(nodes: u32, seed: u64) -> Builder {
        Builder {
            nodes,
            log: Vec::new(),
            version: 0,
            rows: BTreeMap::new(),
            generation: vec![0; nodes as usize],
            deaf_until: vec![0.0; nodes as usize],
            running: vec![false; nodes as usize],
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            last_view: vec![0.0; nodes as usize],
            writes: 0,
        }
    }

    /// A pseudo-random number in `[0, 1)` (xorshift; deterministic).
    fn draw(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }

    fn node(&mut self, at: f64, node: u32, change: NodeChange) {
        let silo = silo(node, self.generation[node as usize]);
        self.log.push(ClusterLogRecord::Node {
            at: secs(at),
            silo,
            change,
        });
    }

    /// A write of `silo`'s row by `by`, and the views it reaches.
    fn write(
        &mut self,
        at: f64,
        target: SiloId,
        status: SiloStatus,
        votes: &[(u32, f64)],
        by: SiloId,
    ) {
        self.version += 1;
        self.writes += 1;
        self.rows.insert(target, status);
        self.log.push(ClusterLogRecord::Row {
            at: secs(at),
            version: self.version,
            silo: target,
            status,
            votes: votes
                .iter()
                .map(|&(voter, t)| Vote {
                    voter: silo(voter, self.generation[voter as usize]),
                    time: secs(t),
                })
                .collect(),
            by,
        });
        let active = self
            .rows
            .values()
            .filter(|s| **s == SiloStatus::Active)
            .count() as u32;
        let dead = self
            .rows
            .values()
            .filter(|s| **s == SiloStatus::Dead)
            .count() as u32;
        for n in 0..self.nodes {
            if !self.running[n as usize] {
                continue;
            }
            let heard = at.max(self.deaf_until[n as usize]) + 0.005 + 0.055 * self.draw();
            let heard = heard.max(self.last_view[n as usize]);
            self.last_view[n as usize] = heard;
            self.log.push(ClusterLogRecord::View {
                at: secs(heard),
                silo: silo(n, self.generation[n as usize]),
                version: self.version,
                active,
                dead,
            });
        }
    }

    /// `node` starts at `at` and inserts its row Joining.
    fn start(&mut self, at: f64, node: u32) {
        self.running[node as usize] = true;
        self.last_view[node as usize] = at;
        self.node(at, node, NodeChange::Started);
        let me = silo(node, self.generation[node as usize]);
        self.write(at + 0.01, me, SiloStatus::Joining, &[], me);
    }

    /// `node` writes itself Active at `at`.
    fn join(&mut self, at: f64, node: u32) {
        self.node(at, node, NodeChange::Joined);
        let me = silo(node, self.generation[node as usize]);
        self.write(at, me, SiloStatus::Active, &[], me);
    }

    fn suspect(
        &mut self,
        from: f64,
        to: f64,
        monitor: u32,
        target: u32,
        declared: bool,
    ) -> Suspicion {
        let (m, t) = (
            silo(monitor, self.generation[monitor as usize]),
            silo(target, self.generation[target as usize]),
        );
        for (at, started) in [(from, true), (to, false)] {
            self.log.push(ClusterLogRecord::Suspicion {
                at: secs(at),
                monitor: m,
                target: t,
                started,
            });
        }
        Suspicion {
            start: secs(from),
            end: Some(secs(to)),
            monitor: m,
            target: t,
            declared,
        }
    }
}

/// The synthetic run of `nodes` silos (at least 20) under `judge`, and
/// its log in time order; see the module docs.
pub(crate) fn synthetic(
    nodes: u32,
    seed: u64,
    judge: &str,
    extra_pauses: u32,
) -> (ClusterOutcome, Vec<ClusterLogRecord>) {
    assert!(nodes >= 20);
    let mut b = Builder::new(nodes, seed);
    let mut suspicions = Vec::new();
    let mut faults = vec![
        fault(FaultKind::Crash, 5, 60.0, DURATION),
        fault(FaultKind::Pause, 12, 120.0, 160.0),
        fault(FaultKind::TableOutage, 0, 200.0, 230.0),
        fault(FaultKind::SlowLink, 7, 205.0, 225.0),
        fault(FaultKind::Partition, 15, 240.0, 250.0),
    ];
    // Starts and joins in time order (the table's versions follow time).
    let mut steps: Vec<(u64, u32, bool)> = (0..nodes)
        .flat_map(|n| {
            [
                (u64::from(n) * 50, n, false),
                (u64::from(n) * 50 + 2_000, n, true),
            ]
        })
        .collect();
    steps.sort_unstable();
    for (ms, n, join) in steps {
        let at = ms as f64 / 1e3;
        if join {
            b.join(at, n);
        } else {
            b.start(at, n);
        }
    }
    let watchers = |t: u32| [(t + 1) % nodes, (t + 2) % nodes, (t + 3) % nodes];

    // n5 crashes: declared at 80 s.
    b.node(60.0, 5, NodeChange::Crashed);
    b.running[5] = false;
    let [m1, m2, m3] = watchers(5);
    b.write(
        75.1,
        silo(5, 0),
        SiloStatus::Active,
        &[(m1, 75.0)],
        silo(m1, 0),
    );
    b.write(
        80.0,
        silo(5, 0),
        SiloStatus::Dead,
        &[(m1, 75.0), (m2, 79.9)],
        silo(m2, 0),
    );
    for (k, m) in [m1, m2, m3].into_iter().enumerate() {
        suspicions.push(b.suspect(75.0 + 0.3 * k as f64, 80.07, m, 5, true));
    }

    // n12 paused 120–160 s: falsely declared at 140 s; stops, restarts.
    b.node(120.0, 12, NodeChange::Paused);
    b.deaf_until[12] = 160.0;
    let [p1, p2, p3] = watchers(12);
    for (k, m) in [p1, p2, p3].into_iter().enumerate() {
        suspicions.push(b.suspect(135.0 + 0.4 * k as f64, 140.08, m, 12, true));
    }
    b.write(
        135.2,
        silo(12, 0),
        SiloStatus::Active,
        &[(p1, 135.0)],
        silo(p1, 0),
    );
    b.write(
        140.0,
        silo(12, 0),
        SiloStatus::Dead,
        &[(p1, 135.0), (p2, 139.9)],
        silo(p2, 0),
    );
    b.node(160.0, 12, NodeChange::Resumed);
    b.node(160.3, 12, NodeChange::Terminated);
    b.running[12] = false;
    b.generation[12] = 1;
    b.deaf_until[12] = 0.0;
    b.start(170.3, 12);
    b.join(172.3, 12);

    // The table is out 200–230 s; n7 suspected over a slow link.
    let [s1, s2, _] = watchers(7);
    suspicions.push(b.suspect(212.0, 226.0, s1, 7, false));
    suspicions.push(b.suspect(213.5, 225.5, s2, 7, false));
    b.log.push(ClusterLogRecord::Withheld {
        at: secs(212.5),
        monitor: silo(s1, 0),
        target: silo(7, 0),
    });

    // n15 cut off 240–250 s: its view misses a vote against it.
    b.deaf_until[15] = 250.2;
    let [c1, _, _] = watchers(15);
    suspicions.push(b.suspect(246.0, 251.0, c1, 15, false));
    b.write(
        246.2,
        silo(15, 0),
        SiloStatus::Active,
        &[(c1, 246.0)],
        silo(c1, 0),
    );
    b.deaf_until[15] = 0.0;

    // Short pauses of more nodes: suspected by one monitor each.
    for k in 0..extra_pauses {
        let node = 20 + 2 * k;
        if node >= nodes {
            break;
        }
        let at = 30.0 + f64::from(k * 37 % 256);
        faults.push(fault(FaultKind::Pause, node, at, at + 4.0));
        b.node(at, node, NodeChange::Paused);
        b.node(at + 4.0, node, NodeChange::Resumed);
        let monitor = (node + 1) % nodes;
        suspicions.push(b.suspect(at + 2.5, at + 4.1, monitor, node, false));
    }

    b.log.sort_by_key(|r| r.at());
    suspicions.sort_by_key(|s| s.start);
    let view_after = |b: &Builder, t: f64| {
        // The last view to reach the version written at `t`.
        let version = b
            .log
            .iter()
            .filter_map(|r| match r {
                ClusterLogRecord::Row { at, version, .. } if *at == secs(t) => Some(*version),
                _ => None,
            })
            .next()
            .unwrap_or(0);
        b.log
            .iter()
            .filter_map(|r| match r {
                ClusterLogRecord::View { at, version: v, .. } if *v == version => Some(*at),
                _ => None,
            })
            .max()
    };
    let crash_agreed = view_after(&b, 80.0);
    let false_agreed = view_after(&b, 140.0);
    let rejoined = secs(172.3);
    let end = secs(DURATION);
    // Node-time up: every node from its start to the end, but n5 after
    // its crash and n12 between its stop and its restart.
    let node_time: u64 = (0..nodes)
        .map(|n| end.0 - secs(f64::from(n) * 0.05).0)
        .sum::<u64>()
        - (end.0 - secs(60.0).0)
        - (secs(170.3).0 - secs(160.3).0);
    let outcome = ClusterOutcome {
        scenario: "membership-mixed".into(),
        seed,
        judge: judge.into(),
        label: judge.into(),
        duration: end,
        nodes: (0..nodes).map(|n| format!("n{n}")).collect(),
        faults,
        crashes: vec![CrashOutcome {
            silo: silo(5, 0),
            at: secs(60.0),
            declared: Some(secs(80.0)),
            agreed: crash_agreed,
            fault: 0,
        }],
        declarations: vec![
            Declaration {
                at: secs(80.0),
                target: silo(5, 0),
                by: silo(m2, 0),
                false_positive: false,
                impaired: false,
                destroyed: Nanos::ZERO,
                unresponsive: Nanos::ZERO,
                agreed: crash_agreed,
            },
            Declaration {
                at: secs(140.0),
                target: silo(12, 0),
                by: silo(p2, 0),
                false_positive: true,
                impaired: true,
                destroyed: rejoined - secs(140.0),
                unresponsive: Nanos::ZERO,
                agreed: false_agreed,
            },
        ],
        suspicions,
        counts: ClusterCounts {
            votes: 5,
            votes_withheld: 1,
            table_reads: 40 * u64::from(nodes),
            table_writes: b.writes + 10 * u64::from(nodes),
            table_conflicts: 2,
            table_unavailable: 3 * u64::from(nodes),
            messages: 120 * u64::from(nodes) * 12,
            bytes: 120 * u64::from(nodes) * 12 * 96,
            self_terminations: 1,
            join_give_ups: 0,
            restarts: 1,
            two_active_generations: 0,
            observer_false_healthy: 0,
            observer_false_starved: 0,
            refutations: 0,
        },
        node_time: Nanos(node_time),
        stopped: Vec::new(),
        views: Vec::new(),
        events: 50_000 + 1_000 * u64::from(nodes),
    };
    (outcome, b.log)
}
