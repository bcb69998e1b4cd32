//! What makes one `[[faults]]` table valid: its kind's keys and no
//! others, times within the run, nodes that exist, and a partition that
//! cuts something. The scenario's other checks are in `validate.rs`.

use std::collections::BTreeSet;

use fdlab_protocol::Nanos;

use super::validate::{bounded, bursts_bounded, check, offset_bounded, probability, ScenarioError};
use super::{Fault, FaultKind, PartitionShape};

impl Fault {
    /// Refuses a `halves` or `bridge` side that would cut nothing: an empty
    /// side, one that holds every node (with the bridge, for a bridge), or
    /// a node named twice (a typo for another node, most likely). Such a
    /// partition would run as a no-op, and a scenario that expects it to
    /// be detected would judge detectors against a fault that never was.
    fn sides_cut(&self, at: &str, node_count: usize) -> Result<(), ScenarioError> {
        let nodes = self.nodes.as_deref().unwrap_or_default();
        let refuse = |problem: String| Err(ScenarioError::new(at.to_string(), problem));
        let mut named = BTreeSet::new();
        for n in nodes {
            if !named.insert(n.as_str()) {
                return refuse(format!("names `{n}` twice"));
            }
        }
        let bridge = self.node.as_deref();
        if let Some(b) = bridge.filter(|b| named.contains(b)) {
            return refuse(format!(
                "names `{b}`, the bridge (`node`), which is on neither side"
            ));
        }
        if named.is_empty() {
            return refuse("is empty: name the nodes of one side".into());
        }
        if named.len() + usize::from(bridge.is_some()) >= node_count {
            return refuse(format!(
                "names all {} nodes{}, so the other side is empty and the partition cuts nothing",
                named.len(),
                if bridge.is_some() {
                    " but the bridge"
                } else {
                    ""
                }
            ));
        }
        Ok(())
    }

