//! Random valid scenarios: a run never panics, and the same (scenario, seed)
//! gives the same outcome and trace twice.

use fdlab_protocol::decay::DataflowDecayConfig;
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::phi::PhiAccrualConfig;
use fdlab_protocol::probe::AdaptiveProbeConfig;
use fdlab_protocol::{DetectorConfig, Nanos};
use fdlab_sim::engine::{part_count, run};
use fdlab_sim::scenario::{
    Channel, ClockSetup, DetectorSetup, Direction, Dist, Expect, Fault, FaultKind, MonitorCount,
    Network, PartitionMode, RandomFaults, Scenario, SignedNanos, Topology, Workload,
};
use proptest::prelude::*;

fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

fn topology() -> impl Strategy<Value = Topology> {
    prop_oneof![
        (2u32..7, 0u32..4).prop_map(|(nodes, k)| Topology::Mesh {
            nodes,
            monitors_per_node: if k == 0 || k >= nodes {
                MonitorCount::All
            } else {
                MonitorCount::Count(k)
            },
        }),
        proptest::collection::vec(1u32..3, 2..4).prop_map(|layers| Topology::Dataflow { layers }),
    ]
}

fn dist() -> impl Strategy<Value = Dist> {
    prop_oneof![
        (0u64..5).prop_map(|v| Dist::Constant { value: ms(v) }),
        (0u64..3, 0u64..20).prop_map(|(a, b)| Dist::Uniform {
            min: ms(a),
            max: ms(a + b)
        }),
        (1u64..5, 0u64..3).prop_map(|(m, s)| Dist::Normal {
            mean: ms(m),
            std_dev: ms(s)
        }),
        (1u64..5, 0.0f64..1.5).prop_map(|(m, sigma)| Dist::Lognormal {
            median: ms(m),
            sigma
        }),
        (1u64..3, 1.0f64..4.0).prop_map(|(s, shape)| Dist::Pareto {
            scale: ms(s),
            shape
        }),
    ]
}

fn kind() -> impl Strategy<Value = FaultKind> {
    prop_oneof![
        Just(FaultKind::Crash),
        Just(FaultKind::Restart),
        Just(FaultKind::Pause),
        Just(FaultKind::Partition),
        Just(FaultKind::SlowLink),
        Just(FaultKind::Loss),
        Just(FaultKind::Backpressure),
        Just(FaultKind::Degrade),
        Just(FaultKind::Clock),
    ]
}

/// A fault of `kind` on node `node`, shaped to pass validation.
fn fault(kind: FaultKind, node: String, other: String, at: u64, len: u64, flag: bool) -> Fault {
    let mut f = Fault {
        kind: Some(kind),
        at: Some(ms(at)),
        expect: Some(if flag {
            Expect::Detect
        } else {
            Expect::Tolerate
        }),
        ..Default::default()
    };
    match kind {
        // Membership scenarios only (`kind()` never draws them).
        FaultKind::TableOutage | FaultKind::SlowTable => {}
        FaultKind::Crash | FaultKind::Restart => {
            f.node = Some(node);
            f.duration = flag.then_some(ms(len));
        }
        FaultKind::Pause => {
            f.node = Some(node);
            f.duration = Some(ms(len));
            f.planned = Some(flag);
        }
        FaultKind::Partition => {
            f.node = Some(node);
            f.duration = Some(ms(len));
            f.mode = Some(if flag {
                PartitionMode::Hold
            } else {
                PartitionMode::Drop
            });
            f.direction = Some(if len.is_multiple_of(2) {
                Direction::OneWay
            } else {
                Direction::Both
            });
        }
        FaultKind::SlowLink => {
            f.from = Some(node);
            f.to = Some(other);
            f.extra_latency = Some(ms(len % 500));
            f.duration = Some(ms(len));
        }
        FaultKind::Loss => {
            f.probability = Some((len % 100) as f64 / 100.0);
            f.duration = Some(ms(len));
            if flag {
                f.burst = Some(ms(50));
                f.gap = Some(ms(200));
            }
        }
        FaultKind::Backpressure => {
            f.node = Some(node);
            f.capacity = Some(0.05);
            f.duration = Some(ms(len));
        }
        FaultKind::Degrade => {
            f.node = Some(node);
            f.slowdown = Some(ms(len % 50));
            f.duration = Some(ms(len));
        }
        FaultKind::Clock => {
            f.node = Some(node);
            f.offset = Some(SignedNanos(
                if flag { -1 } else { 1 } * (len as i64) * 1_000_000,
            ));
            f.drift = flag.then_some(0.01);
        }
    }
    f
}

