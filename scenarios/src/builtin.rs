//! The built-in scenario library: the TOML files of `scenarios/builtin/`,
//! embedded in the binary. They are ordinary scenario files (users can copy
//! one and edit it); each compares the same baseline detectors (`fixed-3s`,
//! `phi-akka`, `phi-100ms`, `probe-orleans`, and `decay` where data frames
//! flow) under one kind of trouble. The `orleans-*` scenarios are membership
//! scenarios (docs/membership.md): a cluster of silos running Orleans'
//! membership, under one case each of the Orleans issue, judged by
//! `classic` (Orleans' missed-probe count), `phi-5s` and `probe-orleans`.

use fdlab_sim::scenario::SwarmTables;
use fdlab_sim::valid::ValidScenario;

use crate::scenario_file::{parse_scenario, ScenarioFileError};

/// Name (the file stem) and text of every built-in scenario, in suite order.
const BUILTIN: &[(&str, &str)] = &[
    ("crash-mesh", include_str!("../builtin/crash-mesh.toml")),
    (
        "gc-pause-target",
        include_str!("../builtin/gc-pause-target.toml"),
    ),
    (
        "gc-pause-monitor",
        include_str!("../builtin/gc-pause-monitor.toml"),
    ),
    (
        "partition-heal",
        include_str!("../builtin/partition-heal.toml"),
    ),
    (
        "partition-one-way",
        include_str!("../builtin/partition-one-way.toml"),
    ),
    ("slow-link", include_str!("../builtin/slow-link.toml")),
    ("bursty-loss", include_str!("../builtin/bursty-loss.toml")),
    (
        "cpu-starvation",
        include_str!("../builtin/cpu-starvation.toml"),
    ),
    (
        "clock-drift-monitor",
        include_str!("../builtin/clock-drift-monitor.toml"),
    ),
    (
        "clock-step-monitor",
        include_str!("../builtin/clock-step-monitor.toml"),
    ),
    (
        "backpressure-cascade",
        include_str!("../builtin/backpressure-cascade.toml"),
    ),
    (
        "pipeline-kill",
        include_str!("../builtin/pipeline-kill.toml"),
    ),
    (
        "pipeline-freeze",
        include_str!("../builtin/pipeline-freeze.toml"),
    ),
    (
        "pipeline-blackhole",
        include_str!("../builtin/pipeline-blackhole.toml"),
    ),
    (
        "orleans-crash",
        include_str!("../builtin/orleans-crash.toml"),
    ),
    (
        "orleans-gc-pause",
        include_str!("../builtin/orleans-gc-pause.toml"),
    ),
    (
        "orleans-cpu-starvation",
        include_str!("../builtin/orleans-cpu-starvation.toml"),
    ),
    (
        "orleans-asymmetric-partition",
        include_str!("../builtin/orleans-asymmetric-partition.toml"),
    ),
    (
        "orleans-clock-skew",
        include_str!("../builtin/orleans-clock-skew.toml"),
    ),
    (
        "orleans-table-outage",
        include_str!("../builtin/orleans-table-outage.toml"),
    ),
    (
        "orleans-restart",
        include_str!("../builtin/orleans-restart.toml"),
    ),
    (
        "orleans-placement",
        include_str!("../builtin/orleans-placement.toml"),
    ),
    (
        "orleans-random-200",
        include_str!("../builtin/orleans-random-200.toml"),
    ),
    (
        "lifeguard-starved-1",
        include_str!("../builtin/lifeguard-starved-1.toml"),
    ),
    (
        "lifeguard-starved-4",
        include_str!("../builtin/lifeguard-starved-4.toml"),
    ),
    (
        "lifeguard-starved-8",
        include_str!("../builtin/lifeguard-starved-8.toml"),
    ),
    (
        "lifeguard-starved-16",
        include_str!("../builtin/lifeguard-starved-16.toml"),
    ),
    (
        "placement-crash",
        include_str!("../builtin/placement-crash.toml"),
    ),
    (
        "placement-gc-pause",
        include_str!("../builtin/placement-gc-pause.toml"),
    ),
    (
        "placement-flapping",
        include_str!("../builtin/placement-flapping.toml"),
    ),
    (
        "placement-one-way-partition",
        include_str!("../builtin/placement-one-way-partition.toml"),
    ),
    (
        "placement-loss-bursts",
        include_str!("../builtin/placement-loss-bursts.toml"),
    ),
    (
        "placement-orders",
        include_str!("../builtin/placement-orders.toml"),
    ),
    (
        "lockrpc-slow-peer",
        include_str!("../builtin/lockrpc-slow-peer.toml"),
    ),
    (
        "lockrpc-dead-peer",
        include_str!("../builtin/lockrpc-dead-peer.toml"),
    ),
    (
        "lockrpc-flapping",
        include_str!("../builtin/lockrpc-flapping.toml"),
    ),
    (
        "lockrpc-convoy",
        include_str!("../builtin/lockrpc-convoy.toml"),
    ),
    (
        "lockrpc-slow-link",
        include_str!("../builtin/lockrpc-slow-link.toml"),
    ),
    (
        "lockrpc-reconnect-storm",
        include_str!("../builtin/lockrpc-reconnect-storm.toml"),
    ),
    (
        "lockrpc-rate-7962",
        include_str!("../builtin/lockrpc-rate-7962.toml"),
    ),
];

