//! From a swarm's runs to its findings: the violations grouped by property
//! and detector (or judge), the first run of each shrunk in turn, and each
//! reproducer written as a plain scenario file with the replay command
//! that shows it.

use std::path::Path;
use std::time::Instant;

use fdlab_reports::swarm::output::{minimal_file, Finding, SwarmRun};
use fdlab_reports::swarm::Violation;
use fdlab_scenarios::write_scenario;
use fdlab_sim::scenario::{
    Bound, Check, Property, PropertySetup, SwarmKind, SwarmSetup, SwarmTables,
};
use fdlab_sim::swarm::{self, Focus};
use fdlab_sim::valid::ValidScenario;

use super::runs::{check_run, world_of, Kept, Shrinker};
use crate::simulate::progress;

/// A finding with its reproducer's file.
pub struct Reproducer {
    pub finding: Finding,
    /// The text of `minimal-<n>.toml`.
    pub text: String,
}

/// What shrinking cost.
#[derive(Default)]
pub struct ShrinkCost {
    pub runs: u64,
    pub events: u64,
    pub wall: f64,
}

/// The first violation of each property × detector (judge), in property
/// order, then run order, then order within the run; with how many runs
/// and violations there were of each.
pub fn group(runs: &[SwarmRun]) -> Vec<(usize, Violation, u64, u64)> {
    let mut out: Vec<(usize, Violation, u64, u64)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let mut seen: Vec<usize> = Vec::new();
        for v in &r.violations {
            match out.iter().position(|(_, first, _, _)| first.same_kind(v)) {
                Some(k) => {
                    out[k].3 += 1;
                    if !seen.contains(&k) {
                        out[k].2 += 1;
                        seen.push(k);
                    }
                }
                None => {
                    seen.push(out.len());
                    out.push((i, v.clone(), 1, 1));
                }
            }
        }
    }
    // Stable: property order, then first appearance.
    out.sort_by_key(|(_, v, _, _)| v.property);
    out
}

/// Everything shrinking needs besides the runs.
pub struct Context<'a> {
    pub scenario: &'a ValidScenario,
    pub setup: &'a SwarmSetup,
    pub checks: &'a [Check],
    pub pool: &'a rayon::ThreadPool,
    pub deadline: Option<Instant>,
    /// Where the scenario's samples files are, for the reproducers.
    pub samples_dir: Option<&'a Path>,
}

/// Shrinks the first run of each group in turn and writes its reproducer.
pub fn shrink_all(
    cx: &Context<'_>,
    runs: &[SwarmRun],
) -> Result<(Vec<Reproducer>, ShrinkCost), String> {
    let groups = group(runs);
    let started = Instant::now();
    let bar = progress(groups.len() as u64, "reproducers shrunk");
    let mut cost = ShrinkCost::default();
    let mut out = Vec::with_capacity(groups.len());
    for (n, (index, first, runs_violated, violations)) in groups.into_iter().enumerate() {
        let (mut found, spent) = shrink_one(cx, &runs[index], first, n + 1)?;
        found.finding.runs = runs_violated;
        found.finding.violations = violations;
        cost.runs += spent.runs;
        cost.events += spent.events;
        bar.inc(1);
        out.push(found);
    }
    bar.finish_and_clear();
    cost.wall = started.elapsed().as_secs_f64();
    Ok((out, cost))
}

/// Shrinks `run`'s schedule for its violation `first` into reproducer `n`
/// (its counts of runs and violations are this run's alone).
pub fn shrink_one(
    cx: &Context<'_>,
    run: &SwarmRun,
    first: Violation,
    n: usize,
) -> Result<(Reproducer, ShrinkCost), String> {
    let started = Instant::now();
    let mut cost = ShrinkCost::default();
    let drawn = swarm::draw(cx.scenario, cx.setup, run.seed);
    let start = swarm::with_schedule(cx.scenario, drawn.faults)
        .map_err(|e| format!("{}: a drawn schedule is invalid: {e}", cx.scenario.name))?;
    let faults = start.faults.len();
    // Only the property being shrunk is checked (a placement ledger is
    // then kept only for a split).
    let checks: Vec<Check> = cx
        .checks
        .iter()
        .filter(|c| c.property == first.property)
        .copied()
        .collect();
    let judge = cx
        .scenario
        .is_membership()
        .then_some(first.subject.as_str());
    let world = world_of(&start)?;
    // A violation the world shows alone needs no fault: the shrinker
    // may then change the world freely. Past the budget no step will run,
    // so the run that would tell is not made either (the schedule is kept
    // as it is, world and faults).
    let past_deadline = cx.deadline.is_some_and(|d| Instant::now() >= d);
    let needs_faults = past_deadline || {
        let alone = check_run(&world, run.seed, &checks, judge)?;
        cost.runs += 1;
        cost.events += alone.events;
        !alone.violations.iter().any(|v| v.same_kind(&first))
    };
    let mut oracle = Shrinker {
        seed: run.seed,
        checks,
        like: first.clone(),
        world: needs_faults.then_some(world),
        pool: cx.pool,
        deadline: cx.deadline,
        runs: 0,
        events: 0,
        error: None,
    };
    let kept = Kept {
        violation: first.clone(),
        faults: run.faults.clone(),
    };
    let focus = |k: &Kept| focus(&k.violation);
    let shrunk = swarm::shrink(start, kept, cx.setup, &focus, &mut oracle);
    if let Some(e) = oracle.error {
        return Err(e);
    }
    cost.runs += oracle.runs;
    cost.events += oracle.events;
    let file = minimal_file(n);
    let v = &shrunk.violation.violation;
    let replay = replay_args(&file, run.seed, v, &shrunk.scenario);
    let evidence = v.describe(&shrunk.violation.faults);
    let same = run
        .violations
        .iter()
        .filter(|w| w.same_kind(&first))
        .count() as u64;
    let finding = Finding {
        first,
        run: run.run,
        seed: run.seed,
        runs: 1,
        violations: same,
        faults,
        minimal_faults: shrunk.scenario.faults.len(),
        tried: shrunk.tried,
        kept: shrunk.accepted,
        complete: shrunk.complete,
        file,
        evidence,
        replay,
    };
    let text = minimal_text(cx, &finding, shrunk.scenario, n)?;
    cost.wall = started.elapsed().as_secs_f64();
    Ok((Reproducer { finding, text }, cost))
}

