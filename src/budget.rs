//! The size of what a command is about to simulate, checked before anything
//! runs: every run's events and memory are estimated
//! ([`fdlab_sim::estimate`]), a run too large to finish (more events than
//! `--max-events`) or a set of runs too large to fit in the memory this
//! process may use ([`memory`]: the machine's, its cgroup's limit, its
//! address-space limit) is refused with one line naming the key, the figure
//! and the limit, and `--dry-run` prints the estimates instead of running.

mod memory;

use clap::Args;
use fdlab_sim::estimate::{estimate, Estimate};
use fdlab_sim::valid::ValidScenario;

/// Most simulated events one run may take unless `--max-events` says
/// otherwise: about a quarter of an hour on one core of the development VM
/// (10 M events/s, docs/perf.md).
pub const DEFAULT_MAX_EVENTS: f64 = 1e10;
/// Most runs (scenarios × seeds) one command simulates: each is a line of
/// its results, held until the report is written.
pub const MAX_RUNS: u64 = 1_000_000;
/// Most worker threads a command starts.
pub const MAX_JOBS: usize = 1024;
/// Simulated events per second per thread assumed for the time a dry run
/// prints: the order of the built-in suite's rate (docs/perf.md);
/// `fdlab bench` measures this machine's.
pub const NOMINAL_EVENTS_PER_SEC: f64 = 10e6;
/// The same for membership scenarios, whose events each drive a whole
/// membership agent: the 1,000-silo benchmark's rate (docs/perf.md).
pub const NOMINAL_MEMBERSHIP_EVENTS_PER_SEC: f64 = 1.5e6;
/// Bytes per GiB, for messages.
const GIB: f64 = (1u64 << 30) as f64;

/// The options every simulating command takes about its size.
#[derive(Args, Clone, Debug, Default)]
pub struct SizeArgs {
    /// Refuse a run whose estimated simulated events exceed N (default 1e10)
    #[arg(long, value_name = "N")]
    pub max_events: Option<f64>,
    /// Print the estimated events, memory and time of every run, then stop
    #[arg(long)]
    pub dry_run: bool,
}

/// What a command will simulate: scenarios, each with its number of runs.
pub struct Work<'a> {
    pub runs: Vec<(&'a ValidScenario, u64)>,
    /// Whether each run keeps a replay's event log in memory.
    pub logged: bool,
}

/// The estimates of a command's work, checked against its limits.
pub struct Checked {
    pub estimates: Vec<Estimate>,
    pub total_events: f64,
}

/// Checks `work` against `size`'s limits and the memory this process may
/// use, with `threads` runs at once.
pub fn check(work: &Work<'_>, size: &SizeArgs, threads: usize) -> Result<Checked, String> {
    let limit = match size.max_events {
        Some(n) if !(n.is_finite() && n >= 1.0) => {
            return Err(format!(
                "--max-events: must be a number of at least 1, got {n}"
            ))
        }
        Some(n) => n,
        None => DEFAULT_MAX_EVENTS,
    };
    runs_fit(
        work.runs
            .iter()
            .map(|&(_, n)| n)
            .fold(0, u64::saturating_add),
    )?;
    let memory = memory::limit(threads);
    let mut estimates = Vec::with_capacity(work.runs.len());
    let mut total_events = 0.0;
    let mut concurrent: Vec<u64> = Vec::new();
    for &(scenario, runs) in &work.runs {
        let e = estimate(scenario);
        if e.events > limit {
            let (key, what) = e
                .main_source()
                .map_or(("topology".to_string(), String::new()), |s| {
                    (s.key.clone(), format!("{} make ", s.what))
                });
            return Err(format!(
                "{}: {key}: {what}about {:.1e} simulated events per run; the limit is {limit:.0e}, --max-events raises it",
                scenario.name, e.events
            ));
        }
        let bytes = if work.logged {
            e.replay_bytes()
        } else {
            e.bytes
        };
        if bytes > memory.bytes {
            return Err(format!(
                "{}: topology: one run holds about {:.1} GiB; this process may use {} ({})",
                scenario.name,
                bytes as f64 / GIB,
                gib(memory.bytes),
                memory.which.name()
            ));
        }
        total_events += e.events * runs as f64;
        concurrent.extend(std::iter::repeat_n(
            bytes,
            runs.min(threads as u64) as usize,
        ));
        estimates.push(e);
    }
    // The largest runs may run together.
    concurrent.sort_unstable_by(|a, b| b.cmp(a));
    let peak: u64 = concurrent.iter().take(threads).sum();
    if peak > memory.bytes {
        return Err(format!(
            "--jobs: {threads} runs at once would hold about {:.1} GiB; this process may use {} ({}); fewer --jobs",
            peak as f64 / GIB,
            gib(memory.bytes),
            memory.which.name()
        ));
    }
    Ok(Checked {
        estimates,
        total_events,
    })
}

