//! End-to-end runs of `fdlab check`, the CI regression gate.

use std::fs;
use std::path::Path;
use std::process::Output;

mod common;
use common::{assert_one_error_line, fdlab, text};

/// A small suite scenario; `TIMEOUT` is the fixed detector's timeout.
const SUITE_SCENARIO: &str = r#"
description = "a crash for the gate"
duration = "60s"
seeds = 4

[topology]
kind = "mesh"
nodes = 5
monitors_per_node = 2

[network]
latency = { dist = "lognormal", median = "1ms", sigma = 0.5 }

[[detectors]]
name = "fixed"
kind = "fixed-timeout"
timeout = "TIMEOUT"

[[detectors]]
name = "phi"
kind = "phi-accrual"

[[faults]]
kind = "crash"
node = "n1"
window = ["20s", "30s"]
"#;

fn write_suite(dir: &Path, timeout: &str) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("crash.toml"),
        SUITE_SCENARIO.replace("TIMEOUT", timeout),
    )
    .unwrap();
}

fn check(suite: &Path, baseline: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "check",
        "--suite",
        suite.to_str().unwrap(),
        "--baseline",
        baseline.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    fdlab(&args)
}

#[test]
fn an_unchanged_tree_passes_with_zero_difference() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    let out = check(&suite, &baseline, &["--update"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = fs::read_to_string(&baseline).unwrap();
    assert!(written.contains("detector = \"fixed\""), "{written}");
    let junit = dir.path().join("junit.xml");
    let out = check(&suite, &baseline, &["--junit", junit.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Every figure is identical to the baseline"));
    let xml = fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"2\" failures=\"0\""), "{xml}");
    // Another thread count, same figures.
    let out = check(&suite, &baseline, &["--jobs", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_slower_detector_default_fails_the_gate_and_names_the_regression() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    // The fixed detector now waits 5 s instead of 3 s.
    write_suite(&suite, "5s");
    let junit = dir.path().join("junit.xml");
    let md = dir.path().join("summary.md");
    let out = check(
        &suite,
        &baseline,
        &[
            "--junit",
            junit.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(report.contains("fdlab check FAILED"), "{report}");
    assert!(
        report
            .lines()
            .any(|l| l.contains("regression") && l.contains("| fixed |") && l.contains("p99")),
        "{report}"
    );
    // phi did not move.
    assert!(!report.lines().any(|l| l.contains("| phi |")), "{report}");
    assert!(text(&out.stderr).contains("regression(s)"));
    assert!(report.contains(&fs::read_to_string(&md).unwrap()));
    let xml = fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"1\"") && xml.contains("<failure message=\"p50"));
    // Faster again than the baseline: an improvement passes, shown as changed.
    write_suite(&suite, "2s");
    let out = check(&suite, &baseline, &[]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("⚠ changed"));
}

#[test]
fn a_baseline_stricter_than_reality_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    // Claim phi detected twice as fast.
    let written = fs::read_to_string(&baseline).unwrap();
    let mut lines: Vec<String> = written.lines().map(String::from).collect();
    let phi = lines
        .iter()
        .position(|l| l == "detector = \"phi\"")
        .unwrap();
    let p99 = phi
        + lines[phi..]
            .iter()
            .position(|l| l.starts_with("p99_ms"))
            .unwrap();
    let value: f64 = lines[p99]
        .split('=')
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    lines[p99] = format!("p99_ms = {}", value / 2.0);
    fs::write(&baseline, lines.join("\n")).unwrap();
    let out = check(&suite, &baseline, &[]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(
        report
            .lines()
            .any(|l| l.contains("regression") && l.contains("| phi |") && l.contains("+100.00%")),
        "{report}"
    );
}

#[test]
fn missing_or_malformed_baselines_and_suites_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    let out = check(&suite, &baseline, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("base.toml") && err.contains("--update"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!baseline.exists());

    let bad = "version = 1\n[tolerance]\ndetection_time = \"five\"\n";
    fs::write(&baseline, bad).unwrap();
    for extra in [&[][..], &["--update"][..]] {
        let out = check(&suite, &baseline, extra);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.contains("base.toml") && err.contains("detection_time"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        // Nothing overwritten, not even with --update.
        assert_eq!(fs::read_to_string(&baseline).unwrap(), bad);
    }

    let out = check(&dir.path().join("nowhere"), &baseline, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--suite"));
    fs::write(suite.join("broken.toml"), "duration = \"soon\"\n").unwrap();
    let out = check(&suite, &baseline, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("broken.toml"));
}

/// The committed baseline matches the committed CI suite.
#[test]
fn the_committed_baseline_names_every_ci_scenario() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read_to_string(root.join("scenarios/ci-baseline.toml")).unwrap();
    let baseline = fdlab_check_names(&text);
    for entry in fs::read_dir(root.join("scenarios/ci")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        assert!(baseline.contains(&name), "{name} is not in the baseline");
    }
}

fn fdlab_check_names(baseline: &str) -> Vec<String> {
    baseline
        .lines()
        .filter_map(|l| l.strip_prefix("scenario = \""))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect()
}

/// The baseline's lines, and the index of the first line of `detector`'s
/// entry that starts with `key`.
fn entry_line(baseline: &Path, detector: &str, key: &str) -> (Vec<String>, usize) {
    let written = fs::read_to_string(baseline).unwrap();
    let lines: Vec<String> = written.lines().map(String::from).collect();
    let entry = lines
        .iter()
        .position(|l| *l == format!("detector = \"{detector}\""))
        .unwrap();
    let at = entry
        + lines[entry..]
            .iter()
            .position(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("no {key} in {detector}'s entry: {written}"));
    (lines, at)
}

#[test]
fn non_finite_or_negative_baseline_figures_are_refused_with_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    let good = fs::read_to_string(&baseline).unwrap();
    let junit = dir.path().join("junit.xml");
    for (detector, key, bad) in [
        ("fixed", "p50_ms", "nan"),
        ("phi", "p99_ms", "inf"),
        ("phi", "p50_ms", "-inf"),
        ("fixed", "p99_ms", "-1.0"),
        ("phi", "false_failed_per_pair_hour", "nan"),
        ("fixed", "suspicions_per_pair_hour", "-0.5"),
    ] {
        fs::write(&baseline, &good).unwrap();
        let (mut lines, at) = entry_line(&baseline, detector, key);
        lines[at] = format!("{key} = {bad}");
        fs::write(&baseline, lines.join("\n")).unwrap();
        let out = check(&suite, &baseline, &["--junit", junit.to_str().unwrap()]);
        let line = format!("base.toml:{}:", at + 1);
        assert_one_error_line(&out, &[&line, key, "finite"]);
        assert!(!junit.exists(), "{key} = {bad}: a JUnit file was written");
    }
    // The tolerances too, with their line.
    let bad = good.replace("detection_time = 0.05", "detection_time = nan");
    fs::write(&baseline, bad).unwrap();
    let out = check(&suite, &baseline, &[]);
    assert_one_error_line(&out, &["base.toml:11:", "tolerance.detection_time"]);
}

#[test]
fn a_baseline_with_no_entries_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    fs::write(
        &baseline,
        "version = 1\n\n[tolerance]\ndetection_time = 0.05\n",
    )
    .unwrap();
    let out = check(&suite, &baseline, &[]);
    assert_one_error_line(&out, &["base.toml", "[[entry]]", "compares nothing"]);
    // --update fills it.
    let out = check(&suite, &baseline, &["--update"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(check(&suite, &baseline, &[]).status.success());
}

#[test]
fn a_baseline_that_covers_none_of_the_suite_fails_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    let other = fs::read_to_string(&baseline)
        .unwrap()
        .replace("scenario = \"crash\"", "scenario = \"another-suite\"");
    fs::write(&baseline, other).unwrap();
    let out = check(&suite, &baseline, &[]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(report.contains("covers none of the suite's 2"), "{report}");
    let err = text(&out.stderr);
    assert!(err.contains("compares nothing"), "{err}");
}

#[test]
fn a_suite_result_missing_from_the_baseline_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    // Drop phi's entry: its figures are not gated by anything.
    let written = fs::read_to_string(&baseline).unwrap();
    let kept: Vec<&str> = written
        .split("[[entry]]")
        .filter(|part| !part.contains("detector = \"phi\""))
        .collect();
    fs::write(&baseline, kept.join("[[entry]]")).unwrap();
    let junit = dir.path().join("junit.xml");
    let out = check(&suite, &baseline, &["--junit", junit.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let report = text(&out.stdout);
    assert!(
        report
            .lines()
            .any(|l| l.contains("`phi`") && l.contains("not in the baseline")),
        "{report}"
    );
    let xml = fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
    assert!(xml.contains("not in the baseline"), "{xml}");
}

#[test]
fn update_keeps_hand_written_comments_and_tolerances() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    let plain = fs::read_to_string(&baseline).unwrap();
    // A baseline nobody edited, updated, is what a fresh --update writes.
    let fresh = dir.path().join("fresh.toml");
    write_suite(&suite, "5s");
    assert!(check(&suite, &fresh, &["--update"]).status.success());
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    assert_eq!(
        fs::read_to_string(&baseline).unwrap(),
        fs::read_to_string(&fresh).unwrap()
    );
    // Hand-written comments and a hand-set tolerance survive an update.
    write_suite(&suite, "3s");
    let edited = format!("# owned by the platform team\n{plain}# end of baseline\n")
        .replace(
            "detection_time = 0.05",
            "detection_time = 0.1 # agreed in review",
        )
        .replace(
            "missed = 0\nfalse_failed",
            "# no miss allowed\nmissed = 0\nfalse_failed",
        )
        .replacen(
            "[[entry]]\nscenario = \"crash\"\ndetector = \"phi\"",
            "# phi is what production runs\n[[entry]]\nscenario = \"crash\"\ndetector = \"phi\"",
            1,
        );
    assert_ne!(edited, plain);
    fs::write(&baseline, &edited).unwrap();
    write_suite(&suite, "5s");
    let out = check(&suite, &baseline, &["--update"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let updated = fs::read_to_string(&baseline).unwrap();
    for comment in [
        "# owned by the platform team",
        "detection_time = 0.1 # agreed in review",
        "# no miss allowed\nmissed = 0",
        "# phi is what production runs\n[[entry]]",
        "# end of baseline",
    ] {
        assert!(updated.contains(comment), "`{comment}` lost:\n{updated}");
    }
    // The figures are the new run's.
    let figures = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("p50_ms") || l.starts_with("p99_ms"))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        figures(&updated),
        figures(&fs::read_to_string(&fresh).unwrap())
    );
    assert!(check(&suite, &baseline, &[]).status.success());
}

#[test]
fn a_baseline_from_before_the_mistake_split_is_refused_then_updated() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    let current = fs::read_to_string(&baseline).unwrap();
    // As an fdlab before the split wrote it: one mistakes rate per entry and
    // one tolerance for it (raised by hand here).
    let old: String = current
        .replace(
            "# missed a count, false_failed_per_pair_hour and\n# suspicions_per_pair_hour absolute increases.\n",
            "# missed a count, mistakes_per_pair_hour an absolute increase.\n",
        )
        .lines()
        .filter(|l| !l.starts_with("suspicions_per_pair_hour"))
        .map(|l| match l.strip_prefix("false_failed_per_pair_hour = ") {
            Some(rate) => format!("mistakes_per_pair_hour = {rate}\n"),
            None => format!("{l}\n"),
        })
        .collect::<String>()
        .replacen(
            "mistakes_per_pair_hour = 0.0\n",
            "mistakes_per_pair_hour = 2.5\n",
            1,
        );
    assert!(
        old.contains(
            "[tolerance]\ndetection_time = 0.05\nmissed = 0\nmistakes_per_pair_hour = 2.5\n"
        ),
        "{old}"
    );
    fs::write(&baseline, &old).unwrap();
    let out = check(&suite, &baseline, &[]);
    assert_one_error_line(
        &out,
        &[
            "base.toml",
            "`mistakes_per_pair_hour`",
            "fdlab check --update",
        ],
    );
    assert_eq!(fs::read_to_string(&baseline).unwrap(), old);
    let out = check(&suite, &baseline, &["--update"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let updated = fs::read_to_string(&baseline).unwrap();
    assert!(!updated.contains("mistakes_per_pair_hour"), "{updated}");
    assert!(
        updated.contains("false_failed_per_pair_hour = 2.5\nsuspicions_per_pair_hour = 2.5\n"),
        "{updated}"
    );
    assert_eq!(updated.replace(" = 2.5\n", " = 0.0\n"), current);
    assert!(check(&suite, &baseline, &[]).status.success());
}

#[test]
fn update_refuses_a_read_only_baseline_before_running() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    let before = fs::read_to_string(&baseline).unwrap();
    fs::set_permissions(&baseline, fs::Permissions::from_mode(0o444)).unwrap();
    write_suite(&suite, "5s");
    let out = check(&suite, &baseline, &["--update"]);
    assert_one_error_line(&out, &["base.toml", "read-only"]);
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    assert_eq!(fs::read_to_string(&baseline).unwrap(), before);
    assert_eq!(
        fs::metadata(&baseline).unwrap().permissions().mode() & 0o777,
        0o444
    );
}
