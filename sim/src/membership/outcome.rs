//! What one membership run produced (one judge, one seed): the crashes the
//! cluster had to declare and when it did, every declaration with whether
//! it was false, suspicions, and the work it cost. The cluster metrics of
//! SPEC §8.3 (in `reports`) are computed from this alone.
//!
//! All instants are true (simulation) time.

use fdlab_protocol::membership::{SiloId, SiloStatus, Vote};
use fdlab_protocol::Nanos;

use crate::outcome::{FaultRecord, Window};

/// A live silo that crashed (a `crash` fault): the cluster must declare it.
#[derive(Clone, Debug, PartialEq)]
pub struct CrashOutcome {
    pub silo: SiloId,
    pub at: Nanos,
    /// The first Dead write of the silo's row, if any.
    pub declared: Option<Nanos>,
    /// The first instant at or after the declaration when every live
    /// Active silo's view shows it Dead.
    pub agreed: Option<Nanos>,
    /// Index into [`ClusterOutcome::faults`].
    pub fault: usize,
}

/// One Dead write.
#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    pub at: Nanos,
    pub target: SiloId,
    /// The silo whose write declared it.
    pub by: SiloId,
    /// The silo was not crashed when it was declared (a live silo: paused,
    /// slow, partitioned or skewed); an older generation declared by its
    /// own restarted node is not false.
    pub false_positive: bool,
    /// The target's node was paused or starved (a `pause` or `degrade`
    /// fault) when it was declared: a false declaration of a healthy
    /// member is one where this is false.
    pub impaired: bool,
    /// Node-time a false declaration destroyed: from the declaration until
    /// the node is Active again as a new generation (Orleans) or a member
    /// takes it back (SWIM), or the end of the run; 0 s when that happened
    /// at the instant of the declaration.
    pub destroyed: Nanos,
    /// Of a false declaration's time in force (`destroyed`), how long the
    /// target could not answer: paused (a `pause`, a duty cycle's stop), or
    /// busy with one event for at least a second (a starved member's heavy
    /// tail). No protocol hears from a member then.
    pub unresponsive: Nanos,
    /// When every live Active silo's view showed it Dead.
    pub agreed: Option<Nanos>,
}

/// One suspicion: a monitor's judge said the target failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Suspicion {
    pub start: Nanos,
    /// The end (the target answered again, or left the monitor's set);
    /// none: it lasted to the monitor's stop or the end of the run.
    pub end: Option<Nanos>,
    pub monitor: SiloId,
    pub target: SiloId,
    /// The target was declared Dead after it started and before the same
    /// monitor suspected it again (the suspicion's vote may land after the
    /// suspicion ended).
    pub declared: bool,
}

/// Counts of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterCounts {
    /// Votes written (a declaring write counts as one).
    pub votes: u64,
    /// Votes withheld by the connection-liveness check.
    pub votes_withheld: u64,
    pub table_reads: u64,
    /// Writes applied (inserts, updates, IAmAlive).
    pub table_writes: u64,
    /// Writes refused for a stale ETag or version.
    pub table_conflicts: u64,
    /// Operations that found the table unreachable.
    pub table_unavailable: u64,
    /// Messages between silos, and their bytes.
    pub messages: u64,
    pub bytes: u64,
    /// Silos that read themselves Dead and stopped.
    pub self_terminations: u64,
    /// Silos that gave up joining.
    pub join_give_ups: u64,
    /// Silos started as a new generation after a stop.
    pub restarts: u64,
    /// Instants at which one node had two generations Active in the table
    /// (must stay zero).
    pub two_active_generations: u64,
    /// False-positive events counted as the Lifeguard paper counts them
    /// (Dadgar et al. 2018, §V): each member that moved a live member to
    /// Dead (by its own timeout or by gossip; an Orleans silo whose view
    /// did), by whether that *observer* was healthy or itself paused or
    /// starved at the time.
    pub observer_false_healthy: u64,
    pub observer_false_starved: u64,
    /// SWIM: times a member answered a suspicion or a death of itself with
    /// a higher incarnation (memberlist's `refute`).
    pub refutations: u64,
}

