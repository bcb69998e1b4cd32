//! Runs too large to finish or to fit are refused before they start, with
//! the key and the figure; times beyond what virtual time holds are refused
//! with their key; `--dry-run` prints the estimates and runs nothing.

use std::path::Path;
use std::time::Duration;

mod common;
use common::fdlab_within;

/// Long enough for any refusal; a run that hangs or grows is killed here.
const DEADLINE: Duration = Duration::from_secs(30);

fn mesh(extra: &str, interval: &str, timeout: &str) -> String {
    format!(
        "duration = \"1m\"\n[topology]\nkind = \"mesh\"\nnodes = 4\nmonitors_per_node = \"all\"\n\
         [[detectors]]\nname = \"fixed\"\nkind = \"fixed-timeout\"\ninterval = \"{interval}\"\ntimeout = \"{timeout}\"\n{extra}"
    )
}

/// Runs `fdlab run FILE` on `text` (plus `more` arguments) and expects one
/// error line that contains every one of `needles`, and no output.
fn refused(text: &str, more: &[&str], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("out");
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    let (code, _, stderr, took) = fdlab_within(&args, DEADLINE);
    assert_eq!(code, Some(1), "{args:?}: not refused in {took:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("fdlab: error:"), "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
    assert!(!Path::new(&out).exists());
}

#[test]
fn a_run_of_too_many_events_is_refused_with_its_key_and_figure() {
    refused(
        &mesh("", "1ns", "3s"),
        &[],
        &[
            "big.toml:9: `detectors[0].interval`",
            "1.5e12",
            "the limit is 1e10, --max-events raises it",
        ],
    );
    // A lower limit refuses a smaller run; a higher one lets it through.
    refused(
        &mesh("", "1ms", "3s"),
        &["--max-events", "1e5"],
        &["--max-events"],
    );
    refused(
        &mesh("", "1s", "3s"),
        &["--max-events", "nan"],
        &["--max-events"],
    );
    let layers = "duration = \"1h\"\n[topology]\nkind = \"dataflow\"\nlayers = [50000, 2]\n[[detectors]]\nname = \"fixed\"\nkind = \"fixed-timeout\"\n";
    refused(layers, &[], &["workload.interval", "100000 source links"]);
}

#[test]
fn times_beyond_virtual_time_are_refused_with_their_key() {
    let huge = "18446744073709551615ns";
    let mut whole = mesh("", "1s", "3s");
    whole = whole.replace("duration = \"1m\"", &format!("duration = \"{huge}\""));
    refused(&whole, &[], &["`duration`", "146 years"]);
    refused(
        &mesh("", "1s", "9223372036854775807ns"),
        &[],
        &["detectors[0].timeout"],
    );
    refused(
        &mesh(
            "[[clocks]]\nnode = \"n1\"\noffset = \"+2500000h\"\n",
            "1s",
            "3s",
        ),
        &[],
        &["clocks[0].offset"],
    );
    let bursts = "[[faults]]\nkind = \"loss\"\nprobability = 0.5\nburst = \"1ns\"\ngap = \"1ns\"\nat = \"1s\"\n";
    refused(
        &mesh(bursts, "1s", "3s"),
        &[],
        &["faults[0].burst", "loss bursts"],
    );
}

#[test]
fn absurd_jobs_and_seeds_are_refused() {
    refused(&mesh("", "1s", "3s"), &["--jobs", "100000"], &["--jobs"]);
    refused(
        &mesh("", "1s", "3s"),
        &["--seeds", "4000000000"],
        &["--seeds"],
    );
}

#[test]
fn a_dry_run_prints_every_scenario_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, stdout, stderr, _) = fdlab_within(
        &["run", "--dry-run", "--out", out.to_str().unwrap()],
        DEADLINE,
    );
    assert_eq!(code, Some(0), "{stderr}");
    for name in ["crash-mesh", "pipeline-freeze", "backpressure-cascade"] {
        let line = stdout.lines().find(|l| l.starts_with(name)).unwrap();
        // runs, events per run, events, MiB per run, the largest source.
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert!(fields[2].parse::<f64>().unwrap() > 1e4, "{line}");
    }
    assert!(stdout.contains("nothing was run"), "{stdout}");
    assert!(!out.exists());
    // And a huge scenario's estimate, without running it.
    let file = dir.path().join("huge.toml");
    std::fs::write(&file, mesh("", "1ns", "3s")).unwrap();
    let args = [
        "run",
        file.to_str().unwrap(),
        "--max-events",
        "1e13",
        "--dry-run",
    ];
    let (code, stdout, stderr, took) = fdlab_within(&args, DEADLINE);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("1.512e12"), "{stdout}");
    assert!(took < Duration::from_secs(10));
}
