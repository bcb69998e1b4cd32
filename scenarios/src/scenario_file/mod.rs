//! Scenario files: a TOML document read into a validated [`Scenario`].
//!
//! ```toml
//! name = "crash-mesh"             # default: the file's stem
//! description = "one node crashes" # default: ""
//! duration = "3m"                 # simulated time of one run (required)
//! seeds = 20                      # seeds a suite run uses (default 50)
//!
//! [topology]                      # required
//! kind = "mesh"
//! nodes = 6
//! monitors_per_node = 3
//!
//! [network]
//! latency = { dist = "lognormal", median = "1ms", sigma = 0.5 }
//!
//! [[detectors]]                   # at least one; `name` defaults to the kind
//! name = "fixed-3s"
//! kind = "fixed-timeout"
//! timeout = "3s"
//!
//! [[faults]]
//! kind = "crash"
//! node = "n2"
//! at = "60s"
//! ```
//!
//! A membership scenario (docs/membership.md) adds a `[membership]` table;
//! its nodes are the silos of one cluster, and its detectors the judges:
//!
//! ```toml
//! [membership]
//! judges = ["classic", "phi-5s"]  # default: "classic", then every detector
//! restart_after = "30s"           # a silo that stopped comes back (default: never)
//! table_latency = { dist = "lognormal", median = "5ms", sigma = 0.5 }
//!
//! [membership.orleans]            # ClusterMembershipOptions, Orleans' defaults
//! probe_timeout = "5s"
//! num_votes_for_death_declaration = 2
//! ```
//!
//! The tables `[network]`, `[workload]`, `[[faults]]`, `[[random_faults]]`,
//! `[[clocks]]` and `[membership]` (with `[membership.orleans]`) are the serde
//! types of `fdlab_sim::scenario`; `[[detectors]]` go through
//! [`detector_from_table`]. Unknown keys are errors everywhere, with a "did
//! you mean" for a key close to one the table takes. A membership
//! scenario's `topology.monitors_per_node` is refused here, where a key
//! written can be told from its default: Orleans chooses whom a silo probes.
//!
//! Every problem is reported once, as the first [`ScenarioFileError`] found,
//! naming the file, the line and the key (spec §7). Serde and
//! [`Scenario::validate`] say what is wrong but not where, so the file is also
//! parsed into a spanned document, and each key path (`faults[1].probability`)
//! is looked up in it; a key that is missing points at its table's header.
//! Serde errors in a table are pinned on one key by deserializing growing
//! prefixes of the table's keys, in file order: the first prefix that fails for
//! any reason other than a missing field has the culprit as its last key.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use fdlab_protocol::Nanos;
use fdlab_sim::scenario::{
    ClockSetup, DetectorSetup, Dist, Fault, LockrpcSetup, MembershipSetup, Network, PlacementSetup,
    PropertySetup, RandomFaults, Scenario, SwarmSetup, SwarmTables, Topology, Workload,
};
use fdlab_sim::valid::ValidScenario;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::{Table, Value};

use crate::detector_spec::detector_from_table;
use crate::events::{byte_of, is_blank, line_of_record};
use crate::excerpt::{bounded, excerpt_bytes};
use crate::read_limit::{read_file_limited, SAMPLES_FILE_LIMIT, TEXT_FILE_LIMIT};

/// `seeds` when a scenario file does not say.
pub const DEFAULT_SEEDS: u32 = 50;

/// The keys a scenario file may have at its top level, in the order the
/// documentation lists them.
pub const TOP_LEVEL_KEYS: [&str; 16] = [
    "name",
    "description",
    "duration",
    "seeds",
    "topology",
    "network",
    "workload",
    "detectors",
    "faults",
    "random_faults",
    "clocks",
    "membership",
    "placement",
    "lockrpc",
    "swarm",
    "properties",
];

/// The first problem found in a scenario file (or in a CSV file it names).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioFileError {
    /// The file as the user named it (for an empirical distribution's samples,
    /// the CSV file).
    pub file: String,
    /// The 1-based line the problem is on.
    pub line: Option<usize>,
    /// The key's path in the scenario: `faults[1].probability`,
    /// `detectors[0].threshold`, `topology.nodes`.
    pub key: Option<String>,
    /// What is wrong; what it quotes of the file is a short excerpt
    /// ([`crate::excerpt`]).
    pub problem: String,
}

impl fmt::Display for ScenarioFileError {
    /// `file:line: `key`: problem`, leaving out the parts that are absent;
    /// a key of absurd length shows as an excerpt.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if let Some(key) = &self.key {
            write!(f, "`{}`: ", crate::excerpt::key(key))?;
        }
        f.write_str(&self.problem)
    }
}

impl std::error::Error for ScenarioFileError {}

/// Reads and validates the scenario file at `path` (at most
/// [`TEXT_FILE_LIMIT`] bytes). Empirical distributions' CSV files are looked
/// up next to it.
pub fn load_scenario(path: &Path) -> Result<ValidScenario, ScenarioFileError> {
    load_scenario_with_swarm(path).map(|(s, _)| s)
}

