//! The event queue: a radix heap over coarse time, with a binary heap for the
//! current slot, ordered by `(time, insertion sequence)`.
//!
//! Simulated time never goes backwards, so a monotone priority queue applies:
//! the radix heap of Ahuja, Mehlhorn, Orlin & Tarjan ("Faster algorithms for
//! the shortest path problem", JACM 1990). Items live in 65 buckets by the
//! highest bit in which their *slot* (time >> [`SLOT_BITS`], about 1 ms)
//! differs from the current slot; a pop only scans and redistributes one
//! bucket, with appends and sequential scans that stay cache-friendly when the
//! queue holds hundreds of thousands of events. Working on slots rather than
//! nanoseconds spares every item the redistributions through the 20 lowest
//! bits; items of the current slot wait in a short sorted deque, which orders
//! them exactly by (time, sequence).

use std::cmp::Ordering;
use std::collections::VecDeque;

/// Bits of time below the radix: items within 2^20 ns (~1 ms) share a slot.
pub const SLOT_BITS: u32 = 20;

struct Entry<T> {
    time: u64,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
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
        (self.time, self.seq).cmp(&(other.time, other.seq))
    }
}

/// A monotone queue of `T` by time (`u64`, e.g. nanoseconds).
pub struct EventQueue<T> {
    /// The current slot (`time >> SLOT_BITS`); never decreases.
    slot: u64,
    seq: u64,
    len: usize,
    /// Items of the current slot, sorted by (time, sequence).
    now: VecDeque<Entry<T>>,
    /// `buckets[b]`: items whose slot differs from `slot` first in bit `b - 1`.
    buckets: Vec<Vec<Entry<T>>>,
    /// Bit `b - 1` set when `buckets[b]` is not empty.
    occupied: u64,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl<T> EventQueue<T> {
    pub fn new() -> EventQueue<T> {
        EventQueue {
            slot: 0,
            seq: 0,
            len: 0,
            now: VecDeque::new(),
            buckets: (0..=64).map(|_| Vec::new()).collect(),
            occupied: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn bucket(&self, time: u64) -> usize {
        (64 - ((time >> SLOT_BITS) ^ self.slot).leading_zeros()) as usize
    }

    /// Adds `item` at `time` (not before the slot of the last item popped).
    pub fn push(&mut self, time: u64, item: T) {
        let time = time.max(self.slot << SLOT_BITS);
        self.seq += 1;
        self.len += 1;
        let entry = Entry {
            time,
            seq: self.seq,
            item,
        };
        match self.bucket(time) {
            0 => {
                // Usually the latest of its slot: search from the back.
                let at = self.now.partition_point(|e| e <= &entry);
                self.now.insert(at, entry);
            }
            b => {
                self.buckets[b].push(entry);
                self.occupied |= 1 << (b - 1);
            }
        }
    }

    /// Removes the earliest item (earliest inserted among equal times).
    pub fn pop(&mut self) -> Option<(u64, T)> {
        if self.now.is_empty() {
            if self.occupied == 0 {
                return None;
            }
            let b = self.occupied.trailing_zeros() as usize + 1;
            self.occupied &= !(1 << (b - 1));
            let mut items = std::mem::take(&mut self.buckets[b]);
            self.slot = items
                .iter()
                .map(|e| e.time >> SLOT_BITS)
                .min()
                .unwrap_or(self.slot);
            for entry in items.drain(..) {
                match self.bucket(entry.time) {
                    0 => self.now.push_back(entry),
                    nb => {
                        self.buckets[nb].push(entry);
                        self.occupied |= 1 << (nb - 1);
                    }
                }
            }
            // Keep the emptied bucket's allocation for reuse.
            self.buckets[b] = items;
            self.now.make_contiguous().sort_unstable();
        }
        let entry = self.now.pop_front()?;
        self.len -= 1;
        Some((entry.time, entry.item))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// Same order as a binary heap of (time, sequence), under interleaved
        /// pushes (never before the last pop) and pops, at every time scale.
        #[test]
        fn matches_a_binary_heap(ops in proptest::collection::vec((any::<bool>(), 0u64..10_000_000, 0u8..6), 1..2000)) {
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut now = 0u64;
            let mut seq = 0u64;
            for (pop, delta, scale) in ops {
                if pop {
                    let got = q.pop();
                    let want = reference.pop().map(|Reverse((t, s))| (t, s));
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    let time = now + delta / 10u64.pow(u32::from(scale));
                    seq += 1;
                    q.push(time, seq);
                    reference.push(Reverse((time, seq)));
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(got) = q.pop() {
                let Reverse(want) = reference.pop().unwrap();
                prop_assert_eq!(got, want);
            }
        }
    }
}
