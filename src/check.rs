//! `fdlab check`: the CI regression gate. Runs the CI suite and compares its
//! figures with a committed baseline (see `fdlab_reports::gate`).

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;
use fdlab_reports::atomic::write_file;
use fdlab_reports::baseline_file::{split_mistakes, updated_text};
use fdlab_reports::gate::{compare, entries, junit, markdown, Baseline, Comparison, Tolerance};
use fdlab_reports::metrics::scenario_metrics;
use fdlab_scenarios::load_scenario;
use fdlab_scenarios::read_limit::{read_file_limited, ReadLimitError, TEXT_FILE_LIMIT};
use fdlab_scenarios::scenario_file::files_read;
use fdlab_sim::valid::ValidScenario;

use crate::cluster_runs::simulate_clusters;
use crate::out_paths::{refuse_same_file, Input};
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
    /// Fail on any changed figure, even one within the tolerances (runs are
    /// deterministic: every change comes from a change of code or suite).
    #[arg(long)]
    strict: bool,
}

/// The suite's scenario files, in name order, with the files each read.
fn load_suite(dir: &Path) -> Result<(Vec<ValidScenario>, Vec<PathBuf>), String> {
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
                fdlab_scenarios::excerpt::excerpt(&s.name)
            ));
        }
    }
    let read = files
        .iter()
        .zip(&scenarios)
        .flat_map(|(f, s)| files_read(f, s))
        .collect();
    Ok((scenarios, read))
}

/// The baseline's text (at most [`TEXT_FILE_LIMIT`] bytes), or `None` when
/// `--update` is to create it.
fn read_baseline(path: &Path, update: bool) -> Result<Option<String>, String> {
    let name = path.display();
    match read_file_limited(path, TEXT_FILE_LIMIT) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("--baseline {name}: not UTF-8 text")),
        Err(ReadLimitError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound && update => {
            Ok(None)
        }
        Err(ReadLimitError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "--baseline {name}: {e} (create it with `fdlab check --update --baseline FILE`)"
        )),
        Err(e) => Err(format!("--baseline {name}: {e}")),
    }
}

/// Refuses, before anything runs, to `--update` a baseline that may not be
/// written: one the process cannot open for writing, or one with no write
/// permission bit at all. The second catches a read-only file when running
/// as root, who may open anything: the file was made read-only on purpose,
/// and the atomic rename would replace it regardless.
fn check_writable(path: &Path) -> Result<(), String> {
    let Ok(meta) = fs::metadata(path) else {
        return Ok(()); // Created by --update.
    };
    let read_only = || {
        format!(
            "--baseline {}: the file is read-only; --update would replace it (make it writable first, e.g. `chmod u+w`)",
            path.display()
        )
    };
    if meta.permissions().readonly() {
        return Err(read_only());
    }
    match fs::OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(read_only()),
        Err(e) => Err(format!("--baseline {}: {e}", path.display())),
    }
}

