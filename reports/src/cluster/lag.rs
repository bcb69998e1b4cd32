//! The view lag of each node: while its process runs and has a view, how
//! many versions its view is behind the table's (the highest version any
//! Row or View record has shown by then); and that lag reduced to pixel
//! columns for the timeline ([`lag_columns`]): a lag is drawn in a column
//! only when it covers at least half of the column's time. Views normally
//! catch up within milliseconds of each write, a lag nobody could see; what
//! shows is a view that stayed behind (a paused or cut-off silo, an
//! unreachable table).

use fdlab_protocol::Nanos;
use fdlab_sim::membership::outcome::{ClusterLogRecord, NodeChange};
use fdlab_sim::outcome::Window;

use super::lanes::Lane;

/// A span during which a view was behind the table, at most `lag`
/// versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lag {
    pub window: Window,
    pub lag: u64,
}

/// Each lane's view lag: the table's version (the highest any record has
/// shown so far) less the node's view version, while its process runs.
pub(super) fn view_lag(log: &[&ClusterLogRecord], end: Nanos, lanes: &mut [Lane]) {
    // Per node: (at, Some(view version)) or (at, None) when the process
    // stops or a new one starts (no view until its first View record).
    let mut steps: Vec<Vec<(Nanos, Option<u64>)>> = vec![Vec::new(); lanes.len()];
    let mut table: Vec<(Nanos, u64)> = Vec::new();
    let mut top = 0;
    for r in log.iter().filter(|r| r.at() < end) {
        let version = match r {
            ClusterLogRecord::Row { version, .. } => *version,
            ClusterLogRecord::View {
                at, silo, version, ..
            } => {
                steps[silo.node as usize].push((*at, Some(*version)));
                *version
            }
            ClusterLogRecord::Node { at, silo, change } => {
                if matches!(
                    change,
                    NodeChange::Started
                        | NodeChange::Crashed
                        | NodeChange::Terminated
                        | NodeChange::GaveUp
                ) {
                    steps[silo.node as usize].push((*at, None));
                }
                continue;
            }
            _ => continue,
        };
        if version > top {
            top = version;
            table.push((r.at(), top));
        }
    }
    for (lane, steps) in lanes.iter_mut().zip(&steps) {
        lane.lag = lag_spans(&table, steps, end);
    }
}

/// Spans where the view (`steps`: `(at, view version)`, none: no view) is
/// behind the table (`table`: `(at, version)`, both increasing): one span
/// per view version, from the first write it misses to the next view
/// change, with the most versions it falls behind. Binary searches, so
/// the work is in the node's view changes, not in the table's writes.
fn lag_spans(table: &[(Nanos, u64)], steps: &[(Nanos, Option<u64>)], end: Nanos) -> Vec<Lag> {
    let mut out: Vec<Lag> = Vec::new();
    for (j, &(at, view)) in steps.iter().enumerate() {
        let Some(view) = view else { continue };
        let until = steps.get(j + 1).map_or(end, |s| s.0).min(end);
        // The first write this view lacks, and the table at the span's end.
        let missed = table.partition_point(|&(_, v)| v <= view);
        let last = table.partition_point(|&(t, _)| t < until);
        let (Some(&(from, _)), Some(&(_, top))) = (
            table.get(missed),
            last.checked_sub(1).and_then(|i| table.get(i)),
        ) else {
            continue;
        };
        let start = from.max(at);
        if start >= until || top <= view {
            continue;
        }
        let lag = top - view;
        match out.last_mut() {
            Some(l) if l.lag == lag && l.window.end == start => l.window.end = until,
            _ => out.push(Lag {
                window: Window { start, end: until },
                lag,
            }),
        }
    }
    out
}

/// `lag` reduced to pixel columns over `[0, end)`: the columns more than
/// half covered, merged into runs, each with the largest lag in it.
pub fn lag_columns(lag: &[Lag], end: Nanos, columns: u32) -> Vec<(f64, f64, u64)> {
    let width = end.as_nanos() as f64 / f64::from(columns.max(1));
    let mut covered = vec![0.0f64; columns as usize];
    let mut worst = vec![0u64; columns as usize];
    for l in lag {
        let (s, e) = (
            l.window.start.as_nanos() as f64,
            l.window.end.as_nanos() as f64,
        );
        let first = (s / width) as usize;
        let last = ((e / width).ceil() as usize).min(columns as usize);
        for c in first..last {
            let (c0, c1) = (c as f64 * width, (c + 1) as f64 * width);
            let overlap = e.min(c1) - s.max(c0);
            if overlap > 0.0 {
                covered[c] += overlap;
                worst[c] = worst[c].max(l.lag);
            }
        }
    }
    let mut out: Vec<(f64, f64, u64)> = Vec::new();
    for c in 0..columns as usize {
        if covered[c] * 2.0 < width {
            continue;
        }
        let (s, e) = (c as f64 * width / 1e9, (c + 1) as f64 * width / 1e9);
        match out.last_mut() {
            Some(last) if last.1 == s && last.2 == worst[c] => last.1 = e,
            _ => out.push((s, e, worst[c])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixture::secs;
    use super::*;

    #[test]
    fn lag_follows_the_table() {
        let ns = |s: u64| Nanos::from_secs(s);
        let table = [(ns(1), 1), (ns(2), 2), (ns(3), 4), (ns(6), 5)];
        let steps = [
            (ns(0), None),
            (ns(1), Some(1)),
            (ns(5), Some(4)),
            (ns(8), None),
        ];
        let lag = lag_spans(&table, &steps, ns(10));
        let got: Vec<(u64, u64, u64)> = lag
            .iter()
            .map(|l| {
                (
                    l.window.start.0 / 1_000_000_000,
                    l.window.end.0 / 1_000_000_000,
                    l.lag,
                )
            })
            .collect();
        // Version 1 from 1 s misses the writes of 2 s and 3 s: at most 3
        // behind until 5 s; version 4 misses the write of 6 s until the
        // process stops at 8 s.
        assert_eq!(got, [(2, 5, 3), (6, 8, 1)]);
    }

    #[test]
    fn lag_shows_where_it_covers_half_a_column() {
        let lag = |s: f64, e: f64, n: u64| Lag {
            window: Window {
                start: secs(s),
                end: secs(e),
            },
            lag: n,
        };
        // 10 columns of 1 s: a 10 ms lag is nothing, 2.5 s shows as 2 or 3.
        let spans = [lag(0.5, 0.51, 1), lag(3.0, 5.5, 2), lag(5.5, 6.0, 4)];
        let got = lag_columns(&spans, secs(10.0), 10);
        assert_eq!(got, [(3.0, 5.0, 2), (5.0, 6.0, 4)]);
    }
}
