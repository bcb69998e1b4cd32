//! The simulated world a run is built from: topology, network, workload,
//! detectors and faults. These are the keys of a scenario file (§4 of the spec);
//! reading and validating files lives in the `scenarios` crate, which fills
//! these types and then makes a [`crate::valid::ValidScenario`] of them, which
//! runs [`Scenario::validate`] (the checks that need the whole scenario: node
//! names, ranges) once.

mod fault_checks;
mod lockrpc_setup;
mod membership_checks;
mod membership_setup;
mod placement_checks;
mod placement_setup;
mod swarm_checks;
mod swarm_setup;
mod validate;

use std::fmt;

use fdlab_protocol::{DetectorConfig, Nanos};
use serde::{Deserialize, Deserializer, Serialize};

pub use lockrpc_setup::{
    LockrpcSetup, DEFAULT_CLIENTS_PER_NODE, DEFAULT_RPCS_PER_SECOND, MAX_LOCK_SERVERS,
};
pub use membership_setup::{
    is_swim_run, MembershipProtocol, MembershipSetup, CLASSIC_JUDGE, LIFEGUARD_RUN, SWIM_RUN,
};
pub use placement_setup::{
    ClientOrder, PlacementSetup, DEFAULT_KEYS, MAX_KEYS, MAX_SERVERS, SERVER_PORT,
};
pub use swarm_setup::{
    Bound, Bounds, Check, KindBounds, Property, PropertySetup, Strength, SwarmKind, SwarmSetup,
    SwarmTables, DEFAULT_DETECT_FROM, DEFAULT_FAULTS_PER_RUN, DEFAULT_RATE, GRAIN,
    MAX_FAULTS_PER_RUN,
};
pub use validate::{
    ScenarioError, MAX_DETECTOR_INSTANCES, MAX_DETECTOR_STATE_BYTES, MAX_NODES, MAX_RANDOM_FAULTS,
    MAX_SILOS, SILO_BYTES_PER_SILO,
};

/// One scenario: everything that, with a seed, determines a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// Simulated time of one run.
    pub duration: Nanos,
    /// Seeds a suite run uses by default (`--seeds` overrides).
    pub seeds: u32,
    pub topology: Topology,
    pub network: Network,
    pub workload: Workload,
    pub detectors: Vec<DetectorSetup>,
    pub faults: Vec<Fault>,
    pub random_faults: Vec<RandomFaults>,
    pub clocks: Vec<ClockSetup>,
    /// A membership scenario: every node runs a membership agent, and the
    /// detectors are the agents' per-peer judges (SPEC §8).
    pub membership: Option<MembershipSetup>,
    /// A placement scenario: the first nodes are memcached servers, the
    /// others clients that place keys on them (SPEC §9).
    pub placement: Option<PlacementSetup>,
    /// A lock-RPC scenario: every node runs a lock server and clients that
    /// take quorum locks under each channel policy (SPEC §10).
    pub lockrpc: Option<LockrpcSetup>,
}

impl Scenario {
    /// A scenario of `topology` run for `duration`, with one seed and nothing
    /// else: no detectors, faults, clocks, workload or Part II setup, the
    /// default network. Fill in the rest with struct update syntax:
    /// `Scenario { detectors, faults, ..Scenario::new("name", topology, duration) }`.
    pub fn new(name: impl Into<String>, topology: Topology, duration: Nanos) -> Scenario {
        Scenario {
            name: name.into(),
            description: String::new(),
            duration,
            seeds: 1,
            topology,
            network: Network::default(),
            workload: Workload::default(),
            detectors: Vec::new(),
            faults: Vec::new(),
            random_faults: Vec::new(),
            clocks: Vec::new(),
            membership: None,
            placement: None,
            lockrpc: None,
        }
    }

    /// Whether this is a placement scenario (it has a `[placement]` table).
    pub fn is_placement(&self) -> bool {
        self.placement.is_some()
    }

    /// Whether node `monitor` watches node `target`: in a placement
    /// scenario, only clients watch, and only servers.
    pub fn monitors(&self, monitor: u32, target: u32) -> bool {
        match &self.placement {
            Some(p) => monitor >= p.servers && target < p.servers,
            None => true,
        }
    }

