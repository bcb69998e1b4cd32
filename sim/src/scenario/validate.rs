//! What makes a scenario valid: every key in range, every name known, and
//! limits on what one run may ask for (nodes, detector instances and state,
//! random faults), each refused with the key it is under.

use fdlab_protocol::time::MAX_DURATION;
use fdlab_protocol::{Nanos, ValidConfig};

pub use super::membership_checks::{MAX_SILOS, SILO_BYTES_PER_SILO};
use super::{
    is_swim_run, Dist, Expect, FaultKind, MonitorCount, Scenario, Topology, CLASSIC_JUDGE,
    LIFEGUARD_RUN, SWIM_RUN,
};
use std::collections::BTreeSet;
use std::fmt;

/// Most stops a duty-cycle fault may make: each is a pause and a resume
/// of the simulated process.
pub const MAX_DUTY_CYCLES: u64 = 1_000_000;

/// A scenario value that is out of range or inconsistent, with the path of the
/// key (`faults[2].node`, `topology.nodes`) so that file readers can point at
/// its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub problem: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, problem: impl Into<String>) -> ScenarioError {
        ScenarioError {
            path: path.into(),
            problem: problem.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path, self.problem)
    }
}

impl std::error::Error for ScenarioError {}

pub(super) fn check(
    ok: bool,
    path: impl FnOnce() -> String,
    problem: &str,
) -> Result<(), ScenarioError> {
    if ok {
        Ok(())
    } else {
        Err(ScenarioError::new(path(), problem))
    }
}

/// Largest topology accepted: far beyond the 1,000-node benchmark, small enough
/// that a typo cannot ask for a billion nodes.
pub const MAX_NODES: u32 = 100_000;

/// Most detector instances (monitored pairs x detectors) a run may hold.
pub const MAX_DETECTOR_INSTANCES: u64 = 20_000_000;

/// Most detector state (windows included) a run may hold: 16 GiB. Beyond,
/// the allocation would fail and abort the process instead of reporting.
pub const MAX_DETECTOR_STATE_BYTES: u64 = 16 << 30;

/// Most random faults a scenario may expect to draw in one run.
pub const MAX_RANDOM_FAULTS: f64 = 1_000_000.0;

impl Topology {
    pub(super) fn validate(&self) -> Result<(), ScenarioError> {
        match self {
            Topology::Mesh {
                nodes,
                monitors_per_node,
            } => {
                check(
                    (2..=MAX_NODES).contains(nodes),
                    || "topology.nodes".into(),
                    "must be between 2 and 100000",
                )?;
                if let MonitorCount::Count(k) = monitors_per_node {
                    check(
                        *k >= 1 && *k < *nodes,
                        || "topology.monitors_per_node".into(),
                        "must be at least 1 and less than `nodes`",
                    )?;
                }
            }
            Topology::Dataflow { layers } => {
                check(
                    layers.len() >= 2,
                    || "topology.layers".into(),
                    "needs at least two layers (sources and a downstream)",
                )?;
                check(
                    layers.iter().all(|&n| n >= 1),
                    || "topology.layers".into(),
                    "every layer needs at least one stage",
                )?;
                check(
                    layers.iter().map(|&n| u64::from(n)).sum::<u64>() <= u64::from(MAX_NODES),
                    || "topology.layers".into(),
                    "at most 100000 stages in all",
                )?;
            }
        }
        Ok(())
    }
}

impl Dist {
    /// Its duration parameters, by key.
    fn durations(&self) -> Vec<(&'static str, Nanos)> {
        match self {
            Dist::Constant { value } => vec![("value", *value)],
            Dist::Uniform { min, max } => vec![("min", *min), ("max", *max)],
            Dist::Normal { mean, std_dev } => vec![("mean", *mean), ("std_dev", *std_dev)],
            Dist::Lognormal { median, .. } => vec![("median", *median)],
            Dist::Pareto { scale, .. } => vec![("scale", *scale)],
            Dist::Empirical { samples, .. } => samples
                .iter()
                .max()
                .map(|&m| vec![("file", m)])
                .unwrap_or_default(),
        }
    }

