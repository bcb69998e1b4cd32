//! Units of a sweep on disk: one row of the results on one seed (a point
//! of a detector sweep; a point and a judge of a membership sweep), with the
//! figures of its run ([`RunTotals`], or the cluster totals of
//! [`super::cluster_units`]), one CSV line each.
//!
//! While a sweep runs, finished units are appended to `journal.csv`, a whole
//! line at a time and flushed, so an interrupt loses at most the seeds in
//! progress. `--resume` reads the journal back; a torn last line (a kill in
//! the middle of a write) is dropped and the file cut back to its last whole
//! line. When every unit of the shard is done, `units.csv` is written in
//! canonical order (row, then seed) and the journal removed: a sharded
//! sweep merged and an unsharded one then have the same bytes.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use fdlab_protocol::Nanos;
use fdlab_reports::metrics::RunTotals;
use fdlab_scenarios::sweep_plan::PlanFile;

pub const JOURNAL: &str = "journal.csv";
pub const UNITS: &str = "units.csv";

/// Columns of a detector sweep's `units.csv` and journal.
pub const HEADER: &str = "point,seed,pairs,failed_delays_ns,suspect_delays_ns,mistakes,mistake_ns,must_not_detect_ns,alive_must_not_detect_ns,messages,bytes,pair_ns,false_failed,false_failed_ns,recovery_lags_ns,healthy_ns,alive_healthy_ns";

/// The header of units written before false Failed mistakes, recovery lags
/// and healthy time were recorded: their summaries cannot be computed.
const HEADER_BEFORE_SPLIT: &str = "point,seed,pairs,failed_delays_ns,suspect_delays_ns,mistakes,mistake_ns,must_not_detect_ns,alive_must_not_detect_ns,messages,bytes,pair_ns";

/// The figures of one unit's run, as the fields of its line after the row
/// and the seed.
pub trait Figures: Clone + PartialEq + Debug {
    /// Columns of `units.csv` and of the journal.
    const HEADER: &'static str;
    /// Fields that name the row (the point; the point and the judge).
    const KEY_FIELDS: usize;
    /// Fields of a whole line.
    const FIELDS: usize;
    /// The figures' fields, each preceded by a comma.
    fn write(&self, out: &mut String);
    /// The figures of a line's fields `f`, from field `at` on.
    fn parse(f: &[&str], at: usize) -> Result<Self, String>;
    /// Why a file whose first line is `header`, a header of an earlier
    /// fdlab, cannot be read.
    fn outdated(_header: &str) -> Option<&'static str> {
        None
    }
}

/// One row on one seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit<T = RunTotals> {
    /// Index into the plan's rows (a detector sweep's points).
    pub point: usize,
    pub seed: u64,
    pub totals: T,
}

/// Delays separated by spaces; a missed detection (an unfinished recovery)
/// is `-`.
pub fn delays(list: &[Option<Nanos>]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|d| d.map_or("-".to_string(), |t| t.as_nanos().to_string()))
        .collect();
    items.join(" ")
}

pub fn parse_delays(text: &str) -> Result<Vec<Option<Nanos>>, String> {
    text.split_whitespace()
        .map(|item| match item {
            "-" => Ok(None),
            n => n
                .parse()
                .map(|v| Some(Nanos(v)))
                .map_err(|_| format!("`{n}` is not a delay in ns")),
        })
        .collect()
}

/// Field `i` of `f` as a number.
pub fn num(f: &[&str], i: usize) -> Result<u128, String> {
    f[i].parse()
        .map_err(|_| format!("field {} (`{}`) is not a number", i + 1, f[i]))
}

/// Field `i` of `f` as a number that fits 64 bits.
pub fn small(f: &[&str], i: usize) -> Result<u64, String> {
    u64::try_from(num(f, i)?).map_err(|_| format!("field {} is too large", i + 1))
}

impl Figures for RunTotals {
    const HEADER: &'static str = HEADER;
    const KEY_FIELDS: usize = 1;
    const FIELDS: usize = 17;

