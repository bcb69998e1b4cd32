//! Detector specifications: one `[[detectors]]` table of a scenario, or the
//! `KEY=VALUE,...` argument of `fdlab trace --detector`, turned into a validated
//! [`DetectorConfig`].
//!
//! Both forms go through [`detector_from_table`], so a key means the same thing,
//! has the same default and is checked the same way wherever it is written. The
//! typed per-kind structs of `fdlab-protocol` do the real work: they reject
//! unknown keys and bad values; this module's job is to say *which* key was wrong
//! (a user fixing a scenario needs the key, not serde's view of the type), and to
//! handle the parts serde cannot: the `kind` tag and the nested tables of
//! `two-stage`.

use std::fmt;

use fdlab_protocol::decay::DataflowDecayConfig;
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::phi::PhiAccrualConfig;
use fdlab_protocol::probe::AdaptiveProbeConfig;
use fdlab_protocol::two_stage::TwoStageConfig;
use fdlab_protocol::{ConfigError, DetectorConfig, KINDS};
use serde::de::DeserializeOwned;
use toml::{Table, Value};

use crate::excerpt::{bounded, excerpt};

/// One detector as a user wrote it: its configuration and optional name.
#[derive(Clone, Debug, PartialEq)]
pub struct DetectorSpec {
    /// The `name` key; scenarios require it to be unique, `fdlab trace` ignores it.
    pub name: Option<String>,
    /// The `kind` and every other key, validated.
    pub config: DetectorConfig,
}

/// A detector key that is missing, unknown or has a bad value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The key, dotted for nested tables (`fast.decay`); for a malformed
    /// `--detector` item with no usable key, the item itself.
    pub key: String,
    /// What is wrong with it.
    pub problem: String,
}

impl SpecError {
    /// `problem` may quote the user's values (serde's "invalid type: string
    /// \"...\"", a duration's parse error): [`bounded`] keeps them short.
    pub fn new(key: impl Into<String>, problem: impl Into<String>) -> SpecError {
        SpecError {
            key: key.into(),
            problem: bounded(&problem.into()),
        }
    }
}

impl fmt::Display for SpecError {
    /// The key as an excerpt: for a malformed `--detector` item it is the
    /// item itself, of any length.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", crate::excerpt::key(&self.key), self.problem)
    }
}

impl std::error::Error for SpecError {}

impl From<ConfigError> for SpecError {
    /// A `validate` error already names its (dotted) key.
    fn from(e: ConfigError) -> SpecError {
        SpecError::new(e.key, e.problem)
    }
}

/// How deep `two-stage` detectors may nest inside each other. Nesting is legal
/// (a stage is any detector), but a limit keeps a hostile or mistaken input from
/// exhausting the stack through recursion.
pub const MAX_NESTING: usize = 4;

/// Builds and validates one detector from the table of a scenario's
/// `[[detectors]]` entry: `kind` (required), `name` (optional), and the keys of
/// that kind. For `kind = "two-stage"` those are the tables `fast` and `confirm`,
/// each a detector of its own (without a `name`).
pub fn detector_from_table(table: &Table) -> Result<DetectorSpec, SpecError> {
    let name = match table.get("name") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(SpecError::new(
                "name",
                format!("must be a string, got {}", describe_value(other)),
            ))
        }
    };
    let mut keys = table.clone();
    keys.remove("name");
    let config = config_from_table(keys, "", 0)?;
    config.validate()?;
    Ok(DetectorSpec { name, config })
}

/// `prefix` + `key`, dotted when nested.
fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// A short description of a value's type and content for error messages.
fn describe_value(value: &Value) -> String {
    match value {
        Value::Table(_) => "a table".to_string(),
        Value::Array(_) => "an array".to_string(),
        other => format!("`{other}`"),
    }
}

