//! Every file `fdlab run` writes into its output directory, each atomically:
//!
//! - the CSV tables ([`crate::tables`]): `summary.csv`, `runs.csv`,
//!   `detections.csv`, `mistakes.csv`, `classes.csv`;
//! - per scenario, two charts under `charts/`: `<scenario>-cdf.svg`
//!   ([`crate::charts::cdf`]) and `<scenario>-tradeoff.svg`
//!   ([`crate::charts::tradeoff`]); a chart with nothing to plot is no file,
//!   and the reports print one line in its place;
//! - `report.md` ([`crate::markdown`]) and `index.html` ([`crate::html`],
//!   self-contained: the same charts inline);
//! - when the run has membership scenarios ([`crate::cluster`]):
//!   `membership.csv`, `declarations.csv` and `comparisons.csv`, and per
//!   membership scenario `charts/<scenario>-cluster.svg`, with a "cluster
//!   membership" section in `report.md` and `index.html`. A run without
//!   membership scenarios writes none of these (the directory is replaced
//!   whole, so no older report's copy lingers).
//!
//! Detector colours are assigned once for the whole report (scenarios in the
//! order given, detectors in each scenario's order, then the judges of the
//! membership scenarios), so a detector keeps its colour in every chart,
//! and a detector used as a judge has its colour as a detector. The same
//! metrics give the same bytes in every file.
//!
//! Everything that can fail short of the disk (chart rendering, file names
//! from scenario names) is done before the first file is written, and the
//! report is built in a fresh directory that then replaces the output
//! directory whole ([`crate::report_dir`]): a reader sees the previous report
//! or this one, never a mixture.

use std::io;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::atomic::{ensure_dir, write_file};
use crate::charts::cdf::cdf_svg;
use crate::charts::tradeoff::tradeoff_svg;
use crate::charts::Palette;
use crate::cluster::chart::cluster_chart_svg;
use crate::cluster::section::ClusterSection;
use crate::cluster::{write_membership_tables, ClusterMetrics, MembershipReport};
use crate::lockrpc::chart::lockrpc_chart_svg;
use crate::lockrpc::section::LockrpcSection;
use crate::lockrpc::{write_lockrpc_table, LockrpcMetrics};
use crate::metrics::ScenarioMetrics;
use crate::placement::chart::placement_chart_svg;
use crate::placement::section::PlacementSection;
use crate::placement::{write_placement_table, PlacementMetrics, PlacementReport};
use crate::report_dir::{publish, ReportKind};
use crate::summary::html::render as summary_html;
use crate::summary::markdown::render as summary_markdown;
use crate::summary::Summary;
use crate::tables::write_tables_with;
use crate::{html, markdown};

pub use crate::report_dir::{CHARTS_DIR, INDEX_HTML, REPORT_MD};

pub use crate::scenario_report::ScenarioReport;

/// Longest stem of a chart's file name: the usual limit of 255 bytes for a
/// file name, less the longest suffix, `-tradeoff.svg`.
pub const MAX_STEM: usize = 255 - "-tradeoff.svg".len();

/// A scenario name made safe for a file name and an HTML id: letters, digits,
/// `-`, `_` and `.` kept, anything else `_`; unique among `taken` (a numeric
/// suffix is added on a clash, e.g. the same scenario file given twice). A
/// name too long for a file name is cut to [`MAX_STEM`] bytes, its last 9
/// a `-` and a hash of the whole name, so that names that differ only past
/// the cut still get different files; shorter names are kept as they are.
pub fn file_stem(name: &str, taken: &[String]) -> String {
    let mut base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if base.is_empty() || base.starts_with('.') {
        base.insert(0, 's');
    }
    // `base` is ASCII: byte positions are character boundaries.
    if base.len() > MAX_STEM {
        let hash = Sha256::digest(name.as_bytes());
        let hex: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
        base.truncate(MAX_STEM - 1 - hex.len());
        base.push('-');
        base.push_str(&hex);
    }
    let mut stem = base.clone();
    let mut k = 2;
    while taken.contains(&stem) {
        let suffix = format!("-{k}");
        let keep = base.len().min(MAX_STEM - suffix.len());
        stem = format!("{}{suffix}", &base[..keep]);
        k += 1;
    }
    stem
}

/// The palette of a report: detectors by first appearance.
pub fn palette_of(metrics: &[ScenarioMetrics]) -> Palette {
    Palette::new(
        metrics
            .iter()
            .flat_map(|m| m.summary.iter().map(|s| s.detector.as_str())),
    )
}

/// What a report says of a scenario besides its figures: its description
/// and every detector's settings (the legend under its table).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct About {
    pub description: String,
    /// How a command line names the scenario: its file as the user gave it,
    /// or a built-in's name (what "Next:" lines put in their commands).
    pub invoked_as: String,
    /// `(detector name, "kind = ..., key = value, ...")`, in scenario order.
    pub settings: Vec<(String, String)>,
}

