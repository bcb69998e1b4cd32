//! The baseline file of `fdlab check` as text: its figures checked where
//! they are written, and its update by `--update` that keeps what people
//! wrote in it.
//!
//! A gate must never pass because of its baseline's plumbing: a figure of
//! `nan` compares false with everything (no regression can be seen against
//! it), `inf` lets any time through, and a negative time or rate means the
//! file was edited wrongly. Such figures are refused with their key and
//! line ([`check_figures`]).
//!
//! A baseline is committed and reviewed: people annotate it (who owns it,
//! why a tolerance was raised). `--update` rewrites its figures only: the new
//! file is rendered as a fresh one, then every comment and spacing of the old
//! file is carried over to the same table and key ([`updated_text`]), so a
//! baseline nobody edited updates to the very bytes a fresh one would have.
//!
//! Baselines written before mistakes were split into false Failed and
//! Suspect-only ones gate `mistakes_per_pair_hour`, a figure this fdlab no
//! longer computes. Such a file is recognized ([`split_mistakes`]): `fdlab
//! check` refuses to compare with it, saying so, and `--update` rewrites it,
//! its mistakes tolerance becoming the tolerance of both new figures.

use std::path::Path;

use toml_edit::{Document, DocumentMut, Item, Table};

use crate::gate::Baseline;

/// Refuses a figure that is not a finite number >= 0: the tolerances, and
/// every entry's `p50_ms`, `p99_ms` and `mistakes_per_pair_hour`. The error
/// names the file, the line and the key (`entry[2].p99_ms`).
pub fn check_figures(file: &Path, text: &str, baseline: &Baseline) -> Result<(), String> {
    let t = baseline.tolerance;
    // (table, entry index, key, value)
    let mut figures = vec![
        ("tolerance", None, "detection_time", Some(t.detection_time)),
        (
            "tolerance",
            None,
            "false_failed_per_pair_hour",
            Some(t.false_failed_per_pair_hour),
        ),
        (
            "tolerance",
            None,
            "suspicions_per_pair_hour",
            Some(t.suspicions_per_pair_hour),
        ),
        (
            "tolerance",
            None,
            "false_declarations_per_node_hour",
            Some(t.false_declarations_per_node_hour),
        ),
    ];
    for (i, e) in baseline.entries.iter().enumerate() {
        figures.push(("entry", Some(i), "p50_ms", e.p50_ms));
        figures.push(("entry", Some(i), "p99_ms", e.p99_ms));
        figures.push((
            "entry",
            Some(i),
            "false_failed_per_pair_hour",
            e.false_failed_per_pair_hour,
        ));
        figures.push((
            "entry",
            Some(i),
            "suspicions_per_pair_hour",
            e.suspicions_per_pair_hour,
        ));
        figures.push((
            "entry",
            Some(i),
            "false_declarations_per_node_hour",
            e.false_declarations_per_node_hour,
        ));
    }
    for (table, entry, key, value) in figures {
        let Some(value) = value else { continue };
        if value.is_finite() && value >= 0.0 {
            continue;
        }
        let line = Document::parse(text)
            .ok()
            .and_then(|doc| line_of(&doc, text, table, entry, key))
            .map_or(String::new(), |l| format!(":{l}"));
        let name = match entry {
            Some(i) => format!("{table}[{i}].{key}"),
            None => format!("{table}.{key}"),
        };
        return Err(format!(
            "{}{line}: `{name}`: must be a finite number >= 0, not {value}",
            file.display()
        ));
    }
    Ok(())
}

/// The 1-based line of `key` in `table` (the `entry`-th of an array of
/// tables when `entry` is given).
fn line_of(
    doc: &Document<&str>,
    text: &str,
    table: &str,
    entry: Option<usize>,
    key: &str,
) -> Option<usize> {
    let item = doc.get(table)?;
    let table = match entry {
        Some(i) => item.as_array_of_tables()?.get(i)?,
        None => item.as_table()?,
    };
    let start = table.key(key)?.span()?.start;
    Some(text[..start.min(text.len())].matches('\n').count() + 1)
}

