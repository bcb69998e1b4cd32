//! The run loop of a membership run: events in true-time order, each
//! dispatched to the node, the table service or the fault schedule it
//! concerns, and every output of an agent carried out at once.

use fdlab_protocol::membership::{AgentEvent, SiloId, TableReply, TableRequest};
use fdlab_protocol::Nanos;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::clock::Clock;
use crate::faults::Schedule;
use crate::outcome::Window;
use crate::queue::EventQueue;

use super::agents::{Agent, Contender, Happened, Wire};
use super::ledger::Ledger;
use super::network::Network;
use super::outcome::NodeChange;
use super::silos::Node;
use super::table::TableService;

mod faults;

/// What can happen.
#[derive(Clone, Debug)]
pub(crate) enum Event {
    /// A new silo starts on `node`, if the node is down and its last silo
    /// was `after` (none: its first).
    Start { node: u32, after: Option<u32> },
    Deliver {
        to: SiloId,
        from: SiloId,
        wire: Wire,
    },
    /// `to`'s connection to `about` was refused or reset: the process of
    /// `about` is gone (Orleans only).
    Unreachable { to: SiloId, about: SiloId },
    /// An operation reaches the table service.
    Table { from: SiloId, request: TableRequest },
    /// The table's answer reaches the silo.
    Reply { to: SiloId, reply: TableReply },
    /// The agent's timer (stale unless `epoch` is the node's).
    Timer { node: u32, epoch: u64 },
    /// A starved node takes the next event of its inbox (stale unless
    /// `epoch` is the node's inbox epoch: the silo it was for stopped).
    Inbox { node: u32, epoch: u64 },
    /// `schedule.actions[i]`.
    Fault(usize),
    /// A busy node is done with `item`, which it began handling at
    /// `started`: the agent takes it now and what it sends leaves now
    /// (stale unless `epoch` is the node's inbox epoch).
    Process {
        node: u32,
        epoch: u64,
        started: Nanos,
        item: Box<Item>,
    },
}

/// An event and when it first became due (its handling may come later, on
/// a paused or starved node: the difference is the node's stall).
#[derive(Clone, Debug)]
pub(crate) struct Item {
    pub(crate) event: Event,
    pub(crate) due: Nanos,
}

pub(crate) struct Cluster {
    contender: Contender,
    /// By node: the entropy a SWIM agent takes at every timer.
    entropy: Vec<ChaCha8Rng>,
    restart_after: Option<Nanos>,
    /// SWIM runs with `swim_created_within`: by node, how long before its
    /// first member started it was created.
    swim_created: Option<Vec<Nanos>>,
    schedule: Schedule,
    nodes: Vec<Node>,
    network: Network,
    table: TableService,
    ledger: Ledger,
    /// Slots of `pending`, in time order (the queue holds plain copies;
    /// the events themselves carry views and votes).
    queue: EventQueue<u32>,
    pending: Pending,
    events: u64,
}

/// The events in the queue, by slot; freed slots are reused.
#[derive(Default)]
struct Pending {
    items: Vec<Option<Item>>,
    free: Vec<u32>,
}

impl Pending {
    fn put(&mut self, item: Item) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.items[slot as usize] = Some(item);
                slot
            }
            None => {
                self.items.push(Some(item));
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Keeps `event`, due at `at`, and queues its slot.
    #[inline]
    fn queue(&mut self, queue: &mut EventQueue<u32>, at: Nanos, event: Event) {
        let slot = self.put(Item { event, due: at });
        queue.push(at.as_nanos(), slot);
    }

    fn take(&mut self, slot: u32) -> Item {
        self.free.push(slot);
        self.items[slot as usize].take().expect("a queued event")
    }
}

