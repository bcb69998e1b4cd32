//! End-to-end runs of SWIM and Lifeguard clusters against memberlist's own
//! behaviour (v0.2.2): crash detection by its formulas, what a paused
//! member's receive buffer keeps, and starvation as a duty cycle.

mod common;

use common::{fault, fixed, mesh, ms};
use fdlab_protocol::membership::swim::SwimConfig;
use fdlab_protocol::Nanos;
use fdlab_sim::membership::outcome::ClusterOutcome;
use fdlab_sim::membership::run;
use fdlab_sim::scenario::{Fault, FaultKind, MembershipSetup};
use fdlab_sim::valid::ValidScenario;

/// `nodes` members under plain SWIM and Lifeguard, memberlist's defaults
/// changed by `swim`.
fn swim_cluster(
    nodes: u32,
    seconds: u64,
    faults: Vec<Fault>,
    swim: impl FnOnce(&mut SwimConfig),
) -> ValidScenario {
    // (A detector for `mesh` to validate; SWIM runs have none.)
    let mut s = mesh(nodes, vec![fixed("unused", 1_000, 3_000)], Vec::new());
    s.detectors.clear();
    s.duration = ms(seconds * 1_000);
    s.faults = faults;
    let mut setup = MembershipSetup {
        judges: Some(vec!["swim".into(), "lifeguard".into()]),
        ..MembershipSetup::default()
    };
    swim(&mut setup.swim);
    s.membership = Some(setup);
    ValidScenario::new(s).unwrap()
}

/// memberlist's suspicion timeout floor: `suspicion_mult x max(1, log10 N)
/// x probe_interval` (`suspicion.go` and `util.go:suspicionTimeout`), 1 s
/// probes and `suspicion_mult` 4.
fn min_suspicion(n: u32) -> Nanos {
    Nanos::from_nanos_f64(4.0 * f64::from(n).log10().max(1.0) * 1e9)
}

/// Crash to the first Dead, over seeds 1..=`seeds`, sorted, for `judge`
/// (0 SWIM, 1 Lifeguard).
fn crash_times(s: &ValidScenario, judge: usize, seeds: u64) -> Vec<Nanos> {
    let mut times: Vec<Nanos> = (1..=seeds)
        .map(|seed| {
            let (o, _) = run(s, seed, judge, false);
            let c = &o.crashes[0];
            c.declared.expect("declared") - c.at
        })
        .collect();
    times.sort_unstable();
    times
}

/// A crash is found by the first probe of it to fail (within a probe
/// round: the ack deadline is the probe interval) and declared when the
/// suspicion times out. Plain SWIM waits the floor; Lifeguard starts at
/// `suspicion_max_timeout_mult` (6) times it and comes down to the floor
/// as `suspicion_mult - 2` other members confirm, which at these sizes
/// they do within the first seconds.
#[test]
fn crash_detection_follows_memberlists_formulas_at_20_and_100_members() {
    for (n, seeds) in [(20, 12), (100, 6)] {
        let s = swim_cluster(
            n,
            90,
            vec![fault(FaultKind::Crash, "n3", 40_000, None)],
            |_| {},
        );
        let floor = min_suspicion(n);
        for judge in 0..2 {
            let t = crash_times(&s, judge, seeds);
            let median = t[t.len() / 2];
            // Never before the probe round that finds it (1 s) and the
            // floor; the first probe of it comes about a second after the
            // crash (N - 1 probers, each probing one member a second in a
            // shuffled round robin): a median near floor + 1 s + ln 2 s.
            let round = ms(1_000);
            assert!(
                t[0] >= floor + round,
                "N={n} judge {judge}: {t:?} vs {floor}"
            );
            assert!(
                median <= floor + round + ms(1_500),
                "N={n} judge {judge}: {t:?} vs {floor}"
            );
            assert!(
                *t.last().unwrap() <= Nanos(floor.as_nanos() * 6),
                "N={n} judge {judge}: {t:?}"
            );
        }
    }
}

/// n5 is paused from 60 s to 180 s: declared Dead meanwhile, and
/// forgotten by every other member 30 s later (`gossip_to_the_dead_time`,
/// memberlist `resetNodes`). What it learns of its death is what waits in
/// its receive buffer. With memberlist's 2 MiB buffer it reads its death
/// on waking and refutes at once. With a buffer too small for that news
/// it never comes back, push/pull or not: its exchanges tell members that
/// forgot it an Alive at incarnation 0, which memberlist refuses for a
/// member it re-adds (`aliveNode`, `state.go:972-1051` at v0.2.2), and
/// their answers say nothing of it. (Push/pull undoing a stale Dead that
/// one member holds is `push_pull_undoes_a_private_stale_death_within_two_rounds`
/// in the protocol's tests.)
#[test]
fn a_paused_member_comes_back_by_what_its_buffer_kept() {
    let pause = vec![fault(FaultKind::Pause, "n5", 60_000, Some(120_000))];
    let resume = ms(180_000);
    let end = ms(400_000);
    // When the false declaration of n5 ended, per judge.
    let back = |s: &ValidScenario| -> Vec<Nanos> {
        (0..2)
            .map(|judge| {
                let (o, _) = run(s, 3, judge, false);
                let d: Vec<_> = o
                    .declarations
                    .iter()
                    .filter(|d| d.target.node == 5)
                    .collect();
                assert_eq!(d.len(), 1, "{}: {d:?}", o.judge);
                assert!(d[0].false_positive && d[0].impaired);
                d[0].at + d[0].destroyed
            })
            .collect()
    };
    let buffered = swim_cluster(20, 400, pause.clone(), |_| {});
    for back in back(&buffered) {
        assert!(back >= resume && back < resume + ms(2_000), "{back}");
    }
    for push_pull in [Nanos::ZERO, Nanos::from_secs(30)] {
        let small = swim_cluster(20, 400, pause.clone(), |c| {
            c.udp_receive_buffer = 256;
            c.push_pull_interval = push_pull;
        });
        assert_eq!(back(&small), [end, end], "push/pull every {push_pull}");
    }
}

