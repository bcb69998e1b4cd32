//! Tests of [`super`]: the `phi-accrual` detector's pinned values, crossings and history rules.

use super::*;
use proptest::prelude::*;

fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

#[test]
fn akka_logistic_phi_pinned_value() {
    // Elapsed 1400 ms against mean 1000 ms and std dev 100 ms.
    let phi = phi_logistic(1400.0, 1000.0, 100.0);
    assert!((phi - 4.7367).abs() < 1e-3, "{phi}");
    // Units cancel: the same in nanoseconds.
    let phi_ns = phi_logistic(1.4e9, 1.0e9, 1.0e8);
    assert!((phi - phi_ns).abs() < 1e-9);
}

#[test]
fn exact_and_exponential_pinned_values() {
    // Two standard deviations: Q(2) = 0.02275, phi = 1.643.
    assert!((phi_normal_exact(1200.0, 1000.0, 100.0) - 1.6430).abs() < 1e-3);
    // Cassandra: dt = mean * ln 10 gives phi = 1.
    assert!((phi_exponential(1000.0 * std::f64::consts::LN_10, 1000.0) - 1.0).abs() < 1e-12);
}

#[test]
fn first_heartbeat_seeds_750_and_1250() {
    let mut d = PhiAccrual::new(PhiAccrualConfig::default(), Nanos::ZERO).unwrap();
    assert_eq!(d.score(ms(10_000)), 0.0, "phi is 0 before any heartbeat");
    d.handle_heartbeat(ms(0));
    assert_eq!(d.sample_count(), 2);
    assert_eq!(d.history.mean(), 1e9);
    assert_eq!(d.history.std_dev(), 2.5e8);
}

#[test]
fn failure_instant_matches_phi_to_the_nanosecond() {
    let mut d = PhiAccrual::new(PhiAccrualConfig::default(), Nanos::ZERO).unwrap();
    for t in 0..20 {
        d.handle_heartbeat(ms(1000 * t));
    }
    let at = d.poll_timeout().unwrap();
    let last = ms(19_000);
    assert!(d.score(at) >= 8.0);
    assert!(d.score(at - Nanos(1)) < 8.0);
    // With 1 s heartbeats, Akka's defaults fail the peer 4.52 s after the
    // last one: mean 1 s + pause 3 s + 5.226 sigma (the 100 ms floor).
    let after = (at - last).as_secs_f64();
    assert!((after - 4.5226).abs() < 0.001, "{after}");
    d.handle_timeout(at);
    assert_eq!(d.verdict(), Verdict::Failed);
}

#[test]
fn interval_after_unavailability_is_not_recorded() {
    let mut d = PhiAccrual::new(PhiAccrualConfig::default(), Nanos::ZERO).unwrap();
    d.handle_heartbeat(ms(0));
    d.handle_heartbeat(ms(1000));
    assert_eq!(d.sample_count(), 3);
    // 60 s of silence: phi is far above 8 when the next heartbeat arrives.
    d.handle_heartbeat(ms(61_000));
    assert_eq!(
        d.sample_count(),
        3,
        "the 60 s gap must not enter the history"
    );
    assert_eq!(d.verdict(), Verdict::Alive);
    d.handle_heartbeat(ms(62_000));
    assert_eq!(d.sample_count(), 4);
}

/// Threshold `log10 2`: phi of the logistic normal at `y = 0`, a silence
/// exactly as long as the mean (`-log10(1 - 1/(1 + e^0))`). With no pause
/// allowance the peer is Failed exactly when the silence reaches the mean
/// of the history, whatever the standard deviation, so every crossing
/// instant below is `last heartbeat + mean`, computed by hand.
fn phi_at_mean_config(history: PhiHistory) -> PhiAccrualConfig {
    PhiAccrualConfig {
        threshold: phi_logistic_y(0.0),
        acceptable_heartbeat_pause: Nanos::ZERO,
        min_std_deviation: ms(1),
        history,
        ..Default::default()
    }
}

