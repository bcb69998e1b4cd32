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
mod tests {
    use super::*;
    use fdlab_sim::scenario::{FaultKind, MonitorCount};

    const MINIMAL: &str = r#"
duration = "2m"

[topology]
kind = "mesh"
nodes = 4

[[detectors]]
kind = "fixed-timeout"
"#;

    fn err(file: &str, text: &str) -> ScenarioFileError {
        match parse_scenario(file, text, None) {
            Ok(s) => panic!("{file} parsed: {s:?}"),
            Err(e) => e,
        }
    }

    /// Asserts file, line and key, and returns the problem.
    fn assert_err(e: &ScenarioFileError, file: &str, line: usize, key: &str) -> String {
        assert_eq!(e.file, file, "{e}");
        assert_eq!(e.line, Some(line), "{e}");
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(!e.to_string().contains('\n'), "one line: {e}");
        e.problem.clone()
    }

    #[test]
    fn minimal_file_gets_the_defaults() {
        let s = parse_scenario("dir/quick.toml", MINIMAL, None).unwrap();
        assert_eq!(s.name, "quick");
        assert_eq!(s.description, "");
        assert_eq!(s.duration, Nanos::from_secs(120));
        assert_eq!(s.seeds, DEFAULT_SEEDS);
        assert_eq!(
            s.topology,
            Topology::Mesh {
                nodes: 4,
                monitors_per_node: MonitorCount::All
            }
        );
        assert_eq!(s.network, Network::default());
        assert_eq!(s.workload, Workload::default());
        assert_eq!(s.detectors.len(), 1);
        assert_eq!(s.detectors[0].name, "fixed-timeout");
    }

    #[test]
    fn user_written_file_parses() {
        let text = r#"
# My cluster: 7 nodes, one of them crashes and comes back.
name = "my-crash"
description = "n3 crashes for a minute"
duration = "4m"
seeds = 12

[topology]
kind = "mesh"
nodes = 7
monitors_per_node = 3

[network]
latency = { dist = "normal", mean = "1ms", std_dev = "200us" }
loss = 0.001

[network.data_latency]
dist = "pareto"
scale = "2ms"
shape = 2.5

[[detectors]]
name = "ft"
kind = "fixed-timeout"
timeout = "2s"

[[detectors]]
kind = "two-stage"
[detectors.fast]
kind = "phi-accrual"
threshold = 3
[detectors.confirm]
kind = "fixed-timeout"

[[faults]]
kind = "crash"
node = "n3"
at = "60s"
duration = "60s"

[[faults]]
kind = "clock"
node = "n1"
window = ["30s", "90s"]
offset = "-1.5s"

[[random_faults]]
kind = "pause"
rate_per_node_hour = 6
duration = { dist = "uniform", min = "10ms", max = "300ms" }

[[clocks]]
node = "n0"
drift = 1e-4
"#;
        let s = parse_scenario("my-crash.toml", text, None).unwrap();
        assert_eq!(s.name, "my-crash");
        assert_eq!(s.seeds, 12);
        assert_eq!(s.detectors[1].name, "two-stage");
        assert_eq!(s.faults.len(), 2);
        assert_eq!(s.faults[0].kind, Some(FaultKind::Crash));
        assert_eq!(s.faults[0].duration, Some(Nanos::from_secs(60)));
        assert_eq!(s.random_faults[0].kind, FaultKind::Pause);
        assert_eq!(s.clocks[0].drift, 1e-4);
        assert!(matches!(s.network.data_latency, Some(Dist::Pareto { .. })));
    }

    #[test]
    fn display_is_file_line_key_problem() {
        let e = ScenarioFileError {
            file: "a.toml".into(),
            line: Some(3),
            key: Some("faults[0].node".into()),
            problem: "bad".into(),
        };
        assert_eq!(e.to_string(), "a.toml:3: `faults[0].node`: bad");
        let e = ScenarioFileError {
            file: "a.toml".into(),
            line: None,
            key: None,
            problem: "bad".into(),
        };
        assert_eq!(e.to_string(), "a.toml: bad");
    }

