//! Quality-of-service metrics of failure detectors, computed from the verdict
//! timelines and the ground truth of simulated runs.
//!
//! The metrics are those of Chen, Toueg & Aguilera, "On the Quality of Service
//! of Failure Detectors" (IEEE Transactions on Computers 51(5), 2002): a
//! detector is judged by how fast it notices a real failure (*detection time*
//! T_D) and by how rarely and how briefly it is wrong about a live peer
//! (*mistake rate* λ_M, *mistake duration* T_M, *query accuracy probability*
//! P_A; their mistake recurrence time T_MR is 1/λ_M). Chen et al. define them
//! for one monitor–target pair over an infinite run with the target either
//! crashed or never crashing; a simulated run is finite and faults come and go,
//! so every figure here is measured inside the stretches of time where the
//! ground truth says what the verdict must be (§5 of the spec):
//!
//! - **Verdict timeline.** [`DetectorTimeline::changes`] is a list of
//!   `(true time, verdict)`, Alive before the first change. Several changes may
//!   share an instant; the last one at an instant is the verdict from then on
//!   (a Suspect then Failed in one instant is a Failed). Changes are taken in
//!   time order (a stable sort, so an out-of-order list still has a meaning);
//!   changes at or after the end of the run are ignored.
//! - **Judged time** of a pair is `[0, duration)` minus its `unjudged` windows
//!   (its monitor was down and had no opinion). **Must-detect time** is the
//!   union of its `must_detect` windows within judged time; **must-not-detect
//!   time** is judged time minus must-detect time.
//! - **Detection time** T_D of one must-detect window `[onset, end)` (end clipped
//!   to the end of the run): from the onset to the first judged instant `t` in
//!   `[onset, end)` at which the verdict is Failed and stays Failed at every
//!   judged instant until the fault ends. This is Chen et al.'s T_D ("the time
//!   from the crash until the final, permanent suspicion"), with "permanent"
//!   meaning "for as long as the fault lasts": a Failed that flaps back to Alive
//!   during the fault does not count, the later lasting one does. A verdict
//!   already Failed at the onset that stays so gives T_D = 0. If there is no
//!   such instant, the window is a **missed** detection. The same is measured to
//!   Suspect (the first Suspect-or-worse that lasts until the fault ends).
//!   Windows entirely outside judged time (the monitor was down for the whole
//!   fault) are skipped, neither detected nor missed; empty windows likewise.
//! - **Mistakes**: a transition from Alive into Suspect or Failed at an instant
//!   of must-not-detect time (Chen et al.'s "S-transition" while the target is
//!   up). A mistake lasts until the verdict returns to Alive, or until
//!   must-not-detect time ends (the next must-detect window starts, the monitor
//!   goes down, or the run ends), whichever comes first: after that instant the
//!   verdict is no longer a mistake, or no longer judged. A Suspect that turns
//!   into Failed is one mistake, not two.
//! - **λ_M** = mistakes / (must-not-detect time in hours, summed over pairs): the
//!   mistake rate per monitored-pair-hour. **T_M** = mean mistake duration.
//!   **P_A** = share of must-not-detect time during which the verdict was Alive
//!   (the probability that a query at a random instant of must-not-detect time
//!   gets a correct answer). Verdicts that stay non-Alive after a fault heals
//!   lower P_A but are not new mistakes (no transition happened then).
//! - **Overhead**: liveness messages and bytes per monitored pair per second:
//!   the sum over pairs divided by (pairs × run duration in seconds).
//!
//! Aggregates per scenario × detector ([`DetectorSummary`]) pool all pairs and
//! all seeds. Percentiles are by **nearest rank** ([`nearest_rank`]: the value at
//! 1-based rank ⌈p·n⌉ of the sorted samples), so every percentile is a
//! detection time that really happened. Every figure carries the number of
//! samples behind it.
//!
//! **Confidence intervals** (95%, [`mean_ci95`]) treat the runs (seeds) as the
//! independent replications: within one run, samples are correlated (one crash
//! is detected by several monitors at nearly the same time, one long pause
//! causes mistakes on every monitor of the paused node), so pooling them as if
//! independent would give intervals that are far too narrow. For the mean
//! detection time, the interval is a Student-t interval over the per-run means
//! (runs with at least one detection); for the mistake rate, a Student-t
//! interval over the per-run rates λ_M (runs with must-not-detect time). Both
//! need at least two runs, and lower bounds are clamped at zero. The interval is
//! for the mean of per-run values, which equals the pooled figure when all runs
//! carry the same weight (the same faults and pairs every seed, the usual case).
//! When every run has zero mistakes the rate interval is `[0, 0]`: seeds did not
//! disagree, which says nothing about rates below one mistake per run.
//!
//! Determinism: no hash maps; sums of times are exact integer sums (`u128`
//! nanoseconds); float sums run in a fixed order (pairs in order, seeds in the
//! order given, detectors in the scenario's order).

use fdlab_protocol::time::NANOS_PER_HOUR;
use fdlab_protocol::time::NANOS_PER_SEC;
use fdlab_protocol::{Nanos, Verdict};
use fdlab_sim::outcome::{DetectorTimeline, FaultRecord, PairOutcome, RunOutcome, Window};
use fdlab_sim::stats::mean_nanos;
/// Moved to `fdlab_sim::stats` so that hosts in `sim` (the trace evaluator)
/// compute percentiles the same way; re-exported here for existing users.
pub use fdlab_sim::stats::{nearest_rank, DurationStats};

/// The runs of one scenario, in seed order, as the caller ran them.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioResult {
    pub scenario: String,
    pub runs: Vec<RunOutcome>,
}

/// One must-detect window of one pair, as one detector handled it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detection {
    pub monitor: u32,
    pub target: u32,
    /// Index into [`RunOutcome::faults`].
    pub fault: usize,
    /// The window, its end clipped to the end of the run.
    pub window: Window,
    /// When the lasting Suspect-or-worse began; `None` = missed.
    pub suspect_at: Option<Nanos>,
    /// When the lasting Failed began; `None` = missed.
    pub failed_at: Option<Nanos>,
}

