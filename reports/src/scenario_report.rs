//! One detector scenario as the page and `report.md` draw it: its metrics,
//! what it is, and its two charts. Built by [`crate::report`], drawn by
//! [`crate::html`] and [`crate::markdown`].

use crate::charts::Chart;
use crate::metrics::ScenarioMetrics;

/// One scenario as the reports show it.
pub struct ScenarioReport<'a> {
    pub metrics: &'a ScenarioMetrics,
    pub description: &'a str,
    /// How a command line names the scenario ([`About::invoked_as`]).
    pub invoked_as: &'a str,
    /// Every detector's settings, `(name, settings)`.
    pub settings: &'a [(String, String)],
    /// An id for links within `index.html`, unique in the report.
    pub anchor: String,
    /// The two charts, or the lines that stand in for them.
    pub cdf: Chart,
    pub tradeoff: Chart,
    /// Their files, relative to the output directory (written only for a
    /// chart that is drawn).
    pub cdf_file: String,
    pub tradeoff_file: String,
}

impl ScenarioReport<'_> {
    /// The charts drawn, each with its file: none, one or both.
    pub fn drawn(&self) -> Vec<(&str, &str)> {
        [
            (&self.cdf, &self.cdf_file),
            (&self.tradeoff, &self.tradeoff_file),
        ]
        .into_iter()
        .filter_map(|(chart, file)| Some((chart.svg()?, file.as_str())))
        .collect()
    }

    /// The lines that stand in for charts with nothing to plot, each once
    /// (two empty charts of the same cause are one line).
    pub fn nothing_lines(&self) -> Vec<&str> {
        let mut lines: Vec<&str> = Vec::new();
        for line in [self.cdf.nothing(), self.tradeoff.nothing()]
            .into_iter()
            .flatten()
        {
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        lines
    }
}
