//! An output never replaces one of the command's own inputs.
//!
//! Every file fdlab writes is written atomically (a temporary file renamed
//! over the path), so `--out` naming an input would silently replace the
//! input with the output: `fdlab trace --out events.csv events.csv` loses the
//! recording, `fdlab check --junit base.toml` the baseline. Each command
//! checks its output paths against its input files before it runs. Paths
//! are compared canonicalized (`..`, `.` and symbolic links resolved), so
//! `./x/../events.csv` and a link to the file are the same file too. An
//! input that cannot be canonicalized (standard input `-`, a built-in
//! scenario's name) is no file to protect.

use std::path::{Path, PathBuf};

/// One input file of a command, and how its errors name it (`--baseline`,
/// `the events file`).
pub struct Input {
    what: String,
    path: PathBuf,
}

impl Input {
    pub fn new(what: impl Into<String>, path: impl Into<PathBuf>) -> Input {
        Input {
            what: what.into(),
            path: path.into(),
        }
    }
}

/// `path` canonicalized; for a path that does not exist yet, its parent
/// canonicalized and its name. `None` when even the parent does not exist
/// (then no existing file can be at `path`).
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

/// Refuses, before any work, an output file (the value of `option`) that
/// cannot be written: a directory, a path whose directory does not exist,
/// or a directory where no file can be made (tried, not guessed from the
/// permission bits; see [`fdlab_reports::atomic::probe_writable`]).
pub fn refuse_unwritable_file(option: &str, output: &Path) -> Result<(), String> {
    let at = |problem: String| format!("{option} {}: {problem}", output.display());
    if output.is_dir() {
        return Err(at("is a directory; name a file".into()));
    }
    if fdlab_reports::atomic::is_special(output) {
        // A device or a pipe is written in place: it must open for writing.
        return std::fs::OpenOptions::new()
            .write(true)
            .open(output)
            .map(drop)
            .map_err(|e| at(format!("cannot be written: {e}")));
    }
    let dir = fdlab_reports::atomic::parent_of(output);
    if !dir.is_dir() {
        return Err(at(format!("directory {} does not exist", dir.display())));
    }
    fdlab_reports::atomic::probe_writable(dir)
        .map_err(|e| at(format!("cannot be written in {}: {e}", dir.display())))
}

/// Refuses an output file (the value of `option`) that is one of `inputs`.
pub fn refuse_same_file(option: &str, output: &Path, inputs: &[Input]) -> Result<(), String> {
    let Some(out) = resolved(output) else {
        return Ok(());
    };
    for input in inputs {
        if input.path.canonicalize().is_ok_and(|p| p == out) {
            return Err(format!(
                "{option} {}: the same file as {} {}; an output never replaces an input: write it elsewhere",
                output.display(),
                input.what,
                input.path.display()
            ));
        }
    }
    Ok(())
}

/// Refuses an output directory (the value of `option`) into which the
/// command writes the files `names` and anything under the folders
/// `folders`, when one of `inputs` is among them.
pub fn refuse_in_dir(
    option: &str,
    dir: &Path,
    names: &[&str],
    folders: &[&str],
    inputs: &[Input],
) -> Result<(), String> {
    let Ok(out) = dir.canonicalize() else {
        // A directory that does not exist yet holds no input.
        return Ok(());
    };
    for input in inputs {
        let Ok(path) = input.path.canonicalize() else {
            continue;
        };
        let Ok(inside) = path.strip_prefix(&out) else {
            continue;
        };
        let written = names.iter().any(|n| inside == Path::new(n))
            || folders.iter().any(|f| inside.starts_with(f));
        if written {
            return Err(format!(
                "{option} {}: would write {} over {} {}; an output never replaces an input: choose another {option}",
                dir.display(),
                dir.join(inside).display(),
                input.what,
                input.path.display()
            ));
        }
    }
    Ok(())
}

/// The inputs of scenario arguments: each file among `args` and the samples
/// files it names, for the scenarios they resolved to.
pub fn scenario_inputs(
    args: &[String],
    scenarios: &[fdlab_sim::valid::ValidScenario],
) -> Vec<Input> {
    args.iter()
        .zip(scenarios)
        .flat_map(|(arg, s)| fdlab_scenarios::resolve::files_of(arg, s))
        .map(|path| Input::new("a file the scenario reads,", path))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_by_any_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.csv");
        std::fs::write(&input, "x").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let inputs = [Input::new("the events file", &input)];
        for out in [
            input.clone(),
            dir.path().join("sub/../in.csv"),
            dir.path().join("./in.csv"),
        ] {
            let e = refuse_same_file("--out", &out, &inputs).unwrap_err();
            assert!(e.starts_with("--out "), "{e}");
            assert!(e.contains("the same file as the events file"), "{e}");
        }
        for out in [
            dir.path().join("out.csv"),
            dir.path().join("no/such/dir/in.csv"),
        ] {
            assert!(refuse_same_file("--out", &out, &inputs).is_ok());
        }
        // Standard input is no file to protect.
        assert!(refuse_same_file("--out", Path::new("-"), &[Input::new("x", "-")]).is_ok());
    }

    #[test]
    fn a_directory_output_refuses_the_files_it_writes() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["runs.csv", "mine.csv", "charts/a.svg"] {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        let check = |name: &str| {
            refuse_in_dir(
                "--out",
                dir.path(),
                &["runs.csv"],
                &["charts"],
                &[Input::new("the samples file", dir.path().join(name))],
            )
        };
        assert!(check("runs.csv").unwrap_err().contains("would write"));
        assert!(check("charts/a.svg").is_err());
        assert!(check("mine.csv").is_ok());
        assert!(refuse_in_dir("--out", &dir.path().join("new"), &["runs.csv"], &[], &[]).is_ok());
    }
}
