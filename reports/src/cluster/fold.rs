//! Many nodes on one timeline. Up to [`MAX_LANES`] nodes get a lane each. Beyond that,
//! the nodes with something to show (a fault on them, a suspicion or a
//! declaration against them, a pause, a second generation) get lanes,
//! most eventful first (declared falsely, declared, restarted, suspected
//! most, hit by most faults; then by node), up to `MAX_LANES - 1`, shown
//! in node order; every other node is folded into one last lane, `+k
//! nodes`, which shows the worst state of any of them at each instant,
//! the union of their suspicions and lags, and their markers.

use fdlab_protocol::Nanos;
use fdlab_sim::outcome::Window;

use super::lag::Lag;
use super::lanes::{push_band, Lane, LaneState};

/// Most lanes a timeline draws.
pub const MAX_LANES: usize = 40;

/// Whether a lane has anything besides a quiet life.
fn eventful(lane: &Lane) -> bool {
    !lane.faults.is_empty()
        || !lane.suspected.is_empty()
        || !lane.declarations.is_empty()
        || !lane.generations.is_empty()
        || !lane.withheld.is_empty()
        || lane
            .bands
            .iter()
            .any(|b| b.state != LaneState::Active && b.state != LaneState::Joining)
}

/// Caps the lanes at [`MAX_LANES`] (see the module docs); returns the lanes
/// and the number of nodes folded into the last.
pub(super) fn fold(lanes: Vec<Lane>) -> (Vec<Lane>, usize) {
    if lanes.len() <= MAX_LANES {
        return (lanes, 0);
    }
    let mut ranked: Vec<(usize, &Lane)> = lanes
        .iter()
        .enumerate()
        .filter(|(_, l)| eventful(l))
        .collect();
    ranked.sort_by_key(|&(i, l)| {
        let falsely = l.declarations.iter().filter(|d| d.1).count();
        std::cmp::Reverse((
            falsely,
            l.declarations.len(),
            l.generations.len(),
            l.suspected.len(),
            l.faults.len(),
            std::cmp::Reverse(i),
        ))
    });
    let mut keep: Vec<usize> = ranked.iter().take(MAX_LANES - 1).map(|&(i, _)| i).collect();
    keep.sort_unstable();
    let mut shown = Vec::with_capacity(MAX_LANES);
    let mut rest = Vec::new();
    for (i, lane) in lanes.into_iter().enumerate() {
        if keep.binary_search(&i).is_ok() {
            shown.push(lane);
        } else {
            rest.push(lane);
        }
    }
    let folded = rest.len();
    shown.push(merge(rest));
    (shown, folded)
}

/// One lane of many: the worst state at each instant, the union of the
/// suspicions and lags (the largest lag), every marker.
fn merge(lanes: Vec<Lane>) -> Lane {
    let mut cuts: Vec<Nanos> = lanes
        .iter()
        .flat_map(|l| l.bands.iter().flat_map(|b| [b.window.start, b.window.end]))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut bands = Vec::new();
    let mut at = vec![0usize; lanes.len()];
    for w in cuts.windows(2) {
        let (s, e) = (w[0], w[1]);
        let mut worst = None;
        for (lane, k) in lanes.iter().zip(at.iter_mut()) {
            while *k < lane.bands.len() && lane.bands[*k].window.end <= s {
                *k += 1;
            }
            if let Some(b) = lane.bands.get(*k).filter(|b| b.window.start <= s) {
                worst = worst.max(Some(b.state));
            }
        }
        if let Some(state) = worst {
            push_band(&mut bands, s, e, state);
        }
    }
    let mut lag: Vec<Lag> = lanes.iter().flat_map(|l| l.lag.iter().copied()).collect();
    lag.sort_by_key(|l| (l.window.start, l.window.end));
    let mut merged: Vec<Lag> = Vec::with_capacity(lag.len());
    for l in lag {
        match merged.last_mut() {
            Some(last) if l.window.start <= last.window.end => {
                last.window.end = last.window.end.max(l.window.end);
                last.lag = last.lag.max(l.lag);
            }
            _ => merged.push(l),
        }
    }
    let mut out = Lane {
        name: format!("+{} nodes", lanes.len()),
        bands,
        lag: merged,
        ..Lane::default()
    };
    for l in lanes {
        out.nodes.extend(l.nodes);
        out.suspected.extend(l.suspected);
        out.votes.extend(l.votes);
        out.withheld.extend(l.withheld);
        out.declarations.extend(l.declarations);
        out.generations.extend(l.generations);
    }
    out.suspected = Window::union(out.suspected);
    out.votes.sort_unstable();
    out.withheld.sort_unstable();
    out.declarations.sort_unstable();
    out.generations.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixture::synthetic;
    use super::super::lanes::ClusterTimeline;
    use super::*;

    #[test]
    fn two_hundred_nodes_fold_into_forty_lanes() {
        let (o, log) = synthetic(200, 1, "classic", 60);
        let t = ClusterTimeline::of(&o, &log);
        assert_eq!(t.lanes.len(), MAX_LANES);
        assert_eq!(t.folded, 200 - (MAX_LANES - 1));
        let last = t.lanes.last().unwrap();
        assert_eq!(last.name, format!("+{} nodes", t.folded));
        assert_eq!(last.nodes.len(), t.folded);
        // The declared nodes keep their lanes, in node order.
        let names: Vec<&str> = t.lanes.iter().map(|l| l.name.as_str()).collect();
        for name in ["n5", "n12", "n7", "n15"] {
            assert!(names.contains(&name), "{names:?}");
        }
        let index = |n: &str| names.iter().position(|x| *x == n).unwrap();
        assert!(index("n5") < index("n12"));
        // The folded lane is active, its worst state a pause somewhere.
        assert!(last.bands.iter().any(|b| b.state == LaneState::Paused));
        assert!(!last.suspected.is_empty());
    }
}
