//! End-to-end runs of `fdlab tune --trace`: the binary as a user runs it, on a
//! synthetic heartbeat trace generated here from a fixed seed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use fdlab_scenarios::detector_spec::detector_from_table;

mod common;
use common::fdlab;

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// SplitMix64 (Steele, Lea & Flood 2014): a seeded generator with no dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1).
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// Heartbeat period of the synthetic sender.
const PERIOD_MS: f64 = 1_000.0;
/// Standard deviation of the network jitter.
const JITTER_MS: f64 = 50.0;
/// One hour of heartbeats.
const HEARTBEATS: usize = 3_600;
/// GC-like stalls: this many intervals last 2 to 3 s instead of 1 s.
const STALLS: usize = 6;

/// One hour of 1 s heartbeats with 50 ms normal jitter and six GC-like stalls
/// of the sender, each of which stretches one interval to 2-3 s (and shifts
/// every later heartbeat, as a stop-the-world pause delays the sender's
/// timer), starting at an epoch-like instant, as `time_ms,seq` CSV.
fn synthetic_trace(seed: u64) -> String {
    let mut rng = Rng(seed);
    let stall_after: Vec<usize> = (0..STALLS)
        .map(|k| (k + 1) * HEARTBEATS / (STALLS + 1) + (rng.next_u64() % 100) as usize)
        .collect();
    let mut text =
        String::from("# synthetic: 1 s heartbeats, 50 ms jitter, rare GC-like gaps\ntime_ms,seq\n");
    let start_ms = 1_718_000_000_000.0;
    let mut shift_ms = 0.0;
    for i in 0..HEARTBEATS {
        let sent = start_ms + i as f64 * PERIOD_MS + shift_ms;
        text.push_str(&format!("{:.3},{i}\n", sent + rng.normal() * JITTER_MS));
        if stall_after.contains(&i) {
            shift_ms += PERIOD_MS * (1.0 + rng.unit());
        }
    }
    text
}

fn write_event_log(dir: &Path) -> PathBuf {
    let path = dir.join("recorded.csv");
    fs::write(&path, synthetic_trace(2024)).unwrap();
    path
}

/// The value of `key` in the `recommended:` line (`threshold = 8.0, ...`).
fn recommended(out: &str, key: &str) -> Option<String> {
    let line = out.lines().find(|l| l.starts_with("recommended: "))?;
    line["recommended: ".len()..]
        .split(", ")
        .find_map(|kv| kv.strip_prefix(&format!("{key} = ")))
        .map(|v| v.trim_matches('"').to_string())
}

/// The recommended p99 detection time in ms, from the evidence line.
fn p99_ms(out: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("detection time over"))
        .expect("an evidence line");
    let text = line
        .split("p99 ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    let (number, unit) = text.split_once(' ').unwrap();
    let value: f64 = number.parse().unwrap();
    if unit == "s" {
        value * 1_000.0
    } else {
        value
    }
}

/// Mistakes per hour of the recommended setting.
fn mistakes_per_hour(out: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("mistakes: "))
        .expect("a mistakes line");
    let inner = line.split('(').nth(1).unwrap();
    inner.split(' ').next().unwrap().parse().unwrap()
}

