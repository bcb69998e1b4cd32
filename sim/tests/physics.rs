//! The simulator's physics, pinned with exact expectations.

use fdlab_protocol::decay::DataflowDecayConfig;
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::{DetectorConfig, Nanos, Verdict};
use fdlab_sim::engine::run;
use fdlab_sim::scenario::{
    Channel, DetectorSetup, Dist, Expect, Fault, FaultKind, Network, PartitionMode, Scenario,
    Topology, Workload,
};

mod common;

use common::{fault, fixed, mesh, ms, timeline, valid};

#[test]
fn a_crash_is_detected_between_2_and_3_01_seconds_after() {
    let crash_at = 30_000;
    let scenario = mesh(
        2,
        vec![fixed("fixed-3s", 1000, 3000)],
        vec![fault(FaultKind::Crash, "n1", crash_at, None)],
    );
    for seed in 0..20 {
        let (out, _) = run(&valid(&scenario), seed, false);
        let changes = timeline(&out, 0, 1, 0);
        assert_eq!(
            changes.len(),
            1,
            "one verdict change, to Failed: {changes:?}"
        );
        let (at, verdict) = changes[0];
        assert_eq!(verdict, Verdict::Failed);
        let after = (at - ms(crash_at)).as_secs_f64();
        assert!(
            (2.0..=3.01).contains(&after),
            "seed {seed}: detected {after} s after"
        );
        // The ground truth: n0 must detect n1 from the crash to the end.
        let pair = out
            .pairs
            .iter()
            .find(|p| p.monitor == 0 && p.target == 1)
            .unwrap();
        assert_eq!(pair.must_detect.len(), 1);
        assert_eq!(pair.must_detect[0].window.start, ms(crash_at));
        assert_eq!(pair.must_detect[0].window.end, ms(60_000));
        // ...and n1, crashed, is not judged as a monitor from then on.
        let back = out.pairs.iter().find(|p| p.monitor == 1).unwrap();
        assert_eq!(back.unjudged[0].start, ms(crash_at));
    }
}

#[test]
fn a_500ms_pause_fools_a_200ms_timeout_but_not_a_3s_one() {
    let scenario = mesh(
        2,
        vec![fixed("tight", 50, 200), fixed("loose", 1000, 3000)],
        vec![fault(FaultKind::Pause, "n1", 20_000, Some(500))],
    );
    for seed in 0..10 {
        let (out, _) = run(&valid(&scenario), seed, false);
        let tight = timeline(&out, 0, 1, 0);
        assert_eq!(
            tight.len(),
            2,
            "Failed during the pause, then Alive: {tight:?}"
        );
        assert_eq!(tight[0].1, Verdict::Failed);
        assert!(tight[0].0 > ms(20_000) && tight[0].0 < ms(20_500));
        assert_eq!(tight[1].1, Verdict::Alive);
        // The paused node handles its backlog late: its next heartbeat leaves
        // at the resume and arrives 1 ms later.
        assert_eq!(tight[1].0, ms(20_501));
        assert!(
            timeline(&out, 0, 1, 1).is_empty(),
            "3 s timeout tolerates it"
        );
        // A pause is tolerated by default: no must-detect window.
        assert!(out.pairs.iter().all(|p| p.must_detect.is_empty()));
    }
}

#[test]
fn the_run_is_deterministic_and_seeds_differ() {
    let scenario = mesh(
        5,
        vec![fixed("a", 100, 300), fixed("b", 1000, 3000)],
        vec![
            fault(FaultKind::Crash, "n3", 10_000, Some(5_000)),
            fault(FaultKind::Pause, "n1", 20_000, Some(2_000)),
        ],
    );
    let (a, ta) = run(&valid(&scenario), 7, true);
    let (b, tb) = run(&valid(&scenario), 7, true);
    assert_eq!(a, b);
    assert_eq!(ta, tb);
    let (c, _) = run(&valid(&scenario), 8, false);
    assert_ne!(a.pairs, c.pairs, "another seed, other phases");
}

/// Shadow mode: a detector's outcome is the same with or without another
/// detector on its pairs, also when deadlines and arrivals fall on the same
/// nanosecond (constant latency, whole-millisecond intervals and timeouts)
/// and when deadlines come while the monitor is paused.
#[test]
fn adding_a_detector_changes_no_other_draw() {
    let faults = vec![fault(FaultKind::Pause, "n1", 20_000, Some(2_500))];
    for latency in [
        Dist::Uniform {
            min: ms(1),
            max: ms(40),
        },
        Dist::Constant { value: ms(1) },
    ] {
        let mut with_one = mesh(3, vec![fixed("a", 100, 300)], faults.clone());
        with_one.network.latency = latency;
        with_one.network.loss = 0.05;
        let mut with_two = with_one.clone();
        with_two.detectors.insert(0, fixed("b", 70, 250));
        with_two.detectors.push(fixed("c", 100, 200));
        let (one, _) = run(&valid(&with_one), 3, false);
        let (two, _) = run(&valid(&with_two), 3, false);
        for (p1, p2) in one.pairs.iter().zip(&two.pairs) {
            assert_eq!(p1.detectors[0], p2.detectors[1]);
        }
        assert!(
            one.pairs.iter().any(|p| !p.detectors[0].changes.is_empty()),
            "the pause must make verdicts change, or the test shows nothing"
        );
    }
}

