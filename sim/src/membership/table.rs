//! The membership table as a simulated service (SPEC §8.1): rows, a table
//! version, optimistic concurrency, operation latency and its own faults.
//!
//! Source of the semantics: dotnet/orleans `IMembershipTable` and its
//! Azure/SQL implementations: `InsertRow` and `UpdateRow` succeed only if the
//! table version (and, for an update, the row's ETag) is still what the
//! writer read, and bump the version; `UpdateIAmAlive` changes the row's
//! IAmAlive and neither. An operation is applied at the instant it reaches
//! the table, one at a time, so two silos that read the same version and
//! both write really conflict: the second is refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use fdlab_protocol::membership::{
    Row, SiloId, SiloStatus, TableOp, TableRequest, TableResult, TableView,
};
use fdlab_protocol::Nanos;
use rand_chacha::ChaCha8Rng;

use crate::dist::Sampler;
use crate::faults::TableFault;

/// A write the table applied that the ground truth must see.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Applied {
    /// The row after the write.
    pub(crate) row: Row,
    /// Its status before (none: the row is new).
    pub(crate) before: Option<SiloStatus>,
    pub(crate) version: u64,
    /// Another generation of the same node is Active too.
    pub(crate) two_active: bool,
}

#[derive(Debug)]
pub(crate) struct TableService {
    rows: BTreeMap<SiloId, Row>,
    version: u64,
    /// The view of the current rows, shared by every read until a write.
    snapshot: Option<Arc<TableView>>,
    faults: Vec<TableFault>,
    latency: Sampler,
    rng: ChaCha8Rng,
    pub(crate) reads: u64,
    pub(crate) writes: u64,
    pub(crate) conflicts: u64,
    pub(crate) unavailable: u64,
}

impl TableService {
    pub(crate) fn new(faults: Vec<TableFault>, latency: Sampler, rng: ChaCha8Rng) -> TableService {
        TableService {
            rows: BTreeMap::new(),
            version: 0,
            snapshot: None,
            faults,
            latency,
            rng,
            reads: 0,
            writes: 0,
            conflicts: 0,
            unavailable: 0,
        }
    }

    /// One way of an operation started at `at`: a latency draw, plus the
    /// extra latency of a slow-table fault active then.
    pub(crate) fn one_way(&mut self, at: Nanos) -> Nanos {
        let extra = self
            .faults
            .iter()
            .filter(|f| f.active(at))
            .filter_map(|f| f.extra_latency)
            .max()
            .unwrap_or_default();
        self.latency.sample(&mut self.rng) + extra
    }

    fn down(&self, at: Nanos) -> bool {
        self.faults
            .iter()
            .any(|f| f.extra_latency.is_none() && f.active(at))
    }

    /// Applies `request`, arrived at `at`.
    pub(crate) fn apply(
        &mut self,
        at: Nanos,
        request: &TableRequest,
    ) -> (TableResult, Option<Applied>) {
        if self.down(at) {
            self.unavailable += 1;
            return (TableResult::Unavailable, None);
        }
        match &request.op {
            TableOp::ReadAll => {
                self.reads += 1;
                (TableResult::Read(self.view()), None)
            }
            TableOp::Insert { row, version } => {
                if *version != self.version || self.rows.contains_key(&row.silo) {
                    self.conflicts += 1;
                    return (TableResult::Conflict, None);
                }
                let mut row = row.clone();
                row.etag = 0;
                self.rows.insert(row.silo, row.clone());
                (TableResult::Written, Some(self.written(row, None)))
            }
            TableOp::Update {
                silo,
                status,
                votes,
                etag,
                version,
            } => {
                let fits = self
                    .rows
                    .get(silo)
                    .is_some_and(|r| r.etag == *etag && *version == self.version);
                let Some(row) = self.rows.get_mut(silo).filter(|_| fits) else {
                    self.conflicts += 1;
                    return (TableResult::Conflict, None);
                };
                let before = row.status;
                debug_assert!(*status >= before, "a status moves forward only");
                row.status = (*status).max(before);
                row.votes.clone_from(votes);
                row.etag += 1;
                let row = row.clone();
                (TableResult::Written, Some(self.written(row, Some(before))))
            }
            TableOp::IAmAlive { silo, time } => match self.rows.get_mut(silo) {
                Some(row) => {
                    row.i_am_alive = *time;
                    self.writes += 1;
                    self.snapshot = None;
                    (TableResult::Written, None)
                }
                None => {
                    self.conflicts += 1;
                    (TableResult::Conflict, None)
                }
            },
        }
    }

