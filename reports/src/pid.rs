//! Whether a process id names a running process.
//!
//! Temporary files, temporary report directories and a sweep's lock carry
//! the pid of the process that made them, so that a later process can tell
//! the leftovers of a killed writer (safe to remove or take over) from the
//! work of a writer still running (never touched).

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// This process's id.
pub fn own() -> u32 {
    std::process::id()
}

/// Whether `pid` is a running process (of any user). A pid that is gone may
/// be reused by another process later; the answer is then "running", which
/// only keeps a leftover a little longer: never the other way round.
pub fn is_running(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    // 0 and negative numbers address process groups, not one process.
    if raw <= 0 {
        return false;
    }
    match kill(Pid::from_raw(raw), None) {
        Ok(()) => true,
        Err(Errno::ESRCH) => false,
        // EPERM: it exists, owned by another user.
        Err(_) => true,
    }
}

/// A pid written as decimal digits (no sign, no leading `+`), as in the names
/// and files fdlab writes.
pub fn parse(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_a_reaped_child_does_not() {
        assert!(is_running(own()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!is_running(pid));
        assert!(!is_running(0));
        assert!(!is_running(u32::MAX));
    }

    #[test]
    fn only_plain_digits_are_a_pid() {
        assert_eq!(parse("1234"), Some(1234));
        for bad in ["", "+1", "-1", "12a", " 1", "99999999999"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
