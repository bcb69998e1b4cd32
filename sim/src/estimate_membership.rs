//! What a membership scenario's runs cost ([`crate::membership`]): every
//! judge is a cluster run of its own on each seed, each silo probing its
//! peers and reading and writing the table, each SWIM member probing and
//! gossiping; the joins of the start, which every silo hears of; and, with
//! `[placement]`, the clients' key ledgers.
//!
//! An Orleans event costs more as the cluster grows (a table read or a
//! gossiped snapshot hands a silo a view of every row), so its events are
//! counted at a pace that knows the cluster's size ([`Pace::Orleans`]).

use fdlab_protocol::Nanos;

use super::{placement, Estimate, Pace, Source};
use crate::scenario::{FaultKind, MembershipSetup, Scenario};

/// Membership events per probe: the ping's and the pong's arrivals and the
/// agent's timer. Measured: 1,000 silos for an hour, 23.2 M events for
/// 7.2 M probes (3.2, the startup's joins and gossip included).
pub const EVENTS_PER_MEMBERSHIP_PROBE: f64 = 3.3;
/// SWIM events per member per gossip interval: the gossip timer, and the
/// packets it sends, which it does only when there are updates to
/// piggyback: about 0.2 in a quiet cluster (the Lifeguard study with one
/// member starved, its starvation counted apart).
pub const EVENTS_PER_GOSSIP_TICK: f64 = 0.2;
/// SWIM events per second per starved member (a `degrade` fault), over the
/// packets its slow replies, the suspicions of it and their refutations
/// add at every member. Measured on the Lifeguard study (100 members,
/// heavy-tailed processing): 20 to 165 per second as 1 to 16 members
/// starve (more starved members starve each other's probes too); 55
/// keeps 1 to 16 within a factor of 2.
pub const EVENTS_PER_STARVED_MEMBER_SECOND: f64 = 55.0;
/// Events of one cycle of a duty-cycle starvation: its stop and its resume.
pub const EVENTS_PER_DUTY_CYCLE: f64 = 2.0;
/// Orleans events per pair of silos at the start: each silo's join is
/// written to the table and heard of by every other silo (its gossiped
/// snapshot, then the table reads it triggers). Measured: one simulated
/// minute of 500, 1,000 and 2,000 silos (start spread 10 s, one judge)
/// takes 1.3 to 1.7 × silos² events beyond its probes and table
/// operations; the start spread (0 to 60 s) moves it by under 10%.
pub const JOIN_EVENTS_PER_SILO_PAIR: f64 = 1.5;
/// Membership events per periodic table operation (a refresh, an
/// IAmAlive): its arrival at the table, the reply's at the silo, the timer.
pub const EVENTS_PER_TABLE_OPERATION: f64 = 3.0;
/// Bytes of one silo besides its view: the agent, its judges, its node.
const SILO_BYTES: u64 = 8 * 1024;
/// Bytes of one row in one silo's view (views are copies once the table
/// changed between two reads, which IAmAlive writes make the usual case).
const VIEW_ROW_BYTES: u64 = 96;
/// Bytes a SWIM member holds per member of the cluster: its entry in the
/// member list and in the probe order. Measured: 2.70 GiB at the peak of
/// 10,000 members for an hour (`fdlab bench --only swim`), 27 bytes x
/// members².
const SWIM_MEMBER_BYTES: u64 = 28;

