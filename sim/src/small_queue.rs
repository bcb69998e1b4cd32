//! A queue for a handful of pending events: a few cells, in the same
//! order as [`crate::queue::EventQueue`] (`(time, class, insertion
//! sequence)`).
//!
//! One monitored pair simulated on its own has a few events pending at a
//! time (its heartbeat ticks, the datagrams in flight, its timer): the
//! timing wheel's 4,096 slots and bitmaps are then mostly empty space to
//! walk and keep in cache, while a few cells make a push a store into the
//! first free one and a pop one pass over them for the earliest key. Its
//! cost grows with the number pending, so it suits a pair, not a mesh.

use crate::queue::{Queue, LAST_CLASS};

/// A free cell's time and sequence: `(time, sequence)` above every real
/// one (a sequence number never reaches it).
const FREE: u64 = u64::MAX;

/// A monotone queue of `T` by time, for a few items at once.
///
/// Times and sequence numbers are kept in arrays of their own, each read
/// as it was written (one 64-bit word): a key as one `u128` was stored in
/// two halves and read back whole by the search for a free cell, which
/// then waited for the stores (a failed store-to-load forwarding, 5% of a
/// large mesh's run).
pub struct SmallQueue<T> {
    times: Vec<u64>,
    /// With [`LAST_CLASS`] set for [`Queue::push_last`]; [`FREE`] for an
    /// empty cell.
    seqs: Vec<u64>,
    items: Vec<T>,
    len: usize,
    seq: u64,
    /// Time of the last item popped: nothing is due before it.
    floor: u64,
}

impl<T: Copy> Default for SmallQueue<T> {
    fn default() -> Self {
        SmallQueue::new()
    }
}

impl<T: Copy> SmallQueue<T> {
    pub fn new() -> SmallQueue<T> {
        SmallQueue {
            times: Vec::with_capacity(8),
            seqs: Vec::with_capacity(8),
            items: Vec::with_capacity(8),
            len: 0,
            seq: 0,
            floor: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Puts an item in the first free cell. An item stays in its cell until
    /// it is popped, never moved: the pair's next event is nearly always
    /// one it pushed an event or two earlier, and a load of an item that a
    /// shift had just copied with wider stores waited for the copy (a
    /// store-forwarding stall, a tenth of a pair's loop in the profile).
    #[inline(always)]
    fn insert(&mut self, time: u64, seq: u64, item: T) {
        debug_assert!(seq != FREE);
        let time = time.max(self.floor);
        self.len += 1;
        match self.seqs.iter().position(|&s| s == FREE) {
            Some(cell) => {
                self.times[cell] = time;
                self.seqs[cell] = seq;
                self.items[cell] = item;
            }
            None => {
                self.times.push(time);
                self.seqs.push(seq);
                self.items.push(item);
            }
        }
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

    /// The earliest item: a pass over the cells (a few), free ones last.
    #[inline(always)]
    fn pop(&mut self) -> Option<(u64, T)> {
        if self.len == 0 {
            return None;
        }
        let key = |i: usize| (u128::from(self.times[i]) << 64) | u128::from(self.seqs[i]);
        let mut cell = 0;
        let mut min = key(0);
        for i in 1..self.seqs.len() {
            let k = key(i);
            if k < min {
                min = k;
                cell = i;
            }
        }
        debug_assert!(self.seqs[cell] != FREE);
        let time = self.times[cell];
        self.times[cell] = FREE;
        self.seqs[cell] = FREE;
        self.len -= 1;
        self.floor = time;
        Some((time, self.items[cell]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::EventQueue;
    use proptest::prelude::*;

    proptest! {
        /// Same order as the timing wheel, under interleaved pushes of both
        /// classes (some before the last pop) and pops, at every time scale.
        #[test]
        fn matches_the_timing_wheel(ops in proptest::collection::vec((0u8..3, 0u64..100_000_000_000, 0u8..10, any::<bool>()), 1..500)) {
            let mut q = SmallQueue::new();
            let mut wheel = EventQueue::new();
            let mut now = 0u64;
            let mut id = 0u64;
            for (op, delta, scale, past) in ops {
                if op == 0 {
                    let got = q.pop();
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
                prop_assert_eq!(q.len(), wheel.len());
            }
            while let Some(got) = q.pop() {
                prop_assert_eq!(Some(got), wheel.pop());
            }
            prop_assert!(wheel.is_empty());
        }
    }
}