/// Heartbeats at 0, 700, 4000 (a 3.3 s gap), 5000 and 5800 ms, under
/// each rule, against a hand computation of the window, its mean and
/// variance (population, ms^2), phi, and the failure instants.
#[test]
fn every_interval_matches_a_hand_computed_sequence() {
    // Precondition of the hand computation: the threshold's standardized
    // delay is 0 (to the float next to it), so phi >= threshold exactly
    // when dt >= mean' (for any dt an integer number of ns).
    let y = PhiDistribution::Normal.y_at_phi(phi_logistic_y(0.0));
    assert!(y <= 0.0 && y > -1e-12, "{y}");
    // Mean and variance in ms, as the window must hold them.
    let check = |d: &PhiAccrual, n: usize, mean_ms: f64, var_ms2: f64| {
        assert_eq!(d.sample_count(), n);
        assert_eq!(d.history.mean(), mean_ms * 1e6);
        assert_eq!(d.history.variance(), var_ms2 * 1e12);
    };
    let phi_at = |elapsed_ms: f64, mean_ms: f64, var_ms2: f64| {
        phi_logistic(elapsed_ms * 1e6, mean_ms * 1e6, (var_ms2 * 1e12).sqrt())
    };

    let mut akka = PhiAccrual::new(phi_at_mean_config(PhiHistory::Akka), Nanos::ZERO).unwrap();
    let mut paper =
        PhiAccrual::new(phi_at_mean_config(PhiHistory::EveryInterval), Nanos::ZERO).unwrap();
    for d in [&mut akka, &mut paper] {
        // Seeds 750 and 1250; then 700 (phi below the threshold: both rules
        // take it). Window [750, 1250, 700]: mean 900, squared deviations
        // 150^2 + 350^2 + 200^2 = 185000.
        d.handle_heartbeat(ms(0));
        assert_eq!(d.poll_timeout(), Some(ms(1000)));
        d.handle_heartbeat(ms(700));
        check(d, 3, 900.0, 185_000.0 / 3.0);
        assert_eq!(d.poll_timeout(), Some(ms(700 + 900)));
        d.handle_timeout(ms(1600) - Nanos(1));
        assert_eq!(d.verdict(), Verdict::Alive);
        d.handle_timeout(ms(1600));
        assert_eq!(d.verdict(), Verdict::Failed);
        // After 3.3 s of silence, phi with the window of three.
        assert_eq!(d.score(ms(4000)), phi_at(3300.0, 900.0, 185_000.0 / 3.0));
        d.handle_heartbeat(ms(4000));
        assert_eq!(d.verdict(), Verdict::Alive);
    }

    // The 3300 ms gap ended after phi had crossed the threshold (at 1600).
    // Akka: not taken; the window stays [750, 1250, 700], Failed at 4900.
    check(&akka, 3, 900.0, 185_000.0 / 3.0);
    assert_eq!(akka.poll_timeout(), Some(ms(4900)));
    // Paper: taken; [750, 1250, 700, 3300]: mean 1500, squared deviations
    // 750^2 + 250^2 + 800^2 + 1800^2 = 4505000. Failed at 5500.
    check(&paper, 4, 1500.0, 4_505_000.0 / 4.0);
    assert_eq!(paper.poll_timeout(), Some(ms(5500)));
    assert_eq!(akka.score(ms(4800)), phi_at(800.0, 900.0, 185_000.0 / 3.0));
    assert_eq!(
        paper.score(ms(4800)),
        phi_at(800.0, 1500.0, 4_505_000.0 / 4.0)
    );

    // Akka fails the peer again at 4900, a heartbeat comes at 5000.
    akka.handle_timeout(ms(4900));
    assert_eq!(akka.verdict(), Verdict::Failed);
    paper.handle_timeout(ms(4900));
    assert_eq!(paper.verdict(), Verdict::Alive);
    for d in [&mut akka, &mut paper] {
        d.handle_heartbeat(ms(5000));
    }
    // Akka: 1000 ms ended after the crossing, not taken: Failed at 5900.
    check(&akka, 3, 900.0, 185_000.0 / 3.0);
    assert_eq!(akka.poll_timeout(), Some(ms(5900)));
    // Paper: taken; mean 7000 / 5 = 1400, squared deviations
    // 650^2 + 150^2 + 700^2 + 1900^2 + 400^2 = 4705000. Failed at 6400.
    check(&paper, 5, 1400.0, 4_705_000.0 / 5.0);
    assert_eq!(paper.poll_timeout(), Some(ms(6400)));

    // 800 ms later: before both crossings, both take it.
    for d in [&mut akka, &mut paper] {
        d.handle_timeout(ms(5800));
        assert_eq!(d.verdict(), Verdict::Alive);
        d.handle_heartbeat(ms(5800));
    }
    // Akka: [750, 1250, 700, 800]: mean 875, squared deviations
    // 125^2 + 375^2 + 175^2 + 75^2 = 192500. Failed at 6675.
    check(&akka, 4, 875.0, 192_500.0 / 4.0);
    assert_eq!(akka.poll_timeout(), Some(ms(6675)));
    // Paper: mean 7800 / 6 = 1300, squared deviations
    // 550^2 + 50^2 + 600^2 + 2000^2 + 300^2 + 500^2 = 5005000. Failed at 7100.
    check(&paper, 6, 1300.0, 5_005_000.0 / 6.0);
    assert_eq!(paper.poll_timeout(), Some(ms(7100)));
    assert_eq!(akka.score(ms(6000)), phi_at(200.0, 875.0, 192_500.0 / 4.0));
    assert_eq!(
        paper.score(ms(6000)),
        phi_at(200.0, 1300.0, 5_005_000.0 / 6.0)
    );
}

