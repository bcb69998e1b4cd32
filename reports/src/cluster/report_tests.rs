//! Tests of membership scenarios in the report of a run (`index.html`,
//! `report.md`, the CSV files and charts beside them), and a renderer of
//! the synthetic run's outputs for people to look at.

use std::path::Path;

use fdlab_protocol::Nanos;
use fdlab_sim::membership::outcome::Declaration;

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

/// The synthetic scenario under `swim` and `lifeguard` on seeds 1 to 3,
/// with false declarations of healthy members added: swim 6, 4 and 8,
/// lifeguard 2, 1 and 2. Each run also has the synthetic run's false
/// declaration of the paused n12 (not healthy), and the same node-time.
pub(crate) fn compared() -> MembershipReport {
    let healthy = |judge: &str, seed: u64| match (judge, seed) {
        ("swim", 1) => 6,
        ("swim", 2) => 4,
        ("swim", _) => 8,
        (_, 2) => 1,
        _ => 2,
    };
    let runs: Vec<_> = ["swim", "lifeguard"]
        .iter()
        .flat_map(|j| {
            [1, 2, 3].map(|seed| {
                let mut o = synthetic(20, seed, j, 0).0;
                for k in 0..healthy(j, seed) {
                    o.declarations.push(Declaration {
                        at: fixture::secs(100.0 + f64::from(k)),
                        target: fixture::silo(3, 0),
                        by: fixture::silo(4, 0),
                        false_positive: true,
                        impaired: false,
                        destroyed: Nanos::ZERO,
                        unresponsive: Nanos::ZERO,
                        agreed: None,
                    });
                }
                o.declarations.sort_by_key(|d| d.at);
                o
            })
        })
        .collect();
    MembershipReport {
        metrics: cluster_metrics("membership-compared", &runs),
        about: ClusterAbout::default(),
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
            "comparisons.csv",
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
    // Listed once in the contents, under its part, which the bar links.
    assert!(html.contains("<li><a href=\"#membership-mixed\">membership-mixed</a></li>"));
    assert!(html.contains("<a href=\"#part:membership\">Membership</a>"));
    assert!(html.contains("A crash, a long pause, a table outage &amp; a partition."));
    assert!(html.contains("How to read the cluster table"));
    assert!(html.contains("<svg data-chart=\"cluster\""));
    // Times in seconds: the unit in the header, once.
    assert!(html.contains("<th>mean<br>[95% CI] (s)</th>"), "{html}");
    assert!(html.contains("<td>20.000 [20.000, 20.000]</td>"), "{html}");
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
    for file in [MEMBERSHIP_CSV, DECLARATIONS_CSV, COMPARISONS_CSV] {
        assert!(!out.join(file).exists(), "{file}");
    }
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
            "orleans 10.2, 6 nodes starting within 10s: num_probed_silos = 10, num_votes_for_death_declaration = 2, "
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

#[test]
fn comparisons_csv_holds_the_ratio_of_two_judges_with_its_interval() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    write_report(&out, &[], &[], &[compared(), mixed(20, 0)]).unwrap();
    let text = std::fs::read_to_string(out.join(COMPARISONS_CSV)).unwrap();
    // Every run has the same node-time, so the ratio of mean rates is
    // that of mean counts, and Fieller's interval is that of the counts
    // (scaling a and b alike leaves it unchanged).
    // Healthy: a = [6, 4, 8], b = [2, 1, 2]: ā = 6, b̄ = 5/3, ratio 3.6;
    // s_aa = 4, s_bb = 1/3, s_ab = 1; v = s / 3; t² = 18.51322729.
    // A = 25/9 − t²/27 = 0.72075252, B = 10 − t²/9 = 3.82892424,
    // C = 36 − 4t²/3 = 11.31569695, D = B² − AC = 6.50484368,
    // √D = 2.55045950: (B ∓ √D) / A = 1.77379155 and 8.85100438.
    // All false (each run adds one of the paused n12): a = [7, 5, 9],
    // b = [3, 2, 3]: ratio 7 / (8/3) = 2.625; A = 64/9 − t²/27 =
    // 5.05408586, B = 56/3 − t²/9 = 12.49559090, C = 24.31569695,
    // √D = 5.76594936: 1.33152498 and 3.61322320.
    // In mixed, neither judge declared a healthy member and phi no live
    // silo at all: no ratio, and no interval.
    assert_eq!(
        text,
        "scenario,judge_a,judge_b,seeds,a_false_healthy,b_false_healthy,\
         ratio_false_healthy,ratio_false_healthy_ci_low,ratio_false_healthy_ci_high,\
         a_false,b_false,ratio_false,ratio_false_ci_low,ratio_false_ci_high,\
         a_observer_false_healthy,b_observer_false_healthy,ratio_observer_false_healthy,\
         ratio_observer_false_healthy_ci_low,ratio_observer_false_healthy_ci_high,\
         a_observer_false,b_observer_false,ratio_observer_false,ratio_observer_false_ci_low,\
         ratio_observer_false_ci_high\n\
         membership-compared,swim,lifeguard,3,18,5,3.600000,1.773792,8.851004,21,8,2.625000,1.331525,3.613223,\
         0,0,,,,0,0,,,\n\
         membership-mixed,classic,phi,2,0,0,,,,2,0,,,,0,0,,,,0,0,,,\n"
    );
    // The verdict of the two judges says it in words.
    let html = std::fs::read_to_string(out.join(INDEX_HTML)).unwrap();
    assert!(
        html.contains(
            "<code>swim</code> made 3.6× as many false declarations of healthy members per node-hour \
             as <code>lifeguard</code> (18 against 5; 95% interval over 3 seeds: 1.8× to 8.9×)"
        ),
        "{html}"
    );
}
