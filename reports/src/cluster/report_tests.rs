//! Tests of membership scenarios in the report of a run (`index.html`,
//! `report.md`, the CSV files and charts beside them), and a renderer of
//! the synthetic run's outputs for people to look at.

use std::path::Path;

use super::fixture::synthetic;
use super::*;
use crate::metrics::scenario_metrics;
use crate::metrics::tests::two_seeds;
use crate::report::{write_report, About, INDEX_HTML, REPORT_MD};

/// The synthetic scenario under `classic` and `phi` (phi declares the
/// crash 5 s sooner and never falsely) on two seeds.
pub(crate) fn mixed(nodes: u32, extra_pauses: u32) -> MembershipReport {
    let runs: Vec<_> = ["classic", "phi"]
        .iter()
        .flat_map(|j| {
            [1, 2].map(|seed| {
                let mut o = synthetic(nodes, seed, j, extra_pauses).0;
                if *j == "phi" {
                    o.crashes[0].declared = Some(o.crashes[0].at + fixture::secs(15.0));
                    o.declarations.retain(|d| !d.false_positive);
                }
                o
            })
        })
        .collect();
    MembershipReport {
        metrics: cluster_metrics("membership-mixed", &runs),
        about: ClusterAbout {
            description: "A crash, a long pause, a table outage & a partition.".into(),
            setup: "orleans, 20 nodes: num_probed_silos = 10".into(),
            judges: vec![
                ("classic".into(), "Orleans' missed-probe count".into()),
                (
                    "phi".into(),
                    "kind = \"phi-accrual\", threshold = 8.0".into(),
                ),
            ],
        },
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if entry.path().is_dir() {
            out.extend(
                names(&entry.path())
                    .into_iter()
                    .map(|n| format!("{name}/{n}")),
            );
        } else {
            out.push(name);
        }
    }
    out.sort();
    out
}

#[test]
fn a_report_of_membership_scenarios_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    write_report(&out, &[], &[], &[mixed(20, 0)]).unwrap();
    assert_eq!(
        names(&out),
        [
            ".fdlab-report",
            "charts/membership-mixed-cluster.svg",
            "classes.csv",
            "declarations.csv",
            "detections.csv",
            "index.html",
            "membership.csv",
            "mistakes.csv",
            "report.md",
            "runs.csv",
            "summary.csv",
            "summary.json",
        ]
    );
    let html = std::fs::read_to_string(out.join(INDEX_HTML)).unwrap();
    assert!(html.contains("1 scenario, 4 simulated runs"), "{html}");
    // The verdict names the least costly judge, with no detector section.
    assert!(html.contains("<h2>Verdict</h2>"), "{html}");
    assert!(
        html.contains("(cluster membership): least costly judge: <code>"),
        "{html}"
    );
    assert!(
        !html.contains("Next:"),
        "no detector to suggest a next step for"
    );
    assert!(html.contains("<h2>membership-mixed: cluster membership</h2>"));
    assert!(html.contains("<a href=\"#membership-mixed\">membership-mixed: cluster membership</a>"));
    assert!(html.contains("A crash, a long pause, a table outage &amp; a partition."));
    assert!(html.contains("How to read the cluster table"));
    assert!(html.contains("<svg data-chart=\"cluster\""));
    assert!(html.contains("<td>20.000 s [20.000, 20.000]</td>"));
    assert!(html.contains("<code>kind = &quot;phi-accrual&quot;, threshold = 8.0</code>"));
    assert!(!html.contains("http") && !html.contains("<script"));
    let md = std::fs::read_to_string(out.join(REPORT_MD)).unwrap();
    assert!(md.contains("## membership-mixed: cluster membership\n"));
    assert!(md.contains("](charts/membership-mixed-cluster.svg)"));
    assert!(md.contains("| classic | 2 / 2 | 20.000 s |"), "{md}");
    assert!(md.contains("## How to read the cluster tables"));
    assert!(!md.contains("## How to read the tables\n"));
    // The same input, the same bytes.
    let again = dir.path().join("again");
    write_report(&again, &[], &[], &[mixed(20, 0)]).unwrap();
    for file in names(&out) {
        assert_eq!(
            std::fs::read(out.join(&file)).unwrap(),
            std::fs::read(again.join(&file)).unwrap(),
            "{file}"
        );
    }
    // A later run without membership scenarios replaces it whole.
    let m = scenario_metrics(&two_seeds());
    write_report(&out, &[m], &[], &[]).unwrap();
    assert!(!out.join(MEMBERSHIP_CSV).exists() && !out.join(DECLARATIONS_CSV).exists());
}

