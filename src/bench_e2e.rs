//! `fdlab bench`'s end-to-end rows (issue 37): `fdlab run` of a scenario
//! file as a user runs it (this binary started again as a child process,
//! the file read and checked, the run simulated, its report written),
//! timed from outside, with the child's peak memory. The scenarios are
//! the files of `scenarios/bench/`, built into the binary so that an
//! installed `fdlab bench` needs no checkout.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use fdlab_sim::valid::ValidScenario;

/// `scenarios/bench/madsim-workload.toml`: the madsim comparison's workload.
pub const MADSIM_WORKLOAD: (&str, &str) = (
    "madsim-workload.toml",
    include_str!("../scenarios/bench/madsim-workload.toml"),
);
/// `scenarios/bench/mesh-10000.toml`: the 10,000-node mesh, 10 minutes.
pub const MESH_10000: (&str, &str) = (
    "mesh-10000.toml",
    include_str!("../scenarios/bench/mesh-10000.toml"),
);

/// One of the files above, parsed as `fdlab run` parses it.
pub fn scenario((file, text): (&str, &str)) -> Result<ValidScenario, String> {
    fdlab_scenarios::scenario_file::parse_scenario(file, text, None).map_err(|e| e.to_string())
}

/// What a child `fdlab run` took.
pub struct Child {
    /// Wall time from the spawn to its exit, s.
    pub wall: f64,
    /// Its peak resident memory.
    pub peak: Peak,
}

/// A process's peak resident memory (Linux `VmHWM`), KiB, where known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peak(pub Option<u64>);

impl Peak {
    /// "12.3 MiB"; `per` items: "(1.2 KiB per node)".
    pub fn text(self, per: Option<(u32, &str)>) -> String {
        let Some(kib) = self.0 else {
            return "not available".into();
        };
        let mut text = format!("{:.1} MiB", kib as f64 / 1024.0);
        if let Some((count, what)) = per {
            text += &format!(" ({:.1} KiB per {what})", kib as f64 / f64::from(count));
        }
        text
    }
}

/// A scratch directory for the child's file and report, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("fdlab-bench-{}-{n}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Rounds of [`interleaved`]: a shared VM's pace moves by a third from
/// one minute to the next, so a run and its reference timed once each,
/// seconds apart, can give any ratio; three rounds, each one of both,
/// and the medians, do not.
pub const ROUNDS: usize = 3;

/// `fdlab run` of `file` on `jobs` threads and the bare heap loop over
/// `events` events, taking turns for [`ROUNDS`] rounds: the medians of
/// each (the child's wall time and peak memory, the loop's time).
pub fn interleaved(file: (&str, &str), jobs: usize, events: u64) -> Result<(Child, f64), String> {
    let (mut walls, mut peaks, mut loops) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let child = fdlab_run(file, jobs)?;
        walls.push(child.wall);
        peaks.extend(child.peak.0);
        loops.push(crate::bench_sim::heap_loop_secs(events));
    }
    let median =
        |v: &mut Vec<f64>| crate::stats::median_nearest_rank(v).ok_or(crate::bench::NO_RUNS);
    let wall = median(&mut walls)?;
    let heap = median(&mut loops)?;
    peaks.sort_unstable();
    let peak = Peak(peaks.get(peaks.len() / 2).copied());
    Ok((Child { wall, peak }, heap))
}

/// Runs `fdlab run FILE --jobs JOBS --out DIR` on one of the files
/// above in a child process of this binary and times it, start to exit.
pub fn fdlab_run((file, text): (&str, &str), jobs: usize) -> Result<Child, String> {
    let scratch = Scratch::new()?;
    let path = scratch.0.join(file);
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    let me = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    run_child(&me, &path, jobs, &scratch.0)
}

