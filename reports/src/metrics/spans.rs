//! Sets of instants as sorted, disjoint half-open spans `[start, end)` of
//! nanoseconds, and the algebra the judging needs on them (union, intersection,
//! difference, measure). Integer arithmetic only, so figures are exact.

/// Half-open spans `[start, end)` in nanoseconds, sorted, disjoint, not
/// adjacent, not empty.
pub(super) type Spans = Vec<(u64, u64)>;

pub(super) fn normalize(mut spans: Spans) -> Spans {
    spans.retain(|&(s, e)| s < e);
    spans.sort_unstable();
    let mut out: Spans = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

pub(super) fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Spans {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while let (Some(&(s1, e1)), Some(&(s2, e2))) = (a.get(i), b.get(j)) {
        let (s, e) = (s1.max(s2), e1.min(e2));
        if s < e {
            out.push((s, e));
        }
        if e1 < e2 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

pub(super) fn subtract(a: &[(u64, u64)], b: &[(u64, u64)]) -> Spans {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        while b.get(j).is_some_and(|&(_, be)| be <= s) {
            j += 1;
        }
        let mut cursor = s;
        for &(bs, be) in b.iter().skip(j) {
            if bs >= e {
                break;
            }
            if bs > cursor {
                out.push((cursor, bs));
            }
            cursor = cursor.max(be);
            if cursor >= e {
                break;
            }
        }
        if cursor < e {
            out.push((cursor, e));
        }
    }
    out
}

pub(super) fn contains(spans: &[(u64, u64)], t: u64) -> bool {
    let i = spans.partition_point(|&(_, e)| e <= t);
    spans.get(i).is_some_and(|&(s, _)| s <= t)
}

pub(super) fn measure(spans: &[(u64, u64)]) -> u64 {
    spans
        .iter()
        .fold(0u64, |acc, &(s, e)| acc.saturating_add(e - s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_algebra() {
        let a = normalize(vec![(5, 10), (0, 3), (3, 4), (9, 12), (20, 20)]);
        assert_eq!(a, vec![(0, 4), (5, 12)]);
        assert_eq!(
            subtract(&a, &[(2, 6), (8, 9), (11, 30)]),
            vec![(0, 2), (6, 8), (9, 11)]
        );
        assert_eq!(
            intersect(&a, &[(2, 6), (8, 9), (11, 30)]),
            vec![(2, 4), (5, 6), (8, 9), (11, 12)]
        );
        assert!(contains(&a, 5) && !contains(&a, 4) && contains(&a, 0));
        assert_eq!(measure(&a), 11);
    }
}