    /// Checks the parameters; `path` names the key holding the distribution.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let at = |key: &'static str| move || format!("{path}.{key}");
        for (key, value) in self.durations() {
            bounded(value, at(key))?;
        }
        match self {
            Dist::Constant { .. } | Dist::Normal { .. } => Ok(()),
            Dist::Uniform { min, max } => check(min <= max, at("max"), "must not be below `min`"),
            Dist::Lognormal { sigma, .. } => check(
                sigma.is_finite() && *sigma >= 0.0 && *sigma <= 10.0,
                at("sigma"),
                "must be between 0 and 10",
            ),
            Dist::Pareto { scale, shape } => {
                check(!scale.is_zero(), at("scale"), "must be a positive duration")?;
                check(
                    shape.is_finite() && *shape > 0.0,
                    at("shape"),
                    "must be a positive number",
                )
            }
            Dist::Empirical { samples, .. } => {
                check(!samples.is_empty(), at("file"), "holds no samples")
            }
        }
    }
}

pub(super) fn probability(value: f64, path: impl FnOnce() -> String) -> Result<(), ScenarioError> {
    check(
        value.is_finite() && (0.0..=1.0).contains(&value),
        path,
        "must be a probability between 0 and 1",
    )
}

impl Scenario {
    /// Checks everything that needs the whole scenario: node names exist, each
    /// fault has the keys its kind needs and none it does not, ranges.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        self.checked_configs().map(|_| ())
    }

    /// [`Scenario::validate`], keeping each detector's configuration as the
    /// [`ValidConfig`] its checks made (see [`crate::valid::ValidScenario`]).
    pub(crate) fn checked_configs(&self) -> Result<Vec<ValidConfig>, ScenarioError> {
        check(
            !self.duration.is_zero(),
            || "duration".into(),
            "must be a positive duration",
        )?;
        bounded(self.duration, || "duration".into())?;
        check(self.seeds >= 1, || "seeds".into(), "must be at least 1")?;
        if self.is_membership() {
            self.membership_topology()?;
        }
        self.topology.validate()?;
        let names = self.topology.node_names();
        // A set, not a search per name: a partition's side may name half
        // of 100,000 nodes.
        let names: BTreeSet<&str> = names.iter().map(String::as_str).collect();
        let known = |node: &str| names.contains(node);

        let net = &self.network;
        net.latency.validate("network.latency")?;
        if let Some(d) = &net.data_latency {
            d.validate("network.data_latency")?;
        }
        probability(net.loss, || "network.loss".into())?;
        check(
            net.send_buffer >= 1,
            || "network.send_buffer".into(),
            "must be at least 1",
        )?;
        check(
            net.receive_queue >= 1,
            || "network.receive_queue".into(),
            "must be at least 1",
        )?;
        let w = &self.workload;
        w.interval.validate("workload.interval")?;
        w.service_time.validate("workload.service_time")?;
        if let Some(d) = &w.on {
            d.validate("workload.on")?;
        }
        if let Some(d) = &w.off {
            d.validate("workload.off")?;
        }
        check(
            w.on.is_some() == w.off.is_some(),
            || "workload.on".into(),
            "`on` and `off` go together",
        )?;
        check(
            !w.idle_frame_interval.is_zero(),
            || "workload.idle_frame_interval".into(),
            "must be a positive duration",
        )?;
        bounded(w.idle_frame_interval, || {
            "workload.idle_frame_interval".into()
        })?;

        if let Some(m) = &self.membership {
            self.validate_membership(m)?;
        }
        if let Some(p) = &self.placement {
            self.validate_placement(p)?;
        }
        if let Some(l) = &self.lockrpc {
            self.validate_lockrpc(l)?;
        }

        // A membership scenario may have none: its `classic` judge is Orleans'
        // own missed-probe count.
        check(
            !self.detectors.is_empty() || self.is_membership() || self.is_lockrpc(),
            || "detectors".into(),
            "a scenario needs at least one [[detectors]] table",
        )?;
        let mut configs = Vec::with_capacity(self.detectors.len());
        for (i, d) in self.detectors.iter().enumerate() {
            check(
                !d.name.trim().is_empty(),
                || format!("detectors[{i}].name"),
                "must not be empty",
            )?;
            if let Some(c) = crate::printable::first_hidden(&d.name) {
                return Err(ScenarioError::new(
                    format!("detectors[{i}].name"),
                    format!(
                        "holds {}, a character that does not show as itself; names appear in reports and terminals",
                        c.escape_unicode()
                    ),
                ));
            }
            check(
                !self.detectors[..i].iter().any(|o| o.name == d.name),
                || format!("detectors[{i}].name"),
                &format!("`{}` is used by another detector", d.name),
            )?;
            let valid =
                d.config.clone().validated().map_err(|e| {
                    ScenarioError::new(format!("detectors[{i}].{}", e.key), e.problem)
                })?;
            configs.push(valid);
            if let Some(m) = &self.membership {
                // `membership.judges` names these runs, not this table: the
                // table would never judge.
                check(
                    d.name != CLASSIC_JUDGE && !is_swim_run(&d.name),
                    || format!("detectors[{i}].name"),
                    &format!(
                        "`{}` is the name of a built-in judge (`{CLASSIC_JUDGE}`, `{SWIM_RUN}`, `{LIFEGUARD_RUN}`); give this detector another name",
                        d.name
                    ),
                )?;
                check(
                    !d.config.uses_data_stream(),
                    || format!("detectors[{i}].kind"),
                    &format!(
                        "`{}` ({}) judges from a data stream, and a membership cluster has none: a judge hears only the probe replies (as heartbeats or probe outcomes); use fixed-timeout, phi-accrual or adaptive-probe",
                        d.name,
                        d.config.kind()
                    ),
                )?;
                if let Some(judges) = &m.judges {
                    check(
                        judges.contains(&d.name),
                        || format!("detectors[{i}].name"),
                        &format!(
                            "detector `{}` is not a judge: add it to membership.judges or remove it",
                            d.name
                        ),
                    )?;
                }
                continue;
            }
            check(
                !(d.config.uses_data_stream()
                    && d.config.heartbeat_interval().is_none()
                    && matches!(self.topology, Topology::Mesh { .. })),
                || format!("detectors[{i}].kind"),
                &format!(
                    "`{}` ({}) watches a data stream, and a mesh has none: it would never hear from its peer; use it in a dataflow topology",
                    d.name,
                    d.config.kind()
                ),
            )?;
        }

        if let Some(m) = &self.membership {
            self.membership_limits(m)?;
        } else {
            self.detector_limits()?;
        }
        for (i, fault) in self.faults.iter().enumerate() {
            if let Some(kind) = fault.kind {
                self.fault_fits(kind, || format!("faults[{i}].kind"))?;
                self.lockrpc_fault_fits(kind, || format!("faults[{i}].kind"))?;
            }
            fault.validate(i, self.duration, &known, names.len())?;
            check(
                fault.processing.is_none() || self.is_membership(),
                || format!("faults[{i}].processing"),
                "a processing-time distribution is for membership scenarios; use `slowdown` (a fixed time per event)",
            )?;
            check(
                fault.stopped.is_none() || self.is_membership(),
                || format!("faults[{i}].stopped"),
                "a duty cycle (stopped of every) is for membership scenarios; use `slowdown` (a fixed time per event) or a `pause`",
            )?;
            if let (Some(every), Some(_)) = (fault.every, fault.stopped) {
                let start = fault.at.or(fault.window.map(|w| w[0])).unwrap_or_default();
                let span = fault
                    .duration
                    .unwrap_or(self.duration.saturating_sub(start));
                let cycles = span.as_nanos() / every.as_nanos().max(1);
                check(
                    cycles <= MAX_DUTY_CYCLES,
                    || format!("faults[{i}].every"),
                    &format!(
                        "{cycles} stops in the fault's {span} are too many (at most {MAX_DUTY_CYCLES}): a longer `every`, or a shorter `duration`"
                    ),
                )?;
            }
            check(
                !(fault.kind().is_table() && fault.expect == Some(Expect::Detect)),
                || format!("faults[{i}].expect"),
                "a table fault makes no silo fail, so there is nothing to detect; leave `expect` out or write \"tolerate\"",
            )?;
        }
        for (i, r) in self.random_faults.iter().enumerate() {
            let path = |key: &str| format!("random_faults[{i}].{key}");
            check(
                r.rate_per_node_hour.is_finite() && r.rate_per_node_hour >= 0.0,
                || path("rate_per_node_hour"),
                "must be a non-negative number",
            )?;
            let expected =
                r.rate_per_node_hour * names.len() as f64 * self.duration.as_secs_f64() / 3600.0;
            check(
                expected <= MAX_RANDOM_FAULTS,
                || path("rate_per_node_hour"),
                &format!(
                    "would draw about {expected:.0} faults per run; at most {MAX_RANDOM_FAULTS}"
                ),
            )?;
            check(
                !matches!(
                    r.kind,
                    FaultKind::Restart
                        | FaultKind::Clock
                        | FaultKind::Partition
                        | FaultKind::TableOutage
                        | FaultKind::SlowTable
                ),
                || path("kind"),
                "random faults are crash, pause, slow-link, loss, backpressure or degrade",
            )?;
            self.fault_fits(r.kind, || path("kind"))?;
            for (key, value) in [("extra_latency", r.extra_latency), ("slowdown", r.slowdown)] {
                if let Some(v) = value {
                    bounded(v, || path(key))?;
                }
            }
            if let Some(d) = &r.duration {
                d.validate(&path("duration"))?;
            }
            if let Some(p) = r.probability {
                probability(p, || path("probability"))?;
            }
            if let Some(c) = r.capacity {
                check(
                    c > 0.0 && c <= 1.0,
                    || path("capacity"),
                    "must be in (0, 1]",
                )?;
            }
        }
        for (i, c) in self.clocks.iter().enumerate() {
            check(
                known(&c.node),
                || format!("clocks[{i}].node"),
                &format!("there is no node `{}`", c.node),
            )?;
            check(
                c.drift.is_finite() && c.drift > -0.5 && c.drift < 0.5,
                || format!("clocks[{i}].drift"),
                "must be between -0.5 and 0.5",
            )?;
            offset_bounded(c.offset.0, || format!("clocks[{i}].offset"))?;
        }
        Ok(configs)
    }

    /// The limits on detector instances and their state of a scenario whose
    /// every monitored pair runs every detector.
    fn detector_limits(&self) -> Result<(), ScenarioError> {
        let instances = self
            .topology
            .monitored_pairs()
            .saturating_mul(self.detectors.len() as u64);
        check(
            instances <= MAX_DETECTOR_INSTANCES,
            || "topology".into(),
            &format!(
                "{instances} detector instances (monitored pairs x detectors); at most {MAX_DETECTOR_INSTANCES}"
            ),
        )?;
        let per_pair: u64 = self
            .detectors
            .iter()
            .map(|d| d.config.memory_estimate())
            .sum();
        let state = self.monitored_pairs().saturating_mul(per_pair);
        check(
            state <= MAX_DETECTOR_STATE_BYTES,
            || "topology".into(),
            &format!(
                "the detectors would hold about {} MiB (monitored pairs x detector state, sample windows included); at most {} MiB",
                state >> 20,
                MAX_DETECTOR_STATE_BYTES >> 20
            ),
        )
    }
}

