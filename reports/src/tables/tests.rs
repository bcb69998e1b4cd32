//! Tests of the CSV files.

use super::*;
use crate::metrics::tests::two_seeds;

fn read(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

#[test]
fn csv_files_have_headers_and_one_row_per_item() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    write_run_tables(&out, &[two_seeds()]).unwrap();

    let (header, rows) = read(&out.join(SUMMARY_CSV));
    assert_eq!(header, SUMMARY_HEADER);
    assert_eq!(rows.len(), 2, "one row per scenario x detector");
    let col = |name: &str| SUMMARY_HEADER.iter().position(|h| *h == name).unwrap();
    let fixed = &rows[0];
    assert_eq!(fixed[col("detector")], "fixed");
    assert_eq!(fixed[col("failed_n")], "2");
    assert_eq!(fixed[col("failed_mean_ms")], "2500.000");
    assert_eq!(fixed[col("failed_p50_ms")], "2000.000");
    assert_eq!(fixed[col("failed_max_ms")], "3000.000");
    assert_eq!(fixed[col("failed_ci_runs")], "2");
    assert_eq!(fixed[col("failed_mean_ci_high_ms")], "8853.100");
    assert_eq!(fixed[col("mistakes_per_pair_hour")], "0.000000");
    assert_eq!(fixed[col("must_not_detect_pair_hours")], "0.050000");
    assert_eq!(fixed[col("messages_per_pair_second")], "1.000000");
    assert_eq!(fixed[col("pair_seconds")], "240.000");
    let phi = &rows[1];
    assert_eq!(phi[col("mistakes")], "1");
    assert_eq!(phi[col("mistake_mean_ms")], "500.000");
    assert_eq!(phi[col("share_runs_with_mistake")], "0.500000000");
    assert_eq!(phi[col("mistakes_per_pair_hour")], "20.000000");
    // The one mistake is a suspicion; none is a false Failed.
    assert_eq!(phi[col("false_failed")], "0");
    assert_eq!(phi[col("false_failed_per_pair_hour")], "0.000000");
    assert_eq!(phi[col("false_failed_mean_ms")], "");
    assert_eq!(phi[col("suspicions")], "1");
    assert_eq!(phi[col("suspicions_per_pair_hour")], "20.000000");
    assert_eq!(phi[col("suspicion_mean_ms")], "500.000");
    // fixed trusts the restarted n1 500 ms after the fault, and makes no
    // mistake: P_A over healthy time is whole.
    assert_eq!(fixed[col("recovery_n")], "2");
    assert_eq!(fixed[col("recovery_p50_ms")], "500.000");
    assert_eq!(fixed[col("recovery_p99_ms")], "500.000");
    assert_eq!(fixed[col("recovery_unfinished")], "0");
    assert_eq!(fixed[col("healthy_pair_hours")], "0.049722");
    assert_eq!(fixed[col("query_accuracy_healthy")], "1.000000000");
    assert_eq!(fixed[col("alive_share_must_not_detect")], "0.994444444");
    assert_eq!(phi[col("query_accuracy_healthy")], "0.997222222");

    let (header, rows) = read(&out.join(RUNS_CSV));
    assert_eq!(header, RUNS_HEADER);
    assert_eq!(rows.len(), 4, "one row per seed x detector");
    assert_eq!(rows[0][..3], ["crash", "1", "fixed"]);
    assert_eq!(rows[3][..3], ["crash", "2", "phi"]);
    assert_eq!(rows[0][4], "60.000");
    let col = |name: &str| RUNS_HEADER.iter().position(|h| *h == name).unwrap();
    assert_eq!(rows[0][col("recovery_p50_ms")], "500.000");
    assert_eq!(rows[3][col("suspicions")], "1");
    assert_eq!(rows[3][col("false_failed")], "0");
    assert_eq!(rows[3][col("suspicions_per_pair_hour")], "40.000000");
    assert_eq!(rows[0][col("query_accuracy_healthy")], "1.000000000");

    // A mesh: one class per detector, with the summary's figures.
    let (header, rows) = read(&out.join(CLASSES_CSV));
    assert_eq!(header, classes_header());
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1][..3], ["crash", "phi", "mesh"]);
    let (_, summary) = read(&out.join(SUMMARY_CSV));
    assert_eq!(rows[1][3..], summary[1][2..summary[1].len() - 1]);

    let (header, rows) = read(&out.join(DETECTIONS_CSV));
    assert_eq!(header, DETECTIONS_HEADER);
    assert_eq!(rows.len(), 4, "one window per seed x detector");
    assert_eq!(
        rows[0],
        [
            "crash",
            "1",
            "fixed",
            "n0",
            "n1",
            "0",
            "crash",
            "n1",
            "10000.000",
            "40000.000",
            "12000.000",
            "2000.000",
            "12000.000",
            "2000.000"
        ]
    );

    let (header, rows) = read(&out.join(MISTAKES_CSV));
    assert_eq!(header, MISTAKES_HEADER);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0],
        [
            "crash", "2", "phi", "n0", "n1", "5000.000", "5500.000", "500.000", "suspect", "alive",
            ""
        ]
    );
    // Nothing else left in the directory (no temporary files).
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 6);
    // summary.json holds summary.csv's rows, keyed by its columns.
    let json = std::fs::read_to_string(out.join(SUMMARY_JSON)).unwrap();
    assert!(
        json.starts_with("[\n  {\"scenario\": \"crash\", \"detector\": "),
        "{json}"
    );
    assert_eq!(
        json.matches("\n  {").count(),
        read(&out.join(SUMMARY_CSV)).1.len()
    );
}

#[test]
fn missed_detection_is_written_as_missed() {
    let mut result = two_seeds();
    result.runs.truncate(1);
    result.runs[0].pairs[0].detectors[0].changes.clear();
    let dir = tempfile::tempdir().unwrap();
    write_run_tables(dir.path(), &[result]).unwrap();
    let (_, rows) = read(&dir.path().join(DETECTIONS_CSV));
    assert_eq!(rows[0][12], "missed");
    assert_eq!(rows[0][13], "");
    let (_, rows) = read(&dir.path().join(SUMMARY_CSV));
    let col = |name: &str| SUMMARY_HEADER.iter().position(|h| *h == name).unwrap();
    assert_eq!(rows[0][col("failed_n")], "0");
    assert_eq!(rows[0][col("failed_mean_ms")], "");
    assert_eq!(rows[0][col("failed_missed")], "1");
    assert_eq!(rows[0][col("failed_ci_runs")], "0");
}

#[test]
fn empty_input_writes_headers_only() {
    let dir = tempfile::tempdir().unwrap();
    write_run_tables(dir.path(), &[]).unwrap();
    for (file, len) in [
        (SUMMARY_CSV, SUMMARY_HEADER.len()),
        (RUNS_CSV, RUNS_HEADER.len()),
        (DETECTIONS_CSV, DETECTIONS_HEADER.len()),
        (MISTAKES_CSV, MISTAKES_HEADER.len()),
        (CLASSES_CSV, classes_header().len()),
    ] {
        let (header, rows) = read(&dir.path().join(file));
        assert_eq!(header.len(), len);
        assert!(rows.is_empty());
    }
}
