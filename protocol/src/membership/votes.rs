//! Counting and casting suspicion votes (Orleans'
//! `MembershipTableManager.InnerTryToSuspectOrKill` and
//! `MembershipEntry.GetFreshVotes`).
//!
//! A vote is fresh while the *reader's* clock says it is younger than
//! `death_vote_expiration`: votes carry the voter's clock, so a silo whose
//! clock is ahead sees other silos' votes as old, and a vote written by a
//! silo whose clock is behind looks old to everyone (dotnet/orleans #7505).
//! A vote from the reader's future counts as fresh, as in Orleans.

use crate::time::Nanos;

use super::table::{Row, SiloId, SiloStatus, TableView, Vote};

/// Whether a time written by another silo's clock is older than `age` by
/// the reader's clock `now`.
pub fn older_than(written: Nanos, now: Nanos, age: Nanos) -> bool {
    now > written && now - written >= age
}

/// The fresh votes of `row` at the reader's `now`.
pub fn fresh_votes(row: &Row, now: Nanos, expiration: Nanos) -> impl Iterator<Item = &Vote> {
    row.votes
        .iter()
        .filter(move |v| !older_than(v.time, now, expiration))
}

/// Whether `row`'s silo is stale: its IAmAlive older than `stale_after`.
pub fn is_stale(row: &Row, now: Nanos, stale_after: Nanos) -> bool {
    older_than(row.i_am_alive, now, stale_after)
}

/// Votes that declare a silo Dead in `view`: `min(votes, (active non-stale
/// silos + 1) / 2)`, at least one.
pub fn quorum(view: &TableView, now: Nanos, votes: u32, stale_after: Nanos) -> usize {
    let active = view
        .rows
        .iter()
        .filter(|r| r.status == SiloStatus::Active && !is_stale(r, now, stale_after))
        .count();
    (votes as usize).min(active.div_ceil(2)).max(1)
}

/// The votes of `row` after `voters` vote at `now`: expired votes dropped,
/// each voter's earlier vote replaced, and at most `keep` kept (the
/// newest by position: a new vote replaces the oldest).
pub fn cast(row: &Row, voters: &[SiloId], now: Nanos, expiration: Nanos, keep: u32) -> Vec<Vote> {
    let mut votes: Vec<Vote> = fresh_votes(row, now, expiration)
        .filter(|v| !voters.contains(&v.voter))
        .copied()
        .collect();
    for &voter in voters {
        votes.push(Vote { voter, time: now });
    }
    let keep = keep as usize;
    if votes.len() > keep {
        votes.drain(..votes.len() - keep);
    }
    votes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn silo(node: u32) -> SiloId {
        SiloId {
            node,
            generation: 0,
        }
    }

    fn row(votes: &[(u32, u64)]) -> Row {
        Row {
            silo: silo(9),
            status: SiloStatus::Active,
            votes: votes
                .iter()
                .map(|&(v, t)| Vote {
                    voter: silo(v),
                    time: Nanos::from_secs(t),
                })
                .collect(),
            i_am_alive: Nanos::ZERO,
            etag: 0,
        }
    }

    const TWO_MIN: Nanos = Nanos::from_secs(120);

    #[test]
    fn freshness_is_by_the_readers_clock() {
        let r = row(&[(1, 100), (2, 200), (3, 400)]);
        let at = |now| fresh_votes(&r, Nanos::from_secs(now), TWO_MIN).count();
        assert_eq!(at(210), 3); // 400 is in the reader's future: fresh
        assert_eq!(at(310), 2);
        assert_eq!(at(320), 1); // exactly 2 minutes old: expired
        assert_eq!(at(600), 0);
    }

    #[test]
    fn a_vote_replaces_the_voters_own_then_the_oldest() {
        let r = row(&[(1, 100), (2, 110)]);
        let v = cast(&r, &[silo(1)], Nanos::from_secs(120), TWO_MIN, 2);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].voter, silo(2));
        assert_eq!(
            v[1],
            Vote {
                voter: silo(1),
                time: Nanos::from_secs(120)
            }
        );
        let v = cast(&r, &[silo(3)], Nanos::from_secs(120), TWO_MIN, 2);
        assert_eq!(v.iter().map(|v| v.voter.node).collect::<Vec<_>>(), [2, 3]);
        // Expired votes go first.
        let v = cast(&r, &[silo(3), silo(4)], Nanos::from_secs(225), TWO_MIN, 3);
        assert_eq!(
            v.iter().map(|v| v.voter.node).collect::<Vec<_>>(),
            [2, 3, 4]
        );
    }

    #[test]
    fn quorum_is_capped_by_half_the_live_cluster() {
        let mut view = TableView::default();
        for n in 0..5 {
            let mut r = row(&[]);
            r.silo = silo(n);
            r.i_am_alive = Nanos::from_secs(100);
            view.rows.push(r);
        }
        let now = Nanos::from_secs(120);
        let stale = Nanos::from_secs(90);
        assert_eq!(quorum(&view, now, 2, stale), 2);
        view.rows.truncate(2);
        assert_eq!(quorum(&view, now, 2, stale), 1);
        // Everyone stale by my clock: one vote suffices (the clock-skew trap).
        assert_eq!(quorum(&view, Nanos::from_secs(300), 2, stale), 1);
    }
}
