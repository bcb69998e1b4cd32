//! End to end: a report's directory holds one report, whole. A new report
//! replaces an older one of the same command (never a mixture of the two);
//! anything that is not such a report is refused before anything runs, and
//! left as it was.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{fdlab, text};

fn run(scenarios: &[&str], out: &Path) -> Output {
    let mut args = vec!["run"];
    args.extend_from_slice(scenarios);
    args.extend(["--seeds", "1", "--out", out.to_str().unwrap()]);
    fdlab(&args)
}

/// Every file under `dir` (relative paths, sorted) with its bytes.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn file_names(dir: &Path) -> Vec<String> {
    contents(dir).into_iter().map(|(name, _)| name).collect()
}

/// `dir` holds `want` (a [`contents`]): the same files, the same bytes.
fn assert_holds(dir: &Path, want: &[(String, Vec<u8>)], what: &str) {
    let got = contents(dir);
    let names = |c: &[(String, Vec<u8>)]| c.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&got), names(want), "{what}: other files");
    for ((name, a), (_, b)) in got.iter().zip(want) {
        assert!(a == b, "{what}: {name} changed");
    }
}

/// The files of a report of `fdlab run` of `scenarios`.
fn report_files(scenarios: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = [
        ".fdlab-report",
        "classes.csv",
        "detections.csv",
        "index.html",
        "report.md",
        "runs.csv",
        "summary.csv",
        "summary.json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in scenarios {
        names.push(format!("charts/{s}-cdf.svg"));
        names.push(format!("charts/{s}-tradeoff.svg"));
    }
    names.sort();
    names
}

fn assert_one_line_error(o: &Output, needle: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("fdlab: error: "), "{err}");
    assert!(err.contains(needle), "{needle}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_report_replaces_an_older_report_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("M");
    let o = run(&["crash-mesh"], &out);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(&["gc-pause-monitor"], &out);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Nothing of crash-mesh's report is left beside it.
    let names = file_names(&out);
    assert!(!names.iter().any(|n| n.contains("crash-mesh")), "{names:?}");
    assert_eq!(names, report_files(&["gc-pause-monitor"]));
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(!summary.contains("crash-mesh"), "{summary}");
    // The same bytes as the report written into a fresh directory.
    let fresh = dir.path().join("fresh");
    assert!(run(&["gc-pause-monitor"], &fresh).status.success());
    assert_holds(&out, &contents(&fresh), "replaced vs fresh");
    // No temporary directory is left beside it.
    let mut left: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["M", "fresh"]);
}

