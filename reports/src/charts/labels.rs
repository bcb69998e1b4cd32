//! Names written beside points, nudged apart so that none covers another.
//!
//! Points of close values (three policies with no live-peer eviction and
//! lock latencies within a millisecond; judges a second apart) put their
//! names on top of each other (`rustfs-breaker`/`rustfs`/`dsync`,
//! `classic`/`phi-5s`/`probe-orleans`). Each name is placed in turn, in
//! the order given: where it belongs, or if that covers a name already
//! placed, one line higher, and so on. Deterministic: the same points give
//! the same places.

/// Width of a character of a name, as a share of its font size (a
/// sans-serif's average, a little generous so that estimates err wide).
const CHAR_WIDTH: f64 = 0.6;

/// A name to place, in pixels: where its baseline starts (or ends, for a
/// name written to the left of its point), and its size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Label {
    /// The x of the name's anchor, px.
    pub(crate) x: f64,
    /// Its baseline where it belongs, px (down is larger).
    pub(crate) y: f64,
    /// Characters in the name.
    pub(crate) chars: usize,
    /// Font size, px: also the height of a line.
    pub(crate) size: f64,
    /// The name ends at `x` (written to the left of its point).
    pub(crate) ends_at_x: bool,
}

impl Label {
    /// Left and right ends of the name, px.
    pub(crate) fn span(&self) -> (f64, f64) {
        let width = self.chars as f64 * self.size * CHAR_WIDTH;
        if self.ends_at_x {
            (self.x - width, self.x)
        } else {
            (self.x, self.x + width)
        }
    }

    /// Whether this name, with its baseline at `y`, covers `other`'s at
    /// `other_y`.
    fn covers(&self, y: f64, other: &Label, other_y: f64) -> bool {
        let (a0, a1) = self.span();
        let (b0, b1) = other.span();
        let apart_x = a1 <= b0 || b1 <= a0;
        let apart_y = (y - other_y).abs() >= self.size.max(other.size);
        !(apart_x || apart_y)
    }
}

/// The baseline of each name, px, in the order given: its own, or raised
/// by whole lines until it covers no name placed before it.
pub(crate) fn place(labels: &[Label]) -> Vec<f64> {
    let mut placed: Vec<f64> = Vec::with_capacity(labels.len());
    for (i, label) in labels.iter().enumerate() {
        let mut y = label.y;
        while labels[..i]
            .iter()
            .zip(&placed)
            .any(|(other, &oy)| label.covers(y, other, oy))
        {
            y -= label.size;
        }
        placed.push(y);
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: f64, y: f64, chars: usize) -> Label {
        Label {
            x,
            y,
            chars,
            size: 11.0,
            ends_at_x: false,
        }
    }

    #[test]
    fn close_names_are_stacked_and_far_ones_stay() {
        // rustfs-breaker, rustfs and dsync a few pixels apart on one line.
        let labels = [
            at(300.0, 400.0, 14),
            at(305.0, 400.0, 6),
            at(330.0, 400.0, 5),
        ];
        let y = place(&labels);
        assert_eq!(y, vec![400.0, 389.0, 378.0]);
        // Far apart: each where it belongs.
        let labels = [
            at(100.0, 400.0, 6),
            at(300.0, 400.0, 6),
            at(100.0, 300.0, 6),
        ];
        assert_eq!(place(&labels), vec![400.0, 400.0, 300.0]);
    }

    #[test]
    fn a_name_to_the_left_of_its_point_covers_what_is_to_its_left() {
        let left = Label {
            ends_at_x: true,
            ..at(300.0, 400.0, 10)
        };
        let y = place(&[at(250.0, 400.0, 3), left]);
        assert_eq!(y, vec![400.0, 389.0]);
        let y = place(&[at(301.0, 400.0, 3), left]);
        assert_eq!(y, vec![400.0, 400.0]);
    }
}
