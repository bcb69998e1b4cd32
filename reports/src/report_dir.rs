//! What a report directory is, and when fdlab may replace one.
//!
//! `fdlab run`, `fdlab replay`, `fdlab live` and `fdlab swarm` each write one report into
//! their `--out` directory, whole ([`crate::swap_dir`]): the directory is
//! replaced, so a reader never sees one report's files beside another's.
//! Since `--out` may name any directory (`--out .`, a home directory, a
//! sweep's), a directory is replaced only when it is clearly a report:
//!
//! - it does not exist, or is empty: the report is created there;
//! - it holds the marker file `.fdlab-report` naming the same command, and
//!   besides it only files that command's reports consist of: it is
//!   replaced;
//! - it holds no marker, and only files that some fdlab report consists of
//!   (a report written before fdlab wrote markers): it is replaced;
//! - anything else is refused, before anything runs, with one error naming
//!   the first thing that is not part of such a report (a report of another
//!   command, a file of the user's, `charts` as a file...). Nothing is
//!   removed or written then.
//!
//! Temporary files a killed writer left (`.fdlab-<pid>-<random>.tmp`, see
//! [`crate::atomic`]) count as part of a report. The marker's content is
//! the same for every report of a command, so reports stay byte for byte
//! reproducible.

use std::fs;
use std::io;
use std::path::Path;

use crate::atomic::{temporary, write_file};
use crate::cluster::{COMPARISONS_CSV, DECLARATIONS_CSV, MEMBERSHIP_CSV};
use crate::lockrpc::LOCKRPC_CSV;
use crate::placement::PLACEMENT_CSV;
use crate::replay::{TIMELINE_HTML, TIMELINE_SVG, TRACE_CSV};
use crate::swap_dir::{replace_dir, resolve};
use crate::swarm::output::{is_minimal_file, SWARM_CSV, SWARM_RUNS_CSV, VIOLATIONS_CSV};
use crate::tables::{
    CLASSES_CSV, DETECTIONS_CSV, MISTAKES_CSV, RUNS_CSV, SUMMARY_CSV, SUMMARY_JSON,
};

/// The page, the Markdown report and the charts' directory of a report of
/// `fdlab run` ([`crate::report`] writes them).
pub const INDEX_HTML: &str = "index.html";
pub const REPORT_MD: &str = "report.md";
pub const CHARTS_DIR: &str = "charts";

/// The marker file of a report directory.
pub const MARKER: &str = ".fdlab-report";
/// `fdlab live`'s comparison of the live run with the simulator.
pub const CALIBRATION_CSV: &str = "calibration.csv";
/// `fdlab live` of a membership scenario: every row the real agents wrote.
pub const LIVE_EVENTS_CSV: &str = "events.csv";

/// The files of a run's report, besides its `charts` directory of SVG files.
/// The last three are written only when the run has membership scenarios
/// ([`crate::cluster`]); they are listed so that a report that has them is
/// still recognised as a report (and replaced whole by the next, which
/// leaves them out if it has none), and so that an input of that name is
/// never overwritten.
pub const RUN_REPORT_FILES: [&str; 13] = [
    SUMMARY_CSV,
    SUMMARY_JSON,
    RUNS_CSV,
    DETECTIONS_CSV,
    MISTAKES_CSV,
    CLASSES_CSV,
    REPORT_MD,
    INDEX_HTML,
    MEMBERSHIP_CSV,
    DECLARATIONS_CSV,
    COMPARISONS_CSV,
    PLACEMENT_CSV,
    LOCKRPC_CSV,
];
const REPLAY_FILES: [&str; 3] = [TRACE_CSV, TIMELINE_SVG, TIMELINE_HTML];
/// The files of a swarm's directory, besides its `minimal-<n>.toml`.
pub const SWARM_FILES: [&str; 3] = [SWARM_CSV, VIOLATIONS_CSV, SWARM_RUNS_CSV];

/// The command a report directory belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    Run,
    Replay,
    Live,
    /// `fdlab swarm`: its tables and minimal reproducers.
    Swarm,
}

impl ReportKind {
    const ALL: [ReportKind; 4] = [
        ReportKind::Run,
        ReportKind::Replay,
        ReportKind::Live,
        ReportKind::Swarm,
    ];

