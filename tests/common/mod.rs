//! What the end-to-end tests share: running the `fdlab` binary.
#![allow(dead_code)] // each test crate uses its own subset

pub mod slurm_cluster;
pub mod sweep_fixture;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `fdlab` with `args`, without a CI job-summary file to append to.
pub fn fdlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("runs the fdlab binary")
}

/// Runs `scenario` with `seeds` seeds on `jobs` threads into `out`, which
/// must succeed; its standard output.
pub fn run_ok(scenario: &str, seeds: &str, jobs: &str, out: &std::path::Path) -> String {
    let o = fdlab(&[
        "run",
        scenario,
        "--seeds",
        seeds,
        "--jobs",
        jobs,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// The column `name` of `row` in a CSV with `header` (no quoted fields).
pub fn column<'a>(header: &str, row: &'a str, name: &str) -> &'a str {
    let i = header.split(',').position(|h| h == name).expect(name);
    row.split(',').nth(i).unwrap()
}

/// Output bytes as text (lossily: a failing test should still print them).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `fdlab` with `args` and its standard output on a pipe whose reader is
/// gone (`fdlab ... | head -1` after `head` exited): every write to standard
/// output fails with EPIPE. The reader is closed as soon as the process
/// starts, long before any command has anything to print.
pub fn fdlab_with_closed_stdout(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs the fdlab binary");
    drop(child.stdout.take());
    child
        .wait_with_output()
        .expect("waits for the fdlab binary")
}

/// Runs `fdlab` with `args` under an address-space limit of `limit_mib` MiB
/// (`ulimit -v`), so that a run that reads without end fails on its own
/// instead of taking the machine's memory.
pub fn fdlab_with_memory_limit(limit_mib: u64, args: &[&str]) -> Output {
    memory_limited(limit_mib, args)
        .output()
        .expect("runs the fdlab binary under sh")
}

/// The command that runs `fdlab args` under an address-space limit of
/// `limit_mib` MiB (`ulimit -v`), to be given its pipes and started.
pub fn memory_limited(limit_mib: u64, args: &[&str]) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!(
            "ulimit -v {} && exec \"$0\" \"$@\"",
            limit_mib * 1024
        ))
        .arg(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY");
    command
}

/// At most the first 500 characters of `text`, for a failing test's message
/// (an error that echoes megabytes of input must not flood the test log).
pub fn head(text: &str) -> String {
    text.chars().take(500).collect()
}

/// Asserts `out` failed with one `fdlab: error: ...` line containing every
/// needle.
pub fn assert_one_error_line(out: &Output, needles: &[&str]) {
    let err = head(&text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("fdlab: error: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for needle in needles {
        assert!(err.contains(needle), "`{needle}` not in: {err}");
    }
}

/// For each `(from, to, needles)`: `base` with `from` replaced by `to`,
/// written to `dir/bad.toml` and run, must fail with one error line holding
/// every needle; then `base` itself must run and write `table` into its
/// report.
pub fn assert_mutations_fail_and_base_runs(
    dir: &std::path::Path,
    base: &str,
    cases: &[(&str, &str, &[&str])],
    table: &str,
) {
    let file = dir.join("bad.toml");
    for &(from, to, needles) in cases {
        std::fs::write(&file, base.replace(from, to)).unwrap();
        let o = fdlab(&["run", file.to_str().unwrap()]);
        assert_one_error_line(&o, needles);
    }
    std::fs::write(&file, base).unwrap();
    let out = dir.join("r");
    let o = fdlab(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(out.join(table).exists(), "no {table}");
}

/// Runs `fdlab` with `args`, killed if it has not ended within `deadline`:
/// its exit code (`None`: killed, or ended by a signal), standard output and
/// error, and how long it took. Standard input is empty, and both outputs
/// are read while it runs, so that neither a command that reads standard
/// input nor one that prints more than a pipe holds can stall it.
pub fn fdlab_within(args: &[&str], deadline: Duration) -> (Option<i32>, String, String, Duration) {
    fdlab_within_in(std::path::Path::new("."), args, deadline)
}

/// [`fdlab_within`], run in directory `dir` (where relative output paths
/// land).
pub fn fdlab_within_in(
    dir: &std::path::Path,
    args: &[&str],
    deadline: Duration,
) -> (Option<i32>, String, String, Duration) {
    use std::io::Read;
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .current_dir(dir)
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs the fdlab binary");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits for fdlab") {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            killed = true;
            break child.wait().expect("waits for fdlab");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let code = if killed { None } else { status.code() };
    (
        code,
        text(&stdout.join().unwrap_or_default()),
        text(&stderr.join().unwrap_or_default()),
        started.elapsed(),
    )
}
