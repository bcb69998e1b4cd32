//! Tests of [`super`]: reading scenario files, and errors naming file, line and key.

use super::*;
use fdlab_sim::scenario::{FaultKind, MonitorCount};

const MINIMAL: &str = r#"
duration = "2m"

[topology]
kind = "mesh"
nodes = 4

[[detectors]]
kind = "fixed-timeout"
"#;

fn err(file: &str, text: &str) -> ScenarioFileError {
    match parse_scenario(file, text, None) {
        Ok(s) => panic!("{file} parsed: {s:?}"),
        Err(e) => e,
    }
}

/// Asserts file, line and key, and returns the problem.
fn assert_err(e: &ScenarioFileError, file: &str, line: usize, key: &str) -> String {
    assert_eq!(e.file, file, "{e}");
    assert_eq!(e.line, Some(line), "{e}");
    assert_eq!(e.key.as_deref(), Some(key), "{e}");
    assert!(!e.to_string().contains('\n'), "one line: {e}");
    e.problem.clone()
}

#[test]
fn minimal_file_gets_the_defaults() {
    let s = parse_scenario("dir/quick.toml", MINIMAL, None).unwrap();
    assert_eq!(s.name, "quick");
    assert_eq!(s.description, "");
    assert_eq!(s.duration, Nanos::from_secs(120));
    assert_eq!(s.seeds, DEFAULT_SEEDS);
    assert_eq!(
        s.topology,
        Topology::Mesh {
            nodes: 4,
            monitors_per_node: MonitorCount::All
        }
    );
    assert_eq!(s.network, Network::default());
    assert_eq!(s.workload, Workload::default());
    assert_eq!(s.detectors.len(), 1);
    assert_eq!(s.detectors[0].name, "fixed-timeout");
}

#[test]
fn user_written_file_parses() {
    let text = r#"
# My cluster: 7 nodes, one of them crashes and comes back.
name = "my-crash"
description = "n3 crashes for a minute"
duration = "4m"
seeds = 12

[topology]
kind = "mesh"
nodes = 7
monitors_per_node = 3

[network]
latency = { dist = "normal", mean = "1ms", std_dev = "200us" }
loss = 0.001

[network.data_latency]
dist = "pareto"
scale = "2ms"
shape = 2.5

[[detectors]]
name = "ft"
kind = "fixed-timeout"
timeout = "2s"

[[detectors]]
kind = "two-stage"
[detectors.fast]
kind = "phi-accrual"
threshold = 3
[detectors.confirm]
kind = "fixed-timeout"

[[faults]]
kind = "crash"
node = "n3"
at = "60s"
duration = "60s"

[[faults]]
kind = "clock"
node = "n1"
window = ["30s", "90s"]
offset = "-1.5s"

[[random_faults]]
kind = "pause"
rate_per_node_hour = 6
duration = { dist = "uniform", min = "10ms", max = "300ms" }

[[clocks]]
node = "n0"
drift = 1e-4
"#;
    let s = parse_scenario("my-crash.toml", text, None).unwrap();
    assert_eq!(s.name, "my-crash");
    assert_eq!(s.seeds, 12);
    assert_eq!(s.detectors[1].name, "two-stage");
    assert_eq!(s.faults.len(), 2);
    assert_eq!(s.faults[0].kind, Some(FaultKind::Crash));
    assert_eq!(s.faults[0].duration, Some(Nanos::from_secs(60)));
    assert_eq!(s.random_faults[0].kind, FaultKind::Pause);
    assert_eq!(s.clocks[0].drift, 1e-4);
    assert!(matches!(s.network.data_latency, Some(Dist::Pareto { .. })));
}

