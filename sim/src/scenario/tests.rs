//! Tests of [`super`]: validating scenarios, membership clusters and judges.

use super::*;
use fdlab_protocol::fixed::FixedTimeoutConfig;

fn scenario(topology: Topology) -> Scenario {
    Scenario {
        detectors: vec![DetectorSetup {
            name: "f".into(),
            config: DetectorConfig::FixedTimeout(FixedTimeoutConfig::default()),
        }],
        ..Scenario::new("t", topology, Nanos::from_secs(60))
    }
}

#[test]
fn sizes_that_cannot_fit_in_memory_are_refused() {
    let huge = scenario(Topology::Mesh {
        nodes: 100_000,
        monitors_per_node: MonitorCount::All,
    });
    assert_eq!(huge.validate().unwrap_err().path, "topology");
    let wide = scenario(Topology::Dataflow {
        layers: vec![50_000, 50_000],
    });
    assert_eq!(wide.validate().unwrap_err().path, "topology");
    let mut deep = scenario(Topology::Mesh {
        nodes: 3_000,
        monitors_per_node: MonitorCount::All,
    });
    deep.detectors[0].config = DetectorConfig::PhiAccrual(fdlab_protocol::phi::PhiAccrualConfig {
        max_sample_size: 1_000,
        ..Default::default()
    });
    // 9 million phi windows of 8 KB: about 70 GiB.
    assert_eq!(deep.validate().unwrap_err().path, "topology");
    let fine = scenario(Topology::Mesh {
        nodes: 1_000,
        monitors_per_node: MonitorCount::Count(10),
    });
    assert_eq!(fine.topology.monitored_pairs(), 10_000);
    fine.validate().unwrap();
    let mut storm = fine;
    storm.random_faults.push(RandomFaults {
        kind: FaultKind::Pause,
        rate_per_node_hour: 1e9,
        duration: None,
        extra_latency: None,
        probability: None,
        slowdown: None,
        capacity: None,
        expect: None,
    });
    assert_eq!(
        storm.validate().unwrap_err().path,
        "random_faults[0].rate_per_node_hour"
    );
}

fn judges() -> Vec<DetectorSetup> {
    vec![
        DetectorSetup {
            name: "phi-5s".into(),
            config: DetectorConfig::PhiAccrual(fdlab_protocol::phi::PhiAccrualConfig {
                interval: Nanos::from_secs(5),
                first_heartbeat_estimate: Nanos::from_secs(5),
                acceptable_heartbeat_pause: Nanos::from_secs(10),
                ..Default::default()
            }),
        },
        DetectorSetup {
            name: "probe".into(),
            config: DetectorConfig::AdaptiveProbe(Default::default()),
        },
    ]
}

/// A membership cluster of `silos` silos judged by `classic`, phi and
/// adaptive-probe.
fn cluster(silos: u32) -> Scenario {
    let mut s = scenario(Topology::Mesh {
        nodes: silos,
        monitors_per_node: MonitorCount::All,
    });
    s.detectors = judges();
    s.membership = Some(MembershipSetup::default());
    s
}

fn path(s: &Scenario) -> String {
    s.validate().unwrap_err().path
}

fn fault(kind: FaultKind) -> Fault {
    Fault {
        kind: Some(kind),
        at: Some(Nanos::from_secs(10)),
        ..Default::default()
    }
}

#[test]
fn large_membership_clusters_validate_and_the_largest_is_named() {
    // `monitors_per_node = "all"` is 10^8 pairs at 10,000 nodes: far past
    // the detector limits, which do not apply to a membership cluster.
    for silos in [2, 1_000, 10_000, MAX_SILOS] {
        cluster(silos)
            .validate()
            .unwrap_or_else(|e| panic!("{silos} silos: {e}"));
    }
    let heartbeat = scenario(Topology::Mesh {
        nodes: 10_000,
        monitors_per_node: MonitorCount::All,
    });
    assert_eq!(path(&heartbeat), "topology");
    let e = cluster(MAX_SILOS + 1).validate().unwrap_err();
    assert_eq!(e.path, "topology.nodes");
    assert!(e.problem.contains("at most 10000"), "{e}");
    // Judges whose state cannot fit: a phi window of a million samples.
    let mut deep = cluster(10_000);
    deep.detectors[0].config = DetectorConfig::PhiAccrual(fdlab_protocol::phi::PhiAccrualConfig {
        max_sample_size: 1_000_000,
        ..Default::default()
    });
    assert_eq!(path(&deep), "topology");
}

#[test]
fn a_membership_cluster_is_a_mesh_of_at_least_two_silos() {
    for silos in [0, 1] {
        let e = cluster(silos).validate().unwrap_err();
        assert_eq!(e.path, "topology.nodes");
        assert!(e.problem.contains("at least 2 silos"), "{e}");
        assert!(e.problem.contains(&format!("has {silos}")), "{e}");
    }
    let mut flow = cluster(4);
    flow.topology = Topology::Dataflow { layers: vec![2, 2] };
    let e = flow.validate().unwrap_err();
    assert_eq!(e.path, "topology.kind");
    assert!(e.problem.contains("mesh"), "{e}");
    let mut counted = cluster(20);
    counted.topology = Topology::Mesh {
        nodes: 20,
        monitors_per_node: MonitorCount::Count(3),
    };
    assert_eq!(path(&counted), "topology.monitors_per_node");
}