    /// How many (monitor, target) pairs a run monitors: in a placement
    /// scenario, clients × servers.
    pub fn monitored_pairs(&self) -> u64 {
        match (&self.placement, &self.topology) {
            (Some(p), Topology::Mesh { nodes, .. }) => {
                u64::from(p.servers) * u64::from(nodes.saturating_sub(p.servers))
            }
            _ => self.topology.monitored_pairs(),
        }
    }

    /// Whether this is a membership scenario (it has a `[membership]` table).
    pub fn is_membership(&self) -> bool {
        self.membership.is_some()
    }

    /// The judges of a membership scenario, by name, in the order their
    /// cluster runs are reported: `membership.judges` when given, else
    /// [`CLASSIC_JUDGE`] then every detector in scenario order. Empty for a
    /// scenario without `[membership]`. In a valid scenario every name is
    /// `classic` or a detector's, once, and every detector is named.
    /// The judges of Orleans runs: [`Scenario::judge_names`] without the
    /// SWIM runs (`swim`, `lifeguard`), which `fdlab sweep` and `fdlab tune`
    /// do not vary yet.
    pub fn orleans_judge_names(&self) -> Vec<String> {
        let mut names = self.judge_names();
        names.retain(|n| !is_swim_run(n));
        names
    }

    pub fn judge_names(&self) -> Vec<String> {
        match &self.membership {
            None => Vec::new(),
            Some(MembershipSetup {
                judges: Some(judges),
                ..
            }) => judges.clone(),
            Some(_) => std::iter::once(CLASSIC_JUDGE.to_string())
                .chain(self.detectors.iter().map(|d| d.name.clone()))
                .collect(),
        }
    }
}

/// A detector of the scenario, by name. Every monitored pair runs one instance
/// of each (shadow mode: all watch the same traffic).
#[derive(Clone, Debug, PartialEq)]
pub struct DetectorSetup {
    pub name: String,
    pub config: DetectorConfig,
}

/// Who runs, and who watches whom.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Topology {
    /// `nodes` peers named `n0`, `n1`, ...; each monitors `monitors_per_node`
    /// others, chosen as the successors of the node on that many seeded hash
    /// rings (as Orleans picks the silos a silo probes), or all of them.
    Mesh {
        nodes: u32,
        #[serde(default)]
        monitors_per_node: MonitorCount,
    },
    /// Layers of stages named `s0.0`, `s0.1`, `s1.0`, ...: every stage sends
    /// data frames to every stage of the next layer, and every downstream stage
    /// monitors each of its upstreams.
    Dataflow { layers: Vec<u32> },
}

/// How many peers a mesh node monitors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum MonitorCount {
    /// Every other node.
    #[default]
    All,
    Count(u32),
}

impl<'de> Deserialize<'de> for MonitorCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = MonitorCount;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number of peers or \"all\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<MonitorCount, E> {
                u32::try_from(v)
                    .map(MonitorCount::Count)
                    .map_err(|_| E::custom(format!("{v} is not a number of peers")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<MonitorCount, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(-1))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MonitorCount, E> {
                if v == "all" {
                    Ok(MonitorCount::All)
                } else {
                    Err(E::custom(format!("`{v}`: expected a number or \"all\"")))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A distribution of durations (latencies, inter-send times, service times).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Dist {
    Constant {
        value: Nanos,
    },
    Uniform {
        min: Nanos,
        max: Nanos,
    },
    /// Normal, truncated at zero.
    Normal {
        mean: Nanos,
        std_dev: Nanos,
    },
    /// Log-normal with the given median and shape (sigma of the log).
    Lognormal {
        median: Nanos,
        sigma: f64,
    },
    /// Pareto (heavy tail) with minimum `scale` and tail index `shape`.
    Pareto {
        scale: Nanos,
        shape: f64,
    },
    /// Samples drawn uniformly from a CSV file of values in milliseconds (one
    /// column; a header is allowed). The `scenarios` crate loads `samples`.
    Empirical {
        file: String,
        #[serde(skip)]
        samples: Vec<Nanos>,
    },
}

impl Default for Dist {
    fn default() -> Self {
        Dist::Constant {
            value: Nanos::from_millis(1),
        }
    }
}

/// Which channel carries heartbeats and probes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// Datagrams: independent latency draws, loss, no flow control.
    #[default]
    Control,
    /// In band, on the ordered data stream (head-of-line blocking included).
    Data,
}

/// Links between nodes.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Network {
    /// One-way latency of control datagrams.
    pub latency: Dist,
    /// Independent loss probability of control datagrams.
    pub loss: f64,
    /// One-way latency of the data channel (default: `latency`).
    pub data_latency: Option<Dist>,
    pub heartbeat_channel: Channel,
    /// Frames a sender buffers per data link before it blocks.
    pub send_buffer: u32,
    /// Frames a receiver queues per data link (the flow-control window).
    pub receive_queue: u32,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            latency: Dist::default(),
            loss: 0.0,
            data_latency: None,
            heartbeat_channel: Channel::Control,
            send_buffer: 64,
            receive_queue: 64,
        }
    }
}

