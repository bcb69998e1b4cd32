//! Where keys are written in a scenario file: the spanned document that
//! turns a key path (`faults[1].probability`) into a line, and the serde
//! errors pinned on the key that caused them.

use super::*;

// Where keys are written.

/// Byte offsets of a key and of its value in the file.
#[derive(Clone, Copy, Debug)]
pub(super) struct Place {
    key: usize,
    value: usize,
}

/// The file's name, its line starts and the place of every key path.
pub(super) struct Doc<'a> {
    pub(super) file: &'a str,
    line_starts: Vec<usize>,
    places: BTreeMap<String, Place>,
}

impl<'a> Doc<'a> {
    pub(super) fn new(file: &'a str, text: &str, table: &DeTable<'_>) -> Doc<'a> {
        let mut places = BTreeMap::new();
        index_table(&mut places, "", table);
        Doc {
            file,
            line_starts: line_starts(text),
            places,
        }
    }

    pub(super) fn line_at(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset).max(1)
    }

    /// Where `path` is written, for ordering keys as in the file.
    pub(super) fn start(&self, path: &str) -> usize {
        self.places.get(path).map_or(usize::MAX, |p| p.key)
    }

    /// Whether the file writes `path` (a key, a table or an array entry).
    pub(super) fn written(&self, path: &str) -> bool {
        self.places.contains_key(path)
    }

    /// The line of `path`; for a key that is not written (a missing key), the
    /// line of the closest enclosing table that is (its header); line 1 for a
    /// missing top-level key.
    pub(super) fn line_of(&self, path: &str) -> usize {
        if let Some(place) = self.places.get(path) {
            return self.line_at(place.key);
        }
        let mut path = path;
        while let Some(parent) = parent_path(path) {
            if let Some(place) = self.places.get(parent) {
                return self.line_at(place.value);
            }
            path = parent;
        }
        1
    }

    /// An error at `path`. `problem` may come from serde or the simulator
    /// and quote the file's values: [`bounded`] keeps such quotes short.
    pub(super) fn error(&self, path: &str, problem: impl Into<String>) -> ScenarioFileError {
        ScenarioFileError {
            file: self.file.to_string(),
            line: Some(self.line_of(path)),
            key: Some(path.to_string()),
            problem: bounded(&problem.into()),
        }
    }

    /// `value` (written at `path`) as a `T`, or an error on the key at fault.
    pub(super) fn typed<T: DeserializeOwned>(
        &self,
        value: &Value,
        path: &str,
    ) -> Result<T, ScenarioFileError> {
        match T::deserialize(value.clone()) {
            Ok(typed) => Ok(typed),
            Err(whole) => Err(self.locate::<T>(value, path, whole.message())),
        }
    }

    /// The elements of an array of tables (`[[faults]]`).
    pub(super) fn tables<'v>(
        &self,
        value: &'v Value,
        path: &str,
    ) -> Result<Vec<&'v Table>, ScenarioFileError> {
        match value {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::Table(table) => Ok(table),
                    other => Err(self.error(
                        &format!("{path}[{i}]"),
                        format!(
                            "must be a table, got {}; write each entry as a [[{path}]] table",
                            describe(other)
                        ),
                    )),
                })
                .collect(),
            Value::Table(_) => Err(self.error(
                path,
                format!(
                    "must be an array of tables: write [[{path}]] (two brackets) above each entry"
                ),
            )),
            other => Err(self.error(
                path,
                format!(
                    "must be an array of tables ([[{path}]] entries), got {}",
                    describe(other)
                ),
            )),
        }
    }

    /// Each table of an array of tables as a `T`.
    pub(super) fn typed_tables<T: DeserializeOwned>(
        &self,
        value: &Value,
        path: &str,
    ) -> Result<Vec<T>, ScenarioFileError> {
        self.tables(value, path)?
            .into_iter()
            .enumerate()
            .map(|(i, table)| {
                self.typed::<T>(&Value::Table(table.clone()), &format!("{path}[{i}]"))
            })
            .collect()
    }

    /// Pins the serde error `whole` of `value` as a `T` on one key (module doc).
    pub(super) fn locate<T: DeserializeOwned>(
        &self,
        value: &Value,
        path: &str,
        whole: &str,
    ) -> ScenarioFileError {
        if let Value::Table(_) = value {
            let mut leaves = Vec::new();
            collect_leaves(value, &mut Vec::new(), &mut leaves);
            leaves.sort_by_key(|(segs, _)| self.start(&render(path, segs)));
            let mut prefix = Value::Table(Table::new());
            for (segs, leaf) in &leaves {
                insert(&mut prefix, segs, (*leaf).clone());
                let Err(e) = T::deserialize(prefix.clone()) else {
                    continue;
                };
                let message = e.message();
                if missing_field(message).is_some() {
                    continue;
                }
                let mut culprit = culprit(segs, leaf, message);
                if matches!(leaf, Value::Table(_)) && culprit.len() < segs.len() {
                    // `key = {}`: "invalid type: map" may be about the empty
                    // table itself or its parent; a number in its place
                    // tells which.
                    let mut scalar = prefix.clone();
                    insert(&mut scalar, segs, Value::Integer(0));
                    let still = T::deserialize(scalar)
                        .err()
                        .is_some_and(|e| e.message().starts_with("invalid type: map"));
                    if !still {
                        culprit = segs;
                    }
                }
                return self.error(&render(path, culprit), rephrase(message));
            }
            if let Some(field) = missing_field(whole) {
                let table = missing_in(value, field, path, self);
                return self.error(&render(path, &join_seg(&table, field)), "missing");
            }
        }
        self.error(path, rephrase(whole))
    }
}

