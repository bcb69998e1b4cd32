//! Tests of [`super`]: detector specifications, their defaults and errors.

use super::*;
use fdlab_protocol::decay::Grace;
use fdlab_protocol::phi::PhiDistribution;
use fdlab_protocol::Nanos;

fn table(text: &str) -> Table {
    toml::from_str(text).expect("test TOML parses")
}

fn err_of(arg: &str) -> SpecError {
    match parse_detector_arg(arg) {
        Ok(spec) => panic!("`{arg}` parsed as {spec:?}"),
        Err(e) => e,
    }
}

#[test]
fn errors_quote_a_short_escaped_excerpt() {
    let e = err_of("kind=phi\u{1b}[2J");
    assert_eq!(
        e.problem,
        format!(
            "unknown kind `phi\\u{{1b}}[2J`; expected one of {}",
            KINDS.join(", ")
        )
    );
    let long = format!("kind=phi-accrual,threshold={}x", "9".repeat(100_000));
    let e = err_of(&long);
    assert_eq!(e.key, "threshold");
    assert!(e.problem.len() < 200, "{}", e.problem);
    let item = "t".repeat(100_000);
    let e = err_of(&format!("kind=phi-accrual,{item}"));
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("`{}…`: is not of the form", "t".repeat(120))),
        "{shown}"
    );
    let e = err_of(&format!(
        "kind=fixed-timeout,timeout={}",
        "s".repeat(100_000)
    ));
    assert!(e.to_string().len() < 200, "{}", e.to_string().len());
}

#[test]
fn only_kind_gives_the_defaults() {
    let spec = parse_detector_arg("kind=phi-accrual").unwrap();
    assert_eq!(spec.name, None);
    assert_eq!(
        spec.config,
        DetectorConfig::PhiAccrual(PhiAccrualConfig::default())
    );
    let spec = detector_from_table(&table("kind = 'fixed-timeout'")).unwrap();
    assert_eq!(
        spec.config,
        DetectorConfig::FixedTimeout(FixedTimeoutConfig::default())
    );
}

#[test]
fn every_kind_parses() {
    for kind in KINDS {
        let arg = if kind == "two-stage" {
            "kind=two-stage,fast.kind=dataflow-decay,confirm.kind=phi-accrual".to_string()
        } else {
            format!("kind={kind}")
        };
        let spec = parse_detector_arg(&arg).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(spec.config.kind(), kind);
    }
}

#[test]
fn values_are_typed_and_named() {
    let spec = parse_detector_arg(
        "kind=phi-accrual, threshold=10.5,acceptable_heartbeat_pause=0s,\
         distribution=normal-exact,max_sample_size=200,name=\"edge a\"",
    )
    .unwrap();
    assert_eq!(spec.name.as_deref(), Some("edge a"));
    let DetectorConfig::PhiAccrual(c) = spec.config else {
        panic!("wrong kind")
    };
    assert_eq!(c.threshold, 10.5);
    assert_eq!(c.acceptable_heartbeat_pause, Nanos::ZERO);
    assert_eq!(c.distribution, PhiDistribution::NormalExact);
    assert_eq!(c.max_sample_size, 200);

    let spec = parse_detector_arg("kind=fixed-timeout,name=42,timeout=1.5s").unwrap();
    assert_eq!(spec.name.as_deref(), Some("42"));
    let DetectorConfig::FixedTimeout(c) = spec.config else {
        panic!("wrong kind")
    };
    assert_eq!(c.timeout, Nanos::from_millis(1500));

    let spec = detector_from_table(&table(
        "kind = 'dataflow-decay'\nname = 'd'\ngrace = 'one-interval'\ndecay = 0.8",
    ))
    .unwrap();
    assert_eq!(spec.name.as_deref(), Some("d"));
    let DetectorConfig::DataflowDecay(c) = spec.config else {
        panic!("wrong kind")
    };
    assert_eq!(c.grace, Grace::OneInterval);
    assert_eq!(c.decay, 0.8);
}

#[test]
fn unknown_kind_lists_the_kinds() {
    let e = err_of("kind=phi");
    assert_eq!(e.key, "kind");
    assert!(e.problem.contains("unknown kind `phi`"), "{e}");
    for kind in KINDS {
        assert!(e.problem.contains(kind), "{e}");
    }
}

