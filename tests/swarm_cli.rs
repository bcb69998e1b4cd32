//! `fdlab swarm` end to end (SPEC §11): a swarm of long freezes finds the
//! false Failed that default dataflow-decay makes after one and shrinks it
//! to that one freeze, whose file replays to the same violation; a swarm
//! where every property holds exits 0; the same arguments write the same
//! files for any `--jobs`, and a time budget's runs are the first runs of
//! the full swarm; bad input is one error and no file.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{assert_one_error_line, fdlab, text};
use fdlab_protocol::Nanos;
use fdlab_reports::swarm::check_detectors;
use fdlab_scenarios::load_scenario_with_swarm;
use fdlab_sim::engine;
use fdlab_sim::scenario::{Expect, FaultKind, Property};

const FREEZES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scenarios/swarm/pipeline-freezes.toml"
);
const CRASHES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scenarios/swarm/mesh-crashes.toml"
);
const LOCK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scenarios/swarm/lock-dead-peers.toml"
);

/// `fdlab swarm SCENARIO --runs N --jobs J --out DIR [extra]`.
fn swarm(
    scenario: &str,
    runs: &str,
    jobs: &str,
    out: &Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "swarm",
        scenario,
        "--runs",
        runs,
        "--jobs",
        jobs,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    fdlab(&args)
}

/// The rows of `swarm.csv`, each as (column name, value) pairs.
fn findings(dir: &Path) -> Vec<Vec<(String, String)>> {
    let mut r = csv::Reader::from_path(dir.join("swarm.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|row| {
            let row = row.unwrap();
            header
                .iter()
                .cloned()
                .zip(row.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn field<'a>(row: &'a [(String, String)], name: &str) -> &'a str {
    &row.iter().find(|(k, _)| k == name).expect(name).1
}

/// The value after `flag` in a command line.
fn arg_after<'a>(command: &'a str, flag: &str) -> &'a str {
    let mut words = command.split_whitespace();
    words.find(|w| *w == flag).expect(flag);
    words.next().expect(flag)
}

#[test]
fn decay_false_failed_after_a_freeze_is_found_and_shrunk_to_that_freeze() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = swarm(FREEZES, "6", "2", &out, &[]);
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("runs/s"), "{stdout}");
    let rows = findings(&out);
    let row = rows
        .iter()
        .find(|r| field(r, "property") == "no_false_failed" && field(r, "subject") == "decay")
        .unwrap_or_else(|| panic!("no false Failed by decay: {stdout}"));
    assert_eq!(field(row, "minimal_faults"), "1", "{row:?}");
    assert!(field(row, "faults").parse::<u32>().unwrap() >= 1);
    assert_eq!(field(row, "shrink_complete"), "true");
    assert!(field(row, "shrink_tried").parse::<u64>().unwrap() > 0);

    // The reproducer: one long freeze, to be detected, in a plain scenario.
    let file = out.join(field(row, "minimal_file"));
    let (minimal, tables) = load_scenario_with_swarm(&file).unwrap();
    assert!(tables.swarm.is_none() && tables.properties.is_some());
    assert_eq!(minimal.faults.len(), 1);
    let freeze = &minimal.faults[0];
    assert_eq!(freeze.kind, Some(FaultKind::Pause));
    assert!(freeze.duration.unwrap() >= Nanos::from_secs(15));
    assert_eq!(freeze.expect, Some(Expect::Detect));
    let end = freeze.at.unwrap() + freeze.duration.unwrap();

    // Its run, checked again: decay's false Failed, in the second after
    // the freeze ends.
    let replay = field(row, "replay");
    let seed: u64 = arg_after(replay, "--seed").parse().unwrap();
    let (outcome, _) = engine::run(&minimal, seed, false);
    let checks = tables.property_setup().checks(minimal.swarm_kind());
    let v = check_detectors(&outcome, &checks);
    let after: Vec<_> = v
        .iter()
        .filter(|v| v.property == Property::NoFalseFailed && v.subject == "decay")
        .collect();
    assert!(!after.is_empty(), "{v:?}");
    assert!(
        after
            .iter()
            .all(|v| v.at >= end && v.at < end + Nanos::from_secs(1)),
        "{after:?} (freeze ends at {end})"
    );

    // And `fdlab replay` shows it: decay declares the pair's target Failed
    // right after the freeze.
    let (monitor, target) = arg_after(replay, "--pair").split_once(',').unwrap();
    let replayed = dir.path().join("replay");
    let o = fdlab(&[
        "replay",
        file.to_str().unwrap(),
        "--seed",
        &seed.to_string(),
        "--pair",
        &format!("{monitor},{target}"),
        "--out",
        replayed.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let trace = fs::read_to_string(replayed.join("trace.csv")).unwrap();
    let failed_after: Vec<&str> = trace
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f.len() >= 6
                && f[1] == "verdict"
                && (f[2], f[3], f[4], f[5]) == (monitor, target, "decay", "failed")
                && Nanos::parse_millis(f[0]).is_ok_and(|t| t >= end)
        })
        .collect();
    assert!(
        !failed_after.is_empty(),
        "no Failed after {end} in the trace"
    );
}