/// A membership scenario: every judge is a run on each seed; each silo
/// probes `num_probed_silos` peers every `probe_timeout`.
pub(super) fn estimate(scenario: &Scenario, m: &MembershipSetup) -> Estimate {
    let silos = scenario.topology.node_names().len() as f64;
    let judges = scenario.orleans_judge_names().len() as f64;
    let swims = scenario.judge_names().len() as f64 - judges;
    let o = &m.orleans;
    let probed = f64::from(o.num_probed_silos).min((silos - 1.0).max(0.0));
    let duration = scenario.duration.as_nanos_f64();
    let per = |period: Nanos| duration / period.as_nanos_f64().max(1.0);
    let n = silos as u64;
    let orleans = Pace::Orleans { silos: n };
    let swim = Pace::Swim { members: n };
    let mut sources = vec![
        Source::simulated(
            "membership.orleans.probe_timeout",
            format!(
                "{silos} silos probing {probed} peers every {} for each of {judges} judges",
                o.probe_timeout
            ),
            judges * silos * probed * per(o.probe_timeout) * EVENTS_PER_MEMBERSHIP_PROBE,
            orleans,
        ),
        Source::simulated(
            "membership.orleans.table_refresh_period",
            format!(
                "{silos} silos reading the table every {} for each of {judges} judges",
                o.table_refresh_period
            ),
            judges * silos * per(o.table_refresh_period) * EVENTS_PER_TABLE_OPERATION,
            orleans,
        ),
        Source::simulated(
            "membership.orleans.i_am_alive_period",
            format!(
                "{silos} silos writing IAmAlive every {} for each of {judges} judges",
                o.i_am_alive_period
            ),
            judges * silos * per(o.i_am_alive_period) * EVENTS_PER_TABLE_OPERATION,
            orleans,
        ),
        Source::simulated(
            "topology.nodes",
            format!(
                "{silos} silos joining within {}, each join heard by every silo, for each of {judges} judges",
                m.start_spread
            ),
            judges * silos * silos * JOIN_EVENTS_PER_SILO_PAIR,
            orleans,
        ),
        Source::simulated(
            "membership.swim.probe_interval",
            format!(
                "{silos} SWIM members probing every {} and gossiping every {} for each of {swims} SWIM runs",
                m.swim.probe_interval, m.swim.gossip_interval
            ),
            swims
                * silos
                * (per(m.swim.probe_interval) * EVENTS_PER_MEMBERSHIP_PROBE
                    + per(m.swim.gossip_interval) * EVENTS_PER_GOSSIP_TICK),
            swim,
        ),
    ];
    let (starved, cycles) = starvation(scenario, m.swim.probe_interval);
    sources.push(Source::simulated(
        "faults.degrade",
        format!(
            "{:.0} member-seconds of starvation for each of {swims} SWIM runs, {cycles:.0} stop-resume cycles for each of {} runs",
            starved,
            judges + swims
        ),
        swims * starved * EVENTS_PER_STARVED_MEMBER_SECOND
            + (judges + swims) * cycles * EVENTS_PER_DUTY_CYCLE,
        swim,
    ));
    let mut placed = 0;
    if let Some(p) = &scenario.placement {
        let runs = scenario.judge_names().len() as u64;
        let cost = placement::cost(scenario, p, runs, 1, "judges' runs");
        sources.extend(cost.sources);
        placed = cost.held;
    }
    sources.retain(|s| s.work > 0.0);
    sources.sort_by(|a, b| b.events.total_cmp(&a.events));
    // Runs are one judge each: the largest is an Orleans one if any.
    let per_member = if judges > 0.0 {
        VIEW_ROW_BYTES
    } else {
        SWIM_MEMBER_BYTES
    };
    let cluster = n
        .saturating_mul(SILO_BYTES)
        .saturating_add(n.saturating_mul(n).saturating_mul(per_member));
    let bytes = cluster.saturating_add(placed);
    Estimate {
        events: sources.iter().map(|s| s.events).sum(),
        bytes,
        whole_bytes: bytes,
        memory_key: super::memory_key_of(cluster, placed),
        sources,
    }
}

/// The seconds members spend starved by slowed or drawn processing
/// (`degrade` faults) or by duty-cycle stops longer than a probe round
/// (`probe_interval`), and the stop-resume cycles of the duty cycles. A fault drawn in a
/// window counts from the window's middle.
fn starvation(scenario: &Scenario, probe_interval: Nanos) -> (f64, f64) {
    let end = scenario.duration.as_nanos_f64();
    let mut seconds = 0.0;
    let mut cycles = 0.0;
    for f in &scenario.faults {
        if f.kind != Some(FaultKind::Degrade) {
            continue;
        }
        let start = match (f.at, f.window) {
            (Some(at), _) => at.as_nanos_f64(),
            (None, Some([a, b])) => (a.as_nanos_f64() + b.as_nanos_f64()) / 2.0,
            (None, None) => 0.0,
        };
        let stop = f
            .duration
            .map_or(end, |d| (start + d.as_nanos_f64()).min(end));
        let span = (stop - start).max(0.0);
        match (f.every, f.stopped) {
            // A duty cycle's stops cost their stop and resume. Stops within
            // a probe round (the study's 20% quota, 80 ms of every 100 ms,
            // up to 1 s of every 2 s) never get the member suspected, so
            // they add no SWIM traffic; longer ones get it suspected as a
            // starved member is (measured, docs/lifeguard.md).
            (Some(every), Some(stopped)) => {
                cycles += span / every.as_nanos_f64().max(1.0);
                if stopped > probe_interval {
                    seconds += span / NANOS_PER_SECOND;
                }
            }
            _ => seconds += span / NANOS_PER_SECOND,
        }
    }
    (seconds, cycles)
}

/// Nanoseconds in a second, for the member-seconds of starvation.
const NANOS_PER_SECOND: f64 = 1e9;