/// A small scenario named `name`.
fn named_scenario(dir: &Path, file: &str, name: &str) -> String {
    let text = format!(
        r#"
name = "{name}"
duration = "60s"
seeds = 1

[topology]
kind = "mesh"
nodes = 3

[[detectors]]
name = "fixed"
kind = "fixed-timeout"

[[faults]]
kind = "crash"
node = "n1"
at = "30s"
"#
    );
    let path = dir.join(file);
    fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_300_character_scenario_name_gives_bounded_chart_names_or_one_early_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("M");
    assert!(run(&["crash-mesh"], &out).status.success());
    let before = contents(&out);
    // Two long names that differ only at their end.
    let long_a = format!("{}a", "x".repeat(299));
    let long_b = format!("{}b", "x".repeat(299));
    let a = named_scenario(dir.path(), "a.toml", &long_a);
    let b = named_scenario(dir.path(), "b.toml", &long_b);
    let o = run(&[&a, &b], &out);
    let err = text(&o.stderr);
    assert!(
        o.status.success() || !err.contains("too long"),
        "failed at write time: {err}"
    );
    if o.status.success() {
        let charts: Vec<String> = fs::read_dir(out.join("charts"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        // The detection-time charts; the trade-off charts, no false Failed
        // in any run, are a line each (the longest chart name, the
        // trade-off's, is bounded in `report::tests` too).
        assert_eq!(charts.len(), 2, "{charts:?}");
        assert!(charts.iter().all(|c| c.len() <= 255), "{charts:?}");
        let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
        assert!(summary.contains(&long_a) && !summary.contains("crash-mesh"));
        let html = fs::read_to_string(out.join("index.html")).unwrap();
        assert!(html.contains(&long_b) && !html.contains("crash-mesh"));
    } else {
        // Refused: then before anything was written.
        assert_one_line_error(&o, "name");
        assert_holds(&out, &before, "refused");
    }
}

#[test]
fn an_out_that_is_a_file_or_holds_charts_as_a_file_is_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    fs::write(&file, "mine").unwrap();
    let o = run(&["crash-mesh"], &file);
    assert_one_line_error(&o, "is a file");
    assert!(text(&o.stdout).is_empty(), "it ran: {}", text(&o.stdout));
    assert_eq!(fs::read_to_string(&file).unwrap(), "mine");

    let cf = dir.path().join("cf");
    fs::create_dir(&cf).unwrap();
    fs::write(cf.join("charts"), "mine").unwrap();
    let o = run(&["crash-mesh"], &cf);
    assert_one_line_error(&o, "charts");
    assert!(text(&o.stdout).is_empty(), "it ran: {}", text(&o.stdout));
    assert_eq!(file_names(&cf), ["charts"]);
}

#[test]
fn an_out_holding_other_things_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine");
    fs::create_dir(&mine).unwrap();
    fs::write(mine.join("notes.txt"), "mine").unwrap();
    let o = run(&["crash-mesh"], &mine);
    assert_one_line_error(&o, "notes.txt");
    assert_eq!(file_names(&mine), ["notes.txt"]);

    // `--out .`: the current directory is never replaced.
    let o = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(["run", "crash-mesh", "--seeds", "1", "--out", "."])
        .current_dir(&mine)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    assert_one_line_error(&o, "current directory");
    assert_eq!(file_names(&mine), ["notes.txt"]);

    // A sweep's directory is not a report either.
    let sweep = dir.path().join("sweep");
    fs::create_dir(&sweep).unwrap();
    fs::write(sweep.join("sweep.toml"), "x").unwrap();
    fs::write(sweep.join("journal.csv"), "x").unwrap();
    let o = run(&["crash-mesh"], &sweep);
    assert_one_line_error(&o, "not part of an fdlab report");
    assert_eq!(file_names(&sweep), ["journal.csv", "sweep.toml"]);
}

fn replay(out: &Path) -> Output {
    fdlab(&[
        "replay",
        "crash-mesh",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn a_replay_replaces_its_own_report_and_refuses_a_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("M");
    assert!(run(&["crash-mesh"], &out).status.success());
    let before = contents(&out);
    let o = replay(&out);
    assert_one_line_error(&o, "fdlab run");
    assert_holds(&out, &before, "refused");

    let r = dir.path().join("R");
    for _ in 0..2 {
        let o = replay(&r);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert_eq!(
            file_names(&r),
            [
                ".fdlab-report",
                "timeline.html",
                "timeline.svg",
                "trace.csv"
            ]
        );
    }
}

#[test]
fn a_killed_writers_temporary_directory_is_removed_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = dir.path().join(format!(".fdlab-M-{dead}.tmpdir"));
    fs::create_dir(&stale).unwrap();
    fs::write(stale.join("summary.csv"), "half").unwrap();
    // Pid 1 is always running; another destination's is not ours to remove.
    let running = dir.path().join(".fdlab-M-1.tmpdir");
    let other = dir.path().join(format!(".fdlab-N-{dead}.tmpdir"));
    fs::create_dir(&running).unwrap();
    fs::create_dir(&other).unwrap();
    let o = run(&["crash-mesh"], &dir.path().join("M"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!stale.exists());
    assert!(running.exists() && other.exists());
}
