//! A weighted bucket list: each server listed `weight` times, in list order.
//!
//! SockIOPool's `_buckets` (memcacheddotnet `SockIOPool.cs` `initialize`:
//! `for k in 0..weights[i]: buckets.Add(servers[i])`), python-memcached's
//! `self.buckets` (memcache.py `_init_buckets`) and twemproxy's modula
//! continuum (nc_modula.c `modula_update`) are all this list. fdlab does not
//! materialise it: it keeps the running sum of the weights and finds a
//! bucket's server by binary search, so a weight of thousands costs no memory.

/// The bucket list of some servers (indices into the client's server list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buckets {
    /// The servers, in list order.
    members: Vec<usize>,
    /// `ends[j]`: the buckets of members `0..=j`, i.e. member j holds buckets
    /// `ends[j-1]..ends[j]`. Strictly increasing (weights are at least 1).
    ends: Vec<u64>,
}

impl Buckets {
    /// The list of `members` (in that order) with weights `weight(i)`.
    pub fn new(members: Vec<usize>, weight: impl Fn(usize) -> u32) -> Buckets {
        let mut total = 0u64;
        let ends: Vec<u64> = members
            .iter()
            .map(|&i| {
                total += u64::from(weight(i));
                total
            })
            .collect();
        debug_assert!(ends.windows(2).all(|w| w[0] < w[1]), "weights >= 1");
        Buckets { members, ends }
    }

    /// The number of buckets (the total weight).
    pub fn count(&self) -> u64 {
        self.ends.last().copied().unwrap_or(0)
    }

    /// The servers, in list order.
    pub fn members(&self) -> &[usize] {
        &self.members
    }

    /// The server of bucket `bucket` (< [`Buckets::count`]).
    #[inline]
    pub fn server(&self, bucket: u64) -> usize {
        debug_assert!(bucket < self.count(), "bucket {bucket} of {}", self.count());
        let j = self.ends.partition_point(|&end| end <= bucket);
        self.members[j]
    }

    /// Whether any member is live.
    pub fn any_live(&self, live: &[bool]) -> bool {
        self.members.iter().any(|&i| live[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_holds_weight_buckets_in_list_order() {
        // SPEC §9: weights {5, 2} give A five times, then B twice.
        let b = Buckets::new(vec![0, 1], |i| [5, 2][i]);
        assert_eq!(b.count(), 7);
        let list: Vec<usize> = (0..7).map(|k| b.server(k)).collect();
        assert_eq!(list, [0, 0, 0, 0, 0, 1, 1]);
    }
}