    fn write(&self, out: &mut String) {
        let t = self;
        out.push_str(&format!(
            ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            t.pairs,
            delays(&t.failed),
            delays(&t.suspect),
            t.mistakes,
            t.mistake_time,
            t.must_not_detect,
            t.alive_must_not_detect,
            t.messages,
            t.bytes,
            t.pair_time,
            t.false_failed,
            t.false_failed_time,
            delays(&t.recovery),
            t.healthy,
            t.alive_healthy
        ));
    }

    fn parse(f: &[&str], at: usize) -> Result<RunTotals, String> {
        let failed = parse_delays(f[at + 1])?;
        let suspect = parse_delays(f[at + 2])?;
        if failed.len() != suspect.len() {
            return Err("failed and suspect delays differ in number".into());
        }
        Ok(RunTotals {
            pairs: small(f, at)?,
            failed,
            suspect,
            mistakes: small(f, at + 3)?,
            mistake_time: num(f, at + 4)?,
            must_not_detect: num(f, at + 5)?,
            alive_must_not_detect: num(f, at + 6)?,
            messages: small(f, at + 7)?,
            bytes: small(f, at + 8)?,
            pair_time: num(f, at + 9)?,
            false_failed: small(f, at + 10)?,
            false_failed_time: num(f, at + 11)?,
            recovery: parse_delays(f[at + 12])?,
            healthy: num(f, at + 13)?,
            alive_healthy: num(f, at + 14)?,
        })
    }

    fn outdated(header: &str) -> Option<&'static str> {
        (header == HEADER_BEFORE_SPLIT).then_some(
            "written by an earlier fdlab, before false Failed mistakes, recovery lags and healthy time were recorded",
        )
    }
}

impl<T: Figures> Unit<T> {
    /// The unit as one CSV line (with its newline); `keys` name the rows.
    pub fn line(&self, keys: &[String]) -> String {
        let mut line = format!("{},{}", keys[self.point], self.seed);
        self.totals.write(&mut line);
        line.push('\n');
        line
    }

    /// Parses a line written by [`Unit::line`]. `rows` maps a row's key to
    /// its index (a sweep may have 100,000 rows and millions of units).
    pub fn parse(line: &str, rows: &BTreeMap<String, usize>) -> Result<Unit<T>, String> {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != T::FIELDS {
            return Err(format!("{} fields, expected {}", f.len(), T::FIELDS));
        }
        let key = f[..T::KEY_FIELDS].join(",");
        let point = *rows.get(&key).ok_or_else(|| {
            let what = if T::KEY_FIELDS == 1 { "point" } else { "row" };
            format!("{what} `{key}` is not in the plan")
        })?;
        Ok(Unit {
            point,
            seed: small(&f, T::KEY_FIELDS)?,
            totals: T::parse(&f, T::KEY_FIELDS + 1)?,
        })
    }
}

/// Every unit of one sweep read from its files or run so far: at most one
/// per (row, seed) of the plan, so that their count never passes the
/// plan's and a sweep whose units cover the plan writes its results.
///
/// A unit read twice with the same figures is one unit (a journal line
/// appended twice, a units file beside the journal it came from): units
/// are deterministic, so the same row and seed always give the same line.
/// The same row and seed with other figures, or a seed the plan does not
/// have, is an error naming the file and line.
pub struct UnitSet<T = RunTotals> {
    /// A row's key in a line, and its index.
    rows: BTreeMap<String, usize>,
    /// Each row as messages name it.
    labels: Vec<String>,
    first_seed: u64,
    seeds: u32,
    /// Each unit by (row, seed), and where it was first read.
    units: BTreeMap<(usize, u64), (Unit<T>, Option<Origin>)>,
    files: Vec<PathBuf>,
}

/// A file (an index into [`UnitSet`]'s files) and a line in it; a unit run
/// by this process has none.
type Origin = (usize, usize);