/// A duty cycle stops the member `stopped` of every `every`. Stops shorter
/// than the probe timeout (a 20% CPU quota: 80 ms of every 100 ms) only
/// delay its answers; stops longer than a probe round get it suspected.
#[test]
fn a_duty_cycle_stops_the_member_and_long_stops_get_it_suspected() {
    let duty = |stopped: u64, every: u64| Fault {
        kind: Some(FaultKind::Degrade),
        node: Some("n4".into()),
        at: Some(ms(30_000)),
        duration: Some(ms(60_000)),
        stopped: Some(ms(stopped)),
        every: Some(ms(every)),
        ..Default::default()
    };
    let quiet = swim_cluster(12, 120, Vec::new(), |_| {});
    let (base, _) = run(&quiet, 4, 0, false);
    let quota = swim_cluster(12, 120, vec![duty(80, 100)], |_| {});
    let (o, _) = run(&quota, 4, 0, false);
    // 600 cycles, each a stop and a resume.
    assert!(
        o.events >= base.events + 1_200,
        "{} vs {}",
        o.events,
        base.events
    );
    let of_n4 = |o: &ClusterOutcome| o.suspicions.iter().filter(|s| s.target.node == 4).count();
    assert_eq!(of_n4(&o), 0, "{:?}", o.suspicions);
    let sigstop = swim_cluster(12, 120, vec![duty(2_000, 3_000)], |_| {});
    let (o, _) = run(&sigstop, 4, 0, false);
    assert!(of_n4(&o) > 0);
}

/// memberlist v0.2.2 starts a member's probe ticker when it is created
/// (`schedule`, state.go:104-141; `triggerFunc`'s stagger ends before the
/// first tick): members created together probe in lockstep. With
/// `swim_created_within = "0s"` every member's probe rounds start at the
/// same instants, so the first failed probe of two crashed members, half a
/// minute apart, ends at the same point of the second; with the default
/// (each member at a phase of its own) they do not.
#[test]
fn members_created_together_probe_in_lockstep() {
    let crashes = vec![
        fault(FaultKind::Crash, "n3", 20_000, None),
        fault(FaultKind::Crash, "n7", 50_700, None),
    ];
    let cluster = |within: Option<Nanos>| {
        let mut s = swim_cluster(20, 80, crashes.clone(), |_| {}).into_inner();
        s.membership.as_mut().unwrap().swim_created_within = within;
        ValidScenario::new(s).unwrap()
    };
    let second = 1_000_000_000;
    // The point of the second at which each crashed member was first
    // suspected (by a probe of it that failed: nothing else knows yet).
    let phases = |s: &ValidScenario, seed: u64| -> [u64; 2] {
        let (o, _) = run(s, seed, 1, false);
        [3, 7].map(|node| {
            o.suspicions
                .iter()
                .filter(|x| x.target.node == node)
                .map(|x| x.start.as_nanos())
                .min()
                .expect("suspected")
                % second
        })
    };
    let together = cluster(Some(Nanos::ZERO));
    let apart = cluster(None);
    let mut differ = 0;
    for seed in 1..=8 {
        let [a, b] = phases(&together, seed);
        assert_eq!(
            a, b,
            "seed {seed}: lockstep rounds at {a} and {b} ns past the second"
        );
        let [a, b] = phases(&apart, seed);
        differ += usize::from(a != b);
    }
    assert!(
        differ >= 6,
        "{differ} of 8 seeds: independent phases should differ"
    );
}

/// `fdlab live`'s offset of a real run's time zero: the seed's own, within
/// the probe interval, spread over it (so that real faults fall anywhere in
/// the agents' probe interval, as the model's do).
#[test]
fn a_live_run_s_time_zero_offset_is_seeded_and_spread_over_the_interval() {
    let interval = ms(1_000);
    let offsets: Vec<Nanos> = (1..=40)
        .map(|seed| fdlab_sim::membership::live_zero_offset(seed, interval))
        .collect();
    assert_eq!(
        offsets[0],
        fdlab_sim::membership::live_zero_offset(1, interval)
    );
    assert!(offsets.iter().all(|&o| o < interval), "{offsets:?}");
    let quarters: std::collections::BTreeSet<u64> =
        offsets.iter().map(|o| o.as_nanos() / 250_000_000).collect();
    assert_eq!(quarters.len(), 4, "{offsets:?}");
}
