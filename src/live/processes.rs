//! The child processes of a live run (`fdlab live-node` nodes, or real
//! memberlist agents), by number: signalled by number, and all killed and
//! reaped when the set is dropped, whatever ended the run: its end, an
//! error, its time bound or Ctrl-C ([`on_interrupt`], [`check_bound`]).

use std::process::{Child, ChildStdin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::unistd::Pid;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// From now on, Ctrl-C makes [`check_bound`] fail instead of ending fdlab,
/// so that the run's processes are reaped on the way out.
pub fn on_interrupt() {
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
}

/// An error once the run is interrupted or past `deadline` (`bound` after
/// its start); `what` names its processes ("node", "agent").
pub fn check_bound(deadline: Instant, bound: Duration, what: &str) -> Result<(), String> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err(format!("interrupted; every {what} process was killed"));
    }
    if Instant::now() >= deadline {
        return Err(format!(
            "the live run passed its bound of {:.0} s (--timeout); every {what} process was killed",
            bound.as_secs_f64()
        ));
    }
    Ok(())
}

/// The processes; dropping it kills and reaps every one.
#[derive(Default)]
pub struct Processes {
    pub children: Vec<Child>,
    /// Each one's standard input (closed by [`Processes::reap`]).
    pub stdins: Vec<Option<ChildStdin>>,
}

impl Processes {
    /// Adds `child`, keeping its standard input.
    pub fn push(&mut self, mut child: Child) {
        self.stdins.push(child.stdin.take());
        self.children.push(child);
    }

    /// Sends `signal` to process `number`.
    pub fn signal(&self, number: u32, signal: Signal) {
        let id = self.children[number as usize].id();
        let pid = Pid::from_raw(i32::try_from(id).unwrap_or(i32::MAX));
        // A process that is already gone cannot be signalled: nothing to do.
        let _ = nix::sys::signal::kill(pid, signal);
    }

    /// Kills and waits for every process.
    pub fn reap(&mut self) {
        self.stdins.clear();
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.children.clear();
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        self.reap();
    }
}