impl Detection {
    /// Detection time to Suspect (T_D to a suspicion).
    pub fn suspect_delay(&self) -> Option<Nanos> {
        self.suspect_at.map(|t| t - self.window.start)
    }
    /// Detection time to Failed (T_D).
    pub fn failed_delay(&self) -> Option<Nanos> {
        self.failed_at.map(|t| t - self.window.start)
    }
}

/// Why a mistake ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MistakeEnd {
    /// The verdict went back to Alive.
    Alive,
    /// A must-detect window began: the verdict became right.
    MustDetect,
    /// The monitor went down.
    Unjudged,
    /// The run ended.
    RunEnd,
}

impl MistakeEnd {
    /// The name used in `mistakes.csv`.
    pub const fn as_str(self) -> &'static str {
        match self {
            MistakeEnd::Alive => "alive",
            MistakeEnd::MustDetect => "must-detect",
            MistakeEnd::Unjudged => "unjudged",
            MistakeEnd::RunEnd => "run-end",
        }
    }
}

/// A Suspect or Failed verdict about a target that must not be detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mistake {
    pub monitor: u32,
    pub target: u32,
    pub start: Nanos,
    pub end: Nanos,
    /// The worst verdict during the mistake.
    pub worst: Verdict,
    pub ended_by: MistakeEnd,
}

impl Mistake {
    pub fn duration(&self) -> Nanos {
        self.end - self.start
    }
}

/// One detector's record on one pair in one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairMetrics {
    /// One per must-detect window with judged time, in the pair's order.
    pub detections: Vec<Detection>,
    /// In time order.
    pub mistakes: Vec<Mistake>,
    /// Must-not-detect time of the pair.
    pub must_not_detect: Nanos,
    /// The part of it during which the verdict was Alive.
    pub alive_must_not_detect: Nanos,
}

/// One detector's record over all pairs of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DetectorRun {
    pub detector: String,
    /// Pairs that have a timeline for this detector.
    pub pairs: u64,
    /// Pairs in order, windows in each pair's order.
    pub detections: Vec<Detection>,
    /// Pairs in order, then time order.
    pub mistakes: Vec<Mistake>,
    /// Sums over pairs, in nanoseconds.
    pub must_not_detect: u128,
    pub alive_must_not_detect: u128,
    /// Sum of the durations of `mistakes`, in nanoseconds.
    pub mistake_time: u128,
    pub messages: u64,
    pub bytes: u64,
    /// `pairs` × run duration, in nanoseconds: the exposure of the overhead.
    pub pair_time: u128,
}

impl DetectorRun {
    pub fn failed_stats(&self) -> Option<DurationStats> {
        DurationStats::from_samples(self.detections.iter().filter_map(|d| d.failed_delay()))
    }
    pub fn suspect_stats(&self) -> Option<DurationStats> {
        DurationStats::from_samples(self.detections.iter().filter_map(|d| d.suspect_delay()))
    }
    pub fn failed_missed(&self) -> usize {
        self.detections
            .iter()
            .filter(|d| d.failed_at.is_none())
            .count()
    }
    pub fn suspect_missed(&self) -> usize {
        self.detections
            .iter()
            .filter(|d| d.suspect_at.is_none())
            .count()
    }
    /// λ_M, mistakes per monitored-pair-hour of must-not-detect time.
    pub fn mistake_rate(&self) -> Option<f64> {
        rate_per_hour(self.mistakes.len() as u128, self.must_not_detect)
    }
    /// T_M.
    pub fn mean_mistake(&self) -> Option<Nanos> {
        mean_nanos(self.mistake_time, self.mistakes.len() as u128)
    }
    /// P_A.
    pub fn query_accuracy(&self) -> Option<f64> {
        ratio(self.alive_must_not_detect, self.must_not_detect)
    }
    pub fn messages_per_pair_second(&self) -> Option<f64> {
        per_second(self.messages as u128, self.pair_time)
    }
    pub fn bytes_per_pair_second(&self) -> Option<f64> {
        per_second(self.bytes as u128, self.pair_time)
    }
}

/// The metrics of one run (one seed), with what the output files need to name
/// nodes and faults.
#[derive(Clone, Debug, PartialEq)]
pub struct RunMetrics {
    pub seed: u64,
    pub duration: Nanos,
    pub nodes: Vec<String>,
    pub faults: Vec<FaultRecord>,
    /// Simulation events processed.
    pub events: u64,
    /// In the scenario's detector order.
    pub detectors: Vec<DetectorRun>,
}

impl RunMetrics {
    /// A node's name, or its index if the run does not name it.
    pub fn node_name(&self, node: u32) -> String {
        match self.nodes.get(node as usize) {
            Some(name) => name.clone(),
            None => node.to_string(),
        }
    }
}

/// A 95% confidence interval for the mean of per-run values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanCi {
    /// The mean of the per-run values (the centre of the interval).
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    /// How many runs (per-run values) it rests on.
    pub runs: usize,
}

/// Student-t 95% interval for the mean of `values` (one value per run, in
/// run order): mean ± t(0.975, n−1) · s / √n, s the sample standard deviation.
/// The lower bound is clamped at zero (every quantity here is non-negative).
/// `None` with fewer than two values or a non-finite value.
pub fn mean_ci95(values: &[f64]) -> Option<MeanCi> {
    let n = values.len();
    if n < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut sum = 0.0;
    for v in values {
        sum += v;
    }
    let mean = sum / n as f64;
    let mut squares = 0.0;
    for v in values {
        squares += (v - mean) * (v - mean);
    }
    let sd = (squares / (n - 1) as f64).sqrt();
    let half = t_975(n - 1) * sd / (n as f64).sqrt();
    Some(MeanCi {
        mean,
        low: (mean - half).max(0.0),
        high: mean + half,
        runs: n,
    })
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom:
/// a table up to 30, then the Cornish–Fisher expansion around the normal
/// quantile (error below 1e-4 there).
fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    ];
    if df == 0 {
        return f64::INFINITY;
    }
    if let Some(&t) = TABLE.get(df - 1) {
        return t;
    }
    let z: f64 = 1.959_963_984_540_054;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    let g1 = (z3 + z) / 4.0;
    let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    let d = df as f64;
    z + g1 / d + g2 / (d * d) + g3 / (d * d * d)
}