#[test]
fn missing_or_mistyped_kind() {
    let e = err_of("threshold=8");
    assert_eq!(e.key, "kind");
    assert!(e.problem.contains("missing"), "{e}");
    let e = err_of("kind=true");
    assert_eq!(e.key, "kind");
    assert!(e.problem.contains("must be a string"), "{e}");
    let e = detector_from_table(&table("kind = 'fixed-timeout'\nname = 3")).unwrap_err();
    assert_eq!(e.key, "name");
}

#[test]
fn unknown_key_is_named() {
    let e = err_of("kind=phi-accrual,threshhold=8");
    assert_eq!(e.key, "threshhold");
    assert!(e.problem.contains("unknown key"), "{e}");
    assert!(e.problem.contains("`threshold`"), "{e}");
    assert_eq!(
        e.to_string(),
        format!("`threshhold`: {}", e.problem),
        "Display is `key`: problem"
    );
}

#[test]
fn bad_duration_names_the_key() {
    // Several keys, the bad one not first, so the key is found, not guessed.
    let e = err_of("kind=fixed-timeout,interval=1s,timeout=3 parsecs,check_interval=0");
    assert_eq!(e.key, "timeout");
    assert!(e.problem.contains("unknown unit"), "{e}");
    let e = err_of("kind=fixed-timeout,timeout=3");
    assert_eq!(e.key, "timeout");
    assert!(e.problem.contains("no unit"), "{e}");
    let e =
        detector_from_table(&table("kind = 'phi-accrual'\ndistribution = 'gauss'")).unwrap_err();
    assert_eq!(e.key, "distribution");
    assert!(e.problem.contains("gauss"), "{e}");
    let e = err_of("kind=phi-accrual,distribution=3");
    assert_eq!(e.key, "distribution");
    assert!(e.problem.contains("must be a string"), "{e}");
    let e = err_of("kind=phi-accrual,threshold=high");
    assert_eq!(e.key, "threshold");
    assert!(e.problem.ends_with("expected a number"), "{e}");
}

#[test]
fn negative_duration_is_rejected() {
    let e = err_of("kind=fixed-timeout,timeout=-1s");
    assert_eq!(e.key, "timeout");
    assert!(e.problem.contains("negative"), "{e}");
    let e = err_of("kind=adaptive-probe,missed_probes_limit=-1");
    assert_eq!(e.key, "missed_probes_limit");
    assert!(e.problem.contains("a whole number, 0 or more"), "{e}");
}

#[test]
fn out_of_range_value_is_caught_by_validate() {
    let e = err_of("kind=phi-accrual,threshold=-2");
    assert_eq!(e.key, "threshold");
    assert!(e.problem.contains("positive"), "{e}");
    let e = err_of("kind=fixed-timeout,timeout=0s");
    assert_eq!(e.key, "timeout");
}

