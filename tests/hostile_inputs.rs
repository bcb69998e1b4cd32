//! A hostile user's scenario files: every built-in and CI scenario, mutated
//! the ways a typo or a broken tool mutates a file (a line deleted, a table
//! duplicated, a number or a duration made extreme, a node renamed, a byte
//! flipped, the file cut short), each run through `fdlab run`. Every case
//! must end in one of two ways:
//!
//! - exit 0 with the complete report, having simulated no more than twice
//!   its `--dry-run` estimate;
//! - exit 1 with exactly one `fdlab: error:` line that names the file, and
//!   nothing written;
//!
//! and never a panic, an abort, a hang (each case has a deadline) or another
//! exit status. The swarm files are mutated too, and run through `fdlab
//! swarm` (where exit 1 may also be a violation found, with its report).
//! Mutations aim at the newer tables as well (`[membership]`,
//! `[placement]`, `[lockrpc]`, `[swarm]`, `[properties]`): a key of theirs
//! given a hostile value. And every command's arguments are mutated the
//! same way (`command_lines_end_in_output_or_one_error`). The cases run with
//! `--max-events` and one seed, so several hundred cases take well under a
//! minute;
//! `every_mutation_of_every_scenario` (ignored; `cargo test --release --test
//! hostile_inputs -- --ignored`) runs the whole corpus.

use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;
use common::{fdlab_within, fdlab_within_in};

/// Longest a case may take before it counts as a hang (a debug build).
const DEADLINE: Duration = Duration::from_secs(60);
/// The event budget every case runs with.
const MAX_EVENTS: &str = "2e6";
/// The quick command corpus runs every this-many-th command line.
const QUICK_COMMAND_STEP: usize = 4;
/// Cases of the quick corpus per base scenario.
const QUICK_PER_BASE: usize = 20;
/// How the name of a swarm file's cases begins: they run through `fdlab
/// swarm`.
const SWARM_PREFIX: &str = "swarm-";
/// The tables added after the first corpus, whose keys a mutation aims at.
const NEWER_TABLES: [&str; 5] = [
    "[membership",
    "[placement",
    "[lockrpc",
    "[swarm",
    "[properties",
];
/// Values a key of a newer table is given.
const HOSTILE_VALUES: [&str; 14] = [
    "1e308",
    "-1e308",
    "0",
    "-1",
    "18446744073709551616",
    "nan",
    "\"99999999h\"",
    "\"1ns\"",
    "\"\"",
    "\"n1\\u202en2\"",
    "[]",
    "[1e308, -1]",
    "{}",
    "{ dist = \"pareto\", scale = \"1ns\", shape = 1e-300 }",
];

/// The base scenarios: every built-in and CI file.
fn bases() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut out = Vec::new();
    for dir in ["builtin", "ci", "swarm"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            let name = if dir == "swarm" {
                format!("{SWARM_PREFIX}{stem}")
            } else {
                stem
            };
            out.push((name, text));
        }
    }
    out
}

/// A small deterministic generator (SplitMix64): the corpus is the same on
/// every machine and every run.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const NUMBERS: [&str; 10] = [
    "0",
    "-1",
    "1e300",
    "18446744073709551615",
    "4294967296",
    "nan",
    "inf",
    "0.0000001",
    "100000",
    "50000",
];
const DURATIONS: [&str; 9] = [
    "\"1ns\"",
    "\"0s\"",
    "\"18446744073709551615ns\"",
    "\"4611686018427387904ns\"",
    "\"99999999h\"",
    "\"+2500000h\"",
    "\"-5s\"",
    "\"1e9s\"",
    "\"\"",
];

