//! Property tests of the membership simulator over random clusters and
//! fault mixes (SPEC §8.1 acceptance), for Orleans 10.2 and main alike: no
//! live silo declared Dead without faults; a crashed silo always declared
//! while the table is up; never two generations of one node Active;
//! determinism and no panic.

mod common;

use common::{mesh, ms};
use fdlab_protocol::membership::{OrleansConfig, OrleansVersion};
use fdlab_protocol::probe::AdaptiveProbeConfig;
use fdlab_protocol::DetectorConfig;
use fdlab_sim::membership::{judges, run};
use fdlab_sim::scenario::{
    ClockSetup, DetectorSetup, Direction, Fault, FaultKind, MembershipSetup, SignedNanos,
};
use fdlab_sim::valid::ValidScenario;
use proptest::prelude::*;

fn probe_judge() -> DetectorSetup {
    DetectorSetup {
        name: "probe".into(),
        config: DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig::default()),
    }
}

/// Both Orleans versions.
const VERSIONS: [OrleansVersion; 2] = [OrleansVersion::V10_2, OrleansVersion::Main];

fn cluster(
    version: OrleansVersion,
    nodes: u32,
    seconds: u64,
    faults: Vec<Fault>,
    clocks: Vec<ClockSetup>,
) -> ValidScenario {
    let mut s = mesh(nodes, vec![probe_judge()], Vec::new());
    s.duration = ms(seconds * 1_000);
    s.faults = faults;
    s.clocks = clocks;
    // Orleans with two judges, and the whole cluster under SWIM and
    // Lifeguard: every property holds for each.
    s.membership = Some(MembershipSetup {
        judges: Some(
            ["classic", "probe", "swim", "lifeguard"]
                .map(String::from)
                .to_vec(),
        ),
        orleans: OrleansConfig::of(version),
        ..Default::default()
    });
    ValidScenario::new(s).expect("a valid scenario")
}

/// One random fault on a random node of `nodes`, within `[20 s, 200 s)`.
fn any_fault(nodes: u32) -> impl Strategy<Value = Fault> {
    (0..7u8, 0..nodes, 0..nodes, 20u64..200, 1u64..60).prop_map(move |(k, a, b, at, len)| {
        let node = Some(format!("n{a}"));
        let base = Fault {
            at: Some(ms(at * 1_000)),
            duration: Some(ms(len * 1_000)),
            ..Default::default()
        };
        match k {
            0 => Fault {
                kind: Some(FaultKind::Crash),
                node,
                ..base
            },
            1 => Fault {
                kind: Some(FaultKind::Pause),
                node,
                ..base
            },
            2 => Fault {
                kind: Some(FaultKind::Partition),
                node,
                direction: Some(if b % 2 == 0 {
                    Direction::Both
                } else {
                    Direction::OneWay
                }),
                ..base
            },
            3 => Fault {
                kind: Some(FaultKind::Degrade),
                node,
                slowdown: Some(ms(50 * u64::from(b + 1))),
                ..base
            },
            4 => Fault {
                kind: Some(FaultKind::Restart),
                node,
                duration: None,
                ..base
            },
            5 => Fault {
                kind: Some(FaultKind::TableOutage),
                ..base
            },
            _ => Fault {
                kind: Some(FaultKind::Loss),
                from: node,
                to: Some(format!("n{b}")),
                probability: Some(0.5),
                ..base
            },
        }
    })
}

fn any_mix() -> impl Strategy<Value = (u32, Vec<Fault>, u64)> {
    (3u32..12).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec(any_fault(n), 0..5),
            0u64..1_000,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn no_declaration_without_faults(nodes in 3u32..16, seed in 0u64..10_000) {
        for version in VERSIONS {
            let s = cluster(version, nodes, 240, Vec::new(), Vec::new());
            for j in 0..judges(&s).len() {
                let (o, _) = run(&s, seed, j, false);
                prop_assert!(o.declarations.is_empty(), "{}: {:?}", o.label, o.declarations);
                prop_assert_eq!(o.counts.self_terminations, 0);
            }
        }
    }

    #[test]
    fn a_crash_is_declared_while_the_table_is_up(
        nodes in 3u32..16,
        victim in 0u32..16,
        seed in 0u64..10_000,
    ) {
        let victim = victim % nodes;
        let crash = Fault {
            kind: Some(fdlab_sim::scenario::FaultKind::Crash),
            node: Some(format!("n{victim}")),
            at: Some(ms(60_000)),
            ..Default::default()
        };
        for version in VERSIONS {
            let s = cluster(version, nodes, 360, vec![crash.clone()], Vec::new());
            for j in 0..judges(&s).len() {
                let (o, _) = run(&s, seed, j, false);
                prop_assert_eq!(o.crashes.len(), 1);
                prop_assert!(o.crashes[0].declared.is_some(), "{}: not declared", o.label);
                prop_assert!(o.declarations.iter().all(|d| !d.false_positive));
            }
        }
    }

    #[test]
    fn random_mixes_keep_one_generation_and_replay_exactly((nodes, faults, seed) in any_mix()) {
        let skew = vec![ClockSetup { node: "n0".into(), drift: 0.0, offset: SignedNanos(-180_000_000_000) }];
        for version in VERSIONS {
            let s = cluster(version, nodes, 300, faults.clone(), skew.clone());
            for j in 0..judges(&s).len() {
                let (a, log_a) = run(&s, seed, j, true);
                prop_assert_eq!(a.counts.two_active_generations, 0);
                let (b, log_b) = run(&s, seed, j, true);
                prop_assert_eq!(&a, &b);
                prop_assert_eq!(log_a, log_b);
            }
        }
    }
}