impl UnitSet<RunTotals> {
    /// The units of a detector sweep's `plan`: one row per point.
    pub fn new(plan: &PlanFile) -> UnitSet<RunTotals> {
        let names: Vec<String> = plan.points.iter().map(|p| p.name.clone()).collect();
        UnitSet::with_rows(names.clone(), names, plan.first_seed, plan.seeds)
    }
}

impl<T: Figures> UnitSet<T> {
    /// The units of a plan of rows `keys` (as lines name them; `labels` as
    /// messages do) on `seeds` seeds from `first_seed` on.
    pub fn with_rows(keys: Vec<String>, labels: Vec<String>, first_seed: u64, seeds: u32) -> Self {
        UnitSet {
            rows: keys.into_iter().enumerate().map(|(i, k)| (k, i)).collect(),
            labels,
            first_seed,
            seeds,
            units: BTreeMap::new(),
            files: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    pub fn contains(&self, point: usize, seed: u64) -> bool {
        self.units.contains_key(&(point, seed))
    }

    /// Whether the units cover every row on every seed of the plan.
    pub fn covers_plan(&self) -> bool {
        self.units.len() == self.labels.len() * self.seeds as usize
    }

    /// Adds units run by this process (only missing ones are run).
    pub fn add(&mut self, units: impl IntoIterator<Item = Unit<T>>) {
        for u in units {
            self.units.entry((u.point, u.seed)).or_insert((u, None));
        }
    }

    /// The units in canonical order: by row, then seed.
    pub fn into_units(self) -> Vec<Unit<T>> {
        self.units.into_values().map(|(u, _)| u).collect()
    }

    /// Whether `seed` is one of the plan's (they may wrap past `u64::MAX`).
    fn in_plan(&self, seed: u64) -> bool {
        seed.wrapping_sub(self.first_seed) < u64::from(self.seeds)
    }

    /// Adds `unit`, read from line `line` of file `file`.
    fn insert_read(&mut self, unit: Unit<T>, file: usize, line: usize) -> Result<(), String> {
        let here = |what: String| format!("{}:{line}: {what}", self.files[file].display());
        if !self.in_plan(unit.seed) {
            let last = self
                .first_seed
                .wrapping_add(u64::from(self.seeds).saturating_sub(1));
            return Err(here(format!(
                "seed {} is not one of the plan's seeds ({} to {last}); the file belongs to another sweep",
                unit.seed, self.first_seed
            )));
        }
        match self.units.get(&(unit.point, unit.seed)) {
            None => {
                self.units
                    .insert((unit.point, unit.seed), (unit, Some((file, line))));
                Ok(())
            }
            Some((seen, _)) if *seen == unit => Ok(()),
            Some((_, at)) => {
                let at = match at {
                    Some((f, l)) if *f == file => format!("line {l}"),
                    Some((f, l)) => format!("{}:{l}", self.files[*f].display()),
                    None => "this run".to_string(),
                };
                Err(here(format!(
                    "point {} on seed {} has other figures than at {at}; the same unit always gives the same line, so one of them is damaged",
                    self.labels[unit.point], unit.seed
                )))
            }
        }
    }

    /// Reads a units file or journal into the set. A journal's torn last
    /// line is dropped (and, with `repair`, cut from the file, once every
    /// other line has been read without error); any other bad line is an
    /// error naming the file and line.
    pub fn read(&mut self, path: &Path, repair: bool) -> Result<(), String> {
        let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        self.files.push(path.to_path_buf());
        let file = self.files.len() - 1;
        let mut good_len = 0;
        let mut lines = text.split_inclusive('\n').enumerate().peekable();
        match lines.next() {
            Some((_, first)) if first.trim_end() == T::HEADER => good_len = first.len(),
            Some((_, first)) if T::outdated(first.trim_end()).is_some() => {
                return Err(format!(
                    "{}: {}; run the sweep again into a new --out",
                    path.display(),
                    T::outdated(first.trim_end()).unwrap_or_default()
                ))
            }
            Some((_, first)) if repair && !first.ends_with('\n') => {}
            _ => {
                return Err(format!(
                    "{}:1: not a units file (the header is not `{}`)",
                    path.display(),
                    T::HEADER
                ))
            }
        }
        while let Some((i, line)) = lines.next() {
            let last = lines.peek().is_none();
            let parsed = if line.ends_with('\n') {
                Unit::parse(line.trim_end(), &self.rows)
            } else {
                Err("the line is cut short".into())
            };
            match parsed {
                Ok(unit) => {
                    self.insert_read(unit, file, i + 1)?;
                    good_len += line.len();
                }
                Err(_) if last && repair => break,
                Err(e) => return Err(format!("{}:{}: {e}", path.display(), i + 1)),
            }
        }
        if repair && good_len < text.len() {
            cut(path, good_len, T::HEADER)?;
        }
        Ok(())
    }
}

/// Cuts a journal back to its first `len` bytes (its whole lines); a journal
/// torn inside its header gets the header back.
fn cut(path: &Path, len: usize, header: &str) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = OpenOptions::new().write(true).open(path).map_err(io)?;
    file.set_len(len as u64).map_err(io)?;
    if len == 0 {
        drop(file);
        fs::write(path, format!("{header}\n")).map_err(io)?;
    }
    Ok(())
}

/// The append-only journal of a running sweep.
pub struct Journal {
    file: fs::File,
}

impl Journal {
    /// Opens (creating with `header`) `dir/journal.csv` for appending.
    pub fn open(dir: &Path, header: &str) -> Result<Journal, String> {
        let path = dir.join(JOURNAL);
        let fresh = !path.exists();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if fresh {
            file.write_all(format!("{header}\n").as_bytes())
                .and_then(|()| file.sync_data())
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(Journal { file })
    }

    /// Appends the units of one finished seed (or cluster run) in one
    /// write, then syncs.
    pub fn append<T: Figures>(
        &mut self,
        units: &[Unit<T>],
        keys: &[String],
    ) -> std::io::Result<()> {
        let text: String = units.iter().map(|u| u.line(keys)).collect();
        self.file.write_all(text.as_bytes())?;
        self.file.sync_data()
    }
}

/// `units.csv` text: header, then units sorted by (row, seed).
pub fn canonical<T: Figures>(units: &mut [Unit<T>], keys: &[String]) -> String {
    units.sort_by_key(|u| (u.point, u.seed));
    let mut text = format!("{}\n", T::HEADER);
    for u in units.iter() {
        text.push_str(&u.line(keys));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_scenarios::sweep_plan::PointFile;

    fn names() -> Vec<String> {
        vec!["p0001".into(), "p0002".into()]
    }

    /// Two points on seeds 1 and 2.
    fn plan() -> PlanFile {
        PlanFile {
            scenario: "s".into(),
            scenario_sha256: String::new(),
            detector: "d".into(),
            vary: vec![],
            sample: 0,
            sample_seed: 1,
            first_seed: 1,
            seeds: 2,
            params: vec!["x".into()],
            points: names()
                .into_iter()
                .map(|name| PointFile {
                    name,
                    values: vec!["1".into()],
                })
                .collect(),
        }
    }

    fn unit(point: usize, seed: u64) -> Unit {
        Unit {
            point,
            seed,
            totals: RunTotals {
                pairs: 8,
                failed: vec![Some(Nanos(2_500_000_001)), None],
                suspect: vec![Some(Nanos(1)), Some(Nanos(2))],
                mistakes: 3,
                mistake_time: u128::from(u64::MAX) + 5,
                must_not_detect: 10,
                alive_must_not_detect: 9,
                messages: 100,
                bytes: 6400,
                pair_time: 7,
                false_failed: 1,
                false_failed_time: 4,
                recovery: vec![Some(Nanos(300)), None],
                healthy: 8,
                alive_healthy: 6,
            },
        }
    }

    fn lines(units: &[Unit]) -> String {
        let body: String = units.iter().map(|u| u.line(&names())).collect();
        format!("{HEADER}\n{body}")
    }

    #[test]
    fn lines_round_trip() {
        let u = unit(1, 42);
        let line = u.line(&names());
        let plan = plan();
        assert_eq!(
            Unit::parse(line.trim_end(), &UnitSet::new(&plan).rows).unwrap(),
            u
        );
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_cut_a_bad_middle_line_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL);
        let good = lines(&[unit(0, 1), unit(1, 1)]);
        fs::write(&path, format!("{good}p0001,2,8,1 2")).unwrap();
        let plan = plan();
        let mut set = UnitSet::new(&plan);
        set.read(&path, true).unwrap();
        assert_eq!(set.into_units(), vec![unit(0, 1), unit(1, 1)]);
        assert_eq!(fs::read_to_string(&path).unwrap(), good);
        fs::write(
            &path,
            format!("{HEADER}\nbogus\n{}", unit(0, 1).line(&names())),
        )
        .unwrap();
        let err = UnitSet::new(&plan).read(&path, true).unwrap_err();
        assert!(err.contains("journal.csv:2:"), "{err}");
    }

    #[test]
    fn units_from_before_the_mistake_split_are_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(UNITS);
        fs::write(
            &path,
            format!("{HEADER_BEFORE_SPLIT}\np0001,1,8,1,1,0,0,10,10,1,64,7\n"),
        )
        .unwrap();
        let plan = plan();
        let err = UnitSet::new(&plan).read(&path, false).unwrap_err();
        assert!(err.contains("written by an earlier fdlab"), "{err}");
        assert!(err.contains("units.csv"), "{err}");
    }

