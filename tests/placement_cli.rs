//! End-to-end runs of placement scenarios (SPEC §9): `fdlab run` writes
//! `placement.csv` and the report's placement section, the same bytes for
//! any `--jobs`, with the shares each distribution is known to move; and
//! a bad `[placement]` table is one error naming file, line and key.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{assert_mutations_fail_and_base_runs, column, run_ok};

/// Runs `scenario` with `seeds` seeds into `dir/one` on one thread and
/// `dir/two` on two, checks that `files` are the same bytes, and returns
/// the first directory and its standard output.
fn run_with_both_jobs(
    dir: &Path,
    scenario: &str,
    seeds: &str,
    files: &[&str],
) -> (PathBuf, String) {
    let (one, two) = (dir.join("one"), dir.join("two"));
    let stdout = run_ok(scenario, seeds, "1", &one);
    run_ok(scenario, seeds, "2", &two);
    for file in files {
        assert_eq!(
            fs::read(one.join(file)).unwrap(),
            fs::read(two.join(file)).unwrap(),
            "{file} differs between --jobs 1 and 2"
        );
    }
    (one, stdout)
}

#[test]
fn a_placement_run_reports_each_distribution_and_the_same_bytes_for_any_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let files = ["placement.csv", "summary.csv", "index.html", "report.md"];
    let (one, stdout) = run_with_both_jobs(dir.path(), "placement-crash", "2", &files);
    assert!(
        stdout.contains("placement-crash (key placement: 10 servers, 20 clients"),
        "{stdout}"
    );
    assert!(
        stdout.contains("placement-crash (key placement):"),
        "{stdout}"
    );
    let csv = fs::read_to_string(one.join("placement.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    // 3 detectors x 6 distributions.
    assert_eq!(rows.len(), 18, "{csv}");
    for row in &rows {
        let share: f64 = column(header, row, "moved_per_true_share").parse().unwrap();
        let expected = if column(header, row, "distribution") == "modulo-eject" {
            0.9
        } else {
            0.1
        };
        // 20,000 keys: the share is within a few points of (N-1)/N or 1/N.
        assert!((share - expected).abs() < 0.03, "{row}");
        assert_eq!(column(header, row, "true_declarations"), "40", "{row}");
        assert_eq!(column(header, row, "false_declarations"), "0", "{row}");
    }
    let html = fs::read_to_string(one.join("index.html")).unwrap();
    assert!(
        html.contains("placement-crash: key placement"),
        "no placement section"
    );
    // Listed once, under Placement, with a link to its detectors' section,
    // which is in the placement part: the page has no detector part.
    assert!(
        html.contains("<li><a href=\"#placement-crash-placement\">placement-crash</a> <a class=\"also\" href=\"#placement-crash\">detectors</a></li>"),
        "{html}"
    );
    let contents = html.split("id=\"page:contents\"").nth(1).unwrap();
    let contents = contents.split("</nav>").next().unwrap();
    assert_eq!(contents.matches("<li>").count(), 1, "{contents}");
    assert!(!html.contains("part:detectors") && html.contains("part:placement"));
    // No false declaration: no chart of points all at 0, a line instead.
    assert!(!html.contains("data-chart=\"placement\""), "{html}");
    assert!(html.contains(fdlab_reports::placement::chart::ALL_ZERO));
}

const PLACEMENT: &str = r#"duration = "1m"
seeds = 1

[topology]
kind = "mesh"
nodes = 6

[placement]
servers = 3
keys = 1000

[[detectors]]
name = "fixed"
kind = "fixed-timeout"
interval = "1s"
timeout = "3s"
"#;

#[test]
fn bad_placement_keys_are_one_error_with_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str]); 8] = [
        (
            "keys = 1000",
            "keys = 1000\nreqests_per_second = 5",
            &["bad.toml:11", "reqests_per_second", "requests_per_second"],
        ),
        (
            "servers = 3",
            "servers = 6",
            &["bad.toml:9", "placement.servers", "at least one client"],
        ),
        (
            "keys = 1000",
            "keys = 1000\ndistributions = [\"ketama\", \"maglev\"]",
            &["placement.distributions[1]", "maglev", "rendezvous"],
        ),
        (
            "keys = 1000",
            "keys = 1000\nweights = [1, 0, 2]",
            &["placement.weights[1]", "at least 1"],
        ),
        (
            "keys = 1000",
            "keys = 1000\nweights = [1, 2]",
            &["placement.weights", "2 weights for 3 servers"],
        ),
        (
            "keys = 1000",
            "keys = 1000\n[[placement.orders]]\nclients = [\"n4\"]\nservers = [\"n0\", \"n1\"]",
            &["placement.orders[0].servers", "every server once"],
        ),
        (
            "keys = 1000",
            "keys = 0",
            &["bad.toml:10", "placement.keys", "1 to"],
        ),
        (
            "keys = 1000",
            "keys = 1000\ntwemproxy_hash = \"crc32\"",
            &[
                "bad.toml:11",
                "placement.twemproxy_hash",
                "`crc32`",
                "`md5`",
            ],
        ),
    ];
    assert_mutations_fail_and_base_runs(dir.path(), PLACEMENT, &cases, "placement.csv");
}

/// Clients that follow their membership view (`orleans-placement`): one
/// row per judge and distribution, the costs of SWIM's false declaration
/// of a paused server and of the crash every judge declares, the same bytes
/// for any `--jobs`.
#[test]
fn clients_following_a_membership_view_report_each_judge() {
    let dir = tempfile::tempdir().unwrap();
    let files = ["placement.csv", "membership.csv", "index.html", "report.md"];
    let (one, stdout) = run_with_both_jobs(dir.path(), "orleans-placement", "1", &files);
    assert!(
        stdout.contains(
            "orleans-placement (key placement by membership view: 10 servers, 20 clients"
        ),
        "{stdout}"
    );
    let csv = fs::read_to_string(one.join("placement.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    // 5 judges x 6 distributions.
    assert_eq!(rows.len(), 30, "{csv}");
    for row in &rows {
        let judge = column(header, row, "detector");
        // The crash of n7: every one of the 20 clients marks it dead.
        assert_eq!(column(header, row, "true_declarations"), "20", "{row}");
        // The 30 s pause of n3: SWIM declares it, and so does Orleans 10.2
        // judged by phi (which needs no run of misses, and 10.2 has no
        // connection-liveness check); the classic and probe judges do not
        // (their indirect probes of a silent silo end "unknown").
        let falsely = if ["swim", "lifeguard", "phi-5s"].contains(&judge) {
            "20"
        } else {
            "0"
        };
        assert_eq!(column(header, row, "false_declarations"), falsely, "{row}");
    }
    let html = fs::read_to_string(one.join("index.html")).unwrap();
    assert!(html.contains("orleans-placement: key placement"), "{html}");
    assert!(html.contains("its own membership view"), "no note on views");
}