/// The configuration (not yet validated) of one detector table whose `name`, if
/// any, has been taken out. `prefix` is the dotted path of the table (empty at
/// the top), used to name keys in errors.
fn config_from_table(
    mut table: Table,
    prefix: &str,
    depth: usize,
) -> Result<DetectorConfig, SpecError> {
    let kind_key = join(prefix, "kind");
    let kinds = KINDS.join(", ");
    let kind = match table.remove("kind") {
        None => {
            return Err(SpecError::new(
                kind_key,
                format!("missing; every detector needs a kind, one of {kinds}"),
            ))
        }
        Some(Value::String(kind)) => kind,
        Some(other) => {
            return Err(SpecError::new(
                kind_key,
                format!(
                    "must be a string, one of {kinds}; got {}",
                    describe_value(&other)
                ),
            ))
        }
    };
    match kind.as_str() {
        "fixed-timeout" => deserialize_kind::<FixedTimeoutConfig>(&kind, table, prefix)
            .map(DetectorConfig::FixedTimeout),
        "phi-accrual" => deserialize_kind::<PhiAccrualConfig>(&kind, table, prefix)
            .map(DetectorConfig::PhiAccrual),
        "adaptive-probe" => deserialize_kind::<AdaptiveProbeConfig>(&kind, table, prefix)
            .map(DetectorConfig::AdaptiveProbe),
        "dataflow-decay" => deserialize_kind::<DataflowDecayConfig>(&kind, table, prefix)
            .map(DetectorConfig::DataflowDecay),
        "two-stage" => two_stage_from_table(table, prefix, depth).map(DetectorConfig::TwoStage),
        _ => Err(SpecError::new(
            kind_key,
            format!("unknown kind `{}`; expected one of {kinds}", excerpt(&kind)),
        )),
    }
}

/// The `fast` and `confirm` tables of a two-stage detector. Serde cannot do this
/// part: each stage is tagged by its own `kind`, and errors inside a stage must
/// carry the stage's prefix.
fn two_stage_from_table(
    mut table: Table,
    prefix: &str,
    depth: usize,
) -> Result<TwoStageConfig, SpecError> {
    if depth >= MAX_NESTING {
        return Err(SpecError::new(
            join(prefix, "kind"),
            format!("two-stage detectors may nest at most {MAX_NESTING} deep"),
        ));
    }
    if let Some(key) = table
        .keys()
        .find(|k| k.as_str() != "fast" && k.as_str() != "confirm")
    {
        return Err(SpecError::new(
            join(prefix, key),
            "unknown key for kind `two-stage`; expected `fast` and `confirm` (each a detector table)",
        ));
    }
    let mut stage = |stage: &str| -> Result<Box<DetectorConfig>, SpecError> {
        let key = join(prefix, stage);
        match table.remove(stage) {
            None => Err(SpecError::new(
                key,
                "missing; a two-stage detector needs a `fast` and a `confirm` detector table",
            )),
            Some(Value::Table(inner)) => config_from_table(inner, &key, depth + 1).map(Box::new),
            Some(other) => Err(SpecError::new(
                key,
                format!(
                    "must be a detector table with its own `kind`, got {}",
                    describe_value(&other)
                ),
            )),
        }
    };
    let fast = stage("fast")?;
    let confirm = stage("confirm")?;
    Ok(TwoStageConfig { fast, confirm })
}

/// Deserializes a kind's config struct from its keys (all but `kind`/`name`).
///
/// Serde's "invalid value" errors do not say which key held the value, so on
/// failure the keys are tried one at a time (every field has a default, so a
/// one-key table is a complete input) and the first one that fails alone is
/// the culprit. This costs nothing on the success path and keeps the crate free
/// of a path-tracking dependency.
fn deserialize_kind<T: DeserializeOwned>(
    kind: &str,
    table: Table,
    prefix: &str,
) -> Result<T, SpecError> {
    let whole_error = match T::deserialize(Value::Table(table.clone())) {
        Ok(config) => return Ok(config),
        Err(e) => e,
    };
    for (key, value) in &table {
        let mut alone = Table::new();
        alone.insert(key.clone(), value.clone());
        if let Err(e) = T::deserialize(Value::Table(alone)) {
            return Err(SpecError::new(
                join(prefix, key),
                rephrase(kind, e.message(), value),
            ));
        }
    }
    // Each key is fine alone but not together: no current struct can do this,
    // but the error must still point somewhere useful.
    Err(SpecError::new(
        join(prefix, "kind"),
        format!(
            "the keys of kind `{kind}` do not fit together: {}",
            whole_error.message()
        ),
    ))
}

