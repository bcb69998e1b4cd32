//! Which tolerated fault a mistake is put down to, and what a candidate
//! tolerated: per fault class, and for pauses up to which length.
//!
//! A mistake (a false Failed of a detector, a false declaration of a
//! membership judge) about `target`, made by `observer`, beginning at `at`,
//! is put down to a tolerated fault when the fault holds the target or the
//! observer (or every node: a fault that names none) and `at` falls in the
//! fault's window or within [`AFTERMATH`] of its end: a paused observer
//! judges its peers when it resumes, and a detector hears of a fault's end
//! only from the next messages.

use fdlab_protocol::Nanos;
use fdlab_sim::outcome::FaultRecord;
use fdlab_sim::scenario::{Expect, FaultKind};

use super::words::{duration, durations};
use super::Cell;

/// How long after a tolerated fault ends a mistake is still put down to it.
pub const AFTERMATH: Nanos = Nanos::from_secs(5);

/// A mistake to put down: when it began, who made it, about whom.
#[derive(Clone, Copy, Debug)]
pub struct Mistake {
    pub at: Nanos,
    pub observer: u32,
    pub target: u32,
}

/// One tolerated fault, and the mistakes put down to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blamed {
    pub kind: FaultKind,
    /// Its length, clipped to the run.
    pub length: Nanos,
    pub mistakes: usize,
}

/// Every tolerated fault of a run of length `duration`, with the mistakes
/// put down to it (a mistake may be put down to two overlapping faults).
pub fn blame(faults: &[FaultRecord], duration: Nanos, mistakes: &[Mistake]) -> Vec<Blamed> {
    faults
        .iter()
        .filter(|f| f.expect == Expect::Tolerate)
        .map(|f| {
            let end = f.window.end.min(duration);
            debug_assert!(end >= f.window.start, "a fault starts inside its run");
            let holds = |node: u32| f.held.is_empty() || f.held.contains(&node);
            let mistakes = mistakes
                .iter()
                .filter(|x| holds(x.observer) || holds(x.target))
                .filter(|x| x.at >= f.window.start && x.at <= end + AFTERMATH)
                .count();
            Blamed {
                kind: f.kind,
                length: end - f.window.start,
                mistakes,
            }
        })
        .collect()
}

/// Fault kinds in `fdlab list --faults` order, each once.
pub fn kinds_in_order(kinds: impl Iterator<Item = FaultKind>) -> Vec<FaultKind> {
    let seen: Vec<FaultKind> = kinds.collect();
    FaultKind::ALL
        .into_iter()
        .filter(|k| seen.contains(k))
        .collect()
}

/// What one candidate tolerated over a group's runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tolerance {
    pub faults: Vec<Blamed>,
}

impl Tolerance {
    /// Tolerated kinds it met.
    pub fn kinds(&self) -> Vec<FaultKind> {
        kinds_in_order(self.faults.iter().map(|b| b.kind))
    }

    /// Kinds with a mistake put down to them.
    pub fn failed_kinds(&self) -> Vec<FaultKind> {
        kinds_in_order(
            self.faults
                .iter()
                .filter(|b| b.mistakes > 0)
                .map(|b| b.kind),
        )
    }

    /// Pauses: the longest length up to which every pause was tolerated
    /// (zero when the shortest was not), and the shortest that was not;
    /// `None` without pauses.
    pub fn pauses(&self) -> Option<(Nanos, Option<Nanos>)> {
        let mut pauses: Vec<(Nanos, usize)> = self
            .faults
            .iter()
            .filter(|b| b.kind == FaultKind::Pause)
            .map(|b| (b.length, b.mistakes))
            .collect();
        pauses.sort_unstable();
        let first_failed = pauses.iter().find(|(_, n)| *n > 0).map(|&(len, _)| len);
        let tolerated = pauses
            .iter()
            .map(|&(len, _)| len)
            .filter(|&len| first_failed.is_none_or(|f| len < f))
            .max()
            .unwrap_or(Nanos::ZERO);
        (!pauses.is_empty()).then_some((tolerated, first_failed))
    }

    /// How far pauses were tolerated, for ordering: every pause is best.
    pub fn pause_rank(&self) -> Nanos {
        match self.pauses() {
            None | Some((_, None)) => Nanos::MAX,
            Some((up_to, Some(_))) => up_to,
        }
    }

