//! Counting and casting suspicion votes: `MembershipEntry.GetFreshVotes`,
//! `AddOrUpdateSuspector` and `AddSuspector`
//! (`src/Orleans.Core/SystemTargetInterfaces/IMembershipTable.cs`, lines
//! 349-386 and 422-458 at v10.2.2; the same code in main), the quorum of
//! `MembershipTableManager.InnerTryToSuspectOrKill` (10.2.2 lines 890-893)
//! and `HasMissedIAmAlives` (`MembershipTableEntryExtensions.cs:8-9`).
//!
//! A vote carries its voter's clock. Since dotnet/orleans #7519, a vote's
//! age is measured from the *latest* of the reader's clock and every vote
//! of the row, so a reader whose clock is behind does not count a vote as
//! fresh that the others see as old, and one whose clock is ahead does not
//! expire the votes just written (10.2 and main alike).

use crate::time::Nanos;

use super::table::{Row, SiloId, SiloStatus, TableView, Vote};

/// The end of the recency window of `votes` at the reader's `now`:
/// `max(now, every vote's time)` (`GetFreshVotes`, 10.2.2 line 431).
fn window_end(votes: &[Vote], now: Nanos) -> Nanos {
    votes.iter().map(|v| v.time).fold(now, Nanos::max)
}

/// The fresh votes of `votes` at the reader's `now`: younger than
/// `expiration` at the window's end (line 437, `end - time < expiration`).
pub fn fresh(votes: &[Vote], now: Nanos, expiration: Nanos) -> impl Iterator<Item = &Vote> {
    let end = window_end(votes, now);
    votes.iter().filter(move |v| end - v.time < expiration)
}

/// The fresh votes of `row` at the reader's `now`.
pub fn fresh_votes(row: &Row, now: Nanos, expiration: Nanos) -> impl Iterator<Item = &Vote> {
    fresh(&row.votes, now, expiration)
}

/// Whether `row`'s silo is stale at `now`: its IAmAlive older than
/// `stale_after` (`HasMissedIAmAlives`: `now - IAmAliveTime > allowed`).
pub fn is_stale(row: &Row, now: Nanos, stale_after: Nanos) -> bool {
    now > row.i_am_alive && now - row.i_am_alive > stale_after
}

/// Votes that declare a silo Dead in `view` at `now`:
/// `min(votes, (active non-stale silos + 1) / 2)` (10.2.2 lines 890-893).
/// With no Active silo left by the reader's clock it is 0, and the
/// reader's vote alone declares, as in Orleans.
pub fn quorum(view: &TableView, now: Nanos, votes: u32, stale_after: Nanos) -> usize {
    let active = view
        .rows
        .iter()
        .filter(|r| r.status == SiloStatus::Active && !is_stale(r, now, stale_after))
        .count();
    (votes as usize).min(active.div_ceil(2))
}

/// `AddOrUpdateSuspector(voter, now, max_votes)` (10.2.2 lines 349-383):
/// the voter's earlier vote is replaced; else, when the list holds
/// `max_votes`, the oldest vote is overwritten if it is not newer than
/// this one; else the vote is appended (so a voter whose clock is behind
/// every vote of a full list makes it longer).
pub fn add_or_update(votes: &mut Vec<Vote>, voter: SiloId, now: Nanos, max_votes: u32) {
    let vote = Vote { voter, time: now };
    if let Some(own) = votes.iter_mut().find(|v| v.voter == voter) {
        *own = vote;
        return;
    }
    if votes.len() >= max_votes as usize {
        let oldest = votes.iter().map(|v| v.time).min().expect("a full list");
        if now >= oldest {
            let at = votes.iter().position(|v| v.time == oldest).expect("found");
            votes[at] = vote;
            return;
        }
    }
    votes.push(vote);
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

    fn votes(list: &[(u32, u64)]) -> Vec<Vote> {
        list.iter()
            .map(|&(v, t)| Vote {
                voter: silo(v),
                time: Nanos::from_secs(t),
            })
            .collect()
    }

    const TWO_MIN: Nanos = Nanos::from_secs(120);

    /// IMembershipTable.cs:422-458 (#7519): the window ends at the newest of
    /// the reader's clock and the votes.
    #[test]
    fn freshness_runs_from_the_newest_vote_or_the_readers_clock() {
        let v = votes(&[(1, 100), (2, 200), (3, 400)]);
        let at = |now| fresh(&v, Nanos::from_secs(now), TWO_MIN).count();
        // A reader whose clock is behind (210): the window ends at 400.
        assert_eq!(at(210), 1);
        assert_eq!(at(400), 1);
        // Exactly two minutes before the end: expired.
        let w = votes(&[(1, 280), (2, 400)]);
        assert_eq!(fresh(&w, Nanos::from_secs(300), TWO_MIN).count(), 1);
        assert_eq!(fresh(&w, Nanos::from_secs(0), TWO_MIN).count(), 1);
        let y = votes(&[(1, 290), (2, 400)]);
        assert_eq!(fresh(&y, Nanos::from_secs(0), TWO_MIN).count(), 2);
        // A reader ahead of everyone (600) sees them all as old.
        assert_eq!(at(600), 0);
    }

    /// IMembershipTable.cs:349-383.
    #[test]
    fn a_vote_replaces_the_voters_own_then_the_oldest_if_not_newer() {
        let mut v = votes(&[(1, 100), (2, 110)]);
        add_or_update(&mut v, silo(1), Nanos::from_secs(120), 2);
        assert_eq!(v, votes(&[(1, 120), (2, 110)]));
        add_or_update(&mut v, silo(3), Nanos::from_secs(130), 2);
        assert_eq!(v, votes(&[(1, 120), (3, 130)]));
        // A voter whose clock is behind the oldest vote appends.
        add_or_update(&mut v, silo(4), Nanos::from_secs(50), 2);
        assert_eq!(v, votes(&[(1, 120), (3, 130), (4, 50)]));
        // Not full: appended.
        let mut w = votes(&[(1, 100)]);
        add_or_update(&mut w, silo(2), Nanos::from_secs(90), 2);
        assert_eq!(w, votes(&[(1, 100), (2, 90)]));
    }

    #[test]
    fn quorum_is_capped_by_half_the_live_cluster() {
        let row = |n: u32| Row {
            silo: silo(n),
            status: SiloStatus::Active,
            votes: Vec::new(),
            i_am_alive: Nanos::from_secs(100),
            etag: 0,
        };
        let mut view = TableView::new(1, (0..5).map(row).collect());
        let now = Nanos::from_secs(120);
        let stale = Nanos::from_secs(90);
        assert_eq!(quorum(&view, now, 2, stale), 2);
        view.rows.truncate(2);
        assert_eq!(quorum(&view, now, 2, stale), 1);
        // Everyone stale by my clock: no vote needed beyond my own.
        assert_eq!(quorum(&view, Nanos::from_secs(300), 2, stale), 0);
        // Stale means strictly older than the allowed period.
        assert!(!is_stale(&view.rows[0], Nanos::from_secs(190), stale));
        assert!(is_stale(&view.rows[0], Nanos::from_secs(191), stale));
    }
}
