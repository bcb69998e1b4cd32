//! The `[swarm]` and `[properties]` tables: defaults, and one error naming
//! file, line and key for each kind of mistake.

use fdlab_protocol::Nanos;
use fdlab_sim::scenario::{Check, FaultKind, Property, Strength, SwarmKind};

use super::*;

const PIPELINE: &str = r#"duration = "2m"

[topology]
kind = "dataflow"
layers = [2, 2]

[[detectors]]
kind = "dataflow-decay"
"#;

const CLUSTER: &str = r#"duration = "5m"

[topology]
kind = "mesh"
nodes = 5

[membership]
"#;

fn err(text: &str) -> ScenarioFileError {
    match parse_scenario("s.toml", text, None) {
        Ok(s) => panic!("parsed: {s:?}"),
        Err(e) => e,
    }
}

/// Asserts line and key of the error of `text`, and returns its problem.
fn at(text: &str, line: usize, key: &str) -> String {
    let e = err(text);
    assert_eq!(e.file, "s.toml", "{e}");
    assert_eq!((e.line, e.key.as_deref()), (Some(line), Some(key)), "{e}");
    assert!(!e.to_string().contains('\n'), "one line: {e}");
    e.problem
}

#[test]
fn defaults_fill_every_key() {
    let (_, tables) = parse_scenario_with_swarm("s.toml", PIPELINE, None).unwrap();
    assert_eq!(tables, SwarmTables::default());
    let text = format!("{PIPELINE}\n[swarm]\n[swarm.pause]\nduration = [\"15s\", \"40s\"]\n\n[properties]\nrecover_within = false\n");
    let (s, tables) = parse_scenario_with_swarm("s.toml", &text, None).unwrap();
    let swarm = tables.swarm.as_ref().unwrap();
    assert_eq!(swarm.faults_per_run(), [1, 6]);
    assert_eq!(
        swarm.start_window(s.duration),
        [Nanos::from_secs(12), Nanos::from_secs(90)]
    );
    assert_eq!(swarm.detect_from(), Nanos::from_secs(10));
    let pause = swarm.bounds(FaultKind::Pause);
    assert_eq!(pause.rate, 0.5);
    assert_eq!(
        pause.duration,
        Some([Nanos::from_secs(15), Nanos::from_secs(40)])
    );
    assert_eq!(
        swarm.bounds(FaultKind::Loss).strength,
        Some(Strength::Probability([0.1, 0.9]))
    );
    assert_eq!(s.swarm_kind(), SwarmKind::Detectors);
    assert!(s.swarm_kinds().contains(&FaultKind::Backpressure));
    assert!(!s.swarm_kinds().contains(&FaultKind::TableOutage));
    let checks = tables
        .properties
        .as_ref()
        .unwrap()
        .checks(SwarmKind::Detectors);
    assert_eq!(
        checks,
        [
            Check {
                property: Property::DetectWithin,
                bound: Some(Nanos::from_secs(30))
            },
            Check {
                property: Property::NoFalseFailed,
                bound: None
            },
        ]
    );
    let cluster = parse_scenario("s.toml", CLUSTER, None).unwrap();
    assert_eq!(cluster.swarm_kind(), SwarmKind::Membership);
    assert!(cluster.swarm_kinds().contains(&FaultKind::TableOutage));
    assert!(!cluster.swarm_kinds().contains(&FaultKind::Backpressure));
    // Clients that place keys by their views: the cluster's properties and
    // the splits of keys.
    let placed = format!("{CLUSTER}\n[placement]\nservers = 2\n");
    let placed = parse_scenario("s.toml", &placed, None).unwrap();
    assert_eq!(placed.swarm_kind(), SwarmKind::MembershipPlacement);
    let checked: Vec<Property> = PropertySetup::default()
        .checks(placed.swarm_kind())
        .iter()
        .map(|c| c.property)
        .collect();
    assert_eq!(
        checked,
        [
            Property::DetectWithin,
            Property::NoLiveDeclaredDead,
            Property::ConvergeWithin,
            Property::PlacementSplitWithin
        ]
    );
}

#[test]
fn unknown_kinds_keys_and_properties_are_named_with_a_hint() {
    let p = at(
        &format!("{PIPELINE}\n[swarm]\nkinds = [\"pause\", \"crsh\"]\n"),
        11,
        "swarm.kinds",
    );
    assert!(
        p.contains("unknown value `crsh` (did you mean `crash`?)"),
        "{p}"
    );
    let p = at(
        &format!("{PIPELINE}\n[swarm.puase]\nrate = 0.2\n"),
        10,
        "swarm.puase",
    );
    assert!(p.contains("did you mean `pause`"), "{p}");
    let p = at(
        &format!("{PIPELINE}\n[properties]\nno_false_faild = true\n"),
        11,
        "properties.no_false_faild",
    );
    assert!(p.contains("did you mean `no_false_failed`"), "{p}");
    let p = at(
        &format!("{PIPELINE}\n[swarm.crash]\nrate = 0.2\nextra_latency = [\"1s\", \"2s\"]\n"),
        12,
        "swarm.crash.extra_latency",
    );
    assert!(p.contains("does not apply to `crash`"), "{p}");
    let p = at(
        &format!("{PIPELINE}\n[swarm.partition]\nshapes = [\"halfs\"]\n"),
        11,
        "swarm.partition.shapes",
    );
    assert!(p.contains("did you mean `halves`"), "{p}");
}

