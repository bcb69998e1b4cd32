//! A map from increasing ids to values, for RPCs and acquisitions: ids are
//! handed out in order and each lives a bounded time (deadlines, detached
//! expiry, unlock backoff), so a deque from the oldest live id holds them
//! without a tree (the simulator's hot path). Iteration never reaches an
//! output.

use std::collections::VecDeque;

#[derive(Debug)]
pub(super) struct IdWindow<T> {
    /// The id of `items[0]`.
    base: u64,
    items: VecDeque<Option<T>>,
}

impl<T> Default for IdWindow<T> {
    fn default() -> Self {
        IdWindow {
            base: 0,
            items: VecDeque::new(),
        }
    }
}

impl<T> IdWindow<T> {
    /// Adds `value` under `id`, which must be past every id added before.
    pub fn insert(&mut self, id: u64, value: T) {
        let end = self.base + self.items.len() as u64;
        debug_assert!(id >= end, "ids must increase: {id} < {end}");
        if self.items.is_empty() {
            self.base = id;
        } else {
            for _ in end..id {
                self.items.push_back(None);
            }
        }
        self.items.push_back(Some(value));
    }

    fn slot(&self, id: u64) -> Option<usize> {
        id.checked_sub(self.base).map(|i| i as usize)
    }

    pub fn get(&self, id: &u64) -> Option<&T> {
        self.items.get(self.slot(*id)?)?.as_ref()
    }

    pub fn get_mut(&mut self, id: &u64) -> Option<&mut T> {
        let i = self.slot(*id)?;
        self.items.get_mut(i)?.as_mut()
    }

    pub fn remove(&mut self, id: &u64) -> Option<T> {
        let i = self.slot(*id)?;
        let value = self.items.get_mut(i)?.take();
        while let Some(None) = self.items.front() {
            self.items.pop_front();
            self.base += 1;
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::IdWindow;

    #[test]
    fn holes_and_out_of_order_removal() {
        let mut w = IdWindow::default();
        w.insert(3, 'a');
        w.insert(5, 'b');
        w.insert(6, 'c');
        assert_eq!(w.get(&4), None);
        assert_eq!(w.get(&2), None);
        assert_eq!(w.remove(&5), Some('b'));
        assert_eq!(w.remove(&5), None);
        assert_eq!(w.remove(&3), Some('a'));
        assert_eq!(w.get(&6), Some(&'c'));
        *w.get_mut(&6).unwrap() = 'd';
        assert_eq!(w.remove(&6), Some('d'));
        w.insert(10, 'e');
        assert!(w.get(&10).is_some() && w.get(&9).is_none());
    }
}
