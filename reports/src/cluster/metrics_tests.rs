//! Tests of the cluster metrics on small hand-built outcomes: each figure
//! of [`JudgeSummary`] against a value worked out by hand.

use fdlab_protocol::Nanos;
use fdlab_sim::membership::outcome::{
    ClusterCounts, ClusterOutcome, CrashOutcome, Declaration, Suspicion,
};

use super::fixture::{secs, silo};
use super::*;

fn crash(node: u32, at: f64, declared: Option<f64>, agreed: Option<f64>) -> CrashOutcome {
    CrashOutcome {
        silo: silo(node, 0),
        at: secs(at),
        declared: declared.map(secs),
        agreed: agreed.map(secs),
        fault: 0,
    }
}

fn declaration(at: f64, node: u32, false_positive: bool, destroyed: f64) -> Declaration {
    Declaration {
        at: secs(at),
        target: silo(node, 0),
        by: silo(0, 0),
        false_positive,
        impaired: false,
        destroyed: secs(destroyed),
        unresponsive: Nanos::ZERO,
        agreed: None,
    }
}

fn suspicion(target: u32, declared: bool) -> Suspicion {
    Suspicion {
        start: secs(1.0),
        end: None,
        monitor: silo(0, 0),
        target: silo(target, 0),
        declared,
    }
}

/// One run: an hour of node-time, 7 200 messages of 100 bytes.
fn run(judge: &str, seed: u64) -> ClusterOutcome {
    ClusterOutcome {
        scenario: "m".into(),
        seed,
        judge: judge.into(),
        label: judge.into(),
        duration: secs(900.0),
        nodes: (0..4).map(|n| format!("n{n}")).collect(),
        faults: Vec::new(),
        crashes: Vec::new(),
        declarations: Vec::new(),
        suspicions: Vec::new(),
        counts: ClusterCounts {
            votes: 4,
            votes_withheld: 1,
            table_reads: 100,
            table_writes: 30,
            table_conflicts: 3,
            table_unavailable: 5,
            messages: 7_200,
            bytes: 720_000,
            self_terminations: 1,
            join_give_ups: 0,
            restarts: 1,
            two_active_generations: 0,
            observer_false_healthy: 6,
            observer_false_starved: 2,
            refutations: 0,
        },
        node_time: secs(3_600.0),
        stopped: Vec::new(),
        views: Vec::new(),
        events: 1_000,
    }
}

/// `classic` on seeds 1 and 2, then `phi` on the same seeds.
fn outcomes() -> Vec<ClusterOutcome> {
    let mut a = run("classic", 1);
    a.crashes = vec![
        crash(1, 10.0, Some(30.0), Some(31.0)),
        crash(2, 50.0, Some(60.0), None),
    ];
    a.declarations = vec![
        declaration(30.0, 1, false, 0.0),
        declaration(40.0, 3, true, 10.0),
        declaration(60.0, 2, false, 0.0),
    ];
    a.suspicions = vec![suspicion(1, true), suspicion(3, false)];
    let mut b = run("classic", 2);
    b.crashes = vec![
        crash(1, 100.0, Some(130.0), Some(133.0)),
        crash(2, 200.0, None, None),
    ];
    b.declarations = vec![
        declaration(110.0, 3, true, 20.0),
        declaration(130.0, 1, false, 99.0),
        declaration(150.0, 3, true, 30.0),
        declaration(170.0, 0, true, 40.0),
    ];
    b.counts.two_active_generations = 2;
    b.counts.table_conflicts = 6;
    let mut c = run("phi", 1);
    c.node_time = Nanos::ZERO;
    let d = run("phi", 2);
    vec![a, b, c, d]
}

#[test]
fn judges_and_seeds_in_order_of_first_appearance() {
    let m = cluster_metrics("m", &outcomes());
    assert_eq!(m.scenario, "m");
    let judges: Vec<&str> = m.summary.iter().map(|s| s.judge.as_str()).collect();
    assert_eq!(judges, ["classic", "phi"]);
    assert_eq!(m.seeds, [1, 2]);
    assert_eq!(m.runs(), 4);
    assert_eq!(m.events(), 4_000);
    assert_eq!(m.summary[0].runs, 2);
}

#[test]
fn crashes_and_time_to_declaration() {
    let m = cluster_metrics("m", &outcomes());
    let s = &m.summary[0];
    assert_eq!((s.crashes, s.declared, s.never_declared()), (4, 3, 1));
    // Delays 20 s, 10 s (seed 1) and 30 s (seed 2).
    let d = s.declare.unwrap();
    assert_eq!(d.n, 3);
    assert_eq!(d.mean, secs(20.0));
    assert_eq!(d.p50, secs(20.0));
    assert_eq!(d.p90, secs(30.0));
    assert_eq!(d.max, secs(30.0));
    // Per-run means 15 s and 30 s: s = 10.607 s, t(1) = 12.7062.
    let ci = s.declare_ci.unwrap();
    assert_eq!(ci.runs, 2);
    assert!((ci.mean - 22.5e9).abs() < 1.0);
    let half = 12.7062 * (15e9f64 * 15e9 / 2.0).sqrt() / 2f64.sqrt();
    assert!((ci.high - (22.5e9 + half)).abs() < 1e3, "{ci:?}");
    assert_eq!(ci.low, 0.0);
}

