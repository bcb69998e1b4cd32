//! End-to-end runs of `fdlab sweep` and `fdlab merge`: shards merge to the
//! unsharded bytes, a resumed sweep equals an uninterrupted one, bad input
//! writes nothing.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::sweep_fixture::{assert_same_files, setup, SCENARIO};
use common::{fdlab, text};

fn sweep(scenario: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "sweep",
        scenario,
        "--vary",
        "phi.threshold=1,2,4,8,12",
        "--vary",
        "phi.acceptable_heartbeat_pause=0s,200ms",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    fdlab(&args)
}

#[test]
fn three_shards_merged_equal_the_unsharded_sweep_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = setup(dir.path());
    let whole = dir.path().join("whole");
    let out = sweep(&scenario, &whole, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Pareto front"), "{stdout}");
    let csv = fs::read_to_string(whole.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 11, "a header and 10 points");
    assert!(csv.starts_with("point,threshold,acceptable_heartbeat_pause,runs,"));
    assert!(csv.lines().skip(1).any(|l| l.ends_with(",true")));
    assert!(fs::read_to_string(whole.join("tradeoff.svg"))
        .unwrap()
        .contains("data-chart=\"sweep\""));

    let shards: Vec<_> = (0..3)
        .map(|i| dir.path().join(format!("shard{i}")))
        .collect();
    for (i, shard) in shards.iter().enumerate() {
        let spec = format!("{i}/3");
        let out = sweep(&scenario, shard, &["--shard", &spec, "--jobs", "1"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            !shard.join("sweep.csv").exists(),
            "a shard alone has no results"
        );
    }
    // A shard index from the environment, as a Kubernetes Indexed Job gives it.
    let env_shard = dir.path().join("env-shard");
    let out = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(["sweep", &scenario, "--vary", "phi.threshold=1,2,4,8,12"])
        .args(["--vary", "phi.acceptable_heartbeat_pause=0s,200ms"])
        .args(["--shard-count", "3", "--out", env_shard.to_str().unwrap()])
        .env("JOB_COMPLETION_INDEX", "1")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        fs::read(env_shard.join("units.csv")).unwrap(),
        fs::read(shards[1].join("units.csv")).unwrap()
    );

    let merged = dir.path().join("merged");
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(|s| s.to_str().unwrap()));
    args.extend(["--out", merged.to_str().unwrap()]);
    let out = fdlab(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_files(&whole, &merged);

    // Two of three shards: the missing units are named.
    let partial = dir.path().join("partial");
    let out = fdlab(&[
        "merge",
        shards[0].to_str().unwrap(),
        shards[2].to_str().unwrap(),
        "--out",
        partial.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("missing"),
        "{}",
        text(&out.stderr)
    );
    assert!(!partial.exists());
}

#[test]
fn a_resumed_sweep_equals_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = setup(dir.path());
    let whole = dir.path().join("whole");
    assert!(sweep(&scenario, &whole, &[]).status.success());

    // An interrupted sweep: the plan, some finished units in the journal, and
    // a last line torn by a kill in the middle of a write.
    let resumed = dir.path().join("resumed");
    fs::create_dir(&resumed).unwrap();
    fs::copy(whole.join("sweep.toml"), resumed.join("sweep.toml")).unwrap();
    let units = fs::read_to_string(whole.join("units.csv")).unwrap();
    let lines: Vec<&str> = units.lines().collect();
    let mut journal: String = lines[..12].iter().map(|l| format!("{l}\n")).collect();
    journal.push_str(&lines[12][..lines[12].len() / 2]);
    fs::write(resumed.join("journal.csv"), journal).unwrap();

    // Without --resume nothing is touched.
    let out = sweep(&scenario, &resumed, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--resume"));
    assert!(resumed.join("journal.csv").exists());

    let out = sweep(&scenario, &resumed, &["--resume"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("11 of 40 units already done"),
        "{}",
        text(&out.stdout)
    );
    assert_same_files(&whole, &resumed);
    assert!(!resumed.join("journal.csv").exists());

    // Resuming into a directory of another sweep is refused.
    let out = fdlab(&[
        "sweep",
        &scenario,
        "--vary",
        "phi.threshold=3,5",
        "--out",
        resumed.to_str().unwrap(),
        "--resume",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("different sweep"));
    assert_same_files(&whole, &resumed);
}

/// Whole unit lines in a sweep's journal (its header and a line still being
/// written left out); 0 while the journal does not exist.
fn journal_units(journal: &Path) -> usize {
    let text = fs::read_to_string(journal).unwrap_or_default();
    text.matches('\n').count().saturating_sub(1)
}

#[test]
fn ctrl_c_keeps_finished_units_and_resume_completes_the_same_sweep() {
    let dir = tempfile::tempdir().unwrap();
    // 40 points x 24 seeds of 10 simulated minutes on one thread: 24
    // simulations in a row (a tenth of a second each in a debug build),
    // each journaled as it ends, so an interrupt sent as the first ends
    // lands seconds before the last would.
    let path = dir.path().join("long.toml");
    let long = SCENARIO.replacen("duration = \"60s\"", "duration = \"600s\"", 1);
    assert_ne!(long, SCENARIO);
    fs::write(&path, long).unwrap();
    let scenario = path.to_str().unwrap().to_string();
    let (points, seeds) = (40, 24);
    let args = |out: &Path| {
        vec![
            "sweep".to_string(),
            scenario.clone(),
            "--vary".into(),
            format!("phi.threshold=0.5..16:log{points}"),
            "--seeds".into(),
            seeds.to_string(),
            "--jobs".into(),
            "1".into(),
            "--out".into(),
            out.to_str().unwrap().to_string(),
        ]
    };
    let whole = dir.path().join("whole");
    let out = fdlab(&args(&whole).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", text(&out.stderr));

    let cut = dir.path().join("cut");
    let journal = cut.join("journal.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args(&cut))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once some units are journaled (the handler is set before the
    // journal is created), not after a guessed delay: the sweep must still
    // be running then, and must not have finished, or the test fails.
    let waiting = Instant::now();
    while journal_units(&journal) == 0 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the sweep ended ({status}) before journaling a unit: nothing to interrupt");
        }
        assert!(
            waiting.elapsed() < Duration::from_secs(120),
            "no unit journaled within 120 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the sweep was not interrupted (it finished or died otherwise): {err}"
    );
    // It says so and kept a clean journal of whole seeds, no results.
    assert!(
        err.contains("interrupted") && err.contains("--resume"),
        "{err}"
    );
    let kept = journal_units(&journal);
    assert!(
        kept > 0 && kept < points * seeds && kept % points == 0,
        "{kept} units journaled"
    );
    assert!(
        err.contains(&format!("{kept} of {} units done", points * seeds)),
        "{err}"
    );
    assert!(!cut.join("sweep.csv").exists());
    assert!(!cut.join("units.csv").exists());

    let mut resume = args(&cut);
    resume.push("--resume".into());
    let out = fdlab(&resume.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!("{kept} of {} units already done", points * seeds)),
        "{}",
        text(&out.stdout)
    );
    assert_same_files(&whole, &cut);
}

#[test]
fn bad_vary_specs_and_keys_are_one_line_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = setup(dir.path());
    let out_dir = dir.path().join("out");
    for (vary, needle) in [
        ("phi.threshold=8..1:1", "empty"),
        ("phi.thresh=1,2", "thresh"),
        ("nobody.threshold=1,2", "neither a detector"),
        ("phi.threshold=1..4", "needs a step"),
        ("phi.threshold=-1,2", "threshold"),
        ("phi.threshold", "KEY=SPEC"),
    ] {
        let out = fdlab(&[
            "sweep",
            &scenario,
            "--vary",
            vary,
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1), "{vary}");
        let err = text(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{vary}: {err}");
        assert!(err.contains(needle), "{vary}: {err}");
        assert!(!out_dir.exists(), "{vary}: wrote {}", out_dir.display());
    }
    let out = sweep(&scenario, &out_dir, &["--shard", "3/3"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--shard"));
    let out = fdlab(&["merge", dir.path().join("nothing").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("sweep.toml"));
}

/// The `pareto` rows of a sweep's `pareto.csv`, as the value of `column`.
fn front_column(dir: &Path, column: &str) -> Vec<f64> {
    let mut r = csv::Reader::from_path(dir.join("pareto.csv")).unwrap();
    let at = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == column)
        .unwrap();
    r.records()
        .map(|row| row.unwrap()[at].parse::<f64>().unwrap())
        .collect()
}

/// The README's two example sweeps draw a real trade-off: a front of several
/// points from many false positives to none, not one point at 0.
#[test]
fn the_readme_example_sweeps_draw_a_trade_off() {
    let dir = tempfile::tempdir().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let cases = [
        (
            vec![
                "sweep",
                "scenarios/examples/crash-under-pauses.toml",
                "--vary",
                "phi-accrual.acceptable_heartbeat_pause=0s..6s:500ms",
            ],
            "false_failed_per_pair_hour",
        ),
        (
            vec![
                "sweep",
                "scenarios/examples/orleans-crash-under-pauses.toml",
                "--judge",
                "phi-5s",
                "--vary",
                "phi-accrual.acceptable_heartbeat_pause=0s..30s:2500ms",
            ],
            "false_per_node_hour",
        ),
    ];
    for (i, (args, column)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("s{i}"));
        let mut args = args.clone();
        let out_text = out.to_str().unwrap().to_string();
        args.extend(["--out", &out_text]);
        let o = Command::new(env!("CARGO_BIN_EXE_fdlab"))
            .args(&args)
            .current_dir(root)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        let rates = front_column(&out, column);
        assert!(rates.len() >= 3, "{args:?}: front {rates:?}");
        assert!(rates.first().unwrap() > &0.0, "{args:?}: {rates:?}");
        assert_eq!(rates.last(), Some(&0.0), "{args:?}: {rates:?}");
        assert!(!text(&o.stdout).contains("the front is flat"));
    }
}