/// Everything a membership run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterOutcome {
    pub scenario: String,
    pub seed: u64,
    pub judge: String,
    /// The judge as tables and charts name it: an Orleans judge with the
    /// version its silos follow (`classic (10.2)`), a SWIM run by its name.
    pub label: String,
    pub duration: Nanos,
    pub nodes: Vec<String>,
    pub faults: Vec<FaultRecord>,
    pub crashes: Vec<CrashOutcome>,
    /// In time order.
    pub declarations: Vec<Declaration>,
    /// In start order.
    pub suspicions: Vec<Suspicion>,
    pub counts: ClusterCounts,
    /// Sum over nodes of the time a silo process was up.
    pub node_time: Nanos,
    /// When a node's process was down after it first started (a crash, a
    /// silo that stopped itself or gave up joining), until it started
    /// again or the run ended; by start.
    pub stopped: Vec<(u32, Window)>,
    /// A placement scenario's clients' views of its servers, in time
    /// order (empty without `[placement]`).
    pub views: Vec<ViewChange>,
    /// Simulation events processed.
    pub events: u64,
}

/// A client's membership view starts or stops holding a server Dead (SPEC
/// §9: clients that react to a membership view). Nodes are numbered as in
/// the topology: servers first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewChange {
    pub at: Nanos,
    pub client: u32,
    pub server: u32,
    pub dead: bool,
}

/// What a node's process did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeChange {
    /// A silo (a new generation) started and began joining.
    Started,
    /// It wrote itself Active.
    Joined,
    /// It crashed (a fault).
    Crashed,
    /// It read itself Dead and stopped.
    Terminated,
    /// It found a silo holding enough fresh votes yet not Dead and stopped
    /// itself (Orleans' "Found a bug! Will stop.").
    KilledItself,
    /// It gave up joining and stopped.
    GaveUp,
    Paused,
    Resumed,
}

impl NodeChange {
    pub const fn name(self) -> &'static str {
        match self {
            NodeChange::Started => "started",
            NodeChange::Joined => "joined",
            NodeChange::Crashed => "crashed",
            NodeChange::Terminated => "terminated",
            NodeChange::KilledItself => "killed-itself",
            NodeChange::GaveUp => "gave-up",
            NodeChange::Paused => "paused",
            NodeChange::Resumed => "resumed",
        }
    }
}

/// One line of a membership replay's log (`fdlab replay` of a membership
/// scenario writes them to `trace.csv` and draws them on the timeline).
#[derive(Clone, Debug, PartialEq)]
pub enum ClusterLogRecord {
    /// A row of the table after a write that changed its status or votes.
    Row {
        at: Nanos,
        version: u64,
        silo: SiloId,
        status: SiloStatus,
        votes: Vec<Vote>,
        /// The silo whose write it was.
        by: SiloId,
    },
    /// A silo's view moved forward: how many silos it sees Active and Dead.
    View {
        at: Nanos,
        silo: SiloId,
        version: u64,
        active: u32,
        dead: u32,
    },
    Node {
        at: Nanos,
        silo: SiloId,
        change: NodeChange,
    },
    Suspicion {
        at: Nanos,
        monitor: SiloId,
        target: SiloId,
        started: bool,
    },
    /// A vote withheld by the connection-liveness check.
    Withheld {
        at: Nanos,
        monitor: SiloId,
        target: SiloId,
    },
}

impl ClusterLogRecord {
    pub fn at(&self) -> Nanos {
        match self {
            ClusterLogRecord::Row { at, .. }
            | ClusterLogRecord::View { at, .. }
            | ClusterLogRecord::Node { at, .. }
            | ClusterLogRecord::Suspicion { at, .. }
            | ClusterLogRecord::Withheld { at, .. } => *at,
        }
    }
}
