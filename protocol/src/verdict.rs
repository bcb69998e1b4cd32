//! What a detector says about its peer.

use std::fmt;

/// A detector's current opinion of the monitored peer. Ordered by severity, so
/// `Alive < Suspect < Failed`, and "the verdict got worse" is a comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    #[default]
    Alive,
    Suspect,
    Failed,
}

impl Verdict {
    /// The lower-case name used in every output file.
    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Alive => "alive",
            Verdict::Suspect => "suspect",
            Verdict::Failed => "failed",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