fn detectors(dataflow: bool) -> Vec<DetectorSetup> {
    let mut d = vec![
        DetectorSetup {
            name: "fixed".into(),
            config: DetectorConfig::FixedTimeout(FixedTimeoutConfig {
                interval: ms(200),
                timeout: ms(700),
                ..Default::default()
            }),
        },
        DetectorSetup {
            name: "phi".into(),
            config: DetectorConfig::PhiAccrual(PhiAccrualConfig {
                interval: ms(100),
                acceptable_heartbeat_pause: Nanos::ZERO,
                ..Default::default()
            }),
        },
        DetectorSetup {
            name: "probe".into(),
            config: DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig {
                initial_timeout: ms(500),
                ..Default::default()
            }),
        },
    ];
    if dataflow {
        d.push(DetectorSetup {
            name: "decay".into(),
            config: DetectorConfig::DataflowDecay(DataflowDecayConfig::default()),
        });
    }
    d
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        topology(),
        dist(),
        0.0f64..0.2,
        prop_oneof![Just(Channel::Control), Just(Channel::Data)],
        proptest::collection::vec(
            (
                kind(),
                0usize..20,
                0usize..20,
                0u64..8_000,
                1u64..4_000,
                any::<bool>(),
            ),
            0..5,
        ),
        proptest::option::of((0.0f64..60.0, 1u64..500)),
        any::<bool>(),
        (1u32..80, 1u32..80),
    )
        .prop_map(
            |(topology, latency, loss, channel, faults, random, clock, (sb, rq))| {
                let names = topology.node_names();
                let dataflow = matches!(topology, Topology::Dataflow { .. });
                let pick = |i: usize| names[i % names.len()].clone();
                Scenario {
                    network: Network {
                        latency,
                        loss,
                        heartbeat_channel: channel,
                        send_buffer: sb,
                        receive_queue: rq,
                        ..Default::default()
                    },
                    workload: Workload {
                        interval: Dist::Uniform {
                            min: ms(5),
                            max: ms(20),
                        },
                        ..Default::default()
                    },
                    detectors: detectors(dataflow),
                    faults: faults
                        .into_iter()
                        .map(|(k, a, b, at, len, flag)| {
                            fault(k, pick(a), pick(b + 1 + a), at, len, flag)
                        })
                        .collect(),
                    random_faults: random
                        .into_iter()
                        .map(|(rate, len)| RandomFaults {
                            kind: FaultKind::Pause,
                            rate_per_node_hour: rate * 60.0,
                            duration: Some(Dist::Constant { value: ms(len) }),
                            extra_latency: None,
                            probability: None,
                            slowdown: None,
                            capacity: None,
                            expect: None,
                        })
                        .collect(),
                    clocks: if clock {
                        vec![ClockSetup {
                            node: names[0].clone(),
                            drift: 0.001,
                            offset: SignedNanos(-5_000_000),
                        }]
                    } else {
                        Vec::new()
                    },
                    ..Scenario::new("random", topology, ms(10_000))
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_scenarios_are_deterministic_and_never_panic(s in scenario(), seed in any::<u64>()) {
        prop_assume!(s.validate().is_ok());
        let (a, ta) = run(&valid(&s), seed, true);
        let (b, tb) = run(&valid(&s), seed, true);
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(ta, tb);
        // An untraced run may be split into parts simulated on their own
        // (see `engine::run`): it must give exactly the traced run's outcome.
        let (c, tc) = run(&valid(&s), seed, false);
        prop_assert!(tc.is_none());
        prop_assert_eq!(&a, &c);
        // Timelines are in time order and alternate.
        for pair in &a.pairs {
            for d in &pair.detectors {
                prop_assert!(d.changes.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 != w[1].1));
            }
        }
    }

    /// The same for a random mesh whose pairs take the per-pair fast path
    /// (`engine/fast.rs`): without the probing detector and the link
    /// faults, each of which sends every event of a pair to the general
    /// loop.
    #[test]
    fn random_meshes_on_the_fast_path_split_as_the_single_pass(s in scenario(), seed in any::<u64>()) {
        let mut s = s;
        prop_assume!(matches!(s.topology, Topology::Mesh { .. }));
        s.detectors.retain(|d| !matches!(d.config, DetectorConfig::AdaptiveProbe(_)));
        s.faults.retain(|f| {
            !matches!(
                f.kind,
                Some(FaultKind::Partition | FaultKind::SlowLink | FaultKind::Loss)
            )
        });
        prop_assume!(s.validate().is_ok());
        let (whole, trace) = run(&valid(&s), seed, true);
        prop_assert!(trace.is_some());
        let (split, _) = run(&valid(&s), seed, false);
        prop_assert_eq!(whole, split);
    }
}

/// A mesh big enough to be split into parts, under every fault kind that
/// leaves its pairs independent: the split run gives exactly the outcome of the
/// single pass (a traced run is never split).
#[test]
fn a_split_mesh_run_equals_the_single_pass() {
    let kinds = [
        FaultKind::Crash,
        FaultKind::Restart,
        FaultKind::Pause,
        FaultKind::Partition,
        FaultKind::SlowLink,
        FaultKind::Loss,
        FaultKind::Clock,
    ];
    split_equals_whole(&kinds, detectors(false));
}

/// The same on the fast path of a pair simulated alone (`engine/fast.rs`:
/// no partition, link fault nor probing detector), with two heartbeat
/// intervals per pair (two streams, two ticks pending) and every fault of a
/// node: crashes, restarts, pauses, loss and clocks.
#[test]
fn a_split_mesh_run_on_the_fast_path_equals_the_single_pass() {
    let kinds = [
        FaultKind::Crash,
        FaultKind::Restart,
        FaultKind::Pause,
        FaultKind::Clock,
    ];
    let mut heartbeats = detectors(false);
    heartbeats.retain(|d| !matches!(d.config, DetectorConfig::AdaptiveProbe(_)));
    split_equals_whole(&kinds, heartbeats);
}

fn split_equals_whole(kinds: &[FaultKind], detectors: Vec<DetectorSetup>) {
    let topology = Topology::Mesh {
        nodes: 60,
        monitors_per_node: MonitorCount::Count(5),
    };
    let names = topology.node_names();
    let faults = kinds
        .iter()
        .enumerate()
        .flat_map(|(i, &k)| {
            [true, false].map(|flag| {
                let node = names[(i * 7 + usize::from(flag)) % names.len()].clone();
                let other = names[(i * 7 + 3) % names.len()].clone();
                fault(k, node, other, 1_000 + 900 * i as u64, 2_500, flag)
            })
        })
        .collect();
    let s = Scenario {
        network: Network {
            latency: Dist::Lognormal {
                median: ms(1),
                sigma: 0.8,
            },
            loss: 0.01,
            ..Default::default()
        },
        detectors,
        faults,
        clocks: vec![ClockSetup {
            node: names[5].clone(),
            drift: 0.002,
            offset: SignedNanos(3_000_000),
        }],
        ..Scenario::new("split", topology, ms(12_000))
    };
    s.validate().unwrap();
    assert!(part_count(&valid(&s), 3) > 2, "the test must split the run");
    let (whole, trace) = run(&valid(&s), 3, true);
    assert!(trace.is_some());
    let (split, _) = run(&valid(&s), 3, false);
    for (a, b) in whole.pairs.iter().zip(&split.pairs) {
        assert_eq!(a, b);
    }
    assert_eq!(whole, split);
    assert!(whole
        .pairs
        .iter()
        .any(|p| p.detectors.iter().any(|d| !d.changes.is_empty())));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Sampling scores changes nothing of the run, and the plan (pairs,
    /// faults) a replay checks `--pair` against is the run's own.
    #[test]
    fn score_sampling_is_invisible_and_the_plan_matches(s in scenario(), seed in any::<u64>()) {
        use fdlab_sim::engine::run_with_scores;
        use fdlab_sim::plan::RunPlan;
        use fdlab_sim::scores::ScoreSampler;
        prop_assume!(s.validate().is_ok());
        let v = valid(&s);
        let (a, ta) = run(&v, seed, true);
        let p = RunPlan::build(&v, seed);
        let pairs: Vec<(u32, u32)> = a.pairs.iter().map(|x| (x.monitor, x.target)).collect();
        prop_assert_eq!(p.pairs(), &pairs[..]);
        prop_assert_eq!(p.faults(), &a.faults[..]);
        prop_assert_eq!(p.nodes(), &a.nodes[..]);
        for x in &a.pairs {
            prop_assert_eq!(&p.must_detect(x.monitor, x.target), &x.must_detect);
        }
        let Some(pair) = p.default_pair() else { return Ok(()); };
        let mut sampler = ScoreSampler::new(pair, s.detectors.len(), s.duration);
        let (b, tb) = run_with_scores(&valid(&s), seed, &mut sampler);
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(ta, tb);
        let series = sampler.finish(s.duration);
        prop_assert_eq!(series.len(), s.detectors.len());
        for one in &series {
            prop_assert!(!one.samples.is_empty());
            prop_assert!(one.samples.windows(2).all(|w| w[0].0 <= w[1].0));
            prop_assert!(one.samples.iter().all(|&(t, _)| t <= s.duration));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Recording a run's detector calls changes nothing of the run, and
    /// making the calls again alone gives every detector the run's verdict
    /// changes (a call left out or mis-recorded shows up here).
    #[test]
    fn a_run_s_detector_calls_replayed_alone_give_its_verdicts(s in scenario(), seed in any::<u64>()) {
        use fdlab_sim::engine::run_recording_calls;
        prop_assume!(s.validate().is_ok());
        let v = valid(&s);
        let (a, _) = run(&v, seed, false);
        let (b, calls) = run_recording_calls(&v, seed);
        prop_assert_eq!(&a, &b);
        let replayed = calls.replay();
        let d = s.detectors.len();
        prop_assert_eq!(replayed.changes.len(), a.pairs.len() * d);
        for (p, pair) in a.pairs.iter().enumerate() {
            for (k, timeline) in pair.detectors.iter().enumerate() {
                let want: Vec<_> = timeline.changes.iter().map(|&(_, v)| v).collect();
                prop_assert_eq!(&replayed.changes[p * d + k], &want, "pair {} detector {}", p, k);
            }
        }
    }
}

/// The scenario, validated (every scenario a test runs must be valid).
fn valid(s: &fdlab_sim::scenario::Scenario) -> fdlab_sim::valid::ValidScenario {
    fdlab_sim::valid::ValidScenario::new(s.clone()).expect("a valid test scenario")
}