#[test]
fn display_is_file_line_key_problem() {
    let e = ScenarioFileError {
        file: "a.toml".into(),
        line: Some(3),
        key: Some("faults[0].node".into()),
        problem: "bad".into(),
    };
    assert_eq!(e.to_string(), "a.toml:3: `faults[0].node`: bad");
    let e = ScenarioFileError {
        file: "a.toml".into(),
        line: None,
        key: None,
        problem: "bad".into(),
    };
    assert_eq!(e.to_string(), "a.toml: bad");
}

#[test]
fn toml_syntax_error() {
    let text = "duration = \"2m\"\n\n[topology]\nkind = \"mesh\"\nnodes = 4x\n";
    let e = err("syntax.toml", text);
    let problem = assert_err(&e, "syntax.toml", 5, "topology.nodes");
    assert!(problem.starts_with("invalid TOML"), "{e}");
    let e = err("syntax.toml", "duration = 2m\n");
    assert_err(&e, "syntax.toml", 1, "duration");
    let e = err(
        "syntax.toml",
        "duration = \"2m\"\n[[faults]]\nkind = \"crash\"\n[[faults]]\nat = \"1s\n",
    );
    assert_err(&e, "syntax.toml", 5, "faults[1].at");
    // A duplicate key is a TOML error too.
    let e = err("dup.toml", "duration = \"2m\"\nseeds = 1\nseeds = 2\n");
    assert_err(&e, "dup.toml", 3, "seeds");
}

#[test]
fn unknown_top_level_key() {
    let text = format!("seeds = 3\ndurration = \"1m\"\n{MINIMAL}");
    let e = err("top.toml", &text);
    let problem = assert_err(&e, "top.toml", 2, "durration");
    assert!(problem.contains("unknown key"), "{e}");
    assert!(problem.contains("did you mean `duration`"), "{e}");
    let e = err("top.toml", &format!("[extra]\na = 1\n{MINIMAL}"));
    assert_err(&e, "top.toml", 1, "extra");
}

#[test]
fn unknown_key_in_topology_and_faults() {
    let text = "duration = \"2m\"\n[topology]\nkind = \"mesh\"\nnodes = 4\nnodez = 5\n";
    let e = err("t.toml", text);
    let problem = assert_err(&e, "t.toml", 5, "topology.nodez");
    assert!(problem.contains("unknown key"), "{e}");

    let text = format!(
        "{MINIMAL}\n[[faults]]\nkind = \"crash\"\nnode = \"n1\"\nat = \"10s\"\n\n\
         [[faults]]\nkind = \"pause\"\nnode = \"n1\"\nat = \"20s\"\nlenght = \"1s\"\n"
    );
    let e = err("f.toml", &text);
    let problem = assert_err(&e, "f.toml", 20, "faults[1].lenght");
    assert!(problem.contains("unknown key"), "{e}");
    assert!(problem.contains("`duration`"), "lists the keys: {e}");

    // Inside a distribution, in a nested table.
    let text = format!("{MINIMAL}\n[network.latency]\ndist = \"constant\"\nmedian = \"1ms\"\n");
    let e = err("n.toml", &text);
    let problem = assert_err(&e, "n.toml", 13, "network.latency.median");
    assert!(problem.contains("expected `value`"), "{e}");
    // An unknown table in a table is named as a whole.
    let text = format!("{MINIMAL}\n[network.oops]\na = 1\n");
    let e = err("n.toml", &text);
    assert_err(&e, "n.toml", 11, "network.oops");
}

#[test]
fn negative_duration() {
    let text = "duration = \"-1s\"\n[topology]\nkind = \"mesh\"\nnodes = 4\n";
    let e = err("neg.toml", text);
    let problem = assert_err(&e, "neg.toml", 1, "duration");
    assert!(problem.contains("negative"), "{e}");

    let text = format!(
        "{MINIMAL}[[faults]]\nkind = \"pause\"\nnode = \"n1\"\nat = \"10s\"\nduration = \"-1s\"\n"
    );
    let e = err("neg.toml", &text);
    let problem = assert_err(&e, "neg.toml", 14, "faults[0].duration");
    assert!(problem.contains("negative"), "{e}");
}