/// [`load_scenario`], with the scenario's `[swarm]` and `[properties]`
/// tables (see [`parse_scenario_with_swarm`]).
pub fn load_scenario_with_swarm(
    path: &Path,
) -> Result<(ValidScenario, SwarmTables), ScenarioFileError> {
    let file = path.display().to_string();
    let cannot_read = |problem: String| ScenarioFileError {
        file: file.clone(),
        line: None,
        key: None,
        problem: format!("cannot read the scenario file: {problem}"),
    };
    let bytes = read_file_limited(path, TEXT_FILE_LIMIT).map_err(|e| cannot_read(e.to_string()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| cannot_read("stream did not contain valid UTF-8".to_string()))?;
    parse_scenario_with_swarm(&file, &text, Some(path.parent().unwrap_or(Path::new(""))))
}

/// Parses and validates a scenario from `text`. `file` names it in errors and
/// gives the default `name` (its stem). `base_dir` is where the CSV files of
/// empirical distributions are read from; `None` (built-in scenarios) forbids
/// them. Its `[swarm]` and `[properties]` tables are checked, and left out
/// ([`parse_scenario_with_swarm`] keeps them).
pub fn parse_scenario(
    file: &str,
    text: &str,
    base_dir: Option<&Path>,
) -> Result<ValidScenario, ScenarioFileError> {
    parse_scenario_with_swarm(file, text, base_dir).map(|(s, _)| s)
}

/// [`parse_scenario`], with the scenario's `[swarm]` and `[properties]`
/// tables (checked against it) for `fdlab swarm`.
pub fn parse_scenario_with_swarm(
    file: &str,
    text: &str,
    base_dir: Option<&Path>,
) -> Result<(ValidScenario, SwarmTables), ScenarioFileError> {
    let spanned = DeTable::parse(text).map_err(|e| toml_error(file, text, &e))?;
    let doc = Doc::new(file, text, spanned.get_ref());
    let root: Table = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;

    let mut name = None;
    let mut description = None;
    let mut duration = None;
    let mut seeds = None;
    let mut topology = None;
    let mut network = None;
    let mut workload = None;
    let mut detectors = Vec::new();
    let mut faults = Vec::new();
    let mut random_faults = Vec::new();
    let mut clocks = Vec::new();
    let mut membership = None;
    let mut placement = None;
    let mut lockrpc = None;
    let mut swarm = None;
    let mut properties = None;

    // In file order, so that the first error reported is the first in the file.
    let mut keys: Vec<(&String, &Value)> = root.iter().collect();
    keys.sort_by_key(|(key, _)| doc.start(key));
    for (key, value) in keys {
        let path = key.as_str();
        match path {
            "name" => {
                let text: String = doc.typed(value, path)?;
                if text.trim().is_empty() {
                    return Err(doc.error(path, "must not be empty"));
                }
                name = Some(text);
            }
            "description" => description = Some(doc.typed::<String>(value, path)?),
            "duration" => duration = Some(doc.typed::<Nanos>(value, path)?),
            "seeds" => seeds = Some(doc.typed::<u32>(value, path)?),
            "topology" => topology = Some(doc.typed::<Topology>(value, path)?),
            "network" => network = Some(doc.typed::<Network>(value, path)?),
            "workload" => workload = Some(doc.typed::<Workload>(value, path)?),
            "detectors" => {
                for (i, table) in doc.tables(value, path)?.into_iter().enumerate() {
                    let spec = detector_from_table(table)
                        .map_err(|e| doc.error(&format!("{path}[{i}].{}", e.key), e.problem))?;
                    detectors.push(DetectorSetup {
                        name: spec.name.unwrap_or_else(|| spec.config.kind().to_string()),
                        config: spec.config,
                    });
                }
            }
            "faults" => faults = doc.typed_tables::<Fault>(value, path)?,
            "random_faults" => random_faults = doc.typed_tables::<RandomFaults>(value, path)?,
            "clocks" => clocks = doc.typed_tables::<ClockSetup>(value, path)?,
            "membership" => membership = Some(doc.typed::<MembershipSetup>(value, path)?),
            "placement" => placement = Some(doc.typed::<PlacementSetup>(value, path)?),
            "lockrpc" => lockrpc = Some(doc.typed::<LockrpcSetup>(value, path)?),
            "swarm" => swarm = Some(doc.typed::<SwarmSetup>(value, path)?),
            "properties" => properties = Some(doc.typed::<PropertySetup>(value, path)?),
            _ => return Err(doc.error(path, unknown_top_level_key(path))),
        }
    }

    let Some(duration) = duration else {
        return Err(doc.error(
            "duration",
            "missing; every scenario needs the simulated time of a run, e.g. `duration = \"5m\"`",
        ));
    };
    let Some(topology) = topology else {
        return Err(doc.error(
            "topology",
            "missing; every scenario needs a [topology] table, e.g. `kind = \"mesh\"` and `nodes = 6`",
        ));
    };
    // A scenario cannot tell a `monitors_per_node = "all"` written from the
    // default, and in a membership scenario neither applies.
    if membership.is_some() && doc.written("topology.monitors_per_node") {
        return Err(doc.error(
            "topology.monitors_per_node",
            "does not apply to a membership scenario: each silo probes \
             `membership.orleans.num_probed_silos` peers, chosen as Orleans does; remove it",
        ));
    }
    let mut scenario = Scenario {
        name: name.unwrap_or_else(|| default_name(file)),
        description: description.unwrap_or_default(),
        duration,
        seeds: seeds.unwrap_or(DEFAULT_SEEDS),
        topology,
        network: network.unwrap_or_default(),
        workload: workload.unwrap_or_default(),
        detectors,
        faults,
        random_faults,
        clocks,
        membership,
        placement,
        lockrpc,
    };
    load_empirical(&doc, &mut scenario, base_dir)?;
    let scenario = ValidScenario::new(scenario)
        .map_err(|e| doc.error(&e.path, e.problem))?
        .with_origin(file, text);
    let tables = SwarmTables { swarm, properties };
    tables
        .validate(&scenario)
        .map_err(|e| doc.error(&e.path, e.problem))?;
    Ok((scenario, tables))
}

/// `file:line: `key`` for an error about `key` of `scenario` found after
/// it was read (a run too large), as the file's own errors begin; the
/// scenario's name for one that was not read from a file (a built-in
/// variant made by a sweep).
pub fn key_place(scenario: &ValidScenario, key: &str) -> String {
    let Some(source) = scenario.origin() else {
        return format!("{}: {}", scenario.name, crate::excerpt::key(key));
    };
    let line = DeTable::parse(&source.text)
        .map(|spanned| Doc::new(&source.file, &source.text, spanned.get_ref()).line_of(key))
        .unwrap_or(1);
    format!("{}:{line}: `{}`", source.file, crate::excerpt::key(key))
}

/// The stem of `file` (`crash.toml` -> `crash`).
fn default_name(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "scenario".to_string())
}

