//! End-to-end runs of `fdlab tune` on membership scenarios (built-ins, 2
//! seeds): a recommendation whose snippet, pasted into the scenario, makes
//! the recommended setting; exit status 2 when no setting meets the
//! constraint; the same output for any `--jobs`; clear errors.

use std::fs;
use std::path::Path;

use fdlab_protocol::{DetectorConfig, Nanos};
use fdlab_scenarios::parse_scenario;

mod common;
use common::{assert_one_error_line, fdlab, text};

/// The text of a built-in scenario's file.
fn builtin(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/builtin")
        .join(format!("{name}.toml"));
    fs::read_to_string(path).unwrap()
}

/// The lines after `paste into the scenario ...:` up to the next blank
/// line that ends the output (or `every setting:`).
fn snippet(stdout: &str) -> String {
    let lines: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("paste into the scenario"))
        .skip(1)
        .take_while(|l| !l.starts_with("every setting:"))
        .collect();
    assert!(!lines.is_empty(), "no snippet in: {stdout}");
    lines.join("\n")
}

/// The value of `key = ...` on the `recommended:` line.
fn recommended(stdout: &str, key: &str) -> String {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("recommended: "))
        .unwrap_or_else(|| panic!("no recommendation in: {stdout}"));
    let at = line
        .find(&format!("{key} = "))
        .unwrap_or_else(|| panic!("{line}"));
    let rest = &line[at + key.len() + 3..];
    rest.split(',')
        .next()
        .unwrap()
        .trim_matches('"')
        .to_string()
}

