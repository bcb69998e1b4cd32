//! A scenario checked once: what every run, plan and detector constructor
//! takes, so that none of them checks it again or has an error to handle.

use std::ops::Deref;
use std::sync::Arc;

use fdlab_protocol::{Detector, Nanos, ValidConfig};

use crate::scenario::{DetectorSetup, Scenario, ScenarioError, CLASSIC_JUDGE};

/// A [`Scenario`] that passed [`Scenario::validate`], with each detector's
/// configuration kept validated. The only way to make one is
/// [`ValidScenario::new`]; read it as a [`Scenario`] through `Deref`, and
/// change it by taking the scenario out ([`ValidScenario::into_inner`]) and
/// validating the result again.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidScenario {
    scenario: Scenario,
    /// `scenario.detectors[i].config`, validated.
    configs: Vec<ValidConfig>,
    /// The file it was read from, if any.
    origin: Origin,
}

/// The file a scenario was read from and its text: what lets a check made
/// after parsing (a run too large, too long) name `file:line` of the key it
/// is about, as the file's own errors do.
#[derive(Clone, Default)]
pub struct Origin(Option<Arc<SourceFile>>);

/// A scenario file as read.
#[derive(Debug)]
pub struct SourceFile {
    /// The file's name as the user gave it.
    pub file: String,
    pub text: String,
}

impl Origin {
    pub fn file(&self) -> Option<&SourceFile> {
        self.0.as_deref()
    }
}

/// Where a scenario was read from is not part of what it is: two scenarios
/// that run the same are equal, and print the same, whatever their files.
impl std::fmt::Debug for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Origin")
    }
}

impl PartialEq for Origin {
    fn eq(&self, _: &Origin) -> bool {
        true
    }
}

impl ValidScenario {
    /// Checks `scenario` (every key, and what needs the whole scenario).
    pub fn new(scenario: Scenario) -> Result<ValidScenario, ScenarioError> {
        let configs = scenario.checked_configs()?;
        debug_assert_eq!(configs.len(), scenario.detectors.len());
        Ok(ValidScenario {
            scenario,
            configs,
            origin: Origin::default(),
        })
    }

    /// This scenario, read from `file` holding `text`.
    pub fn with_origin(mut self, file: &str, text: &str) -> ValidScenario {
        self.origin = Origin(Some(Arc::new(SourceFile {
            file: file.to_string(),
            text: text.to_string(),
        })));
        self
    }

    /// The file this scenario was read from, if it was.
    pub fn origin(&self) -> Option<&SourceFile> {
        self.origin.file()
    }

    /// The validated configuration of detector `d` (its position in the
    /// scenario).
    pub fn config(&self, d: usize) -> &ValidConfig {
        &self.configs[d]
    }

    /// A fresh instance of detector `d` that starts monitoring at local time
    /// `now`.
    pub fn start_detector(&self, d: usize, now: Nanos) -> Detector {
        Detector::start(&self.configs[d], now)
    }

    /// The same scenario with `detectors` instead of its own, checked.
    pub fn with_detectors(
        &self,
        detectors: Vec<DetectorSetup>,
    ) -> Result<ValidScenario, ScenarioError> {
        let mut scenario = self.scenario.clone();
        scenario.detectors = detectors;
        ValidScenario::new(scenario)
    }

