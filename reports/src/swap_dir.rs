//! A directory of outputs appears whole: a reader sees the old one or the new
//! one, never a mixture of the two, nor half of the new one.
//!
//! The new directory is built in a fresh sibling,
//! `.fdlab-<name>-<pid>.tmpdir` next to the destination `<name>`; then the
//! old directory (if any) is renamed aside to `.fdlab-<name>-<pid>.old`, the
//! new one renamed into place, and the old one removed. Between the two
//! renames the destination is briefly absent; it never holds a mixture. An
//! error, or a panic, removes the sibling and leaves the old directory as it
//! was; a kill leaves the sibling behind, and the next writer to the same
//! destination removes it once its pid is no longer running (names that
//! only look alike are never touched).
//!
//! An existing destination is replaced only when the caller's rule allows
//! it (checked before anything is built, and again just before the swap, in
//! case it changed meanwhile): a report replaces only a report of the same
//! command ([`crate::report_dir`]); `fdlab merge` only its own result. The
//! path is resolved first (`.`, `..`, symbolic links), so that the directory
//! swapped is the real one, and the current directory (or one that holds
//! it) is never swapped.
//!
//! When the destination is a mount point (a container's volume), or its
//! parent cannot be written, no sibling can be renamed over it: the
//! directory is then emptied (of what the rule allowed) and written in
//! place. A report writes its marker last ([`crate::report_dir::MARKER`]),
//! so in that case the marker says the report is complete.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::pid;

/// Longest destination name used as is in a sibling's name; a longer one is
/// cut and given a hash of the whole name, so that the sibling's name stays
/// under the usual 255-byte limit.
const MAX_SIBLING_STEM: usize = 100;

/// The rule that says whether an existing directory may be replaced: `Ok`,
/// or an error saying why not.
pub type MayReplace<'a> = &'a dyn Fn(&Path) -> io::Result<()>;

/// A destination resolved: the directory to swap, its parent and its name.
#[derive(Debug)]
pub struct Destination {
    /// The directory to write (the real path when it exists).
    pub path: PathBuf,
    parent: PathBuf,
    /// The destination's name as used in its siblings' names.
    stem: String,
    pub exists: bool,
}

fn refused(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message.into())
}

/// Resolves `dir` and checks that it can be a destination: an existing
/// directory (not a file, not the current directory or one of its
/// ancestors), or a path that can be created (no file on the way).
pub fn resolve(dir: &Path) -> io::Result<Destination> {
    match fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => Err(refused("is a file, not a directory")),
        Ok(_) => {
            let path = fs::canonicalize(dir)?;
            let cwd = std::env::current_dir().and_then(fs::canonicalize)?;
            if cwd.starts_with(&path) {
                return Err(refused(
                    "is the current directory or holds it, and an output directory is replaced whole; \
                     name a new subdirectory instead (e.g. --out report)",
                ));
            }
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                return Err(refused("is a root directory, which is never replaced"));
            };
            Ok(Destination {
                parent: parent.to_path_buf(),
                stem: sibling_stem(name),
                path,
                exists: true,
            })
        }
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            if fs::symlink_metadata(dir).is_ok() {
                return Err(refused("is a symbolic link to nothing"));
            }
            let Some(name) = dir.file_name() else {
                return Err(refused("names no directory"));
            };
            let parent = match dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            // The nearest existing ancestor must be a directory.
            if let Some(file) = parent
                .ancestors()
                .find(|a| !a.as_os_str().is_empty() && fs::metadata(a).is_ok())
                .filter(|a| !a.is_dir())
            {
                return Err(refused(format!(
                    "cannot be created: {} is a file",
                    file.display()
                )));
            }
            Ok(Destination {
                path: dir.to_path_buf(),
                parent,
                stem: sibling_stem(name),
                exists: false,
            })
        }
        Err(e) => Err(e),
    }
}

/// `name` as it appears in a sibling's name: bounded in length, unique by
/// a hash when cut.
fn sibling_stem(name: &OsStr) -> String {
    let name = name.to_string_lossy();
    if name.len() <= MAX_SIBLING_STEM {
        return name.into_owned();
    }
    let mut end = MAX_SIBLING_STEM - 9;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let hash = Sha256::digest(name.as_bytes());
    let hex: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{hex}", &name[..end])
}

impl Destination {
    /// Checks that the directory can be written, before any work goes into
    /// it: the sibling is made next to it, or, where the parent cannot be
    /// written, the directory is written in place (see the module docs); a
    /// directory still to be created is made under its nearest existing
    /// ancestor.
    pub fn probe_writable(&self) -> io::Result<()> {
        let cannot = |e: io::Error| refused(format!("cannot be written: {e}"));
        if self.exists {
            return crate::atomic::probe_writable(&self.parent)
                .or_else(|_| crate::atomic::probe_writable(&self.path))
                .map_err(cannot);
        }
        let ancestor = self
            .parent
            .ancestors()
            .find(|a| !a.as_os_str().is_empty() && a.is_dir())
            .unwrap_or(Path::new("."));
        crate::atomic::probe_writable(ancestor).map_err(cannot)
    }

