//! Typed indices of the engine's simulated things, and vectors indexed by
//! them: a node, a monitored pair, a detector slot (one detector on one
//! pair), a data link and a heartbeat stream are each their own type, so an
//! index of one can never be used for another, and the layout arithmetic
//! (slots are pair-major) lives in one function, [`SlotId::of`].
//!
//! Invariant: every id is below the length of the vector it indexes (the
//! builder makes them so; indexing checks it).

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub(crate) struct $name(pub(crate) u32);

        /// The bare number: the replay's event log prints ids this way.
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&self.0, f)
            }
        }

        impl $name {
            #[inline(always)]
            pub(crate) fn ix(self) -> usize {
                self.0 as usize
            }
        }

        impl From<usize> for $name {
            #[inline(always)]
            fn from(i: usize) -> $name {
                debug_assert!(i <= u32::MAX as usize);
                $name(i as u32)
            }
        }
    };
}

id!(
    /// A node, by its index in the layout.
    NodeId
);
id!(
    /// A monitored pair, by its position in the part's slice of the layout's
    /// sorted pairs.
    PairId
);
id!(
    /// One detector on one monitored pair.
    SlotId
);
id!(
    /// A data link of a dataflow, by its index in the layout.
    LinkId
);
id!(
    /// A heartbeat stream: the heartbeats one target sends one monitor at
    /// one interval.
    StreamId
);

impl SlotId {
    /// Slots are laid out pair-major: detector `det` of `pair`, with
    /// `detectors` detectors on every pair.
    #[inline(always)]
    pub(crate) fn of(pair: PairId, det: usize, detectors: usize) -> SlotId {
        debug_assert!(det < detectors);
        SlotId(pair.0 * detectors as u32 + det as u32)
    }

    /// The pair of a pair-major slot.
    #[inline(always)]
    pub(crate) fn pair(self, detectors: usize) -> PairId {
        PairId(self.0 / detectors as u32)
    }
}

/// A vector indexed by one kind of id.
pub(crate) struct IdVec<I, T> {
    items: Vec<T>,
    _id: PhantomData<fn(I) -> I>,
}

impl<I: From<usize> + Copy + 'static, T> IdVec<I, T> {
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Every id, in order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = I> + 'static {
        (0..self.items.len()).map(I::from)
    }

    pub(crate) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    pub(crate) fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.items.iter_mut()
    }

    pub(crate) fn push(&mut self, item: T) -> I {
        self.items.push(item);
        I::from(self.items.len() - 1)
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        &self.items
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.items
    }

    pub(crate) fn into_vec(self) -> Vec<T> {
        self.items
    }
}

impl<I, T> From<Vec<T>> for IdVec<I, T> {
    fn from(items: Vec<T>) -> IdVec<I, T> {
        IdVec {
            items,
            _id: PhantomData,
        }
    }
}

impl<I, T> Default for IdVec<I, T> {
    fn default() -> IdVec<I, T> {
        Vec::new().into()
    }
}

macro_rules! index {
    ($name:ident) => {
        impl<T> Index<$name> for IdVec<$name, T> {
            type Output = T;
            #[inline(always)]
            fn index(&self, id: $name) -> &T {
                &self.items[id.ix()]
            }
        }

        impl<T> IndexMut<$name> for IdVec<$name, T> {
            #[inline(always)]
            fn index_mut(&mut self, id: $name) -> &mut T {
                &mut self.items[id.ix()]
            }
        }
    };
}

index!(NodeId);
index!(PairId);
index!(SlotId);
index!(LinkId);
index!(StreamId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_pair_major() {
        let d = 3;
        assert_eq!(SlotId::of(PairId(0), 2, d), SlotId(2));
        assert_eq!(SlotId::of(PairId(4), 1, d), SlotId(13));
        for p in 0..5 {
            for k in 0..d {
                assert_eq!(SlotId::of(PairId(p), k, d).pair(d), PairId(p));
            }
        }
    }

    #[test]
    fn an_id_vector_indexes_by_its_id() {
        let mut v: IdVec<LinkId, &str> = IdVec::default();
        let a = v.push("a");
        let b = v.push("b");
        assert_eq!((v[a], v[b]), ("a", "b"));
        assert_eq!(v.ids().collect::<Vec<_>>(), vec![LinkId(0), LinkId(1)]);
    }
}
