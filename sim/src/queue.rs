//! The event queue: a radix heap ordered by `(time, insertion sequence)`.
//!
//! Simulated time never goes backwards, so a monotone priority queue applies:
//! the radix heap of Ahuja, Mehlhorn, Orlin & Tarjan ("Faster algorithms for
//! the shortest path problem", JACM 1990). Items live in 65 buckets by the
//! highest bit in which their time differs from the last time popped; a pop
//! only scans and redistributes one bucket. Pushes and pops are appends and
//! sequential scans, so the queue stays fast when it holds hundreds of
//! thousands of events, where a binary heap's sift-down misses the cache at
//! every level.
//!
//! Ties: items of equal time come out in insertion order. All items of one
//! time reach bucket 0 in a single redistribution (they share a bucket) and are
//! sorted by sequence there; later pushes at that time have larger sequences
//! and are appended behind them.

use std::collections::VecDeque;

/// A monotone queue of `T` by time (`u64`, e.g. nanoseconds).
pub struct EventQueue<T> {
    last: u64,
    seq: u64,
    len: usize,
    /// Items whose time equals `last`, in sequence order.
    now: VecDeque<(u64, u64, T)>,
    /// `buckets[b]`: items whose time differs from `last` first in bit `b - 1`.
    buckets: Vec<Vec<(u64, u64, T)>>,
    /// Bit `b - 1` set when `buckets[b]` is not empty: finding the first
    /// non-empty bucket is one `trailing_zeros`.
    occupied: u64,
    scratch: Vec<(u64, u64, T)>,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl<T> EventQueue<T> {
    pub fn new() -> EventQueue<T> {
        EventQueue {
            last: 0,
            seq: 0,
            len: 0,
            now: VecDeque::new(),
            buckets: (0..=64).map(|_| Vec::new()).collect(),
            occupied: 0,
            scratch: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn bucket(&self, time: u64) -> usize {
        (64 - (time ^ self.last).leading_zeros()) as usize
    }

    /// Adds `item` at `time`; a time before the last one popped counts as that
    /// one (the past cannot be scheduled).
    pub fn push(&mut self, time: u64, item: T) {
        let time = time.max(self.last);
        self.seq += 1;
        self.len += 1;
        let b = self.bucket(time);
        if b == 0 {
            self.now.push_back((time, self.seq, item));
        } else {
            self.buckets[b].push((time, self.seq, item));
            self.occupied |= 1 << (b - 1);
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
            self.last = items.iter().map(|i| i.0).min().unwrap_or(self.last);
            for item in items.drain(..) {
                let nb = self.bucket(item.0);
                if nb == 0 {
                    self.scratch.push(item);
                } else {
                    self.buckets[nb].push(item);
                    self.occupied |= 1 << (nb - 1);
                }
            }
            // Keep the emptied bucket's allocation for reuse.
            self.buckets[b] = items;
            if self.scratch.len() == 1 {
                self.now.extend(self.scratch.pop());
            } else {
                self.scratch.sort_unstable_by_key(|i| i.1);
                self.now.extend(self.scratch.drain(..));
            }
        }
        let (time, _, item) = self.now.pop_front()?;
        self.len -= 1;
        Some((time, item))
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
        /// pushes (never before the last pop) and pops.
        #[test]
        fn matches_a_binary_heap(ops in proptest::collection::vec((any::<bool>(), 0u64..1_000_000, 0u8..4), 1..2000)) {
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