#[test]
fn fault_naming_a_missing_node() {
    let text = format!("{MINIMAL}\n[[faults]]\nkind = \"crash\"\nat = \"10s\"\nnode = \"n9\"\n");
    let e = err("crash.toml", &text);
    let problem = assert_err(&e, "crash.toml", 14, "faults[0].node");
    assert!(problem.contains("no node `n9`"), "{e}");
}

#[test]
fn probability_above_one() {
    let text = format!(
        "{MINIMAL}\n[[faults]]\nkind = \"crash\"\nnode = \"n1\"\nat = \"10s\"\n\n\
         [[faults]]\nkind = \"loss\"\nat = \"20s\"\nprobability = 1.5\n"
    );
    let e = err("crash.toml", &text);
    let problem = assert_err(&e, "crash.toml", 19, "faults[1].probability");
    assert!(problem.contains("probability"), "{e}");
    assert_eq!(
        e.to_string(),
        format!("crash.toml:19: `faults[1].probability`: {problem}")
    );
    let text = format!("{MINIMAL}\n[network]\nloss = 2\n");
    let e = err("net.toml", &text);
    assert_err(&e, "net.toml", 12, "network.loss");
    // A probability of the wrong type is a serde error, found the same way.
    let text =
        format!("{MINIMAL}\n[[faults]]\nkind = \"loss\"\nat = \"20s\"\nprobability = \"high\"\n");
    let e = err("crash.toml", &text);
    let problem = assert_err(&e, "crash.toml", 14, "faults[0].probability");
    assert!(problem.contains("expected a number"), "{e}");
}

#[test]
fn detector_with_unknown_kind() {
    let text = format!("{MINIMAL}\n[[detectors]]\nname = \"x\"\nkind = \"phi\"\n");
    let e = err("det.toml", &text);
    let problem = assert_err(&e, "det.toml", 13, "detectors[1].kind");
    assert!(problem.contains("unknown kind `phi`"), "{e}");
    let text = format!("{MINIMAL}threshold = 3\n");
    let e = err("det.toml", &text);
    assert_err(&e, "det.toml", 10, "detectors[0].threshold");
    // Validation of the detector, and of a nested two-stage key.
    let text = format!("{MINIMAL}timeout = \"0s\"\n");
    let e = err("det.toml", &text);
    assert_err(&e, "det.toml", 10, "detectors[0].timeout");
    let text = format!(
        "{MINIMAL}\n[[detectors]]\nkind = \"two-stage\"\n[detectors.fast]\n\
         kind = \"dataflow-decay\"\ndecay = 2\n[detectors.confirm]\nkind = \"phi-accrual\"\n"
    );
    let e = err("det.toml", &text);
    assert_err(&e, "det.toml", 15, "detectors[1].fast.decay");
}

#[test]
fn duplicate_detector_names() {
    let text = format!("{MINIMAL}\n[[detectors]]\nkind = \"fixed-timeout\"\ntimeout = \"1s\"\n");
    let e = err("dup.toml", &text);
    let problem = assert_err(&e, "dup.toml", 11, "detectors[1].name");
    assert!(problem.contains("`fixed-timeout` is used"), "{e}");
}

