//! Inputs past fdlab's limits are refused with one line that names the file,
//! the line and the limit: recorded times near the end of the nanosecond
//! clock, files too large (or endless, like `/dev/zero`) to read, and error
//! messages that would otherwise echo megabytes or control bytes of input.

use std::fs;
use std::path::Path;

mod common;
use common::{assert_one_error_line, fdlab, fdlab_with_memory_limit, head, text};

/// Address space for a run that must stop reading by itself (recordings are
/// read up to 1 GiB).
const MEMORY_MIB: u64 = 4096;

/// The first time over 2^62 ns, in milliseconds (2^62 ns = 4611686018427.387904 ms).
const PAST_LIMIT_MS: &str = "4611686018427.388";
/// The last time within it.
const AT_LIMIT_MS: &str = "4611686018427.387904";

const SMALL_SCENARIO: &str = r#"
duration = "30s"
seeds = 1

[topology]
kind = "mesh"
nodes = 3

[network]
latency = LATENCY

[[detectors]]
kind = "fixed-timeout"
"#;

fn scenario_with_latency(dir: &Path, latency: &str) -> String {
    let path = dir.join("s.toml");
    fs::write(&path, SMALL_SCENARIO.replace("LATENCY", latency)).unwrap();
    path.to_str().unwrap().to_string()
}

/// `n` heartbeats a second apart from `start_ms` on, then `last` (a
/// `time_ms` cell).
fn recording(start_ms: u64, n: u64, last: &str) -> String {
    let mut text = String::from("time_ms\n");
    for i in 0..n {
        text.push_str(&format!("{}\n", start_ms + i * 1000));
    }
    text.push_str(last);
    text.push('\n');
    text
}

#[test]
fn recorded_event_times_past_2_pow_62_ns_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.csv");
    let detector = "kind=fixed-timeout";
    // At the limit: accepted.
    fs::write(
        &events,
        format!("time_ms,event\n4611686018000,heartbeat\n{AT_LIMIT_MS},query\n"),
    )
    .unwrap();
    let out = fdlab(&["trace", "--detector", detector, events.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Past it: refused, with the file, the line, the column and the limit.
    fs::write(
        &events,
        format!("time_ms,event\n0,heartbeat\n{PAST_LIMIT_MS},query\n"),
    )
    .unwrap();
    let out = fdlab(&["trace", "--detector", detector, events.to_str().unwrap()]);
    assert_one_error_line(&out, &["events.csv:3:", "`time_ms`", "2^62 ns"]);
    assert!(out.stdout.is_empty());
    // Near 2^64 ns, where the detectors' deadlines would wrap.
    fs::write(
        &events,
        "time_ms,event\n18446744072000,heartbeat\n18446744073000,query\n",
    )
    .unwrap();
    let out = fdlab(&["trace", "--detector", detector, events.to_str().unwrap()]);
    assert_one_error_line(&out, &["events.csv:2:", "2^62 ns"]);
    // A pause or round-trip time past it too.
    fs::write(
        &events,
        format!("time_ms,event,arg_ms\n0,maintenance,{PAST_LIMIT_MS}\n"),
    )
    .unwrap();
    let out = fdlab(&["trace", "--detector", detector, events.to_str().unwrap()]);
    assert_one_error_line(&out, &["events.csv:2:", "`arg_ms`", "2^62 ns"]);
}

#[test]
fn heartbeat_recording_times_past_2_pow_62_ns_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("hb.csv");
    fs::write(&trace, recording(4_611_686_000_000, 12, PAST_LIMIT_MS)).unwrap();
    let out = fdlab(&[
        "tune",
        "--trace",
        trace.to_str().unwrap(),
        "--detector",
        "fixed-timeout",
        "--cuts",
        "10",
    ]);
    assert_one_error_line(&out, &["hb.csv:14:", "`time_ms`", "2^62 ns"]);
}