/// One mutation of `text`.
fn mutate(text: &str, g: &mut Gen) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let i = g.below(lines.len());
    match g.below(9) {
        // A key of a newer table given a hostile value.
        8 => {
            let mut in_newer = false;
            let keys: Vec<usize> = (0..lines.len())
                .filter(|&k| {
                    let l = lines[k].trim_start();
                    if l.starts_with('[') {
                        in_newer = NEWER_TABLES.iter().any(|t| l.starts_with(t));
                    }
                    in_newer && !l.starts_with('[') && !l.starts_with('#') && l.contains('=')
                })
                .collect();
            if let Some(&k) = keys.get(g.below(keys.len())) {
                let (key, _) = lines[k].split_once('=').unwrap();
                out[k] = format!("{key}= {}", g.pick(&HOSTILE_VALUES));
            }
        }
        // A line deleted.
        0 => {
            out.remove(i);
        }
        // A table duplicated (from a header to the next one).
        1 => {
            let headers: Vec<usize> = (0..lines.len())
                .filter(|&k| lines[k].starts_with('['))
                .collect();
            if let Some(&h) = headers.get(g.below(headers.len())) {
                let end = (h + 1..lines.len())
                    .find(|&k| lines[k].starts_with('['))
                    .unwrap_or(lines.len());
                let block: Vec<String> = out[h..end].to_vec();
                out.extend(block);
            }
        }
        // A number made extreme.
        2 | 3 => {
            let numeric: Vec<usize> = (0..lines.len())
                .filter(|&k| lines[k].contains('=') && lines[k].chars().any(|c| c.is_ascii_digit()))
                .collect();
            if let Some(&k) = numeric.get(g.below(numeric.len())) {
                let (key, _) = lines[k].split_once('=').unwrap();
                let value = if lines[k].contains('"') {
                    g.pick(&DURATIONS).to_string()
                } else {
                    g.pick(&NUMBERS).to_string()
                };
                out[k] = format!("{key}= {value}");
            }
        }
        // A node renamed, or a layer made huge.
        4 => {
            let named: Vec<usize> = (0..lines.len())
                .filter(|&k| lines[k].contains("node") || lines[k].contains("layers"))
                .collect();
            if let Some(&k) = named.get(g.below(named.len())) {
                out[k] = if lines[k].contains("layers") {
                    "layers = [50000, 2]".into()
                } else {
                    lines[k]
                        .replace("\"n", "\"nosuch")
                        .replace("\"s", "\"nosuch")
                };
            }
        }
        // A byte flipped.
        5 => {
            let mut bytes = text.as_bytes().to_vec();
            let at = g.below(bytes.len());
            bytes[at] ^= 1 << g.below(8);
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        // Cut short.
        6 => {
            let mut at = g.below(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            return text[..at].to_string();
        }
        // A fault or a clock with extreme values.
        _ => {
            let extra = *g.pick(&[
                "[[faults]]\nkind = \"loss\"\nprobability = 0.5\nburst = \"1ns\"\ngap = \"1ns\"\nat = \"1s\"",
                "[[faults]]\nkind = \"crash\"\nnode = \"n1\"\nat = \"1s\"\nduration = \"1s\"\n[[faults]]\nkind = \"crash\"\nnode = \"n1\"\nat = \"1s\"\nduration = \"10s\"",
                "[[faults]]\nkind = \"pause\"\nnode = \"n1\"\nat = \"2s\"\nduration = \"9s\"\nexpect = \"detect\"\n[[faults]]\nkind = \"pause\"\nnode = \"n1\"\nat = \"1s\"\nduration = \"2s\"",
                "[[clocks]]\nnode = \"n1\"\noffset = \"+2500000h\"",
                "[[faults]]\nkind = \"clock\"\nnode = \"s0.0\"\noffset = \"-1000000h\"\nat = \"1s\"",
                "[[random_faults]]\nkind = \"pause\"\nrate_per_node_hour = 1e9",
            ]);
            out.push(extra.to_string());
        }
    }
    out.join("\n") + "\n"
}

/// What one case did.
struct Case {
    name: String,
    file: PathBuf,
    out: PathBuf,
}

/// The problems of one case of a swarm file: exit 0 with its report; exit
/// 1 with a violation's report, or with one error line that names the file
/// and nothing written.
fn check_swarm(case: &Case) -> Option<String> {
    let file = case.file.to_str().unwrap();
    let out = case.out.to_str().unwrap();
    let args = [
        "swarm",
        file,
        "--runs",
        "1",
        "--max-events",
        MAX_EVENTS,
        "--out",
        out,
    ];
    let (code, _, stderr, took) = fdlab_within(&args, DEADLINE);
    let errors = stderr
        .lines()
        .filter(|l| l.starts_with("fdlab: error:"))
        .count();
    let report = case.out.join("swarm.csv").is_file();
    match code {
        Some(0) if report => None,
        Some(1) if report && case.out.join("violations.csv").is_file() && errors == 0 => None,
        Some(1) if errors == 1 && stderr.lines().count() == 1 => {
            let stem = case.file.file_stem().unwrap().to_string_lossy();
            if !stderr.contains(stem.as_ref()) {
                return Some(format!("error names no file: {stderr}"));
            }
            case.out.exists().then(|| format!("exit 1 but wrote {out}"))
        }
        None => Some(format!("no end within {took:?}")),
        other => Some(format!("exit {other:?}, report {report}: {stderr}")),
    }
}

/// The problems of one case, if any.
fn check(case: &Case) -> Option<String> {
    if case.name.starts_with(SWARM_PREFIX) {
        return check_swarm(case);
    }
    let file = case.file.to_str().unwrap();
    let out = case.out.to_str().unwrap();
    let stem = case
        .file
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let args = [
        "run",
        file,
        "--seeds",
        "1",
        "--max-events",
        MAX_EVENTS,
        "--out",
        out,
    ];
    let (code, stdout, stderr, took) = fdlab_within(&args, DEADLINE);
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("fdlab: error:"))
        .collect();
    match code {
        Some(0) => {
            for f in ["index.html", "summary.csv", "runs.csv", "report.md"] {
                if !case.out.join(f).is_file() {
                    return Some(format!("exit 0 without {f}"));
                }
            }
            let Some(events) = stdout.lines().find_map(|l| {
                l.split(" runs, ")
                    .nth(1)?
                    .split(' ')
                    .next()?
                    .parse::<f64>()
                    .ok()
            }) else {
                return Some(format!("exit 0 without an event count: {stdout:?}"));
            };
            let mut dry = args.to_vec();
            dry.push("--dry-run");
            let (_, plan, _, _) = fdlab_within(&dry, DEADLINE);
            let Some(estimate) = plan
                .lines()
                .find(|l| l.starts_with(&stem))
                .and_then(|l| l.split_whitespace().nth(2)?.parse::<f64>().ok())
            else {
                return Some(format!("no estimate in the dry run: {plan:?}"));
            };
            (events > 2.0 * estimate.max(1_000.0))
                .then(|| format!("ran {events} events, estimated {estimate}"))
        }
        Some(1) => {
            if errors.len() != 1 || stderr.lines().count() != 1 {
                return Some(format!("exit 1 with stderr {stderr:?}"));
            }
            if !errors[0].contains(&stem) {
                return Some(format!("error names no file: {}", errors[0]));
            }
            if errors[0].chars().count() > MAX_ERROR_CHARS {
                return Some(format!(
                    "an error of {} characters",
                    errors[0].chars().count()
                ));
            }
            case.out
                .exists()
                .then(|| format!("exit 1 but wrote {}", case.out.display()))
        }
        None => Some(format!("no end within {took:?}")),
        Some(other) => Some(format!("exit {other}: {stderr}")),
    }
}

