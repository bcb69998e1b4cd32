//! A queue for a handful of pending events: eight cells and a heap for
//! any more, in the same order as [`crate::queue::EventQueue`] (`(time,
//! class, insertion sequence)`).
//!
//! One monitored pair simulated on its own has a few events pending at a
//! time (its heartbeat ticks, the datagrams in flight, its timer): the
//! timing wheel's 4,096 slots and bitmaps are then mostly empty space to
//! walk and keep in cache, while here a push is a store into the first
//! free cell and a pop one pass over the occupied ones (a bit each in one
//! byte) for the earliest key. More than [`CELLS`] pending (a long pause's
//! backlog let go at once) wait in a binary heap, merged in at each pop.
//! The caller may also keep one item beside the queue, numbered as if
//! pushed ([`SmallQueue::take_seq`]), and pop the two in order
//! ([`SmallQueue::pop_before`]): the pair's next heartbeat tick, which is
//! due again as soon as it has been handled.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::queue::{Queue, LAST_CLASS};

/// Cells kept inline: a pair's tick, timer and a few datagrams in flight.
pub const CELLS: usize = 8;

/// An item beyond the cells, with its key.
struct Far<T> {
    key: u128,
    item: T,
}

impl<T> PartialEq for Far<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Far<T> {}
impl<T> PartialOrd for Far<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Far<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// A monotone queue of `T` by time, for a few items at once.
///
/// A cell's time and sequence number are kept in arrays of their own, each
/// read as it was written (one 64-bit word): a key stored in two halves
/// and read back whole made the next access wait for the stores (a failed
/// store-to-load forwarding, 5% of a large mesh's run). An item stays in
/// its cell until it is popped, never moved, for the same reason: the
/// pair's next event is nearly always one it pushed an event or two before.
pub struct SmallQueue<T> {
    times: [u64; CELLS],
    /// With [`LAST_CLASS`] set for [`Queue::push_last`].
    seqs: [u64; CELLS],
    /// The cells' items (as many as were ever used at once).
    items: Vec<T>,
    /// Bit `i` set when cell `i` holds an item.
    used: u8,
    far: BinaryHeap<Reverse<Far<T>>>,
    seq: u64,
    /// Time of the last item popped: nothing is due before it.
    floor: u64,
}

impl<T: Copy> Default for SmallQueue<T> {
    fn default() -> Self {
        SmallQueue::new()
    }
}

/// `(time, sequence)` as one number: one comparison orders two items.
#[inline(always)]
fn key(time: u64, seq: u64) -> u128 {
    (u128::from(time) << 64) | u128::from(seq)
}

impl<T: Copy> SmallQueue<T> {
    pub fn new() -> SmallQueue<T> {
        SmallQueue {
            times: [0; CELLS],
            seqs: [0; CELLS],
            items: Vec::with_capacity(CELLS),
            used: 0,
            far: BinaryHeap::new(),
            seq: 0,
            floor: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.used.count_ones() as usize + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.used == 0 && self.far.is_empty()
    }

    /// Puts an item in the first free cell, or beyond the cells.
    #[inline(always)]
    fn insert(&mut self, time: u64, seq: u64, item: T) {
        let time = time.max(self.floor);
        let cell = self.used.trailing_ones() as usize;
        if cell == CELLS {
            let key = key(time, seq);
            self.far.push(Reverse(Far { key, item }));
            return;
        }
        self.used |= 1 << cell;
        self.times[cell] = time;
        self.seqs[cell] = seq;
        if cell < self.items.len() {
            self.items[cell] = item;
        } else {
            self.items.push(item);
        }
    }

    /// Takes an item due at `time` out of turn, without queueing it: when,
    /// pushed now, it would be the next to pop, this uses up the sequence
    /// number it would have had (later items are numbered as if it had been
    /// pushed and popped) and returns true, and the caller handles it at
    /// once; otherwise it changes nothing.
    #[inline(always)]
    pub fn take_if_next(&mut self, time: u64) -> bool {
        let time = time.max(self.floor);
        let mine = key(time, self.seq + 1);
        let mut bits = self.used;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize % CELLS;
            bits &= bits - 1;
            if key(self.times[i], self.seqs[i]) < mine {
                return false;
            }
        }
        if self.far.peek().is_some_and(|Reverse(f)| f.key < mine) {
            return false;
        }
        self.seq += 1;
        self.floor = time;
        true
    }