fn unknown_top_level_key(key: &str) -> String {
    let mut problem = format!(
        "unknown key; a scenario file takes {}",
        TOP_LEVEL_KEYS
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(close) = closest_key(key, TOP_LEVEL_KEYS) {
        problem.push_str(&format!(" (did you mean `{close}`?)"));
    }
    problem
}

/// The key among `keys` that `typo` is most likely a misspelling of: at
/// most two edits away (the first of the closest).
fn closest_key<'k>(typo: &str, keys: impl IntoIterator<Item = &'k str>) -> Option<&'k str> {
    keys.into_iter()
        .map(|k| (strsim::levenshtein(typo, k), k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

mod locate;
mod samples;

pub(crate) use locate::rephrase;
use locate::*;
pub use samples::files_read;
use samples::*;

#[cfg(test)]
mod swarm_tests;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod fuzz {
    use super::*;
    use crate::builtin::builtin;
    use proptest::prelude::*;

    /// A built-in scenario with one edit: bytes cut out, or a snippet put in.
    fn mutated() -> impl Strategy<Value = String> {
        let snippets = prop::sample::select(vec![
            "=",
            "\"",
            "[",
            "]",
            "[[faults]]\n",
            "\n",
            "-",
            "0",
            "1e309",
            "\"-1s\"",
            "nodes = 0\n",
            "kind = \"x\"\n",
            "{",
            "}",
            ",",
            ".",
            "#",
            "'",
            "\\",
            "window = [\"9s\", \"1s\"]\n",
            "n99",
            "\u{e9}",
            "[topology]\n",
            "dist = \"empirical\"\nfile = \"x.csv\"\n",
            "999999999999999999999",
        ]);
        (
            0..builtin().len(),
            any::<prop::sample::Index>(),
            0usize..40,
            snippets,
        )
            .prop_map(|(which, at, cut, snippet)| {
                let text = builtin()[which].1;
                let mut at = at.index(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let mut end = (at + cut).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                format!("{}{}{}", &text[..at], snippet, &text[end..])
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            if let Err(e) = parse_scenario("fuzz.toml", &text, None) {
                prop_assert!(e.line.is_some(), "{}", e);
            }
        }

        #[test]
        fn toml_like_text_never_panics(
            text in "(\\[{1,2}[a-z_.]{1,12}\\]{1,2}\n|[a-z_]{1,12} = (\"[0-9a-z.\\- ]{0,8}\"|[0-9.\\-]{1,6}|\\[\\]|true)\n){0,12}"
        ) {
            if let Err(e) = parse_scenario("fuzz.toml", &text, None) {
                prop_assert!(e.line.is_some(), "{}", e);
                prop_assert!(e.key.is_some() || e.problem.starts_with("invalid TOML"), "{}", e);
            }
        }

        #[test]
        fn mutated_builtins_never_panic(text in mutated()) {
            if let Err(e) = parse_scenario("fuzz.toml", &text, None) {
                prop_assert!(e.line.is_some(), "{}", e);
                prop_assert!(!e.to_string().contains('\n'), "{}", e);
            }
        }
    }
}
