//! A queue for a handful of pending events: one sorted array, in the same
//! order as [`crate::queue::EventQueue`] (`(time, class, insertion
//! sequence)`).
//!
//! One monitored pair simulated on its own has a few events pending at a
//! time (its heartbeat ticks, the datagrams in flight, its timer): the
//! timing wheel's 4,096 slots and bitmaps are then mostly empty space to
//! walk and keep in cache, while a short array kept sorted latest first
//! makes a pop a `Vec::pop` and a push a few comparisons from the end.
//! Its cost grows with the number pending, so it suits a pair, not a mesh.

use crate::queue::{Queue, LAST_CLASS};

#[derive(Clone, Copy)]
struct Entry<T> {
    /// `(time, sequence)` as one number: one comparison orders two entries.
    key: u128,
    item: T,
}

/// A monotone queue of `T` by time, for a few items at once.
pub struct SmallQueue<T> {
    /// Latest first: the next item to pop is the last.
    items: Vec<Entry<T>>,
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
            items: Vec::with_capacity(8),
            seq: 0,
            floor: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Files an item behind every later one: a new item is usually due
    /// after most of those pending (the next tick, a timer), so the scan
    /// from the latest end stops within a step or two.
    #[inline(always)]
    fn insert(&mut self, time: u64, seq: u64, item: T) {
        let key = (u128::from(time.max(self.floor)) << 64) | u128::from(seq);
        let at = self.items.iter().take_while(|e| e.key > key).count();
        self.items.insert(at, Entry { key, item });
        debug_assert!(self.items.windows(2).all(|w| w[0].key > w[1].key));
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

    #[inline(always)]
    fn pop(&mut self) -> Option<(u64, T)> {
        let entry = self.items.pop()?;
        let time = (entry.key >> 64) as u64;
        self.floor = time;
        Some((time, entry.item))
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