#[test]
fn two_stage_nests_and_prefixes_errors() {
    let spec = parse_detector_arg(
        "kind=two-stage,name=combo,fast.kind=dataflow-decay,fast.decay=0.8,\
         confirm.kind=phi-accrual,confirm.threshold=12",
    )
    .unwrap();
    assert_eq!(spec.name.as_deref(), Some("combo"));
    let DetectorConfig::TwoStage(c) = spec.config else {
        panic!("wrong kind")
    };
    let DetectorConfig::DataflowDecay(fast) = *c.fast else {
        panic!("wrong fast kind")
    };
    assert_eq!(fast.decay, 0.8);
    let DetectorConfig::PhiAccrual(confirm) = *c.confirm else {
        panic!("wrong confirm kind")
    };
    assert_eq!(confirm.threshold, 12.0);

    let base = "kind=two-stage,confirm.kind=phi-accrual";
    let e = err_of(&format!("{base},fast.kind=dataflow-decay,fast.decay=2"));
    assert_eq!(e.key, "fast.decay", "{e}");
    let e = err_of(&format!(
        "{base},fast.kind=dataflow-decay,fast.tick=1 fortnight"
    ));
    assert_eq!(e.key, "fast.tick", "{e}");
    let e = err_of(&format!("{base},fast.kind=dataflow-decay,fast.bogus=1"));
    assert_eq!(e.key, "fast.bogus", "{e}");
    let e = err_of(&format!("{base},fast.kind=nope"));
    assert_eq!(e.key, "fast.kind", "{e}");
    let e = err_of(&format!("{base},fast.decay=0.5"));
    assert_eq!(e.key, "fast.kind", "{e}");
    assert!(e.problem.contains("missing"), "{e}");
    let e = err_of(&format!("{base},fast.kind=phi-accrual,fast.name=x"));
    assert_eq!(e.key, "fast.name", "{e}");

    let e = err_of("kind=two-stage,fast.kind=phi-accrual");
    assert_eq!(e.key, "confirm");
    assert!(e.problem.contains("missing"), "{e}");
    let e = err_of("kind=two-stage,confirm.kind=phi-accrual");
    assert_eq!(e.key, "fast");
    let e = err_of(&format!("{base},fast=phi-accrual"));
    assert_eq!(e.key, "fast");
    assert!(e.problem.contains("table"), "{e}");
    let e = err_of(&format!("{base},fast.kind=phi-accrual,threshold=3"));
    assert_eq!(e.key, "threshold");
    assert!(e.problem.contains("two-stage"), "{e}");

    let e = detector_from_table(&table(
        "kind = 'two-stage'\n[fast]\nkind = 'adaptive-probe'\n\
         [confirm]\nkind = 'adaptive-probe'",
    ))
    .unwrap_err();
    assert_eq!(e.key, "confirm.kind", "validate's nested key: {e}");
}

#[test]
fn nesting_is_bounded() {
    let mut arg = String::from("kind=two-stage");
    let mut prefix = String::new();
    for _ in 0..10 {
        arg.push_str(&format!(",{prefix}confirm.kind=phi-accrual"));
        prefix.push_str("fast.");
        arg.push_str(&format!(",{prefix}kind=two-stage"));
    }
    let e = err_of(&arg);
    assert!(e.problem.contains("nest"), "{e}");
}

#[test]
fn duplicate_key_is_an_error() {
    let e = err_of("kind=phi-accrual,threshold=8,threshold=9");
    assert_eq!(e.key, "threshold");
    assert!(e.problem.contains("twice"), "{e}");
    let e = err_of("kind=two-stage,fast.kind=phi-accrual,fast.kind=phi-accrual");
    assert_eq!(e.key, "fast.kind");
    let e = err_of("kind=two-stage,fast=x,fast.kind=phi-accrual");
    assert_eq!(e.key, "fast");
    let e = err_of("kind=two-stage,fast.kind=phi-accrual,fast=x");
    assert_eq!(e.key, "fast");
}

#[test]
fn malformed_items_are_named() {
    let e = err_of("kind=phi-accrual,threshold8");
    assert_eq!(e.key, "threshold8");
    assert!(e.problem.contains("KEY=VALUE"), "{e}");
    let e = err_of("kind=phi-accrual,=8");
    assert_eq!(e.key, "=8");
    assert!(e.problem.contains("empty key"), "{e}");
    let e = err_of("kind=phi-accrual,");
    assert!(e.problem.contains("empty item"), "{e}");
    let e = err_of("kind=two-stage,fast..kind=x");
    assert_eq!(e.key, "fast..kind");
    let e = err_of("kind=phi-accrual,name=\"unfinished");
    assert_eq!(e.key, "name");
}

#[test]
fn dotted_key_on_a_plain_kind_is_an_error() {
    let e = err_of("kind=phi-accrual,fast.kind=phi-accrual");
    assert_eq!(e.key, "fast");
    assert!(e.problem.contains("unknown key"), "{e}");
    let e = err_of("kind=phi-accrual,threshold.x=1");
    assert_eq!(e.key, "threshold");
}

#[test]
fn config_errors_convert() {
    let e: SpecError = ConfigError::new("fast.decay", "must be in (0, 1)").into();
    assert_eq!(e.to_string(), "`fast.decay`: must be in (0, 1)");
}
