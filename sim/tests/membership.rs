//! End-to-end runs of the membership simulator (Orleans over any judge).

mod common;

use common::{fault, mesh, ms};
use fdlab_protocol::phi::PhiAccrualConfig;
use fdlab_protocol::{DetectorConfig, Nanos};
use fdlab_sim::membership::{judges, run};
use fdlab_sim::scenario::{DetectorSetup, Fault, FaultKind, MembershipSetup};
use fdlab_sim::valid::ValidScenario;

fn phi_5s() -> DetectorSetup {
    DetectorSetup {
        name: "phi-5s".into(),
        config: DetectorConfig::PhiAccrual(PhiAccrualConfig {
            interval: Nanos::from_secs(5),
            first_heartbeat_estimate: Nanos::from_secs(5),
            acceptable_heartbeat_pause: Nanos::from_secs(10),
            ..Default::default()
        }),
    }
}

fn cluster(nodes: u32, minutes: u64, faults: Vec<Fault>) -> ValidScenario {
    let mut s = mesh(nodes, vec![phi_5s()], Vec::new());
    s.duration = ms(minutes * 60_000);
    s.faults = faults;
    s.membership = Some(MembershipSetup::default());
    ValidScenario::new(s).unwrap()
}

#[test]
fn a_crashed_silo_is_declared_and_views_agree() {
    let s = cluster(20, 6, vec![fault(FaultKind::Crash, "n3", 120_000, None)]);
    assert_eq!(judges(&s).len(), 2);
    for judge in 0..2 {
        let (o, _) = run(&s, 1, judge, false);
        eprintln!("{} {:?} {:?}", o.judge, o.crashes, o.counts);
        for d in &o.declarations {
            eprintln!("  {d:?}");
        }
        assert_eq!(o.crashes.len(), 1, "{}", o.judge);
        let c = &o.crashes[0];
        let declared = c.declared.expect("declared");
        assert!(declared > c.at);
        assert!(c.agreed.expect("agreed") >= declared);
        assert!(o.declarations.iter().all(|d| !d.false_positive));
        assert_eq!(o.counts.two_active_generations, 0);
    }
}

#[test]
fn runs_are_reproducible() {
    let s = cluster(
        12,
        4,
        vec![fault(FaultKind::Pause, "n2", 60_000, Some(30_000))],
    );
    let (a, la) = run(&s, 7, 0, true);
    let (b, lb) = run(&s, 7, 0, true);
    assert_eq!(a, b);
    assert_eq!(la, lb);
}

#[test]
fn nobody_is_declared_while_the_table_is_down() {
    let outage = Fault {
        kind: Some(FaultKind::TableOutage),
        at: Some(ms(160_000)),
        duration: Some(ms(30_000)),
        ..Default::default()
    };
    let s = cluster(
        20,
        6,
        vec![fault(FaultKind::Crash, "n5", 120_000, None), outage],
    );
    for judge in 0..judges(&s).len() {
        for seed in 1..4 {
            let (o, _) = run(&s, seed, judge, false);
            assert_eq!(o.declarations.len(), 1, "{} seed {seed}", o.judge);
            let at = o.declarations[0].at;
            assert!(
                at >= ms(190_000),
                "{}: declared at {at} during the outage",
                o.judge
            );
            assert!(o.counts.table_unavailable > 0);
        }
    }
}

#[test]
fn a_restarted_node_declares_its_old_generation() {
    let s = cluster(
        12,
        4,
        vec![fault(FaultKind::Crash, "n4", 60_000, Some(5_000))],
    );
    let (o, _) = run(&s, 3, 0, false);
    assert_eq!(o.crashes.len(), 1);
    let d = &o.declarations[0];
    assert_eq!((d.target.node, d.target.generation), (4, 0));
    assert_eq!(
        (d.by.node, d.by.generation),
        (4, 1),
        "the new generation declares it"
    );
    assert!(!d.false_positive);
    assert_eq!(o.counts.restarts, 1);
}

#[test]
fn a_slow_table_slows_every_operation_and_the_declaration() {
    let crash = || fault(FaultKind::Crash, "n5", 120_000, None);
    let fast = cluster(12, 5, vec![crash()]);
    let slow_table = Fault {
        kind: Some(FaultKind::SlowTable),
        at: Some(ms(60_000)),
        extra_latency: Some(ms(3_000)),
        ..Default::default()
    };
    let slow = cluster(12, 5, vec![crash(), slow_table]);
    let (a, _) = run(&fast, 4, 0, false);
    let (b, _) = run(&slow, 4, 0, false);
    let declared = |o: &fdlab_sim::membership::outcome::ClusterOutcome| {
        o.crashes[0].declared.expect("declared") - o.crashes[0].at
    };
    // The votes come once the liveness window has passed, at the reply to
    // a read the monitors keep repeating; the declaring write then takes
    // 3 s more to reach the table.
    assert!(
        declared(&b) >= declared(&a) + ms(2_000),
        "{} vs {}",
        declared(&b),
        declared(&a)
    );
    assert!(b.declarations.iter().all(|d| !d.false_positive));
}

