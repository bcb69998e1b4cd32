//! The decision summary of a run: what to choose, and at what cost.
//!
//! One model, four renderers. Each part of a run (detectors, membership
//! judges, key placement, lock-RPC policies) is turned into plain data by
//! its producer ([`detectors`], [`membership`], [`placement`], [`locks`]):
//! groups of candidates compared on identical traffic, one row per
//! candidate with typed cells (pass/fail per fault class, figures with
//! units), the pick and the sentences that weigh it. The renderers
//! ([`terminal`], [`markdown`], [`html`], and JSON by `serde`) draw every
//! part the same way, so the console, `report.md`, `index.html` and
//! `fdlab run --json` say the same thing from the same values.
//!
//! A group is a set of scenarios that ran the same candidates: figures are
//! pooled over its scenarios, and candidates are only ever compared on the
//! traffic they all saw. How each part weighs its candidates is in its
//! producer's docs and in docs/reports.md.

pub mod blame;
pub mod detectors;
pub mod html;
pub mod locks;
pub mod markdown;
pub mod membership;
pub mod placement;
pub mod terminal;
pub mod weigh;
pub mod words;

use serde::Serialize;

/// Every part of a run that has scenarios, in the order detectors,
/// membership, placement, lock RPCs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub parts: Vec<Part>,
}

/// One part of a run: what its candidates are, and their groups.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Part {
    /// `detectors`, `membership`, `placement` or `lock-rpc`; also the id of
    /// the part's section on the page.
    pub id: String,
    pub title: String,
    /// What one row is: `detector`, `judge`, `distribution`, `policy`.
    pub candidate: String,
    pub groups: Vec<Group>,
}

/// Scenarios that ran the same candidates, compared side by side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    pub scenarios: Vec<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// The recommended candidate, if the rule found one.
    pub pick: Option<String>,
    /// The recommendation and its trade, in sentences; the pick's first.
    pub sentences: Vec<String>,
}

impl Group {
    /// The pick in one line: its name and its figures, suspicions aside,
    /// with short units (`pick fixed-3s: T_D p50 2.497 s, false Failed
    /// 0.00/pair-h, messages 0.89/pair-s`), or why there is none.
    pub fn pick_line(&self) -> String {
        let Some(pick) = &self.pick else {
            return self.sentences.first().cloned().unwrap_or_default();
        };
        let Some(row) = self.rows.iter().find(|r| &r.name == pick) else {
            return format!("pick {pick}");
        };
        let figures: Vec<String> = self
            .columns
            .iter()
            .zip(&row.cells)
            .filter(|(c, _)| !c.key.starts_with("suspicions"))
            .filter_map(|(c, cell)| match cell {
                Cell::Number { text, .. } => Some(match c.unit.as_deref() {
                    Some(unit) => format!("{} {text}{}", c.title, short_unit(unit)),
                    None => format!("{} {text}", c.title),
                }),
                _ => None,
            })
            .collect();
        format!("pick {pick}: {}", figures.join(", "))
    }
}

/// A unit after a figure in one line: ` s`, `%`, `/pair-h`.
fn short_unit(unit: &str) -> String {
    let unit = unit
        .replace("hour", "h")
        .replace("second", "s")
        .replace("% of keys", "%");
    match unit.strip_prefix("per ") {
        Some(rest) => format!("/{rest}"),
        None if unit == "%" => unit,
        None => format!(" {unit}"),
    }
}

/// A column of a group's table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Column {
    /// The key of its cells in JSON.
    pub key: String,
    /// Its heading, without the unit.
    pub title: String,
    /// The unit of its numbers, if any (`s`, `per pair-hour`, `%`).
    pub unit: Option<String>,
}

impl Column {
    pub fn new(key: &str, title: &str, unit: Option<&str>) -> Column {
        Column {
            key: key.into(),
            title: title.into(),
            unit: unit.map(str::to_string),
        }
    }
}

/// One candidate's cells, one per column.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub name: String,
    pub cells: Vec<Cell>,
}

/// A cell of a summary table.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Cell {
    /// The candidate met the fault class's requirement.
    Pass { text: String },
    /// It met it only in part (pauses tolerated up to some length).
    Partial { text: String },
    /// It did not.
    Fail { text: String },
    /// A figure: its value in the column's unit, and as shown.
    Number { value: f64, text: String },
    /// Nothing to show: the fault class was not in the group's scenarios,
    /// or the figure is undefined (no crash to detect).
    None,
}

impl Cell {
    /// A number shown with `decimals` decimals.
    pub fn number(value: f64, decimals: usize) -> Cell {
        debug_assert!(value.is_finite());
        Cell::Number {
            value,
            text: format!("{value:.decimals$}"),
        }
    }

    /// A number, or [`Cell::None`].
    pub fn maybe(value: Option<f64>, decimals: usize) -> Cell {
        value.map_or(Cell::None, |v| Cell::number(v, decimals))
    }

    /// How every renderer shows the cell, without colour.
    pub fn text(&self) -> &str {
        match self {
            Cell::Pass { text } | Cell::Partial { text } | Cell::Fail { text } => text,
            Cell::Number { text, .. } => text,
            Cell::None => "-",
        }
    }
}

impl Summary {
    /// Parts with at least one group.
    pub fn new(parts: impl IntoIterator<Item = Part>) -> Summary {
        Summary {
            parts: parts.into_iter().filter(|p| !p.groups.is_empty()).collect(),
        }
    }

    /// The summary of a run's scenarios: its detector scenarios, membership
    /// scenarios, placement reports and lock-RPC scenarios.
    pub fn of_run(
        metrics: &[crate::metrics::ScenarioMetrics],
        membership: &[crate::cluster::MembershipReport],
        placement: &[crate::placement::PlacementReport],
        lockrpc: &[crate::lockrpc::LockrpcMetrics],
    ) -> Summary {
        Summary::new([
            detectors::detectors_part(metrics),
            membership::membership_part(membership),
            placement::placement_part(placement),
            locks::locks_part(lockrpc),
        ])
    }
}

/// Groups `items` by the list of candidates each ran, keeping the order in
/// which lineups first appear: `(lineup, indices of items)`.
pub fn by_lineup(lineups: &[Vec<String>]) -> Vec<(Vec<String>, Vec<usize>)> {
    let mut groups: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    for (i, lineup) in lineups.iter().enumerate() {
        let mut key = lineup.clone();
        key.sort();
        key.dedup();
        match groups.iter_mut().find(|(k, _)| {
            let mut sorted = k.clone();
            sorted.sort();
            sorted == key
        }) {
            Some((_, members)) => members.push(i),
            None => groups.push((lineup.clone(), vec![i])),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lineups_group_scenarios_with_the_same_candidates_in_any_order() {
        let l = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let groups = by_lineup(&[l(&["a", "b"]), l(&["a", "b", "c"]), l(&["b", "a"])]);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0], (l(&["a", "b"]), vec![0, 2]));
        assert_eq!(groups[1].1, vec![1]);
    }

    #[test]
    fn cells_serialize_with_their_kind() {
        let json = serde_json::to_string(&Cell::Fail { text: "x".into() }).unwrap();
        assert_eq!(json, r#"{"kind":"fail","text":"x"}"#);
        assert_eq!(
            serde_json::to_string(&Cell::None).unwrap(),
            r#"{"kind":"none"}"#
        );
    }
}
