//! The `[swarm]` and `[properties]` tables of a scenario: what `fdlab
//! swarm` may draw for each run (fault kinds, how many faults, bounds on
//! their times and strengths) and what every run must satisfy (SPEC §11).
//!
//! Both tables are optional, every key has a default, and every other
//! command ignores them (they are checked all the same, so a mistake is
//! reported whichever command reads the file first). Swarm testing (Groce,
//! Zhang, Eide, Chen & Regehr, "Swarm Testing", ISSTA 2012): each run
//! enables a random subset of the fault kinds, each kind with its `rate`
//! (default one half, the paper's choice), so that one run's faults are not
//! all diluted by every kind at once; docs/swarm.md.

use std::fmt;

use fdlab_protocol::Nanos;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{FaultKind, PartitionShape};

/// Faults one run draws unless `swarm.faults` says otherwise: [fewest, most].
pub const DEFAULT_FAULTS_PER_RUN: [u32; 2] = [1, 6];
/// Most faults one run may draw (each is a line of the minimal file and a
/// candidate of every shrinking round).
pub const MAX_FAULTS_PER_RUN: u32 = 1_000;
/// The probability that a run enables a fault kind, unless its `rate`
/// says otherwise: Groce et al.'s one half.
pub const DEFAULT_RATE: f64 = 0.5;
/// Pauses and partitions that last at least this long must be detected
/// (`expect = "detect"`); shorter ones must be tolerated. Ten heartbeat
/// intervals of 1 s, and twice Orleans' 5 s probe timeout.
pub const DEFAULT_DETECT_FROM: Nanos = Nanos::from_secs(10);
/// `detect_within` unless `[properties]` says otherwise (detectors).
pub const DEFAULT_DETECT_WITHIN: Nanos = Nanos::from_secs(30);
/// `detect_within` in a membership scenario: a cluster declares a crash
/// after votes and table writes, about 55 s with Orleans' defaults
/// (`orleans-crash`).
pub const DEFAULT_DECLARE_WITHIN: Nanos = Nanos::from_secs(120);
/// `recover_within`: ten 1 s heartbeats, twice Orleans' 5 s probe timeout.
pub const DEFAULT_RECOVER_WITHIN: Nanos = Nanos::from_secs(10);
/// `converge_within`: views refresh from the table every 60 s (SPEC
/// §8.1), and on gossip after each write: 60 s, and half of it to spare.
pub const DEFAULT_CONVERGE_WITHIN: Nanos = Nanos::from_secs(90);
/// `placement_split_within`.
pub const DEFAULT_SPLIT_WITHIN: Nanos = Nanos::from_secs(60);
/// `stop_using_dead_within` when left out: past the unlock retries' tail
/// (31.3 s) that even a breaker's channel dials through, with room.
pub const DEFAULT_STOP_USING_DEAD_WITHIN: Nanos = Nanos::from_secs(40);
/// The share of drawn loss faults that come in bursts (Gilbert-Elliott)
/// unless `swarm.loss.bursty` says otherwise: SPEC §4's two loss models,
/// equally often.
pub const DEFAULT_BURSTY_SHARE: f64 = 0.5;
/// Mean loss-burst lengths drawn unless `swarm.loss.burst` says otherwise:
/// from one lost datagram at a 10 ms pace to a second-long outage.
pub const DEFAULT_LOSS_BURST: [Nanos; 2] = [Nanos::from_millis(10), Nanos::from_secs(1)];
/// Mean gaps between loss bursts drawn unless `swarm.loss.gap` says
/// otherwise: ten times the bursts' bounds.
pub const DEFAULT_LOSS_GAP: [Nanos; 2] = [Nanos::from_millis(100), Nanos::from_secs(10)];
/// Fewest nodes a drawn `halves` partition needs: its named side is a
/// strict minority of at least one node.
pub const HALVES_MIN_NODES: u32 = 3;
/// Fewest nodes a drawn `bridge` partition needs: the bridge, and a
/// strict minority of at least one node among the others.
pub const BRIDGE_MIN_NODES: u32 = 4;