/// A deadline on the very nanosecond of an arrival: the arrival counts
/// first, whatever else shares the pair. `b`'s deadline comes 1 ms before
/// each arrival and re-arms the pair's timer after the heartbeat was sent,
/// so an order by push time alone would flip `a`'s outcome.
#[test]
fn a_deadline_meeting_an_arrival_does_not_depend_on_other_detectors() {
    // "Silence > timeout" first holds 1 ns after last + timeout: a timeout
    // 1 ns short of the interval puts the deadline on the next arrival.
    let just_short = |name: &str, timeout: Nanos| DetectorSetup {
        name: name.into(),
        config: DetectorConfig::FixedTimeout(FixedTimeoutConfig {
            interval: ms(100),
            timeout: timeout - Nanos(1),
            ..Default::default()
        }),
    };
    let mut alone = mesh(2, vec![just_short("a", ms(100))], Vec::new());
    alone.network.latency = Dist::Constant { value: ms(2) };
    let mut shared = alone.clone();
    shared.detectors.push(just_short("b", ms(99)));
    for seed in 1..=3 {
        let (one, _) = run(&valid(&alone), seed, false);
        let (two, _) = run(&valid(&shared), seed, false);
        for (p1, p2) in one.pairs.iter().zip(&two.pairs) {
            assert_eq!(p1.detectors[0], p2.detectors[0]);
            assert!(
                p2.detectors[1].changes.len() > 100,
                "b flaps at every heartbeat"
            );
        }
    }
}

fn pipeline(heartbeat_channel: Channel, faults: Vec<Fault>) -> Scenario {
    let topology = Topology::Dataflow { layers: vec![1, 1] };
    let scenario = Scenario {
        network: Network {
            latency: Dist::Constant { value: ms(1) },
            heartbeat_channel,
            ..Default::default()
        },
        workload: Workload {
            interval: Dist::Constant { value: ms(10) },
            ..Default::default()
        },
        detectors: vec![
            fixed("fixed", 100, 3000),
            DetectorSetup {
                name: "decay".into(),
                config: DetectorConfig::DataflowDecay(DataflowDecayConfig::default()),
            },
        ],
        faults,
        ..Scenario::new("pipeline", topology, ms(20_000))
    };
    scenario.validate().unwrap();
    scenario
}

#[test]
fn a_holding_partition_delivers_everything_in_order_after_the_heal() {
    let partition = Fault {
        kind: Some(FaultKind::Partition),
        node: Some("s0.0".into()),
        mode: Some(PartitionMode::Hold),
        at: Some(ms(5_000)),
        duration: Some(ms(2_000)),
        expect: Some(Expect::Detect),
        ..Default::default()
    };
    let scenario = pipeline(Channel::Data, vec![partition]);
    let (out, trace) = run(&valid(&scenario), 1, true);
    let trace = trace.unwrap();
    // Deliveries on the data link, in order: frames before the cut, none
    // during it, then the held backlog right after the heal.
    let deliveries: Vec<Nanos> = trace
        .iter()
        .filter(|r| r.event == "deliver" && r.node == Some(1))
        .map(|r| r.time)
        .collect();
    assert!(deliveries.windows(2).all(|w| w[0] <= w[1]));
    assert!(!deliveries.iter().any(|&t| t > ms(5_001) && t < ms(7_000)));
    let data_before = trace
        .iter()
        .filter(|r| r.event == "deliver" && r.detail == "data" && r.time <= ms(5_001))
        .count();
    // Nothing sent is lost: the source was throttled once the send buffer
    // (64 frames, data and in-band heartbeats) filled, and the buffered frames
    // all arrive just after the heal.
    assert!(!trace
        .iter()
        .any(|r| r.event == "drop" && r.detail.starts_with("data")));
    let burst = trace
        .iter()
        .filter(|r| {
            r.event == "deliver"
                && (r.detail == "data" || r.detail == "heartbeat (in band)")
                && r.time >= ms(7_000)
                && r.time <= ms(7_002)
        })
        .count();
    assert!((64..=66).contains(&burst), "{burst}");
    assert!((495..=501).contains(&data_before), "{data_before}");
    // The decay detector sees the stall; the must-detect window is the cut.
    let pair = &out.pairs[0];
    assert_eq!(pair.must_detect[0].window.start, ms(5_000));
    let decay = &pair.detectors[1].changes;
    assert!(decay
        .iter()
        .any(|&(t, v)| v == Verdict::Failed && t > ms(5_000) && t < ms(5_100)));
}

