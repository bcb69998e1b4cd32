//! The parameter grid that `fdlab tune` searches for each detector kind, and
//! the settings it recommends written back as a scenario's `[[detectors]]`
//! table.
//!
//! A grid point is a list of `KEY = value` settings of the kind's detector
//! table (dotted keys for the stages of `two-stage`), turned into a
//! configuration by [`detector_from_table`], exactly as a scenario file would
//! be: every point is validated and every error names its key the usual way,
//! and the keys a point does not set keep the kind's defaults (spec §3).
//!
//! Which keys vary, and over what, follows what moves the trade-off between
//! detection time and mistakes (Chen, Toueg & Aguilera 2002, §5):
//!
//! | kind | fixed from the monitored system | varied |
//! |---|---|---|
//! | `fixed-timeout` | `interval` | `timeout`: 1.25 to 20 heartbeat intervals |
//! | `phi-accrual` | `interval`, `first_heartbeat_estimate` | `threshold` 1 to 16 (log-ish), `acceptable_heartbeat_pause` 0 to 3 intervals |
//! | `dataflow-decay` | `initial_interval` | `margin` 1.1 to 4, `decay` 0.9 to 0.999 per tick, `grace` |
//! | `two-stage` | a dataflow-decay `fast` stage, a phi-accrual `confirm` stage | `confirm.threshold`, `confirm.acceptable_heartbeat_pause`, `fast.margin` |
//! | `adaptive-probe` | — | `initial_timeout` 1 s to 10 s, `missed_probes_limit` 1 to 5 |
//!
//! For phi accrual the threshold is the knob of Hayashibara et al. (2004): phi
//! is −log10 of the probability that a heartbeat this late is still to come,
//! so thresholds are tried on a roughly logarithmic scale of that probability;
//! the pause allowance (Akka's `acceptable-heartbeat-pause`) shifts the whole
//! curve and is what rides out rare long gaps such as GC pauses. For dataflow
//! decay, `decay` and `fail_below` only matter through the number of ticks
//! from 1 to `fail_below` (ln fail_below / ln decay), so only `decay` varies.
//! `adaptive-probe` gets a grid for simulated scenarios; a heartbeat trace
//! cannot evaluate it (no probe round trips).

use fdlab_protocol::time::{NANOS_PER_MICRO, NANOS_PER_MILLI};
use fdlab_protocol::Nanos;
use toml::{Table, Value};

use crate::detector_spec::{detector_from_table, insert_dotted, DetectorSpec, SpecError};

/// Multiples of the heartbeat interval tried as a fixed timeout.
pub const FIXED_TIMEOUT_INTERVALS: [f64; 13] = [
    1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0,
];
/// Phi thresholds tried (phi = −log10 of the probability that the next
/// heartbeat is still to come). Below 1 a detector declares Failed while a
/// late heartbeat still has a better than 10% chance: nobody should run that,
/// and with a pause allowance it only imitates a fixed timeout.
pub const PHI_THRESHOLDS: [f64; 10] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0];
/// Phi's acceptable heartbeat pause, in heartbeat intervals.
pub const PHI_PAUSE_INTERVALS: [f64; 5] = [0.0, 0.5, 1.0, 2.0, 3.0];
/// Dataflow decay's margin over the estimated interval.
pub const DECAY_MARGINS: [f64; 6] = [1.1, 1.25, 1.5, 2.0, 3.0, 4.0];
/// Dataflow decay's factor per tick (with the default 1 ms tick and
/// `fail_below` 0.2: Failed 16 ms, 161 ms and 1.6 s after the frame is overdue).
pub const DECAY_FACTORS: [f64; 3] = [0.9, 0.99, 0.999];
/// Dataflow decay's grace variants.
pub const DECAY_GRACES: [&str; 2] = ["none", "one-interval"];
/// Confirmation thresholds of the phi stage of `two-stage`.
pub const TWO_STAGE_THRESHOLDS: [f64; 6] = [1.0, 2.0, 4.0, 8.0, 12.0, 16.0];
/// Pause allowance of the phi stage of `two-stage`, in heartbeat intervals.
pub const TWO_STAGE_PAUSE_INTERVALS: [f64; 4] = [0.0, 1.0, 2.0, 3.0];
/// Margin of the decay stage of `two-stage`.
pub const TWO_STAGE_MARGINS: [f64; 3] = [1.5, 2.0, 3.0];
/// Adaptive probe's initial timeout, in milliseconds.
pub const PROBE_INITIAL_TIMEOUTS_MS: [u64; 5] = [1_000, 2_000, 3_000, 5_000, 10_000];
/// Adaptive probe's missed-probe limit.
pub const PROBE_MISSED_LIMITS: [i64; 5] = [1, 2, 3, 4, 5];

