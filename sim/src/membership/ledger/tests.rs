//! Tests of [`super`]: the ledger's false positives, declarations and unresponsive time.

use super::*;

fn silo(node: u32) -> SiloId {
    SiloId {
        node,
        generation: 0,
    }
}

/// 100 SWIM members, all running.
fn cluster() -> Ledger {
    let mut l = Ledger::new(100, false);
    for n in 0..100 {
        l.started(Nanos::ZERO, silo(n), false, true);
    }
    l
}

/// The Lifeguard paper's count (SPEC §8.3): a false Dead that spreads
/// to the 99 other members is 99 events, one held by one member alone
/// is 1, split by the observer's health; a crashed member's is none.
#[test]
fn false_positive_events_are_counted_at_every_observer() {
    let mut l = cluster();
    let at = Nanos::from_secs(10);
    let target = MemberId(5);
    l.swim_event(
        at,
        silo(1),
        SwimEvent::Declared {
            target,
            incarnation: 0,
        },
    );
    for n in (0..100).filter(|&n| n != 1 && n != 5) {
        l.swim_event(at, silo(n), SwimEvent::LearnedDead { target });
    }
    assert_eq!(l.counts.observer_false_healthy, 99);
    assert_eq!(l.counts.observer_false_starved, 0);
    // One member's private declaration, by a starved observer.
    l.impaired(8, true);
    l.swim_event(
        at,
        silo(8),
        SwimEvent::Declared {
            target: MemberId(9),
            incarnation: 0,
        },
    );
    assert_eq!(l.counts.observer_false_starved, 1);
    // A crashed member's death is no false positive.
    l.stopped(at, silo(20), NodeChange::Crashed, None);
    l.swim_event(
        at,
        silo(2),
        SwimEvent::LearnedDead {
            target: MemberId(20),
        },
    );
    assert_eq!(
        (
            l.counts.observer_false_healthy,
            l.counts.observer_false_starved
        ),
        (99, 1)
    );
}

/// A starved member may handle its suspicion's timeout and the
/// refutation in one batch: the declaration cost 0 s, not the rest of
/// the run (0 s once stood for "not taken back yet").
#[test]
fn a_declaration_revived_at_once_costs_nothing() {
    let mut l = cluster();
    let at = Nanos::from_secs(10);
    let target = MemberId(5);
    let declared = SwimEvent::Declared {
        target,
        incarnation: 0,
    };
    l.swim_event(at, silo(1), declared);
    let revived = SwimEvent::Revived {
        target,
        incarnation: 1,
    };
    l.swim_event(at, silo(1), revived);
    // Another, never taken back, costs the rest of the run.
    l.swim_event(
        at,
        silo(1),
        SwimEvent::Declared {
            target: MemberId(6),
            incarnation: 0,
        },
    );
    l.finish(Nanos::from_secs(100));
    let destroyed: Vec<Nanos> = l.declarations.iter().map(|d| d.destroyed).collect();
    assert_eq!(destroyed, [Nanos::ZERO, Nanos::from_secs(90)]);
}

/// A false declaration's time in force splits into the time its target
/// could not answer (paused; busy with one event for a second or more)
/// and the rest; a pause within a long event counts once.
#[test]
fn unresponsive_time_is_paused_or_long_busy_time_in_force() {
    let mut l = cluster();
    let t = Nanos::from_secs;
    let w = |a: u64, b: u64| Window {
        start: t(a),
        end: t(b),
    };
    let target = MemberId(5);
    l.swim_event(
        t(10),
        silo(1),
        SwimEvent::Declared {
            target,
            incarnation: 0,
        },
    );
    l.node_change(t(20), silo(5), NodeChange::Paused);
    l.node_change(t(50), silo(5), NodeChange::Resumed);
    l.busy(5, w(45, 52)); // overlaps the pause: 50..52 more
    l.busy(
        5,
        Window {
            start: t(60),
            end: t(60) + Nanos::from_millis(900),
        },
    ); // under a second: answering
    l.busy(5, w(95, 130)); // in force until 100 only
    l.swim_event(
        t(100),
        silo(1),
        SwimEvent::Revived {
            target,
            incarnation: 1,
        },
    );
    l.finish(t(200));
    let d = &l.declarations[0];
    assert_eq!(d.destroyed, t(90));
    assert_eq!(d.unresponsive, t(30 + 2 + 5));
}