/// Times `fdlab` (the binary at `exe`) running `file` with `jobs` threads,
/// its report written under `scratch`.
fn run_child(exe: &Path, file: &Path, jobs: usize, scratch: &Path) -> Result<Child, String> {
    let file_in = |name: &str| {
        let path = scratch.join(name);
        let f = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()));
        f.map(|f| (path, f))
    };
    let (log, stderr) = file_in("stderr.txt")?;
    let (out, stdout) = file_in("stdout.txt")?;
    let start = Instant::now();
    let mut child = Command::new(exe)
        .arg("run")
        .arg(file)
        .args(["--jobs", &jobs.to_string(), "--color", "never", "--out"])
        .arg(scratch.join("report"))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {}: {e}", exe.display()))?;
    let wall = start.elapsed().as_secs_f64();
    let printed = std::fs::read_to_string(&out).unwrap_or_default();
    let peak = Peak(printed_peak_kib(&printed));
    if !status.success() {
        let status = status
            .code()
            .map_or("a signal".to_string(), |c| format!("status {c}"));
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        return Err(format!(
            "fdlab run {} exited with {status}: {}",
            file.display(),
            said.trim()
        ));
    }
    Ok(Child { wall, peak })
}

/// The peak memory `fdlab run` printed on its totals line (`peak memory
/// 9.4 MiB`), KiB. A child's own figure: `getrusage(RUSAGE_CHILDREN)`
/// would count this process's memory too (Linux keeps the peak of the
/// image a child was forked from across its `exec`), and without unsafe
/// code, which the workspace forbids, there is no `wait4` for one child.
fn printed_peak_kib(stdout: &str) -> Option<u64> {
    let rest = stdout
        .rsplit("peak memory ")
        .next()
        .filter(|r| r.len() < stdout.len())?;
    let mib: f64 = rest.split(" MiB").next()?.trim().parse().ok()?;
    Some((mib * 1024.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::Nanos;

    /// The files are the scenarios the in-process rows build: a file
    /// edited apart from its code (or the reverse) fails here.
    #[test]
    fn the_bench_files_are_the_benchmarks_scenarios() {
        let same = |file, code: fdlab_sim::scenario::Scenario| {
            let parsed = scenario(file).unwrap().into_inner();
            let code = ValidScenario::new(code).unwrap().into_inner();
            let unnamed = |s: fdlab_sim::scenario::Scenario| fdlab_sim::scenario::Scenario {
                name: String::new(),
                description: String::new(),
                ..s
            };
            assert_eq!(unnamed(parsed), unnamed(code), "{}", file.0);
        };
        same(MADSIM_WORKLOAD, fdlab_sim::baseline::madsim_workload());
        let ten_minutes = Nanos::from_secs(600);
        same(MESH_10000, crate::bench_sim::big_mesh(10_000, ten_minutes));
    }

    #[test]
    fn a_child_that_fails_is_an_error_naming_its_file() {
        let scratch = Scratch::new().unwrap();
        let file = scratch.0.join("some.toml");
        let ok = run_child(Path::new("/bin/true"), &file, 1, &scratch.0).unwrap();
        assert!(ok.wall > 0.0);
        let err = run_child(Path::new("/bin/false"), &file, 1, &scratch.0)
            .err()
            .unwrap();
        assert!(
            err.contains("exited with status 1") && err.contains("some.toml"),
            "{err}"
        );
    }

    #[test]
    fn the_peak_is_read_from_the_totals_line() {
        let printed = "1 runs, 5 simulated events in 0.01 s (0.00 M events/s on 1 thread), \
                       peak memory 9.5 MiB\nreport written in 0.00 s: index.html\n";
        assert_eq!(printed_peak_kib(printed), Some(9728));
        assert_eq!(printed_peak_kib("no figure here"), None);
        assert_eq!(Peak(None).text(None), "not available");
        let per_node = Peak(Some(9728)).text(Some((2, "node")));
        assert_eq!(per_node, "9.5 MiB (4864.0 KiB per node)");
    }
}
