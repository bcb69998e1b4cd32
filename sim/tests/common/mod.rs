//! Scenario builders shared by the simulator's end-to-end tests.
#![allow(dead_code)]

use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::{DetectorConfig, Nanos, Verdict};
use fdlab_sim::outcome::RunOutcome;
use fdlab_sim::scenario::{
    DetectorSetup, Dist, Fault, FaultKind, MonitorCount, Network, Scenario, Topology,
};

pub fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

pub fn fixed(name: &str, interval: u64, timeout: u64) -> DetectorSetup {
    DetectorSetup {
        name: name.into(),
        config: DetectorConfig::FixedTimeout(FixedTimeoutConfig {
            interval: ms(interval),
            timeout: ms(timeout),
            ..Default::default()
        }),
    }
}

pub fn mesh(nodes: u32, detectors: Vec<DetectorSetup>, faults: Vec<Fault>) -> Scenario {
    let topology = Topology::Mesh {
        nodes,
        monitors_per_node: MonitorCount::All,
    };
    let scenario = Scenario {
        network: Network {
            latency: Dist::Constant { value: ms(1) },
            ..Default::default()
        },
        detectors,
        faults,
        ..Scenario::new("test", topology, ms(60_000))
    };
    scenario.validate().unwrap();
    scenario
}

pub fn fault(kind: FaultKind, node: &str, at: u64, duration: Option<u64>) -> Fault {
    Fault {
        kind: Some(kind),
        node: Some(node.into()),
        at: Some(ms(at)),
        duration: duration.map(ms),
        ..Default::default()
    }
}

/// The timeline of `monitor` watching `target` with detector `det`.
pub fn timeline(out: &RunOutcome, monitor: u32, target: u32, det: usize) -> &[(Nanos, Verdict)] {
    let pair = out
        .pairs
        .iter()
        .find(|p| p.monitor == monitor && p.target == target)
        .unwrap();
    &pair.detectors[det].changes
}

/// The scenario, validated (every scenario a test runs must be valid).
pub fn valid(s: &fdlab_sim::scenario::Scenario) -> fdlab_sim::valid::ValidScenario {
    fdlab_sim::valid::ValidScenario::new(s.clone()).expect("a valid test scenario")
}