    #[test]
    fn toml_syntax_error() {
        let text = "duration = \"2m\"\n\n[topology]\nkind = \"mesh\"\nnodes = 4x\n";
        let e = err("syntax.toml", text);
        let problem = assert_err(&e, "syntax.toml", 5, "topology.nodes");
        assert!(problem.starts_with("invalid TOML"), "{e}");
        let e = err("syntax.toml", "duration = 2m\n");
        assert_err(&e, "syntax.toml", 1, "duration");
        let e = err(
            "syntax.toml",
            "duration = \"2m\"\n[[faults]]\nkind = \"crash\"\n[[faults]]\nat = \"1s\n",
        );
        assert_err(&e, "syntax.toml", 5, "faults[1].at");
        // A duplicate key is a TOML error too.
        let e = err("dup.toml", "duration = \"2m\"\nseeds = 1\nseeds = 2\n");
        assert_err(&e, "dup.toml", 3, "seeds");
    }

    #[test]
    fn unknown_top_level_key() {
        let text = format!("seeds = 3\ndurration = \"1m\"\n{MINIMAL}");
        let e = err("top.toml", &text);
        let problem = assert_err(&e, "top.toml", 2, "durration");
        assert!(problem.contains("unknown key"), "{e}");
        assert!(problem.contains("did you mean `duration`"), "{e}");
        let e = err("top.toml", &format!("[extra]\na = 1\n{MINIMAL}"));
        assert_err(&e, "top.toml", 1, "extra");
    }

    #[test]
    fn unknown_key_in_topology_and_faults() {
        let text = "duration = \"2m\"\n[topology]\nkind = \"mesh\"\nnodes = 4\nnodez = 5\n";
        let e = err("t.toml", text);
        let problem = assert_err(&e, "t.toml", 5, "topology.nodez");
        assert!(problem.contains("unknown key"), "{e}");

        let text = format!(
            "{MINIMAL}\n[[faults]]\nkind = \"crash\"\nnode = \"n1\"\nat = \"10s\"\n\n\
             [[faults]]\nkind = \"pause\"\nnode = \"n1\"\nat = \"20s\"\nlenght = \"1s\"\n"
        );
        let e = err("f.toml", &text);
        let problem = assert_err(&e, "f.toml", 20, "faults[1].lenght");
        assert!(problem.contains("unknown key"), "{e}");
        assert!(problem.contains("`duration`"), "lists the keys: {e}");

        // Inside a distribution, in a nested table.
        let text = format!("{MINIMAL}\n[network.latency]\ndist = \"constant\"\nmedian = \"1ms\"\n");
        let e = err("n.toml", &text);
        let problem = assert_err(&e, "n.toml", 13, "network.latency.median");
        assert!(problem.contains("expected `value`"), "{e}");
        // An unknown table in a table is named as a whole.
        let text = format!("{MINIMAL}\n[network.oops]\na = 1\n");
        let e = err("n.toml", &text);
        assert_err(&e, "n.toml", 11, "network.oops");
    }

    #[test]
    fn negative_duration() {
        let text = "duration = \"-1s\"\n[topology]\nkind = \"mesh\"\nnodes = 4\n";
        let e = err("neg.toml", text);
        let problem = assert_err(&e, "neg.toml", 1, "duration");
        assert!(problem.contains("negative"), "{e}");

        let text = format!("{MINIMAL}[[faults]]\nkind = \"pause\"\nnode = \"n1\"\nat = \"10s\"\nduration = \"-1s\"\n");
        let e = err("neg.toml", &text);
        let problem = assert_err(&e, "neg.toml", 14, "faults[0].duration");
        assert!(problem.contains("negative"), "{e}");
    }