/// One varied key and the values tried, in the order tried.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Dotted for a stage of `two-stage` (`confirm.threshold`).
    pub key: String,
    pub values: Vec<Value>,
}

/// The grid of one detector kind: settings every point shares, and the axes
/// whose cartesian product gives the points.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchSpace {
    pub kind: String,
    /// Keys set the same in every point (from the monitored system, or pinned).
    pub fixed: Vec<(String, Value)>,
    pub axes: Vec<Axis>,
}

/// Which end of its axis a setting is at (axes run from low to high).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    First,
    Last,
}

/// One point of a grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub kind: String,
    /// The settings shared by every point of the grid.
    pub fixed: Vec<(String, Value)>,
    /// This point's value of each axis, in axis order.
    pub varied: Vec<(String, Value)>,
}

/// The grid `fdlab tune` searches for `kind`, for a monitored peer that sends
/// heartbeats every `interval` (the observed median inter-arrival time of a
/// trace, or the scenario's interval). `interval` is rounded by
/// [`round_duration`], and durations derived from it
/// are multiples of the rounded value, so that the recommended setting reads
/// as a person would write it.
pub fn search_space(kind: &str, interval: Nanos) -> Result<SearchSpace, SpecError> {
    // Multiples of the rounded interval, so that 3 intervals of 1.0004 s read 3s.
    let interval = round_duration(interval);
    let times = |m: f64| {
        duration(round_duration(Nanos::from_nanos_f64(
            interval.as_nanos_f64() * m,
        )))
    };
    let floats = |xs: &[f64]| xs.iter().map(|&x| Value::Float(x)).collect::<Vec<_>>();
    let multiples = |xs: &[f64]| xs.iter().map(|&m| times(m)).collect::<Vec<_>>();
    let axis = |key: &str, values: Vec<Value>| Axis {
        key: key.to_string(),
        values,
    };
    let set = |key: &str, value: Value| (key.to_string(), value);
    let (fixed, axes) = match kind {
        "fixed-timeout" => (
            vec![set("interval", times(1.0))],
            vec![axis("timeout", multiples(&FIXED_TIMEOUT_INTERVALS))],
        ),
        "phi-accrual" => (
            vec![
                set("interval", times(1.0)),
                set("first_heartbeat_estimate", times(1.0)),
            ],
            vec![
                axis("threshold", floats(&PHI_THRESHOLDS)),
                axis(
                    "acceptable_heartbeat_pause",
                    multiples(&PHI_PAUSE_INTERVALS),
                ),
            ],
        ),
        "dataflow-decay" => (
            vec![set("initial_interval", times(1.0))],
            vec![
                axis("margin", floats(&DECAY_MARGINS)),
                axis("decay", floats(&DECAY_FACTORS)),
                axis("grace", DECAY_GRACES.iter().map(|&g| g.into()).collect()),
            ],
        ),
        "two-stage" => (
            vec![
                set("fast.kind", "dataflow-decay".into()),
                set("fast.initial_interval", times(1.0)),
                set("fast.grace", "one-interval".into()),
                set("confirm.kind", "phi-accrual".into()),
                set("confirm.interval", times(1.0)),
                set("confirm.first_heartbeat_estimate", times(1.0)),
            ],
            vec![
                axis("confirm.threshold", floats(&TWO_STAGE_THRESHOLDS)),
                axis(
                    "confirm.acceptable_heartbeat_pause",
                    multiples(&TWO_STAGE_PAUSE_INTERVALS),
                ),
                axis("fast.margin", floats(&TWO_STAGE_MARGINS)),
            ],
        ),
        "adaptive-probe" => (
            Vec::new(),
            vec![
                axis(
                    "initial_timeout",
                    PROBE_INITIAL_TIMEOUTS_MS
                        .iter()
                        .map(|&ms| duration(Nanos::from_millis(ms)))
                        .collect(),
                ),
                axis(
                    "missed_probes_limit",
                    PROBE_MISSED_LIMITS
                        .iter()
                        .map(|&n| Value::Integer(n))
                        .collect(),
                ),
            ],
        ),
        other => {
            // The usual "unknown kind" error, listing the kinds.
            let mut table = Table::new();
            table.insert("kind".into(), other.into());
            return Err(detector_from_table(&table).err().unwrap_or_else(|| {
                SpecError::new(
                    "kind",
                    format!("`{}` has no search space", crate::excerpt::excerpt(other)),
                )
            }));
        }
    };
    Ok(SearchSpace {
        kind: kind.to_string(),
        fixed,
        axes,
    })
}