/// One detector over all runs of one scenario: the row of `summary.csv`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DetectorSummary {
    pub detector: String,
    /// Runs (seeds) in which the detector took part.
    pub runs: usize,
    /// Monitored pairs summed over runs.
    pub pair_runs: u64,
    /// Must-detect windows judged (the denominator of `missed`).
    pub detect_windows: usize,
    /// Detection time to Failed, pooled over pairs and seeds.
    pub failed: Option<DurationStats>,
    /// 95% interval of the mean detection time to Failed (nanoseconds).
    pub failed_ci: Option<MeanCi>,
    pub failed_missed: usize,
    pub suspect: Option<DurationStats>,
    pub suspect_ci: Option<MeanCi>,
    pub suspect_missed: usize,
    pub mistakes: usize,
    pub mistake_time: u128,
    pub must_not_detect: u128,
    pub alive_must_not_detect: u128,
    /// 95% interval of λ_M (mistakes per pair-hour).
    pub mistake_rate_ci: Option<MeanCi>,
    pub runs_with_mistake: usize,
    pub messages: u128,
    pub bytes: u128,
    pub pair_time: u128,
}

impl DetectorSummary {
    /// λ_M over all pairs and seeds.
    pub fn mistake_rate(&self) -> Option<f64> {
        rate_per_hour(self.mistakes as u128, self.must_not_detect)
    }
    /// T_M over all mistakes.
    pub fn mean_mistake(&self) -> Option<Nanos> {
        mean_nanos(self.mistake_time, self.mistakes as u128)
    }
    /// P_A over all must-not-detect time.
    pub fn query_accuracy(&self) -> Option<f64> {
        ratio(self.alive_must_not_detect, self.must_not_detect)
    }
    /// Share of runs with at least one mistake.
    pub fn share_runs_with_mistake(&self) -> Option<f64> {
        ratio(self.runs_with_mistake as u128, self.runs as u128)
    }
    pub fn messages_per_pair_second(&self) -> Option<f64> {
        per_second(self.messages, self.pair_time)
    }
    pub fn bytes_per_pair_second(&self) -> Option<f64> {
        per_second(self.bytes, self.pair_time)
    }
}

/// Everything computed for one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioMetrics {
    pub scenario: String,
    /// In the order of [`ScenarioResult::runs`].
    pub runs: Vec<RunMetrics>,
    /// One per detector name, in order of first appearance.
    pub summary: Vec<DetectorSummary>,
}

/// Computes per-run and aggregate metrics of one scenario.
pub fn scenario_metrics(result: &ScenarioResult) -> ScenarioMetrics {
    let runs: Vec<RunMetrics> = result.runs.iter().map(run_metrics).collect();
    let summary = summarize(&runs);
    ScenarioMetrics {
        scenario: result.scenario.clone(),
        runs,
        summary,
    }
}

/// Aggregates per-run metrics by detector name (first appearance order).
/// Runs are taken in the order given.
pub fn summarize(runs: &[RunMetrics]) -> Vec<DetectorSummary> {
    let mut names: Vec<&str> = Vec::new();
    for run in runs {
        for d in &run.detectors {
            if !names.contains(&d.detector.as_str()) {
                names.push(&d.detector);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let entries: Vec<&DetectorRun> = runs
                .iter()
                .flat_map(|r| r.detectors.iter())
                .filter(|d| d.detector == name)
                .collect();
            summarize_detector(name, &entries)
        })
        .collect()
}

fn summarize_detector(name: &str, entries: &[&DetectorRun]) -> DetectorSummary {
    let totals: Vec<RunTotals> = entries.iter().map(|e| e.totals()).collect();
    summarize_totals(name, &totals)
}

/// What a detector's summary needs of one run: its detection delays and its
/// totals. The compact form of [`DetectorRun`] that a sweep keeps (and
/// stores on disk) per point and seed, so that summaries computed from it,
/// in one process or merged from many, are the same to the bit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunTotals {
    pub pairs: u64,
    /// One per judged must-detect window, in order: the delay to Failed
    /// (`None` = missed).
    pub failed: Vec<Option<Nanos>>,
    /// The same windows: the delay to Suspect.
    pub suspect: Vec<Option<Nanos>>,
    pub mistakes: u64,
    pub mistake_time: u128,
    pub must_not_detect: u128,
    pub alive_must_not_detect: u128,
    pub messages: u64,
    pub bytes: u64,
    pub pair_time: u128,
}

impl DetectorRun {
    pub fn totals(&self) -> RunTotals {
        RunTotals {
            pairs: self.pairs,
            failed: self.detections.iter().map(|d| d.failed_delay()).collect(),
            suspect: self.detections.iter().map(|d| d.suspect_delay()).collect(),
            mistakes: self.mistakes.len() as u64,
            mistake_time: self.mistake_time,
            must_not_detect: self.must_not_detect,
            alive_must_not_detect: self.alive_must_not_detect,
            messages: self.messages,
            bytes: self.bytes,
            pair_time: self.pair_time,
        }
    }
}

