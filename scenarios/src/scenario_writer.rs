//! A scenario written back as a scenario file: the inverse of
//! [`crate::scenario_file::parse_scenario`], for the minimal reproducers of
//! `fdlab swarm` (`minimal-<n>.toml`, a plain scenario with explicit
//! faults).
//!
//! The file reads back as the same scenario, value for value (a test
//! writes and parses every built-in): durations are written exactly
//! (`Nanos`' display), numbers in Rust's shortest form that parses back to
//! the same `f64`. Tables that only hold defaults are left out, and
//! `[network]`, `[workload]` and `[membership]` hold only the keys that
//! differ from their defaults, so that what is left is what matters.
//! `[[random_faults]]` are written too (a swarm's schedules have none), and
//! `[swarm]` is not: the file replays one schedule, it draws none.

use std::path::Path;

use fdlab_sim::scenario::{
    Dist, FaultKind, MembershipSetup, MonitorCount, Network, Scenario, SwarmTables, Topology,
    Workload,
};
use serde::Serialize;
use toml::{Table, Value};

/// `scenario` as the text of a scenario file, with its `tables` (`[swarm]`
/// and `[properties]`, when written), `comments` first (each a line after
/// `# `). `samples_dir` is the directory the scenario's empirical
/// distributions' files were read from: their paths are written relative
/// to it as absolute paths, so the file can live anywhere; `None` writes
/// them as they are.
pub fn write_scenario(
    scenario: &Scenario,
    tables: &SwarmTables,
    comments: &[String],
    samples_dir: Option<&Path>,
) -> Result<String, String> {
    let absolute;
    let scenario = match samples_dir {
        Some(dir) => {
            absolute = absolute_samples(scenario, dir);
            &absolute
        }
        None => scenario,
    };
    let mut out = String::new();
    for line in comments {
        for part in line.lines() {
            out.push_str(format!("# {part}").trim_end());
            out.push('\n');
        }
    }
    let s = scenario;
    out.push_str(&line("name", s.name.clone().into()));
    if !s.description.is_empty() {
        out.push_str(&line("description", s.description.clone().into()));
    }
    out.push_str(&line("duration", s.duration.to_string().into()));
    out.push_str(&line("seeds", Value::Integer(i64::from(s.seeds))));
    let mut topology = Table::new();
    match &s.topology {
        Topology::Mesh {
            nodes,
            monitors_per_node,
        } => {
            topology.insert("kind".into(), "mesh".into());
            topology.insert("nodes".into(), Value::Integer(i64::from(*nodes)));
            if let MonitorCount::Count(k) = monitors_per_node {
                topology.insert("monitors_per_node".into(), Value::Integer(i64::from(*k)));
            }
        }
        Topology::Dataflow { layers } => {
            topology.insert("kind".into(), "dataflow".into());
            let layers = layers.iter().map(|&n| Value::Integer(i64::from(n)));
            topology.insert("layers".into(), Value::Array(layers.collect()));
        }
    }
    out.push_str(&table("[topology]", topology, &["kind"]));
    let network = differing(table_of(&s.network)?, table_of(&Network::default())?);
    out.push_str(&table("[network]", network, &[]));
    let workload = differing(table_of(&s.workload)?, table_of(&Workload::default())?);
    out.push_str(&table("[workload]", workload, &[]));
    if let Some(m) = &s.membership {
        let default = MembershipSetup::default();
        let mut written = differing(table_of(m)?, table_of(&default)?);
        written.remove("orleans");
        written.remove("swim");
        out.push_str(&table_always(
            "[membership]",
            written,
            &["protocol", "judges"],
        ));
        // The protocols' keys one by one: only those that differ.
        for (header, actual, base) in [
            (
                "[membership.orleans]",
                table_of(&m.orleans)?,
                table_of(&default.orleans)?,
            ),
            (
                "[membership.swim]",
                table_of(&m.swim)?,
                table_of(&default.swim)?,
            ),
        ] {
            out.push_str(&table(header, differing(actual, base), &[]));
        }
    }
    if let Some(p) = &s.placement {
        out.push_str(&table_always("[placement]", table_of(p)?, &["servers"]));
    }
    if let Some(l) = &s.lockrpc {
        out.push_str(&table_always("[lockrpc]", table_of(l)?, &[]));
    }
    if let Some(sw) = &tables.swarm {
        let mut t = table_of(sw)?;
        // The kinds' own tables after the table's keys.
        let kinds: Vec<(String, Value)> = FaultKind::ALL
            .iter()
            .filter_map(|k| t.remove(k.name()).map(|v| (k.name().to_string(), v)))
            .collect();
        out.push_str(&table_always("[swarm]", t, &["kinds", "faults", "start"]));
        for (kind, value) in kinds {
            if let Value::Table(keys) = value {
                out.push_str(&table_always(&format!("[swarm.{kind}]"), keys, &["rate"]));
            }
        }
    }
    if let Some(p) = &tables.properties {
        out.push_str(&table_always("[properties]", table_of(p)?, &[]));
    }
    for d in &s.detectors {
        let mut keys = table_of(&d.config)?;
        // Only the keys that differ from the kind's defaults (a two-stage
        // detector has none: its stages are required).
        let mut kind_only = Table::new();
        kind_only.insert("kind".into(), d.config.kind().into());
        if let Ok(spec) = crate::detector_from_table(&kind_only) {
            keys = differing(keys, table_of(&spec.config)?);
            keys.insert("kind".into(), d.config.kind().into());
        }
        keys.insert("name".into(), d.name.clone().into());
        out.push_str(&table("[[detectors]]", keys, &["name", "kind"]));
    }
    for c in &s.clocks {
        let mut t = table_of(c)?;
        t.insert("offset".into(), signed(c.offset.0).into());
        out.push_str(&table("[[clocks]]", t, &["node"]));
    }
    for f in &s.faults {
        let mut t = table_of(f)?;
        if let Some(offset) = f.offset {
            t.insert("offset".into(), signed(offset.0).into());
        }
        out.push_str(&table(
            "[[faults]]",
            t,
            &["kind", "node", "at", "window", "duration"],
        ));
    }
    for r in &s.random_faults {
        out.push_str(&table("[[random_faults]]", table_of(r)?, &["kind"]));
    }
    Ok(out)
}

