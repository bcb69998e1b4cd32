//! `fdlab check`: the CI regression gate. Runs the CI suite and compares its
//! figures with a committed baseline (see `fdlab_reports::gate`).

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;
use fdlab_reports::atomic::write_file;
use fdlab_reports::gate::{compare, entries, junit, markdown, Baseline, Tolerance};
use fdlab_reports::metrics::scenario_metrics;
use fdlab_scenarios::load_scenario;
use fdlab_sim::valid::ValidScenario;

use crate::simulate::{simulate, thread_pool};

/// The CI suite unless `--suite` names another directory.
pub const DEFAULT_SUITE: &str = "scenarios/ci";

#[derive(Args)]
pub struct CheckArgs {
    /// Directory of scenario files (`*.toml`) that make the CI suite.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_SUITE)]
    suite: PathBuf,
    /// The committed baseline to compare with (TOML).
    #[arg(long, value_name = "FILE")]
    baseline: PathBuf,
    /// Rewrite the baseline with this run's figures (keeping its tolerances)
    /// instead of failing on a difference.
    #[arg(long)]
    update: bool,
    /// Also write the comparison as JUnit XML.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write the Markdown report to FILE (it is printed either way; under
    /// GitHub Actions it is appended to the job summary too).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
}

/// The suite's scenario files, in name order.
fn load_suite(dir: &Path) -> Result<Vec<ValidScenario>, String> {
    let listing = fs::read_dir(dir).map_err(|e| format!("--suite {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = listing
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "--suite {}: no scenario files (*.toml)",
            dir.display()
        ));
    }
    let scenarios: Vec<ValidScenario> = files
        .iter()
        .map(|f| load_scenario(f).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    for (i, s) in scenarios.iter().enumerate() {
        if scenarios[..i].iter().any(|x| x.name == s.name) {
            return Err(format!(
                "--suite {}: two scenarios are named `{}`",
                dir.display(),
                s.name
            ));
        }
    }
    Ok(scenarios)
}

/// Exit status 1 (through `Err`) on a regression, after the report is out.
pub fn run(args: &CheckArgs) -> Result<(), String> {
    // Inputs first: a bad suite or baseline costs no simulation and writes nothing.
    let scenarios = load_suite(&args.suite)?;
    let baseline = match fs::read_to_string(&args.baseline) {
        Ok(text) => Some(Baseline::parse(&args.baseline, &text)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && args.update => None,
        Err(e) => {
            return Err(format!(
                "--baseline {}: {e}{}",
                args.baseline.display(),
                if e.kind() == std::io::ErrorKind::NotFound {
                    " (create it with `fdlab check --update --baseline FILE`)"
                } else {
                    ""
                }
            ))
        }
    };
    let threads = crate::budget::threads(args.jobs)?;
    let work = crate::budget::Work {
        runs: scenarios.iter().map(|s| (s, u64::from(s.seeds))).collect(),
        logged: false,
    };
    crate::budget::check(&work, &Default::default(), threads)?;
    let pool = thread_pool(args.jobs)?;
    let sim = simulate(&scenarios, None, 1, &pool)?;
    let metrics: Vec<_> = sim.results.iter().map(scenario_metrics).collect();
    let run = entries(&metrics);
    say!(
        "fdlab check: {} scenarios from {}, {} runs in {:.2} s",
        scenarios.len(),
        args.suite.display(),
        sim.runs,
        sim.wall
    );
    if args.update {
        let tolerance = baseline.map(|b| b.tolerance).unwrap_or_default();
        write_baseline(&args.baseline, tolerance, run.clone())?;
        say!(
            "baseline {} written: {} scenario × detector results",
            args.baseline.display(),
            run.len()
        );
        return Ok(());
    }
    let baseline = baseline.ok_or("no baseline")?;
    let comparison = compare(&baseline, &run);
    let md = markdown(&comparison, &args.baseline);
    say!("\n{md}");
    if let Some(path) = &args.markdown {
        write_file(path, md.as_bytes())
            .map_err(|e| format!("--markdown {}: {e}", path.display()))?;
    }
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
        append(Path::new(&path), &md)?;
    }
    if let Some(path) = &args.junit {
        write_file(path, junit(&comparison, &run).as_bytes())
            .map_err(|e| format!("--junit {}: {e}", path.display()))?;
    }
    if comparison.passed() {
        Ok(())
    } else {
        Err(format!(
            "{} regression(s) against {}; if they are intended, run `fdlab check --update --baseline {}` and commit it",
            comparison.regressions(),
            args.baseline.display(),
            args.baseline.display()
        ))
    }
}

fn write_baseline(
    path: &Path,
    tolerance: Tolerance,
    run: Vec<fdlab_reports::gate::Entry>,
) -> Result<(), String> {
    let text = Baseline::render(tolerance, run)?;
    write_file(path, text.as_bytes()).map_err(|e| format!("--baseline {}: {e}", path.display()))
}

/// Appends to a job-summary file (GitHub Actions' `GITHUB_STEP_SUMMARY`).
fn append(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| format!("GITHUB_STEP_SUMMARY {}: {e}", path.display()))
}