/// The problems `check` finds in `cases`, checked on every core.
fn on_every_core<T: Sync>(cases: &[T], check: impl Fn(&T) -> Option<String> + Sync) -> Vec<String> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let check = &check;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    cases
                        .iter()
                        .skip(t)
                        .step_by(threads)
                        .filter_map(check)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// Runs `per_base` mutations of every base scenario, on every core.
fn corpus(per_base: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for (name, text) in bases() {
        let mut g = Gen(name
            .bytes()
            .fold(7, |h: u64, b| h.wrapping_mul(31) ^ u64::from(b)));
        for k in 0..per_base {
            let file = dir.path().join(format!("{name}-{k:04}.toml"));
            std::fs::write(&file, mutate(&text, &mut g)).unwrap();
            cases.push(Case {
                name: format!("{name}-{k:04}"),
                out: dir.path().join(format!("out-{name}-{k:04}")),
                file,
            });
        }
    }
    let failures = on_every_core(&cases, |c| check(c).map(|p| format!("{}: {p}", c.name)));
    let reports = cases
        .iter()
        .filter(|c| c.out.join("index.html").is_file() || c.out.join("swarm.csv").is_file())
        .count();
    eprintln!(
        "{} cases: {reports} reports, {} refused",
        cases.len(),
        cases.len() - reports
    );
    // The corpus must exercise both ends, or it checks nothing.
    assert!(reports * 10 >= cases.len(), "only {reports} reports");
    assert!(
        reports * 10 <= cases.len() * 9,
        "only {} refusals",
        cases.len() - reports
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed (files in {}):\n{}",
        failures.len(),
        cases.len(),
        dir.keep().display(),
        failures.join("\n")
    );
}