/// Turns serde's "unknown field `x`, expected one of ..." into the vocabulary of
/// the spec (keys, kinds), and Rust type names into plain words; other messages
/// (bad durations, unknown variants) are already readable and pass through.
fn rephrase(kind: &str, message: &str, value: &Value) -> String {
    let message = message.trim();
    if message.starts_with("unknown field `") {
        if let Some((_, expected)) = message.split_once(", expected ") {
            return format!("unknown key for kind `{kind}`; expected {expected}");
        }
        if message.ends_with("there are no fields") {
            return format!("unknown key; kind `{kind}` takes no keys");
        }
        return format!("unknown key for kind `{kind}`");
    }
    // The enum deserializer of `toml::Value` says "unit variant, expected string
    // only" for a number or boolean where a name belongs.
    if message.ends_with("expected string only") {
        return format!(
            "must be a string naming one of the choices of this key, got {}",
            describe_value(value)
        );
    }
    // Rust type names mean little to someone writing a scenario.
    for (rust, plain) in [
        ("u32", "a whole number, 0 or more"),
        ("u64", "a whole number, 0 or more"),
        ("usize", "a whole number, 0 or more"),
        ("f64", "a number"),
    ] {
        if let Some(head) = message.strip_suffix(&format!("expected {rust}")) {
            return format!("{head}expected {plain}");
        }
    }
    message.to_string()
}

/// Parses the `--detector` argument of `fdlab trace`:
/// `kind=phi-accrual,threshold=8,acceptable_heartbeat_pause=0s`.
///
/// Items are separated by `,`; a dotted key (`fast.kind=dataflow-decay`) sets a
/// key of a nested table, for two-stage detectors. A value that reads as a TOML
/// integer, float or boolean is one (`threshold=8`); a quoted value is a TOML
/// string; anything else is taken as a string, so durations and names need no
/// shell-hostile quotes (`timeout=3s`). `name` is always a string.
pub fn parse_detector_arg(arg: &str) -> Result<DetectorSpec, SpecError> {
    let mut root = Table::new();
    for (key, value) in parse_key_values(arg)? {
        insert_dotted(&mut root, &key, value)?;
    }
    detector_from_table(&root)
}

/// The `KEY=VALUE,...` items of `arg`, in order, each value typed as
/// [`parse_detector_arg`] types it; nothing is checked against a kind yet. Used
/// where keys are given on their own, like `fdlab tune --set`.
pub fn parse_key_values(arg: &str) -> Result<Vec<(String, Value)>, SpecError> {
    let mut items = Vec::new();
    for item in arg.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(SpecError::new(
                arg,
                "has an empty item (two commas in a row, or a comma at an end); expected KEY=VALUE,...",
            ));
        }
        let Some((key, text)) = item.split_once('=') else {
            return Err(SpecError::new(item, "is not of the form KEY=VALUE"));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(SpecError::new(item, "has an empty key; expected KEY=VALUE"));
        }
        let value = parse_arg_value(key, text.trim())?;
        items.push((key.to_string(), value));
    }
    Ok(items)
}

/// The value of one `--detector` item (see [`parse_detector_arg`]).
pub fn parse_arg_value(key: &str, text: &str) -> Result<Value, SpecError> {
    let quoted = text.starts_with('"') || text.starts_with('\'');
    match text.parse::<Value>() {
        Ok(value @ Value::String(_)) => Ok(value),
        Ok(value @ (Value::Integer(_) | Value::Float(_) | Value::Boolean(_))) if key != "name" => {
            Ok(value)
        }
        // A lone quote is a typo far more often than part of a name.
        _ if quoted => Err(SpecError::new(
            key,
            format!(
                "`{}` starts with a quote but is not a complete quoted string",
                excerpt(text)
            ),
        )),
        _ => Ok(Value::String(text.to_string())),
    }
}

/// Sets `dotted_key` (`fast.decay`) in `root`, creating the nested tables.
pub fn insert_dotted(root: &mut Table, dotted_key: &str, value: Value) -> Result<(), SpecError> {
    let parts: Vec<&str> = dotted_key.split('.').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(SpecError::new(
            dotted_key,
            "has an empty part; nested keys look like `fast.kind`",
        ));
    }
    let (last, parents) = match parts.split_last() {
        Some(split) => split,
        None => return Err(SpecError::new(dotted_key, "is empty")),
    };
    let mut table = root;
    for (i, part) in parents.iter().enumerate() {
        let slot = table
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        table = match slot {
            Value::Table(inner) => inner,
            _ => {
                return Err(SpecError::new(
                    parts[..=i].join("."),
                    "is given both a value and nested keys",
                ))
            }
        };
    }
    let full = parts.join(".");
    match table.get(*last) {
        Some(Value::Table(_)) => Err(SpecError::new(
            full,
            "is given both a value and nested keys",
        )),
        Some(_) => Err(SpecError::new(full, "is given twice")),
        None => {
            table.insert(last.to_string(), value);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests;
