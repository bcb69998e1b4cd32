//! The event queue: a timing wheel of coarse slots with a two-level bitmap,
//! an overflow heap for the far future, and a sorted vector for the current
//! slot; ordered exactly by `(time, class, insertion sequence)`, where the
//! class puts items pushed with [`EventQueue::push_last`] after the others of
//! the same instant.
//!
//! Simulated time never goes backwards and almost every event is due within a
//! few seconds (heartbeats, timeouts, frames), so a hashed timing wheel
//! (Varghese & Lauck, "Hashed and hierarchical timing wheels", SOSP 1987)
//! makes a push one append and a pop one bitmap search per slot: the wheel
//! holds [`WHEEL_SLOTS`] slots of 2^[`SLOT_BITS`] ns (about 4 ms each, 17 s
//! in all). Events beyond the wheel wait in a binary heap and move onto the
//! wheel as it turns. When a slot comes due its items are sorted by (time,
//! sequence) into a short vector, so the order is exact at nanosecond
//! resolution.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Bits of time below the slot: items within 2^22 ns (~4 ms) share a slot.
/// Measured (instruction counts) on the 6-stage pipeline, about ten events
/// to a slot: 1 ms slots spent more turning the wheel than sorting, 8 ms and
/// 16 ms slots more sorting and inserting into the current slot; a
/// 200-node mesh gained from 4 ms as well.
pub const SLOT_BITS: u32 = 22;
/// Slots on the wheel (a power of two): 4096 slots of ~4 ms, 17 s ahead.
pub const WHEEL_SLOTS: usize = 1 << 12;
const WORD_BITS: usize = u64::BITS as usize;
const WORDS: usize = WHEEL_SLOTS / WORD_BITS;
/// The top bit of a sequence number: the class of [`EventQueue::push_last`].
const LAST_CLASS: u64 = 1 << 63;

#[derive(Clone, Copy)]
struct Entry<T> {
    time: u64,
    seq: u64,
    item: T,
}

/// A cell of the wheel's pool: an item and the next cell of its list (a
/// free cell keeps its last item, which is never read again).
struct Cell<T> {
    entry: Entry<T>,
    next: u32,
}

/// The end of a list of cells.
const NIL: u32 = u32::MAX;

impl<T> Entry<T> {
    fn slot(&self) -> u64 {
        self.time >> SLOT_BITS
    }

    /// `(time, sequence)` as one number: one branch-free comparison.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.seq)
    }
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// A monotone queue of `T` by time (`u64`, e.g. nanoseconds).
pub struct EventQueue<T> {
    /// The current slot (`time >> SLOT_BITS`); never decreases.
    slot: u64,
    seq: u64,
    len: usize,
    /// Items of the current slot, sorted by (time, class, sequence); those
    /// before `head` are popped already. A push into the current slot is
    /// nearly always its latest item, so it lands at the end.
    now: Vec<Entry<T>>,
    head: usize,
    /// Items of the slots after the current one, up to `WHEEL_SLOTS - 1`
    /// ahead: `heads[slot % WHEEL_SLOTS]` starts a list through `cells`
    /// (unordered within a slot). One pool of cells for every slot keeps a
    /// sparse wheel small and free of per-slot allocations.
    heads: Box<[u32; WHEEL_SLOTS]>,
    cells: Vec<Cell<T>>,
    /// First free cell, or [`NIL`].
    free: u32,
    /// Bit `i % 64` of word `i / 64` set when `wheel[i]` is not empty.
    occupied: [u64; WORDS],
    /// Bit `w` set when `occupied[w]` is not zero.
    summary: u64,
    /// Items beyond the wheel.
    far: BinaryHeap<Reverse<Entry<T>>>,
}

impl<T: Copy> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue::new()
    }
}