/// Values a command-line argument is given: numbers past every type's
/// range, NaN, empty, huge, control and invisible characters, paths that
/// cannot be read or written.
const ARG_VALUES: [&str; 20] = [
    "",
    "0",
    "-1",
    "1e308",
    "nan",
    "inf",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "100000000",
    "1ns",
    "99999999h",
    "a\u{202E}b",
    "\u{1b}[2J",
    "x\ny",
    "/proc/fdlab-no-such",
    "/",
    ".",
    "/dev/null",
    "no-such-file.toml",
];

/// Every command's options, each on a small base command line (`OUT`
/// stands for a fresh output path, `KEYS` for a small key file): the
/// command line, and the options whose values are mutated (`@` is the
/// positional argument).
/// With `slow`, also the commands whose valid lines take seconds each
/// (the CI gate's suite, real processes on loopback, a benchmark).
fn command_lines(slow: bool) -> Vec<(Vec<&'static str>, Vec<&'static str>)> {
    let mut lines = vec![
        (
            vec![
                "run",
                "crash-mesh",
                "--seeds",
                "1",
                "--dry-run",
                "--out",
                "OUT",
            ],
            vec!["@", "--seeds", "--seed", "--jobs", "--max-events", "--out"],
        ),
        (
            vec!["replay", "crash-mesh", "--seed", "1", "--out", "OUT"],
            vec!["@", "--seed", "--pair", "--judge", "--max-events", "--out"],
        ),
        (
            vec![
                "tune",
                "crash-mesh",
                "--detector",
                "fixed-timeout",
                "--seeds",
                "1",
                "--dry-run",
            ],
            vec![
                "@",
                "--detector",
                "--seeds",
                "--seed",
                "--objective",
                "--max-false-failed-per-hour",
                "--set",
                "--jobs",
                "--out",
            ],
        ),
        (
            vec![
                "sweep",
                "crash-mesh",
                "--vary",
                "fixed-3s.timeout=1s,2s",
                "--seeds",
                "1",
                "--dry-run",
                "--out",
                "OUT",
            ],
            vec![
                "@", "--vary", "--sample", "--seeds", "--seed", "--shard", "--jobs", "--out",
            ],
        ),
        (
            vec![
                "swarm",
                "scenarios/swarm/mesh-crashes.toml",
                "--runs",
                "1",
                "--dry-run",
                "--out",
                "OUT",
            ],
            vec![
                "@",
                "--runs",
                "--seed",
                "--time-budget",
                "--jobs",
                "--max-events",
                "--out",
            ],
        ),
        (
            vec![
                "trace",
                "--detector",
                "kind=phi-accrual",
                "scenarios/examples/heartbeats.csv",
                "--out",
                "OUT",
            ],
            vec!["@", "--detector", "--out"],
        ),
        (
            vec![
                "place",
                "--servers",
                "a:1,b:2=3",
                "--keys",
                "KEYS",
                "--dead",
                "a:1",
            ],
            vec![
                "--servers",
                "--keys",
                "--dead",
                "--distribution",
                "--hash",
                "--namespace",
                "--servers-file",
            ],
        ),
        (
            vec!["merge", "--out", "OUT", "no-such-dir"],
            vec!["@", "--out"],
        ),
        (vec!["list"], vec!["@"]),
    ];
    if slow {
        lines.extend([
            (
                vec![
                    "check",
                    "--suite",
                    "scenarios/ci",
                    "--baseline",
                    "scenarios/ci-baseline.toml",
                    "--junit",
                    "OUT",
                ],
                vec!["--suite", "--baseline", "--junit", "--markdown", "--jobs"],
            ),
            (
                vec![
                    "live",
                    "scenarios/live/crash.toml",
                    "--duration",
                    "3s",
                    "--timeout",
                    "20s",
                    "--out",
                    "OUT",
                ],
                vec![
                    "@",
                    "--seed",
                    "--duration",
                    "--sim-seeds",
                    "--timeout",
                    "--out",
                ],
            ),
            (vec!["bench", "--quick", "--only", "trace"], vec!["--only"]),
        ]);
    }
    lines
}

/// The positional arguments of the base command lines.
const POSITIONALS: [&str; 5] = [
    "crash-mesh",
    "scenarios/live/crash.toml",
    "scenarios/swarm/mesh-crashes.toml",
    "scenarios/examples/heartbeats.csv",
    "no-such-dir",
];