/// The snippet printed after "paste into a scenario".
fn snippet(out: &str) -> String {
    out.lines()
        .skip_while(|l| *l != "[[detectors]]")
        .take_while(|l| !l.is_empty() && !l.starts_with("every setting"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn recommends_a_sensible_phi_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_event_log(dir.path());
    let out = fdlab(&[
        "tune",
        "--trace",
        trace.to_str().unwrap(),
        "--detector",
        "phi-accrual",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    let threshold: f64 = recommended(&text, "threshold").unwrap().parse().unwrap();
    assert!((1.0..=16.0).contains(&threshold), "{text}");
    assert_eq!(mistakes_per_hour(&text), 0.0, "{text}");
    assert!(text.contains("runner-ups:"), "{text}");
    assert!(text.contains("median interval 1.000 s"), "{text}");
    // A recommendation at an end of an axis says so, and only then.
    let pause = recommended(&text, "acceptable_heartbeat_pause").unwrap();
    let at_edge = threshold == 1.0 || threshold == 16.0 || pause == "\"0s\"" || pause == "\"3s\"";
    assert_eq!(
        text.contains("note: at the edge of the grid"),
        at_edge,
        "{text}"
    );

    // The snippet is a scenario table that builds the recommended detector.
    let file: toml::Table = toml::from_str(&snippet(&text)).unwrap();
    let table = file["detectors"].as_array().unwrap()[0].as_table().unwrap();
    let spec = detector_from_table(table).unwrap();
    assert_eq!(spec.name.as_deref(), Some("phi-accrual-tuned"));
    let fdlab_protocol::DetectorConfig::PhiAccrual(c) = spec.config else {
        panic!("not phi accrual: {text}")
    };
    assert_eq!(c.threshold, threshold);
    assert_eq!(c.interval, fdlab_protocol::Nanos::from_secs(1));
}

#[test]
fn a_stricter_constraint_never_gives_a_lower_threshold_or_faster_detection() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_event_log(dir.path());
    let trace = trace.to_str().unwrap();
    let run = |max: &str, set: Option<&str>| {
        let mut args = vec!["tune", "--trace", trace, "--detector", "phi-accrual"];
        args.extend(["--max-mistakes-per-hour", max, "--cuts", "400"]);
        if let Some(set) = set {
            args.extend(["--set", set]);
        }
        let out = fdlab(&args);
        (out.status.code(), stdout(&out))
    };
    // Loosest first; each constraint is at least as strict as the one before.
    let levels = ["1000", "20", "6", "2", "0"];

    // The whole grid: fewer points qualify as the bound tightens, so the best
    // detection time can only get slower.
    let mut previous_p99 = 0.0;
    for max in levels {
        let (code, text) = run(max, None);
        assert_eq!(code, Some(0), "{text}");
        let p99 = p99_ms(&text);
        assert!(
            p99 >= previous_p99,
            "max {max}: {p99} < {previous_p99}\n{text}"
        );
        assert!(mistakes_per_hour(&text) <= max.parse().unwrap(), "{text}");
        previous_p99 = p99;
    }

    // With the pause held, the threshold alone trades speed for mistakes.
    let mut thresholds = Vec::new();
    for max in levels {
        let (code, text) = run(max, Some("acceptable_heartbeat_pause=1s"));
        if code == Some(2) {
            assert!(text.contains("no setting meets the constraint"), "{text}");
            thresholds.push(f64::INFINITY);
            continue;
        }
        assert_eq!(code, Some(0), "{text}");
        thresholds.push(
            recommended(&text, "threshold")
                .unwrap()
                .parse::<f64>()
                .unwrap(),
        );
    }
    eprintln!("pause 1s, thresholds for at most {levels:?} mistakes/h: {thresholds:?}");
    assert!(
        thresholds.windows(2).all(|w| w[0] <= w[1]),
        "thresholds by tightening constraint: {thresholds:?}"
    );
    let distinct = thresholds
        .iter()
        .filter(|t| t.is_finite())
        .fold(Vec::new(), |mut v, t| {
            if !v.contains(t) {
                v.push(*t);
            }
            v
        });
    assert!(
        distinct.len() >= 2,
        "the constraint must matter: {thresholds:?}"
    );
}

#[test]
fn output_is_identical_for_any_thread_count_and_the_table_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_event_log(dir.path());
    let run = |jobs: &str, out: &Path| {
        fdlab(&[
            "tune",
            "--trace",
            trace.to_str().unwrap(),
            "--detector",
            "dataflow-decay",
            "--cuts",
            "300",
            "--seed",
            "9",
            "--jobs",
            jobs,
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    let one = run("1", &a);
    let two = run("2", &b);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    let strip = |o: &Output, p: &Path| stdout(o).replace(p.to_str().unwrap(), "OUT");
    assert_eq!(strip(&one, &a), strip(&two, &b));
    let table = fs::read_to_string(&a).unwrap();
    assert_eq!(table, fs::read_to_string(&b).unwrap());
    let rows: Vec<&str> = table.lines().collect();
    assert!(
        rows[0].starts_with("rank,meets_constraint,margin,decay,grace,crashes,"),
        "{}",
        rows[0]
    );
    assert_eq!(rows.len(), 1 + 6 * 3 * 2);
    assert_eq!(rows.iter().filter(|r| r.starts_with("1,")).count(), 1);
}

#[test]
fn reads_standard_input() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args([
            "tune",
            "--trace",
            "-",
            "--detector",
            "fixed-timeout",
            "--cuts",
            "100",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(synthetic_trace(5).as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("fixed-timeout on -"),
        "{}",
        stdout(&out)
    );
    assert!(recommended(&stdout(&out), "timeout").is_some());
}

/// The false Failed of the recommended setting's evidence line.
fn false_failed_per_hour(out: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("mistakes: "))
        .expect("a mistakes line");
    let inner = line.split("false Failed ").nth(1).expect("false Failed");
    inner
        .split('(')
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn false_failed_and_suspicions_are_bounded_apart() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_event_log(dir.path());
    let trace = trace.to_str().unwrap();
    let run = |bounds: &[&str]| {
        let mut args = vec![
            "tune",
            "--trace",
            trace,
            "--detector",
            "dataflow-decay",
            "--cuts",
            "200",
        ];
        args.extend(bounds);
        let out = fdlab(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    // No bound given: no mistake at all, as ever.
    let strict = run(&[]);
    assert!(strict.contains("at most 0 mistakes per hour"), "{strict}");
    assert_eq!(mistakes_per_hour(&strict), 0.0, "{strict}");
    // Bounding both kinds at 0 is the same constraint.
    let both = run(&[
        "--max-false-failed-per-hour",
        "0",
        "--max-suspicions-per-hour",
        "0",
    ]);
    assert!(
        both.contains("at most 0 false Failed and at most 0 suspicions per hour"),
        "{both}"
    );
    let pick = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("recommended"))
            .map(String::from)
    };
    assert_eq!(pick(&both), pick(&strict));
    // No false Failed, any number of suspicions: the data-stream detector
    // may flicker on this trace's jitter, and detects faster for it.
    let flicker = run(&["--max-false-failed-per-hour", "0"]);
    assert!(
        flicker.contains("at most 0 false Failed per hour"),
        "{flicker}"
    );
    assert_eq!(false_failed_per_hour(&flicker), 0.0, "{flicker}");
    assert!(mistakes_per_hour(&flicker) > 0.0, "{flicker}");
    assert!(p99_ms(&flicker) < p99_ms(&strict), "{flicker}\n{strict}");
    // --max-mistakes-per-hour still bounds the sum.
    let sum = run(&[
        "--max-false-failed-per-hour",
        "0",
        "--max-mistakes-per-hour",
        "1",
    ]);
    assert!(mistakes_per_hour(&sum) <= 1.0, "{sum}");
    let out = fdlab(&[
        "tune",
        "--trace",
        trace,
        "--detector",
        "dataflow-decay",
        "--max-suspicions-per-hour=-1",
    ]);
    // An argument error is exit 1: 2 is tune's "no setting met the constraint".
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("not a number of mistakes per hour"));
}

#[test]
fn no_setting_within_the_constraint_exits_2_and_shows_the_least_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_event_log(dir.path());
    // No pause allowance and a 100 ms sigma floor cannot ride out 2-3 s gaps.
    let out = fdlab(&[
        "tune",
        "--trace",
        trace.to_str().unwrap(),
        "--detector",
        "phi-accrual",
        "--set",
        "acceptable_heartbeat_pause=0s,max_sample_size=1000",
        "--cuts",
        "100",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains(
            "no setting meets the constraint of at most 0 mistakes per hour on this trace"
        ),
        "{text}"
    );
    assert!(text.contains("[[detectors]]"), "{text}");
    assert!(stderr(&out).contains("exit status 2"), "{}", stderr(&out));
}

/// Runs with `--out` over an existing file and checks it failed cleanly: exit
/// 1, one line of error, the file untouched.
fn fails_cleanly(trace: &str, detector: &str, dir: &Path) -> String {
    let out_file = dir.join("keep.csv");
    fs::write(&out_file, "precious\n").unwrap();
    let out = fdlab(&[
        "tune",
        "--trace",
        trace,
        "--detector",
        detector,
        "--out",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(fs::read_to_string(&out_file).unwrap(), "precious\n");
    err
}

#[test]
fn a_missing_trace_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.csv");
    let err = fails_cleanly(missing.to_str().unwrap(), "phi-accrual", dir.path());
    assert!(
        err.starts_with(&format!("fdlab: error: {}: ", missing.display())),
        "{err}"
    );
}

#[test]
fn a_malformed_line_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.csv");
    let mut text = synthetic_trace(3);
    text.push_str("1718009999999.5,3600\nsoon,3601\n");
    fs::write(&path, &text).unwrap();
    let line = text.lines().count();
    let err = fails_cleanly(path.to_str().unwrap(), "phi-accrual", dir.path());
    assert_eq!(
        err.trim_end(),
        format!(
            "fdlab: error: {}:{line}: `time_ms` is `soon`: not a number (decimal milliseconds, like 1500 or 1500.25)",
            path.display()
        )
    );
    let entries = fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(entries, 2, "no temporary file left behind");
}

#[test]
fn bad_arguments_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_event_log(dir.path());
    let trace = trace.to_str().unwrap();
    let err = fails_cleanly(trace, "adaptive-probe", dir.path());
    assert!(
        err.contains("--detector: adaptive-probe needs probe round trips"),
        "{err}"
    );
    let err = fails_cleanly(trace, "phi", dir.path());
    assert!(
        err.contains("--detector: `kind`: unknown kind `phi`"),
        "{err}"
    );
    let out = fdlab(&[
        "tune",
        "--trace",
        trace,
        "--detector",
        "phi-accrual",
        "--set",
        "treshold=3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--set: `treshold`: unknown key"),
        "{}",
        stderr(&out)
    );
    for bad in ["--max-mistakes-per-hour=-1", "--max-mistakes-per-hour=lots"] {
        let out = fdlab(&["tune", "--trace", trace, "--detector", "phi-accrual", bad]);
        assert_ne!(out.status.code(), Some(0));
        let err = stderr(&out);
        assert!(err.contains("not a number of mistakes per hour"), "{err}");
    }
    let out = fdlab(&[
        "tune",
        "--trace",
        trace,
        "--detector",
        "phi-accrual",
        "--cuts",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--cuts: must be between 1 and"),
        "{}",
        stderr(&out)
    );
}

/// A mesh whose targets pause now and then for 0.3-1.5 s (to be tolerated)
/// and where one node crashes (to be detected): a low phi threshold reacts
/// fast and mistakes the pauses for crashes.
const PAUSY_SCENARIO: &str = r#"
description = "a crash, and pauses to tolerate"
duration = "3m"
seeds = 4

[topology]
kind = "mesh"
nodes = 5
monitors_per_node = 2

[network]
latency = { dist = "lognormal", median = "1ms", sigma = 0.5 }

[[detectors]]
name = "phi"
kind = "phi-accrual"

[[faults]]
kind = "crash"
node = "n1"
window = ["100s", "150s"]

[[random_faults]]
kind = "pause"
rate_per_node_hour = 60
duration = { dist = "uniform", min = "300ms", max = "1500ms" }
"#;

#[test]
fn tunes_on_a_simulated_scenario_within_the_mistake_limit() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("pausy.toml");
    fs::write(&scenario, PAUSY_SCENARIO).unwrap();
    let s = scenario.to_str().unwrap();
    let strict = fdlab(&["tune", s, "--detector", "phi-accrual"]);
    assert!(strict.status.success(), "{}", stderr(&strict));
    let text = stdout(&strict);
    assert!(text.contains("on scenario pausy"), "{text}");
    assert!(text.contains("crash fault windows"), "{text}");
    assert_eq!(mistakes_per_hour(&text), 0.0, "{text}");
    let snippet = snippet(&text);
    assert!(snippet.contains("kind = \"phi-accrual\""), "{snippet}");
    // Allowing mistakes can only make detection faster (or as fast).
    let lenient = fdlab(&[
        "tune",
        s,
        "--detector",
        "phi-accrual",
        "--max-mistakes-per-hour",
        "1000",
    ]);
    assert!(lenient.status.success(), "{}", stderr(&lenient));
    assert!(p99_ms(&stdout(&lenient)) <= p99_ms(&text));
    // Same answer on one thread.
    let one = fdlab(&["tune", s, "--detector", "phi-accrual", "--jobs", "1"]);
    assert_eq!(stdout(&one), text);
    // A scenario and a trace at once, or neither: one clear error.
    let both = fdlab(&["tune", s, "--trace", s, "--detector", "phi-accrual"]);
    assert!(!both.status.success());
    let neither = fdlab(&["tune", "--detector", "phi-accrual"]);
    assert!(!neither.status.success());
}