/// Items are `Copy` (small events): a pop copies its item out of the slot's
/// vector and moves the head on, with no shifting.
impl<T: Copy> EventQueue<T> {
    pub fn new() -> EventQueue<T> {
        EventQueue {
            slot: 0,
            seq: 0,
            len: 0,
            now: Vec::new(),
            head: 0,
            heads: Box::new([NIL; WHEEL_SLOTS]),
            cells: Vec::new(),
            free: NIL,
            occupied: [0; WORDS],
            summary: 0,
            far: BinaryHeap::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `item` at `time` (not before the slot of the last item popped).
    #[inline(always)]
    pub fn push(&mut self, time: u64, item: T) {
        self.seq += 1;
        self.insert(time, self.seq, item);
    }

    /// Adds `item` at `time`, after every item [`push`](Self::push)ed for the
    /// same instant, whenever they were pushed (and in push order among
    /// those added this way).
    #[inline(always)]
    pub fn push_last(&mut self, time: u64, item: T) {
        self.seq += 1;
        self.insert(time, self.seq | LAST_CLASS, item);
    }

    /// Inlined into every push site, with the entry's parts as arguments:
    /// an entry built in memory by the caller and read back whole by an
    /// out-of-line `place` stalled store-to-load forwarding (the hottest
    /// loads of a pipeline run in a sampling profile).
    #[inline(always)]
    fn insert(&mut self, time: u64, seq: u64, item: T) {
        let time = time.max(self.slot << SLOT_BITS);
        self.len += 1;
        self.place(time, seq, item);
    }

    #[inline(always)]
    fn place(&mut self, time: u64, seq: u64, item: T) {
        let entry = Entry { time, seq, item };
        let ahead = entry.slot() - self.slot;
        if ahead == 0 {
            // A new item is nearly always among the latest of its slot:
            // step back from the end (predictable, and no tail to move)
            // rather than search.
            self.now.push(entry);
            let mut at = self.now.len() - 1;
            while at > self.head && self.now[at - 1].key() > entry.key() {
                self.now[at] = self.now[at - 1];
                at -= 1;
            }
            self.now[at] = entry;
        } else if ahead < WHEEL_SLOTS as u64 {
            let i = (entry.slot() as usize) & (WHEEL_SLOTS - 1);
            let cell = Cell {
                entry,
                next: self.heads[i],
            };
            self.heads[i] = if self.free == NIL {
                self.cells.push(cell);
                (self.cells.len() - 1) as u32
            } else {
                let at = self.free;
                self.free = std::mem::replace(&mut self.cells[at as usize], cell).next;
                at
            };
            self.occupied[i / WORD_BITS] |= 1 << (i % WORD_BITS);
            self.summary |= 1 << (i / WORD_BITS);
        } else {
            self.far.push(Reverse(entry));
        }
    }

    /// Slots from the current one to the next occupied slot of the wheel.
    fn next_occupied(&self) -> Option<u64> {
        let cur = (self.slot as usize) & (WHEEL_SLOTS - 1);
        let (word, bit) = (cur / WORD_BITS, cur % WORD_BITS);
        // The rest of the current word, then the later words, then wrap.
        let rest = self.occupied[word] & (u64::MAX << bit);
        let found = if rest != 0 {
            word * WORD_BITS + rest.trailing_zeros() as usize
        } else {
            let later = if word + 1 < WORDS {
                self.summary & (u64::MAX << (word + 1))
            } else {
                0
            };
            let w = if later != 0 {
                later.trailing_zeros() as usize
            } else if self.summary != 0 {
                self.summary.trailing_zeros() as usize
            } else {
                return None;
            };
            w * WORD_BITS + self.occupied[w].trailing_zeros() as usize
        };
        Some(((found + WHEEL_SLOTS - cur) & (WHEEL_SLOTS - 1)) as u64)
    }

    /// Moves on to the next slot with items; false when there are none.
    /// Kept out of line: most pops find their item in the current slot.
    #[inline(never)]
    fn refill(&mut self) -> bool {
        self.now.clear();
        self.head = 0;
        let next = match self.next_occupied() {
            Some(ahead) => self.slot + ahead,
            None => match self.far.peek() {
                Some(Reverse(e)) => e.slot(),
                None => return false,
            },
        };
        self.advance(next);
        true
    }

    /// Makes `slot` current: brings its items, and far items now on the wheel.
    fn advance(&mut self, slot: u64) {
        self.slot = slot;
        let i = (slot as usize) & (WHEEL_SLOTS - 1);
        let word = i / WORD_BITS;
        if self.occupied[word] & (1 << (i % WORD_BITS)) != 0 {
            self.occupied[word] &= !(1 << (i % WORD_BITS));
            if self.occupied[word] == 0 {
                self.summary &= !(1 << word);
            }
            let mut at = std::mem::replace(&mut self.heads[i], NIL);
            while at != NIL {
                let cell = &mut self.cells[at as usize];
                let next = std::mem::replace(&mut cell.next, self.free);
                self.now.push(cell.entry);
                self.free = at;
                at = next;
            }
        }
        while self
            .far
            .peek()
            .is_some_and(|Reverse(e)| e.slot() - slot < WHEEL_SLOTS as u64)
        {
            let Some(Reverse(entry)) = self.far.pop() else {
                break;
            };
            self.place(entry.time, entry.seq, entry.item);
        }
        self.now.sort_unstable();
    }

    /// Removes the earliest item (earliest inserted among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, T)> {
        if self.head == self.now.len() && !self.refill() {
            return None;
        }
        let entry = *self.now.get(self.head)?;
        self.head += 1;
        self.len -= 1;
        Some((entry.time, entry.item))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Same order as a binary heap of (time, class, sequence), under
        /// interleaved pushes of both classes (never before the last pop) and
        /// pops, at every time scale (the small ones make many ties).
        #[test]
        fn matches_a_binary_heap(ops in proptest::collection::vec((0u8..3, 0u64..100_000_000_000, 0u8..10), 1..2000)) {
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut now = 0u64;
            let mut id = 0u64;
            for (op, delta, scale) in ops {
                if op == 0 {
                    let got = q.pop();
                    let want = reference.pop().map(|Reverse((t, _, id))| (t, id));
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    let time = now + delta / 10u64.pow(u32::from(scale));
                    id += 1;
                    let last = op == 2;
                    if last {
                        q.push_last(time, id);
                    } else {
                        q.push(time, id);
                    }
                    reference.push(Reverse((time, last, id)));
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(got) = q.pop() {
                let Reverse((t, _, id)) = reference.pop().unwrap();
                prop_assert_eq!(got, (t, id));
            }
        }
    }
}