/// Number of Failed verdicts over a stream of heartbeats `gaps_ms` apart,
/// with the timers handled as a host does.
fn failed_count(config: PhiAccrualConfig, gaps_ms: impl Iterator<Item = u64>) -> usize {
    let mut d = PhiAccrual::new(config, Nanos::ZERO).unwrap();
    let mut now = Nanos::ZERO;
    let mut failed = 0;
    d.handle_heartbeat(now);
    for gap in gaps_ms {
        now = now + ms(gap);
        while let Some(due) = d.poll_timeout().filter(|&due| due <= now) {
            d.handle_timeout(due);
            failed += usize::from(d.verdict() == Verdict::Failed);
        }
        d.handle_heartbeat(now);
    }
    failed
}

/// Intervals cycling through 800, 850, ..., 1200 ms (mean 1000 ms, std
/// dev 129 ms), threshold 1 (standardized delay 1.30), no pause
/// allowance. Both rules agree until the first 1200 ms interval, which
/// phi reaches 1 before (at about 1.18 s): the first suspicion. From then
/// on the paper's rule keeps the 1200 ms intervals in the window, phi
/// reaches 1 at about 1000 + 1.30 x 129 = 1168 ms, and exactly the 1200 ms
/// intervals are mistakes: 100 in 100 cycles. Akka's rule keeps them out,
/// so the mean and std dev shrink, the crossing falls below 1150 ms, those
/// intervals are kept out too, and so on: more than three times as many.
#[test]
fn rules_differ_after_a_suspicion() {
    let config = |history| PhiAccrualConfig {
        threshold: 1.0,
        acceptable_heartbeat_pause: Nanos::ZERO,
        min_std_deviation: ms(1),
        history,
        ..Default::default()
    };
    let cycles = |n: usize| (0..9u64).map(|i| 800 + 50 * i).cycle().take(9 * n);
    // One cycle: the only mistake is the first suspicion, the same under both.
    assert_eq!(
        failed_count(config(PhiHistory::EveryInterval), cycles(1)),
        1
    );
    assert_eq!(failed_count(config(PhiHistory::Akka), cycles(1)), 1);
    let paper = failed_count(config(PhiHistory::EveryInterval), cycles(100));
    let akka = failed_count(config(PhiHistory::Akka), cycles(100));
    assert_eq!(paper, 100);
    // Measured; the point is that it is several times the paper's figure.
    assert_eq!(akka, 363);
}

