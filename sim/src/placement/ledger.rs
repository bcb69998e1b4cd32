//! The placement ledger of one detector: every client's dead marks and key
//! owners under each distribution, driven through the run's changes and
//! requests in time order, counting what SPEC §9 asks.
//!
//! Keys are recomputed for a client when its live set changes (the
//! distribution's `owner` on precomputed hashes); a per-key count of
//! clients by owner tells at once whether the clients disagree on it.
//!
//! The servers' caches: each key is held by a set of servers. The cache
//! starts warm (every key on every server some client places it on); a
//! request to a server that does not hold the key is a miss, after which
//! that server holds it (the client reads the backing store and sets it,
//! as a memcached client does on a miss) and it is the key's freshest
//! copy; a hit on a copy older than the freshest is a stale read (the
//! value may have changed meanwhile: twemproxy #604). A crash empties the
//! crashed server's cache.

use fdlab_protocol::placement::DeadMarks;
use fdlab_protocol::Nanos;

use super::changes::{crashed, Change};
use super::outcome::{PlacementCell, Split};
use super::setup::{LiveChange, Setup};
use super::workload::Requests;
use crate::outcome::Window;

/// An owner: a server index, or [`NO_SERVER`].
type Owner = u8;
/// The request fails: no server.
const NO_SERVER: Owner = Owner::MAX;

/// One distribution's state over every client.
struct Book {
    /// By client.
    marks: Vec<DeadMarks>,
    /// By client, the live set its owners were computed for.
    applied: Vec<Vec<bool>>,
    /// By client then key.
    owners: Vec<Vec<Owner>>,
    /// By key: the servers holding it (bit i: server i).
    held: Vec<u64>,
    /// By key: the servers holding its freshest copy.
    fresh: Vec<u64>,
    /// By key then owner slot (servers, then no server): clients placing
    /// it there.
    counts: Vec<u16>,
    /// By key: distinct owners among the clients.
    distinct: Vec<u8>,
    /// Keys with more than one distinct owner.
    disagreeing: u64,
    /// By key: since when it has had more than one distinct owner.
    split_since: Vec<Nanos>,
    /// By client then server: whether the running mark began as a true
    /// declaration.
    origin: Vec<Vec<Option<bool>>>,
    cell: PlacementCell,
}