    fn written(&mut self, row: Row, before: Option<SiloStatus>) -> Applied {
        self.version += 1;
        self.writes += 1;
        self.snapshot = None;
        let two_active = row.status == SiloStatus::Active
            && self.rows.values().any(|r| {
                r.silo.node == row.silo.node && r.silo != row.silo && r.status == SiloStatus::Active
            });
        Applied {
            row,
            before,
            version: self.version,
            two_active,
        }
    }

    /// The current rows as one shared view.
    fn view(&mut self) -> Arc<TableView> {
        let version = self.version;
        let rows = &self.rows;
        Arc::clone(self.snapshot.get_or_insert_with(|| {
            Arc::new(TableView::new(version, rows.values().cloned().collect()))
        }))
    }

    #[cfg(test)]
    pub(crate) fn version(&self) -> u64 {
        self.version
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::membership::OpId;
    use rand::SeedableRng;

    fn service() -> TableService {
        TableService::new(
            Vec::new(),
            Sampler::Constant(Nanos::from_millis(1)),
            ChaCha8Rng::seed_from_u64(1),
        )
    }

    fn silo(node: u32) -> SiloId {
        SiloId {
            node,
            generation: 0,
        }
    }

    fn insert(node: u32, version: u64) -> TableRequest {
        TableRequest {
            id: OpId(0),
            op: TableOp::Insert {
                row: Row {
                    silo: silo(node),
                    status: SiloStatus::Joining,
                    votes: Vec::new(),
                    i_am_alive: Nanos::ZERO,
                    etag: 0,
                },
                version,
            },
        }
    }

    #[test]
    fn concurrent_writers_conflict() {
        let mut t = service();
        // Both read version 0; the first insert wins, the second conflicts.
        assert_eq!(t.apply(Nanos::ZERO, &insert(1, 0)).0, TableResult::Written);
        assert_eq!(t.apply(Nanos::ZERO, &insert(2, 0)).0, TableResult::Conflict);
        assert_eq!(t.apply(Nanos::ZERO, &insert(2, 1)).0, TableResult::Written);
        assert_eq!(t.version(), 2);
        // An update with the right version but a stale ETag conflicts.
        let update = |etag, version| TableRequest {
            id: OpId(1),
            op: TableOp::Update {
                silo: silo(1),
                status: SiloStatus::Active,
                votes: Vec::new(),
                etag,
                version,
            },
        };
        assert_eq!(t.apply(Nanos::ZERO, &update(0, 2)).0, TableResult::Written);
        assert_eq!(t.apply(Nanos::ZERO, &update(0, 3)).0, TableResult::Conflict);
        assert_eq!(t.apply(Nanos::ZERO, &update(1, 2)).0, TableResult::Conflict);
        assert_eq!(t.conflicts, 3);
        // IAmAlive changes neither version nor ETag.
        let alive = TableRequest {
            id: OpId(2),
            op: TableOp::IAmAlive {
                silo: silo(1),
                time: Nanos::from_secs(9),
            },
        };
        assert_eq!(t.apply(Nanos::ZERO, &alive).0, TableResult::Written);
        let TableResult::Read(view) = t
            .apply(
                Nanos::ZERO,
                &TableRequest {
                    id: OpId(3),
                    op: TableOp::ReadAll,
                },
            )
            .0
        else {
            panic!("a read");
        };
        assert_eq!(view.version, 3);
        assert_eq!(view.row(silo(1)).unwrap().etag, 1);
        assert_eq!(view.row(silo(1)).unwrap().i_am_alive, Nanos::from_secs(9));
    }

    #[test]
    fn an_outage_refuses_everything() {
        let window = crate::outcome::Window {
            start: Nanos::from_secs(10),
            end: Nanos::from_secs(40),
        };
        let mut t = TableService::new(
            vec![TableFault {
                window,
                extra_latency: None,
                record: 0,
            }],
            Sampler::Constant(Nanos::from_millis(1)),
            ChaCha8Rng::seed_from_u64(1),
        );
        assert_eq!(
            t.apply(Nanos::from_secs(10), &insert(1, 0)).0,
            TableResult::Unavailable
        );
        assert_eq!(
            t.apply(Nanos::from_secs(40), &insert(1, 0)).0,
            TableResult::Written
        );
        assert_eq!(t.unavailable, 1);
    }
}
