//! Output files appear whole or not at all.
//!
//! Every file fdlab writes goes to a temporary file in the destination's
//! directory first and is renamed over the destination once complete, so an
//! error or an interrupt never leaves a partial or corrupt file behind, and a
//! previous version stays intact until the new one is ready. The finished
//! file has the permissions of any file the user creates (0666 less the
//! umask on Unix), not a temporary file's owner-only 0600: reports are meant
//! to be read by others, a CI job's artifact step or a web server say.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// The mode `open(2)` is asked for when a program creates an ordinary file;
/// the process's umask takes its bits away.
#[cfg(unix)]
const ORDINARY_FILE_MODE: u32 = 0o666;

/// Writes `path` by calling `fill` on a buffered temporary file, then renaming it
/// into place. If `fill` fails, the temporary file is removed and `path` is
/// untouched.
pub fn write_atomically<F>(path: &Path, fill: F) -> io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("directory {} does not exist", dir.display()),
        ));
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix(".fdlab-").suffix(".tmp");
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

/// Creates `dir` (and parents) if missing.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope").join("out.csv");
        assert!(write_file(&path, b"x").is_err());
    }
}
