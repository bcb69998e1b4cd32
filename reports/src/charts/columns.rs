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

/// The samples of one pixel column: their range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Column {
    /// Middle of the column, s.
    pub at: f64,
    pub low: f64,
    pub high: f64,
}

impl Column {
    /// Where the score rests in this column: its best value, the lowest of
    /// a score that rises with suspicion (phi, the silence), the highest of
    /// one that falls (`lower_is_worse`: the health score). Where a score
    /// flickers within a pixel (the health score dips and recovers with
    /// every late frame) its last value would be a random pick from the
    /// range, and the line through such picks a zigzag filling the whole
    /// band; the resting level is one steady line, and the range is left to
    /// the band ([`flicker_band`]).
    pub fn rest(&self, lower_is_worse: bool) -> f64 {
        if lower_is_worse {
            self.high
        } else {
            self.low
        }
    }
}

/// The band of the columns whose range is more than `min_range` (below
/// that the line covers it): one stepped outline per run of such columns,
/// each column `half_width` (s) to each side of its middle, for a
/// polygon.
pub fn flicker_band(columns: &[Column], half_width: f64, min_range: f64) -> Vec<Vec<(f64, f64)>> {
    let mut bands = Vec::new();
    let mut run: Vec<&Column> = Vec::new();
    let mut close = |run: &mut Vec<&Column>| {
        if run.is_empty() {
            return;
        }
        let mut outline = Vec::with_capacity(4 * run.len());
        for c in run.iter() {
            outline.push((c.at - half_width, c.high));
            outline.push((c.at + half_width, c.high));
        }
        for c in run.iter().rev() {
            outline.push((c.at + half_width, c.low));
            outline.push((c.at - half_width, c.low));
        }
        bands.push(outline);
        run.clear();
    };
    for c in columns {
        // A gap (an empty column) ends a run too.
        let follows = run
            .last()
            .is_some_and(|p| c.at - p.at <= 2.0 * half_width * 1.5);
        if !follows {
            close(&mut run);
        }
        if c.high - c.low > min_range {
            run.push(c);
        } else {
            close(&mut run);
        }
    }
    close(&mut run);
    bands
}

/// `spans` (s) each made at least `min_width` long, from their start, and
/// merged where they then overlap: a Suspect of a few microseconds would
/// be a hundredth of a pixel wide, drawn as nothing, and a detector that
/// flickers between verdicts would look as if it never left Alive.
pub fn widen(spans: &[(f64, f64)], min_width: f64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(spans.len());
    for &(start, end) in spans {
        let end = end.max(start + min_width);
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// The samples reduced to `columns` columns over `[0, end)`: the range of
/// each, so that every peak and dip survives however dense the inputs.
/// Values are clipped to `clip`; samples that are not numbers are dropped;
/// empty columns are left out.
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
    fn columns_keep_range_and_clip() {
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
                },
                Column {
                    at: 5.5,
                    low: 4.0,
                    high: 4.0,
                }
            ]
        );
        assert!(reduce(&[], s(1), 10, None).is_empty());
    }

    fn column(at: f64, low: f64, high: f64) -> Column {
        Column { at, low, high }
    }

    #[test]
    fn a_flickering_score_rests_on_its_best_value_and_its_range_is_a_band() {
        let c = column(1.0, 0.4, 1.0);
        assert_eq!(c.rest(true), 1.0, "the health score rests high");
        assert_eq!(c.rest(false), 0.4, "phi rests low");
        // Columns 1 s wide: two that flicker, one quiet, one after a gap.
        let columns = [
            column(0.5, 0.5, 1.0),
            column(1.5, 0.6, 1.0),
            column(2.5, 0.98, 1.0),
            column(3.5, 0.2, 0.9),
            column(6.5, 0.3, 0.9),
        ];
        let bands = flicker_band(&columns, 0.5, 0.05);
        assert_eq!(
            bands,
            vec![
                vec![
                    (0.0, 1.0),
                    (1.0, 1.0),
                    (1.0, 1.0),
                    (2.0, 1.0),
                    (2.0, 0.6),
                    (1.0, 0.6),
                    (1.0, 0.5),
                    (0.0, 0.5)
                ],
                vec![(3.0, 0.9), (4.0, 0.9), (4.0, 0.2), (3.0, 0.2)],
                vec![(6.0, 0.9), (7.0, 0.9), (7.0, 0.3), (6.0, 0.3)],
            ]
        );
        assert!(flicker_band(&columns[2..3], 0.5, 0.05).is_empty());
    }

    #[test]
    fn brief_verdicts_are_widened_to_be_seen() {
        // A 1 µs Suspect, one of 5 ms, then two that meet once widened.
        let spans = [(1.0, 1.000001), (2.0, 2.005), (3.0, 3.0001), (3.05, 3.06)];
        assert_eq!(
            widen(&spans, 0.1),
            vec![(1.0, 1.1), (2.0, 2.1), (3.0, 3.15)]
        );
        assert_eq!(widen(&[(0.0, 5.0)], 0.1), vec![(0.0, 5.0)]);
    }
}
