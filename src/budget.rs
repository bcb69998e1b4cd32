//! The size of what a command is about to simulate, checked before anything
//! runs: every run's events and memory are estimated
//! ([`fdlab_sim::estimate`]), a run too large to finish (more events than
//! `--max-events`) or a set of runs too large to fit in the memory this
//! process may use ([`memory`]: the machine's, its cgroup's limit, its
//! address-space limit) is refused with one line naming the key, the figure
//! and the limit, and `--dry-run` prints the estimates instead of running.

mod memory;

use clap::Args;
use fdlab_scenarios::key_place;
use fdlab_sim::estimate::swarm::Shrinking;
use fdlab_sim::estimate::{estimate, Estimate, Pace, Source};
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
/// Orleans membership events per second per thread in a small cluster:
/// 5.7 M/s at 20 silos, 4.3 M at 100 (docs/perf.md, "Estimates").
pub const NOMINAL_ORLEANS_EVENTS_PER_SEC: f64 = 6.5e6;
/// ... and an Orleans event's share that grows with the cluster: view rows
/// per second (an event at 1,000 silos takes 1.2-1.35 µs, at 2,000
/// 2.1-2.6 µs: 1.2 ns per silo; docs/perf.md, "Estimates").
pub const NOMINAL_ORLEANS_VIEW_ROWS_PER_SEC: f64 = 0.85e9;
/// SWIM events per second per thread in a small cluster, and members per
/// second of an event's share that grows with the cluster: 3.8 M events/s
/// at 1,000 members, 1.8 M at 10,000 (docs/perf.md).
pub const NOMINAL_SWIM_EVENTS_PER_SEC: f64 = 4.3e6;
pub const NOMINAL_SWIM_MEMBER_ROWS_PER_SEC: f64 = 31e9;
/// Keys placed per second per thread (one client's owner of one key under
/// one distribution, with the ledger's counts): docs/perf.md, "Estimates".
pub const NOMINAL_KEY_PLACEMENTS_PER_SEC: f64 = 80e6;
/// Faults of shrinking candidates validated per second (on one thread:
/// the candidates of a step are built before its runs): docs/perf.md,
/// "Estimates".
pub const NOMINAL_FAULT_CHECKS_PER_SEC: f64 = 0.7e6;
/// Seconds per event of a mesh simulated whole (a degraded node couples
/// its pairs), by the mesh's monitored pairs: a + b x log10(pairs), at
/// least 1/[`NOMINAL_EVENTS_PER_SEC`]. Fitted to `cpu-starvation` at 10
/// monitors a node, 10 s simulated, one thread: 5.6 M events/s at 2,000
/// pairs, 2.0 M at 20,000, 1.44 M at 60,000, 1.0 M at 196,600 (docs/perf.md,
/// "Estimates"); within 20% of each.
const WHOLE_MESH_SECONDS_PER_EVENT_BASE: f64 = -1.179e-6;
const WHOLE_MESH_SECONDS_PER_EVENT_PER_DECADE: f64 = 0.401e-6;
/// Bytes per GiB, for messages.
const GIB: f64 = (1u64 << 30) as f64;
/// Bytes per MiB, for the dry run's table.
const MIB: f64 = (1u64 << 20) as f64;

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
                "{}: {what}about {:.1e} simulated events per run; the limit is {limit:.0e}, --max-events raises it",
                key_place(scenario, &key),
                e.events
            ));
        }
        let bytes = if work.logged {
            e.replay_bytes()
        } else {
            e.bytes
        };
        if bytes > memory.bytes {
            return Err(format!(
                "{}: one run holds about {:.1} GiB; this process may use {} ({})",
                key_place(scenario, &e.memory_key),
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

/// Refuses shrinking whose candidates would not fit: `scenario`'s swarm
/// draws up to `faults` faults a run, and the fault step of a schedule
/// that large holds `shrinking.bytes` at once (besides the runs, which
/// have ended by then).
pub fn check_shrinking(
    scenario: &str,
    faults: u32,
    shrinking: &Shrinking,
    threads: usize,
) -> Result<(), String> {
    let memory = memory::limit(threads);
    if shrinking.bytes > memory.bytes {
        return Err(format!(
            "{scenario}: swarm.faults: shrinking a schedule of {faults} faults holds about {:.1} GiB of candidates; this process may use {} ({})",
            shrinking.bytes as f64 / GIB,
            gib(memory.bytes),
            memory.which.name()
        ));
    }
    Ok(())
}

/// Seconds one thread takes for `source`'s work at its nominal pace.
pub fn seconds(source: &Source) -> f64 {
    let per_unit = match source.pace {
        Pace::Engine => 1.0 / NOMINAL_EVENTS_PER_SEC,
        Pace::Orleans { silos } => {
            1.0 / NOMINAL_ORLEANS_EVENTS_PER_SEC + silos as f64 / NOMINAL_ORLEANS_VIEW_ROWS_PER_SEC
        }
        Pace::Swim { members } => {
            1.0 / NOMINAL_SWIM_EVENTS_PER_SEC + members as f64 / NOMINAL_SWIM_MEMBER_ROWS_PER_SEC
        }
        Pace::KeyPlacement => 1.0 / NOMINAL_KEY_PLACEMENTS_PER_SEC,
        Pace::WholeMesh { pairs } => (WHOLE_MESH_SECONDS_PER_EVENT_BASE
            + WHOLE_MESH_SECONDS_PER_EVENT_PER_DECADE * (pairs.max(1) as f64).log10())
        .max(1.0 / NOMINAL_EVENTS_PER_SEC),
    };
    source.work * per_unit
}

/// Seconds one thread takes for one run of estimate `e`.
pub fn run_seconds(e: &Estimate) -> f64 {
    e.sources.iter().map(seconds).sum()
}

/// Seconds shrinking may take on `threads` threads, for runs estimated as
/// `run`: candidates run in batches of `threads`, and each step's
/// candidates are validated on one thread before its runs.
pub fn shrink_seconds(shrinking: &Shrinking, run: &Estimate, threads: usize) -> f64 {
    let runs = shrinking.runs_per_finding * shrinking.run_share * run_seconds(run) / threads as f64;
    let checks = shrinking.fault_checks_per_finding / NOMINAL_FAULT_CHECKS_PER_SEC;
    shrinking.findings as f64 * (runs + checks)
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
    print_dry_run(work, checked, threads, None)
}

/// The `--dry-run` report of a swarm's `work`, and of shrinking its
/// findings (`swarm.faults`: up to `faults` faults a run).
pub fn dry_run_swarm(
    work: &Work<'_>,
    checked: &Checked,
    threads: usize,
    shrinking: &Shrinking,
    faults: u32,
) -> Result<(), String> {
    print_dry_run(work, checked, threads, Some((shrinking, faults)))
}

fn print_dry_run(
    work: &Work<'_>,
    checked: &Checked,
    threads: usize,
    shrinking: Option<(&Shrinking, u32)>,
) -> Result<(), String> {
    say!(
        "{:<28} {:>6} {:>14} {:>14} {:>10} {:>9}  largest cost",
        "scenario",
        "runs",
        "events/run",
        "events",
        "MiB/run",
        "s/run"
    );
    let mut thread_seconds = 0.0;
    // A run is on one thread: fewer runs than threads leave some idle.
    let mut longest: f64 = 0.0;
    for ((scenario, runs), e) in work.runs.iter().zip(&checked.estimates) {
        let bytes = if work.logged {
            e.replay_bytes()
        } else {
            e.bytes
        };
        let largest = e
            .sources
            .iter()
            .max_by(|a, b| seconds(a).total_cmp(&seconds(b)));
        let source = largest.map_or(String::new(), |s| format!("{}: {}", s.key, s.what));
        let run = run_seconds(e);
        thread_seconds += run * *runs as f64;
        longest = longest.max(run / jobs_per_run(scenario) as f64);
        say!(
            "{:<28} {runs:>6} {:>14.3e} {:>14.3e} {:>10.1} {:>9.2}  {source}",
            scenario.name,
            e.events,
            e.events * *runs as f64,
            bytes as f64 / MIB,
            run,
        );
    }
    let mut seconds = (thread_seconds / threads as f64).max(longest);
    if let (Some((sh, faults)), Some(run)) = (shrinking, checked.estimates.first()) {
        let shrink = shrink_seconds(sh, run, threads);
        say!(
            "shrinking: up to {} findings (one per property and subject), each about {:.0} candidate runs and {:.2e} faults validated (schedules of up to {faults} faults): about {} s, {:.1} MiB of candidates at once",
            sh.findings,
            sh.runs_per_finding,
            sh.fault_checks_per_finding,
            whole_seconds(shrink),
            sh.bytes as f64 / MIB
        );
        seconds += shrink;
    }
    say!(
        "total: about {:.3e} simulated events, about {} s on {threads} threads at nominal speeds (docs/perf.md; estimates, nothing was run)",
        checked.total_events,
        whole_seconds(seconds)
    );
    Ok(())
}

/// The jobs one run of `scenario` is simulated as, each on a thread of
/// its own: each judge of a membership scenario, each policy of a
/// lock-RPC one.
fn jobs_per_run(scenario: &ValidScenario) -> usize {
    let jobs = if scenario.is_membership() {
        scenario.judge_names().len()
    } else if let Some(l) = &scenario.lockrpc {
        l.kinds().len()
    } else {
        1
    };
    jobs.max(1)
}

/// Seconds for the dry run's lines: tenths below 10 s, so that a short
/// run is not "about 0 s".
fn whole_seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1}")
    } else {
        format!("{s:.0}")
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole mesh's events at the pace measured at each size (docs/perf.md,
    /// "Estimates"): the announced time within 30% of the measured one.
    #[test]
    fn a_whole_mesh_is_paced_by_its_size() {
        for (pairs, events, measured_s) in [
            (2_000, 559_029.0, 0.10),
            (20_000, 4_928_321.0, 2.48),
            (60_000, 14_640_698.0, 10.17),
            (196_600, 47.8e6, 47.7),
        ] {
            let source = Source::simulated(
                "detectors[0].interval",
                String::new(),
                events,
                Pace::WholeMesh { pairs },
            );
            let announced = seconds(&source);
            assert!(
                (announced / measured_s - 1.0).abs() < 0.3,
                "{pairs} pairs: {announced:.2} s announced, {measured_s} s measured"
            );
        }
        // A small mesh keeps the engine's nominal pace.
        let small = Source::simulated("x", String::new(), 1e7, Pace::WholeMesh { pairs: 18 });
        assert_eq!(seconds(&small), 1e7 / NOMINAL_EVENTS_PER_SEC);
    }
}