impl SearchSpace {
    /// Sets `key` to `value` in every point: a varied key stops varying, a
    /// fixed one is replaced. Setting a stage's kind (`fast.kind`) drops every
    /// other setting of that stage, whose keys belonged to the old kind. The
    /// result is checked when points are built, by [`Point::spec`].
    pub fn pin(&mut self, key: &str, value: Value) -> Result<(), SpecError> {
        if key == "kind" {
            return Err(SpecError::new(
                key,
                "is chosen by --detector and cannot be set here",
            ));
        }
        if let Some(stage) = key.strip_suffix(".kind") {
            let prefix = format!("{stage}.");
            self.fixed.retain(|(k, _)| !k.starts_with(&prefix));
            self.axes.retain(|a| !a.key.starts_with(&prefix));
        }
        self.axes.retain(|a| a.key != key);
        match self.fixed.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.fixed.push((key.to_string(), value)),
        }
        Ok(())
    }

    /// The settings of `point` at an end of their axis (axes of three
    /// values or more), with whether it is the last value: a best setting
    /// there may have a better neighbour outside the grid.
    pub fn edges(&self, point: &Point) -> Vec<(String, Value, End)> {
        self.axes
            .iter()
            .filter(|axis| axis.values.len() >= 3)
            .filter_map(|axis| {
                let (_, value) = point.varied.iter().find(|(k, _)| *k == axis.key)?;
                let end = if Some(value) == axis.values.first() {
                    End::First
                } else if Some(value) == axis.values.last() {
                    End::Last
                } else {
                    return None;
                };
                Some((axis.key.clone(), value.clone(), end))
            })
            .collect()
    }

    /// Every point, the first axis varying slowest (the order ties resolve in).
    pub fn points(&self) -> Vec<Point> {
        let mut points = vec![Vec::new()];
        for axis in &self.axes {
            points = points
                .into_iter()
                .flat_map(|prefix: Vec<(String, Value)>| {
                    axis.values.iter().map(move |v| {
                        let mut next = prefix.clone();
                        next.push((axis.key.clone(), v.clone()));
                        next
                    })
                })
                .collect();
        }
        points
            .into_iter()
            .map(|varied| Point {
                kind: self.kind.clone(),
                fixed: self.fixed.clone(),
                varied,
            })
            .collect()
    }
}

impl Point {
    /// Every setting of the point: the fixed ones, then the varied ones.
    pub fn settings(&self) -> impl Iterator<Item = &(String, Value)> {
        self.fixed.iter().chain(&self.varied)
    }

    /// The point as a detector table (`kind` and every setting, nested).
    pub fn table(&self) -> Result<Table, SpecError> {
        let mut table = Table::new();
        table.insert("kind".into(), self.kind.clone().into());
        for (key, value) in self.settings() {
            insert_dotted(&mut table, key, value.clone())?;
        }
        Ok(table)
    }