/// `fresh` (a baseline as [`Baseline::render`] writes it) with the comments
/// and spacing of `old` (the file it replaces) carried over: around the
/// top-level keys and the tolerances, around each entry's table and keys
/// (an entry is the same scenario × detector), and after the last line.
/// Values are `fresh`'s. Comments of entries that are gone go with them.
pub fn updated_text(old: &str, fresh: &str) -> Result<String, String> {
    let old: DocumentMut = old
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let mut new: DocumentMut = fresh
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    copy_decor(old.as_table(), new.as_table_mut());
    if let (Some(from), Some(to)) = (
        old.get("tolerance").and_then(Item::as_table),
        new.get_mut("tolerance").and_then(Item::as_table_mut),
    ) {
        copy_decor(from, to);
    }
    if let (Some(from), Some(to)) = (
        old.get("entry").and_then(Item::as_array_of_tables),
        new.get_mut("entry").and_then(Item::as_array_of_tables_mut),
    ) {
        for table in to.iter_mut() {
            let id = entry_id(table);
            if let Some(before) = from.iter().find(|t| entry_id(t) == id) {
                copy_decor(before, table);
            }
        }
    }
    new.set_trailing(old.trailing().as_str().unwrap_or_default());
    Ok(new.to_string())
}

/// The key of the figure baselines gated before the split.
const MISTAKES_KEY: &str = "mistakes_per_pair_hour";

/// The comment [`Baseline::render`] wrote at the top of a baseline before
/// the split, replaced by the current one when a baseline is split.
const HEADER_BEFORE_SPLIT: &str =
    "# missed a count, mistakes_per_pair_hour an absolute increase.\n";
const HEADER_AFTER_SPLIT: &str = "# missed a count, false_failed_per_pair_hour and\n# suspicions_per_pair_hour absolute increases.\n";

/// `None` for a baseline of this fdlab. For a baseline written before
/// mistakes were split (a `mistakes_per_pair_hour` in its tolerances or an
/// entry), its text split: the tolerance becomes `false_failed_per_pair_hour`
/// and `suspicions_per_pair_hour` (each the old value, unless the file sets
/// it already), the entries' figures are dropped (`--update` writes the new
/// ones), and every comment stays. An error for text that is not TOML is
/// left to [`Baseline::parse`].
pub fn split_mistakes(text: &str) -> Option<String> {
    let mut doc: DocumentMut = text.parse().ok()?;
    let mut found = false;
    if let Some(tolerance) = doc.get_mut("tolerance").and_then(Item::as_table_mut) {
        if let Some((old_key, old)) = tolerance.remove_entry(MISTAKES_KEY) {
            found = true;
            for (i, key) in ["false_failed_per_pair_hour", "suspicions_per_pair_hour"]
                .into_iter()
                .enumerate()
            {
                if tolerance.contains_key(key) {
                    continue;
                }
                tolerance.insert(key, old.clone());
                if let (0, Some(mut new_key)) = (i, tolerance.key_mut(key)) {
                    *new_key.leaf_decor_mut() = old_key.leaf_decor().clone();
                }
            }
        }
    }
    if let Some(entries) = doc.get_mut("entry").and_then(Item::as_array_of_tables_mut) {
        for entry in entries.iter_mut() {
            found |= entry.remove(MISTAKES_KEY).is_some();
        }
    }
    found.then(|| {
        doc.to_string()
            .replacen(HEADER_BEFORE_SPLIT, HEADER_AFTER_SPLIT, 1)
    })
}

/// An entry's scenario and detector.
fn entry_id(table: &Table) -> (Option<&str>, Option<&str>) {
    let text = |key| table.get(key).and_then(Item::as_str);
    (text("scenario"), text("detector"))
}