#[test]
fn kinds_the_topology_cannot_take_are_refused() {
    let mesh = PIPELINE
        .replace(
            "kind = \"dataflow\"\nlayers = [2, 2]",
            "kind = \"mesh\"\nnodes = 3",
        )
        .replace("dataflow-decay", "fixed-timeout");
    let p = at(
        &format!("{mesh}\n[swarm]\nkinds = [\"backpressure\"]\n"),
        11,
        "swarm.kinds[0]",
    );
    assert!(p.contains("a slow node is a `degrade` fault"), "{p}");
    let p = at(
        &format!("{PIPELINE}\n[swarm]\nkinds = [\"table-outage\"]\n"),
        11,
        "swarm.kinds[0]",
    );
    assert!(p.contains("membership table"), "{p}");
    let p = at(
        &format!("{PIPELINE}\n[swarm]\nkinds = [\"pause\"]\n[swarm.crash]\nrate = 1\n"),
        12,
        "swarm.crash",
    );
    assert!(p.contains("not in `swarm.kinds`"), "{p}");
    let p = at(
        &format!("{CLUSTER}\n[properties]\nno_false_failed = true\n"),
        10,
        "properties.no_false_failed",
    );
    assert!(p.contains("membership"), "{p}");
}

#[test]
fn bounds_that_cannot_hold_are_refused() {
    let cases = [
        (
            "[swarm.pause]\nrate = 1.5",
            "swarm.pause.rate",
            "between 0 and 1",
        ),
        (
            "[swarm.pause]\nduration = [\"40s\", \"1s\"]",
            "swarm.pause.duration",
            "40s is more than 1s",
        ),
        (
            "[swarm.pause]\nduration = [\"0s\", \"1s\"]",
            "swarm.pause.duration",
            "positive",
        ),
        (
            "[swarm.loss]\nprobability = [0.5, 1.5]",
            "swarm.loss.probability",
            "(0, 1]",
        ),
        (
            "[swarm.partition]\nshapes = []",
            "swarm.partition.shapes",
            "lists no shape",
        ),
        (
            "[swarm.partition]\nshapes = [\"halves\", \"halves\"]",
            "swarm.partition.shapes",
            "`halves` twice",
        ),
        (
            "[swarm.pause]\nshapes = [\"halves\"]",
            "swarm.pause.shapes",
            "does not apply to `pause`",
        ),
        (
            "[swarm.loss]\nbursty = 2",
            "swarm.loss.bursty",
            "between 0 and 1",
        ),
        (
            "[swarm.loss]\ngap = [\"1s\", \"10ms\"]",
            "swarm.loss.gap",
            "1s is more than 10ms",
        ),
        (
            "[swarm.loss]\nburst = [\"1ms\", \"1s\"]\nduration = [\"1s\", \"1h\"]\ngap = [\"1ms\", \"1s\"]",
            "swarm.loss.burst",
            "loss bursts",
        ),
        (
            "[swarm]\nfaults = [5, 2]",
            "swarm.faults",
            "5 is more than 2",
        ),
        ("[swarm]\nfaults = [0, 0]", "swarm.faults", "at least 1"),
        (
            "[swarm]\nstart = [\"10s\", \"5m\"]",
            "swarm.start",
            "not before the end of the run",
        ),
        (
            "[properties]\ndetect_within = \"0s\"",
            "properties.detect_within",
            "positive",
        ),
        (
            "[properties]\nrecover_within = \"-5s\"",
            "properties.recover_within",
            "negative",
        ),
        (
            "[properties]\ndetect_within = true",
            "properties.detect_within",
            "as a duration",
        ),
    ];
    for (table, key, needle) in cases {
        let p = at(&format!("{PIPELINE}\n{table}\n"), 11, key);
        assert!(p.contains(needle), "{table}: {p}");
    }
}

#[test]
fn a_lockrpc_scenario_takes_its_own_properties_and_faults() {
    let base = crate::builtin::builtin()
        .iter()
        .find(|(n, _)| *n == "lockrpc-dead-peer")
        .unwrap()
        .1;
    let (s, tables) =
        parse_scenario_with_swarm("s.toml", &format!("{base}\n[swarm]\n"), None).unwrap();
    let checks = tables.property_setup().checks(s.swarm_kind());
    assert_eq!(s.swarm_kind(), SwarmKind::Lock);
    assert_eq!(
        checks,
        [
            Check {
                property: Property::StopUsingDeadWithin,
                bound: Some(Nanos::from_secs(40)),
            },
            Check {
                property: Property::NoHealthyEvicted,
                bound: None,
            },
        ]
    );
    assert!(!s.swarm_kinds().contains(&FaultKind::Clock));
    assert!(s.swarm_kinds().contains(&FaultKind::Partition));
    let lines = base.lines().count();
    let problem = at(
        &format!("{base}\n[properties]\ndetect_within = \"10s\"\n"),
        lines + 3,
        "properties.detect_within",
    );
    assert!(problem.contains("a lock-RPC scenario"), "{problem}");
}