/// `(name, TOML text)` of every built-in scenario, in a stable order (the
/// order of the standard suite).
pub fn builtin() -> &'static [(&'static str, &'static str)] {
    BUILTIN
}

/// The built-in scenario `name`, parsed and validated; `None` if there is no
/// such scenario. Errors name the file as `builtin/NAME.toml`.
pub fn builtin_scenario(name: &str) -> Option<Result<ValidScenario, ScenarioFileError>> {
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(name, text)| parse(name, text))
}

/// Every built-in scenario, in order: the standard suite.
pub fn builtin_suite() -> Result<Vec<ValidScenario>, ScenarioFileError> {
    BUILTIN
        .iter()
        .map(|(name, text)| parse(name, text))
        .collect()
}

fn parse(name: &str, text: &str) -> Result<ValidScenario, ScenarioFileError> {
    parse_scenario(&format!("builtin/{name}.toml"), text, None)
}

/// [`builtin_scenario`] with its `[swarm]` and `[properties]` tables.
pub fn builtin_with_swarm(
    name: &str,
) -> Option<Result<(ValidScenario, SwarmTables), ScenarioFileError>> {
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(name, text)| {
            crate::scenario_file::parse_scenario_with_swarm(
                &format!("builtin/{name}.toml"),
                text,
                None,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_sim::scenario::{Expect, FaultKind, Topology};

    #[test]
    fn every_builtin_parses_and_validates() {
        for (name, _) in builtin() {
            let scenario = builtin_scenario(name)
                .expect("listed")
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&scenario.name, name);
            assert!(!scenario.description.is_empty(), "{name} has a description");
            let detectors: Vec<&str> = scenario.detectors.iter().map(|d| d.name.as_str()).collect();
            let membership_name = name.starts_with("orleans-") || name.starts_with("lifeguard-");
            if scenario.is_membership() {
                assert!(membership_name, "{name}");
                continue;
            }
            assert!(!membership_name, "{name} has no [membership]");
            // Key placement: memcached clients with one detector of each kind
            // (SPEC §9), runs long enough for the cache to matter.
            if scenario.is_placement() {
                assert!(name.starts_with("placement-"), "{name}");
                for baseline in ["fixed-3s", "phi-akka", "probe-orleans"] {
                    assert!(detectors.contains(&baseline), "{name} lacks {baseline}");
                }
                continue;
            }
            assert!(!name.starts_with("placement-"), "{name} has no [placement]");
            // Lock RPCs (SPEC §10): 4 nodes x 8 clients under all four
            // policies, short enough for the default suite; #7962's load
            // is one high-rate client per node.
            if scenario.is_lockrpc() {
                assert!(name.starts_with("lockrpc-"), "{name}");
                let l = scenario.lockrpc.as_ref().unwrap();
                assert_eq!(scenario.topology.node_names().len(), 4, "{name}");
                let clients = if *name == "lockrpc-rate-7962" { 1 } else { 8 };
                assert_eq!(l.clients_per_node, clients, "{name}");
                assert_eq!(l.kinds().len(), 4, "{name}");
                assert!(scenario.duration.as_secs_f64() <= 240.0, "{name} is short");
                continue;
            }
            assert!(!name.starts_with("lockrpc-"), "{name} has no [lockrpc]");
            for baseline in ["fixed-3s", "phi-akka", "phi-100ms", "probe-orleans"] {
                assert!(detectors.contains(&baseline), "{name} lacks {baseline}");
            }
            if let Topology::Dataflow { .. } = scenario.topology {
                assert!(detectors.contains(&"decay"), "{name} lacks decay");
            }
            // Faults start after a warm-up and inside the run.
            for fault in &scenario.faults {
                let start = fault.at.or(fault.window.map(|w| w[0])).unwrap();
                assert!(start.as_secs_f64() >= 30.0, "{name}: {fault:?}");
            }
            assert!(scenario.duration.as_secs_f64() <= 300.0, "{name} is short");
        }
        assert!(builtin_scenario("no-such-scenario").is_none());
        assert_eq!(builtin_suite().unwrap().len(), builtin().len());
    }

    #[test]
    fn the_list_matches_the_directory() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("builtin");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".toml").map(str::to_string)
            })
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = builtin().iter().map(|(n, _)| n.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk);
        // The plain files load as user files too.
        for (name, text) in builtin() {
            let from_disk = crate::load_scenario(&dir.join(format!("{name}.toml"))).unwrap();
            assert_eq!(Some(Ok(from_disk)), builtin_scenario(name));
            assert_eq!(
                std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap(),
                *text
            );
        }
    }

    /// The membership built-ins: every case of the Orleans issue, each a
    /// cluster judged by `classic`, phi and adaptive-probe set up for 5 s
    /// probes, short enough for CI.
    #[test]
    fn the_orleans_scenarios_are_as_the_issue_asks() {
        use fdlab_protocol::membership::ring::monitored;
        use fdlab_protocol::membership::SiloId;
        use fdlab_protocol::{DetectorConfig, Nanos};
        use fdlab_sim::scenario::{Direction, MonitorCount, CLASSIC_JUDGE};

        let secs = |s: u64| Some(Nanos::from_secs(s));
        let orleans: Vec<&str> = builtin()
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| n.starts_with("orleans-"))
            .collect();
        assert_eq!(
            orleans,
            [
                "orleans-crash",
                "orleans-gc-pause",
                "orleans-cpu-starvation",
                "orleans-asymmetric-partition",
                "orleans-clock-skew",
                "orleans-table-outage",
                "orleans-restart",
                "orleans-placement",
                "orleans-random-200",
            ]
        );
        for name in &orleans {
            let s = builtin_scenario(name).unwrap().unwrap();
            assert!(s.is_membership(), "{name}");
            assert_eq!(
                s.judge_names(),
                [
                    CLASSIC_JUDGE,
                    "phi-5s",
                    "probe-orleans",
                    "swim",
                    "lifeguard"
                ],
                "{name}"
            );
            let orleans = &s.membership.as_ref().unwrap().orleans;
            assert_eq!(orleans, &Default::default(), "{name}: Orleans' defaults");
            // Judges set up for a probe every `probe_timeout`.
            let DetectorConfig::PhiAccrual(phi) = &s.detectors[0].config else {
                panic!("{name}: phi-5s")
            };
            assert_eq!(phi.interval, orleans.probe_timeout, "{name}");
            assert_eq!(
                phi.first_heartbeat_estimate, orleans.probe_timeout,
                "{name}"
            );
            let DetectorConfig::AdaptiveProbe(probe) = &s.detectors[1].config else {
                panic!("{name}: probe-orleans")
            };
            assert_eq!(probe.initial_timeout, orleans.probe_timeout, "{name}");
            assert_eq!(probe.missed_probes_limit, orleans.num_missed_probes_limit);
            let Topology::Mesh {
                nodes,
                monitors_per_node,
            } = s.topology
            else {
                panic!("{name}: a mesh")
            };
            assert_eq!(monitors_per_node, MonitorCount::All, "{name}");
            let (silos, seeds) = match *name {
                "orleans-random-200" => (200, 5),
                // 10 memcached servers and 20 clients (SPEC §9).
                "orleans-placement" => (30, 5),
                _ => (20, 20),
            };
            assert_eq!((nodes, s.seeds), (silos, seeds), "{name}");
            let minutes = s.duration.as_secs_f64() / 60.0;
            assert!((5.0..=10.0).contains(&minutes), "{name}: {minutes} minutes");
            // Faults come once the cluster has formed.
            for fault in &s.faults {
                assert!(
                    fault.at.unwrap().as_secs_f64() >= 120.0,
                    "{name}: {fault:?}"
                );
            }
        }

        let s = |name: &str| builtin_scenario(name).unwrap().unwrap();
        let crash = s("orleans-crash");
        assert_eq!(crash.faults.len(), 1);
        assert_eq!(crash.faults[0].kind(), FaultKind::Crash);
        assert_eq!(crash.faults[0].duration, None, "stays down");
        assert_eq!(crash.faults[0].expect(), Expect::Detect);

        let gc = s("orleans-gc-pause");
        assert_eq!(gc.faults[0].kind(), FaultKind::Pause);
        assert_eq!(gc.faults[0].duration, secs(30));
        assert_eq!(gc.faults[0].expect(), Expect::Tolerate);

        let cpu = s("orleans-cpu-starvation");
        assert_eq!(cpu.faults[0].kind(), FaultKind::Degrade);
        assert_eq!(cpu.faults[0].duration, secs(300));
        assert_eq!(cpu.faults[0].expect(), Expect::Tolerate);

        // n6's replies cannot reach three silos that probe it, and that it
        // does not probe itself, in the cluster as it stands at the fault.
        let split = s("orleans-asymmetric-partition");
        let silos: Vec<SiloId> = (0..20)
            .map(|node| SiloId {
                node,
                generation: 0,
            })
            .collect();
        let probes = |n: u32| -> Vec<u32> {
            monitored(silos[n as usize], &silos, 10)
                .iter()
                .map(|s| s.node)
                .collect()
        };
        assert_eq!(split.faults.len(), 3);
        for fault in &split.faults {
            assert_eq!(fault.kind(), FaultKind::Loss);
            assert_eq!(fault.direction, Some(Direction::OneWay));
            assert_eq!(fault.probability, Some(1.0));
            assert_eq!(fault.from.as_deref(), Some("n6"));
            let to: u32 = fault.to.as_deref().unwrap()[1..].parse().unwrap();
            assert!(probes(to).contains(&6), "n{to} does not probe n6");
            assert!(!probes(6).contains(&to), "n6 probes n{to}");
            assert_eq!(fault.expect(), Expect::Tolerate);
        }

        let skew = s("orleans-clock-skew");
        assert_eq!(skew.clocks.len(), 1);
        assert_eq!(skew.clocks[0].node, "n3");
        assert_eq!(
            skew.clocks[0].offset.0, -180_000_000_000,
            "3 minutes behind"
        );
        assert!(probes(3).contains(&11), "n3 probes the silo that crashes");
        assert_eq!(skew.faults[0].node.as_deref(), Some("n11"));

        // The outage covers the moments the crash would be declared: a
        // few seconds after it under main (two refused probes ~2.5 s apart
        // and a failed indirect one), 10-15 s under 10.2 (5 s apart).
        let outage = s("orleans-table-outage");
        let (crash, table) = (&outage.faults[0], &outage.faults[1]);
        assert_eq!(crash.kind(), FaultKind::Crash);
        assert_eq!(table.kind(), FaultKind::TableOutage);
        assert_eq!(table.duration, secs(30));
        let crashed = crash.at.unwrap().as_secs_f64();
        let start = table.at.unwrap().as_secs_f64();
        for declared in [crashed + 4.5, crashed + 15.0] {
            assert!(start < declared && declared < start + 30.0, "{start}");
        }

        let restart = s("orleans-restart");
        assert_eq!(restart.faults[0].kind(), FaultKind::Crash);
        let back = restart.faults[0].duration.unwrap().as_secs_f64();
        assert!(back < 15.0, "restarts before it can be declared: {back}");

        let random = s("orleans-random-200");
        let kinds: Vec<FaultKind> = random.random_faults.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [FaultKind::Pause, FaultKind::Crash]);
        assert!(random
            .random_faults
            .iter()
            .all(|r| r.rate_per_node_hour <= 1.0));
    }

    #[test]
    fn the_pipeline_scenarios_are_as_the_issue_asks() {
        for (name, kind) in [
            ("pipeline-kill", FaultKind::Crash),
            ("pipeline-freeze", FaultKind::Pause),
            ("pipeline-blackhole", FaultKind::Partition),
        ] {
            let s = builtin_scenario(name).unwrap().unwrap();
            assert_eq!(s.seeds, 50);
            assert_eq!(
                s.topology,
                Topology::Dataflow {
                    layers: vec![2, 2, 2]
                }
            );
            assert_eq!(s.faults.len(), 1);
            let fault = &s.faults[0];
            assert_eq!(fault.kind(), kind);
            assert_eq!(fault.expect(), Expect::Detect);
            assert_eq!(fault.node.as_deref(), Some("s1.0"));
            if kind != FaultKind::Crash {
                assert_eq!(fault.duration.map(|d| d.as_secs_f64()), Some(30.0));
            }
        }
    }
}