/// What a shrunk scenario must keep of violation `v`.
fn focus(v: &Violation) -> Focus {
    Focus {
        subject: v.subject.clone(),
        distribution: v.distribution.clone(),
        // A split names a key, not a node.
        nodes: [&v.monitor, &v.target]
            .into_iter()
            .flatten()
            .filter(|n| !n.starts_with("key "))
            .cloned()
            .collect(),
        at: v.at,
    }
}

/// `fdlab replay FILE --seed S`, with the pair the violation is about (a
/// detector's) or its judge (a cluster's).
fn replay_args(file: &str, seed: u64, v: &Violation, s: &ValidScenario) -> String {
    if s.is_lockrpc() {
        // A lock run has no pair to replay: its report shows the policy.
        return format!("fdlab run {file} --seed {seed}");
    }
    let mut cmd = format!("fdlab replay {file} --seed {seed}");
    if s.is_membership() {
        cmd.push_str(&format!(" --judge {}", v.subject));
    } else if let (Some(m), Some(t)) = (&v.monitor, &v.target) {
        let names = s.topology.node_names();
        if names.contains(m) && names.contains(t) {
            cmd.push_str(&format!(" --pair {m},{t}"));
        }
    }
    cmd
}

/// Every property of a scenario of `kind`, written out: the bounds the
/// swarm checked, `false` for those it did not.
fn explicit(checks: &[Check], kind: SwarmKind) -> PropertySetup {
    let on = |p: Property| checks.iter().find(|c| c.property == p);
    let bound = |p: Property| {
        p.applies(kind).then(|| {
            on(p)
                .and_then(|c| c.bound)
                .map_or(Bound::Off, Bound::Within)
        })
    };
    let flag = |p: Property| p.applies(kind).then(|| on(p).is_some());
    PropertySetup {
        detect_within: bound(Property::DetectWithin),
        no_false_failed: flag(Property::NoFalseFailed),
        recover_within: bound(Property::RecoverWithin),
        no_live_declared_dead: flag(Property::NoLiveDeclaredDead),
        converge_within: bound(Property::ConvergeWithin),
        placement_split_within: bound(Property::PlacementSplitWithin),
        stop_using_dead_within: bound(Property::StopUsingDeadWithin),
        no_healthy_evicted: flag(Property::NoHealthyEvicted),
    }
}

/// The reproducer's file: a plain scenario, its properties, and comments
/// saying what it shows and how to see it.
fn minimal_text(
    cx: &Context<'_>,
    f: &Finding,
    minimal: ValidScenario,
    n: usize,
) -> Result<String, String> {
    let kind = minimal.swarm_kind();
    let mut s = minimal.into_inner();
    s.name = format!("{}-minimal-{n}", cx.scenario.name);
    s.description = format!(
        "fdlab swarm: {} violated by {} with {} fault{}",
        f.first.property.name(),
        f.first.who(),
        s.faults.len(),
        if s.faults.len() == 1 { "" } else { "s" }
    );
    s.seeds = 1;
    let tables = SwarmTables {
        swarm: None,
        properties: Some(explicit(cx.checks, kind)),
    };
    let comments = [
        format!("fdlab swarm: reproducer {n} for `{}`", cx.scenario.name),
        format!(
            "{} violated by {}: {}",
            f.first.property.name(),
            f.first.who(),
            f.evidence
        ),
        format!(
            "found in run {} (seed {}) with {} fault{}, shrunk to {} in {} runs ({} steps kept{})",
            f.run,
            f.seed,
            f.faults,
            if f.faults == 1 { "" } else { "s" },
            f.minimal_faults,
            f.tried,
            f.kept,
            if f.complete {
                ""
            } else {
                "; cut short by --time-budget"
            }
        ),
        format!("replay: {}", f.replay),
        String::new(),
    ];
    write_scenario(&s, &tables, &comments, cx.samples_dir)
        .map_err(|e| format!("{}: writing a reproducer: {e}", cx.scenario.name))
}