/// The grain of every drawn instant and duration: whole milliseconds keep
/// the minimal files readable.
pub const GRAIN: Nanos = Nanos::from_millis(1);

/// A scenario file's `[swarm]` and `[properties]` tables, as written
/// (`None`: not written; every key then takes its default). They are kept
/// beside the [`super::Scenario`], not in it: they say how to test it, not
/// what it is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwarmTables {
    pub swarm: Option<SwarmSetup>,
    pub properties: Option<PropertySetup>,
}

impl SwarmTables {
    /// The `[swarm]` table, or its defaults.
    pub fn setup(&self) -> SwarmSetup {
        self.swarm.clone().unwrap_or_default()
    }

    /// The `[properties]` table, or its defaults.
    pub fn property_setup(&self) -> PropertySetup {
        self.properties.clone().unwrap_or_default()
    }
}

/// The `[swarm]` table.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwarmSetup {
    /// The fault kinds a run may draw (default: every kind the topology
    /// takes, [`super::Scenario::swarm_kinds`]).
    #[serde(default)]
    pub kinds: Option<Vec<FaultKind>>,
    /// Faults per run: [fewest, most], drawn uniformly.
    #[serde(default)]
    pub faults: Option<[u32; 2]>,
    /// When faults may start: [earliest, latest] (default: from a tenth of
    /// the run to three quarters of it).
    #[serde(default)]
    pub start: Option<[Nanos; 2]>,
    /// Pauses and partitions at least this long are drawn with `expect =
    /// "detect"`, shorter ones with `"tolerate"` (crashes are always
    /// detected, every other kind tolerated).
    #[serde(default)]
    pub detect_from: Option<Nanos>,
    #[serde(default)]
    pub crash: Option<KindBounds>,
    #[serde(default)]
    pub restart: Option<KindBounds>,
    #[serde(default)]
    pub pause: Option<KindBounds>,
    #[serde(default)]
    pub partition: Option<KindBounds>,
    #[serde(default, rename = "slow-link")]
    pub slow_link: Option<KindBounds>,
    #[serde(default)]
    pub loss: Option<KindBounds>,
    #[serde(default)]
    pub backpressure: Option<KindBounds>,
    #[serde(default)]
    pub degrade: Option<KindBounds>,
    #[serde(default)]
    pub clock: Option<KindBounds>,
    #[serde(default, rename = "table-outage")]
    pub table_outage: Option<KindBounds>,
    #[serde(default, rename = "slow-table")]
    pub slow_table: Option<KindBounds>,
}

/// A `[swarm.<kind>]` table: how often the kind is enabled, and bounds on
/// what a fault of it is drawn with. Which keys apply depends on the kind
/// ([`FaultKind::swarm_keys`]).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KindBounds {
    /// The probability that a run enables this kind.
    pub rate: Option<f64>,
    /// [shortest, longest] fault, drawn log-uniformly.
    pub duration: Option<[Nanos; 2]>,
    /// slow-link, slow-table: [least, most] added latency, log-uniformly.
    pub extra_latency: Option<[Nanos; 2]>,
    /// loss: [least, most] drop probability, uniformly.
    pub probability: Option<[f64; 2]>,
    /// degrade: [least, most] extra processing time per event, log-uniformly.
    pub slowdown: Option<[Nanos; 2]>,
    /// backpressure: [least, most] capacity factor, uniformly.
    pub capacity: Option<[f64; 2]>,
    /// clock: [least, most] size of an offset step, log-uniformly, either sign.
    pub offset: Option<[Nanos; 2]>,
    /// partition: the shapes drawn, each as likely (default: all three,
    /// those the scenario has nodes for; [`SwarmSetup::partition_shapes`]).
    pub shapes: Option<Vec<PartitionShape>>,
    /// loss: the share of loss faults drawn in bursts (Gilbert-Elliott)
    /// rather than independent.
    pub bursty: Option<f64>,
    /// loss in bursts: [least, most] mean length of a burst, log-uniformly.
    pub burst: Option<[Nanos; 2]>,
    /// loss in bursts: [least, most] mean gap between bursts, log-uniformly.
    pub gap: Option<[Nanos; 2]>,
}