    pub(super) fn validate(
        &self,
        i: usize,
        run: Nanos,
        known: &dyn Fn(&str) -> bool,
        node_count: usize,
    ) -> Result<(), ScenarioError> {
        let path = |key: &str| format!("faults[{i}].{key}");
        let Some(kind) = self.kind else {
            return Err(ScenarioError::new(path("kind"), "missing"));
        };
        use FaultKind as K;
        // Which optional keys each kind takes.
        let allowed = kind.keys();
        let present: [(&str, bool); 19] = [
            ("node", self.node.is_some()),
            ("nodes", self.nodes.is_some()),
            ("shape", self.shape.is_some()),
            ("direction", self.direction.is_some()),
            ("mode", self.mode.is_some()),
            ("from", self.from.is_some()),
            ("to", self.to.is_some()),
            ("duration", self.duration.is_some()),
            ("extra_latency", self.extra_latency.is_some()),
            ("probability", self.probability.is_some()),
            ("burst", self.burst.is_some()),
            ("gap", self.gap.is_some()),
            ("capacity", self.capacity.is_some()),
            ("slowdown", self.slowdown.is_some()),
            ("processing", self.processing.is_some()),
            ("stopped", self.stopped.is_some()),
            ("every", self.every.is_some()),
            ("offset", self.offset.is_some()),
            ("drift", self.drift.is_some()),
        ];
        for (key, is_set) in present {
            check(
                !is_set || allowed.contains(&key),
                || path(key),
                &format!(
                    "does not apply to a `{}` fault (it takes {})",
                    kind.name(),
                    allowed.join(", ")
                ),
            )?;
        }
        check(
            self.planned.is_none() || kind == K::Pause,
            || path("planned"),
            "only applies to a `pause` fault",
        )?;

        // When.
        match (self.at, self.window) {
            (Some(at), None) => check(at < run, || path("at"), "is not before the end of the run")?,
            (None, Some([from, to])) => {
                check(from <= to, || path("window"), "must be [earliest, latest]")?;
                check(to < run, || path("window"), "ends after the run")?;
            }
            (Some(_), Some(_)) => {
                return Err(ScenarioError::new(
                    path("window"),
                    "give `at` or `window`, not both",
                ))
            }
            (None, None) => {
                return Err(ScenarioError::new(
                    path("at"),
                    "missing; give `at` or `window`",
                ))
            }
        }

        // Who.
        let node_ok = |key: &str, node: &Option<String>| -> Result<(), ScenarioError> {
            match node {
                Some(n) => check(known(n), || path(key), &format!("there is no node `{n}`")),
                None => Ok(()),
            }
        };
        node_ok("node", &self.node)?;
        node_ok("from", &self.from)?;
        node_ok("to", &self.to)?;
        if let Some(nodes) = &self.nodes {
            for n in nodes {
                check(
                    known(n),
                    || path("nodes"),
                    &format!("there is no node `{n}`"),
                )?;
            }
        }
        let needs = |key: &str, ok: bool| check(ok, || path(key), "missing");
        match kind {
            K::Crash | K::Restart | K::Pause | K::Degrade | K::Clock | K::Backpressure => {
                needs("node", self.node.is_some())?
            }
            K::Partition => match self.shape.unwrap_or_default() {
                PartitionShape::Isolate => needs("node", self.node.is_some())?,
                PartitionShape::Halves => {
                    needs("nodes", self.nodes.is_some())?;
                    self.sides_cut(&path("nodes"), node_count)?;
                }
                PartitionShape::Bridge => {
                    needs("nodes", self.nodes.is_some())?;
                    needs("node", self.node.is_some())?;
                    self.sides_cut(&path("nodes"), node_count)?;
                }
            },
            K::SlowLink | K::SlowTable => needs("extra_latency", self.extra_latency.is_some())?,
            K::TableOutage => {}
            K::Loss => {
                needs("probability", self.probability.is_some())?;
                check(
                    self.burst.is_some() == self.gap.is_some(),
                    || path("burst"),
                    "`burst` and `gap` go together",
                )?;
            }
        }
        check(
            self.from.is_some() == self.to.is_some(),
            || path("to"),
            "`from` and `to` go together",
        )?;
        if let Some(p) = self.probability {
            probability(p, || path("probability"))?;
        }
        if let Some(c) = self.capacity {
            check(
                c.is_finite() && c > 0.0 && c <= 1.0,
                || path("capacity"),
                "must be in (0, 1]",
            )?;
        }
        if let Some(d) = self.drift {
            check(
                d.is_finite() && d > -0.5 && d < 0.5,
                || path("drift"),
                "must be between -0.5 and 0.5",
            )?;
        }
        if let Some(processing) = &self.processing {
            check(
                self.slowdown.is_none(),
                || path("processing"),
                "give `slowdown` (a fixed time per event) or `processing` (a distribution), not both",
            )?;
            processing.validate(&path("processing"))?;
        }
        match (self.stopped, self.every) {
            (None, None) => {}
            (Some(stopped), Some(every)) => {
                check(
                    self.slowdown.is_none() && self.processing.is_none(),
                    || path("stopped"),
                    "a duty cycle (stopped of every) is a degrade of its own: not with `slowdown` or `processing`",
                )?;
                check(
                    !stopped.is_zero() && stopped < every,
                    || path("stopped"),
                    &format!("must be positive and shorter than `every` ({every})"),
                )?;
            }
            (Some(_), None) => check(
                false,
                || path("every"),
                "a duty cycle needs `every` (the period of its stops) as well as `stopped`",
            )?,
            (None, Some(_)) => check(
                false,
                || path("stopped"),
                "a duty cycle needs `stopped` (how long each stop lasts) as well as `every`",
            )?,
        }
        if kind == K::Clock {
            check(
                self.offset.is_some() || self.drift.is_some(),
                || path("offset"),
                "a clock fault needs `offset` or `drift`",
            )?;
        }
        for (key, value) in [
            ("duration", self.duration),
            ("extra_latency", self.extra_latency),
            ("slowdown", self.slowdown),
            ("burst", self.burst),
            ("gap", self.gap),
        ] {
            if let Some(v) = value {
                bounded(v, || path(key))?;
            }
        }
        if let Some(offset) = self.offset {
            offset_bounded(offset.0, || path("offset"))?;
        }
        if let (Some(burst), Some(gap)) = (self.burst, self.gap) {
            let start = self.at.or(self.window.map(|w| w[0])).unwrap_or_default();
            let span = self.duration.unwrap_or(run - start.min(run));
            bursts_bounded(span, burst, gap, || path("burst"))?;
        }
        Ok(())
    }
}