/// Gives `to`, and each of its keys and values that `from` has too, the
/// decoration (comments, blank lines, spacing) they have in `from`.
fn copy_decor(from: &Table, to: &mut Table) {
    *to.decor_mut() = from.decor().clone();
    let keys: Vec<String> = to.iter().map(|(k, _)| k.to_string()).collect();
    for key in keys {
        let Some((old_key, old_item)) = from.get_key_value(&key) else {
            continue;
        };
        if let Some(mut new_key) = to.key_mut(&key) {
            *new_key.leaf_decor_mut() = old_key.leaf_decor().clone();
            *new_key.dotted_decor_mut() = old_key.dotted_decor().clone();
        }
        if let (Some(old_value), Some(new_value)) = (
            old_item.as_value(),
            to.get_mut(&key).and_then(Item::as_value_mut),
        ) {
            *new_value.decor_mut() = old_value.decor().clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Entry, Tolerance};

    fn entry(detector: &str, p50: f64) -> Entry {
        Entry {
            scenario: "s".into(),
            detector: detector.into(),
            runs: 10,
            p50_ms: Some(p50),
            p99_ms: Some(p50 * 1.5),
            missed: 0,
            false_failed_per_pair_hour: Some(0.25),
            suspicions_per_pair_hour: Some(12.5),
            membership: false,
            false_declarations_per_node_hour: None,
        }
    }

    fn render(entries: Vec<Entry>) -> String {
        Baseline::render(Tolerance::default(), entries).unwrap()
    }

    #[test]
    fn non_finite_and_negative_figures_name_their_key_and_line() {
        let text = render(vec![entry("a", 100.0), entry("b", 200.0)]);
        let p = Path::new("base.toml");
        assert!(Baseline::parse(p, &text).is_ok());
        for (from, to, expected) in [
            (
                "p50_ms = 200.0",
                "p50_ms = nan",
                "base.toml:31: `entry[1].p50_ms`: must be a finite number >= 0, not NaN",
            ),
            (
                "p99_ms = 150.0",
                "p99_ms = inf",
                "base.toml:22: `entry[0].p99_ms`: must be a finite number >= 0, not inf",
            ),
            (
                "p50_ms = 100.0",
                "p50_ms = -inf",
                "base.toml:21: `entry[0].p50_ms`: must be a finite number >= 0, not -inf",
            ),
            (
                "p50_ms = 100.0",
                "p50_ms = -1.5",
                "base.toml:21: `entry[0].p50_ms`: must be a finite number >= 0, not -1.5",
            ),
            (
                "detection_time = 0.05",
                "detection_time = nan",
                "base.toml:11: `tolerance.detection_time`: must be a finite number >= 0, not NaN",
            ),
        ] {
            let bad = text.replacen(from, to, 1);
            assert_ne!(bad, text, "{from}");
            assert_eq!(Baseline::parse(p, &bad).unwrap_err(), expected);
        }
        for (from, to, expected) in [
            (
                "false_failed_per_pair_hour = 0.0",
                "false_failed_per_pair_hour = -1.0",
                "base.toml:13: `tolerance.false_failed_per_pair_hour`",
            ),
            (
                "suspicions_per_pair_hour = 0.0",
                "suspicions_per_pair_hour = nan",
                "base.toml:14: `tolerance.suspicions_per_pair_hour`",
            ),
            (
                "false_failed_per_pair_hour = 0.25",
                "false_failed_per_pair_hour = -0.25",
                "base.toml:24: `entry[0].false_failed_per_pair_hour`",
            ),
            (
                "suspicions_per_pair_hour = 12.5",
                "suspicions_per_pair_hour = inf",
                "base.toml:25: `entry[0].suspicions_per_pair_hour`",
            ),
        ] {
            let bad = text.replacen(from, to, 1);
            assert_ne!(bad, text, "{from}");
            let err = Baseline::parse(p, &bad).unwrap_err();
            assert!(err.starts_with(expected), "{err}");
        }
    }

    /// A baseline as `fdlab check --update` wrote it before mistakes were
    /// split, with a comment on its tolerance.
    fn before_split() -> String {
        render(vec![entry("a", 100.0), entry("b", 200.0)])
            .replace(
                "# missed a count, false_failed_per_pair_hour and\n# suspicions_per_pair_hour absolute increases.\n",
                "# missed a count, mistakes_per_pair_hour an absolute increase.\n",
            )
            .replace(
                "false_failed_per_pair_hour = 0.0\nsuspicions_per_pair_hour = 0.0\n",
                "# raised for the flaky lab\nmistakes_per_pair_hour = 0.5   # agreed in review\n",
            )
            .replace(
                "false_failed_per_pair_hour = 0.25\nsuspicions_per_pair_hour = 12.5\n",
                "mistakes_per_pair_hour = 12.75\n",
            )
    }

    #[test]
    fn a_baseline_from_before_the_split_is_recognized_and_split() {
        let p = Path::new("base.toml");
        let old = before_split();
        assert!(old.contains("mistakes_per_pair_hour = 12.75"), "{old}");
        assert!(
            Baseline::parse(p, &old).is_err(),
            "not a baseline of this fdlab"
        );
        let split = split_mistakes(&old).unwrap();
        let b = Baseline::parse(p, &split).unwrap();
        assert_eq!(b.tolerance.false_failed_per_pair_hour, 0.5);
        assert_eq!(b.tolerance.suspicions_per_pair_hour, 0.5);
        assert_eq!(b.entries.len(), 2);
        assert_eq!(b.entries[0].false_failed_per_pair_hour, None);
        assert_eq!(b.entries[0].p50_ms, Some(100.0));
        assert!(
            split.contains("# raised for the flaky lab\nfalse_failed_per_pair_hour = 0.5   # agreed in review\n"),
            "{split}"
        );
        // Updated (as `fdlab check --update` does: tolerances kept, figures
        // new), it is the file a fresh update writes, its comments kept.
        let fresh =
            Baseline::render(b.tolerance, vec![entry("a", 100.0), entry("b", 200.0)]).unwrap();
        let updated = updated_text(&split, &fresh).unwrap();
        assert!(!updated.contains("mistakes_per_pair_hour"), "{updated}");
        let back = Baseline::parse(p, &updated).unwrap();
        assert_eq!(back.entries, vec![entry("a", 100.0), entry("b", 200.0)]);
        assert_eq!(back.tolerance.suspicions_per_pair_hour, 0.5);
        assert!(updated.starts_with(&fresh[..fresh.find("version").unwrap()]));
        // A baseline of this fdlab is left alone.
        assert_eq!(split_mistakes(&fresh), None);
        assert_eq!(split_mistakes(&render(vec![entry("a", 1.0)])), None);
        assert_eq!(split_mistakes("not toml ["), None);
    }

    #[test]
    fn an_unedited_baseline_updates_to_a_fresh_one() {
        let old = render(vec![entry("a", 100.0), entry("b", 200.0)]);
        let fresh = render(vec![entry("b", 250.0), entry("c", 1.0)]);
        assert_eq!(updated_text(&old, &fresh).unwrap(), fresh);
    }

    #[test]
    fn comments_and_spacing_survive_an_update() {
        let old = render(vec![entry("a", 100.0), entry("b", 200.0)])
            .replacen("# fdlab check", "# owned by the storage team\n# fdlab check", 1)
            .replace("detection_time = 0.05", "detection_time = 0.05   # agreed in review")
            .replace(
                "[[entry]]\nscenario = \"s\"\ndetector = \"b\"",
                "# b is what production runs\n[[entry]]\nscenario = \"s\"\ndetector = \"b\"\n# the p50 moved in #123",
            )
            + "# end\n";
        let fresh = render(vec![entry("a", 120.0), entry("b", 260.0)]);
        let updated = updated_text(&old, &fresh).unwrap();
        for kept in [
            "# owned by the storage team\n# fdlab check",
            "detection_time = 0.05   # agreed in review\n",
            "# b is what production runs\n[[entry]]",
            "detector = \"b\"\n# the p50 moved in #123\nruns = 10",
            "# end\n",
        ] {
            assert!(updated.contains(kept), "`{kept}` lost:\n{updated}");
        }
        let back = Baseline::parse(Path::new("b.toml"), &updated).unwrap();
        assert_eq!(back.entries, vec![entry("a", 120.0), entry("b", 260.0)]);
    }
}