/// How a swarm draws loss in bursts: the share of loss faults that come
/// in bursts, and the bounds of their mean burst and gap lengths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossBursts {
    pub share: f64,
    pub burst: [Nanos; 2],
    pub gap: [Nanos; 2],
}

/// The bounds of one kind with every default filled in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub rate: f64,
    /// None for the kinds without a duration (restart, clock).
    pub duration: Option<[Nanos; 2]>,
    /// The kind's strength, if it has one: added latency, drop probability,
    /// slowdown, capacity, offset.
    pub strength: Option<Strength>,
}

/// The one parameter of a fault kind besides its node and duration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Strength {
    /// slow-link, slow-table.
    ExtraLatency([Nanos; 2]),
    /// loss.
    Probability([f64; 2]),
    /// degrade.
    Slowdown([Nanos; 2]),
    /// backpressure: a lower capacity is the harsher fault.
    Capacity([f64; 2]),
    /// clock: the size of the step; its sign is drawn.
    Offset([Nanos; 2]),
}

impl FaultKind {
    /// The keys of a `[swarm.<kind>]` table of this kind.
    pub const fn swarm_keys(self) -> &'static [&'static str] {
        match self {
            FaultKind::Restart => &["rate"],
            FaultKind::Clock => &["rate", "offset"],
            FaultKind::SlowLink | FaultKind::SlowTable => &["rate", "duration", "extra_latency"],
            FaultKind::Loss => &["rate", "duration", "probability", "bursty", "burst", "gap"],
            FaultKind::Degrade => &["rate", "duration", "slowdown"],
            FaultKind::Backpressure => &["rate", "duration", "capacity"],
            FaultKind::Partition => &["rate", "duration", "shapes"],
            FaultKind::Crash | FaultKind::Pause | FaultKind::TableOutage => &["rate", "duration"],
        }
    }

    /// The bounds a swarm draws this kind with when its table says nothing.
    pub const fn default_bounds(self) -> Bounds {
        const fn secs(a: u64, b: u64) -> Option<[Nanos; 2]> {
            Some([Nanos::from_secs(a), Nanos::from_secs(b)])
        }
        let ms = Nanos::from_millis;
        let (duration, strength) = match self {
            FaultKind::Crash => (secs(1, 60), None),
            FaultKind::Restart => (None, None),
            FaultKind::Pause => (Some([ms(100), Nanos::from_secs(40)]), None),
            FaultKind::Partition => (secs(1, 30), None),
            FaultKind::SlowLink | FaultKind::SlowTable => (
                secs(1, 60),
                Some(Strength::ExtraLatency([ms(10), Nanos::from_secs(2)])),
            ),
            FaultKind::Loss => (secs(1, 60), Some(Strength::Probability([0.1, 0.9]))),
            FaultKind::Degrade => (secs(1, 60), Some(Strength::Slowdown([ms(1), ms(50)]))),
            FaultKind::Backpressure => (secs(1, 60), Some(Strength::Capacity([0.01, 0.5]))),
            FaultKind::Clock => (None, Some(Strength::Offset([ms(10), Nanos::from_secs(10)]))),
            FaultKind::TableOutage => (secs(1, 60), None),
        };
        Bounds {
            rate: DEFAULT_RATE,
            duration,
            strength,
        }
    }
}

impl SwarmSetup {
    /// The `[swarm.<kind>]` table of `kind`, if written.
    pub fn table(&self, kind: FaultKind) -> Option<&KindBounds> {
        match kind {
            FaultKind::Crash => self.crash.as_ref(),
            FaultKind::Restart => self.restart.as_ref(),
            FaultKind::Pause => self.pause.as_ref(),
            FaultKind::Partition => self.partition.as_ref(),
            FaultKind::SlowLink => self.slow_link.as_ref(),
            FaultKind::Loss => self.loss.as_ref(),
            FaultKind::Backpressure => self.backpressure.as_ref(),
            FaultKind::Degrade => self.degrade.as_ref(),
            FaultKind::Clock => self.clock.as_ref(),
            FaultKind::TableOutage => self.table_outage.as_ref(),
            FaultKind::SlowTable => self.slow_table.as_ref(),
        }
    }