/// At most [`MAX_DURATION`].
pub(super) fn bounded(value: Nanos, path: impl FnOnce() -> String) -> Result<(), ScenarioError> {
    check(
        value <= MAX_DURATION,
        path,
        &format!(
            "{value} is beyond the longest duration fdlab takes ({MAX_DURATION}, about 146 years)"
        ),
    )
}

/// A clock offset of at most [`MAX_DURATION`] either way.
pub(super) fn offset_bounded(
    offset: i64,
    path: impl FnOnce() -> String,
) -> Result<(), ScenarioError> {
    check(
        offset.unsigned_abs() <= MAX_DURATION.as_nanos(),
        path,
        &format!(
            "is beyond the largest clock offset fdlab takes (±{MAX_DURATION}, about 146 years)"
        ),
    )
}

/// Most loss bursts one bursty loss fault may draw in a run (each is kept
/// in memory for the run).
pub const MAX_BURSTS: f64 = 1_000_000.0;

/// A bursty loss fault over `span` alternates gaps and bursts of these mean
/// lengths: refuse one that would draw more than [`MAX_BURSTS`].
pub(super) fn bursts_bounded(
    span: Nanos,
    burst: Nanos,
    gap: Nanos,
    path: impl FnOnce() -> String,
) -> Result<(), ScenarioError> {
    let cycle = (burst.as_nanos_f64() + gap.as_nanos_f64()).max(1.0);
    let count = span.as_nanos_f64() / cycle;
    check(
        count <= MAX_BURSTS,
        path,
        &format!(
            "`burst` {burst} and `gap` {gap} over {span} make about {count:.1e} loss bursts; at most {MAX_BURSTS:.0e}"
        ),
    )
}
