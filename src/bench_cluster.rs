//! `fdlab bench --only membership`: a 1,000-silo Orleans cluster for one
//! simulated hour with Orleans' default options (the classic judge), one
//! silo crashed half way, under Orleans 10.2 (the figure kept from run to
//! run) and under main (which probes about twice as often); wall time,
//! events per second and the process's peak memory after each, printed
//! (the target of issue 4/9 is under 60 s on a 2-core machine).
//!
//! `fdlab bench --only swim`: 10,000 SWIM members with Lifeguard
//! (memberlist's LAN defaults) for one simulated hour, one crashed half way
//! (the target of issue 5/9 is under 120 s on a 2-core machine).

use std::time::Instant;

use fdlab_protocol::membership::{OrleansConfig, OrleansVersion};
use fdlab_protocol::Nanos;
use fdlab_sim::membership;
use fdlab_sim::scenario::{
    Dist, Fault, FaultKind, MembershipSetup, MonitorCount, Network, Scenario, Topology,
};
use fdlab_sim::valid::ValidScenario;

use crate::bench_ratios::Ratios;

/// Silos of the benchmark cluster.
pub const SILOS: u32 = 1_000;
/// A rolling start over this long: a thousand silos joining within the
/// default 10 s would spend the first minutes in table conflicts.
const START_SPREAD: Nanos = Nanos::from_secs(60);

/// The benchmark cluster: `silos` silos for `duration`, one crash half way.
pub fn cluster(silos: u32, duration: Nanos) -> Scenario {
    let topology = Topology::Mesh {
        nodes: silos,
        monitors_per_node: MonitorCount::All,
    };
    Scenario {
        network: Network {
            latency: Dist::Lognormal {
                median: Nanos::from_millis(1),
                sigma: 0.5,
            },
            ..Default::default()
        },
        faults: vec![Fault {
            kind: Some(FaultKind::Crash),
            node: Some("n7".into()),
            at: Some(Nanos(duration.as_nanos() / 2)),
            ..Default::default()
        }],
        membership: Some(MembershipSetup {
            start_spread: START_SPREAD,
            ..Default::default()
        }),
        ..Scenario::new("bench-orleans", topology, duration)
    }
}

/// Runs the benchmark cluster once with the classic judge, and once under
/// Lifeguard, and prints their figures.
pub fn measure(quick: bool, ratios: &mut Ratios) -> Result<(), String> {
    let (silos, duration) = if quick {
        (100, Nanos::from_secs(600))
    } else {
        (SILOS, Nanos::from_secs(3600))
    };
    for version in [OrleansVersion::V10_2, OrleansVersion::Main] {
        let mut scenario = cluster(silos, duration);
        if let Some(m) = scenario.membership.as_mut() {
            m.orleans = OrleansConfig::of(version);
        }
        let scenario = ValidScenario::new(scenario).map_err(|e| e.to_string())?;
        say!("\nmembership (Orleans {version}, default options, classic judge, one seed, one thread):");
        let label = format!("{silos} silos (Orleans {version})");
        one(&scenario, &label, duration, ratios)?;
    }
    // The same cluster under SWIM with Lifeguard (memberlist's LAN defaults):
    // a probe every second and gossip every 200 ms, so a shorter run.
    let swim_duration = Nanos(duration.as_nanos() / 6);
    let mut swim = cluster(silos, swim_duration);
    if let Some(m) = swim.membership.as_mut() {
        m.judges = Some(vec![fdlab_sim::scenario::LIFEGUARD_RUN.to_string()]);
    }
    let swim = ValidScenario::new(swim).map_err(|e| e.to_string())?;
    say!("membership (SWIM with Lifeguard, memberlist's LAN defaults, one seed, one thread):");
    let label = format!("{silos} members (Lifeguard)");
    one(&swim, &label, swim_duration, ratios).map(|_| ())
}

/// Members of the SWIM benchmark cluster.
pub const SWIM_MEMBERS: u32 = 10_000;
/// The SWIM benchmark's target wall time on a 2-core machine (issue 5/9).
const SWIM_TARGET_SECS: f64 = 120.0;

/// Runs the SWIM benchmark cluster (Lifeguard) once and prints its figures
/// beside the target, then once more without push/pull and TCP fallback
/// pings, and prints what they cost.
pub fn measure_swim(quick: bool, ratios: &mut Ratios) -> Result<(), String> {
    let (members, duration) = if quick {
        (1_000, Nanos::from_secs(600))
    } else {
        (SWIM_MEMBERS, Nanos::from_secs(3600))
    };
    // `exchanges`: push/pull and TCP fallback pings on (memberlist's
    // defaults) or both off, the reference the same run measures them by.
    let scenario = |exchanges: bool| {
        let mut swim = cluster(members, duration);
        if let Some(m) = swim.membership.as_mut() {
            m.judges = Some(vec![fdlab_sim::scenario::LIFEGUARD_RUN.to_string()]);
            if !exchanges {
                m.swim.push_pull_interval = Nanos::ZERO;
                m.swim.disable_tcp_pings = true;
            }
        }
        ValidScenario::new(swim).map_err(|e| e.to_string())
    };
    say!(
        "
SWIM with Lifeguard at scale (memberlist's LAN defaults, one seed, one thread):"
    );
    let label = format!("{members} members (Lifeguard)");
    let wall = one(&scenario(true)?, &label, duration, ratios)?;
    if !quick {
        crate::bench::say_target(wall, SWIM_TARGET_SECS);
    }
    let label = format!("{members} members, no push/pull or TCP pings");
    let reference = one(&scenario(false)?, &label, duration, ratios)?;
    say!(
        "  push/pull and TCP fallback pings: {:.2}x the time of the same cluster without them",
        wall / reference
    );
    Ok(())
}

/// Runs `scenario`'s first judge once and prints the figures; returns the
/// wall time in seconds.
fn one(
    scenario: &ValidScenario,
    members: &str,
    duration: Nanos,
    ratios: &mut Ratios,
) -> Result<f64, String> {
    let start = Instant::now();
    let (outcome, _) = membership::run(scenario, 1, 0, false);
    let wall = start.elapsed().as_secs_f64();
    let declared = outcome.crashes.first().and_then(|c| {
        c.declared
            .map(|d| format!("crash declared after {:.1} s", (d - c.at).as_secs_f64()))
    });
    say!(
        "  {:<52} {:>11} events in {wall:>7.2} s = {:>6.2} M events/s; {}; {} false declarations",
        format!("{members} x {duration}"),
        outcome.events,
        outcome.events as f64 / wall / 1e6,
        declared.unwrap_or_else(|| "crash not declared".into()),
        outcome
            .declarations
            .iter()
            .filter(|d| d.false_positive)
            .count(),
    );
    // The reference of the same run: the bare heap loop over as many
    // events (issue 37: a membership run's pace against the limit).
    let heap =
        crate::bench_sim::heap_reference(&format!("the {members} run"), outcome.events, wall);
    ratios.add(
        format!("membership, {members} x {duration}: events/s"),
        heap / wall,
        None,
    );
    crate::bench::say_peak_memory();
    Ok(wall)
}
