//! Output files appear whole or not at all.
//!
//! Every file fdlab writes goes to a temporary file in the destination's
//! directory first and is renamed over the destination once complete, so an
//! error or an interrupt never leaves a partial or corrupt file behind, and a
//! previous version stays intact until the new one is ready. The finished
//! file has the permissions of any file the user creates (0666 less the
//! umask on Unix), not a temporary file's owner-only 0600: reports are meant
//! to be read by others, a CI job's artifact step or a web server say.
//!
//! A destination that is not a regular file (`/dev/null`, `/dev/stdout`, a
//! named pipe) is written in place: renaming over it would replace the
//! device with a plain file (as root, `--out /dev/null` once turned the
//! machine's `/dev/null` into a file that kept what was written to it), and
//! a device has no partial state to protect.
//!
//! A kill (SIGKILL, a power cut) in the middle of a write leaves its
//! temporary file behind. So a temporary's name says whose it is:
//! `.fdlab-<pid>-<6 random letters or digits>.tmp`, and before a process
//! first writes into a directory it removes the temporaries there that
//! match that pattern exactly and whose writer is no longer running
//! ([`remove_stale_temporaries`]); it never touches another name, nor the
//! temporary of a writer still running. Older fdlab versions named their
//! temporaries `.fdlab-<6 random>.tmp`, without the pid: those are removed
//! when they were last written before this process started (a write takes
//! milliseconds, so such a file is a leftover).

use std::collections::BTreeSet;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use crate::pid;

/// The mode `open(2)` is asked for when a program creates an ordinary file;
/// the process's umask takes its bits away.
#[cfg(unix)]
const ORDINARY_FILE_MODE: u32 = 0o666;

/// A temporary file's name starts with this, then the writer's pid and `-`.
const TEMP_PREFIX: &str = ".fdlab-";
const TEMP_SUFFIX: &str = ".tmp";
/// Random letters and digits after the pid (the tempfile crate's default).
const TEMP_RANDOM: usize = 6;

/// What a file name says about the file as a temporary of fdlab's.
#[derive(Debug, PartialEq, Eq)]
pub enum Temporary {
    /// `.fdlab-<pid>-<random>.tmp`: written by process `pid`.
    Of(u32),
    /// `.fdlab-<random>.tmp`: an older fdlab's, without a pid.
    Legacy,
}

/// Whether `name` is exactly a temporary's name, and whose.
pub fn temporary(name: &str) -> Option<Temporary> {
    let middle = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let random = |s: &str| s.len() == TEMP_RANDOM && s.bytes().all(|b| b.is_ascii_alphanumeric());
    match middle.split_once('-') {
        Some((p, r)) if random(r) => pid::parse(p).map(Temporary::Of),
        None if random(middle) => Some(Temporary::Legacy),
        _ => None,
    }
}

/// When this process started, as near as fdlab can tell: the first time it
/// asked.
fn started() -> SystemTime {
    static STARTED: OnceLock<SystemTime> = OnceLock::new();
    *STARTED.get_or_init(SystemTime::now)
}

/// Whether the file `path` named `name` is a temporary left by a writer
/// that is gone.
fn is_stale(path: &Path, name: &str) -> bool {
    match temporary(name) {
        Some(Temporary::Of(writer)) => writer != pid::own() && !pid::is_running(writer),
        Some(Temporary::Legacy) => fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|at| at < started()),
        None => false,
    }
}

/// Removes the temporary files in `dir` left by writers that are gone (see
/// the module docs); once per directory and process, so that it costs one
/// directory listing per output directory. Best effort: a file that cannot
/// be removed stays, and nothing else is ever removed.
pub fn remove_stale_temporaries(dir: &Path) {
    static DONE: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    started();
    {
        let Ok(mut done) = DONE.lock() else {
            return;
        };
        if !done.insert(dir.to_path_buf()) {
            return;
        }
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_file()) && is_stale(&path, name) {
            let _ = fs::remove_file(&path);
        }
    }
}

/// Writes `path` by calling `fill` on a buffered temporary file, then renaming it
/// into place. If `fill` fails, the temporary file is removed and `path` is
/// untouched.
pub fn write_atomically<F>(path: &Path, fill: F) -> io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    if let Some(special) = special_file(path) {
        let mut out = BufWriter::new(special?);
        fill(&mut out)?;
        return out.flush();
    }
    let dir = parent_of(path);
    if !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("directory {} does not exist", dir.display()),
        ));
    }
    remove_stale_temporaries(dir);
    let prefix = format!("{TEMP_PREFIX}{}-", pid::own());
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(&prefix)
        .suffix(TEMP_SUFFIX)
        .rand_bytes(TEMP_RANDOM);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(ORDINARY_FILE_MODE));
    }
    let temp = builder.tempfile_in(dir)?;
    {
        let mut out = BufWriter::new(temp.as_file());
        fill(&mut out)?;
        out.flush()?;
    }
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `bytes` to `path` atomically.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomically(path, |out| out.write_all(bytes))
}

/// `path` opened for writing in place when it exists and is neither a
/// regular file nor a directory (a device, a named pipe, a socket); `None`
/// for every other path, which is written through a temporary.
fn special_file(path: &Path) -> Option<io::Result<fs::File>> {
    let meta = fs::metadata(path).ok()?;
    if meta.is_file() || meta.is_dir() {
        return None;
    }
    Some(fs::OpenOptions::new().write(true).open(path))
}

