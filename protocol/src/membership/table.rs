//! The membership table as the agents see it: rows, votes, versions, and the
//! operations an agent asks of the table service.
//!
//! Source: dotnet/orleans `MembershipEntry`, `MembershipTableData`,
//! `TableVersion` and `IMembershipTable` (`ReadAll`, `InsertRow`,
//! `UpdateRow`, `UpdateIAmAlive`). As in Orleans, a write succeeds only if
//! the row's ETag and the table version both match what the writer read
//! (optimistic concurrency), and every successful insert or update bumps the
//! table version; an IAmAlive write bumps neither.

use std::sync::{Arc, OnceLock};

use crate::time::Nanos;

/// A silo: a node and its generation (a restarted node is a new generation;
/// Orleans' `SiloAddress` with its epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SiloId {
    pub node: u32,
    pub generation: u32,
}

impl std::fmt::Display for SiloId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "n{}#{}", self.node, self.generation)
    }
}

/// A silo's status. It only moves forward, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SiloStatus {
    Created,
    Joining,
    Active,
    ShuttingDown,
    Dead,
}

impl SiloStatus {
    pub const fn name(self) -> &'static str {
        match self {
            SiloStatus::Created => "created",
            SiloStatus::Joining => "joining",
            SiloStatus::Active => "active",
            SiloStatus::ShuttingDown => "shutting-down",
            SiloStatus::Dead => "dead",
        }
    }
}

/// A suspicion vote: who voted, and when by the voter's own clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vote {
    pub voter: SiloId,
    pub time: Nanos,
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub silo: SiloId,
    pub status: SiloStatus,
    /// The suspicion votes; `num_votes_for_death_declaration` of them
    /// unless clocks are skewed (a vote older than every vote of a full row
    /// is appended) or the row was written Dead (its killer appended).
    pub votes: Vec<Vote>,
    /// The last IAmAlive, by the writer's clock.
    pub i_am_alive: Nanos,
    /// Changes with every successful write of the row.
    pub etag: u64,
}

/// The table at one version: its rows ordered by silo. A view is shared
/// (one `Arc` for every silo that reads or is gossiped the same version)
/// and never changed once built.
#[derive(Clone, Debug, Default)]
pub struct TableView {
    pub version: u64,
    pub rows: Vec<Row>,
    /// What every reader of the view derives from it alike, computed once
    /// for all of them at the first need.
    derived: OnceLock<Derived>,
}

/// A view's reader-independent summaries ([`TableView::derived`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Derived {
    /// The silos a ring may choose (`CanBeEvictedByPeers`: Joining, Active,
    /// ShuttingDown), sorted.
    pub candidates: Vec<SiloId>,
    /// Active silos (`ActiveNodeCount`).
    pub active: usize,
    /// Rows of candidates that hold votes, by index.
    pub voted: Vec<usize>,
    /// `(IAmAlive, row index)` of the candidates, oldest IAmAlive first: the
    /// stale ones at any instant are a prefix.
    pub by_alive: Vec<(Nanos, usize)>,
}

impl PartialEq for TableView {
    fn eq(&self, other: &TableView) -> bool {
        self.version == other.version && self.rows == other.rows
    }
}

impl Eq for TableView {}

impl TableView {
    /// The table at `version` with `rows` (sorted by silo).
    pub fn new(version: u64, rows: Vec<Row>) -> TableView {
        debug_assert!(rows.windows(2).all(|w| w[0].silo < w[1].silo));
        TableView {
            version,
            rows,
            derived: OnceLock::new(),
        }
    }

    pub fn row(&self, silo: SiloId) -> Option<&Row> {
        self.rows
            .binary_search_by_key(&silo, |r| r.silo)
            .ok()
            .map(|i| &self.rows[i])
    }

    /// The view's reader-independent summaries, computed on first use.
    pub fn derived(&self) -> &Derived {
        self.derived.get_or_init(|| {
            let mut d = Derived::default();
            for (i, r) in self.rows.iter().enumerate() {
                if r.status == SiloStatus::Active {
                    d.active += 1;
                }
                if matches!(
                    r.status,
                    SiloStatus::Joining | SiloStatus::Active | SiloStatus::ShuttingDown
                ) {
                    d.candidates.push(r.silo);
                    if !r.votes.is_empty() {
                        d.voted.push(i);
                    }
                    d.by_alive.push((r.i_am_alive, i));
                }
            }
            d.by_alive.sort_unstable();
            d
        })
    }
}

/// Identifies one table operation so its reply can be matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OpId(pub u64);

/// What an agent asks of the table.
#[derive(Clone, Debug, PartialEq)]
pub enum TableOp {
    /// Every row and the version.
    ReadAll,
    /// A new row (status Joining), if the table is still at `version`.
    Insert { row: Row, version: u64 },
    /// Replace the row's status and votes, if its ETag is still `etag` and
    /// the table still at `version`.
    Update {
        silo: SiloId,
        status: SiloStatus,
        votes: Vec<Vote>,
        etag: u64,
        version: u64,
    },
    /// Set the row's IAmAlive time (no version check, no version change).
    IAmAlive { silo: SiloId, time: Nanos },
}

impl TableOp {
    /// Whether the operation changes rows (a write) rather than reading.
    pub fn is_write(&self) -> bool {
        !matches!(self, TableOp::ReadAll)
    }
}

/// An operation for the table service.
#[derive(Clone, Debug, PartialEq)]
pub struct TableRequest {
    pub id: OpId,
    pub op: TableOp,
}

/// The result of an operation.
#[derive(Clone, Debug, PartialEq)]
pub enum TableResult {
    /// A read: the table at its version.
    Read(Arc<TableView>),
    /// A write was applied.
    Written,
    /// The ETag or version did not match: nothing was written.
    Conflict,
    /// The table could not be reached (an outage).
    Unavailable,
}

/// The table service's answer to one [`TableRequest`].
#[derive(Clone, Debug, PartialEq)]
pub struct TableReply {
    pub id: OpId,
    pub result: TableResult,
}
