//! Units of a sweep on disk: one point on one seed, with the totals its
//! summary needs ([`RunTotals`]), one CSV line each.
//!
//! While a sweep runs, finished units are appended to `journal.csv`, a whole
//! line at a time and flushed, so an interrupt loses at most the seeds in
//! progress. `--resume` reads the journal back; a torn last line (a kill in
//! the middle of a write) is dropped and the file cut back to its last whole
//! line. When every unit of the shard is done, `units.csv` is written in
//! canonical order (point, then seed) and the journal removed: a sharded
//! sweep merged and an unsharded one then have the same bytes.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use fdlab_protocol::Nanos;
use fdlab_reports::metrics::RunTotals;

pub const JOURNAL: &str = "journal.csv";
pub const UNITS: &str = "units.csv";

/// Columns of `units.csv` and of the journal.
pub const HEADER: &str = "point,seed,pairs,failed_delays_ns,suspect_delays_ns,mistakes,mistake_ns,must_not_detect_ns,alive_must_not_detect_ns,messages,bytes,pair_ns";

/// One point on one seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Index into the plan's points.
    pub point: usize,
    pub seed: u64,
    pub totals: RunTotals,
}

/// Delays separated by spaces; a missed detection is `-`.
fn delays(list: &[Option<Nanos>]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|d| d.map_or("-".to_string(), |t| t.as_nanos().to_string()))
        .collect();
    items.join(" ")
}

fn parse_delays(text: &str) -> Result<Vec<Option<Nanos>>, String> {
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

impl Unit {
    /// The unit as one CSV line (with its newline); `names` are the points'.
    pub fn line(&self, names: &[String]) -> String {
        let t = &self.totals;
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n",
            names[self.point],
            self.seed,
            t.pairs,
            delays(&t.failed),
            delays(&t.suspect),
            t.mistakes,
            t.mistake_time,
            t.must_not_detect,
            t.alive_must_not_detect,
            t.messages,
            t.bytes,
            t.pair_time
        )
    }

    /// Parses a line written by [`Unit::line`].
    /// `points` maps a point's name to its index (see [`point_index`]).
    pub fn parse(line: &str, points: &BTreeMap<&str, usize>) -> Result<Unit, String> {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 12 {
            return Err(format!("{} fields, expected 12", f.len()));
        }
        let point = *points
            .get(f[0])
            .ok_or_else(|| format!("point `{}` is not in the plan", f[0]))?;
        let num = |i: usize| -> Result<u128, String> {
            f[i].parse()
                .map_err(|_| format!("field {} (`{}`) is not a number", i + 1, f[i]))
        };
        let small = |i: usize| -> Result<u64, String> {
            u64::try_from(num(i)?).map_err(|_| format!("field {} is too large", i + 1))
        };
        let failed = parse_delays(f[3])?;
        let suspect = parse_delays(f[4])?;
        if failed.len() != suspect.len() {
            return Err("failed and suspect delays differ in number".into());
        }
        Ok(Unit {
            point,
            seed: small(1)?,
            totals: RunTotals {
                pairs: small(2)?,
                failed,
                suspect,
                mistakes: small(5)?,
                mistake_time: num(6)?,
                must_not_detect: num(7)?,
                alive_must_not_detect: num(8)?,
                messages: small(9)?,
                bytes: small(10)?,
                pair_time: num(11)?,
            },
        })
    }
}

/// Each point's index by name, for [`Unit::parse`] (a sweep may have
/// 100,000 points and millions of units).
pub fn point_index(names: &[String]) -> BTreeMap<&str, usize> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect()
}

/// Reads a units file or journal. A journal's torn last line is dropped
/// (and, with `repair`, cut from the file); any other bad line is an error
/// naming the file and line.
pub fn read(path: &Path, names: &[String], repair: bool) -> Result<Vec<Unit>, String> {
    let points = point_index(names);
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut units = Vec::new();
    let mut good_len = 0;
    let mut lines = text.split_inclusive('\n').enumerate().peekable();
    match lines.next() {
        Some((_, first)) if first.trim_end() == HEADER => good_len = first.len(),
        Some((_, first)) if repair && !first.ends_with('\n') => {}
        _ => {
            return Err(format!(
                "{}:1: not a units file (the header is not `{HEADER}`)",
                path.display()
            ))
        }
    }
    while let Some((i, line)) = lines.next() {
        let last = lines.peek().is_none();
        let parsed = if line.ends_with('\n') {
            Unit::parse(line.trim_end(), &points)
        } else {
            Err("the line is cut short".into())
        };
        match parsed {
            Ok(unit) => {
                units.push(unit);
                good_len += line.len();
            }
            Err(_) if last && repair => break,
            Err(e) => return Err(format!("{}:{}: {e}", path.display(), i + 1)),
        }
    }
    if repair && good_len < text.len() {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        file.set_len(good_len as u64)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if good_len == 0 {
            drop(file);
            fs::write(path, format!("{HEADER}\n"))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(units)
}

/// The append-only journal of a running sweep.
pub struct Journal {
    file: fs::File,
}

impl Journal {
    /// Opens (creating with its header) `dir/journal.csv` for appending.
    pub fn open(dir: &Path) -> Result<Journal, String> {
        let path = dir.join(JOURNAL);
        let fresh = !path.exists();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if fresh {
            file.write_all(format!("{HEADER}\n").as_bytes())
                .and_then(|()| file.sync_data())
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(Journal { file })
    }

    /// Appends the units of one finished seed in one write, then syncs.
    pub fn append(&mut self, units: &[Unit], names: &[String]) -> std::io::Result<()> {
        let text: String = units.iter().map(|u| u.line(names)).collect();
        self.file.write_all(text.as_bytes())?;
        self.file.sync_data()
    }
}

/// `units.csv` text: header, then units sorted by (point, seed).
pub fn canonical(units: &mut [Unit], names: &[String]) -> String {
    units.sort_by_key(|u| (u.point, u.seed));
    let mut text = format!("{HEADER}\n");
    for u in units.iter() {
        text.push_str(&u.line(names));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["p0001".into(), "p0002".into()]
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
            },
        }
    }

    #[test]
    fn lines_round_trip() {
        let u = unit(1, 42);
        let line = u.line(&names());
        let names = names();
        assert_eq!(
            Unit::parse(line.trim_end(), &point_index(&names)).unwrap(),
            u
        );
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_cut_a_bad_middle_line_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL);
        let good = format!(
            "{HEADER}\n{}{}",
            unit(0, 1).line(&names()),
            unit(1, 1).line(&names())
        );
        fs::write(&path, format!("{good}p0001,2,8,1 2")).unwrap();
        let units = read(&path, &names(), true).unwrap();
        assert_eq!(units, vec![unit(0, 1), unit(1, 1)]);
        assert_eq!(fs::read_to_string(&path).unwrap(), good);
        fs::write(
            &path,
            format!("{HEADER}\nbogus\n{}", unit(0, 1).line(&names())),
        )
        .unwrap();
        let err = read(&path, &names(), true).unwrap_err();
        assert!(err.contains("journal.csv:2:"), "{err}");
    }
}