    #[test]
    fn fault_naming_a_missing_node() {
        let text =
            format!("{MINIMAL}\n[[faults]]\nkind = \"crash\"\nat = \"10s\"\nnode = \"n9\"\n");
        let e = err("crash.toml", &text);
        let problem = assert_err(&e, "crash.toml", 14, "faults[0].node");
        assert!(problem.contains("no node `n9`"), "{e}");
    }

    #[test]
    fn probability_above_one() {
        let text = format!(
            "{MINIMAL}\n[[faults]]\nkind = \"crash\"\nnode = \"n1\"\nat = \"10s\"\n\n\
             [[faults]]\nkind = \"loss\"\nat = \"20s\"\nprobability = 1.5\n"
        );
        let e = err("crash.toml", &text);
        let problem = assert_err(&e, "crash.toml", 19, "faults[1].probability");
        assert!(problem.contains("probability"), "{e}");
        assert_eq!(
            e.to_string(),
            format!("crash.toml:19: `faults[1].probability`: {problem}")
        );
        let text = format!("{MINIMAL}\n[network]\nloss = 2\n");
        let e = err("net.toml", &text);
        assert_err(&e, "net.toml", 12, "network.loss");
        // A probability of the wrong type is a serde error, found the same way.
        let text = format!(
            "{MINIMAL}\n[[faults]]\nkind = \"loss\"\nat = \"20s\"\nprobability = \"high\"\n"
        );
        let e = err("crash.toml", &text);
        let problem = assert_err(&e, "crash.toml", 14, "faults[0].probability");
        assert!(problem.contains("expected a number"), "{e}");
    }

    #[test]
    fn detector_with_unknown_kind() {
        let text = format!("{MINIMAL}\n[[detectors]]\nname = \"x\"\nkind = \"phi\"\n");
        let e = err("det.toml", &text);
        let problem = assert_err(&e, "det.toml", 13, "detectors[1].kind");
        assert!(problem.contains("unknown kind `phi`"), "{e}");
        let text = format!("{MINIMAL}threshold = 3\n");
        let e = err("det.toml", &text);
        assert_err(&e, "det.toml", 10, "detectors[0].threshold");
        // Validation of the detector, and of a nested two-stage key.
        let text = format!("{MINIMAL}timeout = \"0s\"\n");
        let e = err("det.toml", &text);
        assert_err(&e, "det.toml", 10, "detectors[0].timeout");
        let text = format!(
            "{MINIMAL}\n[[detectors]]\nkind = \"two-stage\"\n[detectors.fast]\n\
             kind = \"dataflow-decay\"\ndecay = 2\n[detectors.confirm]\nkind = \"phi-accrual\"\n"
        );
        let e = err("det.toml", &text);
        assert_err(&e, "det.toml", 15, "detectors[1].fast.decay");
    }

    #[test]
    fn duplicate_detector_names() {
        let text =
            format!("{MINIMAL}\n[[detectors]]\nkind = \"fixed-timeout\"\ntimeout = \"1s\"\n");
        let e = err("dup.toml", &text);
        let problem = assert_err(&e, "dup.toml", 11, "detectors[1].name");
        assert!(problem.contains("`fixed-timeout` is used"), "{e}");
    }

