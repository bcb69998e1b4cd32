//! What makes the `[swarm]` and `[properties]` tables valid: kinds the
//! scenario's topology can take, bounds that can hold, properties that
//! apply to the scenario; each refused with the key it is under.

use fdlab_protocol::time::MAX_DURATION;
use fdlab_protocol::Nanos;

use super::swarm_setup::{
    Bound, KindBounds, Property, SwarmKind, SwarmSetup, SwarmTables, MAX_FAULTS_PER_RUN,
};
use super::validate::{bursts_bounded, check, ScenarioError};
use super::{FaultKind, Scenario, Topology};

impl Scenario {
    /// What the scenario is, for the properties that apply to it.
    pub fn swarm_kind(&self) -> SwarmKind {
        if self.is_lockrpc() {
            SwarmKind::Lock
        } else if self.is_membership() && self.is_placement() {
            SwarmKind::MembershipPlacement
        } else if self.is_membership() {
            SwarmKind::Membership
        } else if self.is_placement() {
            SwarmKind::Placement
        } else {
            SwarmKind::Detectors
        }
    }

    /// The fault kinds a swarm may draw on this scenario, in
    /// [`FaultKind::ALL`] order: every kind of a node or link; `backpressure`
    /// only in a dataflow (a mesh has no stage to slow); the table faults
    /// only in a membership scenario.
    pub fn swarm_kinds(&self) -> Vec<FaultKind> {
        FaultKind::ALL
            .into_iter()
            .filter(|&k| self.swarm_refuses(k).is_none())
            .collect()
    }

    /// Why a swarm cannot draw `kind` on this scenario, if it cannot.
    fn swarm_refuses(&self, kind: FaultKind) -> Option<String> {
        let dataflow = matches!(self.topology, Topology::Dataflow { .. });
        if self.is_lockrpc() && !Scenario::lockrpc_takes(kind) {
            return Some(format!(
                "`{}` does not apply to a lock-RPC scenario; its swarm draws crash, pause, degrade, slow-link, partition and loss",
                kind.name()
            ));
        }
        if kind.is_table() && !self.is_membership() {
            return Some(format!(
                "`{}` is a fault of the membership table, and only a membership scenario has one",
                kind.name()
            ));
        }
        if kind == FaultKind::Backpressure && !dataflow {
            return Some(
                "`backpressure` slows a dataflow stage, and this scenario has none; a slow node is a `degrade` fault"
                    .to_string(),
            );
        }
        None
    }
}

impl SwarmTables {
    /// Checks `[swarm]` and `[properties]` against the scenario they are
    /// written in (see the module docs).
    pub fn validate(&self, scenario: &Scenario) -> Result<(), ScenarioError> {
        let this = scenario;
        if let Some(s) = &self.swarm {
            if let Some(kinds) = &s.kinds {
                check(
                    !kinds.is_empty(),
                    || "swarm.kinds".into(),
                    "lists no fault kind; leave it out for every kind the topology takes",
                )?;
                for (i, &kind) in kinds.iter().enumerate() {
                    let path = || format!("swarm.kinds[{i}]");
                    if let Some(why) = this.swarm_refuses(kind) {
                        return Err(ScenarioError::new(path(), why));
                    }
                    check(
                        !kinds[..i].contains(&kind),
                        path,
                        &format!("`{}` is listed twice", kind.name()),
                    )?;
                }
            }
            for kind in FaultKind::ALL {
                let Some(table) = s.table(kind) else {
                    continue;
                };
                let path = |key: &str| {
                    if key.is_empty() {
                        format!("swarm.{}", kind.name())
                    } else {
                        format!("swarm.{}.{key}", kind.name())
                    }
                };
                if let Some(why) = this.swarm_refuses(kind) {
                    return Err(ScenarioError::new(path(""), why));
                }
                if let Some(kinds) = &s.kinds {
                    check(
                        kinds.contains(&kind),
                        || path(""),
                        &format!(
                            "`{}` is not in `swarm.kinds`: add it there, or remove this table",
                            kind.name()
                        ),
                    )?;
                }
                kind_bounds(kind, table, &path)?;
            }
            check(
                crate::swarm::kinds(this, s)
                    .into_iter()
                    .any(|k| s.bounds(k).rate > 0.0),
                || "swarm".into(),
                "every fault kind it may draw has `rate = 0`: no run could draw a fault",
            )?;
            if let Some([fewest, most]) = s.faults {
                check(
                    most >= 1,
                    || "swarm.faults".into(),
                    "[fewest, most] faults per run: `most` must be at least 1",
                )?;
                check(
                    fewest <= most,
                    || "swarm.faults".into(),
                    &format!("[fewest, most] faults per run: {fewest} is more than {most}"),
                )?;
                check(
                    most <= MAX_FAULTS_PER_RUN,
                    || "swarm.faults".into(),
                    &format!("at most {MAX_FAULTS_PER_RUN} faults per run"),
                )?;
            }
            if let Some([earliest, latest]) = s.start {
                check(
                    earliest <= latest,
                    || "swarm.start".into(),
                    &format!("[earliest, latest]: {earliest} is after {latest}"),
                )?;
                check(
                    latest < this.duration,
                    || "swarm.start".into(),
                    &format!(
                        "{latest} is not before the end of the run ({})",
                        this.duration
                    ),
                )?;
            }
            if let Some(from) = s.detect_from {
                positive(from, || "swarm.detect_from".into())?;
            }
        }
        if let Some(p) = &self.properties {
            let kind = this.swarm_kind();
            for (property, bound) in p.written() {
                let path = || format!("properties.{}", property.name());
                check(
                    property.applies(kind),
                    path,
                    &format!(
                        "does not apply to {}; it applies to {}",
                        match kind {
                            SwarmKind::Detectors => "a scenario of detectors on monitored pairs",
                            SwarmKind::Placement => "a placement scenario",
                            SwarmKind::Membership => "a membership scenario",
                            SwarmKind::MembershipPlacement =>
                                "a membership scenario whose clients place keys",
                            SwarmKind::Lock => "a lock-RPC scenario",
                        },
                        match property {
                            Property::DetectWithin => "every scenario but lock-RPC ones",
                            Property::StopUsingDeadWithin | Property::NoHealthyEvicted =>
                                "lock-RPC scenarios",
                            Property::NoFalseFailed | Property::RecoverWithin =>
                                "mesh, dataflow and placement scenarios (their detectors)",
                            Property::NoLiveDeclaredDead | Property::ConvergeWithin =>
                                "membership scenarios",
                            Property::PlacementSplitWithin =>
                                "placement scenarios (by detectors or by membership views)",
                        }
                    ),
                )?;
                if let Some(Bound::Within(t)) = bound {
                    positive(t, path)?;
                }
            }
        }
        Ok(())
    }
}