impl About {
    /// The description and detector settings of `scenario`.
    pub fn of(scenario: &fdlab_sim::valid::ValidScenario) -> About {
        let settings = scenario
            .detectors
            .iter()
            .map(|d| {
                let text = toml::to_string(&d.config).unwrap_or_default();
                let keys: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                (d.name.clone(), keys.join(", "))
            })
            .collect();
        About {
            description: scenario.description.clone(),
            invoked_as: scenario
                .origin()
                .map_or_else(|| scenario.name.clone(), |o| o.file.clone()),
            settings,
        }
    }

    /// This, named on a command line as `arg` (a built-in's name, or a
    /// file's path as given).
    pub fn invoked(mut self, arg: &str) -> About {
        arg.clone_into(&mut self.invoked_as);
        self
    }
}

/// Writes the report of `metrics` (a run's) to `dir`, whole: the directory
/// is created, or replaced if it holds an earlier report of `fdlab run`
/// ([`crate::report_dir`]). `about` says what each scenario is, in the same
/// order (a missing one is empty). `membership` are the run's membership
/// scenarios (none: a report of detector scenarios alone, as before; a
/// report may also hold membership scenarios alone).
pub fn write_report(
    dir: &Path,
    metrics: &[ScenarioMetrics],
    about: &[About],
    membership: &[MembershipReport],
) -> io::Result<()> {
    write_report_with(dir, metrics, about, membership, &[], &[], true)
}

/// [`write_report`] with the placement and lock-RPC scenarios' sections
/// too; `mistakes`: also `mistakes.csv`, one row per mistake (tens of MB for
/// the built-in suite, so `fdlab run` writes it only when asked).
pub fn write_report_with(
    dir: &Path,
    metrics: &[ScenarioMetrics],
    about: &[About],
    membership: &[MembershipReport],
    placement: &[PlacementReport],
    lockrpc: &[LockrpcMetrics],
    mistakes: bool,
) -> io::Result<()> {
    publish(dir, ReportKind::Run, |d| {
        write_all_files(d, metrics, about, membership, placement, lockrpc, mistakes)
    })
}

/// Writes every file of the report of `metrics` and `membership` into
/// `dir` (created if missing), beside whatever it holds: for a report
/// built in a fresh directory (see [`write_report`]).
pub fn write_report_files(
    dir: &Path,
    metrics: &[ScenarioMetrics],
    about: &[About],
    membership: &[MembershipReport],
) -> io::Result<()> {
    write_all_files(dir, metrics, about, membership, &[], &[], true)
}

