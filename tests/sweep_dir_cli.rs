//! End to end: a sweep's directory never loses work. One sweep at a time
//! writes into it (a lock holding the writer's pid), a journal line seen
//! twice is one unit, a unit the plan does not have is an error, `fdlab
//! merge` never overwrites another sweep or an interrupted one's journal,
//! and temporary files left by a kill are cleaned up.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::sweep_fixture::{setup, FILES, SCENARIO};
use common::{fdlab, text};

/// 4 points x 4 seeds.
fn sweep_args<'a>(scenario: &'a str, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "sweep",
        scenario,
        "--vary",
        "phi.threshold=1,4,8,12",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args
}

fn sweep(scenario: &str, out: &Path, extra: &[&str]) -> Output {
    fdlab(&sweep_args(scenario, out, extra))
}

fn assert_same_files(a: &Path, b: &Path) {
    for f in FILES {
        let (x, y) = (fs::read(a.join(f)), fs::read(b.join(f)));
        assert!(
            x.is_ok() && x.ok() == y.ok(),
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

/// Every name in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A finished sweep, and an interrupted one of the same plan whose journal
/// holds `journal` (built from the finished sweep's unit lines).
fn interrupted(dir: &Path, journal: impl Fn(&[&str]) -> String) -> (String, PathBuf, PathBuf) {
    let scenario = setup(dir);
    let whole = dir.join("whole");
    let out = sweep(&scenario, &whole, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cut = dir.join("cut");
    fs::create_dir(&cut).unwrap();
    fs::copy(whole.join("sweep.toml"), cut.join("sweep.toml")).unwrap();
    let units = fs::read_to_string(whole.join("units.csv")).unwrap();
    let lines: Vec<&str> = units.lines().collect();
    fs::write(cut.join("journal.csv"), journal(&lines)).unwrap();
    (scenario, whole, cut)
}

fn lines(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn a_duplicated_journal_line_is_one_unit_and_the_sweep_writes_its_results() {
    let dir = tempfile::tempdir().unwrap();
    // Every unit journaled, one of them twice (two writers, or a retried
    // append): the sweep is complete.
    let (scenario, whole, cut) = interrupted(dir.path(), |l| {
        let mut all = l.to_vec();
        all.push(l[3]);
        lines(&all)
    });
    let out = sweep(&scenario, &cut, &["--resume"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("shard done"), "{stdout}");
    assert!(stdout.contains("16 of 16 units already done"), "{stdout}");
    assert_same_files(&whole, &cut);
    assert!(!cut.join("journal.csv").exists());
}

#[test]
fn a_conflicting_duplicate_or_a_unit_outside_the_plan_is_an_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    // Line 4 again with other figures (its mistakes field changed).
    let (scenario, _whole, cut) = interrupted(dir.path(), |l| {
        let mut fields: Vec<String> = l[3].split(',').map(String::from).collect();
        fields[5] = (fields[5].parse::<u64>().unwrap() + 1).to_string();
        let mut all: Vec<String> = l[..6].iter().map(|s| s.to_string()).collect();
        all.push(fields.join(","));
        lines(&all.iter().map(String::as_str).collect::<Vec<_>>())
    });
    let before = fs::read(cut.join("journal.csv")).unwrap();
    let out = sweep(&scenario, &cut, &["--resume"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("journal.csv:7:"), "{err}");
    assert!(err.contains("line 4"), "{err}");
    assert_eq!(fs::read(cut.join("journal.csv")).unwrap(), before);
    assert_eq!(names(&cut), ["journal.csv", "sweep.toml"]);

    // A seed the plan does not have: the count could pass the plan's.
    let units = fs::read_to_string(_whole.join("units.csv")).unwrap();
    let first = units.lines().nth(1).unwrap();
    let (point, rest) = first.split_once(',').unwrap();
    let (_seed, rest) = rest.split_once(',').unwrap();
    let stray = format!("{point},99,{rest}\n");
    let mut journal: String = units.lines().take(3).map(|l| format!("{l}\n")).collect();
    journal.push_str(&stray);
    fs::write(cut.join("journal.csv"), &journal).unwrap();
    let out = sweep(&scenario, &cut, &["--resume"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("journal.csv:4:") && err.contains("seed 99"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(cut.join("journal.csv")).unwrap(),
        journal
    );
}

/// Whole unit lines in a sweep's journal; 0 while it does not exist.
fn journal_units(journal: &Path) -> usize {
    let text = fs::read_to_string(journal).unwrap_or_default();
    text.matches('\n').count().saturating_sub(1)
}

/// The pid of a process that has ended (and been reaped).
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn a_second_sweep_into_a_running_sweeps_directory_is_refused_naming_its_pid() {
    let dir = tempfile::tempdir().unwrap();
    // 40 points x 24 seeds of 10 simulated minutes on one thread: seconds.
    let path = dir.path().join("long.toml");
    let long = SCENARIO.replacen("duration = \"60s\"", "duration = \"600s\"", 1);
    fs::write(&path, long).unwrap();
    let scenario = path.to_str().unwrap().to_string();
    let out = dir.path().join("out");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "sweep",
            &scenario,
            "--vary",
            "phi.threshold=0.5..16:log40",
            "--seeds",
            "24",
            "--jobs",
            "1",
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let mut first = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args(&[]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let waiting = Instant::now();
    while journal_units(&out.join("journal.csv")) == 0 {
        if let Some(status) = first.try_wait().unwrap() {
            panic!("the sweep ended ({status}) before journaling a unit");
        }
        assert!(waiting.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(5));
    }
    // The same command with --resume while the first runs: both would
    // journal the same units.
    let second = fdlab(
        &args(&["--resume"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let still_running = first.try_wait().unwrap().is_none();
    let first_pid = first.id();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(first_pid).unwrap());
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
    let first_out = first.wait_with_output().unwrap();
    let err = text(&second.stderr);
    assert_eq!(
        second.status.code(),
        Some(1),
        "{err}{}",
        text(&second.stdout)
    );
    assert!(still_running, "the first sweep ended too early to test");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&out.display().to_string()) && err.contains(&format!("pid {first_pid}")),
        "{err}"
    );
    // The interrupted first sweep removed its lock on the way out.
    assert!(
        text(&first_out.stderr).contains("interrupted"),
        "{}",
        text(&first_out.stderr)
    );
    assert!(!out.join("sweep.lock").exists());
    assert!(out.join("journal.csv").exists());
}

#[test]
fn a_stale_lock_of_a_dead_process_is_taken_over_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = setup(dir.path());
    let out = dir.path().join("out");
    fs::create_dir(&out).unwrap();
    let dead = dead_pid();
    fs::write(out.join("sweep.lock"), format!("{dead}\n")).unwrap();
    let o = sweep(&scenario, &out, &[]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("note") && err.contains(&format!("pid {dead}")),
        "{err}"
    );
    assert!(out.join("sweep.csv").exists());
    assert!(!out.join("sweep.lock").exists());
}

/// Three shards of the sweep, and what merging them must write.
fn shards(dir: &Path) -> (String, Vec<PathBuf>, PathBuf) {
    let scenario = setup(dir);
    let whole = dir.join("whole");
    assert!(sweep(&scenario, &whole, &[]).status.success());
    let shards: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("shard{i}"))).collect();
    for (i, shard) in shards.iter().enumerate() {
        let spec = format!("{i}/3");
        let o = sweep(&scenario, shard, &["--shard", &spec]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    (scenario, shards, whole)
}

fn merge(shards: &[PathBuf], out: &Path) -> Output {
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(|s| s.to_str().unwrap()));
    args.extend(["--out", out.to_str().unwrap()]);
    fdlab(&args)
}

#[test]
fn merge_refuses_an_out_holding_another_sweep_or_an_interrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let (scenario, shards, whole) = shards(dir.path());

    // Another, finished sweep.
    let other = dir.path().join("other");
    let o = fdlab(&[
        "sweep",
        &scenario,
        "--vary",
        "phi.threshold=2,3",
        "--out",
        other.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let before: Vec<Vec<u8>> = FILES
        .iter()
        .map(|f| fs::read(other.join(f)).unwrap())
        .collect();
    let o = merge(&shards, &other);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(other.to_str().unwrap()), "{err}");
    for (f, bytes) in FILES.iter().zip(&before) {
        assert_eq!(&fs::read(other.join(f)).unwrap(), bytes, "{f} changed");
    }

    // An interrupted sweep of the same plan: its journal is its work.
    let cut = dir.path().join("cut");
    fs::create_dir(&cut).unwrap();
    fs::copy(whole.join("sweep.toml"), cut.join("sweep.toml")).unwrap();
    let units = fs::read_to_string(whole.join("units.csv")).unwrap();
    let journal: String = units.lines().take(5).map(|l| format!("{l}\n")).collect();
    fs::write(cut.join("journal.csv"), &journal).unwrap();
    let o = merge(&shards, &cut);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("journal.csv") || err.contains("interrupted"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(cut.join("journal.csv")).unwrap(),
        journal
    );
    assert_eq!(names(&cut), ["journal.csv", "sweep.toml"]);

    // A shard directory is not the merge's result either.
    let shard0 = fs::read(shards[0].join("units.csv")).unwrap();
    let o = merge(&shards, &shards[0]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(fs::read(shards[0].join("units.csv")).unwrap(), shard0);
}

#[test]
fn merge_writes_a_fresh_directory_whole_and_may_redo_its_own_result() {
    let dir = tempfile::tempdir().unwrap();
    let (_scenario, shards, whole) = shards(dir.path());
    let merged = dir.path().join("merged");
    let o = merge(&shards, &merged);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_same_files(&whole, &merged);
    let mut files = FILES.to_vec();
    files.sort_unstable();
    assert_eq!(names(&merged), files);
    // The same merge again over its own result: the same bytes.
    let o = merge(&shards, &merged);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_same_files(&whole, &merged);
    // An empty directory (made by a CI step, say) is fine too.
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let o = merge(&shards, &empty);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_same_files(&whole, &empty);
    // No temporary directory is left beside them.
    let left: Vec<String> = names(dir.path())
        .into_iter()
        .filter(|n| n.starts_with(".fdlab-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn temporaries_left_by_a_killed_writer_are_removed_and_no_others() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = setup(dir.path());
    let out = dir.path().join("out");
    fs::create_dir(&out).unwrap();
    let dead = dead_pid();
    let alive = std::process::id();
    let stale = format!(".fdlab-{dead}-aB3dE9.tmp");
    let busy = format!(".fdlab-{alive}-aB3dE9.tmp");
    // A temporary of an older fdlab (no pid in its name), from an hour ago.
    let legacy = ".fdlab-Xy12Zq.tmp";
    let mine = [
        "notes.fdlab-1.tmp",
        ".fdlab-notes.txt",
        "fdlab-1-aB3dE9.tmp",
    ];
    for name in [stale.as_str(), busy.as_str(), legacy]
        .into_iter()
        .chain(mine)
    {
        fs::write(out.join(name), "x").unwrap();
    }
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(out.join(legacy))
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let o = sweep(&scenario, &out, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let left = names(&out);
    assert!(!left.contains(&stale), "{left:?}");
    assert!(!left.contains(&legacy.to_string()), "{left:?}");
    assert!(left.contains(&busy), "a live writer's temporary: {left:?}");
    for name in mine {
        assert!(left.contains(&name.to_string()), "{name}: {left:?}");
    }

    // `fdlab trace --out FILE` cleans the file's directory too.
    let traced = dir.path().join("traced");
    fs::create_dir(&traced).unwrap();
    fs::write(traced.join(&stale), "x").unwrap();
    let events = dir.path().join("events.csv");
    fs::write(&events, "time_ms,event\n0,heartbeat\n1000,query\n").unwrap();
    let o = fdlab(&[
        "trace",
        "--detector",
        "kind=fixed-timeout",
        "--out",
        traced.join("q.csv").to_str().unwrap(),
        events.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(names(&traced), ["q.csv"]);
}

#[test]
fn a_finished_sweep_says_so_and_force_runs_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    let o = out.to_str().unwrap();
    let args = [
        "sweep",
        "crash-mesh",
        "--vary",
        "phi-akka.threshold=4,8",
        "--seeds",
        "2",
        "--out",
        o,
    ];
    assert!(fdlab(&args).status.success());
    let again = fdlab(&args);
    assert_eq!(again.status.code(), Some(1));
    let err = text(&again.stderr);
    assert!(
        err.contains("holds this sweep, finished") && err.contains("--force"),
        "{err}"
    );
    std::fs::write(out.join("mine.txt"), "keep me").unwrap();
    let mut forced = args.to_vec();
    forced.push("--force");
    let run = fdlab(&forced);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(out.join("sweep.csv").is_file());
    assert_eq!(
        std::fs::read_to_string(out.join("mine.txt")).unwrap(),
        "keep me"
    );
}
