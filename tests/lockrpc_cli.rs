//! End-to-end runs of lock-RPC scenarios (SPEC §10): `fdlab run` writes
//! `lockrpc.csv` and the report's lock-RPC section, the same bytes for any
//! `--jobs`; a bad `[lockrpc]` table is one error naming file, line and
//! key.

mod common;

use std::fs;
use std::path::Path;

use common::{assert_mutations_fail_and_base_runs, column, run_ok};

fn run_into(out: &Path, jobs: &str) -> String {
    run_ok("lockrpc-dead-peer", "1", jobs, out)
}

#[test]
fn a_lock_run_reports_each_policy_and_the_same_bytes_for_any_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    let stdout = run_into(&one, "1");
    run_into(&two, "2");
    assert!(
        stdout.contains("lockrpc-dead-peer (lock RPCs: 4 servers, 32 clients"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Stops using a dead peer fastest"),
        "{stdout}"
    );
    for file in ["lockrpc.csv", "index.html", "report.md"] {
        assert_eq!(
            fs::read(one.join(file)).unwrap(),
            fs::read(two.join(file)).unwrap(),
            "{file} differs between --jobs 1 and 2"
        );
    }
    let csv = fs::read_to_string(one.join("lockrpc.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    let policies: Vec<&str> = rows.iter().map(|r| column(header, r, "policy")).collect();
    assert_eq!(
        policies,
        ["evict-on-timeout", "rustfs", "rustfs-breaker", "dsync"]
    );
    for row in &rows {
        // The peer was dead, never slow: no eviction of a live peer; no
        // RPC on a connection to it once the reset arrived.
        assert_eq!(column(header, row, "evictions_healthy"), "0", "{row}");
        assert_eq!(column(header, row, "evictions_slow"), "0", "{row}");
        assert_eq!(
            column(header, row, "dead_windows_rpcs_stopped"),
            "1",
            "{row}"
        );
        let dsync = column(header, row, "policy") == "dsync";
        // dsync's channel goes offline instead of evicting.
        assert_eq!(column(header, row, "evictions_dead") == "0", dsync, "{row}");
        assert_eq!(
            column(header, row, "offline_skipped") != "0",
            dsync,
            "{row}"
        );
    }
    rustfs_lock_metrics_are_columns_and_a_second_table(header, &rows, &stdout);
    let html = fs::read_to_string(one.join("index.html")).unwrap();
    assert!(html.contains("lockrpc-dead-peer: lock RPCs"));
    assert!(
        html.contains("<b>RustFS lock metrics</b>"),
        "no RustFS table"
    );
    assert!(html.contains("title=\"suppressed_peer_recently_served\">peer_recently_served</th>"));
    assert!(html.contains("data-chart=\"lockrpc\""), "no lock-RPC chart");
    assert!(one.join("charts/lockrpc-dead-peer-lockrpc.svg").exists());
}

/// RustFS's six lock metrics, one column per label.
const RUSTFS_COLUMNS: [&str; 15] = [
    "timeouts_lock",
    "timeouts_unlock",
    "timeouts_ping",
    "timeouts_refresh",
    "evictions_timeout",
    "evictions_transport",
    "suppressed_peer_recently_served",
    "suppressed_cooling_down",
    "detached",
    "aborted",
    "late_success",
    "late_error",
    "late_released",
    "late_partial",
    "late_failed",
];

/// `lockrpc.csv` of a dead-peer run has RustFS's lock metrics by label,
/// adding up to the per-class columns, and reads as RustFS's runbook says
/// a dead peer does: transport evictions, about one per client per 5 s
/// cooldown under `rustfs`; the console prints them in a second table.
fn rustfs_lock_metrics_are_columns_and_a_second_table(header: &str, rows: &[&str], stdout: &str) {
    let names: Vec<&str> = header.split(',').collect();
    for name in RUSTFS_COLUMNS.iter().chain(&["dead_time_s"]) {
        assert_eq!(
            names.iter().filter(|n| *n == name).count(),
            1,
            "{name} in {header}"
        );
    }
    let n = |row: &str, name: &str| -> u64 {
        column(header, row, name)
            .parse()
            .unwrap_or_else(|e| panic!("{name} in {row}: {e}"))
    };
    let sum = |row: &str, names: &[&str]| names.iter().map(|c| n(row, c)).sum::<u64>();
    for row in rows {
        let policy = column(header, row, "policy");
        assert_eq!(
            sum(row, &RUSTFS_COLUMNS[..4]),
            sum(row, &["timeouts_healthy", "timeouts_slow", "timeouts_dead"]),
            "{row}"
        );
        assert_eq!(
            sum(row, &RUSTFS_COLUMNS[4..6]),
            sum(
                row,
                &["evictions_healthy", "evictions_slow", "evictions_dead"]
            ),
            "{row}"
        );
        assert_eq!(
            sum(row, &RUSTFS_COLUMNS[6..8]),
            n(row, "suppressed"),
            "{row}"
        );
        assert!(
            sum(row, &RUSTFS_COLUMNS[12..]) <= n(row, "late_releases"),
            "{row}"
        );
        // A crashed server refuses: its evictions are transport ones.
        assert_eq!(n(row, "evictions_timeout"), 0, "{row}");
        assert_eq!(column(header, row, "dead_time_s"), "90.000", "{row}");
        if policy == "rustfs" {
            // One channel per (node, peer): 4 nodes x 90 s / 5 s cooldown
            // = 72 at most (the runbook's "one per cooldown"), and the
            // failures between are cooling_down suppressions.
            let transport = n(row, "evictions_transport");
            assert!((68..=72).contains(&transport), "{row}");
            // Dead, not slow: no failure is judged "recently served".
            assert_eq!(n(row, "suppressed_peer_recently_served"), 0, "{row}");
            assert!(n(row, "suppressed_cooling_down") > transport, "{row}");
        }
    }
    let table = &stdout[stdout.find("RustFS lock metrics (").expect(stdout)..];
    let lines: Vec<&str> = table.lines().take(7).collect();
    assert!(lines[0].contains("crash windows 90.0 s in all"), "{table}");
    assert!(lines[2].starts_with("policy "), "{table}");
    for label in [
        "peer_recently_served",
        "cooling_down",
        "transport",
        "released",
    ] {
        assert!(lines[2].contains(label), "{label}: {table}");
    }
    for (line, policy) in
        lines[3..]
            .iter()
            .zip(["evict-on-timeout", "rustfs", "rustfs-breaker", "dsync"])
    {
        assert!(line.starts_with(policy), "{table}");
    }
    for line in &lines[1..] {
        assert!(line.chars().count() <= 160, "wider than 160: {line}");
    }
}

const LOCKS: &str = r#"duration = "20s"
seeds = 1

[topology]
kind = "mesh"
nodes = 3

[lockrpc]
clients_per_node = 2
rpcs_per_second = 10
"#;

#[test]
fn bad_lockrpc_keys_are_one_error_with_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str]); 6] = [
        (
            "rpcs_per_second = 10",
            "rpcs_per_second = 10\nrpc_dedline = \"2s\"",
            &["bad.toml:11", "rpc_dedline", "rpc_deadline"],
        ),
        (
            "rpcs_per_second = 10",
            "rpcs_per_second = 10\npolicies = [\"rustfs\", \"etcd\"]",
            &["lockrpc.policies[1]", "etcd", "rustfs-breaker"],
        ),
        (
            "rpcs_per_second = 10",
            "rpcs_per_second = 0",
            &["bad.toml:10", "lockrpc.rpcs_per_second", "positive"],
        ),
        (
            "rpcs_per_second = 10",
            "rpcs_per_second = 10\nrpc_deadline = \"0s\"",
            &["lockrpc.rpc_deadline"],
        ),
        (
            "rpcs_per_second = 10",
            "rpcs_per_second = 10\n\n[[detectors]]\nname = \"f\"\nkind = \"fixed-timeout\"",
            &["detectors", "no detectors"],
        ),
        (
            "rpcs_per_second = 10",
            "rpcs_per_second = 10\n\n[[faults]]\nkind = \"backpressure\"\ncapacity = 0.1\nat = \"5s\"",
            &["faults[0].kind", "does not apply to a lock-RPC scenario"],
        ),
    ];
    assert_mutations_fail_and_base_runs(dir.path(), LOCKS, &cases, "lockrpc.csv");
}