    /// The bounds of `kind`: its table over the kind's defaults.
    pub fn bounds(&self, kind: FaultKind) -> Bounds {
        let mut b = kind.default_bounds();
        let Some(t) = self.table(kind) else {
            return b;
        };
        if let Some(rate) = t.rate {
            b.rate = rate;
        }
        if t.duration.is_some() {
            b.duration = t.duration;
        }
        b.strength = match b.strength {
            Some(Strength::ExtraLatency(d)) => {
                Some(Strength::ExtraLatency(t.extra_latency.unwrap_or(d)))
            }
            Some(Strength::Probability(d)) => {
                Some(Strength::Probability(t.probability.unwrap_or(d)))
            }
            Some(Strength::Slowdown(d)) => Some(Strength::Slowdown(t.slowdown.unwrap_or(d))),
            Some(Strength::Capacity(d)) => Some(Strength::Capacity(t.capacity.unwrap_or(d))),
            Some(Strength::Offset(d)) => Some(Strength::Offset(t.offset.unwrap_or(d))),
            None => None,
        };
        b
    }

    /// Faults per run, [fewest, most].
    pub fn faults_per_run(&self) -> [u32; 2] {
        self.faults.unwrap_or(DEFAULT_FAULTS_PER_RUN)
    }

    /// The window of fault starts in a run of `duration`.
    pub fn start_window(&self, duration: Nanos) -> [Nanos; 2] {
        self.start.unwrap_or_else(|| {
            let part = |num: u64, den: u64| {
                let t = Nanos((duration.as_nanos() / den).saturating_mul(num));
                Nanos(t.as_nanos() - t.as_nanos() % GRAIN.as_nanos())
            };
            [part(1, 10), part(3, 4)]
        })
    }

    /// The partition shapes a run draws among, each as likely, in a
    /// scenario of `nodes` nodes: `swarm.partition.shapes` (default all
    /// three) without those it has too few nodes for ([`HALVES_MIN_NODES`],
    /// [`BRIDGE_MIN_NODES`]); `isolate` if none is left.
    pub fn partition_shapes(&self, nodes: u32) -> Vec<PartitionShape> {
        let listed = self
            .partition
            .as_ref()
            .and_then(|t| t.shapes.clone())
            .unwrap_or_else(|| PartitionShape::ALL.to_vec());
        let fits = |shape: &PartitionShape| match shape {
            PartitionShape::Isolate => true,
            PartitionShape::Halves => nodes >= HALVES_MIN_NODES,
            PartitionShape::Bridge => nodes >= BRIDGE_MIN_NODES,
        };
        let shapes: Vec<PartitionShape> = listed.into_iter().filter(fits).collect();
        if shapes.is_empty() {
            vec![PartitionShape::Isolate]
        } else {
            shapes
        }
    }

    /// How loss faults are drawn in bursts: `[swarm.loss]` over the defaults.
    pub fn loss_bursts(&self) -> LossBursts {
        let t = self.loss.as_ref();
        LossBursts {
            share: t.and_then(|t| t.bursty).unwrap_or(DEFAULT_BURSTY_SHARE),
            burst: t.and_then(|t| t.burst).unwrap_or(DEFAULT_LOSS_BURST),
            gap: t.and_then(|t| t.gap).unwrap_or(DEFAULT_LOSS_GAP),
        }
    }

    /// How long a pause or partition must last to be a fault to detect.
    pub fn detect_from(&self) -> Nanos {
        self.detect_from.unwrap_or(DEFAULT_DETECT_FROM)
    }
}

/// A property's bound: a duration, or `false` (the property is off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Off,
    Within(Nanos),
}