pub(super) fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

pub(super) fn line_at_offset(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset)
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

pub(super) fn index_table(places: &mut BTreeMap<String, Place>, prefix: &str, table: &DeTable<'_>) {
    for (key, value) in table.iter() {
        let path = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        places.insert(
            path.clone(),
            Place {
                key: key.span().start,
                value: value.span().start,
            },
        );
        index_value(places, &path, value.get_ref());
    }
}

pub(super) fn index_value(places: &mut BTreeMap<String, Place>, path: &str, value: &DeValue<'_>) {
    match value {
        DeValue::Table(table) => index_table(places, path, table),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let item_path = format!("{path}[{i}]");
                let start = item.span().start;
                places.insert(
                    item_path.clone(),
                    Place {
                        key: start,
                        value: start,
                    },
                );
                index_value(places, &item_path, item.get_ref());
            }
        }
        _ => {}
    }
}

/// `faults[1].node` -> `faults[1]` -> `faults`; `None` at the top.
pub(super) fn parent_path(path: &str) -> Option<&str> {
    if path.ends_with(']') {
        if let Some(open) = path.rfind('[') {
            return Some(&path[..open]);
        }
    }
    path.rfind('.').map(|dot| &path[..dot])
}

// ---------------------------------------------------------------------------
// Pinning serde errors on keys.

/// One step of a key path relative to a table.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

