//! One sweep at a time in a directory.
//!
//! Two sweeps writing into one `--out` would each append the same units to
//! its journal and each write `units.csv` from what it saw. A sweep
//! therefore holds `sweep.lock` in its directory for its whole run: created
//! with `create_new` (so only one process can create it), holding the
//! sweep's pid, and removed when the sweep ends, by an error, a finished run
//! or Ctrl-C (the interrupt lets the sweep return normally). A kill leaves
//! the lock behind: a lock whose pid is no longer running is taken over,
//! with a note; a lock of a running process is an error naming the
//! directory and the pid.
//!
//! A pid means something only in its own pid namespace: a sweep restarted
//! in a new container (a Kubernetes pod restarted on its shard's volume)
//! may find its predecessor's lock with a pid that some other process of
//! the new container has, often its own. So the holder renews the lock's
//! modification time every [`RENEW_EVERY`]; a lock holding this process's
//! own pid, or not renewed for [`STALE_AFTER`], is taken over too.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use fdlab_reports::pid;

/// The lock's file in a sweep directory.
pub const LOCK: &str = "sweep.lock";

/// How old an empty or unreadable lock must be to count as left by a kill
/// (rather than one being written this very moment).
const UNREADABLE_GRACE: Duration = Duration::from_secs(10);
/// How often the holder renews its lock.
pub const RENEW_EVERY: Duration = Duration::from_secs(10);
/// A lock not renewed for this long is its holder's no more.
pub const STALE_AFTER: Duration = Duration::from_secs(60);

/// The lock on a sweep directory, held until dropped.
#[derive(Debug)]
pub struct SweepLock {
    path: PathBuf,
    /// Dropping it stops the renewals.
    _renewing: mpsc::Sender<()>,
}

/// What a lock file says about its holder.
enum Holder {
    Running(u32),
    Gone(u32),
    /// Empty or not a pid: a lock being written now, or one a kill cut.
    Unreadable {
        old: bool,
    },
    /// Removed meanwhile.
    None,
}

/// How long ago `path` was last written (zero if in the future).
fn age(path: &Path) -> Option<Duration> {
    let at = fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some(SystemTime::now().duration_since(at).unwrap_or_default())
}

fn holder(path: &Path) -> io::Result<Holder> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Holder::None),
        Err(e) => return Err(e),
    };
    let age = age(path);
    Ok(match pid::parse(text.trim()) {
        Some(p)
            if p != pid::own() && pid::is_running(p) && age.is_some_and(|a| a <= STALE_AFTER) =>
        {
            Holder::Running(p)
        }
        Some(p) => Holder::Gone(p),
        None => Holder::Unreadable {
            old: age.is_some_and(|a| a > UNREADABLE_GRACE),
        },
    })
}

/// Renews the lock at `path` `every` so often while it holds this
/// process's pid, until `stop`'s sender is dropped.
fn renew(path: PathBuf, stop: mpsc::Receiver<()>, every: Duration) {
    let own = pid::own().to_string();
    while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(every) {
        let ours = fs::read_to_string(&path).is_ok_and(|t| t.trim() == own);
        let renewed = ours
            && fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(SystemTime::now()))
                .is_ok();
        if !renewed {
            return;
        }
    }
}

impl SweepLock {
    /// Takes the lock on the directory `dir` (which must exist).
    pub fn acquire(dir: &Path) -> Result<SweepLock, String> {
        let path = dir.join(LOCK);
        let io = |e: io::Error| format!("{}: {e}", path.display());
        // A few rounds: a stale lock taken over may be taken by another
        // process first.
        for _ in 0..4 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let written = file
                        .write_all(format!("{}\n", pid::own()).as_bytes())
                        .and_then(|()| file.sync_all());
                    let (stop, stopped) = mpsc::channel();
                    let lock = SweepLock {
                        path: path.clone(),
                        _renewing: stop,
                    };
                    written.map_err(io)?;
                    let renewed = path.clone();
                    std::thread::spawn(move || renew(renewed, stopped, RENEW_EVERY));
                    return Ok(lock);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(e)),
            }
            let stale = match holder(&path).map_err(io)? {
                Holder::None => continue,
                Holder::Running(p) => {
                    return Err(format!(
                        "{} is in use by another fdlab sweep (pid {p}, see {}); wait for it to end, or choose another --out",
                        dir.display(),
                        path.display()
                    ))
                }
                Holder::Unreadable { old: false } => {
                    return Err(format!(
                        "{} is being locked by another fdlab sweep ({} is still being written); wait for it, or choose another --out",
                        dir.display(),
                        path.display()
                    ))
                }
                Holder::Gone(p) => format!(
                    "pid {p}, which is no longer running (or has not renewed it for {} s: it ran in another container)",
                    STALE_AFTER.as_secs()
                ),
                Holder::Unreadable { old: true } => {
                    "no pid (its writer was killed as it started)".to_string()
                }
            };
            if take_over(&path).map_err(io)? {
                eprintln!(
                    "fdlab: note: taking over {}, left by {stale}",
                    path.display()
                );
            }
        }
        Err(format!(
            "{}: could not take the lock: other sweeps keep taking it",
            path.display()
        ))
    }
}