/// SPEC §10 in a swarm: lock-server crashes longer than the bound are
/// violations by the policies that keep dialling a dead peer (`rustfs`,
/// `evict-on-timeout`), never by the breaker or `dsync`; each is shrunk
/// to one crash, and its reproducer runs with `fdlab run`.
#[test]
fn a_lock_swarm_finds_the_policies_that_keep_using_a_dead_peer() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = swarm(LOCK, "12", "2", &out, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let rows = findings(&out);
    let who: Vec<&str> = rows.iter().map(|r| field(r, "subject")).collect();
    assert!(who.contains(&"rustfs"), "{who:?}");
    assert!(who.contains(&"evict-on-timeout"), "{who:?}");
    assert!(!who.contains(&"rustfs-breaker"), "{who:?}");
    assert!(!who.contains(&"dsync"), "{who:?}");
    for r in &rows {
        assert_eq!(field(r, "property"), "stop_using_dead_within");
        assert_eq!(field(r, "minimal_faults"), "1", "{r:?}");
        let replay = field(r, "replay");
        assert!(replay.starts_with("fdlab run "), "{replay}");
        let file = out.join(field(r, "minimal_file"));
        let run = fdlab(&[
            "run",
            file.to_str().unwrap(),
            "--seed",
            arg_after(replay, "--seed"),
            "--out",
            dir.path().join("replay").to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", text(&run.stderr));
        // The policy never stopped dialling the crashed server.
        assert!(
            text(&run.stdout).contains("(0/1 stopped)"),
            "{}",
            text(&run.stdout)
        );
    }
}

#[test]
fn a_swarm_where_every_property_holds_exits_0_and_writes_no_reproducer() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = swarm(CRASHES, "40", "2", &out, &[]);
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    assert!(
        stdout.contains("0 of 40 runs violated a property"),
        "{stdout}"
    );
    for property in ["detect_within", "no_false_failed", "recover_within"] {
        let line = stdout.lines().find(|l| l.starts_with(property)).unwrap();
        assert!(line.contains("held") && line.contains("0/40"), "{line}");
    }
    assert!(findings(&out).is_empty());
    let runs = fs::read_to_string(out.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 41);
    let names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with("minimal-")),
        "{names:?}"
    );
}

