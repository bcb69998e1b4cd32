//! The figures a membership run is compared on, from a real run's rows and
//! from a simulated run's outcome alike (SPEC §8.3, §12): crash → first
//! Dead and → every view, false-positive events per observer (the Lifeguard
//! paper's count, healthy and starved observers apart), refutations,
//! suspicions, messages per member per second.

use std::collections::{BTreeMap, BTreeSet};

use fdlab_protocol::Nanos;
use fdlab_sim::faults::Action;
use fdlab_sim::membership::outcome::ClusterOutcome;

use super::rows::{Event, Row};

/// One run's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// Per crash, seconds from the crash to the first member's Dead.
    pub first_dead: Vec<Option<f64>>,
    /// Per crash, seconds from the crash until every member still running
    /// holds it Dead.
    pub all_views: Vec<Option<f64>>,
    /// False-positive events (a member moved a running member to Dead) at
    /// healthy observers and at paused or starved ones.
    pub false_healthy: u64,
    pub false_starved: u64,
    pub refutations: u64,
    pub suspicions: u64,
    /// Messages (UDP packets, TCP streams) per member per second of its
    /// running time.
    pub messages_per_member_s: f64,
}

/// When each node was crashed, and when it was paused or starved, from the
/// actions of the schedule the run injected.
pub struct Truth {
    crashes: BTreeMap<u32, Nanos>,
    impaired: BTreeMap<u32, Vec<(Nanos, Nanos)>>,
    members: u32,
    duration: Nanos,
}

impl Truth {
    pub fn new(actions: &[(Nanos, Action)], members: u32, duration: Nanos) -> Truth {
        let mut crashes = BTreeMap::new();
        let mut impaired: BTreeMap<u32, Vec<(Nanos, Nanos)>> = BTreeMap::new();
        let mut open: BTreeMap<(u32, bool), Nanos> = BTreeMap::new();
        for &(at, action) in actions {
            match action {
                Action::Crash { node } => {
                    crashes.entry(node).or_insert(at);
                }
                Action::PauseStart { node, .. } => {
                    open.entry((node, false)).or_insert(at);
                }
                Action::DegradeStart { node, .. } => {
                    open.entry((node, true)).or_insert(at);
                }
                Action::PauseEnd { node } | Action::DegradeEnd { node } => {
                    let degrade = matches!(action, Action::DegradeEnd { .. });
                    if let Some(from) = open.remove(&(node, degrade)) {
                        impaired.entry(node).or_default().push((from, at));
                    }
                }
                _ => {}
            }
        }
        for ((node, _), from) in open {
            impaired.entry(node).or_default().push((from, duration));
        }
        Truth {
            crashes,
            impaired,
            members: members.max(1),
            duration,
        }
    }

    fn running(&self, node: u32, at: Nanos) -> bool {
        self.crashes.get(&node).is_none_or(|&c| at < c)
    }

    fn impaired(&self, node: u32, at: Nanos) -> bool {
        self.impaired
            .get(&node)
            .is_some_and(|w| w.iter().any(|&(a, b)| a <= at && at < b))
    }

