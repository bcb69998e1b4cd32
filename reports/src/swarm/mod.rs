//! What `fdlab swarm` reports (SPEC §11, docs/swarm.md): the violations of
//! the `[properties]` of a scenario by one run ([`properties`]), and the
//! files and tables of a swarm over many runs ([`output`]).

pub mod output;
pub mod properties;

use fdlab_protocol::Nanos;
use fdlab_sim::outcome::FaultRecord;
use fdlab_sim::scenario::Property;

pub use properties::{check_cluster, check_detectors, check_lock, check_placement};

/// One violation of a property in one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub property: Property,
    /// The detector (a detector scenario or a placement scenario) or the
    /// judge (a membership scenario) that broke it.
    pub subject: String,
    /// The placement distribution, for `placement_split_within`.
    pub distribution: Option<String>,
    /// The monitoring node (the declaring silo, for a declaration).
    pub monitor: Option<String>,
    /// The node (or key) it is about.
    pub target: Option<String>,
    /// When it happened: the instant the bound ran out, or the false
    /// verdict or declaration.
    pub at: Nanos,
    /// The measured figure: detection time, false Failed length, recovery
    /// lag, silo-time destroyed, time to agree, split length; none: it
    /// never happened (missed, never trusted again, never agreed).
    pub observed: Option<Nanos>,
    /// The property's bound (none for `no_false_failed` and
    /// `no_live_declared_dead`).
    pub bound: Option<Nanos>,
    /// The fault of the run's schedule it is about, or follows.
    pub fault: Option<usize>,
}

impl Violation {
    /// Whether `other` violates the same property by the same subject:
    /// what shrinking must keep failing.
    pub fn same_kind(&self, other: &Violation) -> bool {
        self.property == other.property
            && self.subject == other.subject
            && self.distribution == other.distribution
    }

    /// The subject as tables show it: `decay`, or `decay / ketama`.
    pub fn who(&self) -> String {
        match &self.distribution {
            Some(d) => format!("{} / {d}", self.subject),
            None => self.subject.clone(),
        }
    }

    /// One line for people, naming the nodes, times and the fault.
    pub fn describe(&self, faults: &[FaultRecord]) -> String {
        let s = |t: Nanos| format!("{:.3} s", t.as_secs_f64());
        let pair = match (&self.monitor, &self.target) {
            (Some(m), Some(t)) => format!("{m} about {t}"),
            (None, Some(t)) => t.clone(),
            (Some(m), None) => m.clone(),
            (None, None) => String::new(),
        };
        let bound = self.bound.map(s).unwrap_or_default();
        let what = match (self.property, self.observed) {
            (Property::DetectWithin, Some(t)) => {
                format!("{pair}: detected after {} (bound {bound})", s(t))
            }
            (Property::DetectWithin, None) => {
                format!("{pair}: not detected within {bound}")
            }
            (Property::NoFalseFailed, t) => format!(
                "{pair}: false Failed from {} for {}",
                s(self.at),
                t.map(s).unwrap_or_default()
            ),
            (Property::RecoverWithin, Some(t)) => {
                format!(
                    "{pair}: trusted again {} after the fault ended (bound {bound})",
                    s(t)
                )
            }
            (Property::RecoverWithin, None) => {
                format!("{pair}: not trusted again within {bound} of the fault's end")
            }
            (Property::NoLiveDeclaredDead, t) => format!(
                "{pair}: live silo declared Dead at {} (destroying {})",
                s(self.at),
                t.map(s).unwrap_or_default()
            ),
            (Property::ConvergeWithin, Some(t)) => {
                format!("{pair}: views agreed after {} (bound {bound})", s(t))
            }
            (Property::ConvergeWithin, None) => {
                format!("{pair}: views never agreed (bound {bound})")
            }
            (Property::PlacementSplitWithin, t) => format!(
                "{pair} had two owners for {} (bound {bound})",
                t.map(s).unwrap_or_default()
            ),
            (Property::StopUsingDeadWithin, Some(t)) => {
                format!("{pair}: crashed, last used {} after (bound {bound})", s(t))
            }
            (Property::StopUsingDeadWithin, None) => {
                format!("{pair}: crashed, still used at the end of its crash (bound {bound})")
            }
            (Property::NoHealthyEvicted, _) => {
                format!("{pair}: evicted at {} under no fault", s(self.at))
            }
        };
        match self.fault.and_then(|i| faults.get(i)) {
            Some(f) => format!(
                "{what}; fault: {} {} at {} for {}",
                f.kind.name(),
                f.target,
                s(f.window.start),
                s(f.window.end - f.window.start)
            ),
            None => what,
        }
    }
}