/// Whether `path` is written in place rather than through a temporary
/// (see the module docs).
pub fn is_special(path: &Path) -> bool {
    special_file(path).is_some()
}

/// Checks, before any work, that a file can be created in `dir`, the way
/// [`write_atomically`] creates one: a temporary is made and removed at
/// once. Being root, or a read-only mount, or a full quota, make the
/// permission bits a poor guide; only trying tells.
pub fn probe_writable(dir: &Path) -> io::Result<()> {
    // A temporary's name (so a kill between the two steps leaves what the
    // next writer removes), unique within the process by a counter.
    static PROBES: AtomicU32 = AtomicU32::new(0);
    let n = PROBES.fetch_add(1, Ordering::Relaxed) % 1_000_000;
    let path = dir.join(format!("{TEMP_PREFIX}{}-{n:06}{TEMP_SUFFIX}", pid::own()));
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    fs::remove_file(&path)
}

/// Where a file at `path` would be created: its parent, or the current
/// directory for a bare name.
pub fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Creates `dir` (and parents) if missing.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_written_in_place_and_stays_a_device() {
        let null = Path::new("/dev/null");
        if !fs::metadata(null).is_ok_and(|m| !m.is_file()) {
            return; // no /dev/null device here
        }
        write_file(null, b"never kept\n").unwrap();
        let meta = fs::metadata(null).unwrap();
        assert!(!meta.is_file(), "/dev/null became a regular file");
        assert_eq!(fs::read(null).unwrap(), b"");
    }

    #[test]
    fn a_probe_leaves_nothing_and_fails_where_nothing_can_be_made() {
        let dir = tempfile::tempdir().unwrap();
        probe_writable(dir.path()).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        // A file in the way fails even for root, as a read-only mount would.
        let file = dir.path().join("f");
        fs::write(&file, b"x").unwrap();
        assert!(probe_writable(&file).is_err());
        assert!(probe_writable(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn failure_leaves_previous_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        write_file(&path, b"old\n").unwrap();
        let err = write_atomically(&path, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(err.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old\n");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "temporary file left behind");
    }

    /// Same mode as a file the same process creates the ordinary way (so
    /// the umask applies): not a temporary file's 0600.
    #[cfg(unix)]
    #[test]
    fn written_file_has_ordinary_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ordinary = dir.path().join("ordinary");
        fs::File::create(&ordinary).unwrap();
        let path = dir.path().join("out.csv");
        write_file(&path, b"x\n").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), mode(&ordinary));
        // Rewriting keeps it so.
        write_file(&path, b"y\n").unwrap();
        assert_eq!(mode(&path), mode(&ordinary));
    }

    #[test]
    fn temporaries_are_named_with_their_writers_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        let mut seen = Vec::new();
        write_atomically(&path, |out| {
            for e in fs::read_dir(dir.path()).unwrap() {
                seen.push(e.unwrap().file_name().into_string().unwrap());
            }
            out.write_all(b"x")
        })
        .unwrap();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(temporary(&seen[0]), Some(Temporary::Of(pid::own())));
    }

    #[test]
    fn only_exact_temporary_names_are_temporaries() {
        assert_eq!(temporary(".fdlab-12-aB3dE9.tmp"), Some(Temporary::Of(12)));
        assert_eq!(temporary(".fdlab-aB3dE9.tmp"), Some(Temporary::Legacy));
        for other in [
            ".fdlab-12-aB3dE.tmp",
            ".fdlab-12-aB3dE9.tmp.bak",
            ".fdlab-x2-aB3dE9.tmp",
            ".fdlab-12-aB-dE9.tmp",
            "fdlab-12-aB3dE9.tmp",
            ".fdlab-report",
            ".fdlab-run-12.tmpdir",
            ".fdlab-notes.tmp",
        ] {
            assert_eq!(temporary(other), None, "{other}");
        }
    }

    #[test]
    fn stale_temporaries_go_and_nothing_else() {
        // This process started before the files below were written: a file's
        // time comes from the kernel's coarse clock (a few ms behind the
        // precise one), so wait well past one of its ticks first.
        started();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = format!(".fdlab-{dead}-aB3dE9.tmp");
        let mine = format!(".fdlab-{}-aB3dE9.tmp", pid::own());
        let fresh_legacy = ".fdlab-Zz9Zz9.tmp";
        for name in [&stale, &mine, fresh_legacy, "keep.tmp", ".fdlab-notes.tmp"] {
            fs::write(dir.path().join(name), "x").unwrap();
        }
        // A directory of the same name pattern is not a temporary file.
        fs::create_dir(dir.path().join(format!(".fdlab-{dead}-dir000.tmp"))).unwrap();
        remove_stale_temporaries(dir.path());
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = vec![
            format!(".fdlab-{dead}-dir000.tmp"),
            mine,
            fresh_legacy.to_string(),
            "keep.tmp".into(),
            ".fdlab-notes.tmp".into(),
        ];
        want.sort();
        assert_eq!(left, want);
    }

    #[test]
    fn missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope").join("out.csv");
        assert!(write_file(&path, b"x").is_err());
    }
}