pub(super) fn render(base: &str, segs: &[Seg]) -> String {
    let mut out = base.to_string();
    for seg in segs {
        match seg {
            Seg::Key(key) if out.is_empty() => out.push_str(key),
            Seg::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

pub(super) fn join_seg(segs: &[Seg], key: &str) -> Vec<Seg> {
    let mut out = segs.to_vec();
    out.push(Seg::Key(key.to_string()));
    out
}

/// The leaves of a table: scalars, arrays that are not arrays of tables, and
/// empty tables, each with its path.
pub(super) fn collect_leaves<'v>(
    value: &'v Value,
    segs: &mut Vec<Seg>,
    out: &mut Vec<(Vec<Seg>, &'v Value)>,
) {
    match value {
        Value::Table(table) if !table.is_empty() => {
            for (key, child) in table {
                segs.push(Seg::Key(key.clone()));
                collect_leaves(child, segs, out);
                segs.pop();
            }
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_table) => {
            for (i, child) in items.iter().enumerate() {
                segs.push(Seg::Index(i));
                collect_leaves(child, segs, out);
                segs.pop();
            }
        }
        leaf => out.push((segs.clone(), leaf)),
    }
}

/// Sets the leaf at `segs` in `root`, creating the tables and arrays on the way.
pub(super) fn insert(root: &mut Value, segs: &[Seg], leaf: Value) {
    let Some((first, rest)) = segs.split_first() else {
        *root = leaf;
        return;
    };
    let empty = || match rest.first() {
        Some(Seg::Index(_)) => Value::Array(Vec::new()),
        _ => Value::Table(Table::new()),
    };
    let child = match (root, first) {
        (Value::Table(table), Seg::Key(key)) => table.entry(key.clone()).or_insert_with(empty),
        (Value::Array(items), Seg::Index(i)) => {
            while items.len() <= *i {
                items.push(Value::Table(Table::new()));
            }
            match items.get_mut(*i) {
                Some(child) => child,
                None => return,
            }
        }
        _ => return,
    };
    insert(child, rest, leaf)
}

/// The key a failing leaf's error is about: the leaf itself, or, for an
/// unknown key holding a table or a table where a value belongs, the key of
/// that table.
pub(super) fn culprit<'s>(segs: &'s [Seg], leaf: &Value, message: &str) -> &'s [Seg] {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        if let Some((field, _)) = rest.split_once('`') {
            if let Some(at) = segs
                .iter()
                .rposition(|s| matches!(s, Seg::Key(k) if k == field))
            {
                return &segs[..=at];
            }
        }
    }
    if message.starts_with("invalid type: map") && !matches!(leaf, Value::Datetime(_)) {
        if let Some((_, parent)) = segs.split_last() {
            if !parent.is_empty() {
                return parent;
            }
        }
    }
    segs
}

/// `field` of serde's "missing field `field`".
pub(super) fn missing_field(message: &str) -> Option<&str> {
    message
        .trim()
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(field, _)| field)
}

/// Which table of `value` lacks the required `field`: a nested distribution
/// table (`[network.latency]` with no `median`) if one is missing it, else the
/// table itself.
pub(super) fn missing_in(value: &Value, field: &str, path: &str, doc: &Doc<'_>) -> Vec<Seg> {
    let mut tables = Vec::new();
    collect_tables(value, &mut Vec::new(), &mut tables);
    tables.sort_by_key(|(segs, _)| doc.start(&render(path, segs)));
    for (segs, table) in tables {
        if segs.is_empty() || table.contains_key(field) {
            continue;
        }
        if let Err(e) = Dist::deserialize(Value::Table(table.clone())) {
            if missing_field(e.message()) == Some(field) {
                return segs;
            }
        }
    }
    Vec::new()
}

pub(super) fn collect_tables<'v>(
    value: &'v Value,
    segs: &mut Vec<Seg>,
    out: &mut Vec<(Vec<Seg>, &'v Table)>,
) {
    match value {
        Value::Table(table) => {
            out.push((segs.clone(), table));
            for (key, child) in table {
                segs.push(Seg::Key(key.clone()));
                collect_tables(child, segs, out);
                segs.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                segs.push(Seg::Index(i));
                collect_tables(child, segs, out);
                segs.pop();
            }
        }
        _ => {}
    }
}

/// Serde's messages in the words of a scenario file: keys, values, tables.
pub(crate) fn rephrase(message: &str) -> String {
    let message = message.trim();
    if let Some(rest) = message.strip_prefix("unknown field `") {
        return match rest.split_once(", expected ") {
            Some((field, expected)) => {
                // The keys serde lists are between backticks.
                let keys = expected.split('`').skip(1).step_by(2);
                // A near miss says the one key meant; the whole list (up to
                // 30 keys of a membership table) is for a key that is not.
                match closest_key(field.trim_end_matches('`'), keys) {
                    Some(k) => format!("unknown key (did you mean `{k}`?)"),
                    None => format!("unknown key; expected {}", key_list(expected)),
                }
            }
            None => "unknown key; this table takes no keys".to_string(),
        };
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        if let Some((value, expected)) = rest.split_once("`, expected ") {
            // The values serde lists are between backticks.
            let values = expected.split('`').skip(1).step_by(2);
            let hint = closest_key(value, values)
                .map(|v| format!(" (did you mean `{v}`?)"))
                .unwrap_or_default();
            return format!("unknown value `{value}`{hint}; expected {expected}");
        }
    }
    for rust in ["expected struct ", "expected internally tagged enum "] {
        if let Some(at) = message.find(rust) {
            return format!("{}expected a table", &message[..at]);
        }
    }
    for (rust, plain) in [
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
    ] {
        if let Some(head) = message.strip_suffix(rust) {
            return in_toml_words(&format!("{head}{plain}"));
        }
    }
    in_toml_words(message)
}