    #[test]
    fn missing_keys_point_at_their_table() {
        let text = "seeds = 3\n[topology]\nkind = \"mesh\"\nnodes = 4\n";
        let e = err("nodur.toml", text);
        let problem = assert_err(&e, "nodur.toml", 1, "duration");
        assert!(problem.starts_with("missing"), "{e}");
        let e = err("notopo.toml", "duration = \"1m\"\n");
        assert_err(&e, "notopo.toml", 1, "topology");
        let e = err(
            "nonodes.toml",
            "duration = \"1m\"\n\n[topology]\nkind = \"mesh\"\n",
        );
        assert_err(&e, "nonodes.toml", 3, "topology.nodes");
        let text =
            format!("{MINIMAL}\n[network.latency]\ndist = \"lognormal\"\nmedian = \"1ms\"\n");
        let e = err("nosigma.toml", &text);
        assert_err(&e, "nosigma.toml", 11, "network.latency.sigma");
        let text = format!("{MINIMAL}\n[[faults]]\nkind = \"crash\"\nnode = \"n1\"\n");
        let e = err("noat.toml", &text);
        assert_err(&e, "noat.toml", 11, "faults[0].at");
        let text = format!("{MINIMAL}\n[[random_faults]]\nkind = \"pause\"\n");
        let e = err("norate.toml", &text);
        assert_err(&e, "norate.toml", 11, "random_faults[0].rate_per_node_hour");
        let e = err(
            "nodet.toml",
            "duration = \"1m\"\n[topology]\nkind = \"mesh\"\nnodes = 3\n",
        );
        assert_err(&e, "nodet.toml", 1, "detectors");
    }

