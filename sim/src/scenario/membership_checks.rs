//! What makes a membership scenario valid (the `[membership]` table, its
//! topology, its limits, and which faults it takes), each refused with the
//! key it is under; the checks every scenario shares are in
//! [`super::validate`].

use super::validate::{bounded, check, ScenarioError, MAX_DETECTOR_STATE_BYTES};
use super::{FaultKind, MembershipSetup, MonitorCount, Scenario, Topology, CLASSIC_JUDGE};

/// Most silos of a membership scenario. Unlike a detector, which holds the
/// state of one monitored pair, every silo holds state that grows with the
/// whole cluster: its view of the table (a row per silo, a copy of its own
/// once the table changed since another silo read it, which IAmAlive writes
/// make the usual case), the Active silos of that view, and when it last
/// heard from each node: [`SILO_BYTES_PER_SILO`] per silo of the cluster,
/// so a cluster holds that times silos². 10,000 silos make about 12.8 GB,
/// below the 16 GiB of [`MAX_DETECTOR_STATE_BYTES`] with room for the
/// judges' state (silos × `num_probed_silos`, checked with it). The run
/// budget refuses, below this, what the machine cannot hold.
pub const MAX_SILOS: u32 = 10_000;

/// Bytes a membership silo holds per silo of the cluster (see
/// [`MAX_SILOS`]). Measured: 121 MiB at the peak of a 1,000-silo hour
/// (`fdlab bench --only membership`), about 127 bytes × silos².
pub const SILO_BYTES_PER_SILO: u64 = 128;

impl Scenario {
    /// A membership scenario's topology: a mesh of 2 to [`MAX_SILOS`]
    /// silos, whose probing is Orleans' (`monitors_per_node` does not apply).
    pub(super) fn membership_topology(&self) -> Result<(), ScenarioError> {
        match &self.topology {
            Topology::Dataflow { .. } => Err(ScenarioError::new(
                "topology.kind",
                "a membership scenario needs `kind = \"mesh\"`: its nodes are the silos of one cluster, and a dataflow's stages have no membership",
            )),
            Topology::Mesh {
                nodes,
                monitors_per_node,
            } => {
                check(
                    *nodes >= 2,
                    || "topology.nodes".into(),
                    &format!(
                        "a membership cluster needs at least 2 silos, and this one has {nodes}"
                    ),
                )?;
                check(
                    *nodes <= MAX_SILOS,
                    || "topology.nodes".into(),
                    &format!(
                        "{nodes} silos; a membership scenario takes at most {MAX_SILOS} (every silo's view grows with the cluster)"
                    ),
                )?;
                check(
                    *monitors_per_node == MonitorCount::All,
                    || "topology.monitors_per_node".into(),
                    "does not apply to a membership scenario: each silo probes `membership.orleans.num_probed_silos` peers, chosen as Orleans does",
                )
            }
        }
    }

    /// The `[membership]` table: Orleans' keys, the restart delay, the
    /// table's latency and the judges.
    pub(super) fn validate_membership(&self, m: &MembershipSetup) -> Result<(), ScenarioError> {
        m.orleans
            .validate()
            .map_err(|e| ScenarioError::new(format!("membership.orleans.{}", e.key), e.problem))?;
        m.swim
            .validate()
            .map_err(|e| ScenarioError::new(format!("membership.swim.{}", e.key), e.problem))?;
        if let Some(delay) = m.restart_after {
            check(
                !delay.is_zero(),
                || "membership.restart_after".into(),
                "must be a positive duration (leave it out: a stopped silo stays down)",
            )?;
            bounded(delay, || "membership.restart_after".into())?;
        }
        check(
            m.start_spread < self.duration,
            || "membership.start_spread".into(),
            &format!(
                "{} is not shorter than the run ({}): some silos would never start",
                m.start_spread, self.duration
            ),
        )?;
        m.table_latency.validate("membership.table_latency")?;
        if let Some(within) = m.swim_created_within {
            check(
                within < m.swim.probe_interval,
                || "membership.swim_created_within".into(),
                &format!(
                    "{within} is not shorter than `swim.probe_interval` ({}): members created that far apart are not together, leave it out",
                    m.swim.probe_interval
                ),
            )?;
        }
        let Some(judges) = &m.judges else {
            return Ok(());
        };
        check(
            !judges.is_empty(),
            || "membership.judges".into(),
            "must name at least one judge: `classic` (Orleans' missed-probe count) or the name of a [[detectors]] table",
        )?;
        for (i, judge) in judges.iter().enumerate() {
            let path = || format!("membership.judges[{i}]");
            let known = judge == CLASSIC_JUDGE
                || super::is_swim_run(judge)
                || self.detectors.iter().any(|d| &d.name == judge);
            if !known {
                let names: Vec<String> = std::iter::once(CLASSIC_JUDGE)
                    .chain(self.detectors.iter().map(|d| d.name.as_str()))
                    .map(|n| format!("`{n}`"))
                    .collect();
                return Err(ScenarioError::new(
                    path(),
                    format!(
                        "`{judge}` is neither `{CLASSIC_JUDGE}`, `swim`, `lifeguard` nor the name of a [[detectors]] table; the judges are {}",
                        names.join(", ")
                    ),
                ));
            }
            check(
                !judges[..i].contains(judge),
                path,
                &format!("`{judge}` is listed twice; each judge is one cluster run"),
            )?;
        }
        Ok(())
    }

    /// What one run of a membership scenario holds: every silo's view of the
    /// cluster ([`MAX_SILOS`]) and a judge per monitored peer. Judges are
    /// separate cluster runs, so a run holds one judge's instances: the
    /// largest counts. Monitored peers are `num_probed_silos` per silo (a
    /// silo also watches the silos suspected or stale in its view, for a
    /// while). The pair count of `monitors_per_node` does not apply.
    pub(super) fn membership_limits(&self, m: &MembershipSetup) -> Result<(), ScenarioError> {
        let Topology::Mesh { nodes, .. } = self.topology else {
            return Ok(());
        };
        let silos = u64::from(nodes);
        let probed = u64::from(m.orleans.num_probed_silos).min(silos.saturating_sub(1));
        let judge = self
            .detectors
            .iter()
            .map(|d| d.config.memory_estimate())
            .max()
            .unwrap_or(0);
        let views = silos
            .saturating_mul(silos)
            .saturating_mul(SILO_BYTES_PER_SILO);
        let state = views.saturating_add(silos.saturating_mul(probed).saturating_mul(judge));
        check(
            state <= MAX_DETECTOR_STATE_BYTES,
            || "topology".into(),
            &format!(
                "a cluster of {silos} silos would hold about {} MiB (every silo's view of the cluster, and a judge per monitored peer, sample windows included); at most {} MiB",
                state >> 20,
                MAX_DETECTOR_STATE_BYTES >> 20
            ),
        )
    }

    /// Whether a fault of `kind` belongs in this scenario: the table's faults
    /// only in a membership scenario, a dataflow stage's backpressure never
    /// in one. `path` names the fault's `kind`.
    pub(super) fn fault_fits(
        &self,
        kind: FaultKind,
        path: impl Fn() -> String,
    ) -> Result<(), ScenarioError> {
        check(
            !kind.is_table() || self.is_membership(),
            &path,
            &format!(
                "`{}` is a fault of the membership table, and only a membership scenario has one: add a [membership] table (docs/membership.md)",
                kind.name()
            ),
        )?;
        check(
            !(kind == FaultKind::Backpressure && self.is_membership()),
            &path,
            "`backpressure` slows a dataflow stage, and a membership scenario has no data stream; a slow silo is a `degrade` fault",
        )
    }
}
