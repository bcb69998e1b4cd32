//! `fdlab merge`: joins the directories of a sharded sweep into what one
//! unsharded sweep writes (`sweep.toml`, `units.csv` and the results).
//!
//! The merged directory appears whole ([`fdlab_reports::swap_dir`]): it is
//! built beside `--out` and swapped in. An existing `--out` is replaced only
//! when it is empty or holds this very merge's result (the same plan and
//! the same units, so nothing is lost): never another sweep, a shard, or an
//! interrupted sweep's journal, which is that sweep's finished work.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use clap::Args;
use fdlab_reports::atomic::{temporary, write_file};
use fdlab_reports::swap_dir::replace_dir;
use fdlab_scenarios::cluster_plan::is_cluster_plan;
use fdlab_scenarios::sweep_plan::PlanFile;

use super::lock::LOCK;
use super::output::{self, PARETO_CSV, SWEEP_CSV, TRADEOFF_SVG};
use super::units::{self, UnitSet, JOURNAL, UNITS};
use super::{print_front, DEFAULT_OUT, PLAN};

#[derive(Args)]
pub struct MergeArgs {
    /// Shard directories of one sweep (each with sweep.toml and units.csv).
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// Directory for the merged sweep: new, empty, or an earlier result of
    /// the same merge.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_OUT)]
    out: PathBuf,
}

/// `fdlab merge`.
pub fn merge(args: &MergeArgs) -> Result<(), String> {
    let mut text: Option<(PathBuf, String)> = None;
    for dir in &args.dirs {
        let path = dir.join(PLAN);
        let t = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        match &text {
            None => text = Some((dir.clone(), t)),
            Some((first, t0)) if *t0 != t => {
                return Err(format!(
                    "{} and {} hold different sweeps (their sweep.toml differ)",
                    first.display(),
                    dir.display()
                ))
            }
            Some(_) => {}
        }
    }
    let (first, text) = text.ok_or("no directory to merge")?;
    if is_cluster_plan(&text) {
        return Err(format!(
            "{}: holds a membership sweep, which is never sharded: its results are already there, with nothing to merge",
            first.display()
        ));
    }
    let plan: PlanFile = toml::from_str(&text).map_err(|e| format!("{PLAN}: {e}"))?;
    let names: Vec<String> = plan.points.iter().map(|p| p.name.clone()).collect();
    // Shards that overlap (the same shard given twice, say) must agree.
    let mut all = UnitSet::new(&plan);
    for dir in &args.dirs {
        let path = dir.join(UNITS);
        if !path.exists() {
            return Err(if dir.join(JOURNAL).exists() {
                format!(
                    "{}: the shard is unfinished; rerun it with --resume",
                    dir.display()
                )
            } else {
                format!("{}: no {UNITS}", dir.display())
            });
        }
        all.read(&path, false)?;
    }
    let seeds = plan.seed_list();
    let missing: Vec<(usize, u64)> = (0..plan.points.len())
        .flat_map(|p| seeds.iter().map(move |&s| (p, s)))
        .filter(|&(p, s)| !all.contains(p, s))
        .collect();
    if let Some(&(p, s)) = missing.first() {
        return Err(format!(
            "{} of {} units are missing (e.g. point {} on seed {s}): is a shard directory left out?",
            missing.len(),
            plan.unit_count(),
            names[p]
        ));
    }
    let mut units = all.into_units();
    let units_text = units::canonical(&mut units, &names);
    let results = output::results(&plan, &units);
    let out = &args.out;
    let may_replace = |dir: &Path| holds_only(dir, &text, &units_text);
    replace_dir(out, &may_replace, &mut |dir: &Path| {
        write_file(&dir.join(PLAN), text.as_bytes())?;
        write_file(&dir.join(UNITS), units_text.as_bytes())?;
        output::write_outputs(dir, &plan, &results).map_err(io::Error::other)
    })
    .map_err(|e| format!("{}: {e}", out.display()))?;
    print_front(out, &plan, &results)
}

fn refused(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Whether the existing directory `dir` holds nothing but (part of) this
/// merge's result: the plan `text`, the units `units_text`, the results
/// derived from them, and temporaries a killed writer left.
fn holds_only(dir: &Path, text: &str, units_text: &str) -> io::Result<()> {
    let mut names: Vec<String> = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<io::Result<_>>()?;
    names.sort();
    let same = |file: &str, want: &str| -> io::Result<bool> {
        Ok(fs::read(dir.join(file))? == want.as_bytes())
    };
    let (mut plan, mut units, mut results) = (false, false, false);
    for name in &names {
        match name.as_str() {
            JOURNAL => {
                return Err(refused(format!(
                    "holds {JOURNAL}, the work of an interrupted sweep (`fdlab sweep --resume` finishes it); merge into another --out"
                )))
            }
            LOCK => {
                return Err(refused(format!(
                    "holds {LOCK}: a sweep runs there (or was killed there); merge into another --out"
                )))
            }
            PLAN if same(PLAN, text)? => plan = true,
            PLAN => {
                return Err(refused(format!(
                    "holds another sweep (its {PLAN} differs from the shards'); merge into another --out"
                )))
            }
            UNITS if same(UNITS, units_text)? => units = true,
            UNITS => {
                return Err(refused(format!(
                    "holds other units than this merge's (a shard's, or an unfinished sweep's) in {UNITS}; merge into another --out"
                )))
            }
            SWEEP_CSV | PARETO_CSV | TRADEOFF_SVG => results = true,
            other if temporary(other).is_some() => {}
            other => {
                return Err(refused(format!(
                    "holds `{other}`, which is not part of a merged sweep; merge into another --out"
                )))
            }
        }
    }
    if results && !(plan && units) {
        return Err(refused(format!(
            "holds sweep results without the {PLAN} and {UNITS} they come from; merge into another --out"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_merges_own_result_may_be_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        holds_only(d, "plan", "units").unwrap();
        fs::write(d.join(PLAN), "plan").unwrap();
        fs::write(d.join(UNITS), "units").unwrap();
        fs::write(d.join(SWEEP_CSV), "old results").unwrap();
        fs::write(d.join(".fdlab-1-aB3dE9.tmp"), "").unwrap();
        holds_only(d, "plan", "units").unwrap();
        let err = |p: &str, u: &str| holds_only(d, p, u).unwrap_err().to_string();
        assert!(err("other", "units").contains("another sweep"));
        assert!(err("plan", "more").contains("other units"));
        fs::write(d.join(JOURNAL), "").unwrap();
        assert!(err("plan", "units").contains("interrupted"));
        fs::remove_file(d.join(JOURNAL)).unwrap();
        fs::remove_file(d.join(UNITS)).unwrap();
        assert!(err("plan", "units").contains("without"));
        fs::write(d.join("notes.txt"), "").unwrap();
        assert!(err("plan", "units").contains("`notes.txt`"));
    }
}
