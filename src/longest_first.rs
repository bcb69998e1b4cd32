//! Runs of very different lengths on a thread pool, longest first.
//!
//! A command's membership and lock-RPC runs go to the pool as one list of
//! jobs; a parallel iterator splits that list into halves, so the longest
//! runs (a 200-silo scenario's, listed last) could start last, and one
//! core would finish them alone: the built-in suite's membership runs kept
//! both cores busy for 1/1.20 of their wall time. Here each thread takes
//! the next job in the order of decreasing estimated cost (Graham's LPT
//! rule: R. L. Graham, "Bounds on multiprocessing timing anomalies", SIAM
//! J. Appl. Math. 17(2), 1969). Each job is a run of its own seed, so the
//! order they run in changes no result, and the results come back in the
//! jobs' own order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `job(k)` for every `k` in `0..costs.len()` on `pool`, the threads
/// taking the jobs by decreasing `costs` (ties in index order); the
/// results in index order.
pub fn run_longest_first<R: Send>(
    pool: &rayon::ThreadPool,
    costs: &[f64],
    job: impl Fn(usize) -> R + Sync,
) -> Vec<R> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<R>>> = (0..costs.len()).map(|_| Mutex::new(None)).collect();
    pool.install(|| {
        rayon::broadcast(|_| {
            while let Some(&k) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                let result = job(k);
                *done[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            }
        })
    });
    done.into_iter()
        .map(|slot| {
            let result = slot.into_inner().unwrap_or_else(|e| e.into_inner());
            result.expect("every index is taken once, by one thread")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn results_come_back_in_index_order_and_the_longest_start_first() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let costs = [1.0, 5.0, 3.0, 5.0, 0.5];
        let started = Mutex::new(Vec::new());
        let out = run_longest_first(&pool, &costs, |k| {
            started.lock().unwrap().push(k);
            k * 10
        });
        assert_eq!(out, vec![0, 10, 20, 30, 40]);
        // One thread takes them in the order of decreasing cost, ties by index.
        assert_eq!(started.into_inner().unwrap(), vec![1, 3, 2, 0, 4]);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let many: Vec<f64> = (0..100).map(|k| f64::from(k % 7)).collect();
        let out = run_longest_first(&pool, &many, |k| k);
        assert_eq!(out, (0..100).collect::<Vec<_>>());
        assert!(run_longest_first(&pool, &[], |k| k).is_empty());
    }
}