#[test]
fn files_too_large_or_endless_are_refused_with_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let unused = dir.path().join("unused");
    let unused = unused.to_str().unwrap();
    // A 2 GiB (sparse) recording: refused from its size, before reading.
    let big = dir.path().join("big.csv");
    fs::File::create(&big).unwrap().set_len(2 << 30).unwrap();
    let out = fdlab_with_memory_limit(
        MEMORY_MIB,
        &[
            "trace",
            "--detector",
            "kind=phi-accrual",
            big.to_str().unwrap(),
        ],
    );
    assert_one_error_line(&out, &["big.csv", "1 GiB"]);
    let out = fdlab_with_memory_limit(
        MEMORY_MIB,
        &[
            "tune",
            "--trace",
            big.to_str().unwrap(),
            "--detector",
            "fixed-timeout",
        ],
    );
    assert_one_error_line(&out, &["big.csv", "1 GiB"]);
    // Endless inputs: a scenario, a samples file, a baseline.
    let out = fdlab_with_memory_limit(MEMORY_MIB, &["run", "/dev/zero", "--out", unused]);
    assert_one_error_line(&out, &["/dev/zero", "64 MiB"]);
    let scenario =
        scenario_with_latency(dir.path(), r#"{ dist = "empirical", file = "/dev/zero" }"#);
    let out = fdlab_with_memory_limit(MEMORY_MIB, &["run", &scenario, "--out", unused]);
    assert_one_error_line(&out, &["/dev/zero", "64 MiB", "network.latency.file"]);
    let suite = dir.path().join("suite");
    fs::create_dir(&suite).unwrap();
    fs::write(
        suite.join("s.toml"),
        SMALL_SCENARIO.replace("LATENCY", r#"{ dist = "constant", value = "1ms" }"#),
    )
    .unwrap();
    let out = fdlab_with_memory_limit(
        MEMORY_MIB,
        &[
            "check",
            "--suite",
            suite.to_str().unwrap(),
            "--baseline",
            "/dev/zero",
        ],
    );
    assert_one_error_line(&out, &["/dev/zero", "64 MiB"]);
    assert!(!Path::new(unused).exists());
}

#[test]
fn an_endless_recording_is_refused_at_1_gib() {
    let out = fdlab_with_memory_limit(
        MEMORY_MIB,
        &["trace", "--detector", "kind=phi-accrual", "/dev/zero"],
    );
    assert_one_error_line(&out, &["/dev/zero", "1 GiB"]);
}

/// Errors quote at most a short, escaped excerpt of what they quote.
fn assert_short(out: &std::process::Output, needles: &[&str]) {
    assert_one_error_line(out, needles);
    let err = text(&out.stderr);
    assert!(err.len() < 400, "{} bytes: {}", err.len(), head(&err));
    assert!(!out.stderr.contains(&0), "a NUL byte in: {:?}", head(&err));
}

#[test]
fn errors_quote_a_short_escaped_excerpt_of_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let unused = dir.path().join("unused");
    let unused = unused.to_str().unwrap();
    let events = dir.path().join("events.csv");
    let huge = "7".repeat(20 << 20) + "x";
    let e = events.to_str().unwrap();
    let detector = "kind=phi-accrual";
    // A 20 MB field.
    fs::write(&events, format!("time_ms,event\n{huge},heartbeat\n")).unwrap();
    let out = fdlab(&["trace", "--detector", detector, e]);
    assert_short(&out, &["events.csv:2:", "`time_ms`", "7777…"]);
    // A NUL byte and a line break inside a quoted field.
    fs::write(&events, "time_ms,event\n1,\"heart\0beat\nx\"\n").unwrap();
    let out = fdlab(&["trace", "--detector", detector, e]);
    assert_short(&out, &["events.csv:2:", r"heart\0beat\nx"]);
    // A header of 20 MB.
    fs::write(&events, format!("{huge}\n1\n")).unwrap();
    let out = fdlab(&["trace", "--detector", detector, e]);
    assert_short(&out, &["events.csv:1:"]);
    // The same in a heartbeat recording.
    let hb = dir.path().join("hb.csv");
    fs::write(&hb, format!("{huge},x\n1,2\n")).unwrap();
    let out = fdlab(&[
        "tune",
        "--trace",
        hb.to_str().unwrap(),
        "--detector",
        "fixed-timeout",
    ]);
    assert_short(&out, &["hb.csv:1:"]);
    fs::write(&hb, recording(0, 12, &huge)).unwrap();
    let out = fdlab(&[
        "tune",
        "--trace",
        hb.to_str().unwrap(),
        "--detector",
        "fixed-timeout",
    ]);
    assert_short(&out, &["hb.csv:14:"]);
    // An arbitrary binary file named as empirical samples: one long line.
    let samples = dir.path().join("samples.bin");
    let bytes: Vec<u8> = (0..2_000_000u32)
        .map(|i| match (i % 251) as u8 {
            b'\n' | b'\r' | b'"' | b',' | b'#' => 1,
            b => b,
        })
        .collect();
    fs::write(&samples, bytes).unwrap();
    let scenario = scenario_with_latency(
        dir.path(),
        r#"{ dist = "empirical", file = "samples.bin" }"#,
    );
    let out = fdlab(&["run", &scenario, "--out", unused]);
    assert_short(&out, &["samples.bin:1:", "network.latency.file"]);
    // A 20 MB value and a 1 MB key in a scenario file.
    let s = dir.path().join("big.toml");
    fs::write(
        &s,
        SMALL_SCENARIO
            .replace("LATENCY", "{ dist = \"constant\", value = \"1ms\" }")
            .replace("\"30s\"", &format!("\"{huge}\"")),
    )
    .unwrap();
    let out = fdlab(&["run", s.to_str().unwrap(), "--out", unused]);
    assert_short(&out, &["big.toml:2:", "`duration`"]);
    let key = "k".repeat(1 << 20);
    fs::write(
        &s,
        format!("{key} = 1\n")
            + &SMALL_SCENARIO.replace("LATENCY", "{ dist = \"constant\", value = \"1ms\" }"),
    )
    .unwrap();
    let out = fdlab(&["run", s.to_str().unwrap(), "--out", unused]);
    assert_short(&out, &["big.toml:1:", "kkkk…"]);
    // A control byte in a --detector value, and a long one.
    let out = fdlab(&["trace", "--detector", "kind=phi\u{1b}[2J", e]);
    assert_short(&out, &["--detector", r"phi\u{1b}[2J"]);
    let long = format!("kind=phi-accrual,threshold={}", "9".repeat(100_000) + "x");
    let out = fdlab(&["trace", "--detector", &long, e]);
    assert_short(&out, &["--detector", "threshold"]);
    let long = format!("kind=phi-accrual,{}", "t".repeat(100_000));
    let out = fdlab(&["trace", "--detector", &long, e]);
    assert_short(&out, &["--detector", "ttt…"]);
    assert!(!Path::new(unused).exists());
}