/// Every file of a swarm's directory, by name.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p: PathBuf = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_same_swarm_writes_the_same_files_for_any_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    let a = swarm("pipeline-freeze", "5", "1", &one, &[]);
    let b = swarm("pipeline-freeze", "5", "2", &two, &[]);
    assert_eq!(a.status.code(), Some(1), "{}", text(&a.stderr));
    assert_eq!(b.status.code(), Some(1), "{}", text(&b.stderr));
    let (fa, fb) = (files(&one), files(&two));
    assert!(fa.iter().filter(|(n, _)| n.starts_with("minimal-")).count() >= 2);
    assert_eq!(
        fa.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        fb.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for ((name, x), (_, y)) in fa.iter().zip(&fb) {
        assert!(x == y, "{name} differs between --jobs 1 and 2");
    }
    // So does standard output, but for the directory and the speed line.
    let clean = |o: &std::process::Output, d: &Path| -> String {
        text(&o.stdout)
            .replace(d.to_str().unwrap(), "DIR")
            .lines()
            .filter(|l| !l.starts_with("speed:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(clean(&a, &one), clean(&b, &two));
}

#[test]
fn a_time_budget_stops_with_the_first_runs_of_the_full_swarm() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut");
    let o = swarm(CRASHES, "1000000", "2", &cut, &["--time-budget", "300ms"]);
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("time budget 300ms:"), "{stdout}");
    let runs = fs::read_to_string(cut.join("runs.csv")).unwrap();
    let done = runs.lines().count() - 1;
    assert!(done > 0 && done < 1_000_000, "{done} runs");
    let full = dir.path().join("full");
    let o = swarm(CRASHES, &done.to_string(), "1", &full, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(runs, fs::read_to_string(full.join("runs.csv")).unwrap());
}

#[test]
fn bad_input_is_one_error_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let with = |table: &str| {
        let path = dir.path().join("s.toml");
        let base = fs::read_to_string(FREEZES).unwrap();
        let cut = base.find("[swarm]").unwrap();
        fs::write(&path, format!("{}{table}\n", &base[..cut])).unwrap();
        path
    };
    let file_cases: [(&str, &[&str]); 7] = [
        (
            "[properties]\nno_false_faild = true",
            &[
                "s.toml:",
                "`properties.no_false_faild`",
                "did you mean `no_false_failed`",
            ],
        ),
        (
            "[swarm]\nkinds = [\"puase\"]",
            &[
                "`swarm.kinds`",
                "unknown value `puase` (did you mean `pause`?)",
            ],
        ),
        (
            "[swarm]\nkinds = [\"table-outage\"]",
            &["`swarm.kinds[0]`", "membership table"],
        ),
        (
            "[swarm.pause]\nrate = 2",
            &["`swarm.pause.rate`", "between 0 and 1"],
        ),
        (
            "[swarm.pause]\nduration = [\"40s\", \"15s\"]",
            &["`swarm.pause.duration`", "40s is more than 15s"],
        ),
        (
            "[properties]\nrecover_within = \"0s\"",
            &["`properties.recover_within`", "positive"],
        ),
        (
            "[properties]\ndetect_within = \"-3s\"",
            &["`properties.detect_within`", "negative"],
        ),
    ];
    for (table, needles) in file_cases {
        let path = with(table);
        let o = swarm(path.to_str().unwrap(), "3", "1", &out, &[]);
        assert_one_error_line(&o, needles);
        assert!(!out.exists(), "{table}: wrote {}", out.display());
    }
    // A lock scenario's properties are its own; its swarm draws only the
    // faults a lock run takes.
    let lock_with = |table: &str| {
        let path = dir.path().join("l.toml");
        let base = fs::read_to_string(LOCK).unwrap();
        let cut = base.find("[swarm]").unwrap();
        fs::write(&path, format!("{}{table}\n", &base[..cut])).unwrap();
        path
    };
    let lock_cases: [(&str, &[&str]); 2] = [
        (
            "[properties]\ndetect_within = \"30s\"",
            &["`properties.detect_within`", "a lock-RPC scenario"],
        ),
        (
            "[swarm]\nkinds = [\"clock\"]",
            &["`swarm.kinds[0]`", "does not apply to a lock-RPC scenario"],
        ),
    ];
    for (table, needles) in lock_cases {
        let path = lock_with(table);
        let o = swarm(path.to_str().unwrap(), "3", "1", &out, &[]);
        assert_one_error_line(&o, needles);
        assert!(!out.exists(), "{table}: wrote {}", out.display());
    }
    let path = with("[properties]\nstop_using_dead_within = \"30s\"");
    let o = swarm(path.to_str().unwrap(), "3", "1", &out, &[]);
    assert_one_error_line(
        &o,
        &["`properties.stop_using_dead_within`", "lock-RPC scenarios"],
    );
    let arg_cases: [(&[&str], &[&str]); 3] = [
        (
            &["swarm", FREEZES, "--runs", "0"],
            &["--runs: must be at least 1"],
        ),
        (
            &["swarm", FREEZES, "--runs", "3", "--time-budget", "0s"],
            &["--time-budget", "positive"],
        ),
        (
            &["swarm", FREEZES, "--runs", "3", "--time-budget", "soon"],
            &["--time-budget", "unknown unit"],
        ),
    ];
    for (args, needles) in arg_cases {
        let mut args = args.to_vec();
        args.extend(["--out", out.to_str().unwrap()]);
        assert_one_error_line(&fdlab(&args), needles);
        assert!(!out.exists(), "{args:?}: wrote {}", out.display());
    }
}