/// Removes a stale lock, unless another process replaced it meanwhile: it
/// is renamed aside first (one atomic step), then checked, and put back if
/// it is now a running process's. Returns whether a stale lock was removed.
fn take_over(path: &Path) -> io::Result<bool> {
    let aside = path.with_file_name(format!(".{LOCK}.{}.stale", pid::own()));
    match fs::rename(path, &aside) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    }
    let mut removed = true;
    if let Holder::Running(_) | Holder::Unreadable { old: false } = holder(&aside)? {
        // Another process's fresh lock: put it back, unless yet another
        // lock took its place (then both are that process's to sort out).
        removed = false;
        match fs::hard_link(&aside, path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            // A file system without hard links.
            Err(_) => {
                if fs::symlink_metadata(path).is_err() {
                    let _ = fs::rename(&aside, path);
                }
            }
        }
    }
    let _ = fs::remove_file(&aside);
    Ok(removed)
}

impl Drop for SweepLock {
    /// Removes the lock if it is still this process's.
    fn drop(&mut self) {
        let own = pid::own().to_string();
        if fs::read_to_string(&self.path).is_ok_and(|t| t.trim() == own) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_processs_lock_is_refused_naming_the_pid_and_dropping_releases_ours() {
        let dir = tempfile::tempdir().unwrap();
        let lock = SweepLock::acquire(dir.path()).unwrap();
        let held = fs::read_to_string(dir.path().join(LOCK)).unwrap();
        assert_eq!(held, format!("{}\n", pid::own()));
        drop(lock);
        assert!(!dir.path().join(LOCK).exists());
        // Pid 1 always runs: a fresh lock of it is its own.
        fs::write(dir.path().join(LOCK), "1\n").unwrap();
        let err = SweepLock::acquire(dir.path()).unwrap_err();
        assert!(err.contains("pid 1,"), "{err}");
        assert!(err.contains(&dir.path().display().to_string()), "{err}");
        // Not renewed for long: it ran in another container.
        let long_ago = SystemTime::now() - STALE_AFTER - Duration::from_secs(5);
        set_modified(&dir.path().join(LOCK), long_ago);
        let _again = SweepLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn the_holder_renews_its_lock_while_it_is_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK);
        fs::write(&path, format!("{}\n", pid::own())).unwrap();
        let long_ago = SystemTime::now() - Duration::from_secs(3600);
        set_modified(&path, long_ago);
        let (stop, stopped) = mpsc::channel();
        let renewing = {
            let path = path.clone();
            std::thread::spawn(move || renew(path, stopped, Duration::from_millis(5)))
        };
        let waited = std::time::Instant::now();
        while age(&path).unwrap() > STALE_AFTER {
            assert!(waited.elapsed() < Duration::from_secs(10), "never renewed");
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(stop);
        renewing.join().unwrap();
    }

    #[test]
    fn a_lock_holding_our_own_pid_is_a_predecessors() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(LOCK), format!("{}\n", pid::own())).unwrap();
        let _lock = SweepLock::acquire(dir.path()).unwrap();
    }

    fn set_modified(path: &Path, at: SystemTime) {
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }

    #[test]
    fn a_dead_processs_lock_is_taken_over_and_a_fresh_unreadable_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        fs::write(dir.path().join(LOCK), format!("{dead}\n")).unwrap();
        let lock = SweepLock::acquire(dir.path()).unwrap();
        drop(lock);
        // Empty: a lock being written now.
        fs::write(dir.path().join(LOCK), "").unwrap();
        let err = SweepLock::acquire(dir.path()).unwrap_err();
        assert!(err.contains("being locked"), "{err}");
        // The same, left for a minute: a lock a kill cut short.
        let minute_ago = SystemTime::now() - Duration::from_secs(60);
        set_modified(&dir.path().join(LOCK), minute_ago);
        let _lock = SweepLock::acquire(dir.path()).unwrap();
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "only the lock: {names:?}");
    }

    #[test]
    fn a_lock_that_is_no_longer_ours_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let lock = SweepLock::acquire(dir.path()).unwrap();
        fs::write(dir.path().join(LOCK), "1\n").unwrap();
        drop(lock);
        assert!(dir.path().join(LOCK).exists());
    }
}