#[test]
fn the_classic_judges_recommendation_pastes_into_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("settings.csv");
    let run = fdlab(&[
        "tune",
        "orleans-crash",
        "--judge",
        "classic",
        "--seeds",
        "2",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    assert!(
        stdout.contains("search: 24 settings (classic 24) x 2 seeds"),
        "{stdout}"
    );
    assert!(
        stdout.contains("at most 0 false declarations per node-hour"),
        "{stdout}"
    );
    assert!(stdout.contains("recommended: judge `classic`"), "{stdout}");
    assert!(stdout.contains("time to Dead over 2 crashes"), "{stdout}");
    assert!(stdout.contains("runner-ups:"), "{stdout}");
    // The fastest searched probe period is the recommendation here: the
    // note says a faster one may lie beyond the search.
    assert!(
        stdout.contains("note: at the edge of the search"),
        "{stdout}"
    );
    let timeout = recommended(&stdout, "membership.orleans.probe_timeout");
    let limit: u32 = recommended(&stdout, "membership.orleans.num_missed_probes_limit")
        .parse()
        .unwrap();
    let snippet = snippet(&stdout);
    assert!(snippet.starts_with("[membership.orleans]\n"), "{snippet}");
    // Pasted at the end of the scenario file, it parses and sets both.
    let file = format!("{}\n{snippet}\n", builtin("orleans-crash"));
    let s = parse_scenario("tuned.toml", &file, None).unwrap_or_else(|e| panic!("{e}\n{file}"));
    let o = &s.membership.as_ref().unwrap().orleans;
    assert_eq!(o.probe_timeout, timeout.parse::<Nanos>().unwrap());
    assert_eq!(o.num_missed_probes_limit, limit);
    // Every setting in the CSV, the recommended one ranked first.
    let table = fs::read_to_string(&csv).unwrap();
    assert_eq!(table.lines().count(), 25);
    let first = table
        .lines()
        .find(|l| l.starts_with("1,true,classic,"))
        .unwrap();
    assert!(
        first.starts_with(&format!("1,true,classic,{timeout},{limit},")),
        "{first}"
    );
}

#[test]
fn a_detector_judges_recommendation_replaces_its_table() {
    let run = fdlab(&["tune", "orleans-crash", "--judge", "phi-5s", "--seeds", "2"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    assert!(
        stdout.contains("recommended: judge `phi-5s`: threshold = "),
        "{stdout}"
    );
    let threshold: f64 = recommended(&stdout, "threshold").parse().unwrap();
    let snippet = snippet(&stdout);
    assert!(snippet.starts_with("[[detectors]]"), "{snippet}");
    assert!(snippet.contains("   # tuned"), "{snippet}");
    // The judge's table of the file, replaced by the snippet.
    let original = builtin("orleans-crash");
    let start = original.find("[[detectors]]\nname = \"phi-5s\"").unwrap();
    let end = start + original[start + 1..].find("[[detectors]]").unwrap() + 1;
    let file = format!("{}{snippet}\n\n{}", &original[..start], &original[end..]);
    let s = parse_scenario("tuned.toml", &file, None).unwrap_or_else(|e| panic!("{e}\n{file}"));
    let phi = s.detectors.iter().find(|d| d.name == "phi-5s").unwrap();
    let DetectorConfig::PhiAccrual(c) = &phi.config else {
        panic!("{phi:?}")
    };
    assert_eq!(c.threshold, threshold);
    // Its other keys are the scenario's.
    assert_eq!(c.acceptable_heartbeat_pause, Nanos::from_secs(10));
    assert_eq!(c.min_std_deviation, Nanos::from_millis(500));
    assert_eq!(
        s.judge_names(),
        ["classic", "phi-5s", "probe-orleans", "swim", "lifeguard"]
    );
}

#[test]
fn no_setting_without_a_false_declaration_exits_2_with_the_closest() {
    // Under Orleans main a 30 s pause outlasts 1 s probes x 2 misses (and
    // their liveness window of 4 s x 2): the paused silo is declared Dead
    // on every seed.
    let run = fdlab(&[
        "tune",
        "orleans-gc-pause",
        "--judge",
        "classic",
        "--seeds",
        "2",
        "--set",
        "membership.orleans.version=main,membership.orleans.probe_timeout=1s,membership.orleans.num_missed_probes_limit=2",
    ]);
    let stdout = text(&run.stdout);
    assert_eq!(run.status.code(), Some(2), "{stdout}{}", text(&run.stderr));
    assert!(
        stdout.contains("search: 1 settings (classic 1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "no setting meets the constraint of at most 0 false declarations per node-hour"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("time to Dead: no crash to declare"),
        "{stdout}"
    );
    // What was held is what the table shows.
    assert!(
        stdout
            .contains("[membership.orleans]\nversion = \"main\"\nprobe_timeout = \"1s\"\nnum_missed_probes_limit = 2"),
        "{stdout}"
    );
    // Allowed some false declarations, it is recommended.
    let run = fdlab(&[
        "tune",
        "orleans-gc-pause",
        "--judge",
        "classic",
        "--seeds",
        "2",
        "--set",
        "membership.orleans.version=main,membership.orleans.probe_timeout=1s,membership.orleans.num_missed_probes_limit=2",
        "--max-false-failed-per-hour",
        "1000",
    ]);
    assert!(run.status.success(), "{}", text(&run.stdout));
}

#[test]
fn the_output_is_the_same_for_any_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let outputs: Vec<(String, String)> = ["1", "2"]
        .iter()
        .map(|jobs| {
            let csv = dir.path().join(format!("t{jobs}.csv"));
            let run = fdlab(&[
                "tune",
                "orleans-crash",
                "--judge",
                "probe-orleans",
                "--judge",
                "classic",
                "--seeds",
                "2",
                "--set",
                "membership.orleans.num_missed_probes_limit=3",
                "--jobs",
                jobs,
                "--out",
                csv.to_str().unwrap(),
            ]);
            assert!(run.status.success(), "{}", text(&run.stderr));
            let stdout = text(&run.stdout).replace(&format!("t{jobs}.csv"), "t.csv");
            (stdout, fs::read_to_string(&csv).unwrap())
        })
        .collect();
    assert_eq!(outputs[0], outputs[1]);
    let stdout = &outputs[0].0;
    assert!(
        stdout.contains("11 settings (classic 6, probe-orleans 5)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("the best setting of each other judge:"),
        "{stdout}"
    );
}

#[test]
fn bad_arguments_are_one_clear_error() {
    let tune = |args: &[&str]| {
        let mut all = vec!["tune"];
        all.extend_from_slice(args);
        fdlab(&all)
    };
    assert_one_error_line(
        &tune(&["orleans-crash", "--detector", "phi-accrual"]),
        &["--detector phi-accrual", "membership scenario", "--judge"],
    );
    assert_one_error_line(
        &tune(&["orleans-crash", "--judge", "nobody"]),
        &["--judge nobody", "classic, phi-5s, probe-orleans"],
    );
    assert_one_error_line(
        &tune(&[
            "orleans-crash",
            "--set",
            "membership.orleans.probe_timout=1s",
        ]),
        &["--set", "did you mean `probe_timeout`"],
    );
    assert_one_error_line(
        &tune(&["orleans-crash", "--set", "classic.threshold=1"]),
        &["--set", "num_missed_probes_limit"],
    );
    assert_one_error_line(
        &tune(&["crash-mesh", "--judge", "classic"]),
        &["--judge classic", "only a membership scenario"],
    );
    assert_one_error_line(&tune(&["crash-mesh"]), &["--detector: required"]);
}