    fn sibling(&self, owner: u32, suffix: &str) -> PathBuf {
        self.parent
            .join(format!(".fdlab-{}-{owner}.{suffix}", self.stem))
    }

    /// The pid in `name` if it is a sibling of this destination.
    fn sibling_owner(&self, name: &str) -> Option<u32> {
        let rest = name.strip_prefix(".fdlab-")?.strip_prefix(&self.stem)?;
        let rest = rest.strip_prefix('-')?;
        let owner = rest
            .strip_suffix(".tmpdir")
            .or_else(|| rest.strip_suffix(".old"))?;
        pid::parse(owner)
    }

    /// Removes this destination's siblings left by writers that are gone.
    fn remove_stale_siblings(&self) {
        let Ok(entries) = fs::read_dir(&self.parent) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(owner) = name.to_str().and_then(|n| self.sibling_owner(n)) else {
                continue;
            };
            if owner == pid::own() || !pid::is_running(owner) {
                let _ = remove(&entry.path());
            }
        }
    }

    /// Whether the destination is a mount point (its own file system).
    #[cfg(unix)]
    fn is_mount_point(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (fs::metadata(&self.path), fs::metadata(&self.parent)) {
            (Ok(a), Ok(b)) => a.dev() != b.dev(),
            _ => false,
        }
    }

    #[cfg(not(unix))]
    fn is_mount_point(&self) -> bool {
        false
    }
}

/// Removes a file or a whole directory (a symbolic link itself, never what
/// it points to).
fn remove(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path)?.is_dir() {
        true => fs::remove_dir_all(path),
        false => fs::remove_file(path),
    }
}

/// A sibling being built: removed when dropped unless it was moved into
/// place (on an error, or a panic in the builder).
struct Building(Option<PathBuf>);

impl Drop for Building {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_dir_all(path);
        }
    }
}

