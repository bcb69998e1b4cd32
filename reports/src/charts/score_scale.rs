//! How each detector kind's score is drawn in a timeline: its name and
//! unit, its thresholds, where it is clipped, and which way is worse.
//!
//! The score is each detector's own figure (phi, the health score, a fixed
//! timeout's silence since the last heartbeat in ms, an adaptive probe's
//! learned timeout in ms), so each panel has its own vertical axis. phi and
//! the silence are drawn up to twice their Failed threshold: past that the
//! detector has long decided, and the curve would flatten everything that
//! matters.

use fdlab_protocol::DetectorConfig;

/// phi, and a fixed timeout's silence, are drawn up to this multiple of
/// their Failed threshold.
const CLIP_PER_THRESHOLD: f64 = 2.0;
/// Top of the health score's axis (the score lies in [0, 1]).
const HEALTH_TOP: f64 = 1.05;

/// How a detector's score is drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreScale {
    /// What the score is, with its unit: `phi`, `health score`,
    /// `silence (ms)`, `probe timeout (ms)`.
    pub name: String,
    /// Horizontal lines: `(label, score)`.
    pub thresholds: Vec<(String, f64)>,
    /// Scores above this are drawn at it.
    pub clip: Option<f64>,
    /// Top of the axis where the kind fixes it (its clip, or the top of the
    /// health score's range); else it follows the data.
    pub top: Option<f64>,
    /// The score falls as the detector grows suspicious (the health score);
    /// the others rise.
    pub lower_is_worse: bool,
}

/// A scale that rises with suspicion, drawn to `clip` if there is one.
pub(crate) fn rising(name: &str, thresholds: Vec<(String, f64)>, clip: Option<f64>) -> ScoreScale {
    ScoreScale {
        name: name.into(),
        thresholds,
        clip,
        top: clip,
        lower_is_worse: false,
    }
}

/// How a detector's score is named, where its thresholds lie, where it is
/// clipped and which way is worse, by kind (a two-stage detector shows its
/// confirmer's score).
pub fn score_scale(config: &DetectorConfig) -> ScoreScale {
    match config {
        DetectorConfig::PhiAccrual(c) => {
            let mut lines = vec![(format!("Failed at {}", c.threshold), c.threshold)];
            if let Some(s) = c.suspect_threshold {
                lines.push((format!("Suspect at {s}"), s));
            }
            rising("phi", lines, Some(c.threshold * CLIP_PER_THRESHOLD))
        }
        DetectorConfig::DataflowDecay(c) => ScoreScale {
            name: "health score".into(),
            thresholds: vec![
                (
                    format!("Suspect below {}", c.suspect_below),
                    c.suspect_below,
                ),
                (format!("Failed below {}", c.fail_below), c.fail_below),
            ],
            clip: None,
            top: Some(HEALTH_TOP),
            lower_is_worse: true,
        },
        // The silence rises between heartbeats against the timeout: the
        // verdict is Failed once it is above.
        DetectorConfig::FixedTimeout(c) => {
            let timeout = c.timeout.as_millis_f64();
            let mut lines = vec![(format!("Failed after {} ms", trim_number(timeout)), timeout)];
            if let Some(s) = c.suspect_after {
                let s = s.as_millis_f64();
                lines.push((format!("Suspect after {} ms", trim_number(s)), s));
            }
            rising("silence (ms)", lines, Some(timeout * CLIP_PER_THRESHOLD))
        }
        // Its verdict counts missed probes: no line in time to draw.
        DetectorConfig::AdaptiveProbe(_) => rising("probe timeout (ms)", Vec::new(), None),
        DetectorConfig::TwoStage(c) => score_scale(&c.confirm),
    }
}

/// A panel's axis name: the score's name, and where it is clipped
/// (`phi (to 16)`, `silence (ms, to 6000)`).
pub(crate) fn axis_name(score_name: &str, clip: Option<f64>) -> String {
    match (clip, score_name.strip_suffix(')')) {
        (None, _) => score_name.to_string(),
        (Some(clip), Some(open)) => format!("{open}, to {})", trim_number(clip)),
        (Some(clip), None) => format!("{score_name} (to {})", trim_number(clip)),
    }
}

/// A tick value with no trailing zeros (`3000`, `0.5`).
pub(crate) fn trim_number(v: f64) -> String {
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::Nanos;

    #[test]
    fn tick_values_have_no_trailing_zeros() {
        assert_eq!(trim_number(3000.0), "3000");
        assert_eq!(trim_number(0.5), "0.5");
    }

    #[test]
    fn a_fixed_timeout_is_drawn_as_its_silence_against_the_timeout() {
        let config = DetectorConfig::FixedTimeout(fdlab_protocol::fixed::FixedTimeoutConfig {
            suspect_after: Some(Nanos::from_millis(2_000)),
            ..Default::default()
        });
        let scale = score_scale(&config);
        assert_eq!(scale.name, "silence (ms)");
        assert!(!scale.lower_is_worse);
        assert_eq!(
            scale.thresholds,
            [
                ("Failed after 3000 ms".to_string(), 3000.0),
                ("Suspect after 2000 ms".to_string(), 2000.0)
            ]
        );
        assert_eq!(axis_name(&scale.name, scale.clip), "silence (ms, to 6000)");
        assert_eq!(axis_name("phi", Some(16.0)), "phi (to 16)");
        assert_eq!(axis_name("health score", None), "health score");
    }
}