/// Aggregates one detector's runs (in the order given) into its summary.
pub fn summarize_totals(name: &str, entries: &[RunTotals]) -> DetectorSummary {
    let mut s = DetectorSummary {
        detector: name.to_string(),
        runs: entries.len(),
        ..DetectorSummary::default()
    };
    let mut failed = Vec::new();
    let mut suspect = Vec::new();
    let mut failed_run_means = Vec::new();
    let mut suspect_run_means = Vec::new();
    let mut run_rates = Vec::new();
    for e in entries {
        s.pair_runs += e.pairs;
        s.detect_windows += e.failed.len();
        let before = failed.len();
        failed.extend(e.failed.iter().flatten());
        if let Some(m) = mean_f64(&failed[before..]) {
            failed_run_means.push(m);
        }
        let before = suspect.len();
        suspect.extend(e.suspect.iter().flatten());
        if let Some(m) = mean_f64(&suspect[before..]) {
            suspect_run_means.push(m);
        }
        s.failed_missed += e.failed.iter().filter(|d| d.is_none()).count();
        s.suspect_missed += e.suspect.iter().filter(|d| d.is_none()).count();
        s.mistakes += e.mistakes as usize;
        s.mistake_time += e.mistake_time;
        s.must_not_detect += e.must_not_detect;
        s.alive_must_not_detect += e.alive_must_not_detect;
        if let Some(rate) = rate_per_hour(u128::from(e.mistakes), e.must_not_detect) {
            run_rates.push(rate);
        }
        if e.mistakes > 0 {
            s.runs_with_mistake += 1;
        }
        s.messages += u128::from(e.messages);
        s.bytes += u128::from(e.bytes);
        s.pair_time += e.pair_time;
    }
    s.failed = DurationStats::from_samples(failed);
    s.suspect = DurationStats::from_samples(suspect);
    s.failed_ci = mean_ci95(&failed_run_means);
    s.suspect_ci = mean_ci95(&suspect_run_means);
    s.mistake_rate_ci = mean_ci95(&run_rates);
    s
}

/// Computes every detector's metrics for one run.
pub fn run_metrics(run: &RunOutcome) -> RunMetrics {
    let duration = run.duration;
    let truths: Vec<Truth> = run.pairs.iter().map(|p| Truth::new(duration, p)).collect();
    let detectors = run
        .detectors
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let mut d = DetectorRun {
                detector: name.clone(),
                ..DetectorRun::default()
            };
            for (pair, truth) in run.pairs.iter().zip(&truths) {
                let Some(timeline) = pair.detectors.get(index) else {
                    continue;
                };
                let m = judge(duration, pair, truth, timeline);
                d.pairs += 1;
                d.detections.extend(m.detections);
                d.mistake_time += m
                    .mistakes
                    .iter()
                    .map(|x| u128::from(x.duration().0))
                    .sum::<u128>();
                d.mistakes.extend(m.mistakes);
                d.must_not_detect += u128::from(m.must_not_detect.0);
                d.alive_must_not_detect += u128::from(m.alive_must_not_detect.0);
                d.messages = d.messages.saturating_add(timeline.messages);
                d.bytes = d.bytes.saturating_add(timeline.bytes);
                d.pair_time += u128::from(duration.0);
            }
            d
        })
        .collect();
    RunMetrics {
        seed: run.seed,
        duration,
        nodes: run.nodes.clone(),
        faults: run.faults.clone(),
        events: run.events,
        detectors,
    }
}

/// One detector's record on one pair of a run of length `duration`.
pub fn pair_metrics(
    duration: Nanos,
    pair: &PairOutcome,
    timeline: &DetectorTimeline,
) -> PairMetrics {
    judge(duration, pair, &Truth::new(duration, pair), timeline)
}

/// Half-open spans `[start, end)` in nanoseconds, sorted, disjoint, not
/// adjacent, not empty.
type Spans = Vec<(u64, u64)>;

/// The ground truth of one pair as spans, shared by all its detectors.
struct Truth {
    judged: Spans,
    must_detect: Spans,
    must_not_detect: Spans,
}

impl Truth {
    fn new(duration: Nanos, pair: &PairOutcome) -> Truth {
        let end = duration.0;
        let clip = |w: &Window| (w.start.0.min(end), w.end.0.min(end));
        let unjudged = normalize(pair.unjudged.iter().map(clip).collect());
        let judged = subtract(&normalize(vec![(0, end)]), &unjudged);
        let detect = normalize(pair.must_detect.iter().map(|m| clip(&m.window)).collect());
        let must_detect = intersect(&judged, &detect);
        let must_not_detect = subtract(&judged, &must_detect);
        Truth {
            judged,
            must_detect,
            must_not_detect,
        }
    }
}

fn judge(
    duration: Nanos,
    pair: &PairOutcome,
    truth: &Truth,
    timeline: &DetectorTimeline,
) -> PairMetrics {
    let end = duration.0;
    let changes = effective_changes(&timeline.changes, end);
    let alive = spans_where(&changes, end, |v| v == Verdict::Alive);
    let not_failed = spans_where(&changes, end, |v| v != Verdict::Failed);

    let mut detections = Vec::new();
    for m in &pair.must_detect {
        let window = (m.window.start.0.min(end), m.window.end.0.min(end));
        let judged = intersect(&truth.judged, &normalize(vec![window]));
        if judged.is_empty() {
            continue;
        }
        detections.push(Detection {
            monitor: pair.monitor,
            target: pair.target,
            fault: m.fault,
            window: Window {
                start: Nanos(window.0),
                end: Nanos(window.1),
            },
            suspect_at: lasting_from(&judged, &alive).map(Nanos),
            failed_at: lasting_from(&judged, &not_failed).map(Nanos),
        });
    }

    let mut mistakes = Vec::new();
    let mnd = &truth.must_not_detect;
    let mut previous = Verdict::Alive;
    for (k, &(t, verdict)) in changes.iter().enumerate() {
        let was = previous;
        previous = verdict;
        if was != Verdict::Alive || verdict == Verdict::Alive {
            continue;
        }
        let i = mnd.partition_point(|&(_, e)| e <= t);
        let Some(&(start, stop)) = mnd.get(i) else {
            continue;
        };
        if start > t {
            continue;
        }
        let mut worst = verdict;
        let mut back_alive = None;
        for &(u, v) in &changes[k + 1..] {
            if u >= stop {
                break;
            }
            if v == Verdict::Alive {
                back_alive = Some(u);
                break;
            }
            worst = worst.max(v);
        }
        let (mistake_end, ended_by) = match back_alive {
            Some(u) => (u, MistakeEnd::Alive),
            None if stop >= end => (stop, MistakeEnd::RunEnd),
            None if contains(&truth.must_detect, stop) => (stop, MistakeEnd::MustDetect),
            None => (stop, MistakeEnd::Unjudged),
        };
        mistakes.push(Mistake {
            monitor: pair.monitor,
            target: pair.target,
            start: Nanos(t),
            end: Nanos(mistake_end),
            worst,
            ended_by,
        });
    }

    PairMetrics {
        detections,
        mistakes,
        must_not_detect: Nanos(measure(mnd)),
        alive_must_not_detect: Nanos(measure(&intersect(mnd, &alive))),
    }
}