/// Writes the directory `dir` whole: `build` fills a fresh directory, which
/// then replaces `dir` (see the module docs). An existing `dir` is replaced
/// only if `may_replace` says so.
pub fn replace_dir(
    dir: &Path,
    may_replace: MayReplace<'_>,
    build: &mut dyn FnMut(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let dest = resolve(dir)?;
    if dest.exists {
        may_replace(&dest.path)?;
    } else {
        fs::create_dir_all(&dest.parent)?;
    }
    dest.remove_stale_siblings();
    if dest.exists && dest.is_mount_point() {
        return in_place(&dest, may_replace, build);
    }
    let temp = dest.sibling(pid::own(), "tmpdir");
    match fs::create_dir(&temp) {
        Ok(()) => {}
        Err(e)
            if dest.exists
                && matches!(
                    e.kind(),
                    io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
                ) =>
        {
            return in_place(&dest, may_replace, build);
        }
        Err(e) => return Err(e),
    }
    let mut building = Building(Some(temp.clone()));
    build(&temp)?;
    if fs::symlink_metadata(&dest.path).is_ok() {
        // It may have changed while the new one was built.
        may_replace(&dest.path)?;
        let aside = dest.sibling(pid::own(), "old");
        fs::rename(&dest.path, &aside)?;
        if let Err(e) = fs::rename(&temp, &dest.path) {
            let _ = fs::rename(&aside, &dest.path);
            return Err(e);
        }
        building.0 = None;
        let _ = fs::remove_dir_all(&aside);
    } else {
        fs::rename(&temp, &dest.path).map_err(|e| match e.kind() {
            io::ErrorKind::DirectoryNotEmpty | io::ErrorKind::AlreadyExists => refused(
                "was created by another process while the output was written; nothing was replaced",
            ),
            _ => e,
        })?;
        building.0 = None;
    }
    Ok(())
}

/// The fallback when no sibling can replace `dest`: empty it (of what the
/// rule allows, checked again now) and build in it.
fn in_place(
    dest: &Destination,
    may_replace: MayReplace<'_>,
    build: &mut dyn FnMut(&Path) -> io::Result<()>,
) -> io::Result<()> {
    may_replace(&dest.path)?;
    for entry in fs::read_dir(&dest.path)? {
        remove(&entry?.path())?;
    }
    build(&dest.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    fn any(_: &Path) -> io::Result<()> {
        Ok(())
    }

    fn write(files: &'static [&'static str]) -> impl FnMut(&Path) -> io::Result<()> {
        move |dir| {
            for f in files {
                fs::write(dir.join(f), f)?;
            }
            Ok(())
        }
    }

    #[test]
    fn a_new_directory_appears_whole_and_replaces_the_old_one_whole() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("a").join("out");
        replace_dir(&out, &any, &mut write(&["x", "y"])).unwrap();
        assert_eq!(names(&out), ["x", "y"]);
        replace_dir(&out, &any, &mut write(&["z"])).unwrap();
        assert_eq!(names(&out), ["z"]);
        assert_eq!(names(&root.path().join("a")), ["out"]);
    }

    #[test]
    fn a_failed_build_or_a_refusal_leaves_the_old_directory_and_no_sibling() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        replace_dir(&out, &any, &mut write(&["old"])).unwrap();
        let err = replace_dir(&out, &any, &mut |dir: &Path| {
            fs::write(dir.join("half"), "h")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(names(&out), ["old"]);
        assert_eq!(names(root.path()), ["out"]);
        // The rule refuses after the build (someone wrote into it meanwhile).
        let calls = std::cell::Cell::new(0);
        let second_refuses = |_: &Path| {
            calls.set(calls.get() + 1);
            match calls.get() {
                1 => Ok(()),
                _ => Err(refused("changed")),
            }
        };
        let err = replace_dir(&out, &second_refuses, &mut write(&["new"])).unwrap_err();
        assert_eq!(err.to_string(), "changed");
        assert_eq!(names(&out), ["old"]);
        assert_eq!(names(root.path()), ["out"]);
        // A panicking builder too.
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = replace_dir(&out, &any, &mut |_: &Path| panic!("bug"));
        }));
        assert!(caught.is_err());
        assert_eq!(names(root.path()), ["out"]);
    }

    /// The fallback for a mount point or a read-only parent (which a test
    /// run as root cannot make): the directory is emptied and rebuilt in
    /// place, after the rule allowed it.
    #[test]
    fn in_place_empties_the_directory_and_builds_in_it() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        replace_dir(&out, &any, &mut write(&["old", "older"])).unwrap();
        let dest = resolve(&out).unwrap();
        let refuse = |_: &Path| Err(refused("no"));
        assert!(in_place(&dest, &refuse, &mut write(&["new"])).is_err());
        assert_eq!(names(&out), ["old", "older"]);
        in_place(&dest, &any, &mut write(&["new"])).unwrap();
        assert_eq!(names(&out), ["new"]);
        assert_eq!(names(root.path()), ["out"]);
    }

    #[test]
    fn files_and_the_current_directory_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("f");
        fs::write(&file, "x").unwrap();
        let err = resolve(&file).unwrap_err().to_string();
        assert_eq!(err, "is a file, not a directory");
        let err = resolve(&file.join("sub")).unwrap_err().to_string();
        assert!(err.contains("is a file"), "{err}");
        let err = resolve(Path::new(".")).unwrap_err().to_string();
        assert!(err.contains("current directory"), "{err}");
        let err = resolve(Path::new("/")).unwrap_err().to_string();
        assert!(
            err.contains("current directory") || err.contains("root"),
            "{err}"
        );
    }

    #[test]
    fn a_symbolic_link_keeps_pointing_at_the_new_directory() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        replace_dir(&real, &any, &mut write(&["old"])).unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        replace_dir(&link, &any, &mut write(&["new"])).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(names(&real), ["new"]);
    }

    #[test]
    fn stale_siblings_are_removed_and_no_others() {
        let root = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        // Pid 1 is always running.
        let keep = [
            ".fdlab-out-1.tmpdir".to_string(),
            format!(".fdlab-other-{dead}.tmpdir"),
            format!(".fdlab-out-{dead}.tmpdir.bak"),
            "out.tmpdir".to_string(),
        ];
        for name in &keep {
            fs::create_dir(root.path().join(name)).unwrap();
        }
        for name in [
            format!(".fdlab-out-{dead}.tmpdir"),
            format!(".fdlab-out-{dead}.old"),
        ] {
            fs::create_dir(root.path().join(&name)).unwrap();
            fs::write(root.path().join(&name).join("summary.csv"), "x").unwrap();
        }
        replace_dir(&root.path().join("out"), &any, &mut write(&["x"])).unwrap();
        let mut want: Vec<String> = keep.to_vec();
        want.push("out".into());
        want.sort();
        assert_eq!(names(root.path()), want);
    }

    #[test]
    fn long_names_give_bounded_unique_sibling_names() {
        let a = "a".repeat(300);
        let b = format!("{}b", "a".repeat(299));
        let (sa, sb) = (sibling_stem(OsStr::new(&a)), sibling_stem(OsStr::new(&b)));
        assert!(sa.len() <= MAX_SIBLING_STEM && sb.len() <= MAX_SIBLING_STEM);
        assert_ne!(sa, sb);
        assert_eq!(sibling_stem(OsStr::new("reports-out")), "reports-out");
    }
}