    #[test]
    fn a_unit_read_twice_is_one_unit_and_the_count_never_passes_the_plan() {
        let dir = tempfile::tempdir().unwrap();
        let (units, journal) = (dir.path().join(UNITS), dir.path().join(JOURNAL));
        let all = [unit(0, 1), unit(0, 2), unit(1, 1), unit(1, 2)];
        fs::write(&units, lines(&all[..3])).unwrap();
        // The journal repeats units of units.csv and of itself.
        fs::write(&journal, lines(&[1, 3, 3, 0].map(|i| all[i].clone()))).unwrap();
        let plan = plan();
        let mut set = UnitSet::new(&plan);
        set.read(&units, false).unwrap();
        set.read(&journal, true).unwrap();
        assert!(set.covers_plan());
        // Units run here are only added once too.
        set.add([unit(0, 1)]);
        assert_eq!(set.into_units(), all);
    }

    #[test]
    fn other_figures_for_a_unit_or_a_seed_outside_the_plan_are_errors_naming_both_lines() {
        let dir = tempfile::tempdir().unwrap();
        let (units, journal) = (dir.path().join(UNITS), dir.path().join(JOURNAL));
        let mut other = unit(1, 2);
        other.totals.mistakes += 1;
        fs::write(&journal, lines(&[unit(0, 1), unit(1, 2), other.clone()])).unwrap();
        let plan = plan();
        let err = UnitSet::new(&plan).read(&journal, true).unwrap_err();
        assert!(
            err.contains("journal.csv:4: point p0002 on seed 2 has other figures than at line 3"),
            "{err}"
        );
        // Across files: the journal against units.csv.
        fs::write(&units, lines(&[unit(1, 2)])).unwrap();
        fs::write(&journal, lines(&[other])).unwrap();
        let mut set = UnitSet::new(&plan);
        set.read(&units, false).unwrap();
        let err = set.read(&journal, true).unwrap_err();
        assert!(err.contains("journal.csv:2:"), "{err}");
        assert!(err.contains("units.csv:2"), "{err}");
        // A seed of another sweep.
        fs::write(&journal, lines(&[unit(0, 1), unit(0, 3)])).unwrap();
        let err = UnitSet::new(&plan).read(&journal, true).unwrap_err();
        assert!(
            err.contains("journal.csv:3: seed 3 is not one of the plan's seeds (1 to 2)"),
            "{err}"
        );
    }
}