#[test]
fn detector_and_membership_scenarios_share_stems_and_colours() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mut m = scenario_metrics(&two_seeds());
    m.scenario = "membership-mixed".into();
    let about = [About::default()];
    write_report(&out, &[m], &about, &[mixed(20, 0)]).unwrap();
    let files = names(&out);
    assert!(files.contains(&"charts/membership-mixed-cdf.svg".to_string()));
    assert!(files.contains(&"charts/membership-mixed-2-cluster.svg".to_string()));
    let html = std::fs::read_to_string(out.join(INDEX_HTML)).unwrap();
    assert!(html.contains("2 scenarios, 6 simulated runs"));
    assert!(html.contains("<h2>Verdict</h2>"));
    assert!(html.contains("<section id=\"membership-mixed-2\" class=\"cluster\">"));
    // phi is the second detector of the detector scenario: the same
    // colour as a judge (the palette's second, vermillion).
    let chart = std::fs::read_to_string(out.join("charts/membership-mixed-2-cluster.svg")).unwrap();
    assert!(
        chart.contains("#D55E00") || chart.contains("#d55e00"),
        "{chart}"
    );
    let md = std::fs::read_to_string(out.join(REPORT_MD)).unwrap();
    assert!(
        md.contains("## How to read the tables\n")
            && md.contains("## How to read the cluster tables")
    );
}

/// Writes the synthetic outputs for people to look at (not a check):
/// `FDLAB_RENDER_DIR` or `fdlab-cluster-render` in the temporary
/// directory: `replay-20/` and `replay-200/` (timelines of 20 and 200
/// silos) and `report/` (a run's report with a detector scenario and the
/// membership scenario).
#[test]
#[ignore]
fn render_for_review() {
    let root = std::env::var_os("FDLAB_RENDER_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("fdlab-cluster-render"));
    for (nodes, pauses) in [(20, 3), (200, 60)] {
        let (o, log) = synthetic(nodes, 1, "classic", pauses);
        let dir = root.join(format!("replay-{nodes}"));
        let digest = write_cluster_replay(&dir, &o, &log).unwrap();
        println!("{}: {digest}", dir.display());
    }
    let m = scenario_metrics(&two_seeds());
    write_report(
        &root.join("report"),
        &[m],
        &[About::default()],
        &[mixed(20, 0)],
    )
    .unwrap();
    write_report(&root.join("report-membership"), &[], &[], &[mixed(20, 0)]).unwrap();
    // No crash to declare: the chart is bars of false declarations.
    let mut no_crash = mixed(20, 0);
    for s in &mut no_crash.metrics.summary {
        (s.crashes, s.declared, s.declare, s.declare_ci, s.agree) = (0, 0, None, None, None);
    }
    write_report(&root.join("report-no-crash"), &[], &[], &[no_crash]).unwrap();
}

#[test]
fn what_the_report_says_of_a_scenario() {
    use fdlab_sim::scenario::MembershipSetup;
    let mut s = fdlab_scenarios::builtin_scenario("crash-mesh")
        .unwrap()
        .unwrap()
        .into_inner();
    s.membership = Some(MembershipSetup {
        restart_after: Some(fdlab_protocol::Nanos::from_secs(10)),
        ..MembershipSetup::default()
    });
    let about = ClusterAbout::of(&s);
    let names: Vec<&str> = about.judges.iter().map(|(n, _)| n.as_str()).collect();
    // By default: classic, then every detector.
    assert_eq!(
        names,
        [
            "classic",
            "fixed-3s",
            "phi-akka",
            "phi-100ms",
            "probe-orleans"
        ]
    );
    assert_eq!(
        about.judges[0].1,
        "Orleans' missed-probe count: suspects after num_missed_probes_limit = 3 missed probes (one every probe_timeout = 5s)"
    );
    assert!(about.judges[2].1.starts_with("kind = \"phi-accrual\""));
    assert!(
        about.setup.starts_with(
            "orleans, 6 nodes starting within 10s: num_probed_silos = 10, num_votes_for_death_declaration = 2, "
        ),
        "{}",
        about.setup
    );
    assert!(about.setup.ends_with("a stopped silo restarts after 10s"));
    assert_eq!(about.description, s.description);
    // Judges named in the scenario: in its order.
    s.membership.as_mut().unwrap().judges = Some(vec!["phi-akka".into(), "classic".into()]);
    let about = ClusterAbout::of(&s);
    assert_eq!(about.judges[0].0, "phi-akka");
    assert_eq!(about.judges.len(), 2);
    let (o, _) = synthetic(20, 1, "classic", 0);
    let r = MembershipReport::new(&s, &[o]);
    assert_eq!(r.metrics.scenario, s.name);
    assert_eq!(r.metrics.summary[0].judge, "classic");
}
