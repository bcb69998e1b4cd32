//! The scenario in fdlab's own simulator (`sim/`), built in code as
//! `sim/tests/physics.rs` does.

use fdlab_sim::engine::run as sim_run;
use fdlab_sim::scenario::{
    DetectorSetup, Dist, Fault as SimFault, FaultKind, MonitorCount, Network, Scenario, Topology,
};
use fdlab_sim::valid::ValidScenario;

use super::{detectors, ms, Fault, Spec, Timelines};

pub fn scenario(spec: &Spec) -> ValidScenario {
    let fault = |kind, at, len| SimFault {
        kind: Some(kind),
        node: Some("n1".into()),
        at: Some(at),
        duration: len,
        ..Default::default()
    };
    let faults = match spec.fault {
        Fault::Crash { at } => vec![fault(FaultKind::Crash, at, None)],
        Fault::Pause { at, len } => vec![fault(FaultKind::Pause, at, Some(len))],
        // Default shape and mode: `isolate`, `drop`.
        Fault::Partition { at, len } => vec![fault(FaultKind::Partition, at, Some(len))],
        Fault::Loss { .. } => Vec::new(),
    };
    let topology = Topology::Mesh {
        nodes: 2,
        monitors_per_node: MonitorCount::All,
    };
    let scenario = Scenario {
        network: Network {
            // madsim's delay of a lone datagram (see `super`).
            latency: Dist::Uniform {
                min: ms(3),
                max: ms(12),
            },
            loss: spec.loss(),
            ..Default::default()
        },
        detectors: detectors()
            .into_iter()
            .map(|(name, config)| DetectorSetup {
                name: name.into(),
                config,
            })
            .collect(),
        faults,
        ..Scenario::new(spec.name, topology, spec.duration)
    };
    match ValidScenario::new(scenario) {
        Ok(valid) => valid,
        Err(e) => panic!("the {} scenario is invalid: {e:?}", spec.name),
    }
}

/// n0 watching n1 (the target) in one seeded run.
pub fn run(spec: &Spec, seed: u64) -> Timelines {
    let (out, _) = sim_run(&scenario(spec), seed, false);
    let pair = out
        .pairs
        .iter()
        .find(|p| p.monitor == 0 && p.target == 1)
        .expect("n0 watches n1");
    pair.detectors.iter().map(|d| d.changes.clone()).collect()
}
