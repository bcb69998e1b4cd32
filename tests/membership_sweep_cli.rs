//! End-to-end runs of `fdlab sweep` on a membership scenario (the built-in
//! `orleans-crash`, 2 seeds): one row per point × judge with the figures of
//! `fdlab run`, the Pareto front, the same bytes for any `--jobs` and after
//! an interrupted sweep is resumed, and one clear error per bad `--vary`.

use std::fs;
use std::path::Path;
use std::process::Output;

mod common;
use common::sweep_fixture::assert_same_files;
use common::{assert_one_error_line, fdlab, text};

fn sweep(out: &Path, args: &[&str]) -> Output {
    let mut all = vec!["sweep", "orleans-crash", "--seeds", "2", "--out"];
    all.push(out.to_str().unwrap());
    all.extend_from_slice(args);
    fdlab(&all)
}

/// A CSV file as its header and rows.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

fn column(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"))
}

#[test]
fn one_row_per_point_and_judge_with_the_figures_of_fdlab_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let run = sweep(&out, &["--vary", "membership.orleans.probe_timeout=2s,5s"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    assert!(
        stdout.contains("12 cluster runs (2 points × 3 judges × 2 seeds"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Pareto front of median time to Dead"),
        "{stdout}"
    );
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(
        header[..5],
        [
            "point",
            "judge",
            "membership.orleans.probe_timeout",
            "runs",
            "node_hours"
        ]
    );
    for name in [
        "crashes",
        "declared",
        "never_declared",
        "declare_p50_s",
        "declare_p90_s",
        "false_declarations",
        "false_per_node_hour",
        "destroyed_s",
        "suspicions",
        "votes",
        "table_conflicts_per_run",
        "messages_per_node_second",
        "strict_declare_p50_s",
        "pareto",
    ] {
        column(&header, name);
    }
    let keys: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("p0001", "classic", "2s"),
            ("p0001", "phi-5s", "2s"),
            ("p0001", "probe-orleans", "2s"),
            ("p0002", "classic", "5s"),
            ("p0002", "phi-5s", "5s"),
            ("p0002", "probe-orleans", "5s"),
        ]
    );
    let svg = fs::read_to_string(out.join("tradeoff.svg")).unwrap();
    assert!(svg.contains("data-chart=\"sweep\"") && svg.contains("median time to Dead"));

    // The point at Orleans' default (5 s) is the scenario itself: its rows
    // are `fdlab run`'s, figure for figure.
    let report = dir.path().join("run");
    let ran = fdlab(&[
        "run",
        "orleans-crash",
        "--seeds",
        "2",
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    let (run_header, run_rows) = read_csv(&report.join("membership.csv"));
    let first = column(&run_header, "runs");
    let width = run_header.len() - first;
    let at = column(&header, "runs");
    for (sweep_row, run_row) in rows[3..].iter().zip(&run_rows) {
        assert_eq!(sweep_row[1], run_row[1], "judge");
        assert_eq!(
            sweep_row[at..at + width],
            run_row[first..],
            "{}",
            run_row[1]
        );
    }

    // A judge's key: that judge alone.
    let phi = dir.path().join("phi");
    let run = sweep(&phi, &["--vary", "phi-5s.threshold=4,8,12"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let (header, rows) = read_csv(&phi.join("sweep.csv"));
    assert_eq!(header[2], "phi-5s.threshold");
    let judges: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(judges, ["phi-5s"; 3]);
    // --judge: only those named.
    let some = dir.path().join("some");
    let run = sweep(
        &some,
        &[
            "--vary",
            "membership.orleans.num_missed_probes_limit=2,3",
            "--judge",
            "probe-orleans",
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let (_, rows) = read_csv(&some.join("sweep.csv"));
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r[1] == "probe-orleans"));
}

#[test]
fn the_pareto_front_leaves_out_a_dominated_point() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    // 10 s probes declare a crash later than 2 s probes, and neither
    // declares a live silo: 10 s is dominated.
    let run = sweep(
        &out,
        &[
            "--vary",
            "membership.orleans.probe_timeout=10s,2s",
            "--judge",
            "classic",
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    let (p50, falses, pareto) = (
        column(&header, "strict_declare_p50_s"),
        column(&header, "false_declarations"),
        column(&header, "pareto"),
    );
    let time = |r: &Vec<String>| r[p50].parse::<f64>().unwrap();
    assert_eq!(rows[0][2], "10s");
    assert!(time(&rows[0]) > time(&rows[1]), "{rows:?}");
    assert_eq!(
        (rows[0][falses].as_str(), rows[1][falses].as_str()),
        ("0", "0")
    );
    assert_eq!(
        (rows[0][pareto].as_str(), rows[1][pareto].as_str()),
        ("false", "true")
    );
    let (_, front) = read_csv(&out.join("pareto.csv"));
    assert_eq!(front.len(), 1);
    assert_eq!(front[0][..3], ["p0002", "classic", "2s"]);
    // The front's point labelled with its value, the key said once.
    let svg = fs::read_to_string(out.join("tradeoff.svg")).unwrap();
    assert!(svg.contains("labels: probe_timeout") && svg.contains(">\n2s\n</text>"));
}

#[test]
fn the_same_bytes_for_any_jobs_and_after_a_resume() {
    let dir = tempfile::tempdir().unwrap();
    let vary = [
        "--vary",
        "membership.orleans.probe_timeout=2s,5s",
        "--vary",
        "membership.orleans.num_missed_probes_limit=2,4",
    ];
    let one = dir.path().join("one");
    let two = dir.path().join("two");
    for (out, jobs) in [(&one, "1"), (&two, "2")] {
        let mut args = vary.to_vec();
        args.extend(["--jobs", jobs]);
        let run = sweep(out, &args);
        assert!(run.status.success(), "{}", text(&run.stderr));
    }
    assert_same_files(&one, &two);
    let units = fs::read_to_string(one.join("units.csv")).unwrap();
    assert_eq!(units.lines().count(), 1 + 4 * 3 * 2);

    // An interrupted sweep: its plan, some runs in the journal and a line
    // torn by a kill.
    let resumed = dir.path().join("resumed");
    fs::create_dir(&resumed).unwrap();
    fs::copy(one.join("sweep.toml"), resumed.join("sweep.toml")).unwrap();
    let lines: Vec<&str> = units.lines().collect();
    let mut journal: String = lines[..10].iter().map(|l| format!("{l}\n")).collect();
    journal.push_str(&lines[10][..lines[10].len() / 2]);
    fs::write(resumed.join("journal.csv"), journal).unwrap();
    let refused = sweep(&resumed, &vary);
    assert_one_error_line(&refused, &["already holds a sweep", "--resume"]);
    let mut args = vary.to_vec();
    args.push("--resume");
    let run = sweep(&resumed, &args);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("9 of 24 cluster runs already done"),
        "{}",
        text(&run.stdout)
    );
    assert_same_files(&one, &resumed);
    assert!(!resumed.join("journal.csv").exists());
    // A finished sweep says so; --force runs it again, to the same bytes.
    let again = sweep(&resumed, &vary);
    assert_one_error_line(&again, &["holds this sweep, finished"]);
    let mut args = vary.to_vec();
    args.push("--force");
    assert!(sweep(&resumed, &args).status.success());
    assert_same_files(&one, &resumed);
}

#[test]
fn a_bad_vary_is_one_error_naming_it_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never");
    for (vary, needles) in [
        (
            "membership.orleans.probe_timout=1s",
            &[
                "--vary membership.orleans.probe_timout=1s",
                "did you mean `probe_timeout`",
            ][..],
        ),
        (
            "classic.threshold=3",
            &[
                "--vary classic.threshold=3",
                "membership.orleans.num_missed_probes_limit",
                "membership.orleans.probe_timeout",
            ],
        ),
        (
            "membership.orleans.num_missed_probes_limit=0,3",
            &["the value `0`", "must be at least 1"],
        ),
        (
            "membership.orleans.probe_timeout=2s,soon",
            &[
                "--vary membership.orleans.probe_timeout=2s,soon",
                "the value `soon`",
            ],
        ),
        ("phi-5s.treshold=4", &["did you mean `threshold`"]),
        (
            "membership.restart_after=1s",
            &["only the keys of [membership.orleans]"],
        ),
        (
            "nobody.threshold=1",
            &["`nobody`", "classic, phi-5s, probe-orleans"],
        ),
    ] {
        let run = sweep(&out, &["--vary", vary]);
        assert_one_error_line(&run, needles);
        assert!(!out.exists(), "{vary} wrote {}", out.display());
    }
    let run = sweep(
        &out,
        &["--vary", "phi-5s.threshold=4", "--judge", "classic"],
    );
    assert_one_error_line(&run, &["--judge", "`phi-5s` alone runs"]);
    let run = sweep(
        &out,
        &[
            "--vary",
            "membership.orleans.probe_timeout=1s",
            "--shard",
            "0/2",
        ],
    );
    assert_one_error_line(&run, &["--shard", "membership scenario"]);
    let run = fdlab(&[
        "sweep",
        "crash-mesh",
        "--vary",
        "membership.orleans.probe_timeout=1s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_one_error_line(&run, &["`crash-mesh` is not a membership scenario"]);
    assert!(!out.exists());

    // A membership sweep's directory is not a shard to merge.
    let done = dir.path().join("done");
    let run = sweep(
        &done,
        &[
            "--vary",
            "membership.orleans.probe_timeout=5s",
            "--judge",
            "classic",
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let merged = dir.path().join("merged");
    let run = fdlab(&[
        "merge",
        done.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_one_error_line(&run, &["membership sweep", "nothing to merge"]);
    assert!(!merged.exists());
}