#[test]
fn missing_keys_point_at_their_table() {
    let text = "seeds = 3\n[topology]\nkind = \"mesh\"\nnodes = 4\n";
    let e = err("nodur.toml", text);
    let problem = assert_err(&e, "nodur.toml", 1, "duration");
    assert!(problem.starts_with("missing"), "{e}");
    let e = err("notopo.toml", "duration = \"1m\"\n");
    assert_err(&e, "notopo.toml", 1, "topology");
    let e = err(
        "nonodes.toml",
        "duration = \"1m\"\n\n[topology]\nkind = \"mesh\"\n",
    );
    assert_err(&e, "nonodes.toml", 3, "topology.nodes");
    let text = format!("{MINIMAL}\n[network.latency]\ndist = \"lognormal\"\nmedian = \"1ms\"\n");
    let e = err("nosigma.toml", &text);
    assert_err(&e, "nosigma.toml", 11, "network.latency.sigma");
    let text = format!("{MINIMAL}\n[[faults]]\nkind = \"crash\"\nnode = \"n1\"\n");
    let e = err("noat.toml", &text);
    assert_err(&e, "noat.toml", 11, "faults[0].at");
    let text = format!("{MINIMAL}\n[[random_faults]]\nkind = \"pause\"\n");
    let e = err("norate.toml", &text);
    assert_err(&e, "norate.toml", 11, "random_faults[0].rate_per_node_hour");
    let e = err(
        "nodet.toml",
        "duration = \"1m\"\n[topology]\nkind = \"mesh\"\nnodes = 3\n",
    );
    assert_err(&e, "nodet.toml", 1, "detectors");
}