fn write_all_files(
    dir: &Path,
    metrics: &[ScenarioMetrics],
    about: &[About],
    membership: &[MembershipReport],
    placement: &[PlacementReport],
    lockrpc: &[LockrpcMetrics],
    mistakes: bool,
) -> io::Result<()> {
    const NONE: &[(String, String)] = &[];
    let mut palette = palette_of(metrics);
    for r in membership {
        for s in &r.metrics.summary {
            palette.add(&s.judge);
            palette.alias(&s.label, &s.judge);
        }
    }
    let mut stems: Vec<String> = Vec::new();
    let mut reports = Vec::with_capacity(metrics.len());
    for (i, m) in metrics.iter().enumerate() {
        let stem = file_stem(&m.scenario, &stems);
        stems.push(stem.clone());
        reports.push(ScenarioReport {
            metrics: m,
            description: about.get(i).map_or("", |a| a.description.as_str()),
            invoked_as: about
                .get(i)
                .map_or(m.scenario.as_str(), |a| a.invoked_as.as_str()),
            settings: about.get(i).map_or(NONE, |a| a.settings.as_slice()),
            cdf: cdf_svg(m, &palette)?,
            tradeoff: tradeoff_svg(m, &palette)?,
            cdf_file: format!("{CHARTS_DIR}/{stem}-cdf.svg"),
            tradeoff_file: format!("{CHARTS_DIR}/{stem}-tradeoff.svg"),
            anchor: stem,
        });
    }
    let mut clusters = Vec::with_capacity(membership.len());
    for r in membership {
        let stem = file_stem(&r.metrics.scenario, &stems);
        stems.push(stem.clone());
        clusters.push(ClusterSection {
            report: r,
            chart: cluster_chart_svg(&r.metrics, &palette)?,
            chart_file: format!("{CHARTS_DIR}/{stem}-cluster.svg"),
            anchor: stem,
        });
    }
    // Distributions have colours of their own, never a detector's.
    let distributions = Palette::for_distributions(
        placement
            .iter()
            .flat_map(|r| r.metrics.summary.iter().map(|s| s.distribution.as_str())),
    );
    let mut placed = Vec::with_capacity(placement.len());
    for r in placement {
        let stem = file_stem(&format!("{}-placement", r.metrics.scenario), &stems);
        stems.push(stem.clone());
        placed.push(PlacementSection {
            report: r,
            chart: placement_chart_svg(&r.metrics, &distributions)?,
            chart_file: format!("{CHARTS_DIR}/{stem}.svg"),
            anchor: stem,
        });
    }
    for m in lockrpc {
        for s in &m.summary {
            palette.add(&s.policy);
        }
    }
    let mut locks = Vec::with_capacity(lockrpc.len());
    for m in lockrpc {
        let stem = file_stem(&format!("{}-lockrpc", m.scenario), &stems);
        stems.push(stem.clone());
        locks.push(LockrpcSection {
            metrics: m,
            chart: lockrpc_chart_svg(m, &palette),
            chart_file: format!("{CHARTS_DIR}/{stem}.svg"),
            anchor: stem,
        });
    }
    ensure_dir(dir)?;
    write_tables_with(dir, metrics, mistakes)?;
    if !lockrpc.is_empty() {
        write_lockrpc_table(dir, lockrpc)?;
    }
    if !placement.is_empty() {
        let m: Vec<PlacementMetrics> = placement.iter().map(|r| r.metrics.clone()).collect();
        write_placement_table(dir, &m)?;
    }
    if !membership.is_empty() {
        let cluster_metrics: Vec<ClusterMetrics> =
            membership.iter().map(|r| r.metrics.clone()).collect();
        write_membership_tables(dir, &cluster_metrics)?;
    }
    let drawn_clusters: Vec<(&str, &str)> = clusters
        .iter()
        .filter_map(|c| Some((c.chart.svg()?, c.chart_file.as_str())))
        .chain(
            placed
                .iter()
                .filter_map(|c| Some((c.chart.svg()?, c.chart_file.as_str()))),
        )
        .chain(
            locks
                .iter()
                .filter_map(|c| Some((c.chart.svg()?, c.chart_file.as_str()))),
        )
        .collect();
    if reports.iter().any(|r| !r.drawn().is_empty()) || !drawn_clusters.is_empty() {
        ensure_dir(&dir.join(CHARTS_DIR))?;
    }
    for r in &reports {
        for (svg, file) in r.drawn() {
            write_file(&dir.join(file), svg.as_bytes())?;
        }
    }
    for (svg, file) in drawn_clusters {
        write_file(&dir.join(file), svg.as_bytes())?;
    }
    // The decision summary leads both documents, from the same values the
    // console prints.
    let summary = Summary::of_run(metrics, membership, placement, lockrpc);
    let lead_md = if summary.parts.is_empty() {
        String::new()
    } else {
        summary_markdown(&summary)
    };
    let md = markdown::render_with_lead(&lead_md, &reports, &clusters, &placed, &locks);
    write_file(&dir.join(REPORT_MD), md.as_bytes())?;
    let summary_html = summary_html(&summary, &palette);
    let lead: Vec<html::LeadSection<'_>> = if summary.parts.is_empty() {
        Vec::new()
    } else {
        vec![html::LeadSection {
            id: "summary",
            title: "Decision summary",
            html: &summary_html,
        }]
    };
    write_file(
        &dir.join(INDEX_HTML),
        html::render_with_lead(&lead, &reports, &clusters, &placed, &locks, &palette).as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::scenario_metrics;
    use crate::metrics::tests::two_seeds;

    #[test]
    fn stems_are_safe_and_unique() {
        assert_eq!(file_stem("crash-mesh", &[]), "crash-mesh");
        assert_eq!(file_stem("a b/c<d>", &[]), "a_b_c_d_");
        assert_eq!(file_stem("", &[]), "s");
        assert_eq!(file_stem(".hidden", &[]), "s.hidden");
        let taken = vec!["x".to_string(), "x-2".to_string()];
        assert_eq!(file_stem("x", &taken), "x-3");
    }

    #[test]
    fn long_names_give_bounded_distinct_stems() {
        let a = "a".repeat(300);
        let b = format!("{}b", "a".repeat(299));
        let sa = file_stem(&a, &[]);
        let sb = file_stem(&b, &[]);
        assert_eq!(sa.len(), MAX_STEM);
        assert_eq!(sb.len(), MAX_STEM);
        assert_ne!(sa, sb);
        let again = file_stem(&a, std::slice::from_ref(&sa));
        assert_eq!(again.len(), MAX_STEM);
        assert!(again.ends_with("-2"), "{again}");
        // Every name that fits is kept as it is.
        let fits = "c".repeat(MAX_STEM);
        assert_eq!(file_stem(&fits, &[]), fits);
        assert!(format!("{sa}-tradeoff.svg").len() <= 255);
    }

    #[test]
    fn report_files_are_complete_and_deterministic() {
        let m = scenario_metrics(&two_seeds());
        let mut other = m.clone();
        other.scenario = "crash".into(); // the same name twice: a second stem
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let metrics = [m, other];
        let about = vec![About {
            description: "a <crash> & more".to_string(),
            invoked_as: "scenarios/a crash.toml".into(),
            settings: vec![("fixed".into(), "kind = \"fixed-timeout\"".into())],
        }];
        write_report(&a, &metrics, &about, &[]).unwrap();
        write_report(&b, &metrics, &about, &[]).unwrap();
        let mut names = Vec::new();
        for entry in walk(&a) {
            let rel = entry.strip_prefix(&a).unwrap().to_path_buf();
            assert_eq!(
                std::fs::read(&entry).unwrap(),
                std::fs::read(b.join(&rel)).unwrap(),
                "{rel:?} differs between two writes"
            );
            names.push(rel.display().to_string());
        }
        names.sort();
        assert_eq!(
            names,
            [
                ".fdlab-report",
                "charts/crash-2-cdf.svg",
                "charts/crash-cdf.svg",
                "classes.csv",
                "detections.csv",
                "index.html",
                "mistakes.csv",
                "report.md",
                "runs.csv",
                "summary.csv",
                "summary.json",
            ]
        );
        let html = std::fs::read_to_string(a.join(INDEX_HTML)).unwrap();
        assert_eq!(html.matches("<svg data-chart=\"cdf\"").count(), 2);
        // No false Failed in either: no trade-off chart, a line instead.
        assert_eq!(html.matches("<svg data-chart=\"tradeoff\"").count(), 0);
        let line = format!(
            "<p class=\"no-chart\">{}</p>",
            crate::charts::tradeoff::ALL_ZERO
        );
        assert_eq!(html.matches(&line).count(), 2, "{html}");
        assert!(html.contains("a &lt;crash&gt; &amp; more"));
        assert!(!html.contains("http") && !html.contains("<script"));
        // The same detector has the same colour in both scenarios' charts.
        let cdf = std::fs::read_to_string(a.join("charts/crash-cdf.svg")).unwrap();
        assert!(cdf.contains("#0072B2") || cdf.contains("#0072b2"), "{cdf}");
        let md = std::fs::read_to_string(a.join(REPORT_MD)).unwrap();
        assert!(md.contains("](charts/crash-cdf.svg)"));
        assert!(md.contains("| fixed | 2.000 s |"));
    }

    /// [`two_seeds`] with every verdict change removed; with `detect`
    /// false, nothing to detect either.
    fn silent(detect: bool) -> ScenarioMetrics {
        let mut result = two_seeds();
        for run in &mut result.runs {
            for pair in &mut run.pairs {
                if !detect {
                    pair.must_detect.clear();
                }
                for d in &mut pair.detectors {
                    d.changes.clear();
                }
            }
        }
        scenario_metrics(&result)
    }

    #[test]
    fn a_chart_with_nothing_to_plot_is_one_line_of_text() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r");
        let mut missed = silent(true);
        missed.scenario = "missed".into();
        let mut quiet = silent(false);
        quiet.scenario = "quiet".into();
        write_report(&out, &[missed, quiet], &[], &[]).unwrap();
        let html = std::fs::read_to_string(out.join(INDEX_HTML)).unwrap();
        let md = std::fs::read_to_string(out.join(REPORT_MD)).unwrap();
        assert!(!html.contains("<svg"), "an empty chart in index.html");
        assert!(
            !md.contains(".svg"),
            "a link to an empty chart in report.md"
        );
        assert!(!out.join(CHARTS_DIR).exists(), "empty charts written");
        // Nothing detected: one line per chart, saying so.
        for line in [
            "No detector detected any of the 2 must-detect faults: no detection times to chart.",
            "No detector detected a fault: no p99 detection time to chart.",
        ] {
            assert_eq!(
                html.matches(&format!("<p class=\"no-chart\">{line}</p>"))
                    .count(),
                1,
                "{line}"
            );
            assert_eq!(md.matches(&format!("\n{line}\n")).count(), 1, "{line}");
        }
        // Nothing to detect and no mistake: one line for both charts.
        let line = "No fault to detect and no mistake in any run: nothing to chart.";
        assert_eq!(
            html.matches(&format!("<p class=\"no-chart\">{line}</p>"))
                .count(),
            1
        );
        assert_eq!(md.matches(&format!("\n{line}\n")).count(), 1);
    }

    fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
    }
}