/// Data traffic of a dataflow topology.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// Time between two data frames a source stage sends on each link.
    pub interval: Dist,
    /// Processing time of one frame at a stage (its capacity).
    pub service_time: Dist,
    /// Optional on/off bursts of the sources: send for `on`, idle for `off`.
    pub on: Option<Dist>,
    pub off: Option<Dist>,
    /// An upstream with nothing to send for this long sends a stream-heartbeat frame.
    pub idle_frame_interval: Nanos,
    /// Upstreams announce planned pauses (`pause` faults with `planned = true`)
    /// with a maintenance frame.
    pub maintenance_frames: bool,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            interval: Dist::Uniform {
                min: Nanos::from_millis(5),
                max: Nanos::from_millis(20),
            },
            service_time: Dist::Constant {
                value: Nanos::from_micros(500),
            },
            on: None,
            off: None,
            idle_frame_interval: Nanos::from_millis(100),
            maintenance_frames: false,
        }
    }
}

/// Whether detectors must notice a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// The affected peer must be declared Failed while the fault lasts.
    Detect,
    /// The peer must not be suspected because of it.
    Tolerate,
}

/// The kinds of fault of §4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    Crash,
    Restart,
    Pause,
    Partition,
    SlowLink,
    Loss,
    Backpressure,
    Degrade,
    Clock,
    /// Membership scenarios: the table service cannot be reached.
    TableOutage,
    /// Membership scenarios: every table operation takes longer.
    SlowTable,
}