/// Characters of an "expected one of" list an error shows at most: a
/// membership table's thirty keys would make a line of 600 characters.
const KEY_LIST_CHARS: usize = 200;

/// serde's list of expected keys (`one of `a`, `b`, ...`), cut after
/// [`KEY_LIST_CHARS`] at a key's end, with how many more there are and
/// where all of them are listed.
fn key_list(expected: &str) -> String {
    if expected.len() <= KEY_LIST_CHARS {
        return expected.to_string();
    }
    let keys: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let mut shown = String::new();
    let mut count = 0;
    for key in &keys {
        if shown.len() + key.len() + 4 > KEY_LIST_CHARS {
            break;
        }
        if count > 0 {
            shown.push_str(", ");
        }
        shown.push_str(&format!("`{key}`"));
        count += 1;
    }
    format!(
        "one of {shown} and {} more (`fdlab list --faults` lists every table's keys)",
        keys.len() - count
    )
}

/// serde's names for TOML's kinds of value in TOML's own words.
fn in_toml_words(message: &str) -> String {
    message
        .replacen("invalid type: map,", "invalid type: a table,", 1)
        .replacen("invalid type: sequence,", "invalid type: an array,", 1)
}

pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Table(_) => "a table".to_string(),
        Value::Array(_) => "an array".to_string(),
        other => format!("`{other}`"),
    }
}

// ---------------------------------------------------------------------------
// TOML syntax errors.

/// A TOML parse error, at its line, with the key written on that line if one is.
pub(super) fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> ScenarioFileError {
    let line = e.span().map(|span| line_at_offset(text, span.start));
    let key = line.and_then(|line| key_on_line(text, line));
    let message = e.message().trim();
    ScenarioFileError {
        file: file.to_string(),
        line: Some(line.unwrap_or(1)),
        key,
        problem: bounded(&format!(
            "invalid TOML: {}",
            message.lines().next().unwrap_or(message)
        )),
    }
}

/// Best effort, from the text alone (the document did not parse): the path of
/// the key assigned on `line`, or of the table whose header is on it.
pub(super) fn key_on_line(text: &str, line: usize) -> Option<String> {
    let mut table = String::new();
    // Array-of-tables names and how many entries each has so far.
    let mut arrays: BTreeMap<String, usize> = BTreeMap::new();
    for (n, raw) in text.split('\n').enumerate() {
        let here = n + 1 == line;
        let trimmed = raw.trim();
        if let Some(inner) = trimmed.strip_prefix("[[") {
            let name = clean_key(inner.split("]]").next()?)?;
            *arrays.entry(name.clone()).or_insert(0) += 1;
            table = qualify(&name, &arrays);
        } else if let Some(inner) = trimmed.strip_prefix('[') {
            table = qualify(&clean_key(inner.split(']').next()?)?, &arrays);
        } else if here {
            let (key, _) = trimmed.split_once('=')?;
            let key = clean_key(key)?;
            return Some(if table.is_empty() {
                key
            } else {
                format!("{table}.{key}")
            });
        }
        if here {
            return (!table.is_empty()).then_some(table);
        }
    }
    None
}

/// `a . "b"` -> `a.b`; `None` if it does not look like a key.
pub(super) fn clean_key(text: &str) -> Option<String> {
    let parts: Vec<String> = text
        .split('.')
        .map(|p| p.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
        .collect();
    let ok = parts.iter().all(|p| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    });
    ok.then(|| parts.join("."))
}

/// `random_faults.duration` -> `random_faults[2].duration` when
/// `[[random_faults]]` has had three entries.
pub(super) fn qualify(name: &str, arrays: &BTreeMap<String, usize>) -> String {
    let mut plain = String::new();
    let mut out = String::new();
    for part in name.split('.') {
        if !plain.is_empty() {
            plain.push('.');
            out.push('.');
        }
        plain.push_str(part);
        out.push_str(part);
        if let Some(count) = arrays.get(&plain) {
            out.push_str(&format!("[{}]", count.saturating_sub(1)));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Empirical distributions.