    pub fn command(self) -> &'static str {
        match self {
            ReportKind::Run => "run",
            ReportKind::Replay => "replay",
            ReportKind::Live => "live",
            ReportKind::Swarm => "swarm",
        }
    }

    /// Whether `name` is one of the files (or the `charts` directory) this
    /// command writes into its report directory.
    fn owns(self, name: &str) -> bool {
        let run = RUN_REPORT_FILES.contains(&name) || name == CHARTS_DIR;
        match self {
            ReportKind::Run => run,
            ReportKind::Replay => REPLAY_FILES.contains(&name),
            ReportKind::Live => run || name == CALIBRATION_CSV || name == LIVE_EVENTS_CSV,
            ReportKind::Swarm => SWARM_FILES.contains(&name) || is_minimal_file(name),
        }
    }

    /// The marker's content.
    fn marker(self) -> String {
        format!(
            "fdlab {}\n# This directory is a report of `fdlab {}`: fdlab replaces it whole when it writes the next one here.\n",
            self.command(),
            self.command()
        )
    }

    fn of_marker(text: &str) -> Option<ReportKind> {
        let first = text.lines().next()?.trim();
        let command = first.strip_prefix("fdlab ")?;
        ReportKind::ALL.into_iter().find(|k| k.command() == command)
    }
}