impl<'de> Deserialize<'de> for Bound {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Bound;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration like \"30s\", or false to turn the property off")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Bound, E> {
                if v {
                    Err(E::custom(
                        "`true`: give the bound as a duration like \"30s\" (false turns the property off)",
                    ))
                } else {
                    Ok(Bound::Off)
                }
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Bound, E> {
                if v.trim_start().starts_with('-') {
                    return Err(E::custom(format!(
                        "`{v}` is negative; a bound is a positive duration"
                    )));
                }
                v.parse().map(Bound::Within).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Bound {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Bound::Off => s.serialize_bool(false),
            Bound::Within(t) => s.collect_str(t),
        }
    }
}

/// The `[properties]` table: what every swarm run must satisfy. A key left
/// out takes its default ([`Property::default_bound`]); a property that
/// does not apply to the scenario's kind is refused.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PropertySetup {
    pub detect_within: Option<Bound>,
    pub no_false_failed: Option<bool>,
    pub recover_within: Option<Bound>,
    pub no_live_declared_dead: Option<bool>,
    pub converge_within: Option<Bound>,
    pub placement_split_within: Option<Bound>,
    pub stop_using_dead_within: Option<Bound>,
    pub no_healthy_evicted: Option<bool>,
}

/// One property a swarm run is checked for (docs/swarm.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Property {
    /// Every must-detect window is detected (a lasting Failed, or a Dead
    /// declaration) within the bound of its onset.
    DetectWithin,
    /// No Failed verdict about a target that must not be detected.
    NoFalseFailed,
    /// After a must-detect window ends, the verdict is Alive again within
    /// the bound.
    RecoverWithin,
    /// No live silo is declared Dead (membership).
    NoLiveDeclaredDead,
    /// Every live silo's view shows a declaration within the bound of it,
    /// or of the end of the last fault if that is later (membership).
    ConvergeWithin,
    /// No key has two owners among the clients for longer than the bound
    /// (placement).
    PlacementSplitWithin,
    /// Every crashed lock server stops being used (RPCs, dials for
    /// requests) within the bound of its crash (lock RPCs).
    StopUsingDeadWithin,
    /// No channel evicts a peer under no fault (lock RPCs).
    NoHealthyEvicted,
}

/// What a scenario is, for which properties apply to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwarmKind {
    /// Detectors on monitored pairs (mesh or dataflow).
    Detectors,
    /// Detectors on client–server pairs, and key placement.
    Placement,
    /// A membership cluster, one run per judge.
    Membership,
    /// A membership cluster whose clients place keys by their views.
    MembershipPlacement,
    /// Lock-RPC clients and servers, one run per channel policy.
    Lock,
}

impl SwarmKind {
    /// Runs are cluster runs, one per judge.
    pub const fn is_cluster(self) -> bool {
        matches!(self, SwarmKind::Membership | SwarmKind::MembershipPlacement)
    }

    /// Clients place keys on servers.
    pub const fn places_keys(self) -> bool {
        matches!(self, SwarmKind::Placement | SwarmKind::MembershipPlacement)
    }
}

impl Property {
    /// Every property, in the order they are checked and reported.
    pub const ALL: [Property; 8] = [
        Property::DetectWithin,
        Property::NoFalseFailed,
        Property::RecoverWithin,
        Property::NoLiveDeclaredDead,
        Property::ConvergeWithin,
        Property::PlacementSplitWithin,
        Property::StopUsingDeadWithin,
        Property::NoHealthyEvicted,
    ];

