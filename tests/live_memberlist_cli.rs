//! `fdlab live` on membership scenarios: real memberlist agents beside
//! fdlab's model (SPEC §12). The runs need Debian's golang-go and
//! golang-github-hashicorp-memberlist-dev; without them each such test says
//! in one line what it skips and how to install them, unless
//! `FDLAB_REQUIRE_MEMBERLIST` is set (CI sets it: there a skip is a failure).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{fdlab, text};

const MEMBERLIST: &str = "/usr/share/gocode/src/github.com/hashicorp/memberlist/memberlist.go";

/// Whether the agents can be built here; when not, prints what `test`
/// skips (or fails, where they are required).
fn agents_here(test: &str) -> bool {
    let go = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("go").is_file()))
        || Path::new("/usr/lib/go/bin/go").is_file();
    if go && Path::new(MEMBERLIST).is_file() {
        return true;
    }
    let line = format!(
        "{test}: skipped: the real memberlist agents need Debian's golang-go and golang-github-hashicorp-memberlist-dev (apt-get install golang-go golang-github-hashicorp-memberlist-dev)"
    );
    assert!(
        std::env::var_os("FDLAB_REQUIRE_MEMBERLIST").is_none(),
        "{line}"
    );
    eprintln!("{line}");
    false
}

/// The pids of the agents `parent` started (each carries `-parent=PID`).
fn agents_of(parent: u32) -> Vec<u32> {
    let mark = format!("-parent={parent}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let zombie = std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        });
        let ours = cmdline.split(|&b| b == 0).any(|a| a == mark.as_bytes());
        (ours && !zombie).then_some(pid)
    })
    .collect()
}

#[test]
fn scenarios_the_real_library_cannot_run_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let o = fdlab(&["live", "orleans-crash", "--out", out]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "orleans-crash: membership.judges: `classic`: an Orleans judge is not supported live"
        ),
        "{err}"
    );
    assert!(!Path::new(out).exists());
    for (args, expect) in [
        (
            &["scenarios/memberlist/crash-20.toml", "--runs", "0"][..],
            "--runs 0: a live membership run makes 1 to 100 real runs per judge",
        ),
        (
            &["crash-mesh", "--runs", "2"][..],
            "--runs 2: a detector scenario runs live once",
        ),
    ] {
        let o = fdlab(&[&["live", "--out", out][..], args].concat());
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(expect), "{err}");
    }
    // A network fault and the heavy-tailed starvation, in scenario files.
    let base = std::fs::read_to_string("scenarios/memberlist/crash-20.toml").unwrap();
    for (fault, expect) in [
        (
            "kind = \"partition\"\nshape = \"isolate\"\nnode = \"n3\"\nat = \"5s\"\nduration = \"5s\"",
            "faults[1].kind = \"partition\": not supported by the real memberlist",
        ),
        (
            "kind = \"degrade\"\nnode = \"n3\"\nat = \"5s\"\nprocessing = { dist = \"pareto\", scale = \"5ms\", shape = 1.1 }",
            "faults[1]: a degrade with a processing time or a slowdown cannot be injected",
        ),
    ] {
        let file = dir.path().join("refused.toml");
        std::fs::write(&file, format!("{base}\n[[faults]]\n{fault}\n")).unwrap();
        let o = fdlab(&["live", file.to_str().unwrap(), "--out", out]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(expect), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!Path::new(out).exists());
    }
}

/// The short calibration CI runs: one crash at 20 members and one pause,
/// one real run per judge. What the real library did is printed, not
/// checked against the model (that is the published table's job); checked
/// are that it ran, found the crash, and left no process.
#[test]
fn a_crash_and_a_pause_run_on_real_agents_and_leave_no_process() {
    if !agents_here("a_crash_and_a_pause_run_on_real_agents_and_leave_no_process") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for scenario in ["crash-20", "pause-5s"] {
        let out = dir.path().join(scenario);
        let file = format!("scenarios/memberlist/{scenario}.toml");
        let child = Command::new(env!("CARGO_BIN_EXE_fdlab"))
            .args([
                "live",
                &file,
                "--sim-seeds",
                "5",
                "--out",
                out.to_str().unwrap(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let o = child.wait_with_output().unwrap();
        let stdout = text(&o.stdout);
        println!("{stdout}");
        assert!(o.status.success(), "{scenario}: {}", text(&o.stderr));
        assert_eq!(agents_of(pid), Vec::<u32>::new(), "{scenario}: agents left");
        let csv = std::fs::read_to_string(out.join("calibration.csv")).unwrap();
        let events = std::fs::read_to_string(out.join("events.csv")).unwrap();
        for judge in ["swim", "lifeguard"] {
            assert!(
                stdout.contains(&format!("real 1/1 {judge} seed 1: 20 agents up")),
                "{stdout}"
            );
            assert!(events.contains(&format!("{judge},1,")), "{judge}");
        }
        if scenario == "crash-20" {
            // Every judge's crash was declared by the real agents, within
            // the run (n1 crashes at 10 s of 30 s).
            let declared: Vec<&str> = csv
                .lines()
                .filter(|l| l.contains(",crash -> first Dead,"))
                .collect();
            assert_eq!(declared.len(), 2, "{csv}");
            for line in declared {
                let real: f64 = line.split(',').nth(5).unwrap().parse().unwrap();
                assert!(real > 0.0 && real < 20.0, "{line}");
            }
        } else {
            assert!(csv.contains(",refutations,"), "{csv}");
        }
    }
}

/// Waits up to `bound` for `f` to hold.
fn eventually(bound: Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + bound;
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    f()
}

#[test]
fn killing_or_interrupting_fdlab_mid_run_leaves_no_agent() {
    if !agents_here("killing_or_interrupting_fdlab_mid_run_leaves_no_agent") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for signal in ["KILL", "INT"] {
        let out = dir.path().join(signal);
        let child = Command::new(env!("CARGO_BIN_EXE_fdlab"))
            .args([
                "live",
                "scenarios/memberlist/pause-30s.toml",
                "--sim-seeds",
                "1",
            ])
            .arg("--out")
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        // Mid-run: the agents are up, and n1 is paused from 10 s (a
        // stopped agent must die too).
        assert!(
            eventually(Duration::from_secs(120), || agents_of(pid).len() == 20),
            "{signal}: the agents never started"
        );
        std::thread::sleep(Duration::from_secs(12));
        let kill = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let o = child.wait_with_output().unwrap();
        assert!(!o.status.success(), "{signal}");
        assert!(
            eventually(Duration::from_secs(10), || agents_of(pid).is_empty()),
            "{signal}: agents left: {:?}",
            agents_of(pid)
        );
        if signal == "INT" {
            let err = text(&o.stderr);
            assert!(
                err.contains("interrupted; every agent process was killed"),
                "{err}"
            );
        }
        assert!(
            !out.join("calibration.csv").exists(),
            "{signal}: a partial report"
        );
    }
}