impl Cluster {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        contender: Contender,
        entropy: Vec<ChaCha8Rng>,
        processing_rngs: Vec<ChaCha8Rng>,
        restart_after: Option<Nanos>,
        schedule: Schedule,
        clocks: Vec<Clock>,
        network: Network,
        table: TableService,
        ledger: Ledger,
    ) -> Cluster {
        let udp_buffer = match &contender {
            Contender::Swim(config) => config.udp_receive_buffer,
            Contender::Orleans(..) => u64::MAX,
        };
        Cluster {
            contender,
            entropy,
            restart_after,
            swim_created: None,
            schedule,
            nodes: clocks
                .into_iter()
                .zip(processing_rngs)
                .map(|(clock, rng)| Node::new(clock, rng, udp_buffer))
                .collect(),
            network,
            table,
            ledger,
            queue: EventQueue::new(),
            pending: Pending::default(),
            events: 0,
        }
    }

    fn push(&mut self, at: Nanos, event: Event) {
        self.pending.queue(&mut self.queue, at, event);
    }

    /// Queues `item` again at `at`, after everything already due then.
    fn push_last(&mut self, at: Nanos, item: Item) {
        let slot = self.pending.put(item);
        self.queue.push_last(at.as_nanos(), slot);
    }

    /// SWIM members created `ago[node]` before their first start (see
    /// [`Agent::start`]).
    pub(crate) fn swim_created(&mut self, ago: Vec<Nanos>) {
        debug_assert_eq!(ago.len(), self.nodes.len());
        self.swim_created = Some(ago);
    }

    /// Runs from the nodes' start instants to `end`.
    pub(crate) fn run(&mut self, starts: &[Nanos], end: Nanos) {
        for (i, &(at, _)) in self.schedule.actions.clone().iter().enumerate() {
            self.push(at, Event::Fault(i));
        }
        for (node, &at) in starts.iter().enumerate() {
            let node = node as u32;
            self.push(at, Event::Start { node, after: None });
        }
        while let Some((t, slot)) = self.queue.pop() {
            let item = self.pending.take(slot);
            let now = Nanos(t);
            if now >= end {
                break;
            }
            self.events += 1;
            self.dispatch(now, item);
        }
    }

    /// The ledger (with the table's counts), the schedule and the number of
    /// events, at the end of the run.
    pub(crate) fn into_parts(self) -> (Ledger, Schedule, u64) {
        let mut ledger = self.ledger;
        ledger.counts.table_reads = self.table.reads;
        ledger.counts.table_writes = self.table.writes;
        ledger.counts.table_conflicts = self.table.conflicts;
        ledger.counts.table_unavailable = self.table.unavailable;
        (ledger, self.schedule, self.events)
    }

    fn dispatch(&mut self, now: Nanos, item: Item) {
        match item.event {
            Event::Start { node, after } => self.start(now, node, after),
            Event::Fault(i) => self.fault(now, i),
            Event::Table { from, request } => {
                let (result, applied) = self.table.apply(now, &request);
                if let Some(applied) = &applied {
                    self.ledger.applied(now, from, applied);
                }
                let back = self.table.one_way(now);
                let reply = TableReply {
                    id: request.id,
                    result,
                };
                self.push(now + back, Event::Reply { to: from, reply });
            }
            Event::Deliver { to, from, ref wire } => {
                let generation = wire.for_generation().then_some(to.generation);
                if wire.on_connection() && !self.runs(to.node, generation) {
                    if wire.refusal_told() {
                        self.refuse(now, to, from);
                    }
                    return;
                }
                self.at_node(now, to.node, generation, item)
            }
            Event::Reply { to, .. } | Event::Unreachable { to, .. } => {
                self.at_node(now, to.node, Some(to.generation), item)
            }
            Event::Timer { node, .. } => self.at_node(now, node, None, item),
            Event::Inbox { node, epoch } => self.take_from_inbox(now, node, epoch),
            Event::Process {
                node,
                epoch,
                started,
                item,
            } => self.processed(now, node, epoch, started, *item),
        }
    }

    /// Whether a process of `node` runs (of that `generation`, if given).
    fn runs(&self, node: u32, generation: Option<u32>) -> bool {
        let n = &self.nodes[node as usize];
        n.agent.is_some() && generation.is_none_or(|g| g == n.generation)
    }

    /// A message for `to` found no process to take it: its host refuses the
    /// connection (or resets it), and `from` learns so a network trip later.
    fn refuse(&mut self, now: Nanos, to: SiloId, from: SiloId) {
        if let Some(at) = self
            .network
            .arrival(&self.schedule, to.node, from.node, now)
        {
            self.push(
                at,
                Event::Unreachable {
                    to: from,
                    about: to,
                },
            );
        }
    }

    /// `silo`'s process ended: its host resets every connection it had,
    /// and each Orleans silo running elsewhere learns so a network trip
    /// later (unless the reset is lost or cut on the way, as a packet is).
    fn reset_connections(&mut self, now: Nanos, silo: SiloId) {
        if !matches!(self.contender, Contender::Orleans(..)) {
            return;
        }
        for node in 0..self.nodes.len() as u32 {
            let n = &self.nodes[node as usize];
            if node == silo.node || n.agent.is_none() {
                continue;
            }
            let to = SiloId {
                node,
                generation: n.generation,
            };
            if let Some(at) = self.network.arrival(&self.schedule, silo.node, node, now) {
                self.push(at, Event::Unreachable { to, about: silo });
            }
        }
    }

    /// Queues `item` in the node's inbox, and the inbox's next turn.
    fn hold_in_inbox(&mut self, now: Nanos, node: u32, item: Item) {
        let n = &mut self.nodes[node as usize];
        n.inbox.push_back(item);
        self.schedule_inbox(now, node);
    }

    fn schedule_inbox(&mut self, now: Nanos, node: u32) {
        let n = &mut self.nodes[node as usize];
        if n.inbox_due || n.inbox.is_empty() || n.paused_at.is_some() {
            return;
        }
        n.inbox_due = true;
        let (at, epoch) = (n.busy_until.max(now), n.inbox_epoch);
        let slot = self.pending.put(Item {
            event: Event::Inbox { node, epoch },
            due: at,
        });
        self.queue.push_last(at.as_nanos(), slot);
    }

    /// A starved node's turn: it handles the oldest event it holds.
    fn take_from_inbox(&mut self, now: Nanos, node: u32, epoch: u64) {
        let n = &mut self.nodes[node as usize];
        if epoch != n.inbox_epoch {
            return;
        }
        n.inbox_due = false;
        if n.paused_at.is_some() {
            return;
        }
        let Some(item) = n.inbox.pop_front() else {
            return;
        };
        if let Some(bytes) = udp_bytes(&item) {
            n.read_udp(bytes);
        }
        let stale = matches!(item.event, Event::Timer { epoch, .. } if epoch != n.epoch);
        if !stale {
            self.handle(now, node, item);
        }
        self.schedule_inbox(now, node);
    }

    /// An event for a node's silo: dropped if the silo is gone, held while
    /// the node is paused, queued behind the node's work while it starves.
    fn at_node(&mut self, now: Nanos, node: u32, generation: Option<u32>, item: Item) {
        let n = &mut self.nodes[node as usize];
        if n.agent.is_none() || generation.is_some_and(|g| g != n.generation) {
            return;
        }
        if let Event::Timer { epoch, .. } = item.event {
            if epoch != n.epoch {
                return;
            }
            n.timer = None;
        }
        let waits = n.paused_at.is_some() || n.busy_until > now || !n.inbox.is_empty();
        if waits {
            if let Some(bytes) = udp_bytes(&item) {
                if !n.admit_udp(bytes) {
                    return;
                }
            }
        }
        if n.paused_at.is_some() {
            if !matches!(item.event, Event::Timer { .. }) {
                n.held.push(item);
            }
            return;
        }
        // A starved node handles one event per `slowdown`, in arrival order:
        // what arrives while it is busy waits in its inbox.
        if waits {
            self.hold_in_inbox(now, node, item);
            return;
        }
        self.handle(now, node, item);
    }

    /// The node's silo begins handling `item` now. Its processing time (a
    /// starved node's) comes first: the agent takes the event, and its
    /// replies leave, only when that time has passed.
    fn handle(&mut self, now: Nanos, node: u32, item: Item) {
        let n = &mut self.nodes[node as usize];
        let cost = n.cost();
        if cost.is_zero() {
            return self.process(now, node, item, now);
        }
        n.busy_until = now + cost;
        let busy = Window {
            start: now,
            end: now + cost,
        };
        self.ledger.busy(node, busy);
        let n = &self.nodes[node as usize];
        let event = Event::Process {
            node,
            epoch: n.inbox_epoch,
            started: now,
            item: Box::new(item),
        };
        let slot = self.pending.put(Item {
            event,
            due: now + cost,
        });
        self.queue.push_last((now + cost).as_nanos(), slot);
    }

    /// A busy node finished processing `item`: unless its silo stopped
    /// meanwhile; a pause meanwhile holds it to the resume.
    fn processed(&mut self, now: Nanos, node: u32, epoch: u64, started: Nanos, item: Item) {
        let n = &mut self.nodes[node as usize];
        if epoch != n.inbox_epoch || n.agent.is_none() {
            return;
        }
        if n.paused_at.is_some() {
            // Back to the socket buffer: it is read again at the resume.
            if udp_bytes(&item).is_none_or(|bytes| n.admit_udp(bytes)) {
                n.held.push(item);
            }
            return;
        }
        self.process(now, node, item, started);
    }

    /// The agent takes `item` now; it began at `started` (its wait before
    /// then is the stall the agent sees).
    fn process(&mut self, now: Nanos, node: u32, item: Item, started: Nanos) {
        let n = &mut self.nodes[node as usize];
        let local = n.clock.local(now);
        let Some(agent) = n.agent.as_mut() else {
            return;
        };
        let stall = started - item.due;
        if !stall.is_zero() {
            agent.handle_stall(local, stall);
        }
        match item.event {
            Event::Deliver { from, wire, .. } => agent.handle_wire(local, from, wire),
            Event::Reply { reply, .. } => agent.handle_table_reply(local, reply),
            Event::Unreachable { about, .. } => agent.handle_unreachable(local, about),
            Event::Timer { .. } => {
                let entropy = self.entropy[node as usize].random::<u64>();
                agent.handle_timeout(local, entropy)
            }
            _ => {}
        }
        self.drain(now, node);
    }

    /// Carries out what the node's agent asks, and arms its timer.
    fn drain(&mut self, now: Nanos, node: u32) {
        // The agent (in `nodes`) hands its outputs straight to the network,
        // the table service and the ledger, borrowed apart: no buffer in
        // between (docs/perf-history.md). In the agent's order: its messages, then
        // its table operations, then what happened.
        let Cluster {
            nodes,
            network,
            table,
            ledger,
            schedule,
            queue,
            pending,
            ..
        } = self;
        let n = &mut nodes[node as usize];
        let generation = n.generation;
        let Some(agent) = n.agent.as_mut() else {
            return;
        };
        let me = agent.me(generation);
        while let Some((to, wire)) = agent.poll_transmit() {
            ledger.message(wire.bytes());
            // TCP (Orleans' messages, SWIM's streams) retransmits what the
            // network loses; a UDP datagram is lost for good.
            let arrival = if wire.on_connection() {
                network.stream_arrival(schedule, node, to.node, now)
            } else {
                network.arrival(schedule, node, to.node, now)
            };
            if let Some(at) = arrival {
                let event = Event::Deliver { to, from: me, wire };
                pending.queue(queue, at, event);
            }
        }
        while let Some(request) = agent.poll_table() {
            let at = now + table.one_way(now);
            pending.queue(queue, at, Event::Table { from: me, request });
        }
        let mut stop = None;
        while let Some(e) = agent.poll_event() {
            match e {
                Happened::Orleans(e) => {
                    ledger.event(now, me, e);
                    match e {
                        AgentEvent::ViewChanged { .. } => {
                            if let Some(view) = agent.view() {
                                ledger.view(now, me, view);
                            }
                        }
                        AgentEvent::Terminated => stop = Some(NodeChange::Terminated),
                        AgentEvent::KilledItself { .. } => stop = Some(NodeChange::KilledItself),
                        AgentEvent::JoinGaveUp => stop = Some(NodeChange::GaveUp),
                        _ => {}
                    }
                }
                Happened::Swim(e) => ledger.swim_event(now, me, e),
            }
        }
        if let Some(change) = stop {
            self.stop(now, node, change, None);
            if let Some(delay) = self.restart_after {
                let after = Some(me.generation);
                self.push(now + delay, Event::Start { node, after });
            }
            return;
        }
        self.arm(now, node);
    }

    #[inline]
    fn arm(&mut self, now: Nanos, node: u32) {
        let n = &mut self.nodes[node as usize];
        let Some(agent) = n.agent.as_ref() else {
            return;
        };
        let Some(local) = agent.poll_timeout() else {
            return;
        };
        let at = n.clock.true_at(local, now);
        if n.timer.is_some_and(|t| t <= at) {
            return;
        }
        n.epoch += 1;
        n.timer = Some(at);
        let epoch = n.epoch;
        self.push(at, Event::Timer { node, epoch });
    }

    fn start(&mut self, now: Nanos, node: u32, after: Option<u32>) {
        let n = &mut self.nodes[node as usize];
        if n.agent.is_some() || (n.started && after != Some(n.generation)) {
            return;
        }
        let restart = n.started;
        if n.started {
            n.generation += 1;
        }
        n.started = true;
        n.busy_until = now;
        let me = SiloId {
            node,
            generation: n.generation,
        };
        let local = n.clock.local(now);
        let entropy = self.entropy[node as usize].random::<u64>();
        let nodes = self.nodes.len() as u32;
        // A restarted member is created as it starts; a first one, as the
        // run says (none: at a phase of its own).
        let created_ago = self.swim_created.as_ref().map(|ago| {
            if restart {
                Nanos::ZERO
            } else {
                ago[node as usize]
            }
        });
        let agent = Agent::start(&self.contender, me, nodes, local, created_ago, entropy);
        let swim = matches!(agent, Agent::Swim(_));
        self.nodes[node as usize].agent = Some(agent);
        self.ledger.started(now, me, restart, swim);
        self.drain(now, node);
    }

    /// Takes the node's silo down: its process ends, and with it its
    /// connections.
    fn stop(&mut self, now: Nanos, node: u32, change: NodeChange, fault: Option<usize>) {
        let n = &mut self.nodes[node as usize];
        let generation = n.generation;
        if let Some(agent) = n.stop() {
            let silo = agent.me(generation);
            self.ledger.stopped(now, silo, change, fault);
            self.reset_connections(now, silo);
        }
    }
}

/// The bytes of a UDP datagram `item` delivers (none for anything else).
fn udp_bytes(item: &Item) -> Option<u64> {
    match &item.event {
        Event::Deliver {
            wire: wire @ Wire::Swim(_),
            ..
        } => Some(wire.bytes()),
        _ => None,
    }
}
