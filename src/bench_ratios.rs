//! The table `fdlab bench` ends with: each run's pace against the bare
//! binary-heap loop timed in the same invocation (a ratio holds on any
//! machine where absolute times do not), with issue 37's target beside
//! the ratios it sets. docs/perf.md keeps the same table, measured.

/// What a ratio should be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    AtLeast(f64),
    AtMost(f64),
}

impl Target {
    fn met(self, ratio: f64) -> bool {
        match self {
            Target::AtLeast(t) => ratio >= t,
            Target::AtMost(t) => ratio <= t,
        }
    }

    fn text(self) -> String {
        match self {
            Target::AtLeast(t) => format!(">= {t:.2}x"),
            Target::AtMost(t) => format!("<= {t:.2}x"),
        }
    }
}

struct Row {
    what: String,
    ratio: f64,
    target: Option<Target>,
}

/// The ratios measured so far in this invocation.
#[derive(Default)]
pub struct Ratios(Vec<Row>);

impl Ratios {
    /// Notes `what` at `ratio`, with its target if it has one.
    pub fn add(&mut self, what: impl Into<String>, ratio: f64, target: Option<Target>) {
        self.0.push(Row {
            what: what.into(),
            ratio,
            target,
        });
    }

    /// The table, or nothing when no part measured a ratio.
    pub fn lines(&self) -> Vec<String> {
        if self.0.is_empty() {
            return Vec::new();
        }
        let mut lines = vec![
            "ratios against the bare heap loop of this run (targets: issue 37, docs/perf.md):"
                .to_string(),
        ];
        for row in &self.0 {
            let verdict = row.target.map_or(String::new(), |t| {
                let met = if t.met(row.ratio) { "met" } else { "NOT met" };
                format!("  target {}: {met}", t.text())
            });
            lines.push(format!("  {:<70} {:>6.2}x{verdict}", row.what, row.ratio));
        }
        lines
    }

    pub fn print(&self) {
        for line in self.lines() {
            say!("{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_say_whether_their_target_is_met() {
        let mut r = Ratios::default();
        assert!(r.lines().is_empty());
        r.add("mesh", 0.92, Some(Target::AtLeast(1.0)));
        r.add("dataflow", 1.7, Some(Target::AtMost(1.0)));
        r.add("madsim", 2.04, None);
        r.add("edge", 1.0, Some(Target::AtLeast(1.0)));
        let lines = r.lines();
        assert_eq!(lines.len(), 5);
        assert!(
            lines[1].ends_with("0.92x  target >= 1.00x: NOT met"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].ends_with("1.70x  target <= 1.00x: NOT met"),
            "{}",
            lines[2]
        );
        assert!(lines[3].ends_with("2.04x"), "{}", lines[3]);
        assert!(lines[4].ends_with("target >= 1.00x: met"), "{}", lines[4]);
    }
}