/// The first instant of `judged` (the judged part of a window) from which the
/// verdict is never again in `bad` within the window; `None` if the last
/// judged instant is bad (the verdict did not hold until the fault ended).
fn lasting_from(judged: &[(u64, u64)], bad: &[(u64, u64)]) -> Option<u64> {
    let bad = intersect(judged, bad);
    let Some(&(_, last_bad)) = bad.last() else {
        return judged.first().map(|&(s, _)| s);
    };
    judged
        .iter()
        .find(|&&(_, e)| e > last_bad)
        .map(|&(s, _)| s.max(last_bad))
}

/// The verdict changes that matter: before `end`, in time order (stable), one
/// per instant (the last at that instant), each different from the verdict
/// before it (Alive before the first).
fn effective_changes(changes: &[(Nanos, Verdict)], end: u64) -> Vec<(u64, Verdict)> {
    let mut sorted: Vec<(u64, Verdict)> = changes
        .iter()
        .filter(|(t, _)| t.0 < end)
        .map(|&(t, v)| (t.0, v))
        .collect();
    sorted.sort_by_key(|&(t, _)| t);
    let mut out: Vec<(u64, Verdict)> = Vec::new();
    let mut current = Verdict::Alive;
    for (i, &(t, v)) in sorted.iter().enumerate() {
        let last_at_instant = sorted.get(i + 1).is_none_or(|&(u, _)| u != t);
        if last_at_instant && v != current {
            out.push((t, v));
            current = v;
        }
    }
    out
}

/// The spans of `[0, end)` where the verdict satisfies `keep`.
fn spans_where(changes: &[(u64, Verdict)], end: u64, keep: impl Fn(Verdict) -> bool) -> Spans {
    let mut spans = Vec::new();
    let mut from = 0;
    let mut verdict = Verdict::Alive;
    for &(t, v) in changes {
        if keep(verdict) {
            spans.push((from, t));
        }
        from = t;
        verdict = v;
    }
    if keep(verdict) {
        spans.push((from, end));
    }
    normalize(spans)
}