    /// The validated detector of this point, as a scenario would build it.
    pub fn spec(&self) -> Result<DetectorSpec, SpecError> {
        detector_from_table(&self.table()?)
    }

    /// The varied settings on one line: `threshold = 8.0, acceptable_heartbeat_pause = "2s"`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .varied
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        parts.join(", ")
    }

    /// The point as a `[[detectors]]` table to paste into a scenario file,
    /// named `name` unless a `name` setting was pinned: `name`, `kind`, then
    /// every setting in order (dotted keys for stages, which TOML accepts).
    pub fn snippet(&self, name: &str) -> String {
        let pinned_name = self.settings().find(|(k, _)| k == "name");
        let name = match pinned_name {
            Some((_, v)) => v.to_string(),
            None => Value::from(name).to_string(),
        };
        let mut out = format!(
            "[[detectors]]\nname = {name}\nkind = {}\n",
            Value::from(self.kind.as_str())
        );
        for (key, value) in self.settings().filter(|(k, _)| k != "name") {
            out.push_str(&format!("{key} = {value}\n"));
        }
        out
    }

    /// The value of a varied key, for tables of results.
    pub fn value_of(&self, key: &str) -> Option<&Value> {
        self.settings().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// A duration as a scenario writes it: `"1s"`, `"1500ms"`.
fn duration(n: Nanos) -> Value {
    Value::String(n.to_string())
}

/// Rounds to 10 ms from one second up, to the millisecond from 10 ms, and to
/// the microsecond below (never to zero): three significant digits or so, as a
/// person would write a heartbeat interval.
pub fn round_duration(n: Nanos) -> Nanos {
    let unit = if n >= Nanos::from_secs(1) {
        10 * NANOS_PER_MILLI
    } else if n >= Nanos::from_millis(10) {
        NANOS_PER_MILLI
    } else if n >= Nanos::from_micros(10) {
        NANOS_PER_MICRO
    } else {
        return n;
    };
    Nanos((n.as_nanos() + unit / 2) / unit * unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::{DetectorConfig, KINDS};

    const SEC: Nanos = Nanos::from_secs(1);

    #[test]
    fn every_kind_has_a_valid_grid() {
        for kind in KINDS {
            let space = search_space(kind, Nanos::from_millis(1_003)).unwrap();
            let points = space.points();
            let expected: usize = space.axes.iter().map(|a| a.values.len()).product();
            assert_eq!(points.len(), expected, "{kind}");
            assert!(points.len() >= 5, "{kind}");
            for p in &points {
                let spec = p
                    .spec()
                    .unwrap_or_else(|e| panic!("{kind} {}: {e}", p.describe()));
                assert_eq!(spec.config.kind(), kind);
            }
        }
    }

    #[test]
    fn edges_name_the_settings_at_an_end_of_their_axis() {
        let space = search_space("phi-accrual", SEC).unwrap();
        let points = space.points();
        let setting = |key: &str, e: &(String, Value, End)| e.0 == key;
        // The first point: the lowest threshold and no pause allowance.
        let edges = space.edges(&points[0]);
        assert_eq!(edges.len(), 2, "{edges:?}");
        assert!(setting("threshold", &edges[0]) && edges[0].2 == End::First);
        assert!(setting("acceptable_heartbeat_pause", &edges[1]) && edges[1].2 == End::First);
        // The last point: both highest.
        let edges = space.edges(points.last().unwrap());
        assert!(edges.iter().all(|e| e.2 == End::Last) && edges.len() == 2);
        // An inner point has none.
        let inner = points
            .iter()
            .find(|p| space.edges(p).is_empty())
            .expect("an inner point");
        assert!(inner.describe().contains("threshold"));
    }

    #[test]
    fn phi_grid_uses_the_interval_and_varies_threshold_slowest() {
        let space = search_space("phi-accrual", Nanos(1_004_400_000)).unwrap();
        let points = space.points();
        assert_eq!(
            points.len(),
            PHI_THRESHOLDS.len() * PHI_PAUSE_INTERVALS.len()
        );
        assert_eq!(
            points[0].describe(),
            "threshold = 1.0, acceptable_heartbeat_pause = \"0s\""
        );
        assert_eq!(
            points[1].describe(),
            "threshold = 1.0, acceptable_heartbeat_pause = \"500ms\""
        );
        let DetectorConfig::PhiAccrual(c) = points[4].spec().unwrap().config else {
            panic!("wrong kind")
        };
        assert_eq!(c.interval, SEC, "1004.4 ms rounds to 1 s");
        assert_eq!(c.first_heartbeat_estimate, SEC);
        assert_eq!(c.acceptable_heartbeat_pause, Nanos::from_secs(3));
        assert_eq!(c.threshold, 1.0);
    }

    #[test]
    fn pinning_removes_an_axis_or_replaces_a_setting() {
        let mut space = search_space("phi-accrual", SEC).unwrap();
        space
            .pin("acceptable_heartbeat_pause", "2s".into())
            .unwrap();
        space.pin("interval", "2s".into()).unwrap();
        space.pin("min_std_deviation", "50ms".into()).unwrap();
        let points = space.points();
        assert_eq!(points.len(), PHI_THRESHOLDS.len());
        let DetectorConfig::PhiAccrual(c) = points[0].spec().unwrap().config else {
            panic!("wrong kind")
        };
        assert_eq!(c.acceptable_heartbeat_pause, Nanos::from_secs(2));
        assert_eq!(c.interval, Nanos::from_secs(2));
        assert_eq!(c.min_std_deviation, Nanos::from_millis(50));
        assert!(space.pin("kind", "fixed-timeout".into()).is_err());

        // A pinned key the kind does not have is the usual error.
        space.pin("treshold", Value::Float(3.0)).unwrap();
        let e = space.points()[0].spec().unwrap_err();
        assert_eq!(e.key, "treshold");
        assert!(e.problem.contains("unknown key"), "{e}");
    }

    #[test]
    fn pinning_a_stage_kind_drops_that_stage_s_settings() {
        let mut space = search_space("two-stage", SEC).unwrap();
        space.pin("fast.kind", "fixed-timeout".into()).unwrap();
        space.pin("fast.timeout", "2s".into()).unwrap();
        assert!(space.axes.iter().all(|a| !a.key.starts_with("fast.")));
        for p in space.points() {
            p.spec().unwrap();
        }
    }

    #[test]
    fn unknown_kind_is_the_usual_error() {
        let e = search_space("phi", SEC).unwrap_err();
        assert_eq!(e.key, "kind");
        assert!(e.problem.contains("unknown kind `phi`"), "{e}");
    }

    #[test]
    fn snippet_is_a_scenario_table_that_parses_back() {
        let space = search_space("two-stage", SEC).unwrap();
        let point = &space.points()[7];
        let text = point.snippet("combo-tuned");
        assert!(text.starts_with("[[detectors]]\nname = \"combo-tuned\"\nkind = \"two-stage\"\n"));
        #[derive(serde::Deserialize)]
        struct File {
            detectors: Vec<Table>,
        }
        let file: File = toml::from_str(&text).unwrap();
        let spec = detector_from_table(&file.detectors[0]).unwrap();
        assert_eq!(spec.name.as_deref(), Some("combo-tuned"));
        assert_eq!(spec.config, point.spec().unwrap().config);

        let mut space = search_space("fixed-timeout", SEC).unwrap();
        space.pin("name", "edge \"a\"".into()).unwrap();
        let text = space.points()[0].snippet("ignored");
        assert!(text.contains("name = 'edge \"a\"'\n"), "{text}");
        assert_eq!(text.matches("name =").count(), 1, "{text}");
    }

    #[test]
    fn durations_round_readably() {
        assert_eq!(round_duration(Nanos(1_004_999_999)), SEC);
        assert_eq!(
            round_duration(Nanos(1_537_000_000)),
            Nanos::from_millis(1_540)
        );
        assert_eq!(round_duration(Nanos(250_600_000)), Nanos::from_millis(251));
        assert_eq!(round_duration(Nanos(2_500_600)), Nanos(2_501_000));
        assert_eq!(round_duration(Nanos(5_400)), Nanos(5_400));
    }
}