    /// The cell of the class "tolerates `kind`".
    pub fn cell(&self, kind: FaultKind) -> Cell {
        let blamed: usize = self
            .faults
            .iter()
            .filter(|b| b.kind == kind)
            .map(|b| b.mistakes)
            .sum();
        if !self.faults.iter().any(|b| b.kind == kind) {
            return Cell::None;
        }
        match (kind, self.pauses()) {
            (FaultKind::Pause, Some((longest, None))) => Cell::Pass {
                text: format!("yes, to {}", duration(longest)),
            },
            (FaultKind::Pause, Some((up_to, Some(fails)))) if up_to > Nanos::ZERO => {
                let (up_to, fails) = durations(up_to, fails);
                Cell::Partial {
                    text: format!("to {up_to}, not {fails}"),
                }
            }
            (FaultKind::Pause, Some((_, Some(fails)))) => Cell::Fail {
                text: format!("no, {}", duration(fails)),
            },
            _ if blamed == 0 => Cell::Pass { text: "yes".into() },
            _ => Cell::Fail {
                text: format!("{blamed} false"),
            },
        }
    }

    /// What it tolerates, in words: `every pause (to 30 s) and slow-link
    /// faults`; `None` when nothing.
    pub fn phrase(&self) -> Option<String> {
        let failed = self.failed_kinds();
        let mut kinds: Vec<String> = self
            .kinds()
            .into_iter()
            .filter(|k| !failed.contains(k) && *k != FaultKind::Pause)
            .map(|k| format!("{} faults", k.name()))
            .collect();
        match self.pauses() {
            Some((longest, None)) => {
                kinds.insert(0, format!("every pause (to {})", duration(longest)));
            }
            Some((up_to, Some(_))) if up_to > Nanos::ZERO => {
                kinds.insert(0, format!("pauses up to {}", duration(up_to)));
            }
            _ => {}
        }
        (!kinds.is_empty()).then(|| and_list(&kinds))
    }
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_sim::outcome::Window;

    fn pause(node: u32, start: u64, secs: u64) -> FaultRecord {
        FaultRecord {
            kind: FaultKind::Pause,
            target: format!("n{node}"),
            node: Some(node),
            held: vec![node],
            window: Window {
                start: Nanos::from_secs(start),
                end: Nanos::from_secs(start + secs),
            },
            expect: Expect::Tolerate,
        }
    }

    #[test]
    fn a_mistake_is_put_down_to_the_fault_that_holds_its_nodes_then_or_just_before() {
        let faults = [pause(1, 10, 2), pause(2, 30, 5), pause(3, 60, 1)];
        let x = |at: u64, observer: u32, target: u32| Mistake {
            at: Nanos::from_secs(at),
            observer,
            target,
        };
        // At 11 s about n1 (during), at 38 s by n2 (3 s after it resumed),
        // at 70 s about n3 (9 s after: too late).
        let blamed = blame(
            &faults,
            Nanos::from_secs(100),
            &[x(11, 0, 1), x(38, 2, 0), x(70, 0, 3)],
        );
        let counts: Vec<usize> = blamed.iter().map(|b| b.mistakes).collect();
        assert_eq!(counts, [1, 1, 0]);
        let t = Tolerance { faults: blamed };
        // The 1 s pause was tolerated, the 2 s one was not.
        assert_eq!(
            t.pauses(),
            Some((Nanos::from_secs(1), Some(Nanos::from_secs(2))))
        );
        assert_eq!(
            t.cell(FaultKind::Pause),
            Cell::Partial {
                text: "to 1.0 s, not 2.0 s".into()
            }
        );
        assert_eq!(t.cell(FaultKind::Loss), Cell::None);
    }

    #[test]
    fn pauses_are_tolerated_up_to_the_longest_before_the_first_failed() {
        let t = Tolerance {
            faults: [(1, 0), (2, 0), (5, 3), (30, 9)]
                .map(|(secs, mistakes)| Blamed {
                    kind: FaultKind::Pause,
                    length: Nanos::from_secs(secs),
                    mistakes,
                })
                .to_vec(),
        };
        assert_eq!(t.pause_rank(), Nanos::from_secs(2));
        assert_eq!(
            t.cell(FaultKind::Pause),
            Cell::Partial {
                text: "to 2.0 s, not 5.0 s".into()
            }
        );
        assert_eq!(t.phrase().as_deref(), Some("pauses up to 2.0 s"));
    }
}
