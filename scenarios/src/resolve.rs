//! A command's `SCENARIO` argument, resolved: a path to a scenario file, or
//! else the name of a built-in scenario ([`crate::builtin`]).
//!
//! Every command that takes a scenario (`run`, `replay`, `sweep`, `tune`,
//! `live`, `list`, `bench`) resolves it here, so that they all read the same
//! argument the same way and fail with the same message.

use std::fmt;
use std::path::{Path, PathBuf};

use fdlab_sim::scenario::SwarmTables;
use fdlab_sim::valid::ValidScenario;

use crate::builtin::{builtin_scenario, builtin_with_swarm};
use crate::excerpt::excerpt;
use crate::scenario_file::{
    files_read, load_scenario, load_scenario_with_swarm, ScenarioFileError,
};

/// Why a scenario argument gave no scenario.
#[derive(Debug)]
pub enum ResolveError {
    /// The file, or the built-in, does not parse or validate.
    Invalid(ScenarioFileError),
    /// Neither an existing file (nor a name ending in `.toml`) nor a
    /// built-in name.
    Unknown(String),
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::Invalid(e) => e.fmt(f),
            ResolveError::Unknown(arg) => {
                write!(
                    f,
                    "`{}` is neither a built-in scenario nor a file",
                    excerpt(arg)
                )?;
                match closest_builtin(arg) {
                    Some(name) => write!(
                        f,
                        "; did you mean `{name}`? (`fdlab list` shows the built-ins)"
                    ),
                    None => write!(f, "; `fdlab list` shows the built-ins"),
                }
            }
        }
    }
}

impl std::error::Error for ResolveError {}

/// The scenario `arg` names: the file at that path if it exists or the
/// argument ends in `.toml` (so a mistyped file name is reported as a file
/// that cannot be read, not as an unknown built-in), otherwise the built-in
/// scenario of that name.
pub fn resolve(arg: &str) -> Result<ValidScenario, ResolveError> {
    let path = Path::new(arg);
    if path.exists() || arg.ends_with(".toml") {
        return load_scenario(path).map_err(ResolveError::Invalid);
    }
    match builtin_scenario(arg) {
        Some(result) => result.map_err(ResolveError::Invalid),
        None => Err(ResolveError::Unknown(arg.to_owned())),
    }
}

/// [`resolve`], with the scenario's `[swarm]` and `[properties]` tables
/// (`fdlab swarm`).
pub fn resolve_with_swarm(arg: &str) -> Result<(ValidScenario, SwarmTables), ResolveError> {
    let path = Path::new(arg);
    if path.exists() || arg.ends_with(".toml") {
        return load_scenario_with_swarm(path).map_err(ResolveError::Invalid);
    }
    match builtin_with_swarm(arg) {
        Some(result) => result.map_err(ResolveError::Invalid),
        None => Err(ResolveError::Unknown(arg.to_owned())),
    }
}

/// The files a command read for the scenario argument `arg` (resolved to
/// `scenario`): the scenario file and its samples files, or nothing for a
/// built-in scenario.
pub fn files_of(arg: &str, scenario: &fdlab_sim::scenario::Scenario) -> Vec<PathBuf> {
    let path = Path::new(arg);
    if path.exists() {
        files_read(path, scenario)
    } else {
        Vec::new()
    }
}

/// The built-in scenario whose name is closest to `arg`, if it is close
/// enough to be a typo (Jaro-Winkler similarity, as clap suggests options).
fn closest_builtin(arg: &str) -> Option<&'static str> {
    /// Below this similarity a name is not offered.
    const MIN_SIMILARITY: f64 = 0.8;
    crate::builtin::builtin()
        .iter()
        .map(|(name, _)| (strsim::jaro_winkler(arg, name), *name))
        .filter(|(score, _)| *score >= MIN_SIMILARITY)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_in_name_and_its_file_give_the_same_scenario() {
        let by_name = resolve("crash-mesh").unwrap();
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/builtin/crash-mesh.toml");
        let by_file = resolve(file).unwrap();
        assert_eq!(by_name.name, "crash-mesh");
        assert_eq!(format!("{by_name:?}"), format!("{by_file:?}"));
    }

    #[test]
    fn an_unknown_name_and_a_missing_file_say_which_they_are() {
        let typo = resolve("crash-mesj").unwrap_err().to_string();
        assert!(typo.contains("did you mean `crash-mesh`?"), "{typo}");
        let e = resolve("no-such-scenario").unwrap_err();
        assert!(matches!(e, ResolveError::Unknown(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "`no-such-scenario` is neither a built-in scenario nor a file; `fdlab list` shows the built-ins"
        );
        let e = resolve("no/such/file.toml").unwrap_err();
        assert!(matches!(e, ResolveError::Invalid(_)), "{e:?}");
        assert!(e.to_string().starts_with("no/such/file.toml"), "{e}");
        assert!(e.to_string().contains("cannot read"), "{e}");
    }
}