    /// Uses up the sequence number a [`Queue::push`] now would take, for an
    /// item the caller keeps out of the queue and compares with
    /// [`SmallQueue::pop_before`] (as if it were queued). The queue does
    /// not see a kept item otherwise: [`SmallQueue::take_if_next`] would
    /// take an item due after it, so a caller keeping one does not use it.
    #[inline(always)]
    pub fn take_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The earliest item, when it comes before an item kept out of the
    /// queue at `time` with the sequence number `seq` of
    /// [`SmallQueue::take_seq`]; otherwise none, and the kept item counts
    /// as popped (nothing is due before it). The two together pop in the
    /// queue's order.
    #[inline(always)]
    pub fn pop_before(&mut self, time: u64, seq: u64) -> Option<(u64, T)> {
        debug_assert!(time >= self.floor, "an item kept out of turn in the past");
        let popped = self.pop_below(key(time, seq));
        if popped.is_none() {
            self.floor = time;
        }
        popped
    }

    /// The earliest item whose key is below `bound`: a pass over the
    /// occupied cells (a few).
    #[inline(always)]
    fn pop_below(&mut self, bound: u128) -> Option<(u64, T)> {
        let mut min = bound;
        let mut cell = CELLS;
        let mut bits = self.used;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize % CELLS;
            bits &= bits - 1;
            let k = key(self.times[i], self.seqs[i]);
            if k < min {
                min = k;
                cell = i;
            }
        }
        if !self.far.is_empty() {
            if let Some(popped) = self.pop_far(min) {
                return Some(popped);
            }
        }
        if cell == CELLS {
            return None;
        }
        self.used &= !(1 << cell);
        let time = (min >> 64) as u64;
        self.floor = time;
        Some((time, self.items[cell]))
    }

    /// The earliest item beyond the cells, when it comes before `min`.
    #[cold]
    #[inline(never)]
    fn pop_far(&mut self, min: u128) -> Option<(u64, T)> {
        if self.far.peek().is_none_or(|Reverse(f)| f.key >= min) {
            return None;
        }
        let Reverse(far) = self.far.pop()?;
        let time = (far.key >> 64) as u64;
        self.floor = time;
        Some((time, far.item))
    }
}

impl<T: Copy> Queue<T> for SmallQueue<T> {
    #[inline(always)]
    fn push(&mut self, time: u64, item: T) {
        self.seq += 1;
        self.insert(time, self.seq, item);
    }

    #[inline(always)]
    fn push_last(&mut self, time: u64, item: T) {
        self.seq += 1;
        self.insert(time, self.seq | LAST_CLASS, item);
    }

    /// The earliest item.
    #[inline(always)]
    fn pop(&mut self) -> Option<(u64, T)> {
        self.pop_below(u128::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::EventQueue;
    use proptest::prelude::*;

    proptest! {
        /// Same order as the timing wheel, under interleaved pushes of both
        /// classes (some before the last pop), pops, items taken out of
        /// turn and an item kept out of the queue, at every time scale.
        #[test]
        fn matches_the_timing_wheel(ops in proptest::collection::vec((0u8..5, 0u64..100_000_000_000, 0u8..10, any::<bool>()), 1..500)) {
            let mut q = SmallQueue::new();
            let mut wheel = EventQueue::new();
            let mut now = 0u64;
            let mut id = 0u64;
            // `(time, seq, id)` of the item kept out of the queue.
            let mut kept: Option<(u64, u64, u64)> = None;
            let pop = |q: &mut SmallQueue<u64>, kept: &mut Option<(u64, u64, u64)>| match *kept {
                Some((time, seq, id)) => q.pop_before(time, seq).or_else(|| {
                    *kept = None;
                    Some((time, id))
                }),
                None => q.pop(),
            };
            for (op, delta, scale, past) in ops {
                if op == 4 {
                    if kept.is_none() {
                        let time = now + delta / 10u64.pow(u32::from(scale));
                        id += 1;
                        Queue::push(&mut wheel, time, id);
                        kept = Some((time, q.take_seq(), id));
                    }
                    continue;
                }
                if op == 3 {
                    // Out of turn: taken only when it is the next item (the
                    // wheel, given it too, pops it at once), else queued.
                    let time = now + delta / 10u64.pow(u32::from(scale));
                    id += 1;
                    Queue::push(&mut wheel, time, id);
                    if kept.is_none() && q.take_if_next(time) {
                        prop_assert_eq!(wheel.pop(), Some((time, id)));
                        now = time;
                    } else {
                        q.push(time, id);
                    }
                    continue;
                }
                if op == 0 {
                    let got = pop(&mut q, &mut kept);
                    prop_assert_eq!(got, wheel.pop());
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    let step = delta / 10u64.pow(u32::from(scale));
                    let time = if past { now.saturating_sub(step) } else { now + step };
                    id += 1;
                    if op == 2 {
                        q.push_last(time, id);
                        wheel.push_last(time, id);
                    } else {
                        q.push(time, id);
                        Queue::push(&mut wheel, time, id);
                    }
                }
                prop_assert_eq!(q.len() + usize::from(kept.is_some()), wheel.len());
            }
            while let Some(got) = pop(&mut q, &mut kept) {
                prop_assert_eq!(Some(got), wheel.pop());
            }
            prop_assert!(wheel.is_empty());
        }
    }
}