    /// The same scenario with only its detectors at `indices` (distinct, in
    /// that order). Nothing is checked again: a selection of a valid
    /// scenario's detectors is valid (their names stay distinct, each is
    /// valid on its own, and every limit on their number or state only
    /// shrinks), as long as it keeps one. A membership scenario's
    /// `membership.judges`, when given, keeps `classic` and the selected
    /// detectors, in its order (every detector of a valid membership
    /// scenario is a judge, so none is left out).
    pub fn select_detectors(&self, indices: &[usize]) -> ValidScenario {
        debug_assert!(!indices.is_empty(), "a scenario needs a detector");
        debug_assert!(
            indices
                .iter()
                .enumerate()
                .all(|(k, i)| !indices[..k].contains(i)),
            "a detector selected twice"
        );
        let mut scenario = self.scenario.clone();
        scenario.detectors = indices
            .iter()
            .map(|&i| self.scenario.detectors[i].clone())
            .collect();
        if let Some(judges) = scenario.membership.as_mut().and_then(|m| m.judges.as_mut()) {
            let kept = &scenario.detectors;
            judges.retain(|j| j == CLASSIC_JUDGE || kept.iter().any(|d| &d.name == j));
        }
        let configs = indices.iter().map(|&i| self.configs[i].clone()).collect();
        ValidScenario {
            scenario,
            configs,
            origin: self.origin.clone(),
        }
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    pub fn into_inner(self) -> Scenario {
        self.scenario
    }
}

impl Deref for ValidScenario {
    type Target = Scenario;

    fn deref(&self) -> &Scenario {
        &self.scenario
    }
}

impl TryFrom<Scenario> for ValidScenario {
    type Error = ScenarioError;

    fn try_from(scenario: Scenario) -> Result<ValidScenario, ScenarioError> {
        ValidScenario::new(scenario)
    }
}

#[cfg(test)]
mod tests {
    use fdlab_protocol::fixed::FixedTimeoutConfig;
    use fdlab_protocol::phi::PhiAccrualConfig;
    use fdlab_protocol::DetectorConfig;

    use super::*;
    use crate::scenario::{MonitorCount, Topology};

    fn setup(name: &str, config: DetectorConfig) -> DetectorSetup {
        DetectorSetup {
            name: name.into(),
            config,
        }
    }

    fn scenario() -> Scenario {
        let topology = Topology::Mesh {
            nodes: 3,
            monitors_per_node: MonitorCount::All,
        };
        Scenario {
            detectors: vec![
                setup(
                    "a",
                    DetectorConfig::FixedTimeout(FixedTimeoutConfig::default()),
                ),
                setup("b", DetectorConfig::PhiAccrual(PhiAccrualConfig::default())),
                setup(
                    "c",
                    DetectorConfig::FixedTimeout(FixedTimeoutConfig::default()),
                ),
            ],
            ..Scenario::new("t", topology, Nanos::from_secs(10))
        }
    }

    #[test]
    fn a_selection_of_detectors_is_the_scenario_with_only_those() {
        let valid = ValidScenario::new(scenario()).unwrap();
        let picked = valid.select_detectors(&[2, 0]);
        let checked = valid
            .with_detectors(vec![valid.detectors[2].clone(), valid.detectors[0].clone()])
            .unwrap();
        assert_eq!(picked, checked);
        assert_eq!(picked.config(0).config(), &picked.detectors[0].config);
    }

    #[test]
    fn an_invalid_scenario_gives_no_valid_one() {
        let mut s = scenario();
        s.detectors[1].name = "a".into();
        let e = ValidScenario::new(s).unwrap_err();
        assert_eq!(e.path, "detectors[1].name");
        let valid = ValidScenario::new(scenario()).unwrap();
        assert!(valid.with_detectors(Vec::new()).is_err());
    }

    #[test]
    fn a_selection_of_a_membership_scenario_keeps_its_judges_in_step() {
        let mut s = scenario();
        s.membership = Some(crate::scenario::MembershipSetup {
            judges: Some(vec!["b".into(), "classic".into(), "a".into(), "c".into()]),
            start_spread: fdlab_protocol::Nanos::from_secs(1),
            ..Default::default()
        });
        let valid = ValidScenario::new(s).unwrap();
        let picked = valid.select_detectors(&[2, 1]);
        assert_eq!(picked.judge_names(), ["b", "classic", "c"]);
        // What a check would say of the selection, had it been made again.
        assert_eq!(
            ValidScenario::new(picked.scenario().clone()).unwrap(),
            picked
        );
    }
}
