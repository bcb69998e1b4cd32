//! A real scheduler (issue 36): the repository's Slurm array script and
//! Kubernetes Indexed Job, which docs/sweep-and-tune.md shows verbatim, run
//! a sweep in shards whose `fdlab merge` is byte-identical to the sweep run
//! on one machine, also when a task is killed and requeued mid-shard.
//!
//! The Slurm test starts its own one-node cluster (tests/common/
//! slurm_cluster.rs) and needs Debian's slurm-wlm and munge, and root;
//! without them it says so in one line and passes, unless
//! `FDLAB_REQUIRE_SLURM` is set (CI sets it). Kubernetes cannot run here:
//! its test runs the Job's container command once per completion index.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

mod common;
use common::slurm_cluster::{self, Cluster};
use common::sweep_fixture::assert_same_files;
use common::{fdlab, text};

const SBATCH_SCRIPT: &str = "deploy/slurm/sweep-array.sbatch";
const INDEXED_JOB: &str = "deploy/kubernetes/sweep-indexed-job.yaml";
const DOC: &str = "docs/sweep-and-tune.md";

/// The sweep both files run, by default: the one-machine reference.
const SCENARIO: &str = "pipeline-freeze";
const VARY: &str = "phi-accrual.threshold=0.5..16:log200";
const DOC_SEEDS: u32 = 50;

/// Array tasks, so shards, of the Slurm runs (2 run at once on 2 CPUs).
const TASKS: u32 = 4;

/// Seeds of the run with a killed task (its `SEEDS`): 100 seeds per task,
/// a few seconds each on one CPU, so that the kill lands mid-shard.
const KILL_SEEDS: u32 = 400;

/// The task that is killed and requeued.
const KILLED_TASK: u32 = 0;

/// How long an array may take: seconds of work, `sbatch --wait` polling
/// every 2 s, a requeued task waiting its 5 s.
const ARRAY_TIMEOUT: Duration = Duration::from_secs(120);

/// How often the test looks at the killed task's journal.
const POLL: Duration = Duration::from_millis(5);

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// A PATH whose `fdlab` is this build's: the name the script and the Job
/// run, in a directory of `dir` put first.
fn path_with_fdlab(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fdlab"), bin.join("fdlab")).unwrap();
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", bin.display())
}

/// The whole sweep of `seeds` seeds on this machine, into `out`.
fn one_machine(seeds: u32, out: &Path) {
    let seeds = seeds.to_string();
    let out_text = out.to_str().unwrap();
    let o = fdlab(&[
        "sweep", SCENARIO, "--vary", VARY, "--seeds", &seeds, "--out", out_text,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// Runs `line` with `sh -c` in `dir` with `path`, as a job's shell would,
/// which must succeed.
fn sh(line: &str, dir: &Path, path: &str, env: &[(&str, String)]) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert!(o.status.success(), "`{line}` in {}: {err}", dir.display());
}

/// The fenced blocks of a Markdown text, each its lines with their ends.
fn fenced_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<String> = None;
    for line in markdown.lines() {
        match (&mut open, line.starts_with("```")) {
            (None, true) => open = Some(String::new()),
            (Some(block), true) => {
                blocks.push(std::mem::take(block));
                open = None;
            }
            (Some(block), false) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, false) => {}
        }
    }
    blocks
}

#[test]
fn the_doc_shows_the_deploy_files_exactly() {
    let doc = std::fs::read_to_string(repo(DOC)).unwrap();
    let blocks = fenced_blocks(&doc);
    for file in [SBATCH_SCRIPT, INDEXED_JOB] {
        let text = std::fs::read_to_string(repo(file)).unwrap();
        assert!(
            blocks.contains(&text),
            "{DOC} has no fenced block equal to {file}: copy the file into the doc"
        );
        assert!(
            doc.contains(&format!("`{file}`")),
            "{DOC} does not name {file}"
        );
    }
}

/// What the test runs of the Indexed Job.
struct IndexedJob {
    completions: u32,
    working_dir: String,
    mount_path: String,
    /// The container's `sh -c` line: the `args` item, its lines folded.
    command: String,
    /// The merge the file's last comment gives, run in the working dir.
    merge: String,
}

