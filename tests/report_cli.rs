//! End to end: the report files of `fdlab run` (CSV, SVG charts, Markdown,
//! HTML) and the timeline of `fdlab replay --pair`.

use std::fs;
use std::path::Path;
use std::process::Output;

use fdlab_reports::tables::{
    classes_header, DETECTIONS_HEADER, MISTAKES_HEADER, RUNS_HEADER, SUMMARY_HEADER,
};

mod common;
use common::{fdlab, text};

/// Two small built-ins: one with a crash to detect, one with only a pause
/// to tolerate (the charts then show mistakes instead of detection times).
const SCENARIOS: [&str; 2] = ["crash-mesh", "gc-pause-monitor"];
const DETECTORS: usize = 4;
const SEEDS: usize = 2;

/// Reads a CSV file: its header and rows, every row as long as the header.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<Vec<String>> = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    for row in &rows {
        assert_eq!(row.len(), header.len(), "{path:?}");
    }
    (header, rows)
}

fn run_into(out: &Path, jobs: &str) {
    let mut args = vec!["run"];
    args.extend(SCENARIOS);
    let seeds = SEEDS.to_string();
    args.extend([
        "--mistakes",
        "--seeds",
        &seeds,
        "--jobs",
        jobs,
        "--out",
        out.to_str().unwrap(),
    ]);
    let o = fdlab(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(stdout.contains("report written in"), "{stdout}");
}

#[test]
fn run_writes_every_report_file_with_its_documented_columns() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    run_into(&out, "1");

    let (header, rows) = read_csv(&out.join("summary.csv"));
    assert_eq!(header, SUMMARY_HEADER);
    assert_eq!(rows.len(), SCENARIOS.len() * DETECTORS);
    let (header, rows) = read_csv(&out.join("runs.csv"));
    assert_eq!(header, RUNS_HEADER);
    assert_eq!(rows.len(), SCENARIOS.len() * DETECTORS * SEEDS);
    let (header, rows) = read_csv(&out.join("detections.csv"));
    assert_eq!(header, DETECTIONS_HEADER);
    // crash-mesh: the crashed node's monitors, every detector, every seed.
    assert!(!rows.is_empty());
    assert!(rows
        .iter()
        .all(|r| r[0] == "crash-mesh" && (r[1] == "1" || r[1] == "2")));
    let (header, rows) = read_csv(&out.join("classes.csv"));
    assert_eq!(header, classes_header());
    // Mesh scenarios: one class, the blend.
    assert_eq!(rows.len(), SCENARIOS.len() * DETECTORS);
    assert!(rows.iter().all(|r| r[2] == "mesh"));
    let (header, rows) = read_csv(&out.join("mistakes.csv"));
    assert_eq!(header, MISTAKES_HEADER);
    // gc-pause-monitor: the paused monitor wrongly suspects its peers.
    assert!(rows.iter().any(|r| r[0] == "gc-pause-monitor"));

    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    // Every chart is drawn but crash-mesh's trade-off: no false Failed in
    // any run, every point at 0, a line instead of an empty-looking chart.
    let drawn = [
        ("cdf", "crash-mesh"),
        ("cdf", "gc-pause-monitor"),
        ("tradeoff", "gc-pause-monitor"),
    ];
    for (kind, scenario) in drawn {
        let tag = format!("<svg data-chart=\"{kind}\"");
        let tagged = format!("{tag} data-scenario=\"{scenario}\"");
        assert_eq!(html.matches(&tagged).count(), 1, "{kind} of {scenario}");
        let file = out.join("charts").join(format!("{scenario}-{kind}.svg"));
        let svg = fs::read_to_string(&file).unwrap();
        assert!(svg.starts_with(&tagged), "{file:?}");
        assert!(svg.trim_end().ends_with("</svg>"), "{file:?}");
    }
    assert!(!out.join("charts/crash-mesh-tradeoff.svg").exists());
    assert!(html.contains(fdlab_reports::charts::tradeoff::ALL_ZERO));
    assert_eq!(html.matches("<svg").count(), drawn.len());
    assert_eq!(html.matches("</svg>").count(), drawn.len());
    // Self-contained: no script, no link, no address of any kind.
    for banned in ["<script", "<link", "http:", "https:", "src="] {
        assert!(!html.contains(banned), "index.html holds {banned}");
    }
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    for scenario in SCENARIOS {
        assert!(md.contains(&format!("## {scenario}\n")), "{scenario}");
        assert!(md.contains(&format!("(charts/{scenario}-cdf.svg)")));
        let tradeoff = format!("(charts/{scenario}-tradeoff.svg)");
        assert_eq!(
            md.contains(&tradeoff),
            scenario != "crash-mesh",
            "{scenario}"
        );
    }
    // Nothing else (but the marker that says it is a report), and no
    // temporary file left.
    let mut names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".fdlab-report",
            "charts",
            "classes.csv",
            "detections.csv",
            "index.html",
            "mistakes.csv",
            "report.md",
            "runs.csv",
            "summary.csv",
            "summary.json"
        ]
    );
    assert_eq!(fs::read_dir(out.join("charts")).unwrap().count(), 3);

    // The same bytes with another number of threads.
    let again = dir.path().join("again");
    run_into(&again, "2");
    for file in ["index.html", "report.md", "charts/crash-mesh-cdf.svg"] {
        assert_eq!(
            fs::read(out.join(file)).unwrap(),
            fs::read(again.join(file)).unwrap(),
            "{file} differs between --jobs 1 and 2"
        );
    }
}