    #[test]
    fn wrong_shapes() {
        let text = format!("{MINIMAL}\n[faults]\nkind = \"crash\"\n");
        let e = err("shape.toml", &text);
        let problem = assert_err(&e, "shape.toml", 11, "faults");
        assert!(problem.contains("[[faults]]"), "{e}");
        let text = format!("clocks = [1]\n{MINIMAL}");
        let e = err("shape.toml", &text);
        assert_err(&e, "shape.toml", 1, "clocks[0]");
        let e = err("shape.toml", &format!("network = 5\n{MINIMAL}"));
        let problem = assert_err(&e, "shape.toml", 1, "network");
        assert!(problem.ends_with("expected a table"), "{e}");
        let e = err("shape.toml", &format!("seeds = -5\n{MINIMAL}"));
        let problem = assert_err(&e, "shape.toml", 1, "seeds");
        assert!(problem.contains("whole number"), "{e}");
        let text = "duration = \"1m\"\n[topology]\nkind = \"ring\"\nnodes = 3\n";
        let e = err("shape.toml", text);
        let problem = assert_err(&e, "shape.toml", 3, "topology.kind");
        assert!(problem.contains("unknown value `ring`"), "{e}");
        let text = format!(
            "{MINIMAL}\n[network]\nlatency = {{ dist = \"uniform\", min = \"1ms\", max = 3 }}\n"
        );
        let e = err("shape.toml", &text);
        let problem = assert_err(&e, "shape.toml", 12, "network.latency.max");
        assert!(problem.contains("no unit"), "{e}");
    }

    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("fdlab-scenario-test-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn empirical_latency_from_csv() {
        let dir = temp_dir("ok");
        std::fs::write(
            dir.join("lat.csv"),
            "latency_ms\n0.8\n# a comment\n\n1.25\n3\n",
        )
        .unwrap();
        let text = format!(
            "{MINIMAL}\n[network]\nlatency = {{ dist = \"empirical\", file = \"lat.csv\" }}\n"
        );
        std::fs::write(dir.join("emp.toml"), &text).unwrap();
        let s = load_scenario(&dir.join("emp.toml")).unwrap();
        let Dist::Empirical { samples, .. } = &s.network.latency else {
            panic!("not empirical")
        };
        assert_eq!(
            samples,
            &[
                Nanos::from_micros(800),
                Nanos::from_micros(1250),
                Nanos::from_millis(3)
            ]
        );
        // Built-in scenarios (no directory) cannot read files.
        let e = err("emp.toml", &text);
        assert_err(&e, "emp.toml", 12, "network.latency.file");
        // A file that is missing.
        let missing = text.replace("lat.csv", "nope.csv");
        let e = parse_scenario("emp.toml", &missing, Some(&dir)).unwrap_err();
        let problem = assert_err(&e, "emp.toml", 12, "network.latency.file");
        assert!(problem.contains("nope.csv"), "{e}");
        // A file with no samples.
        std::fs::write(dir.join("empty.csv"), "latency_ms\n").unwrap();
        let empty = text.replace("lat.csv", "empty.csv");
        let e = parse_scenario("emp.toml", &empty, Some(&dir)).unwrap_err();
        assert_err(&e, "emp.toml", 12, "network.latency.file");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn empirical_file_with_a_bad_number() {
        let dir = temp_dir("bad");
        std::fs::write(dir.join("lat.csv"), "ms\n1.5\n\n2,\nabc\n").unwrap();
        let text = format!(
            "{MINIMAL}\n[network]\nlatency = {{ dist = \"empirical\", file = \"lat.csv\" }}\n"
        );
        let e = parse_scenario("emp.toml", &text, Some(&dir)).unwrap_err();
        let csv = dir.join("lat.csv").display().to_string();
        let problem = assert_err(&e, &csv, 5, "network.latency.file");
        assert!(problem.contains("`abc` is not a number"), "{e}");
        assert!(problem.contains("emp.toml:12"), "{e}");
        std::fs::write(dir.join("lat.csv"), "1\n-2\n").unwrap();
        let e = parse_scenario("emp.toml", &text, Some(&dir)).unwrap_err();
        assert_err(&e, &csv, 2, "network.latency.file");
        std::fs::write(dir.join("lat.csv"), "1,2\n").unwrap();
        let e = parse_scenario("emp.toml", &text, Some(&dir)).unwrap_err();
        let problem = assert_err(&e, &csv, 1, "network.latency.file");
        assert!(problem.contains("one column"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn errors_quote_short_escaped_excerpts_of_the_file() {
        // A binary file named as samples: one long line with a NUL.
        let dir = temp_dir("binary");
        let bytes: Vec<u8> = (0..100_000u32)
            .map(|i| [1, 0, 200, 7][i as usize % 4])
            .collect();
        std::fs::write(dir.join("lat.bin"), bytes).unwrap();
        let text = format!(
            "{MINIMAL}\n[network]\nlatency = {{ dist = \"empirical\", file = \"lat.bin\" }}\n"
        );
        let e = parse_scenario("emp.toml", &text, Some(&dir)).unwrap_err();
        let shown = e.to_string();
        assert!(shown.len() < 300, "{} bytes: {shown:?}", shown.len());
        assert!(shown.contains("\\u{1}\\0"), "{shown}");
        assert!(!shown.contains('\0'), "{shown:?}");
        // /dev/zero as samples: refused at the limit.
        let zero = text.replace("lat.bin", "/dev/zero");
        let e = parse_scenario("emp.toml", &zero, Some(&dir)).unwrap_err();
        assert!(e.problem.contains("64 MiB"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
        // A 1 MB value, and a key of 64 kB (the end-to-end tests go to 20 MB).
        let huge = MINIMAL.replace("\"2m\"", &format!("\"{}\"", "9".repeat(1 << 20)));
        let e = err("s.toml", &huge);
        assert_err(&e, "s.toml", 2, "duration");
        assert!(e.to_string().len() < 200, "{}", e.to_string().len());
        let key = format!("{} = 1\n{MINIMAL}", "k".repeat(1 << 16));
        let shown = err("s.toml", &key).to_string();
        assert!(
            shown.starts_with(&format!("s.toml:1: `{}…`: unknown key", "k".repeat(120))),
            "{}",
            &shown[..200]
        );
        assert!(shown.len() < 600, "{}", shown.len());
        // A value with control characters.
        let e = err("s.toml", &MINIMAL.replace("\"mesh\"", "\"mesh\\u001b[2J\""));
        assert!(e.problem.contains("mesh\\u{1b}[2J"), "{e}");
    }

    #[test]
    fn unreadable_file_is_named() {
        let e = load_scenario(Path::new("/nonexistent/fdlab/x.toml")).unwrap_err();
        assert_eq!(e.file, "/nonexistent/fdlab/x.toml");
        assert!(e.problem.contains("cannot read"), "{e}");
    }

    #[test]
    fn validate_errors_map_to_lines() {
        let text = format!(
            "{MINIMAL}\n[[faults]]\nkind = \"partition\"\nnode = \"n1\"\n\
             window = [\"50s\", \"10s\"]\nduration = \"5s\"\n"
        );
        let e = err("w.toml", &text);
        assert_err(&e, "w.toml", 14, "faults[0].window");
        let text = "duration = \"1m\"\n[topology]\nkind = \"mesh\"\nnodes = 1\n";
        let e = err("n.toml", text);
        assert_err(&e, "n.toml", 4, "topology.nodes");
        let text = format!("{MINIMAL}\n[[clocks]]\nnode = \"n1\"\ndrift = 0.7\n");
        let e = err("c.toml", &text);
        assert_err(&e, "c.toml", 13, "clocks[0].drift");
    }

    /// A membership scenario; line numbers below count from its first
    /// (empty) line.
    const CLUSTER: &str = r#"
duration = "5m"

[topology]
kind = "mesh"
nodes = 20

[[detectors]]
name = "phi-5s"
kind = "phi-accrual"
interval = "5s"

[membership]
judges = ["classic", "phi-5s"]
restart_after = "30s"

[membership.orleans]
probe_timeout = "5s"
num_votes_for_death_declaration = 2
"#;

    fn cluster_with(from: &str, to: &str) -> String {
        assert!(CLUSTER.contains(from), "{from}");
        CLUSTER.replacen(from, to, 1)
    }

    #[test]
    fn a_membership_scenario_parses() {
        let s = parse_scenario("orleans.toml", CLUSTER, None).unwrap();
        let m = s.membership.as_ref().expect("a membership scenario");
        assert_eq!(m.restart_after, Some(Nanos::from_secs(30)));
        assert_eq!(m.orleans.probe_timeout, Nanos::from_secs(5));
        assert_eq!(m.orleans.num_probed_silos, 10, "Orleans' default");
        assert_eq!(s.judge_names(), ["classic", "phi-5s"]);
        // Every key of [membership] may be left out.
        let bare = cluster_with(
            "judges = [\"classic\", \"phi-5s\"]\nrestart_after = \"30s\"\n",
            "",
        );
        let s = parse_scenario("orleans.toml", &bare, None).unwrap();
        assert_eq!(s.judge_names(), ["classic", "phi-5s"]);
        assert_eq!(s.membership.as_ref().unwrap().restart_after, None);
        // A membership scenario needs no detector: `classic` judges.
        let text = "duration = \"5m\"\n[topology]\nkind = \"mesh\"\nnodes = 3\n[membership]\n";
        let s = parse_scenario("bare.toml", text, None).unwrap();
        assert!(s.detectors.is_empty());
        assert_eq!(s.judge_names(), ["classic"]);
    }

    #[test]
    fn unknown_keys_in_membership_tables_are_named_at_their_line() {
        let e = err("m.toml", &cluster_with("restart_after", "restart_afer"));
        let problem = assert_err(&e, "m.toml", 15, "membership.restart_afer");
        assert!(problem.contains("unknown key"), "{e}");
        assert!(problem.contains("did you mean `restart_after`"), "{e}");
        let e = err("m.toml", &cluster_with("probe_timeout", "probe_timout"));
        let problem = assert_err(&e, "m.toml", 18, "membership.orleans.probe_timout");
        assert!(problem.contains("did you mean `probe_timeout`"), "{e}");
        // A near miss names the key meant, not all thirty.
        assert!(
            !problem.contains("`num_missed_probes_limit`"),
            "lists the keys: {e}"
        );
        let e = err("m.toml", &format!("{CLUSTER}gossip = true\n"));
        let problem = assert_err(&e, "m.toml", 20, "membership.orleans.gossip");
        assert!(
            problem.starts_with("unknown key; expected"),
            "no guess: {e}"
        );
        // Thirty keys, cut to a line one can read, and where the rest are.
        assert!(problem.len() < 300, "{e}");
        assert!(problem.contains("`num_probed_silos`"), "{e}");
        assert!(problem.contains(" more (`fdlab list --faults`"), "{e}");
        // A misspelt table, and the top-level key itself.
        let e = err(
            "m.toml",
            &cluster_with("[membership.orleans]", "[membership.orlean]"),
        );
        let problem = assert_err(&e, "m.toml", 17, "membership.orlean");
        assert!(problem.contains("did you mean `orleans`"), "{e}");
        let e = err("m.toml", &cluster_with("[membership]", "[membershp]"));
        let problem = assert_err(&e, "m.toml", 13, "membershp");
        assert!(problem.contains("did you mean `membership`"), "{e}");
    }

    #[test]
    fn bad_membership_values_are_named_at_their_line() {
        let e = err(
            "m.toml",
            &cluster_with("probe_timeout = \"5s\"", "probe_timeout = 5"),
        );
        let problem = assert_err(&e, "m.toml", 18, "membership.orleans.probe_timeout");
        assert!(problem.contains("no unit"), "{e}");
        let e = err(
            "m.toml",
            &cluster_with("[membership]", "[membership]\nprotocol = \"swim\""),
        );
        let problem = assert_err(&e, "m.toml", 14, "membership.protocol");
        assert!(problem.contains("unknown value `swim`"), "{e}");
        let e = err("m.toml", &format!("membership = 5\n{MINIMAL}"));
        let problem = assert_err(&e, "m.toml", 1, "membership");
        assert!(problem.ends_with("expected a table"), "{e}");
        let e = err(
            "m.toml",
            &cluster_with(
                "[membership]",
                "[membership]\ntable_latency = { dist = \"lognormal\", median = \"5ms\" }",
            ),
        );
        assert_err(&e, "m.toml", 14, "membership.table_latency.sigma");
        let e = err("m.toml", &cluster_with("\"30s\"", "\"0s\""));
        assert_err(&e, "m.toml", 15, "membership.restart_after");
    }

    #[test]
    fn a_membership_cluster_is_a_mesh_of_at_least_two_silos() {
        for silos in [0, 1] {
            let e = err(
                "m.toml",
                &cluster_with("nodes = 20", &format!("nodes = {silos}")),
            );
            let problem = assert_err(&e, "m.toml", 6, "topology.nodes");
            assert!(problem.contains("at least 2 silos"), "{e}");
        }
        let e = err(
            "m.toml",
            &cluster_with(
                "kind = \"mesh\"\nnodes = 20",
                "kind = \"dataflow\"\nlayers = [2, 2]",
            ),
        );
        let problem = assert_err(&e, "m.toml", 5, "topology.kind");
        assert!(problem.contains("mesh"), "{e}");
        // Orleans chooses whom a silo probes: `monitors_per_node` is refused,
        // even the "all" that is its default.
        for count in ["3", "\"all\""] {
            let text = cluster_with(
                "nodes = 20",
                &format!("nodes = 20\nmonitors_per_node = {count}"),
            );
            let e = err("m.toml", &text);
            let problem = assert_err(&e, "m.toml", 7, "topology.monitors_per_node");
            assert!(problem.contains("num_probed_silos"), "{e}");
        }
    }

    #[test]
    fn more_votes_than_probing_silos_is_refused() {
        let e = err("m.toml", &cluster_with("= 2\n", "= 11\n"));
        let problem = assert_err(
            &e,
            "m.toml",
            19,
            "membership.orleans.num_votes_for_death_declaration",
        );
        assert!(problem.contains("num_probed_silos"), "{e}");
    }

    #[test]
    fn judges_must_name_classic_or_a_detector_once() {
        let e = err("m.toml", &cluster_with("\"phi-5s\"]", "\"phi\"]"));
        let problem = assert_err(&e, "m.toml", 14, "membership.judges[1]");
        assert!(problem.contains("`phi` is neither `classic`"), "{e}");
        let e = err(
            "m.toml",
            &cluster_with("\"phi-5s\"]", "\"phi-5s\", \"classic\"]"),
        );
        let problem = assert_err(&e, "m.toml", 14, "membership.judges[2]");
        assert!(problem.contains("twice"), "{e}");
        let e = err("m.toml", &cluster_with("[\"classic\", \"phi-5s\"]", "[]"));
        assert_err(&e, "m.toml", 14, "membership.judges");
        // A detector that judges nothing is refused, not ignored.
        let e = err("m.toml", &cluster_with(", \"phi-5s\"]", "]"));
        let problem = assert_err(&e, "m.toml", 9, "detectors[0].name");
        assert!(problem.contains("not a judge"), "{e}");
        let text = format!("{CLUSTER}\n[[detectors]]\nkind = \"dataflow-decay\"\n");
        let e = err(
            "m.toml",
            &text.replace("\"phi-5s\"]", "\"phi-5s\", \"dataflow-decay\"]"),
        );
        let problem = assert_err(&e, "m.toml", 22, "detectors[1].kind");
        assert!(problem.contains("data stream"), "{e}");
    }

    #[test]
    fn table_faults_need_a_membership_scenario() {
        let text = format!("{MINIMAL}\n[[faults]]\nkind = \"table-outage\"\nat = \"10s\"\n");
        let e = err("t.toml", &text);
        let problem = assert_err(&e, "t.toml", 12, "faults[0].kind");
        assert!(problem.contains("[membership]"), "{e}");
        let outage = "\n[[faults]]\nkind = \"table-outage\"\nat = \"10s\"\nduration = \"30s\"\n";
        let s = parse_scenario("t.toml", &format!("{CLUSTER}{outage}"), None).unwrap();
        assert_eq!(s.faults[0].kind(), FaultKind::TableOutage);
        let e = err("t.toml", &format!("{CLUSTER}{outage}expect = \"detect\"\n"));
        assert_err(&e, "t.toml", 25, "faults[0].expect");
        let squeeze = "\n[[faults]]\nkind = \"backpressure\"\nnode = \"n1\"\nat = \"10s\"\n";
        let e = err("t.toml", &format!("{CLUSTER}{squeeze}"));
        assert_err(&e, "t.toml", 22, "faults[0].kind");
    }

    #[test]
    fn an_empirical_table_latency_is_read_from_its_file() {
        let dir = temp_dir("table");
        std::fs::write(dir.join("table.csv"), "ms\n4\n6.5\n").unwrap();
        let text = cluster_with(
            "[membership]",
            "[membership]\ntable_latency = { dist = \"empirical\", file = \"table.csv\" }",
        );
        std::fs::write(dir.join("t.toml"), &text).unwrap();
        let s = load_scenario(&dir.join("t.toml")).unwrap();
        let Dist::Empirical { samples, .. } = &s.membership.as_ref().unwrap().table_latency else {
            panic!("not empirical")
        };
        assert_eq!(samples, &[Nanos::from_millis(4), Nanos::from_micros(6500)]);
        assert!(files_read(&dir.join("t.toml"), &s).contains(&dir.join("table.csv")));
        let e = err("t.toml", &text);
        assert_err(&e, "t.toml", 14, "membership.table_latency.file");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn garbage_does_not_panic() {
        for text in [
            "",
            "\u{feff}",
            "[",
            "[[",
            "a = [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]",
            "duration = 1979-05-27T07:32:00Z",
            "[topology]\nnodes = 1979-05-27",
            "duration = \"18446744073709551615h\"",
            "seeds = 99999999999999999999",
            "[[detectors]]\n[[detectors.fast]]",
            "faults = [[1], {}]",
        ] {
            let e = err("g.toml", text);
            assert!(e.line.is_some(), "{e}");
        }
    }
}

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
