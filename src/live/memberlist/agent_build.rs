//! Building the memberlist agent (`agents/memberlist/main.go`, compiled
//! into fdlab) with Debian's Go and memberlist, in GOPATH mode
//! (`GO111MODULE=off GOPATH=<build dir>:/usr/share/gocode`): no module is
//! fetched, every import is a Debian package. The binary is kept in a
//! cache directory named for the source and the Go version, so that it is
//! built once.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The agent's source.
const SOURCE: &str = include_str!("../../../agents/memberlist/main.go");
/// Where Debian's golang-github-hashicorp-memberlist-dev puts the library.
const GOCODE: &str = "/usr/share/gocode";
const MEMBERLIST: &str = "src/github.com/hashicorp/memberlist/memberlist.go";
/// The agent's package name inside its GOPATH.
const PACKAGE: &str = "fdlab-memberlist-agent";
/// What to install when something is missing.
pub const INSTALL: &str = "apt-get install golang-go golang-github-hashicorp-memberlist-dev";

/// The `go` command: on the PATH, or where Debian's golang-go puts it.
fn go() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("go"))
            .collect::<Vec<_>>()
    });
    on_path
        .chain([PathBuf::from("/usr/lib/go/bin/go")])
        .find(|p| p.is_file())
}

/// Why the agent cannot be built here (a package is missing), if so.
pub fn missing() -> Option<String> {
    let go = go().is_none();
    let memberlist = !Path::new(GOCODE).join(MEMBERLIST).is_file();
    let what = match (go, memberlist) {
        (false, false) => return None,
        (true, false) => "Go (Debian's golang-go)",
        (false, true) => "memberlist (Debian's golang-github-hashicorp-memberlist-dev)",
        (true, true) => {
            "Go and memberlist (Debian's golang-go, golang-github-hashicorp-memberlist-dev)"
        }
    };
    Some(format!(
        "the real memberlist agents need {what}, not found on this machine: `{INSTALL}`"
    ))
}

/// The directory the built agent is kept in.
fn cache_dir(go: &Path) -> Result<PathBuf, String> {
    let version = Command::new(go)
        .arg("version")
        .output()
        .map_err(|e| format!("{}: {e}", go.display()))?;
    let mut hash = crc32fast::Hasher::new();
    hash.update(SOURCE.as_bytes());
    hash.update(&version.stdout);
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    Ok(base
        .join("fdlab")
        .join(format!("memberlist-agent-{:08x}", hash.finalize())))
}

/// The agent's executable, built first if the cache does not hold it.
pub fn agent() -> Result<PathBuf, String> {
    if let Some(why) = missing() {
        return Err(why);
    }
    let go = go().ok_or("no go command")?;
    let dir = cache_dir(&go)?;
    let exe = dir.join(PACKAGE);
    if exe.is_file() {
        return Ok(exe);
    }
    // Built apart, then renamed into place: two fdlab processes may build
    // at once.
    let work = dir.with_extension(format!("build-{}", std::process::id()));
    let result = build(&go, &work, &exe);
    let _ = std::fs::remove_dir_all(&work);
    result.map(|()| exe)
}

fn build(go: &Path, work: &Path, exe: &Path) -> Result<(), String> {
    let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
    let src = work.join("gopath/src").join(PACKAGE);
    std::fs::create_dir_all(&src).map_err(|e| io(&src, e))?;
    std::fs::write(src.join("main.go"), SOURCE).map_err(|e| io(&src, e))?;
    let built = work.join(PACKAGE);
    let gopath = std::env::join_paths([work.join("gopath"), PathBuf::from(GOCODE)])
        .map_err(|e| e.to_string())?;
    let out = Command::new(go)
        .args(["build", "-o"])
        .arg(&built)
        .arg(".")
        .current_dir(&src)
        .env("GO111MODULE", "off")
        .env("GOPATH", gopath)
        .env("GOCACHE", work.join("gocache"))
        .env("GOPROXY", "off")
        .env("GOFLAGS", "")
        .env("CGO_ENABLED", "0")
        .output()
        .map_err(|e| io(go, e))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().find(|l| !l.starts_with('#')).unwrap_or("");
        return Err(format!(
            "building the memberlist agent with {} failed: {first}",
            go.display()
        ));
    }
    let dir = exe.parent().ok_or("no cache directory")?;
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    std::fs::rename(&built, exe).map_err(|e| io(exe, e))
}