#[test]
fn time_to_agreement_and_crashes_never_agreed() {
    let m = cluster_metrics("m", &outcomes());
    let s = &m.summary[0];
    let a = s.agree.unwrap();
    // 21 s and 33 s; one declared crash and one undeclared never agreed.
    assert_eq!(
        (a.n, a.p50, a.p90, a.max),
        (2, secs(21.0), secs(33.0), secs(33.0))
    );
    assert_eq!(s.never_agreed, 2);
}

#[test]
fn false_declarations_per_node_hour_and_the_node_time_they_destroy() {
    let m = cluster_metrics("m", &outcomes());
    let s = &m.summary[0];
    assert_eq!(s.declarations, 7);
    assert_eq!(s.false_declarations, 4);
    // 4 false declarations over 2 node-hours.
    assert_eq!(s.false_rate(), Some(2.0));
    let ci = s.false_rate_ci.unwrap();
    assert_eq!((ci.runs, ci.mean), (2, 2.0));
    assert!(ci.high > 2.0);
    // 10 + 20 + 30 + 40 s; the true declaration's 99 s is not counted.
    assert_eq!(s.destroyed, secs(100.0).0 as u128);
    assert_eq!(s.mean_destroyed(), Some(secs(25.0)));
}

#[test]
fn suspicions_votes_table_and_traffic() {
    let m = cluster_metrics("m", &outcomes());
    let s = &m.summary[0];
    assert_eq!((s.suspicions, s.suspicions_undeclared), (2, 1));
    assert_eq!((s.votes, s.votes_withheld), (8, 2));
    assert_eq!(s.per_run(s.table_reads), Some(100.0));
    assert_eq!(s.per_run(s.table_writes), Some(30.0));
    assert_eq!(s.per_run(s.table_conflicts), Some(4.5));
    assert_eq!(s.per_run(s.table_unavailable), Some(5.0));
    // 7 200 messages per node-hour: 2 per node per second, of 100 bytes.
    assert_eq!(s.messages_per_node_second(), Some(2.0));
    assert_eq!(s.bytes_per_node_second(), Some(200.0));
    assert_eq!(
        (s.self_terminations, s.restarts, s.join_give_ups),
        (2, 2, 0)
    );
    assert_eq!(s.two_active_generations, 2);
    assert_eq!(s.node_time, 2 * secs(3_600.0).0 as u128);
}

#[test]
fn nothing_to_measure_is_none_not_zero() {
    let m = cluster_metrics("m", &outcomes());
    let phi = &m.summary[1];
    assert_eq!((phi.crashes, phi.declared), (0, 0));
    assert_eq!(phi.declare, None);
    assert_eq!(phi.declare_ci, None);
    assert_eq!(phi.agree, None);
    assert_eq!(phi.mean_destroyed(), None);
    // One run had no node-time: its rate is not a sample.
    assert_eq!(phi.false_rate(), Some(0.0));
    assert_eq!(phi.false_rate_ci, None);
    let empty = cluster_metrics("e", &[]);
    assert!(empty.summary.is_empty() && empty.declarations.is_empty());
    let mut none = run("x", 1);
    none.node_time = Nanos::ZERO;
    let s = summarize_judge("x", &[&none]);
    assert_eq!(s.false_rate(), None);
    assert_eq!(s.messages_per_node_second(), None);
    assert_eq!(summarize_judge("x", &[]).per_run(5), None);
}

#[test]
fn declarations_keep_their_run() {
    let m = cluster_metrics("m", &outcomes());
    assert_eq!(m.declarations.len(), 7);
    let first = &m.declarations[0];
    assert_eq!((first.judge.as_str(), first.seed), ("classic", 1));
    let last = &m.declarations[6];
    assert_eq!((last.seed, last.declaration.at), (2, secs(170.0)));
}

#[test]
fn the_synthetic_run_adds_up() {
    let (o, log) = fixture::synthetic(20, 7, "classic", 3);
    let m = cluster_metrics("s", std::slice::from_ref(&o));
    let s = &m.summary[0];
    assert_eq!((s.crashes, s.declared, s.false_declarations), (1, 1, 1));
    assert_eq!(s.declare.unwrap().p50, secs(20.0));
    assert_eq!(s.mean_destroyed(), Some(secs(32.3)));
    let agreed = s.agree.unwrap().max;
    assert!(agreed > secs(20.0) && agreed < secs(20.1), "{agreed:?}");
    assert!(log.windows(2).all(|w| w[0].at() <= w[1].at()));
}

#[test]
fn judges_are_compared_on_the_seeds_both_ran_with_node_time() {
    let m = cluster_metrics("m", &outcomes());
    assert_eq!(m.comparisons.len(), 1);
    let c = &m.comparisons[0];
    assert_eq!((c.judge_a.as_str(), c.judge_b.as_str()), ("classic", "phi"));
    // phi's seed 1 had no node-time: only seed 2 is paired, where classic
    // declared three live silos (none impaired) and phi none.
    assert_eq!(c.seeds, 1);
    let f = c.false_declarations;
    assert_eq!((f.a_count, f.b_count, f.ratio, f.ci), (3, 0, None, None));
    assert_eq!(c.false_healthy, f);
    assert!(cluster_metrics("e", &[]).comparisons.is_empty());
}