/// Each command line with one argument's value replaced by a hostile one
/// (or the option added with it).
fn command_cases(slow: bool) -> Vec<Vec<String>> {
    let mut cases = Vec::new();
    for (base, options) in command_lines(slow) {
        for option in options {
            for value in ARG_VALUES {
                let mut args: Vec<String> = base.iter().map(|a| a.to_string()).collect();
                if option == "@" {
                    match args.iter().position(|a| POSITIONALS.contains(&a.as_str())) {
                        Some(i) => args[i] = value.to_string(),
                        None => args.push(value.to_string()),
                    }
                } else if let Some(i) = args.iter().position(|a| a == option) {
                    args[i + 1] = value.to_string();
                } else {
                    args.push(option.to_string());
                    args.push(value.to_string());
                }
                cases.push(args);
            }
        }
    }
    cases
}

/// The problems of one command line, if any: it must end (within the
/// deadline) with exit 0, or exit 1 with exactly one `fdlab: error:` line
/// (tune may also say 2, "no setting met the constraint"), and never panic.
fn check_command(args: &[String], dir: &Path, k: usize) -> Option<String> {
    let out = dir.join(format!("out-{k}"));
    let keys = dir.join("keys.txt");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.as_str() {
            "OUT" => out.to_str().unwrap().to_string(),
            "KEYS" => keys.to_str().unwrap().to_string(),
            _ if a.starts_with("scenarios/") => root.join(a).to_str().unwrap().to_string(),
            _ => a.clone(),
        })
        .collect();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    // In a directory of its own: an output named by a hostile value (`0`,
    // `nan`) lands there, not in the checkout.
    let cwd = dir.join(format!("cwd-{k}"));
    std::fs::create_dir_all(&cwd).unwrap();
    let (code, _, stderr, took) = fdlab_within_in(&cwd, &refs, DEADLINE);
    if stderr.contains("panicked") {
        return Some(format!("panicked: {}", stderr.lines().next().unwrap_or("")));
    }
    let errors = stderr
        .lines()
        .filter(|l| l.starts_with("fdlab: error:"))
        .count();
    match code {
        Some(0) => None,
        Some(2) if args[0] == "tune" && errors == 0 => None,
        Some(1) if errors == 1 && stderr.lines().count() == 1 => {
            let line = stderr.trim_end();
            (line.chars().count() > MAX_ERROR_CHARS)
                .then(|| format!("an error of {} characters", line.chars().count()))
        }
        None if took < DEADLINE => Some(format!("killed by a signal: {stderr:?}")),
        None => Some(format!("no end within {took:?}")),
        other => Some(format!("exit {other:?}: {stderr:?}")),
    }
}

/// Longest error line a command line may get: it is read on a terminal.
const MAX_ERROR_CHARS: usize = 400;

/// Runs every `step`-th command case, on every core.
fn command_corpus(step: usize, slow: bool) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keys.txt"), "k1\nk2\nuser:42\n").unwrap();
    let cases: Vec<(usize, Vec<String>)> = command_cases(slow)
        .into_iter()
        .enumerate()
        .step_by(step)
        .collect();
    let failures = on_every_core(&cases, |(k, a)| {
        check_command(a, dir.path(), *k).map(|p| format!("{a:?}: {p}"))
    });
    eprintln!("{} command lines", cases.len());
    // `--out /dev/null` is written in place: renamed over, the device
    // became a plain file that kept what was written (as root).
    let null = std::fs::metadata("/dev/null");
    assert!(
        null.map_or(true, |m| !m.is_file()),
        "/dev/null is a regular file now"
    );
    assert!(
        failures.is_empty(),
        "{} of {} command lines failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn command_lines_end_in_output_or_one_error() {
    command_corpus(QUICK_COMMAND_STEP, false);
}

#[test]
#[ignore = "every command line: run with --release -- --ignored"]
fn every_hostile_command_line() {
    command_corpus(1, true);
}

#[test]
fn mutated_scenarios_end_in_a_report_or_one_error() {
    corpus(QUICK_PER_BASE);
}

#[test]
#[ignore = "the whole corpus: about 10,000 cases; run with --release -- --ignored"]
fn every_mutation_of_every_scenario() {
    corpus(600);
}