#[test]
fn history_key_reads_kebab_case_and_defaults_to_akka() {
    let c: PhiAccrualConfig = toml::from_str("threshold = 8.0").unwrap();
    assert_eq!(c.history, PhiHistory::Akka);
    let c: PhiAccrualConfig = toml::from_str("history = 'every-interval'").unwrap();
    assert_eq!(c.history, PhiHistory::EveryInterval);
    assert!(toml::from_str::<PhiAccrualConfig>("history = 'paper'").is_err());
}

#[test]
fn suspect_threshold_comes_first() {
    let config = PhiAccrualConfig {
        suspect_threshold: Some(3.0),
        ..Default::default()
    };
    let mut d = PhiAccrual::new(config, Nanos::ZERO).unwrap();
    d.handle_heartbeat(ms(0));
    let suspect = d.poll_timeout().unwrap();
    d.handle_timeout(suspect);
    assert_eq!(d.verdict(), Verdict::Suspect);
    let failed = d.poll_timeout().unwrap();
    assert!(failed > suspect);
    d.handle_timeout(failed);
    assert_eq!(d.verdict(), Verdict::Failed);
    assert_eq!(d.poll_timeout(), None);
}

#[test]
fn crossings_exact_for_every_distribution() {
    for distribution in [
        PhiDistribution::Normal,
        PhiDistribution::NormalExact,
        PhiDistribution::Exponential,
    ] {
        let config = PhiAccrualConfig {
            distribution,
            ..Default::default()
        };
        let mut d = PhiAccrual::new(config, Nanos::ZERO).unwrap();
        for t in [0, 900, 2000, 2950, 4100] {
            d.handle_heartbeat(ms(t));
        }
        let at = d.poll_timeout().unwrap();
        assert!(d.score(at) >= 8.0, "{distribution:?}");
        assert!(d.score(at - Nanos(1)) < 8.0, "{distribution:?}");
    }
}

#[test]
fn y_at_phi_is_the_exact_float_boundary() {
    for distribution in [
        PhiDistribution::Normal,
        PhiDistribution::NormalExact,
        PhiDistribution::Exponential,
    ] {
        for phi in [0.1, 0.5, 1.0, 3.0, 8.0, 16.0, 40.0, 250.0] {
            let y = distribution.y_at_phi(phi);
            let below = f64::from_bits(if y > 0.0 {
                y.to_bits() - 1
            } else {
                y.to_bits() + 1
            });
            assert!(distribution.phi_of_y(y) >= phi, "{distribution:?} {phi}");
            assert!(distribution.phi_of_y(below) < phi, "{distribution:?} {phi}");
        }
    }
    // The logistic boundary of phi = 8 is Orleans' k.
    assert!((PhiDistribution::Normal.y_at_phi(8.0) - 5.226).abs() < 1e-3);
}

proptest! {
    /// phi never decreases as the silence since the last heartbeat grows.
    #[test]
    fn phi_is_non_decreasing_in_elapsed_time(
        intervals in proptest::collection::vec(1u64..5_000, 1..50),
        distribution in prop_oneof![
            Just(PhiDistribution::Normal),
            Just(PhiDistribution::NormalExact),
            Just(PhiDistribution::Exponential),
        ],
        steps in proptest::collection::vec(0u64..200_000_000, 1..100),
    ) {
        let config = PhiAccrualConfig { distribution, ..Default::default() };
        let mut d = PhiAccrual::new(config, Nanos::ZERO).unwrap();
        let mut now = Nanos::ZERO;
        d.handle_heartbeat(now);
        for i in intervals {
            now = now + ms(i);
            d.handle_heartbeat(now);
        }
        let mut previous = d.score(now);
        let mut t = now;
        for step in steps {
            t = t + Nanos(step);
            let phi = d.score(t);
            prop_assert!(phi >= previous, "phi fell from {} to {} at {:?}", previous, phi, t);
            previous = phi;
        }
    }
}