#[test]
fn wrong_shapes() {
    let text = format!("{MINIMAL}\n[faults]\nkind = \"crash\"\n");
    let e = err("shape.toml", &text);
    let problem = assert_err(&e, "shape.toml", 11, "faults");
    assert!(problem.contains("[[faults]]"), "{e}");
    let text = format!("clocks = [1]\n{MINIMAL}");
    let e = err("shape.toml", &text);
    assert_err(&e, "shape.toml", 1, "clocks[0]");
    let e = err("shape.toml", &format!("network = 5\n{MINIMAL}"));
    let problem = assert_err(&e, "shape.toml", 1, "network");
    assert!(problem.ends_with("expected a table"), "{e}");
    let e = err("shape.toml", &format!("seeds = -5\n{MINIMAL}"));
    let problem = assert_err(&e, "shape.toml", 1, "seeds");
    assert!(problem.contains("whole number"), "{e}");
    let text = "duration = \"1m\"\n[topology]\nkind = \"ring\"\nnodes = 3\n";
    let e = err("shape.toml", text);
    let problem = assert_err(&e, "shape.toml", 3, "topology.kind");
    assert!(problem.contains("unknown value `ring`"), "{e}");
    let text = format!(
        "{MINIMAL}\n[network]\nlatency = {{ dist = \"uniform\", min = \"1ms\", max = 3 }}\n"
    );
    let e = err("shape.toml", &text);
    let problem = assert_err(&e, "shape.toml", 12, "network.latency.max");
    assert!(problem.contains("no unit"), "{e}");
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("fdlab-scenario-test-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn empirical_latency_from_csv() {
    let dir = temp_dir("ok");
    std::fs::write(
        dir.join("lat.csv"),
        "latency_ms\n0.8\n# a comment\n\n1.25\n3\n",
    )
    .unwrap();
    let text =
        format!("{MINIMAL}\n[network]\nlatency = {{ dist = \"empirical\", file = \"lat.csv\" }}\n");
    std::fs::write(dir.join("emp.toml"), &text).unwrap();
    let s = load_scenario(&dir.join("emp.toml")).unwrap();
    let Dist::Empirical { samples, .. } = &s.network.latency else {
        panic!("not empirical")
    };
    assert_eq!(
        samples,
        &[
            Nanos::from_micros(800),
            Nanos::from_micros(1250),
            Nanos::from_millis(3)
        ]
    );
    // Built-in scenarios (no directory) cannot read files.
    let e = err("emp.toml", &text);
    assert_err(&e, "emp.toml", 12, "network.latency.file");
    // A file that is missing.
    let missing = text.replace("lat.csv", "nope.csv");
    let e = parse_scenario("emp.toml", &missing, Some(&dir)).unwrap_err();
    let problem = assert_err(&e, "emp.toml", 12, "network.latency.file");
    assert!(problem.contains("nope.csv"), "{e}");
    // A file with no samples.
    std::fs::write(dir.join("empty.csv"), "latency_ms\n").unwrap();
    let empty = text.replace("lat.csv", "empty.csv");
    let e = parse_scenario("emp.toml", &empty, Some(&dir)).unwrap_err();
    assert_err(&e, "emp.toml", 12, "network.latency.file");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn empirical_file_with_a_bad_number() {
    let dir = temp_dir("bad");
    std::fs::write(dir.join("lat.csv"), "ms\n1.5\n\n2,\nabc\n").unwrap();
    let text =
        format!("{MINIMAL}\n[network]\nlatency = {{ dist = \"empirical\", file = \"lat.csv\" }}\n");
    let e = parse_scenario("emp.toml", &text, Some(&dir)).unwrap_err();
    let csv = dir.join("lat.csv").display().to_string();
    let problem = assert_err(&e, &csv, 5, "network.latency.file");
    assert!(problem.contains("`abc` is not a number"), "{e}");
    assert!(problem.contains("emp.toml:12"), "{e}");
    std::fs::write(dir.join("lat.csv"), "1\n-2\n").unwrap();
    let e = parse_scenario("emp.toml", &text, Some(&dir)).unwrap_err();
    assert_err(&e, &csv, 2, "network.latency.file");
    std::fs::write(dir.join("lat.csv"), "1,2\n").unwrap();
    let e = parse_scenario("emp.toml", &text, Some(&dir)).unwrap_err();
    let problem = assert_err(&e, &csv, 1, "network.latency.file");
    assert!(problem.contains("one column"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_quote_short_escaped_excerpts_of_the_file() {
    // A binary file named as samples: one long line with a NUL.
    let dir = temp_dir("binary");
    let bytes: Vec<u8> = (0..100_000u32)
        .map(|i| [1, 0, 200, 7][i as usize % 4])
        .collect();
    std::fs::write(dir.join("lat.bin"), bytes).unwrap();
    let text =
        format!("{MINIMAL}\n[network]\nlatency = {{ dist = \"empirical\", file = \"lat.bin\" }}\n");
    let e = parse_scenario("emp.toml", &text, Some(&dir)).unwrap_err();
    let shown = e.to_string();
    assert!(shown.len() < 300, "{} bytes: {shown:?}", shown.len());
    assert!(shown.contains("\\u{1}\\0"), "{shown}");
    assert!(!shown.contains('\0'), "{shown:?}");
    // /dev/zero as samples: refused at the limit.
    let zero = text.replace("lat.bin", "/dev/zero");
    let e = parse_scenario("emp.toml", &zero, Some(&dir)).unwrap_err();
    assert!(e.problem.contains("64 MiB"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
    // A 1 MB value, and a key of 64 kB (the end-to-end tests go to 20 MB).
    let huge = MINIMAL.replace("\"2m\"", &format!("\"{}\"", "9".repeat(1 << 20)));
    let e = err("s.toml", &huge);
    assert_err(&e, "s.toml", 2, "duration");
    assert!(e.to_string().len() < 200, "{}", e.to_string().len());
    let key = format!("{} = 1\n{MINIMAL}", "k".repeat(1 << 16));
    let shown = err("s.toml", &key).to_string();
    assert!(
        shown.starts_with(&format!("s.toml:1: `{}…`: unknown key", "k".repeat(120))),
        "{}",
        &shown[..200]
    );
    assert!(shown.len() < 600, "{}", shown.len());
    // A value with control characters.
    let e = err("s.toml", &MINIMAL.replace("\"mesh\"", "\"mesh\\u001b[2J\""));
    assert!(e.problem.contains("mesh\\u{1b}[2J"), "{e}");
}

#[test]
fn unreadable_file_is_named() {
    let e = load_scenario(Path::new("/nonexistent/fdlab/x.toml")).unwrap_err();
    assert_eq!(e.file, "/nonexistent/fdlab/x.toml");
    assert!(e.problem.contains("cannot read"), "{e}");
}

#[test]
fn validate_errors_map_to_lines() {
    let text = format!(
        "{MINIMAL}\n[[faults]]\nkind = \"partition\"\nnode = \"n1\"\n\
         window = [\"50s\", \"10s\"]\nduration = \"5s\"\n"
    );
    let e = err("w.toml", &text);
    assert_err(&e, "w.toml", 14, "faults[0].window");
    let text = "duration = \"1m\"\n[topology]\nkind = \"mesh\"\nnodes = 1\n";
    let e = err("n.toml", text);
    assert_err(&e, "n.toml", 4, "topology.nodes");
    let text = format!("{MINIMAL}\n[[clocks]]\nnode = \"n1\"\ndrift = 0.7\n");
    let e = err("c.toml", &text);
    assert_err(&e, "c.toml", 13, "clocks[0].drift");
}

/// A membership scenario; line numbers below count from its first
/// (empty) line.
const CLUSTER: &str = r#"
duration = "5m"

[topology]
kind = "mesh"
nodes = 20

[[detectors]]
name = "phi-5s"
kind = "phi-accrual"
interval = "5s"

[membership]
judges = ["classic", "phi-5s"]
restart_after = "30s"

[membership.orleans]
probe_timeout = "5s"
num_votes_for_death_declaration = 2
"#;

fn cluster_with(from: &str, to: &str) -> String {
    assert!(CLUSTER.contains(from), "{from}");
    CLUSTER.replacen(from, to, 1)
}

#[test]
fn a_membership_scenario_parses() {
    let s = parse_scenario("orleans.toml", CLUSTER, None).unwrap();
    let m = s.membership.as_ref().expect("a membership scenario");
    assert_eq!(m.restart_after, Some(Nanos::from_secs(30)));
    assert_eq!(m.orleans.probe_timeout, Nanos::from_secs(5));
    assert_eq!(m.orleans.num_probed_silos, 10, "Orleans' default");
    assert_eq!(s.judge_names(), ["classic", "phi-5s"]);
    // Every key of [membership] may be left out.
    let bare = cluster_with(
        "judges = [\"classic\", \"phi-5s\"]\nrestart_after = \"30s\"\n",
        "",
    );
    let s = parse_scenario("orleans.toml", &bare, None).unwrap();
    assert_eq!(s.judge_names(), ["classic", "phi-5s"]);
    assert_eq!(s.membership.as_ref().unwrap().restart_after, None);
    // A membership scenario needs no detector: `classic` judges.
    let text = "duration = \"5m\"\n[topology]\nkind = \"mesh\"\nnodes = 3\n[membership]\n";
    let s = parse_scenario("bare.toml", text, None).unwrap();
    assert!(s.detectors.is_empty());
    assert_eq!(s.judge_names(), ["classic"]);
}

#[test]
fn unknown_keys_in_membership_tables_are_named_at_their_line() {
    let e = err("m.toml", &cluster_with("restart_after", "restart_afer"));
    let problem = assert_err(&e, "m.toml", 15, "membership.restart_afer");
    assert!(problem.contains("unknown key"), "{e}");
    assert!(problem.contains("did you mean `restart_after`"), "{e}");
    let e = err("m.toml", &cluster_with("probe_timeout", "probe_timout"));
    let problem = assert_err(&e, "m.toml", 18, "membership.orleans.probe_timout");
    assert!(problem.contains("did you mean `probe_timeout`"), "{e}");
    // A near miss names the key meant, not all thirty.
    assert!(
        !problem.contains("`num_missed_probes_limit`"),
        "lists the keys: {e}"
    );
    let e = err("m.toml", &format!("{CLUSTER}gossip = true\n"));
    let problem = assert_err(&e, "m.toml", 20, "membership.orleans.gossip");
    assert!(
        problem.starts_with("unknown key; expected"),
        "no guess: {e}"
    );
    // Thirty keys, cut to a line one can read, and where the rest are.
    assert!(problem.len() < 300, "{e}");
    assert!(problem.contains("`num_probed_silos`"), "{e}");
    assert!(problem.contains(" more (`fdlab list --faults`"), "{e}");
    // A misspelt table, and the top-level key itself.
    let e = err(
        "m.toml",
        &cluster_with("[membership.orleans]", "[membership.orlean]"),
    );
    let problem = assert_err(&e, "m.toml", 17, "membership.orlean");
    assert!(problem.contains("did you mean `orleans`"), "{e}");
    let e = err("m.toml", &cluster_with("[membership]", "[membershp]"));
    let problem = assert_err(&e, "m.toml", 13, "membershp");
    assert!(problem.contains("did you mean `membership`"), "{e}");
}

#[test]
fn bad_membership_values_are_named_at_their_line() {
    let e = err(
        "m.toml",
        &cluster_with("probe_timeout = \"5s\"", "probe_timeout = 5"),
    );
    let problem = assert_err(&e, "m.toml", 18, "membership.orleans.probe_timeout");
    assert!(problem.contains("no unit"), "{e}");
    let e = err(
        "m.toml",
        &cluster_with("[membership]", "[membership]\nprotocol = \"swim\""),
    );
    let problem = assert_err(&e, "m.toml", 14, "membership.protocol");
    assert!(problem.contains("unknown value `swim`"), "{e}");
    let e = err("m.toml", &format!("membership = 5\n{MINIMAL}"));
    let problem = assert_err(&e, "m.toml", 1, "membership");
    assert!(problem.ends_with("expected a table"), "{e}");
    let e = err(
        "m.toml",
        &cluster_with(
            "[membership]",
            "[membership]\ntable_latency = { dist = \"lognormal\", median = \"5ms\" }",
        ),
    );
    assert_err(&e, "m.toml", 14, "membership.table_latency.sigma");
    let e = err("m.toml", &cluster_with("\"30s\"", "\"0s\""));
    assert_err(&e, "m.toml", 15, "membership.restart_after");
}

#[test]
fn a_membership_cluster_is_a_mesh_of_at_least_two_silos() {
    for silos in [0, 1] {
        let e = err(
            "m.toml",
            &cluster_with("nodes = 20", &format!("nodes = {silos}")),
        );
        let problem = assert_err(&e, "m.toml", 6, "topology.nodes");
        assert!(problem.contains("at least 2 silos"), "{e}");
    }
    let e = err(
        "m.toml",
        &cluster_with(
            "kind = \"mesh\"\nnodes = 20",
            "kind = \"dataflow\"\nlayers = [2, 2]",
        ),
    );
    let problem = assert_err(&e, "m.toml", 5, "topology.kind");
    assert!(problem.contains("mesh"), "{e}");
    // Orleans chooses whom a silo probes: `monitors_per_node` is refused,
    // even the "all" that is its default.
    for count in ["3", "\"all\""] {
        let text = cluster_with(
            "nodes = 20",
            &format!("nodes = 20\nmonitors_per_node = {count}"),
        );
        let e = err("m.toml", &text);
        let problem = assert_err(&e, "m.toml", 7, "topology.monitors_per_node");
        assert!(problem.contains("num_probed_silos"), "{e}");
    }
}

#[test]
fn more_votes_than_probing_silos_is_refused() {
    let e = err("m.toml", &cluster_with("= 2\n", "= 11\n"));
    let problem = assert_err(
        &e,
        "m.toml",
        19,
        "membership.orleans.num_votes_for_death_declaration",
    );
    assert!(problem.contains("num_probed_silos"), "{e}");
}

#[test]
fn judges_must_name_classic_or_a_detector_once() {
    let e = err("m.toml", &cluster_with("\"phi-5s\"]", "\"phi\"]"));
    let problem = assert_err(&e, "m.toml", 14, "membership.judges[1]");
    assert!(problem.contains("`phi` is neither `classic`"), "{e}");
    let e = err(
        "m.toml",
        &cluster_with("\"phi-5s\"]", "\"phi-5s\", \"classic\"]"),
    );
    let problem = assert_err(&e, "m.toml", 14, "membership.judges[2]");
    assert!(problem.contains("twice"), "{e}");
    let e = err("m.toml", &cluster_with("[\"classic\", \"phi-5s\"]", "[]"));
    assert_err(&e, "m.toml", 14, "membership.judges");
    // A detector that judges nothing is refused, not ignored.
    let e = err("m.toml", &cluster_with(", \"phi-5s\"]", "]"));
    let problem = assert_err(&e, "m.toml", 9, "detectors[0].name");
    assert!(problem.contains("not a judge"), "{e}");
    let text = format!("{CLUSTER}\n[[detectors]]\nkind = \"dataflow-decay\"\n");
    let e = err(
        "m.toml",
        &text.replace("\"phi-5s\"]", "\"phi-5s\", \"dataflow-decay\"]"),
    );
    let problem = assert_err(&e, "m.toml", 22, "detectors[1].kind");
    assert!(problem.contains("data stream"), "{e}");
}

#[test]
fn table_faults_need_a_membership_scenario() {
    let text = format!("{MINIMAL}\n[[faults]]\nkind = \"table-outage\"\nat = \"10s\"\n");
    let e = err("t.toml", &text);
    let problem = assert_err(&e, "t.toml", 12, "faults[0].kind");
    assert!(problem.contains("[membership]"), "{e}");
    let outage = "\n[[faults]]\nkind = \"table-outage\"\nat = \"10s\"\nduration = \"30s\"\n";
    let s = parse_scenario("t.toml", &format!("{CLUSTER}{outage}"), None).unwrap();
    assert_eq!(s.faults[0].kind(), FaultKind::TableOutage);
    let e = err("t.toml", &format!("{CLUSTER}{outage}expect = \"detect\"\n"));
    assert_err(&e, "t.toml", 25, "faults[0].expect");
    let squeeze = "\n[[faults]]\nkind = \"backpressure\"\nnode = \"n1\"\nat = \"10s\"\n";
    let e = err("t.toml", &format!("{CLUSTER}{squeeze}"));
    assert_err(&e, "t.toml", 22, "faults[0].kind");
}

#[test]
fn an_empirical_table_latency_is_read_from_its_file() {
    let dir = temp_dir("table");
    std::fs::write(dir.join("table.csv"), "ms\n4\n6.5\n").unwrap();
    let text = cluster_with(
        "[membership]",
        "[membership]\ntable_latency = { dist = \"empirical\", file = \"table.csv\" }",
    );
    std::fs::write(dir.join("t.toml"), &text).unwrap();
    let s = load_scenario(&dir.join("t.toml")).unwrap();
    let Dist::Empirical { samples, .. } = &s.membership.as_ref().unwrap().table_latency else {
        panic!("not empirical")
    };
    assert_eq!(samples, &[Nanos::from_millis(4), Nanos::from_micros(6500)]);
    assert!(files_read(&dir.join("t.toml"), &s).contains(&dir.join("table.csv")));
    let e = err("t.toml", &text);
    assert_err(&e, "t.toml", 14, "membership.table_latency.file");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn garbage_does_not_panic() {
    for text in [
        "",
        "\u{feff}",
        "[",
        "[[",
        "a = [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]",
        "duration = 1979-05-27T07:32:00Z",
        "[topology]\nnodes = 1979-05-27",
        "duration = \"18446744073709551615h\"",
        "seeds = 99999999999999999999",
        "[[detectors]]\n[[detectors.fast]]",
        "faults = [[1], {}]",
    ] {
        let e = err("g.toml", text);
        assert!(e.line.is_some(), "{e}");
    }
}