    /// Its key in `[properties]`.
    pub const fn name(self) -> &'static str {
        match self {
            Property::DetectWithin => "detect_within",
            Property::NoFalseFailed => "no_false_failed",
            Property::RecoverWithin => "recover_within",
            Property::NoLiveDeclaredDead => "no_live_declared_dead",
            Property::ConvergeWithin => "converge_within",
            Property::PlacementSplitWithin => "placement_split_within",
            Property::StopUsingDeadWithin => "stop_using_dead_within",
            Property::NoHealthyEvicted => "no_healthy_evicted",
        }
    }

    /// Whether the property applies to a scenario of `kind`.
    pub const fn applies(self, kind: SwarmKind) -> bool {
        match self {
            Property::DetectWithin => !matches!(kind, SwarmKind::Lock),
            Property::NoFalseFailed | Property::RecoverWithin => {
                !kind.is_cluster() && !matches!(kind, SwarmKind::Lock)
            }
            Property::NoLiveDeclaredDead | Property::ConvergeWithin => kind.is_cluster(),
            Property::PlacementSplitWithin => kind.places_keys(),
            Property::StopUsingDeadWithin | Property::NoHealthyEvicted => {
                matches!(kind, SwarmKind::Lock)
            }
        }
    }

    /// Its bound when `[properties]` leaves it out (`Off` for a property
    /// that is on with no bound: the two `no_*` properties).
    pub const fn default_bound(self, kind: SwarmKind) -> Bound {
        match self {
            Property::DetectWithin if kind.is_cluster() => Bound::Within(DEFAULT_DECLARE_WITHIN),
            Property::DetectWithin => Bound::Within(DEFAULT_DETECT_WITHIN),
            Property::RecoverWithin => Bound::Within(DEFAULT_RECOVER_WITHIN),
            Property::ConvergeWithin => Bound::Within(DEFAULT_CONVERGE_WITHIN),
            Property::PlacementSplitWithin => Bound::Within(DEFAULT_SPLIT_WITHIN),
            Property::StopUsingDeadWithin => Bound::Within(DEFAULT_STOP_USING_DEAD_WITHIN),
            Property::NoFalseFailed | Property::NoLiveDeclaredDead | Property::NoHealthyEvicted => {
                Bound::Off
            }
        }
    }
}

/// A property that is on, with its bound (none for the `no_*` ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    pub property: Property,
    pub bound: Option<Nanos>,
}

impl PropertySetup {
    /// The properties that are on for a scenario of `kind`, in
    /// [`Property::ALL`] order.
    pub fn checks(&self, kind: SwarmKind) -> Vec<Check> {
        Property::ALL
            .into_iter()
            .filter(|p| p.applies(kind))
            .filter_map(|property| {
                let bound = |b: Option<Bound>| match b.unwrap_or(property.default_bound(kind)) {
                    Bound::Off => None,
                    Bound::Within(t) => Some(Some(t)),
                };
                let flag = |on: Option<bool>| on.unwrap_or(true).then_some(None);
                let bound = match property {
                    Property::DetectWithin => bound(self.detect_within),
                    Property::NoFalseFailed => flag(self.no_false_failed),
                    Property::RecoverWithin => bound(self.recover_within),
                    Property::NoLiveDeclaredDead => flag(self.no_live_declared_dead),
                    Property::ConvergeWithin => bound(self.converge_within),
                    Property::PlacementSplitWithin => bound(self.placement_split_within),
                    Property::StopUsingDeadWithin => bound(self.stop_using_dead_within),
                    Property::NoHealthyEvicted => flag(self.no_healthy_evicted),
                }?;
                Some(Check { property, bound })
            })
            .collect()
    }

    /// The properties written in the table, with their keys.
    pub(super) fn written(&self) -> Vec<(Property, Option<Bound>)> {
        let flag = |on: Option<bool>| on.map(|_| None);
        [
            (Property::DetectWithin, self.detect_within.map(Some)),
            (Property::NoFalseFailed, flag(self.no_false_failed)),
            (Property::RecoverWithin, self.recover_within.map(Some)),
            (
                Property::NoLiveDeclaredDead,
                flag(self.no_live_declared_dead),
            ),
            (Property::ConvergeWithin, self.converge_within.map(Some)),
            (
                Property::PlacementSplitWithin,
                self.placement_split_within.map(Some),
            ),
            (
                Property::StopUsingDeadWithin,
                self.stop_using_dead_within.map(Some),
            ),
            (Property::NoHealthyEvicted, flag(self.no_healthy_evicted)),
        ]
        .into_iter()
        .filter_map(|(p, b)| b.map(|b| (p, b)))
        .collect()
    }
}