/// The operators' readings of RustFS's runbook on the two built-ins taken
/// from its issues: #7962's load (a high-rate client and a slow peer)
/// under `rustfs` times out at the client's rate with no connection torn
/// down, while `evict-on-timeout` re-dials in a storm; #7363's stall
/// (a frozen peer) closes connections only where resets of streams the
/// frozen server never accepted pass h2's limit.
#[test]
fn the_rustfs_issues_read_as_the_runbook_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("7962");
    run_ok("lockrpc-rate-7962", "1", "2", &out);
    let csv = fs::read_to_string(out.join("lockrpc.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    let row = |policy: &str| {
        csv.lines()
            .find(|l| column(header, l, "policy") == policy)
            .unwrap_or_else(|| panic!("{policy} in {csv}"))
            .to_string()
    };
    let f = |row: &str, name: &str| -> f64 { column(header, row, name).parse().unwrap() };
    let rustfs = row("rustfs");
    // Every client sends n1 1,300 lock RPCs a second; n1 is slow for 60 s.
    let per_client_second = f(&rustfs, "timeouts_lock") / f(&rustfs, "clients") / 60.0;
    assert!(per_client_second >= 650.0, "{per_client_second}: {rustfs}");
    for name in ["teardowns_healthy", "teardowns_slow", "teardowns_dead"] {
        assert_eq!(f(&rustfs, name), 0.0, "{name}: {rustfs}");
    }
    // Slow, not dead: the suppressions follow the timeouts.
    assert!(
        f(&rustfs, "suppressed_peer_recently_served") >= 0.9 * f(&rustfs, "timeouts_lock"),
        "{rustfs}"
    );
    let evict = row("evict-on-timeout");
    assert!(
        f(&evict, "redials_per_minute") > 1_000.0 * f(&rustfs, "redials_per_minute").max(1.0),
        "{evict}"
    );

    // A slow link (n0 <-> n1 1.6 s each way) under rustfs: the peer keeps
    // serving, so its timeouts are "recently served" suppressions.
    let out = dir.path().join("slow-link");
    run_ok("lockrpc-slow-link", "1", "2", &out);
    let csv = fs::read_to_string(out.join("lockrpc.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    let rustfs = csv
        .lines()
        .find(|l| column(header, l, "policy") == "rustfs")
        .unwrap();
    let g = |name: &str| -> f64 { column(header, rustfs, name).parse().unwrap() };
    let timeouts = g("timeouts_lock") + g("timeouts_unlock");
    assert!(timeouts > 0.0, "{rustfs}");
    assert!(
        g("suppressed_peer_recently_served") >= 0.9 * timeouts,
        "{rustfs}"
    );
    assert_eq!(
        g("evictions_timeout") + g("evictions_transport"),
        0.0,
        "{rustfs}"
    );

    let out = dir.path().join("7363");
    run_ok("lockrpc-reconnect-storm", "1", "2", &out);
    let csv = fs::read_to_string(out.join("lockrpc.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for l in csv.lines().skip(1) {
        let policy = column(header, l, "policy");
        let teardowns: f64 = ["teardowns_healthy", "teardowns_slow", "teardowns_dead"]
            .iter()
            .map(|c| column(header, l, c).parse::<f64>().unwrap())
            .sum();
        let aborted: f64 = column(header, l, "aborted").parse().unwrap();
        // Connection tear-downs only where RPCs were cancelled.
        if aborted == 0.0 {
            assert_eq!(teardowns, 0.0, "{policy}: {l}");
        }
        if policy == "evict-on-timeout" {
            assert!(teardowns > 0.0, "{l}");
        }
    }
}