    /// A real run's figures from its rows.
    pub fn real(&self, rows: &[Row]) -> Figures {
        let mut f = Figures::default();
        // Each observer's first Dead of each subject after its crash.
        let mut dead_at: BTreeMap<(u32, u32), Nanos> = BTreeMap::new();
        // Per agent, its `sent` rows: (time, count).
        let mut sent: BTreeMap<u32, Vec<(Nanos, u64)>> = BTreeMap::new();
        for row in rows.iter().filter(|r| r.at < self.duration) {
            match (row.event, row.subject) {
                (Event::Dead, Some(s)) => {
                    if self.running(s, row.at) {
                        if self.impaired(row.observer, row.at) {
                            f.false_starved += 1;
                        } else {
                            f.false_healthy += 1;
                        }
                    } else {
                        dead_at.entry((s, row.observer)).or_insert(row.at);
                    }
                }
                (Event::Refute { .. }, _) => f.refutations += 1,
                (Event::Suspect { .. }, _) => f.suspicions += 1,
                (Event::Sent { packets, streams }, _) => {
                    sent.entry(row.observer)
                        .or_default()
                        .push((row.at, packets + streams));
                }
                _ => {}
            }
        }
        for (&node, &at) in &self.crashes {
            let seen: Vec<Nanos> = dead_at
                .range((node, 0)..=(node, u32::MAX))
                .map(|(_, &t)| t)
                .collect();
            f.first_dead.push(seen.iter().min().map(|&t| secs(t - at)));
            let observers: BTreeSet<u32> = (0..self.members)
                .filter(|&o| o != node && self.running(o, self.duration))
                .collect();
            let all = observers
                .iter()
                .map(|&o| dead_at.get(&(node, o)).copied())
                .collect::<Option<Vec<Nanos>>>();
            f.all_views
                .push(all.and_then(|t| t.into_iter().max()).map(|t| secs(t - at)));
        }
        // Counted between each agent's first and last `sent` row (one a
        // second), over the time between them.
        let (mut count, mut time) = (0u64, 0.0);
        for rows in sent.values() {
            if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
                count += last.1.saturating_sub(first.1);
                time += secs(last.0 - first.0);
            }
        }
        f.messages_per_member_s = if time > 0.0 { count as f64 / time } else { 0.0 };
        f
    }

    /// A simulated run's figures, counted as [`Truth::real`] counts them.
    pub fn simulated(&self, outcome: &ClusterOutcome) -> Figures {
        let counts = &outcome.counts;
        let node_s = outcome.node_time.as_nanos_f64() / 1e9;
        Figures {
            first_dead: outcome
                .crashes
                .iter()
                .map(|c| c.declared.map(|t| secs(t - c.at)))
                .collect(),
            all_views: outcome
                .crashes
                .iter()
                .map(|c| c.agreed.map(|t| secs(t - c.at)))
                .collect(),
            false_healthy: counts.observer_false_healthy,
            false_starved: counts.observer_false_starved,
            refutations: counts.refutations,
            suspicions: outcome.suspicions.len() as u64,
            messages_per_member_s: if node_s > 0.0 {
                counts.messages as f64 / node_s
            } else {
                0.0
            },
        }
    }
}

fn secs(d: Nanos) -> f64 {
    d.as_nanos_f64() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(at_ms: u64, observer: u32, event: Event, subject: Option<u32>) -> Row {
        Row {
            at: Nanos::from_millis(at_ms),
            observer,
            event,
            subject,
        }
    }

    #[test]
    fn real_figures_count_as_the_model_does() {
        // n2 crashes at 1 s; n3 is paused from 2 s to 3 s.
        let actions = [
            (Nanos::from_secs(1), Action::Crash { node: 2 }),
            (
                Nanos::from_secs(2),
                Action::PauseStart {
                    node: 3,
                    planned: None,
                },
            ),
            (Nanos::from_secs(3), Action::PauseEnd { node: 3 }),
        ];
        let truth = Truth::new(&actions, 4, Nanos::from_secs(10));
        let rows = vec![
            row(4_000, 0, Event::Dead, Some(2)),
            row(4_100, 1, Event::Dead, Some(2)),
            // n3 resumed: a healthy observer again by then.
            row(5_000, 3, Event::Dead, Some(2)),
            // n1 declares n0, running: a false event at a healthy observer;
            // n3 declares n1 while paused (its backlog): a starved one.
            row(6_000, 1, Event::Dead, Some(0)),
            row(2_500, 3, Event::Dead, Some(1)),
            row(6_100, 0, Event::Refute { dead: true }, None),
            row(3_000, 1, Event::Suspect { probe: false }, None),
            row(
                1_000,
                0,
                Event::Sent {
                    packets: 10,
                    streams: 0,
                },
                None,
            ),
            row(
                3_000,
                0,
                Event::Sent {
                    packets: 28,
                    streams: 2,
                },
                None,
            ),
            // Past the end: not counted.
            row(11_000, 1, Event::Dead, Some(0)),
        ];
        let f = truth.real(&rows);
        assert_eq!(f.first_dead, vec![Some(3.0)]);
        assert_eq!(f.all_views, vec![Some(4.0)]);
        assert_eq!((f.false_healthy, f.false_starved), (1, 1));
        assert_eq!((f.refutations, f.suspicions), (1, 1));
        assert!((f.messages_per_member_s - 10.0).abs() < 1e-9);
        // One running member never hears: no agreement.
        let f = truth.real(&rows[..2]);
        assert_eq!(f.first_dead, vec![Some(3.0)]);
        assert_eq!(f.all_views, vec![None]);
    }
}