/// Reads the few fields the test needs from the Job's YAML (no YAML crate:
/// the file's layout is the repository's own, and this fails on another).
fn indexed_job(yaml: &str) -> IndexedJob {
    let field = |key: &str| {
        yaml.lines()
            .find_map(|l| l.trim().strip_prefix(key))
            .unwrap_or_else(|| panic!("{INDEXED_JOB}: no `{key}`"))
            .trim()
            .to_string()
    };
    let lines: Vec<&str> = yaml.lines().collect();
    assert_eq!(field("command:"), r#"["sh", "-c"]"#);
    let args = lines
        .iter()
        .position(|l| l.trim() == "args:")
        .expect("args:");
    let item = lines[args + 1];
    let indent = item.len() - item.trim_start().len();
    let first = item.trim().strip_prefix("- ").expect("args: one item");
    let rest = lines[args + 2..]
        .iter()
        .take_while(|l| l.len() - l.trim_start().len() > indent)
        .map(|l| l.trim());
    let command = std::iter::once(first)
        .chain(rest)
        .collect::<Vec<_>>()
        .join(" ");
    let mount = field("volumeMounts:");
    let mount_path = mount
        .split("mountPath:")
        .nth(1)
        .expect("mountPath")
        .trim_matches(|c: char| c.is_whitespace() || c == '}' || c == ']')
        .to_string();
    IndexedJob {
        completions: field("completions:").parse().unwrap(),
        working_dir: field("workingDir:"),
        mount_path,
        command,
        merge: field("# then, in the working directory:"),
    }
}

#[test]
fn the_indexed_job_run_once_per_index_merges_to_the_one_machine_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let job = indexed_job(&std::fs::read_to_string(repo(INDEXED_JOB)).unwrap());
    assert!(
        job.command
            .contains(&format!("--shard-count {} ", job.completions)),
        "{INDEXED_JOB}: --shard-count is not completions ({}): {}",
        job.completions,
        job.command
    );
    assert_eq!(
        job.working_dir, job.mount_path,
        "the shards land on the volume"
    );

    let whole = dir.path().join("whole");
    one_machine(DOC_SEEDS, &whole);
    // The volume: the working directory, as the pods share it.
    let volume = dir.path().join("results");
    std::fs::create_dir(&volume).unwrap();
    let path = path_with_fdlab(dir.path());
    for index in 0..job.completions {
        let env = [("JOB_COMPLETION_INDEX", index.to_string())];
        sh(&job.command, &volume, &path, &env);
    }
    sh(&job.merge, &volume, &path, &[]);
    assert_same_files(&whole, &volume.join("merged"));
}

/// The script's last line, a comment: the merge to run afterwards.
fn script_merge(script: &str) -> String {
    let last = script.lines().last().unwrap();
    let merge = last
        .strip_prefix("# afterwards: ")
        .expect("a last `# afterwards:` line");
    merge.to_string()
}

/// Whole unit lines in a sweep's journal (its header and a line still
/// being written left out); 0 while the journal does not exist.
fn journal_units(journal: &Path) -> usize {
    let text = std::fs::read_to_string(journal).unwrap_or_default();
    text.matches('\n').count().saturating_sub(1)
}

/// The units a resumed shard found done, and all it has, from its
/// `resuming DIR: D of N units already done` line.
fn resumed_units(log: &str) -> Option<(u64, u64)> {
    let line = log.lines().find(|l| l.starts_with("resuming "))?;
    let figures = line.rsplit(": ").next()?;
    let mut words = figures.split(' ');
    let done = words.next()?.parse().ok()?;
    let total = words.nth(1)?.parse().ok()?;
    Some((done, total))
}

/// `sbatch --wait --array` of the repository's script in `run` (its
/// results land in `run/results`), with `SEEDS` from `seeds`; one CPU per
/// task, as the cluster has fewer than the script asks for. Each task's
/// output, appended over its runs, is in `run/slurm-TASK.out`.
fn submit(cluster: &Cluster, run: &Path, path: &str, seeds: Option<u32>) -> slurm_cluster::Job {
    std::fs::create_dir_all(run).unwrap();
    let array = format!("--array=0-{}", TASKS - 1);
    let args = [
        array.as_str(),
        "--cpus-per-task=1",
        "--output=slurm-%a.out",
        "--open-mode=append",
    ];
    let seeds = seeds.map(|s| s.to_string());
    let mut env = vec![("PATH", path)];
    if let Some(seeds) = &seeds {
        env.push(("SEEDS", seeds.as_str()));
    }
    cluster.submit(run, &args, &repo(SBATCH_SCRIPT), &env)
}

