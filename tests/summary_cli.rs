//! The decision summary of `fdlab run`: what it recommends on built-in
//! scenarios, `--json` and its schema, a console that fits, `-q`,
//! `--color`, and a run's output without per-mistake rows unless asked.

mod common;

use std::process::Command;
use std::time::Duration;

use common::fdlab_within_in;

fn run(dir: &std::path::Path, args: &[&str]) -> (String, String) {
    let (code, stdout, stderr, _) = fdlab_within_in(dir, args, Duration::from_secs(300));
    assert_eq!(code, Some(0), "{args:?}: {stderr}");
    (stdout, stderr)
}

/// The JSON document of a run of `scenarios`.
fn json(dir: &std::path::Path, scenarios: &[&str]) -> serde_json::Value {
    let mut args = vec!["run"];
    args.extend(scenarios);
    args.extend(["--seeds", "2", "--json", "--out", "out"]);
    let (stdout, _) = run(dir, &args);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn on_crash_mesh_the_fastest_detector_loses_on_cost() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json(dir.path(), &["crash-mesh"]);
    let group = &doc["summary"]["parts"][0]["groups"][0];
    let column = |key: &str| {
        group["columns"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c["key"] == key)
            .unwrap_or_else(|| panic!("no column {key}: {group}"))
    };
    let (speed, messages) = (column("t_d_p50"), column("messages_per_pair_second"));
    let value = |row: &serde_json::Value, i: usize| row["cells"][i]["value"].as_f64().unwrap();
    let rows = group["rows"].as_array().unwrap();
    let fastest = rows
        .iter()
        .min_by(|a, b| value(a, speed).total_cmp(&value(b, speed)))
        .unwrap();
    let pick = group["pick"].as_str().unwrap();
    let picked = rows.iter().find(|r| r["name"] == pick).unwrap();
    // The fastest sends about ten times the messages of the pick, and loses.
    assert_ne!(fastest["name"], pick, "{group}");
    assert!(
        value(fastest, messages) > 5.0 * value(picked, messages),
        "{group}"
    );
    let sentences: Vec<&str> = group["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        sentences[0].starts_with(&format!("pick `{pick}`")),
        "{sentences:?}"
    );
    // The ratios are the simulation's: only the sentence's shape is checked.
    let trade = format!("`{pick}` is ");
    let against = sentences
        .iter()
        .find(|s| {
            s.contains(&format!(
                "slower to detect than `{}`",
                fastest["name"].as_str().unwrap()
            ))
        })
        .unwrap_or_else(|| panic!("no trade against the fastest: {sentences:?}"));
    assert!(against.starts_with(&trade), "{against}");
    assert!(against.contains("of its messages"), "{against}");
}

#[test]
fn the_json_document_follows_its_schema_for_every_part() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json(
        dir.path(),
        &[
            "crash-mesh",
            "lifeguard-starved-1",
            "lockrpc-dead-peer",
            "placement-crash",
        ],
    );
    assert_eq!(doc["schema"], "fdlab-run/1");
    assert!(doc["report"].as_str().unwrap().ends_with("index.html"));
    let parts: Vec<&str> = doc["summary"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(parts, ["detectors", "membership", "placement", "lock-rpc"]);
    let kinds = ["pass", "partial", "fail", "number", "none"];
    for part in doc["summary"]["parts"].as_array().unwrap() {
        for group in part["groups"].as_array().unwrap() {
            let columns = group["columns"].as_array().unwrap().len();
            assert!(columns > 0);
            for row in group["rows"].as_array().unwrap() {
                let cells = row["cells"].as_array().unwrap();
                assert_eq!(cells.len(), columns, "{row}");
                for cell in cells {
                    let kind = cell["kind"].as_str().unwrap();
                    assert!(kinds.contains(&kind), "{cell}");
                    if kind == "number" {
                        assert!(cell["value"].is_f64() || cell["value"].is_u64(), "{cell}");
                    }
                }
            }
            assert!(!group["sentences"].as_array().unwrap().is_empty());
        }
    }
    let scenarios: Vec<(&str, &str)> = doc["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["part"].as_str().unwrap()))
        .collect();
    assert_eq!(
        scenarios,
        [
            ("crash-mesh", "detectors"),
            ("placement-crash", "detectors"),
            ("lifeguard-starved-1", "membership"),
            ("placement-crash", "placement"),
            ("lockrpc-dead-peer", "lock-rpc"),
        ]
    );
    for s in doc["scenarios"].as_array().unwrap() {
        assert!(s["runs"].as_u64().unwrap() > 0, "{s}");
        assert!(s["table"]["rows"].is_array(), "{s}");
    }
}

#[test]
fn a_suite_fits_in_120_columns_and_writes_no_per_mistake_rows_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = run(
        dir.path(),
        &[
            "run",
            "crash-mesh",
            "gc-pause-target",
            "lockrpc-slow-peer",
            "--seeds",
            "2",
            "--out",
            "out",
        ],
    );
    for line in stdout.lines() {
        assert!(
            line.chars().count() <= 120,
            "{} columns: {line}",
            line.chars().count()
        );
        assert!(!line.contains('\x1b'), "colour on a pipe: {line}");
    }
    assert!(stdout.starts_with("== Detectors =="), "{stdout}");
    assert!(stdout.contains("Each scenario weighed alone"), "{stdout}");
    // One line per scenario, no full table: its P_A column is absent.
    assert!(!stdout.contains("P_A"), "{stdout}");
    assert!(!dir.path().join("out/mistakes.csv").exists());
    // The page and report.md lead with the same summary.
    let page = std::fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    let summary = page.find("id=\"summary\"").expect("a summary section");
    let first_scenario = page
        .find("id=\"crash-mesh\"")
        .expect("crash-mesh's section");
    assert!(summary < first_scenario);
    assert!(page.contains("<a href=\"#summary\">Decision summary</a>"));
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    let md_summary = md
        .find("## Decision summary")
        .expect("a summary in report.md");
    assert!(md_summary < md.find("## crash-mesh").unwrap());
    for pick in stdout.lines().filter(|l| l.starts_with("> pick `")) {
        let name = pick.split('`').nth(1).unwrap();
        assert!(
            md.contains(&format!("- pick `{name}`")),
            "{name} not picked in report.md"
        );
    }
    let (verbose, _) = run(
        dir.path(),
        &[
            "run",
            "crash-mesh",
            "gc-pause-target",
            "--seeds",
            "2",
            "-v",
            "--mistakes",
            "--out",
            "out",
        ],
    );
    assert!(verbose.contains("P_A"), "{verbose}");
    assert!(dir.path().join("out/mistakes.csv").exists());
}

#[test]
fn quiet_prints_nothing_and_colour_follows_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = run(
        dir.path(),
        &["run", "crash-mesh", "--seeds", "1", "-q", "--out", "out"],
    );
    assert_eq!(stdout, "");
    assert!(dir.path().join("out/index.html").exists());
    let (coloured, _) = run(
        dir.path(),
        &[
            "run",
            "crash-mesh",
            "--seeds",
            "1",
            "--color",
            "always",
            "--out",
            "out",
        ],
    );
    assert!(coloured.contains("\x1b[32m"), "{coloured}");
    for (flag, escaped) in [("always", true), ("never", false)] {
        let o = Command::new(env!("CARGO_BIN_EXE_fdlab"))
            .args(["--color", flag, "run", "--seeds", "0"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert_eq!(stderr.contains("\x1b["), escaped, "{flag}: {stderr}");
        assert!(stderr.contains("error:"), "{stderr}");
    }
}