/// Runs the ledger of one subject (a detector, or a membership judge) over
/// a run that ends at `end`, whose servers are down (their caches lost)
/// in `stopped`.
pub(super) fn run(
    setup: &Setup,
    subject: &str,
    end: Nanos,
    stopped: &[(u32, Window)],
    changes: &[(Nanos, Change)],
    mut requests: Requests<'_>,
) -> Vec<PlacementCell> {
    let (servers, clients) = (setup.servers.len(), setup.clients as usize);
    let mut down = vec![vec![false; servers]; clients];
    let mut books: Vec<Book> = (0..setup.kinds.len())
        .map(|j| setup.new_book_parts(j))
        .map(|(marks, owners)| {
            let keys = setup.keys();
            let slots = servers + 1;
            // Warm: every key on every server a client places it on.
            let mut held = vec![0u64; keys];
            for client in &owners {
                for (k, &o) in client.iter().enumerate() {
                    if o != NO_SERVER {
                        held[k] |= 1 << o;
                    }
                }
            }
            let mut b = Book {
                applied: vec![vec![true; servers]; clients],
                marks,
                owners,
                fresh: held.clone(),
                held,
                counts: vec![0; keys * slots],
                distinct: vec![0; keys],
                disagreeing: 0,
                split_since: vec![Nanos::ZERO; keys],
                origin: vec![vec![None; servers]; clients],
                cell: PlacementCell::default(),
            };
            for c in 0..clients {
                for k in 0..keys {
                    let o = b.owners[c][k];
                    b.count(k, slots, o, 1, Nanos::ZERO);
                }
            }
            b
        })
        .collect();
    for (j, b) in books.iter_mut().enumerate() {
        b.cell.detector = subject.to_string();
        b.cell.distribution = Some(setup.kinds[j]);
    }
    let mut crashed_now = vec![false; servers];
    let mut now = Nanos::ZERO;
    let mut next = 0;
    loop {
        let mark_due = books
            .iter()
            .flat_map(|b| b.marks.iter().filter_map(DeadMarks::poll_timeout))
            .filter(|&t| t > now)
            .min();
        let change_due = changes.get(next).map(|c| c.0);
        let due = [mark_due, change_due, Some(end)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(end);
        // Requests strictly before the next change see the owners as they are.
        while requests.peek() < due {
            let r = requests.pop();
            for b in &mut books {
                b.request(r.client as usize, r.key as usize, &down[r.client as usize]);
            }
        }
        for b in &mut books {
            b.cell.disagreement += u128::from(b.disagreeing) * u128::from((due - now).as_nanos());
        }
        now = due;
        if now >= end {
            break;
        }
        while let Some(&(at, change)) = changes.get(next) {
            if at > now {
                break;
            }
            next += 1;
            match change {
                Change::Down {
                    client,
                    server,
                    down: d,
                } => down[client as usize][server as usize] = d,
                Change::Crashes => {
                    for (s, is) in crashed_now.iter_mut().enumerate() {
                        let was = *is;
                        *is = crashed(stopped, s as u32, now);
                        if *is && !was {
                            for b in &mut books {
                                b.lose(s);
                            }
                        }
                    }
                }
                Change::Verdict {
                    client,
                    server,
                    failed,
                } => {
                    for b in &mut books {
                        b.marks[client as usize].handle_verdict(now, server as usize, failed);
                    }
                }
            }
        }
        for (j, b) in books.iter_mut().enumerate() {
            for (c, down) in down.iter().enumerate() {
                b.marks[c].handle_timeout(now);
                if b.marks[c].live() != b.applied[c].as_slice() {
                    b.apply(setup, j, c, down, now);
                }
            }
        }
    }
    books
        .into_iter()
        .map(|mut b| {
            // Splits still open at the end last to it.
            for k in 0..b.distinct.len() {
                if b.distinct[k] > 1 {
                    b.split_ends(k, end);
                }
            }
            b.cell
        })
        .collect()
}

impl Book {
    /// Key `key`'s split (more than one owner) ends at `now`; one that
    /// opened and closed within an instant (two clients applying the same
    /// declaration in turn) is none.
    fn split_ends(&mut self, key: usize, now: Nanos) {
        let start = self.split_since[key];
        let length = now - start;
        if length.is_zero() {
            return;
        }
        let longer = self.cell.longest_split.is_none_or(|l| {
            length > l.length || (length == l.length && (start, key as u32) < (l.start, l.key))
        });
        if longer {
            self.cell.longest_split = Some(Split {
                key: key as u32,
                start,
                length,
            });
        }
    }

    fn count(&mut self, key: usize, slots: usize, owner: Owner, delta: i32, now: Nanos) {
        let slot = if owner == NO_SERVER {
            slots - 1
        } else {
            owner as usize
        };
        let n = &mut self.counts[key * slots + slot];
        let before = *n;
        *n = (i32::from(*n) + delta) as u16;
        let was = self.distinct[key];
        match (before, *n) {
            (0, _) => self.distinct[key] += 1,
            (_, 0) => self.distinct[key] -= 1,
            _ => {}
        }
        let is = self.distinct[key];
        if was <= 1 && is > 1 {
            self.disagreeing += 1;
            self.split_since[key] = now;
        } else if was > 1 && is <= 1 {
            self.disagreeing -= 1;
            self.split_ends(key, now);
        }
    }

    fn request(&mut self, client: usize, key: usize, down: &[bool]) {
        self.cell.requests += 1;
        let owner = self.owners[client][key];
        if owner == NO_SERVER || down[owner as usize] {
            self.cell.failed += 1;
            return;
        }
        let bit = 1u64 << owner;
        if self.held[key] & bit == 0 {
            self.cell.misses += 1;
            self.held[key] |= bit;
            self.fresh[key] = bit;
        } else if self.fresh[key] & bit == 0 {
            self.cell.stale += 1;
        }
    }

    /// Server `s` crashed: its cache is gone.
    fn lose(&mut self, s: usize) {
        let keep = !(1u64 << s);
        for (held, fresh) in self.held.iter_mut().zip(&mut self.fresh) {
            *held &= keep;
            *fresh &= keep;
        }
    }

    /// Client `c`'s live set changed: declarations and lifts, then its owners.
    fn apply(&mut self, setup: &Setup, j: usize, c: usize, down: &[bool], now: Nanos) {
        let live = self.marks[c].live().to_vec();
        // The first server whose mark changed takes the keys moved (two
        // marks changing at one instant are rare; the first is named).
        let mut blame: Option<(bool, bool)> = None; // (declaration, true)
        let mut change = LiveChange::default();
        for (s, &now_live) in live.iter().enumerate() {
            match (self.applied[c][s], now_live) {
                (true, false) => {
                    change.died |= 1 << s;
                    let truly = down[s];
                    if truly {
                        self.cell.true_declarations += 1;
                    } else {
                        self.cell.false_declarations += 1;
                    }
                    self.origin[c][s] = Some(truly);
                    blame.get_or_insert((true, truly));
                }
                (false, true) => {
                    change.revived = true;
                    let truly = self.origin[c][s].take().unwrap_or(false);
                    blame.get_or_insert((false, truly));
                }
                _ => {}
            }
        }
        let slots = live.len() + 1;
        let mut owners = std::mem::take(&mut self.owners[c]);
        let mut moved = 0u64;
        setup.update_owners(j, c, &live, change, &mut owners, |k, old, new| {
            moved += 1;
            self.count(k, slots, old, -1, now);
            self.count(k, slots, new, 1, now);
        });
        self.owners[c] = owners;
        self.applied[c] = live;
        match blame {
            Some((true, true)) => self.cell.moved_true += moved,
            Some((true, false)) => self.cell.moved_false += moved,
            Some((false, true)) => self.cell.moved_back_true += moved,
            Some((false, false)) => self.cell.moved_back_false += moved,
            None => {}
        }
    }
}
