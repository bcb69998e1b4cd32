//! A one-node Slurm cluster of a test's own: `munged`, `slurmctld` and
//! `slurmd` from Debian's munge and slurm-wlm, started as root with their
//! key, socket, configuration, state and logs in one temporary directory and
//! their ports on loopback, so that they neither use nor disturb a system
//! Slurm. Dropping the cluster kills every process it started and every
//! process of its jobs, pass or fail.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The programs the cluster runs: its daemons and the client commands.
const PROGRAMS: [&str; 6] = [
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "scontrol",
    "sinfo",
];

/// Where a missing program comes from.
const INSTALL: &str = "apt-get install slurm-wlm munge";

/// Set (to anything) where the cluster must run (CI): a skip is a failure.
const REQUIRE: &str = "FDLAB_REQUIRE_SLURM";

/// How long the daemons get to come up: munged's socket, then the node idle.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(20);

/// Bytes of random munge key (what `mungekey` writes by default).
const MUNGE_KEY_BYTES: usize = 1024;

/// Seconds a requeued job waits before it may start again (Slurm's
/// `cred_expire`, 120 s by default: a requeue test would take minutes).
const CRED_EXPIRE_S: u32 = 5;

/// Seconds slurmctld keeps a finished job. `sbatch --wait` polls every 2 s,
/// and backs off to 8 s and more unless this is at most 4 s.
const MIN_JOB_AGE_S: u32 = 4;

/// Seconds between backfill passes, which start a requeued job once its
/// wait is over (30 s by default).
const BACKFILL_INTERVAL_S: u32 = 1;

/// How long the cluster's processes get to disappear after SIGKILL.
const KILL_TIMEOUT: Duration = Duration::from_secs(10);

/// `program` on PATH or in the sbin directories (not on a user's PATH).
fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin"].map(PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Whether the cluster can run here (the programs installed, and root);
/// when not, prints in one line what `test` skips and how to install them,
/// or fails where `FDLAB_REQUIRE_SLURM` is set.
pub fn here(test: &str) -> bool {
    let missing: Vec<&str> = PROGRAMS
        .into_iter()
        .filter(|p| which(p).is_none())
        .collect();
    let root = fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    let why = if !missing.is_empty() {
        format!("Slurm not installed (no {}); {INSTALL}", missing.join(", "))
    } else if !root {
        "the one-node Slurm cluster runs its daemons as root; run as root".to_string()
    } else {
        return true;
    };
    let line = format!("{test}: skipped: {why}");
    assert!(
        std::env::var_os(REQUIRE).is_none(),
        "{line} ({REQUIRE} is set)"
    );
    eprintln!("{line}");
    false
}

/// A running one-node cluster in a directory of its own.
pub struct Cluster {
    dir: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

impl Cluster {
    /// Starts the daemons in `dir` (made world-searchable: munged refuses a
    /// socket in a directory others cannot search) and waits until the node
    /// takes jobs.
    pub fn start(dir: &Path) -> Cluster {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
        let mut cluster = Cluster {
            dir: dir.to_path_buf(),
            daemons: Vec::new(),
        };
        let key = dir.join("munge.key");
        let mut bytes = vec![0; MUNGE_KEY_BYTES];
        fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
            .unwrap();
        fs::write(&key, bytes).unwrap();
        fs::set_permissions(&key, fs::Permissions::from_mode(0o400)).unwrap();
        let socket = dir.join("munge.socket");
        let at = |name: &str| format!("{}", dir.join(name).display());
        cluster.spawn(
            "munged",
            &[
                "--foreground".to_string(),
                format!("--socket={}", socket.display()),
                format!("--key-file={}", key.display()),
                format!("--pid-file={}", at("munged.pid")),
                format!("--log-file={}", at("munged.log")),
                format!("--seed-file={}", at("munged.seed")),
            ],
        );
        cluster.wait_for("munged's socket", |_| socket.exists());

        let host = short_hostname();
        fs::write(dir.join("slurm.conf"), config(dir, &host, &socket)).unwrap();
        fs::create_dir_all(dir.join("state")).unwrap();
        fs::create_dir_all(dir.join("spool")).unwrap();
        cluster.spawn("slurmctld", &["-D".to_string()]);
        cluster.spawn("slurmd", &["-D".to_string(), "-N".to_string(), host]);
        cluster.wait_for("the node idle", |cluster| {
            cluster
                .command("sinfo")
                .args(["--noheader", "--format=%T"])
                .stderr(Stdio::null())
                .output()
                .is_ok_and(|o| o.status.success() && o.stdout == b"idle\n")
        });
        cluster
    }

    /// Starts daemon `name` in the foreground, its output into `dir`.
    fn spawn(&mut self, name: &'static str, args: &[String]) {
        let out = fs::File::create(self.dir.join(format!("{name}.out"))).unwrap();
        let child = self
            .command(name)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        self.daemons.push((name, child));
    }

    /// Waits until `ready`, failing with the logs when a daemon has ended
    /// or `START_TIMEOUT` has passed.
    fn wait_for(&mut self, what: &str, ready: impl Fn(&Cluster) -> bool) {
        let started = Instant::now();
        while !ready(self) {
            let ended = self
                .daemons
                .iter_mut()
                .find_map(|(name, child)| Some((*name, child.try_wait().unwrap()?)));
            if let Some((name, status)) = ended {
                panic!("{name} ended ({status}) before {what}\n{}", self.logs());
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "no {what} within {START_TIMEOUT:?}\n{}",
                self.logs()
            );
            std::thread::sleep(POLL);
        }
    }