/// A positive duration within fdlab's range.
fn positive(t: Nanos, path: impl Fn() -> String) -> Result<(), ScenarioError> {
    check(
        !t.is_zero(),
        &path,
        "must be a positive duration (a bound of zero can never hold)",
    )?;
    check(
        t <= MAX_DURATION,
        &path,
        &format!("is beyond the longest duration fdlab takes ({MAX_DURATION})"),
    )
}

/// Checks one `[swarm.<kind>]` table.
fn kind_bounds(
    kind: FaultKind,
    t: &KindBounds,
    path: &dyn Fn(&str) -> String,
) -> Result<(), ScenarioError> {
    let present = [
        ("duration", t.duration.is_some()),
        ("extra_latency", t.extra_latency.is_some()),
        ("probability", t.probability.is_some()),
        ("slowdown", t.slowdown.is_some()),
        ("capacity", t.capacity.is_some()),
        ("offset", t.offset.is_some()),
        ("shapes", t.shapes.is_some()),
        ("bursty", t.bursty.is_some()),
        ("burst", t.burst.is_some()),
        ("gap", t.gap.is_some()),
    ];
    let allowed = kind.swarm_keys();
    for (key, is_set) in present {
        check(
            !is_set || allowed.contains(&key),
            || path(key),
            &format!(
                "does not apply to `{}` in a swarm (its table takes {})",
                kind.name(),
                allowed.join(", ")
            ),
        )?;
    }
    if let Some(rate) = t.rate {
        check(
            rate.is_finite() && (0.0..=1.0).contains(&rate),
            || path("rate"),
            &format!("must be a probability between 0 and 1 (the share of runs that enable `{}`), and is {rate}", kind.name()),
        )?;
    }
    if let Some(shapes) = &t.shapes {
        check(
            !shapes.is_empty(),
            || path("shapes"),
            "lists no shape: give at least one of `isolate`, `halves`, `bridge`",
        )?;
        for (i, shape) in shapes.iter().enumerate() {
            check(
                !shapes[..i].contains(shape),
                || path("shapes"),
                &format!("lists `{}` twice", shape.name()),
            )?;
        }
    }
    if let Some(share) = t.bursty {
        check(
            share.is_finite() && (0.0..=1.0).contains(&share),
            || path("bursty"),
            &format!("must be a share between 0 and 1 (of the loss faults drawn in bursts), and is {share}"),
        )?;
    }
    for (key, value) in [
        ("duration", t.duration),
        ("extra_latency", t.extra_latency),
        ("slowdown", t.slowdown),
        ("offset", t.offset),
        ("burst", t.burst),
        ("gap", t.gap),
    ] {
        if let Some([least, most]) = value {
            positive(least, || path(key))?;
            positive(most, || path(key))?;
            check(
                least <= most,
                || path(key),
                &format!("[least, most]: {least} is more than {most}"),
            )?;
        }
    }
    for (key, value, what) in [
        ("probability", t.probability, "a probability in (0, 1]"),
        ("capacity", t.capacity, "a capacity factor in (0, 1]"),
    ] {
        if let Some([least, most]) = value {
            let ok = |x: f64| x.is_finite() && x > 0.0 && x <= 1.0;
            check(
                ok(least) && ok(most),
                || path(key),
                &format!("each bound must be {what}, and they are {least} and {most}"),
            )?;
            check(
                least <= most,
                || path(key),
                &format!("[least, most]: {least} is more than {most}"),
            )?;
        }
    }
    if kind == FaultKind::Loss && t.bursty != Some(0.0) {
        // The worst draw: the longest fault with the shortest bursts and gaps.
        let defaults = SwarmSetup::default().loss_bursts();
        if let Some([_, longest]) = t.duration.or(kind.default_bounds().duration) {
            let burst = t.burst.unwrap_or(defaults.burst)[0];
            let gap = t.gap.unwrap_or(defaults.gap)[0];
            bursts_bounded(longest, burst, gap, || path("burst"))?;
        }
    }
    Ok(())
}