/// The same cluster under plain SWIM and Lifeguard instead of Orleans.
fn swim_cluster(nodes: u32, minutes: u64, faults: Vec<Fault>) -> ValidScenario {
    let mut s = cluster(nodes, minutes, faults).into_inner();
    s.detectors.clear();
    s.membership.as_mut().unwrap().judges = Some(vec!["swim".into(), "lifeguard".into()]);
    ValidScenario::new(s).unwrap()
}

#[test]
fn swim_declares_a_crash_in_seconds_and_takes_a_paused_member_back() {
    let s = swim_cluster(
        20,
        5,
        vec![
            fault(FaultKind::Crash, "n3", 60_000, None),
            fault(FaultKind::Pause, "n9", 150_000, Some(30_000)),
        ],
    );
    for judge in 0..2 {
        let (o, _) = run(&s, 5, judge, false);
        let crash = &o.crashes[0];
        let after = crash.declared.expect("declared") - crash.at;
        // A probe round or two, then the suspicion timeout: 4 x log10(20) s
        // at least.
        assert!(
            after >= ms(5_200) && after < ms(20_000),
            "{}: {after}",
            o.judge
        );
        assert!(crash.agreed.is_some());
        // The paused member is declared Dead (a false declaration) and
        // taken back when it refutes, after the pause.
        let paused: Vec<_> = o
            .declarations
            .iter()
            .filter(|d| d.target.node == 9)
            .collect();
        assert_eq!(paused.len(), 1, "{}: {paused:?}", o.judge);
        assert!(paused[0].false_positive);
        let back = paused[0].at + paused[0].destroyed;
        assert!(
            back >= ms(180_000) && back < ms(190_000),
            "{}: {back}",
            o.judge
        );
        assert_eq!(o.counts.table_reads + o.counts.table_writes, 0, "no table");
    }
}

#[test]
fn a_starved_member_waits_its_turn_without_a_storm_of_events() {
    let starve = |slowdown: u64| Fault {
        kind: Some(FaultKind::Degrade),
        node: Some("n2".into()),
        at: Some(ms(30_000)),
        duration: Some(ms(120_000)),
        slowdown: Some(ms(slowdown)),
        ..Default::default()
    };
    let quiet = swim_cluster(12, 3, Vec::new());
    let (base, _) = run(&quiet, 2, 0, false);
    // Past its capacity (about 8 events a second, 300 ms each) the member
    // falls behind: its acks come late, and SWIM declares it Dead.
    let over = swim_cluster(12, 3, vec![starve(300)]);
    let (o, _) = run(&over, 2, 0, false);
    assert!(
        o.declarations
            .iter()
            .any(|d| d.target.node == 2 && d.false_positive),
        "{:?}",
        o.declarations
    );
    // Each event waits once in the member's inbox: no more events than a
    // run without the fault, give or take the refutations' gossip.
    assert!(
        o.events < base.events * 3 / 2,
        "{} vs {}",
        o.events,
        base.events
    );
}

#[test]
fn a_processing_distribution_is_for_membership_scenarios_and_alone() {
    let starve = Fault {
        kind: Some(FaultKind::Degrade),
        node: Some("n2".into()),
        at: Some(ms(30_000)),
        processing: Some(fdlab_sim::scenario::Dist::Pareto {
            scale: ms(5),
            shape: 1.1,
        }),
        ..Default::default()
    };
    // Fine in a membership scenario.
    swim_cluster(6, 2, vec![starve.clone()]);
    // Not with a fixed slowdown too.
    let both = Fault {
        slowdown: Some(ms(10)),
        ..starve.clone()
    };
    let mut s = swim_cluster(6, 2, Vec::new()).into_inner();
    s.faults = vec![both];
    assert_eq!(s.validate().unwrap_err().path, "faults[0].processing");
    // Not in a detector scenario.
    let mut plain = mesh(6, vec![phi_5s()], Vec::new());
    plain.faults = vec![starve];
    assert_eq!(plain.validate().unwrap_err().path, "faults[0].processing");
}