    /// `program` (a Slurm command or daemon) run against this cluster's
    /// configuration, without the Slurm variables of a job this test may
    /// itself run in.
    pub fn command(&self, program: &str) -> Command {
        let path = which(program).unwrap_or_else(|| panic!("no {program}"));
        let mut command = Command::new(path);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("SLURM_") {
                command.env_remove(key);
            }
        }
        command
            .env("SLURM_CONF", self.dir.join("slurm.conf"))
            .env_remove("JOB_COMPLETION_INDEX");
        command
    }

    /// Submits `script` as `sbatch --wait ARGS SCRIPT` run in `cwd` with
    /// `env`: the job id once it is submitted, and the waiting `sbatch`.
    pub fn submit(&self, cwd: &Path, args: &[&str], script: &Path, env: &[(&str, &str)]) -> Job {
        let mut command = self.command("sbatch");
        command
            .current_dir(cwd)
            .arg("--wait")
            .arg("--parsable")
            .args(args)
            .arg(script)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut sbatch = command.spawn().expect("runs sbatch");
        // --parsable: the id alone on the first line, as soon as it is queued.
        let mut line = String::new();
        let mut stdout = std::io::BufReader::new(sbatch.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        let Ok(id) = line.trim().parse() else {
            let out = sbatch.wait_with_output().unwrap();
            panic!(
                "sbatch printed no job id: {line}{}\n{}",
                super::text(&out.stderr),
                self.logs()
            );
        };
        Job { id, sbatch }
    }

    /// The last lines of each daemon's log, for a failing test's message.
    pub fn logs(&self) -> String {
        const LAST_LINES: usize = 15;
        ["munged.log", "slurmctld.log", "slurmd.log"]
            .iter()
            .map(|name| {
                let text = fs::read_to_string(self.dir.join(name)).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let tail = lines[lines.len().saturating_sub(LAST_LINES)..].join("\n");
                format!("--- {name}:\n{tail}\n")
            })
            .collect()
    }
}

impl Drop for Cluster {
    /// Kills the daemons, then every process that names the cluster's
    /// directory in its command line or environment: the job steps, the
    /// job scripts and their `fdlab` (each carries `SLURM_CONF`) and any
    /// `sbatch` still waiting.
    fn drop(&mut self) {
        for (_, child) in &mut self.daemons {
            let _ = child.kill();
            let _ = child.wait();
        }
        let started = Instant::now();
        loop {
            let left = processes_naming(&self.dir);
            if left.is_empty() || started.elapsed() > KILL_TIMEOUT {
                break;
            }
            for (pid, _) in left {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            std::thread::sleep(POLL);
        }
    }
}

/// A submitted job and the `sbatch --wait` that waits for it.
pub struct Job {
    pub id: u32,
    sbatch: Child,
}

impl Job {
    /// Whether `sbatch --wait` has ended.
    pub fn ended(&mut self) -> bool {
        self.sbatch.try_wait().unwrap().is_some()
    }

    /// Waits for every task to end: how `sbatch --wait` ended and its
    /// standard error, or `None` after `timeout` (when it is killed).
    pub fn wait(mut self, timeout: Duration) -> Option<(ExitStatus, String)> {
        let started = Instant::now();
        while !self.ended() {
            if started.elapsed() > timeout {
                let _ = self.sbatch.kill();
                let _ = self.sbatch.wait();
                return None;
            }
            std::thread::sleep(POLL);
        }
        let out = self.sbatch.wait_with_output().unwrap();
        Some((out.status, super::text(&out.stderr)))
    }
}

/// The live processes (pid and command line) other than this one whose
/// command line or environment contains `dir`.
pub fn processes_naming(dir: &Path) -> Vec<(i32, String)> {
    let needle = dir.as_os_str().as_encoded_bytes();
    let me = std::process::id();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let read = |f: &str| fs::read(e.path().join(f)).unwrap_or_default();
            let (cmdline, environ) = (read("cmdline"), read("environ"));
            let names = |bytes: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
            let zombie = fs::read_to_string(e.path().join("stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            });
            let ours = names(&cmdline) || names(&environ);
            (ours && !zombie && u32::try_from(pid).ok() != Some(me)).then(|| {
                let args = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                (pid, args)
            })
        })
        .collect()
}

/// This machine's name up to its first dot: slurmctld runs only where it
/// is the configured controller's name.
fn short_hostname() -> String {
    let name = fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    name.trim().split('.').next().unwrap().to_string()
}

/// A port free on loopback now (the daemons bind it a moment later).
fn free_ports() -> (u16, u16) {
    let a = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let b = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

/// A minimal slurm.conf: one node with this machine's CPUs on loopback,
/// root throughout, no cgroups, munge through the cluster's own socket,
/// every file in `dir`.
fn config(dir: &Path, host: &str, socket: &Path) -> String {
    let (ctld_port, slurmd_port) = free_ports();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let d = dir.display();
    format!(
        "ClusterName=fdlab
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket},cred_expire={CRED_EXPIRE_S}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge={MIN_JOB_AGE_S}
SchedulerParameters=bf_interval={BACKFILL_INTERVAL_S}
MailProg=/bin/true
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
",
        socket = socket.display()
    )
}