impl FaultKind {
    pub const fn name(self) -> &'static str {
        match self {
            FaultKind::Crash => "crash",
            FaultKind::Restart => "restart",
            FaultKind::Pause => "pause",
            FaultKind::Partition => "partition",
            FaultKind::SlowLink => "slow-link",
            FaultKind::Loss => "loss",
            FaultKind::Backpressure => "backpressure",
            FaultKind::Degrade => "degrade",
            FaultKind::Clock => "clock",
            FaultKind::TableOutage => "table-outage",
            FaultKind::SlowTable => "slow-table",
        }
    }

    /// Every kind, in the order `fdlab list --faults` shows them.
    pub const ALL: [FaultKind; 11] = [
        FaultKind::Crash,
        FaultKind::Restart,
        FaultKind::Pause,
        FaultKind::Partition,
        FaultKind::SlowLink,
        FaultKind::Loss,
        FaultKind::Backpressure,
        FaultKind::Degrade,
        FaultKind::Clock,
        FaultKind::TableOutage,
        FaultKind::SlowTable,
    ];

    /// The keys a fault of this kind takes besides `kind`, its start (`at`
    /// or `window`) and `expect`.
    pub const fn keys(self) -> &'static [&'static str] {
        match self {
            FaultKind::Crash | FaultKind::Restart => &["node", "duration"],
            FaultKind::Pause => &["node", "duration", "planned"],
            FaultKind::Partition => &["node", "nodes", "shape", "direction", "mode", "duration"],
            FaultKind::SlowLink => &["from", "to", "direction", "extra_latency", "duration"],
            FaultKind::Loss => &[
                "from",
                "to",
                "direction",
                "probability",
                "burst",
                "gap",
                "duration",
            ],
            FaultKind::Backpressure => &["node", "capacity", "duration"],
            FaultKind::Degrade => &[
                "node",
                "slowdown",
                "processing",
                "stopped",
                "every",
                "duration",
            ],
            FaultKind::Clock => &["node", "offset", "drift"],
            FaultKind::TableOutage => &["duration"],
            FaultKind::SlowTable => &["extra_latency", "duration"],
        }
    }

    /// What a fault of this kind does, in one line.
    pub const fn summary(self) -> &'static str {
        match self {
            FaultKind::Crash => "the node stops; with a duration it restarts afterwards as a new incarnation",
            FaultKind::Restart => "the node restarts (a new incarnation) at `at`",
            FaultKind::Pause => "stop-the-world (a GC pause): nothing handled, sent or fired, then the backlog late; planned = true announces it downstream",
            FaultKind::Partition => "shape = isolate (node) | halves (nodes) | bridge (nodes, node); direction = both | one-way; mode = drop | hold",
            FaultKind::SlowLink => "adds extra_latency (required) to the links from <-> to (every link without them)",
            FaultKind::Loss => "drops messages with probability (required); burst and gap: Gilbert-Elliott bursts of those mean lengths",
            FaultKind::Backpressure => "the stage serves at the factor capacity of its speed (default 0.1)",
            FaultKind::Degrade => "CPU starvation: every event the node handles costs slowdown more (default 10ms); membership scenarios: or a draw of processing (a distribution, e.g. a heavy tail), or the node stopped `stopped` of every `every` (a duty cycle: SIGSTOP/SIGCONT, a CPU quota)",
            FaultKind::Clock => "steps the node's clock by offset (\"+5s\") and/or sets its drift (1e-4 = 100 ppm fast)",
            FaultKind::TableOutage => "membership scenarios: the membership table cannot be reached (every operation fails)",
            FaultKind::SlowTable => "membership scenarios: every table operation takes extra_latency (required) more, each way",
        }
    }

    /// Whether this is a fault of a membership scenario's table service
    /// (`table-outage`, `slow-table`) rather than of a node or link.
    pub const fn is_table(self) -> bool {
        matches!(self, FaultKind::TableOutage | FaultKind::SlowTable)
    }

    /// The default of `expect`: crashes must be detected, the rest tolerated.
    pub const fn default_expect(self) -> Expect {
        match self {
            FaultKind::Crash => Expect::Detect,
            _ => Expect::Tolerate,
        }
    }
}

/// Shape of a partition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionShape {
    /// `node` is cut from everyone.
    #[default]
    Isolate,
    /// `nodes` on one side, the rest on the other.
    Halves,
    /// Two halves that can both still reach one `node` (the bridge).
    Bridge,
}

impl PartitionShape {
    pub const ALL: [PartitionShape; 3] = [
        PartitionShape::Isolate,
        PartitionShape::Halves,
        PartitionShape::Bridge,
    ];

    /// The shape as a scenario file spells it.
    pub const fn name(self) -> &'static str {
        match self {
            PartitionShape::Isolate => "isolate",
            PartitionShape::Halves => "halves",
            PartitionShape::Bridge => "bridge",
        }
    }
}

/// Partition and link faults may affect one direction only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    #[default]
    Both,
    /// Only messages sent by the named side (`node`, `nodes`, or `from`).
    OneWay,
}

/// What a partition does to the messages it cuts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionMode {
    #[default]
    Drop,
    /// Held and delivered, in order, when the partition heals.
    Hold,
}

/// A duration that may be negative (clock offset steps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct SignedNanos(pub i64);

impl<'de> Deserialize<'de> for SignedNanos {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let (negative, magnitude) = match text.trim().strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.trim()),
        };
        let value: Nanos = magnitude.parse().map_err(serde::de::Error::custom)?;
        let value = i64::try_from(value.as_nanos())
            .map_err(|_| serde::de::Error::custom(format!("`{text}` is too large")))?;
        Ok(SignedNanos(if negative { -value } else { value }))
    }
}

