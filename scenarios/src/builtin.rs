//! The built-in scenario library: the TOML files of `scenarios/builtin/`,
//! embedded in the binary. They are ordinary scenario files (users can copy
//! one and edit it); each compares the same baseline detectors (`fixed-3s`,
//! `phi-akka`, `phi-100ms`, `probe-orleans`, and `decay` where data frames
//! flow) under one kind of trouble.

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
