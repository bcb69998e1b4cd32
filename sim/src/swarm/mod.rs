//! `fdlab swarm` (SPEC §11): random fault schedules per seed, drawn
//! swarm-style ([`draw`]), and a schedule that violates a property shrunk
//! to a smallest one that still does ([`shrink`]). Checking a run's
//! properties needs the metrics of `fdlab_reports`; the command glues them.
//!
//! A swarm run is a plain run of the scenario with its drawn faults as
//! explicit `[[faults]]` (its own `[[faults]]` and `[[random_faults]]` left
//! out), so the schedule, written as a scenario file, replays the run.

pub mod draw;
pub mod reduce;
pub mod shrink;

pub use draw::{draw, expect_for, kinds, Drawn};
pub use reduce::Focus;
pub use shrink::{shrink, Oracle, Shrunk, Step};

use crate::scenario::{Fault, ScenarioError};
use crate::valid::ValidScenario;

/// `scenario` with `faults` as its whole schedule: its own faults and
/// random faults left out.
pub fn with_schedule(
    scenario: &ValidScenario,
    faults: Vec<Fault>,
) -> Result<ValidScenario, ScenarioError> {
    let mut s = scenario.scenario().clone();
    s.faults = faults;
    s.random_faults.clear();
    ValidScenario::new(s)
}
