//! A score series reduced to what a timeline can draw: one pixel column of
//! values per horizontal pixel, the stretches when the monitor was awake,
//! and the periods of each verdict. Pure functions, kept apart from the
//! drawing in [`super::timeline`] so that they can be tested on their own.

use fdlab_protocol::{Nanos, Verdict};
use fdlab_sim::outcome::Window;

/// The spans of `[0, end)` where the verdict is `which` (seconds).
pub fn verdict_spans(changes: &[(Nanos, Verdict)], end: Nanos, which: Verdict) -> Vec<(f64, f64)> {
    let mut spans = Vec::new();
    let mut from = Nanos::ZERO;
    let mut current = Verdict::Alive;
    for &(t, v) in changes {
        let t = t.min(end);
        if current == which && t > from {
            spans.push((from.as_secs_f64(), t.as_secs_f64()));
        }
        if t >= from {
            from = t;
        }
        current = v;
    }
    if current == which && end > from {
        spans.push((from.as_secs_f64(), end.as_secs_f64()));
    }
    spans
}

/// The runs of `samples` outside the `frozen` windows (bounds included:
/// the instant of a resume still shows the state from before the pause).
pub fn awake<'a>(samples: &'a [(Nanos, f64)], frozen: &[Window]) -> Vec<&'a [(Nanos, f64)]> {
    let asleep = |t: Nanos| frozen.iter().any(|w| w.start <= t && t <= w.end);
    let mut parts = Vec::new();
    let mut start = None;
    for (i, &(t, _)) in samples.iter().enumerate() {
        match (asleep(t), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                parts.push(&samples[s..i]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        parts.push(&samples[s..]);
    }
    parts
}

/// The samples of one pixel column: its range and its last value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Column {
    /// Middle of the column, s.
    pub at: f64,
    pub low: f64,
    pub high: f64,
    pub last: f64,
}

/// The samples reduced to `columns` columns over `[0, end)`: the range of
/// each (drawn as a band, so every peak and dip survives however dense the
/// inputs) and its last value (drawn as the line). Values are clipped to
/// `clip`; samples that are not numbers are dropped; empty columns are left
/// out.
pub fn reduce(
    samples: &[(Nanos, f64)],
    end: Nanos,
    columns: u32,
    clip: Option<f64>,
) -> Vec<Column> {
    let clip = clip.unwrap_or(f64::INFINITY);
    let width = (end.as_nanos() / u64::from(columns.max(1))).max(1);
    let mut out: Vec<Column> = Vec::new();
    let mut current: Option<(u64, Column)> = None;
    for &(t, v) in samples {
        if v.is_nan() {
            continue;
        }
        let v = v.min(clip);
        let index = t.as_nanos() / width;
        match &mut current {
            Some((i, c)) if *i == index => {
                c.low = c.low.min(v);
                c.high = c.high.max(v);
                c.last = v;
            }
            _ => {
                if let Some((_, c)) = current.take() {
                    out.push(c);
                }
                let at = Nanos(index.saturating_mul(width).saturating_add(width / 2)).min(end);
                current = Some((
                    index,
                    Column {
                        at: at.as_secs_f64(),
                        low: v,
                        high: v,
                        last: v,
                    },
                ));
            }
        }
    }
    if let Some((_, c)) = current {
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: u64) -> Nanos {
        Nanos::from_secs(v)
    }

    #[test]
    fn verdict_spans_cover_each_period_once() {
        let changes = [
            (s(1), Verdict::Suspect),
            (s(2), Verdict::Failed),
            (s(4), Verdict::Alive),
            (s(6), Verdict::Suspect),
        ];
        assert_eq!(
            verdict_spans(&changes, s(10), Verdict::Suspect),
            vec![(1.0, 2.0), (6.0, 10.0)]
        );
        assert_eq!(
            verdict_spans(&changes, s(10), Verdict::Failed),
            vec![(2.0, 4.0)]
        );
        assert_eq!(
            verdict_spans(&changes, s(3), Verdict::Failed),
            vec![(2.0, 3.0)]
        );
        assert!(verdict_spans(&[], s(3), Verdict::Failed).is_empty());
    }

    #[test]
    fn frozen_windows_cut_the_curve() {
        let samples: Vec<(Nanos, f64)> = (0..10).map(|i| (s(i), i as f64)).collect();
        let frozen = [Window {
            start: s(3),
            end: s(5),
        }];
        let parts = awake(&samples, &frozen);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].last(), Some(&(s(2), 2.0)));
        assert_eq!(parts[1].first(), Some(&(s(6), 6.0)));
        assert_eq!(awake(&samples, &[]).len(), 1);
        assert!(awake(&[], &frozen).is_empty());
    }

    #[test]
    fn columns_keep_range_and_last_and_clip() {
        // 1,000 samples in the first of 10 one-second columns, one in the sixth.
        let mut samples: Vec<(Nanos, f64)> = (0..1_000).map(|i| (Nanos(i), 1.0)).collect();
        samples[500].1 = 9.0;
        samples[700].1 = -1.0;
        samples[999].1 = f64::NAN;
        samples.push((s(5), f64::INFINITY));
        let out = reduce(&samples, s(10), 10, Some(4.0));
        assert_eq!(
            out,
            vec![
                Column {
                    at: 0.5,
                    low: -1.0,
                    high: 4.0,
                    last: 1.0
                },
                Column {
                    at: 5.5,
                    low: 4.0,
                    high: 4.0,
                    last: 4.0
                }
            ]
        );
        assert!(reduce(&[], s(1), 10, None).is_empty());
    }
}