#[test]
fn orleans_keys_are_checked_under_their_path() {
    let mut s = cluster(20);
    let m = s.membership.as_mut().unwrap();
    m.orleans.num_votes_for_death_declaration = 11;
    assert_eq!(
        path(&s),
        "membership.orleans.num_votes_for_death_declaration"
    );
    let mut s = cluster(20);
    s.membership.as_mut().unwrap().orleans.probe_timeout = Nanos::ZERO;
    assert_eq!(path(&s), "membership.orleans.probe_timeout");
    let mut s = cluster(20);
    s.membership.as_mut().unwrap().restart_after = Some(Nanos::ZERO);
    assert_eq!(path(&s), "membership.restart_after");
    let mut s = cluster(20);
    s.membership.as_mut().unwrap().table_latency = Dist::Uniform {
        min: Nanos::from_millis(9),
        max: Nanos::from_millis(1),
    };
    assert_eq!(path(&s), "membership.table_latency.max");
}

#[test]
fn judges_name_classic_or_detectors_once_and_every_detector() {
    let named = |names: &[&str]| {
        let mut s = cluster(20);
        s.membership.as_mut().unwrap().judges = Some(names.iter().map(|n| n.to_string()).collect());
        s
    };
    named(&["classic", "phi-5s", "probe"]).validate().unwrap();
    named(&["probe", "phi-5s"]).validate().unwrap();
    assert_eq!(path(&named(&[])), "membership.judges");
    let e = named(&["classic", "phi", "phi-5s", "probe"])
        .validate()
        .unwrap_err();
    assert_eq!(e.path, "membership.judges[1]");
    assert!(e.problem.contains("`classic`, `phi-5s`, `probe`"), "{e}");
    let e = named(&["classic", "probe", "phi-5s", "probe"])
        .validate()
        .unwrap_err();
    assert_eq!(e.path, "membership.judges[3]");
    assert!(e.problem.contains("twice"), "{e}");
    // A detector left out of the judges is refused, not ignored.
    let e = named(&["classic", "probe"]).validate().unwrap_err();
    assert_eq!(e.path, "detectors[0].name");
    assert!(e.problem.contains("`phi-5s` is not a judge"), "{e}");
    // Only `classic`: no detector at all is fine in a membership scenario.
    let mut bare = named(&["classic"]);
    bare.detectors.clear();
    bare.validate().unwrap();
    let mut heartbeat = scenario(Topology::Mesh {
        nodes: 3,
        monitors_per_node: MonitorCount::All,
    });
    heartbeat.detectors.clear();
    assert_eq!(path(&heartbeat), "detectors");
}

#[test]
fn a_detector_of_the_data_stream_cannot_judge() {
    let mut s = cluster(20);
    s.detectors.push(DetectorSetup {
        name: "decay".into(),
        config: DetectorConfig::DataflowDecay(Default::default()),
    });
    let e = s.validate().unwrap_err();
    assert_eq!(e.path, "detectors[2].kind");
    assert!(e.problem.contains("judges from a data stream"), "{e}");
}

#[test]
fn table_faults_belong_to_membership_scenarios_and_backpressure_does_not() {
    let mut heartbeat = scenario(Topology::Mesh {
        nodes: 3,
        monitors_per_node: MonitorCount::All,
    });
    for kind in [FaultKind::TableOutage, FaultKind::SlowTable] {
        heartbeat.faults = vec![fault(FaultKind::Crash), fault(kind)];
        heartbeat.faults[0].node = Some("n1".into());
        let e = heartbeat.validate().unwrap_err();
        assert_eq!(e.path, "faults[1].kind");
        assert!(e.problem.contains(kind.name()), "{e}");
        assert!(e.problem.contains("[membership]"), "{e}");
    }
    let mut s = cluster(20);
    let mut slow = fault(FaultKind::SlowTable);
    slow.extra_latency = Some(Nanos::from_millis(500));
    s.faults = vec![fault(FaultKind::TableOutage), slow];
    s.validate().unwrap();
    s.faults[0].expect = Some(Expect::Detect);
    assert_eq!(path(&s), "faults[0].expect");
    s.faults = vec![fault(FaultKind::TableOutage)];
    s.faults[0].node = Some("n1".into());
    assert_eq!(path(&s), "faults[0].node");
    let mut squeeze = fault(FaultKind::Backpressure);
    squeeze.node = Some("n1".into());
    s.faults = vec![squeeze];
    let e = s.validate().unwrap_err();
    assert_eq!(e.path, "faults[0].kind");
    assert!(e.problem.contains("degrade"), "{e}");
    s.faults.clear();
    let random = |kind| RandomFaults {
        kind,
        rate_per_node_hour: 1.0,
        duration: None,
        extra_latency: None,
        probability: None,
        slowdown: None,
        capacity: None,
        expect: None,
    };
    for kind in [
        FaultKind::TableOutage,
        FaultKind::SlowTable,
        FaultKind::Backpressure,
    ] {
        s.random_faults = vec![random(FaultKind::Pause), random(kind)];
        assert_eq!(path(&s), "random_faults[1].kind", "{kind:?}");
    }
}

#[test]
fn judge_names_default_to_classic_then_every_detector() {
    let heartbeat = scenario(Topology::Mesh {
        nodes: 3,
        monitors_per_node: MonitorCount::All,
    });
    assert!(!heartbeat.is_membership());
    assert!(heartbeat.judge_names().is_empty());
    let mut s = cluster(20);
    assert!(s.is_membership());
    assert_eq!(s.judge_names(), ["classic", "phi-5s", "probe"]);
    s.membership.as_mut().unwrap().judges = Some(vec!["probe".into(), "classic".into()]);
    assert_eq!(s.judge_names(), ["probe", "classic"]);
}