/// Waits for `job`, submitted in `run`, which must succeed; else fails
/// with its tasks' output and the daemons' logs.
fn wait_ok(cluster: &Cluster, job: slurm_cluster::Job, run: &Path) {
    let id = job.id;
    let outcome = job.wait(ARRAY_TIMEOUT);
    if outcome.as_ref().is_some_and(|(status, _)| status.success()) {
        return;
    }
    let tasks: String = (0..TASKS)
        .map(|t| {
            let out = std::fs::read_to_string(run.join(format!("slurm-{t}.out")));
            format!("--- task {t}:\n{}\n", out.unwrap_or_default())
        })
        .collect();
    let how = match outcome {
        None => format!("not done within {ARRAY_TIMEOUT:?}"),
        Some((status, err)) => format!("{status}: {err}"),
    };
    panic!("job {id}: {how}\n{tasks}{}", cluster.logs());
}

/// The array run twice on the cluster: once whole, once with a task killed
/// mid-shard by `scontrol requeue` (which kills a running job) that then
/// runs again and resumes; each merge equals the one-machine sweep.
fn arrays_merge_to_the_one_machine_sweep(cluster: &Cluster, dir: &Path) {
    let path = path_with_fdlab(dir);
    let merge = script_merge(&std::fs::read_to_string(repo(SBATCH_SCRIPT)).unwrap());

    let whole = dir.join("whole");
    one_machine(DOC_SEEDS, &whole);
    let run = dir.join("array");
    wait_ok(cluster, submit(cluster, &run, &path, None), &run);
    sh(&merge, &run, &path, &[]);
    assert_same_files(&whole, &run.join("results/merged"));

    let whole = dir.join("whole-killed");
    one_machine(KILL_SEEDS, &whole);
    let run = dir.join("killed");
    let mut job = submit(cluster, &run, &path, Some(KILL_SEEDS));
    let shard = run.join(format!("results/shard-{KILLED_TASK}"));
    let started = std::time::Instant::now();
    while journal_units(&shard.join("journal.csv")) == 0 {
        assert!(
            !job.ended(),
            "the array ended before task {KILLED_TASK} journaled a unit"
        );
        assert!(
            started.elapsed() < ARRAY_TIMEOUT,
            "task {KILLED_TASK} journaled nothing within {ARRAY_TIMEOUT:?}\n{}",
            cluster.logs()
        );
        std::thread::sleep(POLL);
    }
    let task = format!("{}_{KILLED_TASK}", job.id);
    let o = cluster
        .command("scontrol")
        .args(["requeue", &task])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "scontrol requeue {task}: {}",
        text(&o.stderr)
    );
    wait_ok(cluster, job, &run);
    let log = std::fs::read_to_string(run.join(format!("slurm-{KILLED_TASK}.out"))).unwrap();
    assert!(
        log.contains("DUE TO JOB REQUEUE"),
        "task {KILLED_TASK} was not requeued: {log}"
    );
    let (done, total) = resumed_units(&log).unwrap_or_else(|| panic!("no resume: {log}"));
    assert!(
        0 < done && done < total,
        "killed with {done} of {total} units done: {log}"
    );
    sh(&merge, &run, &path, &[]);
    assert_same_files(&whole, &run.join("results/merged"));
}

#[test]
fn slurm_array_shards_merge_to_the_one_machine_sweep_also_after_a_requeue() {
    let test = "slurm_array_shards_merge_to_the_one_machine_sweep_also_after_a_requeue";
    if !slurm_cluster::here(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The cluster is dropped, killing what it started, before the check
    // below, whether the runs passed or failed.
    let runs = catch_unwind(AssertUnwindSafe(|| {
        let cluster = Cluster::start(dir.path());
        arrays_merge_to_the_one_machine_sweep(&cluster, dir.path());
    }));
    let left = slurm_cluster::processes_naming(dir.path());
    if left.is_empty() {
        if let Err(panic) = runs {
            resume_unwind(panic);
        }
    } else {
        if runs.is_err() {
            eprintln!("(and the runs failed, above)");
        }
        panic!("processes left running: {left:?}");
    }
}