/// `bytes` in GiB for a message: one decimal, two below 1 GiB (a limit
/// left after the process's own maps may be a fraction of one).
fn gib(bytes: u64) -> String {
    let g = bytes as f64 / GIB;
    if g < 1.0 {
        format!("{g:.2} GiB")
    } else {
        format!("{g:.1} GiB")
    }
}

/// Refuses more than [`MAX_RUNS`] runs, before anything is sized by them.
pub fn runs_fit(runs: u64) -> Result<(), String> {
    if runs > MAX_RUNS {
        return Err(format!(
            "--seeds: {runs} runs (scenarios x seeds); at most {MAX_RUNS}"
        ));
    }
    Ok(())
}

/// Refuses a count of runs given by `option` (`--runs`) over
/// [`MAX_RUNS`], before anything is allocated for them.
pub fn count_fits(option: &str, runs: u64) -> Result<(), String> {
    if runs > MAX_RUNS {
        return Err(format!("{option}: {runs} runs; at most {MAX_RUNS}"));
    }
    Ok(())
}

/// The `--dry-run` report of `work`.
pub fn dry_run(work: &Work<'_>, checked: &Checked, threads: usize) -> Result<(), String> {
    say!(
        "{:<28} {:>6} {:>14} {:>14} {:>10}  largest source of events",
        "scenario",
        "runs",
        "events/run",
        "events",
        "MiB/run"
    );
    for ((scenario, runs), e) in work.runs.iter().zip(&checked.estimates) {
        let bytes = if work.logged {
            e.replay_bytes()
        } else {
            e.bytes
        };
        let source = e
            .main_source()
            .map_or(String::new(), |s| format!("{}: {}", s.key, s.what));
        say!(
            "{:<28} {runs:>6} {:>14.3e} {:>14.3e} {:>10.1}  {source}",
            scenario.name,
            e.events,
            e.events * *runs as f64,
            bytes as f64 / (1u64 << 20) as f64
        );
    }
    let thread_seconds: f64 = work
        .runs
        .iter()
        .zip(&checked.estimates)
        .map(|((scenario, runs), e)| {
            let rate = if scenario.is_membership() {
                NOMINAL_MEMBERSHIP_EVENTS_PER_SEC
            } else {
                NOMINAL_EVENTS_PER_SEC
            };
            e.events * *runs as f64 / rate
        })
        .sum();
    let seconds = thread_seconds / threads as f64;
    say!(
        "total: about {:.3e} simulated events, about {seconds:.0} s on {threads} threads at a nominal {:.0} M events/s per thread ({:.1} M for membership scenarios; estimates, nothing was run)",
        checked.total_events,
        NOMINAL_EVENTS_PER_SEC / 1e6,
        NOMINAL_MEMBERSHIP_EVENTS_PER_SEC / 1e6
    );
    Ok(())
}

/// The threads a pool of `jobs` has (default: one per core), checked.
pub fn threads(jobs: Option<usize>) -> Result<usize, String> {
    match jobs {
        Some(0) => Err("--jobs: must be at least 1".into()),
        Some(j) if j > MAX_JOBS => Err(format!("--jobs: {j} threads; at most {MAX_JOBS}")),
        Some(j) => Ok(j),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}