fn normalize(mut spans: Spans) -> Spans {
    spans.retain(|&(s, e)| s < e);
    spans.sort_unstable();
    let mut out: Spans = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Spans {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while let (Some(&(s1, e1)), Some(&(s2, e2))) = (a.get(i), b.get(j)) {
        let (s, e) = (s1.max(s2), e1.min(e2));
        if s < e {
            out.push((s, e));
        }
        if e1 < e2 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

fn subtract(a: &[(u64, u64)], b: &[(u64, u64)]) -> Spans {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        while b.get(j).is_some_and(|&(_, be)| be <= s) {
            j += 1;
        }
        let mut cursor = s;
        for &(bs, be) in b.iter().skip(j) {
            if bs >= e {
                break;
            }
            if bs > cursor {
                out.push((cursor, bs));
            }
            cursor = cursor.max(be);
            if cursor >= e {
                break;
            }
        }
        if cursor < e {
            out.push((cursor, e));
        }
    }
    out
}

fn contains(spans: &[(u64, u64)], t: u64) -> bool {
    let i = spans.partition_point(|&(_, e)| e <= t);
    spans.get(i).is_some_and(|&(s, _)| s <= t)
}

fn measure(spans: &[(u64, u64)]) -> u64 {
    spans
        .iter()
        .fold(0u64, |acc, &(s, e)| acc.saturating_add(e - s))
}

fn mean_f64(samples: &[Nanos]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let sum: u128 = samples.iter().map(|t| u128::from(t.0)).sum();
    Some(sum as f64 / samples.len() as f64)
}

fn ratio(part: u128, whole: u128) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn rate_per_hour(count: u128, exposure_ns: u128) -> Option<f64> {
    (exposure_ns > 0).then(|| count as f64 / (exposure_ns as f64 / NANOS_PER_HOUR as f64))
}

fn per_second(count: u128, exposure_ns: u128) -> Option<f64> {
    (exposure_ns > 0).then(|| count as f64 / (exposure_ns as f64 / NANOS_PER_SEC as f64))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use fdlab_sim::outcome::MustDetect;
    use fdlab_sim::scenario::{Expect, FaultKind};

    pub(crate) fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    fn win(start_ms: u64, end_ms: u64) -> Window {
        Window {
            start: ms(start_ms),
            end: ms(end_ms),
        }
    }

    pub(crate) fn timeline(changes: &[(u64, Verdict)]) -> DetectorTimeline {
        DetectorTimeline {
            changes: changes.iter().map(|&(t, v)| (ms(t), v)).collect(),
            messages: 0,
            bytes: 0,
        }
    }

    pub(crate) fn pair(detect: &[(u64, u64)], unjudged: &[(u64, u64)]) -> PairOutcome {
        PairOutcome {
            monitor: 0,
            target: 1,
            must_detect: detect
                .iter()
                .map(|&(s, e)| MustDetect {
                    window: win(s, e),
                    fault: 0,
                })
                .collect(),
            unjudged: unjudged.iter().map(|&(s, e)| win(s, e)).collect(),
            detectors: Vec::new(),
        }
    }

    use Verdict::{Alive, Failed, Suspect};

    const RUN: Nanos = Nanos(60_000_000_000);

    #[test]
    fn failed_after_onset_that_lasts_is_a_detection() {
        let p = pair(&[(10_000, 40_000)], &[]);
        let m = pair_metrics(RUN, &p, &timeline(&[(12_500, Failed)]));
        assert_eq!(m.detections.len(), 1);
        assert_eq!(m.detections[0].failed_delay(), Some(ms(2_500)));
        assert_eq!(m.detections[0].suspect_delay(), Some(ms(2_500)));
        assert!(m.mistakes.is_empty());
        // 60 s minus the 30 s fault, all Alive (the Failed ends with the run,
        // but the fault ends first: after it the verdict is wrong but no
        // transition happened then, so P_A drops and no mistake is counted).
        assert_eq!(m.must_not_detect, ms(30_000));
        assert_eq!(m.alive_must_not_detect, ms(10_000));
    }

    #[test]
    fn suspect_flap_before_fault_then_failed_is_one_mistake_and_one_detection() {
        let p = pair(&[(10_000, 40_000)], &[]);
        let t = timeline(&[
            (5_000, Suspect),
            (5_300, Alive),
            (11_000, Suspect),
            (12_000, Failed),
            (40_100, Alive),
        ]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.mistakes.len(), 1);
        let x = m.mistakes[0];
        assert_eq!((x.start, x.end), (ms(5_000), ms(5_300)));
        assert_eq!(x.worst, Suspect);
        assert_eq!(x.ended_by, MistakeEnd::Alive);
        assert_eq!(m.detections.len(), 1);
        assert_eq!(m.detections[0].failed_delay(), Some(ms(2_000)));
        assert_eq!(m.detections[0].suspect_delay(), Some(ms(1_000)));
        // 30 s of must-not-detect time, 300 ms + 100 ms of it not Alive.
        assert_eq!(m.must_not_detect, ms(30_000));
        assert_eq!(m.alive_must_not_detect, ms(29_600));
    }

    #[test]
    fn failed_during_tolerated_fault_is_a_mistake_until_alive() {
        // A tolerated pause: no must-detect window at all.
        let p = pair(&[], &[]);
        let t = timeline(&[(20_000, Suspect), (20_000, Failed), (23_250, Alive)]);
        let m = pair_metrics(RUN, &p, &t);
        assert!(m.detections.is_empty());
        assert_eq!(m.mistakes.len(), 1);
        let x = m.mistakes[0];
        assert_eq!(x.duration(), ms(3_250));
        assert_eq!(x.worst, Failed);
        assert_eq!(x.ended_by, MistakeEnd::Alive);
        assert_eq!(m.alive_must_not_detect, ms(60_000 - 3_250));
    }

    #[test]
    fn mistake_ends_at_next_must_detect_window_or_run_end() {
        let p = pair(&[(30_000, 35_000)], &[]);
        let t = timeline(&[(28_000, Suspect), (36_000, Alive), (50_000, Failed)]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.mistakes.len(), 2);
        assert_eq!(m.mistakes[0].end, ms(30_000));
        assert_eq!(m.mistakes[0].ended_by, MistakeEnd::MustDetect);
        // Suspect already at the onset and lasting: detected to Suspect at 0;
        // never Failed during the fault: missed to Failed.
        assert_eq!(m.detections[0].suspect_delay(), Some(Nanos::ZERO));
        assert_eq!(m.detections[0].failed_at, None);
        // The Suspect from 35 s (fault over) to 36 s lowers P_A but is no
        // new mistake: no transition from Alive happened then.
        assert_eq!(m.alive_must_not_detect, ms(55_000 - 2_000 - 1_000 - 10_000));
        assert_eq!(m.mistakes[1].start, ms(50_000));
        assert_eq!(m.mistakes[1].ended_by, MistakeEnd::RunEnd);
    }

    #[test]
    fn flapping_failed_counts_from_the_later_lasting_failed() {
        let p = pair(&[(10_000, 40_000)], &[]);
        let t = timeline(&[(13_000, Failed), (14_000, Alive), (16_000, Failed)]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.detections[0].failed_delay(), Some(ms(6_000)));
        assert_eq!(m.detections[0].suspect_delay(), Some(ms(6_000)));
        // Flaps inside must-detect time are not mistakes.
        assert!(m.mistakes.is_empty());
    }

    #[test]
    fn suspect_lasting_while_failed_flaps_to_suspect() {
        let p = pair(&[(10_000, 40_000)], &[]);
        let t = timeline(&[
            (11_000, Suspect),
            (13_000, Failed),
            (14_000, Suspect),
            (16_000, Failed),
        ]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.detections[0].suspect_delay(), Some(ms(1_000)));
        assert_eq!(m.detections[0].failed_delay(), Some(ms(6_000)));
    }

    #[test]
    fn no_failed_until_fault_ends_is_missed() {
        let p = pair(&[(10_000, 40_000)], &[]);
        // Failed only after the fault ended, and a Failed that did not last.
        let t = timeline(&[(20_000, Failed), (39_000, Alive), (41_000, Failed)]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.detections[0].failed_at, None);
        assert_eq!(m.detections[0].suspect_at, None);
        // The Failed at 41 s is in must-not-detect time: a mistake.
        assert_eq!(m.mistakes.len(), 1);
    }

    #[test]
    fn failed_already_at_onset_is_zero() {
        let p = pair(&[(10_000, 40_000)], &[]);
        let t = timeline(&[(9_000, Failed)]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.detections[0].failed_delay(), Some(Nanos::ZERO));
        assert_eq!(m.mistakes.len(), 1);
        assert_eq!(m.mistakes[0].ended_by, MistakeEnd::MustDetect);
        assert_eq!(m.mistakes[0].duration(), ms(1_000));
    }

    #[test]
    fn fault_until_the_end_of_the_run_is_clipped() {
        let p = pair(&[(50_000, u64::MAX / 1_000_000)], &[]);
        let t = timeline(&[(53_000, Failed)]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.detections[0].window.end, RUN);
        assert_eq!(m.detections[0].failed_delay(), Some(ms(3_000)));
        // Not yet Failed when the run ends: missed.
        let m = pair_metrics(RUN, &p, &timeline(&[(61_000, Failed)]));
        assert_eq!(m.detections[0].failed_at, None);
    }

    #[test]
    fn unjudged_time_is_excluded() {
        // The monitor is down 20..30 s; the verdict there does not count.
        let p = pair(&[], &[(20_000, 30_000)]);
        let t = timeline(&[
            (22_000, Suspect),
            (29_000, Alive),
            (40_000, Suspect),
            (41_000, Alive),
        ]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.must_not_detect, ms(50_000));
        assert_eq!(m.alive_must_not_detect, ms(49_000));
        assert_eq!(m.mistakes.len(), 1);
        assert_eq!(m.mistakes[0].start, ms(40_000));
        // A mistake cut by the monitor going down.
        let t = timeline(&[(19_000, Suspect), (25_000, Alive)]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.mistakes[0].end, ms(20_000));
        assert_eq!(m.mistakes[0].ended_by, MistakeEnd::Unjudged);
        assert_eq!(m.alive_must_not_detect, ms(49_000));
    }

    #[test]
    fn entirely_unjudged_window_is_skipped() {
        let p = pair(&[(20_000, 25_000)], &[(15_000, 30_000)]);
        let m = pair_metrics(RUN, &p, &timeline(&[]));
        assert!(m.detections.is_empty());
        assert_eq!(m.must_not_detect, ms(45_000));
    }

    #[test]
    fn partly_unjudged_window_ignores_verdicts_while_down() {
        // Monitor down 15..20 s in a 10..40 s fault; Failed at 12 s, its
        // verdict while down is Alive (reset), Failed again right at restart.
        let p = pair(&[(10_000, 40_000)], &[(15_000, 20_000)]);
        let t = timeline(&[(12_000, Failed), (16_000, Alive), (20_000, Failed)]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.detections[0].failed_delay(), Some(ms(2_000)));
        let t = timeline(&[(12_000, Failed), (16_000, Alive), (21_000, Failed)]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.detections[0].failed_delay(), Some(ms(11_000)));
    }

    #[test]
    fn last_change_at_an_instant_wins_and_order_is_stable() {
        let p = pair(&[], &[]);
        let t = timeline(&[(5_000, Suspect), (5_000, Alive), (7_000, Alive)]);
        let m = pair_metrics(RUN, &p, &t);
        assert!(m.mistakes.is_empty());
        assert_eq!(m.alive_must_not_detect, RUN);
        // Out of order input is sorted by time, keeping order within an instant.
        let t = timeline(&[(9_000, Alive), (8_000, Suspect), (8_000, Failed)]);
        let m = pair_metrics(RUN, &p, &t);
        assert_eq!(m.mistakes.len(), 1);
        assert_eq!(m.mistakes[0].worst, Failed);
        assert_eq!(m.mistakes[0].duration(), ms(1_000));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let sorted: Vec<Nanos> = [15, 20, 35, 40, 50].iter().map(|&v| Nanos(v)).collect();
        assert_eq!(nearest_rank(&sorted, 5), Some(Nanos(15)));
        assert_eq!(nearest_rank(&sorted, 30), Some(Nanos(20)));
        assert_eq!(nearest_rank(&sorted, 40), Some(Nanos(20)));
        assert_eq!(nearest_rank(&sorted, 50), Some(Nanos(35)));
        assert_eq!(nearest_rank(&sorted, 100), Some(Nanos(50)));
        assert_eq!(nearest_rank(&sorted, 0), Some(Nanos(15)));
        assert_eq!(nearest_rank(&[], 50), None);
        let hundred: Vec<Nanos> = (1..=100).map(Nanos).collect();
        assert_eq!(nearest_rank(&hundred, 50), Some(Nanos(50)));
        assert_eq!(nearest_rank(&hundred, 90), Some(Nanos(90)));
        assert_eq!(nearest_rank(&hundred, 99), Some(Nanos(99)));
        let s = DurationStats::from_samples([Nanos(3), Nanos(1), Nanos(2), Nanos(4)]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.p50, s.p90, s.p99, s.max),
            (4, Nanos(3), Nanos(2), Nanos(4), Nanos(4), Nanos(4))
        );
        assert_eq!(DurationStats::from_samples([]), None);
    }

    #[test]
    fn t_interval() {
        let ci = mean_ci95(&[1.0, 2.0, 3.0]).unwrap();
        // mean 2, s = 1, t(2) = 4.3027: 2 ± 4.3027/√3.
        assert_eq!(ci.mean, 2.0);
        assert!((ci.high - (2.0 + 4.3027 / 3f64.sqrt())).abs() < 1e-12);
        assert_eq!(ci.low, 0.0);
        assert_eq!(mean_ci95(&[1.0]), None);
        assert_eq!(mean_ci95(&[]), None);
        // The expansion continues the table smoothly.
        assert!((t_975(30) - 2.0423).abs() < 1e-4);
        assert!((t_975(31) - 2.0395).abs() < 1e-4);
        assert!((t_975(60) - 2.0003).abs() < 1e-4);
        assert!((t_975(120) - 1.9799).abs() < 1e-4);
    }

    pub(crate) fn run(seed: u64, pairs: Vec<PairOutcome>) -> RunOutcome {
        RunOutcome {
            scenario: "crash".into(),
            seed,
            duration: RUN,
            detectors: vec!["fixed".into(), "phi".into()],
            nodes: vec!["n0".into(), "n1".into(), "n2".into()],
            faults: vec![FaultRecord {
                kind: FaultKind::Crash,
                target: "n1".into(),
                node: Some(1),
                window: win(10_000, 40_000),
                expect: Expect::Detect,
            }],
            pairs,
            events: 1000,
        }
    }

    /// Two seeds, two pairs each, two detectors.
    pub(crate) fn two_seeds() -> ScenarioResult {
        let mut runs = Vec::new();
        for (seed, fixed_delay, phi_flap) in [(1, 2_000, false), (2, 3_000, true)] {
            let mut a = pair(&[(10_000, 40_000)], &[]);
            a.detectors = vec![
                DetectorTimeline {
                    changes: vec![(ms(10_000 + fixed_delay), Failed), (ms(40_500), Alive)],
                    messages: 60,
                    bytes: 6_000,
                },
                DetectorTimeline {
                    changes: if phi_flap {
                        vec![
                            (ms(5_000), Suspect),
                            (ms(5_500), Alive),
                            (ms(11_000), Failed),
                            (ms(40_000), Alive),
                        ]
                    } else {
                        vec![(ms(11_000), Failed), (ms(40_000), Alive)]
                    },
                    messages: 600,
                    bytes: 60_000,
                },
            ];
            let mut b = pair(&[], &[]);
            b.monitor = 2;
            b.target = 0;
            b.detectors = vec![
                DetectorTimeline {
                    changes: vec![],
                    messages: 60,
                    bytes: 6_000,
                },
                DetectorTimeline {
                    changes: vec![],
                    messages: 600,
                    bytes: 60_000,
                },
            ];
            runs.push(run(seed, vec![a, b]));
        }
        ScenarioResult {
            scenario: "crash".into(),
            runs,
        }
    }

    #[test]
    fn aggregate_over_two_seeds() {
        let m = scenario_metrics(&two_seeds());
        assert_eq!(m.runs.len(), 2);
        assert_eq!(m.summary.len(), 2);
        let fixed = &m.summary[0];
        assert_eq!(fixed.detector, "fixed");
        assert_eq!(
            (fixed.runs, fixed.pair_runs, fixed.detect_windows),
            (2, 4, 2)
        );
        let f = fixed.failed.unwrap();
        assert_eq!(
            (f.n, f.mean, f.p50, f.p99, f.max),
            (2, ms(2_500), ms(2_000), ms(3_000), ms(3_000))
        );
        let ci = fixed.failed_ci.unwrap();
        assert_eq!(ci.runs, 2);
        assert_eq!(ci.mean, 2.5e9);
        // s = 0.5 s·√2, t(1) = 12.7062: half-width 12.7062 · 0.5 s.
        assert!((ci.high - (2.5e9 + 12.7062 * 0.5e9)).abs() < 1.0);
        assert_eq!(fixed.failed_missed, 0);
        assert_eq!(fixed.mistakes, 0);
        // Must-not-detect: pair a 30 s, pair b 60 s, per seed.
        assert_eq!(fixed.must_not_detect, 2 * 90 * 1_000_000_000u128);
        // 500 ms of Failed after the fault ended, per seed.
        assert_eq!(fixed.alive_must_not_detect, 2 * 89_500 * 1_000_000u128);
        assert_eq!(fixed.mistake_rate(), Some(0.0));
        assert_eq!(fixed.mistake_rate_ci.unwrap().high, 0.0);
        assert_eq!(fixed.share_runs_with_mistake(), Some(0.0));
        // 120 messages per run over 2 pairs × 60 s.
        assert_eq!(fixed.messages_per_pair_second(), Some(1.0));
        assert_eq!(fixed.bytes_per_pair_second(), Some(100.0));

        let phi = &m.summary[1];
        assert_eq!(phi.failed.unwrap().mean, ms(1_000));
        assert_eq!(phi.mistakes, 1);
        assert_eq!(phi.mean_mistake(), Some(ms(500)));
        assert_eq!(phi.runs_with_mistake, 1);
        assert_eq!(phi.share_runs_with_mistake(), Some(0.5));
        // One mistake in 180 pair-seconds = 0.05 pair-hours.
        let rate = phi.mistake_rate().unwrap();
        assert!((rate - 20.0).abs() < 1e-9, "{rate}");
        let ci = phi.mistake_rate_ci.unwrap();
        assert_eq!(ci.runs, 2);
        assert!((ci.mean - 20.0).abs() < 1e-9);
        assert_eq!(ci.low, 0.0);
        assert!(ci.high > 20.0);
        // The flap: 500 ms of Suspect out of 180 s.
        assert_eq!(phi.alive_must_not_detect, 180_000_000_000 - 500_000_000);
        assert_eq!(phi.messages_per_pair_second(), Some(10.0));
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let empty = ScenarioResult {
            scenario: "empty".into(),
            runs: Vec::new(),
        };
        let m = scenario_metrics(&empty);
        assert!(m.summary.is_empty());

        // Zero duration, no pairs, a pair missing timelines, a bad window.
        let mut r = run(1, Vec::new());
        r.duration = Nanos::ZERO;
        let m = scenario_metrics(&ScenarioResult {
            scenario: "x".into(),
            runs: vec![r.clone()],
        });
        let s = &m.summary[0];
        assert_eq!(s.pair_runs, 0);
        assert_eq!(s.failed, None);
        assert_eq!(s.mistake_rate(), None);
        assert_eq!(s.query_accuracy(), None);
        assert_eq!(s.messages_per_pair_second(), None);

        let mut p = pair(&[(30_000, 10_000)], &[(50_000, 40_000)]);
        p.detectors = vec![timeline(&[(u64::MAX / 1_000_000, Failed)])];
        p.monitor = 99;
        p.must_detect[0].fault = 42;
        r.pairs = vec![p.clone()];
        r.duration = Nanos::ZERO;
        let _ = scenario_metrics(&ScenarioResult {
            scenario: "x".into(),
            runs: vec![r.clone()],
        });
        r.duration = RUN;
        let m = scenario_metrics(&ScenarioResult {
            scenario: "x".into(),
            runs: vec![r],
        });
        assert_eq!(m.summary[0].pair_runs, 1);
        assert_eq!(m.summary[1].pair_runs, 0);
        assert_eq!(m.summary[0].detect_windows, 0);
        assert_eq!(m.runs[0].node_name(99), "99");
    }

    #[test]
    fn span_algebra() {
        let a = normalize(vec![(5, 10), (0, 3), (3, 4), (9, 12), (20, 20)]);
        assert_eq!(a, vec![(0, 4), (5, 12)]);
        assert_eq!(
            subtract(&a, &[(2, 6), (8, 9), (11, 30)]),
            vec![(0, 2), (6, 8), (9, 11)]
        );
        assert_eq!(
            intersect(&a, &[(2, 6), (8, 9), (11, 30)]),
            vec![(2, 4), (5, 6), (8, 9), (11, 12)]
        );
        assert!(contains(&a, 5) && !contains(&a, 4) && contains(&a, 0));
        assert_eq!(measure(&a), 11);
    }
}