/// One fault of the schedule. Which keys apply depends on `kind`;
/// [`Scenario::validate`] rejects keys that do not apply.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    pub kind: Option<FaultKind>,
    /// The node affected (crash, restart, pause, degrade, clock, backpressure;
    /// the isolated node or the bridge of a partition).
    pub node: Option<String>,
    /// One side of a `halves` or `bridge` partition.
    pub nodes: Option<Vec<String>>,
    pub shape: Option<PartitionShape>,
    pub direction: Option<Direction>,
    pub mode: Option<PartitionMode>,
    /// The link of a slow-link or loss fault (`from` -> `to`; both directions
    /// unless `direction = "one-way"`). Without them, every link.
    pub from: Option<String>,
    pub to: Option<String>,
    /// Start time; or a random start in `window` (drawn per seed).
    pub at: Option<Nanos>,
    pub window: Option<[Nanos; 2]>,
    /// How long the fault lasts (crash: until the restart; none = to the end).
    pub duration: Option<Nanos>,
    /// slow-link: added one-way latency.
    pub extra_latency: Option<Nanos>,
    /// loss: drop probability (during bursts, if `burst` is set).
    pub probability: Option<f64>,
    /// loss: mean length of loss bursts and of the gaps between them
    /// (Gilbert-Elliott); without them, loss is independent.
    pub burst: Option<Nanos>,
    pub gap: Option<Nanos>,
    /// backpressure: the stage's capacity factor (0.1 = ten times slower).
    pub capacity: Option<f64>,
    /// degrade: extra processing time of every event the node handles.
    pub slowdown: Option<Nanos>,
    /// degrade, membership scenarios: each event's processing time drawn
    /// from this distribution instead (as under a stress tool: heavy-tailed).
    pub processing: Option<Dist>,
    /// degrade, membership scenarios: instead, the node is stopped for
    /// `stopped` at the start of every `every` (a duty cycle, as SIGSTOP
    /// and SIGCONT or a CPU quota starve a process).
    pub stopped: Option<Nanos>,
    pub every: Option<Nanos>,
    /// clock: an offset step, and/or a new drift rate (1e-4 = 100 ppm fast).
    pub offset: Option<SignedNanos>,
    pub drift: Option<f64>,
    /// pause: the upstream announces it with a maintenance frame.
    pub planned: Option<bool>,
    pub expect: Option<Expect>,
}

/// Faults drawn at random per seed (swarm testing): a Poisson process of
/// `rate_per_node_hour` per node, each lasting a draw of `duration`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RandomFaults {
    pub kind: FaultKind,
    pub rate_per_node_hour: f64,
    pub duration: Option<Dist>,
    pub extra_latency: Option<Nanos>,
    pub probability: Option<f64>,
    pub slowdown: Option<Nanos>,
    pub capacity: Option<f64>,
    pub expect: Option<Expect>,
}

/// A node's local clock from the start: `local = true * (1 + drift) + offset`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClockSetup {
    pub node: String,
    #[serde(default)]
    pub drift: f64,
    #[serde(default)]
    pub offset: SignedNanos,
}

impl Topology {
    /// Node names, in index order.
    pub fn node_names(&self) -> Vec<String> {
        match self {
            Topology::Mesh { nodes, .. } => (0..*nodes).map(|i| format!("n{i}")).collect(),
            Topology::Dataflow { layers } => layers
                .iter()
                .enumerate()
                .flat_map(|(l, &n)| (0..n).map(move |i| format!("s{l}.{i}")))
                .collect(),
        }
    }

    /// How many (monitor, target) pairs the topology monitors.
    pub fn monitored_pairs(&self) -> u64 {
        match self {
            Topology::Mesh {
                nodes,
                monitors_per_node,
            } => {
                let n = u64::from(*nodes);
                match monitors_per_node {
                    MonitorCount::All => n * n.saturating_sub(1),
                    MonitorCount::Count(k) => n * u64::from(*k),
                }
            }
            Topology::Dataflow { layers } => layers
                .windows(2)
                .map(|w| u64::from(w[0]) * u64::from(w[1]))
                .sum(),
        }
    }
}

impl Fault {
    /// The fault's kind (validated to be present).
    pub fn kind(&self) -> FaultKind {
        self.kind.unwrap_or(FaultKind::Crash)
    }

    /// `expect`, defaulted by kind.
    pub fn expect(&self) -> Expect {
        self.expect.unwrap_or(self.kind().default_expect())
    }
}

#[cfg(test)]
mod tests;