fn replay(out: &Path, pair: Option<&str>) -> Output {
    let mut args = vec![
        "replay",
        "crash-mesh",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ];
    if let Some(pair) = pair {
        args.extend(["--pair", pair]);
    }
    fdlab(&args)
}

fn line_after<'a>(stdout: &'a str, prefix: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` in {stdout}"))
}

#[test]
fn replay_draws_the_first_affected_pair_or_the_one_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let default = dir.path().join("default");
    let o = replay(&default, None);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    // crash-mesh crashes n2: the default pair watches it.
    let drawn = line_after(&stdout, "timeline of ");
    let (monitor, rest) = drawn.split_once(" -> ").unwrap();
    let target = rest.split(':').next().unwrap();
    assert_eq!(target, "n2", "{stdout}");
    let svg = fs::read_to_string(default.join("timeline.svg")).unwrap();
    assert!(svg.starts_with("<svg data-chart=\"timeline\" data-scenario=\"crash-mesh\""));
    assert!(svg.contains(&format!("crash-mesh seed 3: {monitor} watching n2")));
    for detector in ["fixed-3s", "phi-akka", "phi-100ms", "probe-orleans"] {
        assert!(
            svg.contains(&format!(">\n{detector}\n</text>")),
            "{detector}"
        );
    }
    let html = fs::read_to_string(default.join("timeline.html")).unwrap();
    assert_eq!(html.matches("<svg data-chart=\"timeline\"").count(), 1);
    assert!(!html.contains("http") && !html.contains("<script"));

    // The same pair asked for by name: the same picture. Another pair: another
    // picture, but the same trace (the pair only chooses what is drawn).
    let same = dir.path().join("same");
    let o = replay(&same, Some(&format!("{monitor},n2")));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(fs::read(same.join("timeline.svg")).unwrap(), svg.as_bytes());
    let digest = |o: &Output| {
        line_after(&text(&o.stdout), "trace digest (SHA-256 of trace.csv): ").to_string()
    };
    let other_pair = {
        let pairs = fs::read_to_string(default.join("trace.csv")).unwrap();
        // Any pair that is not the default one: a monitor that received a heartbeat.
        pairs
            .lines()
            .filter(|l| l.contains(",deliver,") && l.ends_with(",heartbeat"))
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                format!("{},{}", f[2], f[3])
            })
            .find(|p| p != &format!("{monitor},n2"))
            .unwrap()
    };
    let other = dir.path().join("other");
    let o2 = replay(&other, Some(&other_pair));
    assert!(o2.status.success(), "{other_pair}: {}", text(&o2.stderr));
    assert_ne!(
        fs::read(other.join("timeline.svg")).unwrap(),
        svg.as_bytes()
    );
    assert_eq!(digest(&o), digest(&o2));
}

#[test]
fn a_bad_pair_is_one_clear_error_and_no_output() {
    for (pair, needle) in [
        ("n0", "expected MONITOR,TARGET"),
        ("n0,n1,n2", "expected MONITOR,TARGET"),
        (",n1", "expected MONITOR,TARGET"),
        ("n0,n9", "unknown node `n9`"),
        ("x,n1", "unknown node `x`"),
        ("n0,n0", "does not monitor `n0`"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = replay(&out, Some(pair));
        let err = text(&o.stderr);
        assert!(!o.status.success(), "{pair} accepted");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(
            err.contains("--pair") && err.contains(needle),
            "{pair}: {err}"
        );
        assert!(!out.exists(), "{pair}: output written");
    }
}