fn refused(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

fn not_a_report(what: &str) -> io::Error {
    refused(format!(
        "holds {what}, which is not part of an fdlab report; a report replaces its directory whole, \
         so --out must be a new or empty directory or an earlier report (move it, or choose another --out)"
    ))
}

/// Whether the existing directory `dir` may be replaced by a report of
/// `kind` (see the module docs).
fn may_replace(dir: &Path, kind: ReportKind) -> io::Result<()> {
    let marked = match fs::read_to_string(dir.join(MARKER)) {
        Ok(text) => Some(
            ReportKind::of_marker(&text)
                .ok_or_else(|| not_a_report(&format!("a `{MARKER}` that fdlab did not write")))?,
        ),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(other) = marked.filter(|&k| k != kind) {
        return Err(refused(format!(
            "holds the report of `fdlab {}`, which `fdlab {}` does not replace; choose another --out",
            other.command(),
            kind.command()
        )));
    }
    let known = |name: &str| match marked {
        Some(k) => k.owns(name),
        None => ReportKind::ALL.iter().any(|k| k.owns(name)),
    };
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_dir = entry.file_type()?.is_dir();
        if (name == MARKER && marked.is_some()) || (temporary(&name).is_some() && !is_dir) {
            continue;
        }
        if name == CHARTS_DIR && known(&name) {
            if !is_dir {
                return Err(refused(format!(
                    "holds `{CHARTS_DIR}`, a file where a report has its charts directory; \
                     move it, or choose another --out"
                )));
            }
            for chart in fs::read_dir(entry.path())? {
                let chart = chart?;
                let chart_name = chart.file_name();
                let chart_name = chart_name.to_string_lossy();
                let svg = chart_name.ends_with(".svg") || temporary(&chart_name).is_some();
                if !svg || chart.file_type()?.is_dir() {
                    return Err(not_a_report(&format!("`{CHARTS_DIR}/{chart_name}`")));
                }
            }
            continue;
        }
        if is_dir || !known(&name) {
            return Err(not_a_report(&format!("`{name}`")));
        }
    }
    Ok(())
}

/// Checks, before anything runs, that a report of `kind` may be written to
/// `dir`: an error says why not (without the path, which the caller adds).
pub fn check_out(dir: &Path, kind: ReportKind) -> io::Result<()> {
    let dest = resolve(dir)?;
    if dest.exists {
        may_replace(&dest.path, kind)?;
    }
    dest.probe_writable()
}

/// Writes a report of `kind` to `dir`, whole: `build` writes its files into
/// a fresh directory, the marker is added, and the directory replaces `dir`
/// (which must pass [`check_out`]).
pub fn publish(
    dir: &Path,
    kind: ReportKind,
    build: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let mut build = Some(build);
    replace_dir(dir, &|d: &Path| may_replace(d, kind), &mut |d: &Path| {
        let build = build
            .take()
            .ok_or_else(|| io::Error::other("the report was built twice"))?;
        build(d)?;
        // Last: in the fallback of writing in place, the marker says the
        // report is complete.
        write_file(&d.join(MARKER), kind.marker().as_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    fn run_report(dir: &Path) -> io::Result<()> {
        fs::write(dir.join(SUMMARY_CSV), "s")?;
        fs::create_dir(dir.join(CHARTS_DIR))?;
        fs::write(dir.join(CHARTS_DIR).join("x-cdf.svg"), "<svg/>")
    }

    #[test]
    fn a_swarm_directory_holds_its_tables_and_reproducers() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("swarm-out");
        publish(&out, ReportKind::Swarm, |d| {
            fs::write(d.join(SWARM_CSV), "s")?;
            fs::write(d.join("minimal-1.toml"), "m")?;
            fs::write(d.join("minimal-12.toml"), "m")
        })
        .unwrap();
        check_out(&out, ReportKind::Swarm).unwrap();
        let err = check_out(&out, ReportKind::Run).unwrap_err().to_string();
        assert!(err.contains("report of `fdlab swarm`"), "{err}");
        fs::write(out.join("minimal-x.toml"), "mine").unwrap();
        let err = check_out(&out, ReportKind::Swarm).unwrap_err().to_string();
        assert!(err.contains("`minimal-x.toml`"), "{err}");
    }

    #[test]
    fn a_report_replaces_a_report_of_its_command_only() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        publish(&out, ReportKind::Run, run_report).unwrap();
        assert_eq!(names(&out), [MARKER, "charts", SUMMARY_CSV]);
        check_out(&out, ReportKind::Run).unwrap();
        publish(&out, ReportKind::Run, |d| {
            fs::write(d.join(INDEX_HTML), "i")
        })
        .unwrap();
        assert_eq!(names(&out), [MARKER, INDEX_HTML]);
        let err = check_out(&out, ReportKind::Replay).unwrap_err().to_string();
        assert!(err.contains("report of `fdlab run`"), "{err}");
        let err = publish(&out, ReportKind::Replay, |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("`fdlab replay`"), "{err}");
        assert_eq!(names(&out), [MARKER, INDEX_HTML]);
    }

    #[test]
    fn anything_that_is_not_a_report_is_refused_and_kept() {
        let root = tempfile::tempdir().unwrap();
        // A user's file in a directory, marked or not.
        for marked in [false, true] {
            let out = root.path().join(format!("out-{marked}"));
            fs::create_dir(&out).unwrap();
            fs::write(out.join(SUMMARY_CSV), "old").unwrap();
            fs::write(out.join("notes.txt"), "mine").unwrap();
            if marked {
                fs::write(out.join(MARKER), ReportKind::Run.marker()).unwrap();
            }
            let err = check_out(&out, ReportKind::Run).unwrap_err().to_string();
            assert!(err.contains("`notes.txt`"), "{err}");
            assert!(publish(&out, ReportKind::Run, run_report).is_err());
            assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
            assert_eq!(fs::read_to_string(out.join(SUMMARY_CSV)).unwrap(), "old");
        }
        // `charts` as a file; a directory among the charts.
        let out = root.path().join("cf");
        fs::create_dir(&out).unwrap();
        fs::write(out.join(CHARTS_DIR), "x").unwrap();
        let err = check_out(&out, ReportKind::Run).unwrap_err().to_string();
        assert!(err.contains("`charts`, a file"), "{err}");
        fs::remove_file(out.join(CHARTS_DIR)).unwrap();
        fs::create_dir_all(out.join(CHARTS_DIR).join("sub")).unwrap();
        let err = check_out(&out, ReportKind::Run).unwrap_err().to_string();
        assert!(err.contains("`charts/sub`"), "{err}");
        // A marker fdlab did not write.
        let out = root.path().join("odd");
        fs::create_dir(&out).unwrap();
        fs::write(out.join(MARKER), "something\n").unwrap();
        let err = check_out(&out, ReportKind::Run).unwrap_err().to_string();
        assert!(err.contains(MARKER), "{err}");
    }

    #[test]
    fn an_unmarked_report_of_an_older_fdlab_and_an_empty_directory_are_replaced() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("old");
        fs::create_dir_all(out.join(CHARTS_DIR)).unwrap();
        // Older versions wrote runs and replays into the same directory.
        for f in [SUMMARY_CSV, INDEX_HTML, TRACE_CSV, ".fdlab-Ab12Cd.tmp"] {
            fs::write(out.join(f), "x").unwrap();
        }
        fs::write(out.join(CHARTS_DIR).join("a-cdf.svg"), "x").unwrap();
        publish(&out, ReportKind::Run, run_report).unwrap();
        assert_eq!(names(&out), [MARKER, "charts", SUMMARY_CSV]);
        let empty = root.path().join("empty");
        fs::create_dir(&empty).unwrap();
        publish(&empty, ReportKind::Replay, |d| {
            fs::write(d.join(TRACE_CSV), "t")
        })
        .unwrap();
        assert_eq!(names(&empty), [MARKER, TRACE_CSV]);
        assert_eq!(names(root.path()), ["empty", "old"]);
    }

    #[test]
    fn the_marker_names_its_command() {
        for k in ReportKind::ALL {
            assert_eq!(ReportKind::of_marker(&k.marker()), Some(k));
        }
        assert_eq!(ReportKind::of_marker("fdlab sweep\n"), None);
    }
}