#[test]
fn a_clock_step_on_a_monitor_fools_a_fixed_timeout() {
    let mut step = fault(FaultKind::Clock, "n0", 20_000, None);
    step.offset = Some(fdlab_sim::scenario::SignedNanos(2_500_000_000));
    let scenario = mesh(2, vec![fixed("fixed-3s", 1000, 3000)], vec![step]);
    for seed in 0..20 {
        let (out, _) = run(&valid(&scenario), seed, false);
        // A +2.5 s jump makes the last heartbeat look 2.5 s older: n0 declares
        // n1 Failed as soon as that heartbeat is 0.5 s old (at once if it is
        // already), and the next heartbeat, due within 1 s, brings it back.
        let changes = timeline(&out, 0, 1, 0);
        let [(failed_at, Verdict::Failed), (alive_at, Verdict::Alive)] = changes else {
            panic!("seed {seed}: {changes:?}");
        };
        assert!(
            *failed_at >= ms(20_000) && *failed_at <= ms(20_501),
            "{failed_at:?}"
        );
        assert!(
            *alive_at > *failed_at && *alive_at <= ms(21_002),
            "{alive_at:?}"
        );
        // n1's own view of n0 is not affected.
        assert!(timeline(&out, 1, 0, 0).is_empty());
    }
}

#[test]
fn a_starved_node_falls_behind_with_its_heartbeats() {
    let mut degrade = fault(FaultKind::Degrade, "n1", 20_000, Some(20_000));
    degrade.slowdown = Some(ms(1_500));
    let scenario = mesh(2, vec![fixed("fixed-3s", 1000, 3000)], vec![degrade]);
    let (out, _) = run(&valid(&scenario), 1, false);
    // n1 spends 1.5 s on every event it handles: its heartbeat timer and the
    // heartbeats it receives queue up, and its heartbeats leave > 3 s apart.
    let changes = timeline(&out, 0, 1, 0);
    assert!(
        changes
            .iter()
            .any(|&(t, v)| v == Verdict::Failed && t > ms(20_000)),
        "{changes:?}"
    );
    assert_eq!(
        changes.last().map(|c| c.1),
        Some(Verdict::Alive),
        "recovers after"
    );
    let undisturbed = mesh(2, vec![fixed("fixed-3s", 1000, 3000)], Vec::new());
    let (out, _) = run(&valid(&undisturbed), 1, false);
    assert!(timeline(&out, 0, 1, 0).is_empty());
}

#[test]
fn detectors_with_the_same_interval_share_heartbeats_and_each_counts_them() {
    let phi = DetectorSetup {
        name: "phi".into(),
        config: DetectorConfig::PhiAccrual(fdlab_protocol::phi::PhiAccrualConfig::default()),
    };
    let mut scenario = mesh(2, vec![fixed("fixed-3s", 1000, 3000), phi], Vec::new());
    scenario.network.loss = 0.2;
    let (out, trace) = run(&valid(&scenario), 5, true);
    let trace = trace.unwrap();
    let pair = &out.pairs[0];
    // One message on the wire per heartbeat, counted as overhead of each.
    assert_eq!(pair.detectors[0].messages, pair.detectors[1].messages);
    let sent = pair.detectors[0].messages as usize;
    assert!((59..=61).contains(&sent), "{sent}");
    let delivered = trace
        .iter()
        .filter(|r| r.event == "deliver" && r.node == Some(0) && r.detail == "heartbeat")
        .count();
    let lost = trace
        .iter()
        .filter(|r| r.event == "drop" && r.node == Some(1) && r.detail.ends_with("loss"))
        .count();
    assert_eq!(delivered + lost, sent);
}

/// A data-stream detector on a mesh would never hear from its peer: the
/// scenario is refused, naming the detector.
#[test]
fn a_data_stream_detector_on_a_mesh_is_refused() {
    use fdlab_protocol::decay::DataflowDecayConfig;
    let topology = fdlab_sim::scenario::Topology::Mesh {
        nodes: 3,
        monitors_per_node: fdlab_sim::scenario::MonitorCount::All,
    };
    let mut s = fdlab_sim::scenario::Scenario {
        detectors: vec![fdlab_sim::scenario::DetectorSetup {
            name: "decay".into(),
            config: fdlab_protocol::DetectorConfig::DataflowDecay(DataflowDecayConfig::default()),
        }],
        ..fdlab_sim::scenario::Scenario::new("mesh-decay", topology, Nanos::from_secs(10))
    };
    let err = s.validate().unwrap_err().to_string();
    assert!(
        err.contains("detectors[0].kind") && err.contains("mesh"),
        "{err}"
    );
    s.topology = fdlab_sim::scenario::Topology::Dataflow { layers: vec![1, 1] };
    assert!(s.validate().is_ok());
}
