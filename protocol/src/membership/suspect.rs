//! One suspect-or-kill request against the table just read:
//! `MembershipTableManager.InnerTryToSuspectOrKill` and `DeclareDead`
//! (`src/Orleans.Runtime/MembershipService/MembershipTableManager.cs`
//! lines 826-949 at v10.2.2; the same rules in main, lines 845-961).
//!
//! In order (10.2.2 lines): its own row Dead, it stops (840-846, handled
//! where every read is taken, [`super::OrleansAgent`]); the target's row
//! missing or already Dead, nothing to do (848-863); the target already
//! holding `num_votes_for_death_declaration` fresh votes yet not Dead, the
//! *voter* stops itself, "Found a bug! Will stop." (866-874: with skewed
//! clocks this is how a healthy silo dies, dotnet/orleans #7505); else its
//! vote and the intermediary's (876-884) and, if the fresh votes reach
//! [`super::votes::quorum`], the row written Dead with the voter appended
//! once more as its killer (886-898, `DeclareDead` 921-949), else the
//! votes written (900-903). Both writes are a compare-and-swap on the row's
//! ETag and the table version.

use std::sync::Arc;

use crate::time::Nanos;

use super::agent::OrleansAgent;
use super::lanes::{update, LaneId, Step, Suspicion};
use super::messages::AgentEvent;
use super::table::{SiloStatus, Vote};
use super::votes::{add_or_update, fresh, quorum};

impl OrleansAgent {
    /// `InnerTryToSuspectOrKill` from the view just read at `now`.
    pub(super) fn suspect_step(&mut self, now: Nanos, s: Suspicion) {
        let view = Arc::clone(&self.view);
        let Some(row) = view.row(s.target) else {
            return;
        };
        if row.status == SiloStatus::Dead {
            return;
        }
        let c = &self.config;
        let (expiration, needed_votes) =
            (c.death_vote_expiration, c.num_votes_for_death_declaration);
        if fresh(&row.votes, now, expiration).count() >= needed_votes as usize {
            self.stop(AgentEvent::KilledItself { target: s.target });
            return;
        }
        let mut votes = row.votes.clone();
        add_or_update(&mut votes, self.me, now, needed_votes);
        if let Some(via) = s.via {
            add_or_update(&mut votes, via, now, needed_votes);
        }
        let fresh_votes = fresh(&votes, now, expiration).count();
        let needed = quorum(&view, now, needed_votes, c.stale_after());
        let declared = fresh_votes >= needed;
        let status = if declared {
            // `DeclareDead`: the killer is added once more (AddSuspector).
            votes.push(Vote {
                voter: self.me,
                time: now,
            });
            SiloStatus::Dead
        } else {
            row.status
        };
        let op = update(row, status, votes, view.version);
        self.issue(LaneId::Suspect, op, Step::SuspectWrite(s, declared));
    }
}