/// Exit status 1 (through `Err`) on a regression, after the report is out.
pub fn run(args: &CheckArgs) -> Result<(), String> {
    // Inputs first: a bad suite or baseline costs no simulation and writes nothing.
    let (scenarios, suite_files) = load_suite(&args.suite)?;
    for s in &scenarios {
        crate::lockrpc_runs::refuse_lockrpc(s, "check")?;
    }
    let mut text = read_baseline(&args.baseline, args.update)?;
    if let Some(split) = text.as_deref().and_then(split_mistakes) {
        if !args.update {
            return Err(format!(
                "--baseline {}: gates `mistakes_per_pair_hour`, which this fdlab splits into false Failed and Suspect-only mistakes (`false_failed_per_pair_hour`, `suspicions_per_pair_hour`); rewrite it with `{}` (its mistakes tolerance becomes the tolerance of both) and commit it",
                args.baseline.display(),
                update_command()
            ));
        }
        text = Some(split);
    }
    let baseline = match &text {
        Some(text) => Some(Baseline::parse(&args.baseline, text)?),
        None => None,
    };
    let threads = crate::budget::threads(args.jobs)?;
    let work = crate::budget::Work {
        runs: scenarios.iter().map(|s| (s, u64::from(s.seeds))).collect(),
        logged: false,
    };
    crate::budget::check(&work, &Default::default(), threads)?;
    let mut inputs = vec![Input::new("--baseline", &args.baseline)];
    inputs.extend(
        suite_files
            .into_iter()
            .map(|f| Input::new("the suite's file", f)),
    );
    for (option, path) in [("--junit", &args.junit), ("--markdown", &args.markdown)] {
        if let Some(path) = path {
            crate::out_paths::refuse_unwritable_file(option, path)?;
            refuse_same_file(option, path, &inputs)?;
        }
    }
    if args.update {
        check_writable(&args.baseline)?;
    } else if let Some(b) = &baseline {
        b.require_entries(&args.baseline)?;
    }
    let pool = thread_pool(args.jobs)?;
    let (clusters, pairs): (Vec<&ValidScenario>, Vec<&ValidScenario>) =
        scenarios.iter().partition(|s| s.is_membership());
    let pairs: Vec<ValidScenario> = pairs.into_iter().cloned().collect();
    let sim = simulate(&pairs, None, 1, &pool)?;
    let clustered = simulate_clusters(&clusters, None, 1, &pool)?;
    let metrics: Vec<_> = sim.results.iter().map(scenario_metrics).collect();
    let cluster_metrics: Vec<_> = clusters
        .iter()
        .zip(&clustered.results)
        .map(|(s, r)| fdlab_reports::cluster::cluster_metrics(&s.name, &r.runs))
        .collect();
    let run = entries(&metrics, &cluster_metrics);
    say!(
        "fdlab check: {} scenarios from {}, {} runs in {:.2} s",
        scenarios.len(),
        args.suite.display(),
        sim.runs + clustered.runs,
        sim.wall + clustered.wall
    );
    if args.update {
        let tolerance = baseline.map(|b| b.tolerance).unwrap_or_default();
        write_baseline(&args.baseline, text.as_deref(), tolerance, run.clone())?;
        say!(
            "baseline {} written: {} scenario × detector results",
            args.baseline.display(),
            run.len()
        );
        return Ok(());
    }
    let baseline = baseline.ok_or("no baseline")?;
    let comparison = compare(&baseline, &run);
    let md = markdown(&comparison, &args.baseline, args.strict);
    say!("\n{md}");
    if let Some(path) = &args.markdown {
        write_file(path, md.as_bytes())
            .map_err(|e| format!("--markdown {}: {e}", path.display()))?;
    }
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
        append(Path::new(&path), &md)?;
    }
    if let Some(path) = &args.junit {
        write_file(path, junit(&comparison, &run, args.strict).as_bytes())
            .map_err(|e| format!("--junit {}: {e}", path.display()))?;
    }
    verdict(&comparison, args.strict)
}

/// The command that accepts this run's figures: the user's own `fdlab check`
/// command line (suite, jobs and every other flag kept), with `--update` and
/// without `--strict`.
fn update_command() -> String {
    let mut words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--strict" && a != "--update")
        .collect();
    let at = words.iter().position(|w| w == "check").map_or(0, |i| i + 1);
    words.insert(at, "--update".into());
    let quoted: Vec<String> = words
        .iter()
        .map(|w| {
            if w.is_empty() || w.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
                format!("'{}'", w.replace('\'', "'\\''"))
            } else {
                w.clone()
            }
        })
        .collect();
    format!("fdlab {}", quoted.join(" "))
}

/// The gate's verdict: `Err` (exit status 1) with what failed.
fn verdict(c: &Comparison, strict: bool) -> Result<(), String> {
    let fix = update_command();
    if c.passes(strict) {
        return Ok(());
    }
    if c.passed() {
        return Err(format!(
            "{} figure(s) changed within the tolerances, and --strict fails on any change; if they are intended, run `{fix}` and commit the baseline",
            c.tolerated()
        ));
    }
    if c.compares_nothing() {
        return Err(format!(
            "the baseline covers none of the suite's {} scenario × detector results: a gate that compares nothing fails; run `{fix}` and commit it",
            c.new.len()
        ));
    }
    let mut what = Vec::new();
    if c.regressions() > 0 {
        what.push(format!("{} regression(s)", c.regressions()));
    }
    if !c.new.is_empty() {
        what.push(format!("{} result(s) not in the baseline", c.new.len()));
    }
    Err(format!(
        "{} against the baseline; if they are intended, run `{fix}` and commit it",
        what.join(" and ")
    ))
}

/// Writes the baseline of `run`: a fresh file, or `old`'s with its comments
/// kept (see `fdlab_reports::baseline_file`).
fn write_baseline(
    path: &Path,
    old: Option<&str>,
    tolerance: Tolerance,
    run: Vec<fdlab_reports::gate::Entry>,
) -> Result<(), String> {
    let fresh = Baseline::render(tolerance, run)?;
    let text = match old {
        Some(old) => {
            updated_text(old, &fresh).map_err(|e| format!("--baseline {}: {e}", path.display()))?
        }
        None => fresh,
    };
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