/// `key = value` on one line (tables and arrays inline).
fn line(key: &str, value: Value) -> String {
    format!("{key} = {value}\n")
}

/// A table under `header` after a blank line, the keys `first` first (those
/// present, in that order) and then the rest in key order; nothing for an
/// empty table.
fn table(header: &str, t: Table, first: &[&str]) -> String {
    if t.is_empty() {
        return String::new();
    }
    table_always(header, t, first)
}

/// [`table`], written even when empty (a table whose presence matters).
fn table_always(header: &str, mut t: Table, first: &[&str]) -> String {
    let mut out = format!("\n{header}\n");
    for key in first {
        if let Some(value) = t.remove(*key) {
            out.push_str(&line(key, value));
        }
    }
    for (key, value) in t {
        out.push_str(&line(&key, value));
    }
    out
}

/// `value` serialized as a TOML table.
fn table_of(value: &impl Serialize) -> Result<Table, String> {
    match Value::try_from(value).map_err(|e| e.to_string())? {
        Value::Table(t) => Ok(t),
        other => Err(format!("expected a table, got {other}")),
    }
}

/// The entries of `actual` whose values differ from `base`'s.
fn differing(actual: Table, base: Table) -> Table {
    actual
        .into_iter()
        .filter(|(k, v)| base.get(k) != Some(v))
        .collect()
}

/// A signed offset as the file writes it: `"-2s"` or `"2s"`.
fn signed(nanos: i64) -> String {
    let magnitude = fdlab_protocol::Nanos(nanos.unsigned_abs());
    if nanos < 0 {
        format!("-{magnitude}")
    } else {
        magnitude.to_string()
    }
}

/// `scenario` with every empirical distribution's `file` made absolute
/// against `dir`.
fn absolute_samples(scenario: &Scenario, dir: &Path) -> Scenario {
    let mut s = scenario.clone();
    let fix = |d: &mut Dist| {
        if let Dist::Empirical { file, .. } = d {
            *file = dir.join(&*file).display().to_string();
        }
    };
    fix(&mut s.network.latency);
    s.network.data_latency.iter_mut().for_each(fix);
    fix(&mut s.workload.interval);
    fix(&mut s.workload.service_time);
    s.workload.on.iter_mut().for_each(fix);
    s.workload.off.iter_mut().for_each(fix);
    if let Some(m) = s.membership.as_mut() {
        fix(&mut m.table_latency);
    }
    for f in &mut s.faults {
        f.processing.iter_mut().for_each(fix);
    }
    for r in &mut s.random_faults {
        r.duration.iter_mut().for_each(fix);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::builtin;
    use crate::scenario_file::{parse_scenario, parse_scenario_with_swarm};

    /// Every built-in reads back from its written file as the same scenario.
    #[test]
    fn every_builtin_reads_back_as_itself() {
        for (name, _) in builtin() {
            let s = crate::builtin_scenario(name).unwrap().unwrap();
            let text =
                write_scenario(&s, &SwarmTables::default(), &["a comment".into()], None).unwrap();
            let back = parse_scenario("x.toml", &text, None)
                .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            assert_eq!(*back, *s, "{name}:\n{text}");
        }
    }

    /// `[swarm]` and `[properties]` read back as written.
    #[test]
    fn swarm_tables_read_back() {
        let text = r#"duration = "2m"
[topology]
kind = "dataflow"
layers = [2, 2]
[[detectors]]
kind = "dataflow-decay"
[swarm]
kinds = ["pause", "slow-link"]
faults = [2, 3]
detect_from = "5s"
[swarm.pause]
rate = 1.0
duration = ["15s", "40s"]
[swarm.slow-link]
extra_latency = ["1ms", "5ms"]
[properties]
recover_within = false
detect_within = "20s"
"#;
        let (s, tables) = parse_scenario_with_swarm("x.toml", text, None).unwrap();
        assert!(tables.swarm.is_some() && tables.properties.is_some());
        let written = write_scenario(&s, &tables, &[], None).unwrap();
        let (back, back_tables) = parse_scenario_with_swarm("x.toml", &written, None)
            .unwrap_or_else(|e| panic!("{e}\n{written}"));
        assert_eq!((*back).clone(), (*s).clone());
        assert_eq!(back_tables, tables, "{written}");
    }

    #[test]
    fn signed_offsets_and_comments() {
        assert_eq!(signed(-2_000_000_000), "-2s");
        assert_eq!(signed(1_500_000), "1500us");
        let s = crate::builtin_scenario("clock-step-monitor")
            .unwrap()
            .unwrap();
        let text = write_scenario(&s, &SwarmTables::default(), &["one\ntwo".into()], None).unwrap();
        assert!(text.starts_with("# one\n# two\nname = "), "{text}");
    }
}
