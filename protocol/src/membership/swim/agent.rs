//! The SWIM / Lifeguard membership agent of one member, as a sans-IO state
//! machine.
//!
//! Source: hashicorp/memberlist v0.2.2 (the version Debian packages)
//! `state.go` (`schedule`, `probe`, `probeNode`, `gossip`, `pushPull`,
//! `refute`, `aliveNode`, `suspectNode`, `deadNode`, `mergeState`),
//! `net.go` (`handlePing`, `handleIndirectPing`, `handleConn`, `sendMsg`),
//! with `DefaultLANConfig`; Lifeguard (Dadgar, Phillips, Currey 2018);
//! SPEC §8.2. The probe loop is in [`super::probe`], the handling of
//! Alive / Suspect / Dead in [`super::updates`], the push/pull state
//! exchange in [`super::push_pull`].
//!
//! Driving contract (quinn-proto style, as the other agents): the host
//! calls [`SwimAgent::handle_packet`] for every UDP packet delivered,
//! [`SwimAgent::handle_stream`] for every TCP message, and
//! [`SwimAgent::handle_timeout`] at [`SwimAgent::poll_timeout`], each with
//! the member's local clock, then drains [`SwimAgent::poll_transmit`]
//! (UDP), [`SwimAgent::poll_stream`] (TCP) and [`SwimAgent::poll_event`].
//! A TCP message to a member whose process is gone is refused by its host;
//! the agent needs no word of it (a refused fallback ping or push/pull just
//! gets no answer, as memberlist logs and moves on). Local time may step
//! backwards; the agent's timers run on the latest time it was given.
//!
//! Randomness: the agent draws none of its own. The host hands 64 bits of
//! entropy to [`SwimAgent::new`] and to every
//! [`SwimAgent::handle_timeout`]; every random choice is derived from
//! them with SplitMix64 ([`super::entropy`]). Same inputs, same outputs.
//!
//! Deviations from memberlist, each for a reason:
//! - Joining: the agent starts knowing the whole member list, every
//!   member Alive at incarnation 0, as a memberlist `Join` with every seed
//!   would end up; there is no join (the initial push/pull) and no leave.
//!   A member forgotten after its death (see [`super::members`]) keeps its
//!   place in the host's list, as unknown.
//! - No compression, no encryption, no user messages or delegates.
//! - A packet's updates are handled in order, then any suspicion whose
//!   timer the confirmations brought to the past fires at once (memberlist
//!   fires it from `Confirm`).
//! - An ack or nack counts only strictly before the probe's deadline (and
//!   a relayed ack only before the relay's): the result does not depend
//!   on whether the host delivers the packet or the timer first.
//! - The tickers' phase. memberlist's probe and gossip tickers are made
//!   in `schedule` (`state.go:104-141`, `time.NewTicker` at lines 120 and
//!   132), which `Create` calls (`memberlist.go:227-238`): they tick at
//!   the member's creation plus whole intervals. `triggerFunc`'s random
//!   stagger (`state.go:146-162`) is shorter than the interval, so it ends
//!   before the first tick and moves nothing. Members created together
//!   therefore probe in lockstep (the live runs' agents, created within
//!   16-44 ms of each other, do: docs/memberlist-live.md).
//!   [`SwimAgent::created`] takes the creation instant and follows this;
//!   [`SwimAgent::new`], for a host that does not say when the member was
//!   created, draws each ticker's phase uniformly within its interval: a
//!   member created at an unrelated instant.

use std::collections::VecDeque;

use crate::time::Nanos;

use super::awareness::Awareness;
use super::config::SwimConfig;
use super::gossip::{retransmit_limit, BroadcastQueue};
use super::members::{MemberId, MemberState, Members};
use super::messages::{
    Message, Packet, Stream, StreamTransmit, SwimEvent, Transmit, COMPOUND_ENTRY_BYTES,
    COMPOUND_HEADER_BYTES,
};
use super::probe::{Probe, Relay};
use super::push_pull::push_pull_scale;
use crate::membership::entropy::Entropy;

/// One member's SWIM agent (see the module documentation).
#[derive(Clone, Debug)]
pub struct SwimAgent {
    pub(super) config: SwimConfig,
    pub(super) me: MemberId,
    /// The latest local time handed in.
    pub(super) now: Nanos,
    pub(super) members: Members,
    pub(super) awareness: Awareness,
    pub(super) queue: BroadcastQueue,
    pub(super) rng: Entropy,
    /// The last sequence number used for a ping.
    pub(super) seq: u32,
    /// This member's probe in flight (one at a time).
    pub(super) probe: Option<Probe>,
    /// The first tick of the probe ticker: every tick is on its grid.
    pub(super) tick0: Nanos,
    /// When the next probe starts, while none is in flight.
    pub(super) next_probe: Nanos,
    pub(super) next_gossip: Nanos,
    /// The next push/pull, if push/pull is on.
    pub(super) next_push_pull: Option<Nanos>,
    /// Indirect probes this member carries out for others.
    pub(super) relays: Vec<Relay>,
    pub(super) transmits: VecDeque<Transmit>,
    pub(super) streams: VecDeque<StreamTransmit>,
    pub(super) events: VecDeque<SwimEvent>,
    /// Reused for the members of random choices.
    pub(super) scratch: Vec<usize>,
}

impl SwimAgent {
    /// Member `me` of a cluster made of `members` (`me` may be among
    /// them), started at local time `now` with the host's `entropy`. The
    /// first probe and gossip rounds come at a uniformly drawn phase within
    /// one interval each: the member's tickers as if it had been created
    /// at an unrelated instant (a deviation: the module documentation).
    /// The configuration must have passed [`SwimConfig::validate`].
    pub fn new(
        config: SwimConfig,
        me: MemberId,
        members: &[MemberId],
        now: Nanos,
        entropy: u64,
    ) -> SwimAgent {
        SwimAgent::start(config, me, members, now, None, entropy)
    }

    /// [`SwimAgent::new`] for a member created (memberlist's `Create`)
    /// `created_ago` before `now`: its probe and gossip tickers tick at its
    /// creation plus whole intervals, as memberlist's do (`schedule`,
    /// `state.go:104-141` at v0.2.2, called from `Create`,
    /// `memberlist.go:227-238`; `triggerFunc`'s stagger, `state.go:146-162`,
    /// ends before the first tick). Members created together probe in
    /// lockstep. A member created at `now` (`created_ago` zero) probes
    /// first one interval later.
    pub fn created(
        config: SwimConfig,
        me: MemberId,
        members: &[MemberId],
        now: Nanos,
        created_ago: Nanos,
        entropy: u64,
    ) -> SwimAgent {
        SwimAgent::start(config, me, members, now, Some(created_ago), entropy)
    }

    fn start(
        config: SwimConfig,
        me: MemberId,
        members: &[MemberId],
        now: Nanos,
        created_ago: Option<Nanos>,
        entropy: u64,
    ) -> SwimAgent {
        debug_assert!(config.validate().is_ok());
        let mut rng = Entropy::new(entropy);
        let members = Members::new(me, members, now, &mut rng);
        let (next_probe, next_gossip) = match created_ago {
            Some(ago) => (
                first_tick(now, ago, config.probe_interval),
                first_tick(now, ago, config.gossip_interval),
            ),
            None => (
                now + Nanos(rng.below(config.probe_interval.as_nanos())),
                now + Nanos(rng.below(config.gossip_interval.as_nanos())),
            ),
        };
        // `pushPullTrigger` (state.go:186-209): a random stagger within the
        // interval, then a whole scaled interval before the first exchange.
        let push_pull = config.push_pull_interval;
        let next_push_pull = (!push_pull.is_zero()).then(|| {
            let stagger = Nanos(rng.below(push_pull.as_nanos()));
            now + stagger + push_pull_scale(push_pull, members.num_nodes())
        });
        SwimAgent {
            awareness: Awareness::new(config.awareness_max_multiplier),
            config,
            me,
            now,
            members,
            queue: BroadcastQueue::default(),
            rng,
            seq: 0,
            probe: None,
            tick0: next_probe,
            next_probe,
            next_gossip,
            next_push_pull,
            relays: Vec::new(),
            transmits: VecDeque::new(),
            streams: VecDeque::new(),
            events: VecDeque::new(),
            scratch: Vec::new(),
        }
    }

    // ----- getters -----

    pub fn me(&self) -> MemberId {
        self.me
    }

    pub fn config(&self) -> &SwimConfig {
        &self.config
    }

    /// This member's own incarnation number.
    pub fn incarnation(&self) -> u32 {
        self.members.get(self.members.me()).incarnation
    }

    /// Lifeguard's local health score (0 healthy; always 0 with
    /// `local_health_multiplier` off).
    pub fn health_score(&self) -> u32 {
        self.awareness.score()
    }

    /// What this member believes of `member` (none if not in the list).
    pub fn state_of(&self, member: MemberId) -> Option<MemberState> {
        self.members
            .index(member)
            .map(|i| self.members.get(i).state)
    }

    /// The incarnation this member knows for `member`.
    pub fn incarnation_of(&self, member: MemberId) -> Option<u32> {
        self.members
            .index(member)
            .map(|i| self.members.get(i).incarnation)
    }

    /// Every member: id, state, incarnation, sorted by id.
    pub fn members(&self) -> impl Iterator<Item = (MemberId, MemberState, u32)> + '_ {
        self.members
            .all()
            .iter()
            .map(|m| (m.id, m.state, m.incarnation))
    }

    /// N: the members not reaped, this one included.
    pub fn num_members(&self) -> usize {
        self.members.num_nodes()
    }

    /// When a running suspicion of `member` declares it Dead.
    pub fn suspicion_deadline(&self, member: MemberId) -> Option<Nanos> {
        let i = self.members.index(member)?;
        self.members.suspicion(i).map(|s| s.deadline())
    }

    /// Independent confirmations counted by the suspicion of `member`.
    pub fn confirmations(&self, member: MemberId) -> Option<u32> {
        let i = self.members.index(member)?;
        self.members.suspicion(i).map(|s| s.confirmations())
    }

    /// Updates waiting in the broadcast queue.
    pub fn queued_updates(&self) -> usize {
        self.queue.len()
    }

    // ----- inputs -----

    /// A packet from `from` arrived.
    pub fn handle_packet(&mut self, now: Nanos, from: MemberId, packet: &Packet) {
        let now = self.advance(now);
        self.expire_suspicions(now);
        for &message in &packet.messages {
            self.handle_message(now, from, message);
        }
        self.expire_suspicions(now);
    }

    /// A TCP message from `from` arrived: a fallback ping or its ack, or
    /// a push/pull.
    pub fn handle_stream(&mut self, now: Nanos, from: MemberId, message: &Stream) {
        let now = self.advance(now);
        self.expire_suspicions(now);
        match message {
            Stream::Ping { seq, target } => {
                if *target == self.me {
                    self.send_stream(from, Stream::Ack { seq: *seq });
                }
            }
            Stream::Ack { seq } => {
                if let Some(p) = &mut self.probe {
                    if p.seq == *seq && now < p.end {
                        p.tcp_contact = true;
                    }
                }
            }
            Stream::PushPull { state, reply } => self.handle_push_pull(now, from, state, *reply),
        }
        self.expire_suspicions(now);
    }

    /// A timer from [`SwimAgent::poll_timeout`] expired (early or late
    /// calls are harmless), with fresh `entropy` from the host.
    pub fn handle_timeout(&mut self, now: Nanos, entropy: u64) {
        let now = self.advance(now);
        self.rng.absorb(entropy);
        self.expire_suspicions(now);
        self.probe_timeout(now);
        self.relays_timeout(now);
        if self.probe.is_none() && self.next_probe <= now {
            self.start_probe(now);
        }
        if self.next_gossip <= now {
            self.next_gossip = next_on_grid(self.next_gossip, now, self.config.gossip_interval);
            self.gossip(now);
        }
        if self.next_push_pull.is_some_and(|t| t <= now) {
            self.push_pull(now);
        }
        // A failed probe's suspicion may have confirmed one already
        // running, bringing its deadline to the past.
        self.expire_suspicions(now);
    }

    // ----- outputs -----

    /// The next local instant at which something is due.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        let mut next = match &self.probe {
            Some(p) => p.due(),
            None => self.next_probe,
        };
        if let Some(t) = self.next_push_pull {
            next = next.min(t);
        }
        // A gossip tick with nothing queued does nothing, so none is asked
        // for: the ticker's next tick counts only once there is something
        // to say (it keeps its grid all the same).
        if self.queue.len() > 0 {
            let gossip = next_on_grid(self.next_gossip, self.now, self.config.gossip_interval);
            next = next.min(gossip);
        }
        for r in &self.relays {
            next = next.min(r.deadline);
        }
        if let Some(t) = self.members.next_suspicion_deadline() {
            next = next.min(t);
        }
        Some(next)
    }

    /// The next UDP packet to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next TCP message to send.
    pub fn poll_stream(&mut self) -> Option<StreamTransmit> {
        self.streams.pop_front()
    }

    /// The next thing that happened.
    pub fn poll_event(&mut self) -> Option<SwimEvent> {
        self.events.pop_front()
    }

    // ----- internals -----

    fn advance(&mut self, now: Nanos) -> Nanos {
        self.now = self.now.max(now);
        self.now
    }

    fn handle_message(&mut self, now: Nanos, from: MemberId, message: Message) {
        match message {
            Message::Ping { seq, target } => {
                // memberlist's `handlePing`: a ping meant for another is dropped.
                if target == self.me {
                    self.send(from, Message::Ack { seq });
                }
            }
            Message::Ack { seq } => self.handle_ack(now, seq),
            Message::PingReq { seq, target, nack } => {
                self.handle_ping_req(now, from, seq, target, nack)
            }
            Message::Nack { seq } => self.handle_nack(now, seq),
            Message::Alive {
                incarnation,
                member,
            } => self.alive_node(now, incarnation, member),
            Message::Suspect {
                incarnation,
                member,
                from,
            } => self.suspect_node(now, incarnation, member, from),
            Message::Dead {
                incarnation,
                member,
                from,
            } => self.dead_node(now, incarnation, member, from, false),
        }
    }

    pub(super) fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// The retransmit limit for the current N.
    fn retransmit_limit(&self) -> u32 {
        retransmit_limit(self.config.retransmit_mult, self.members.num_nodes())
    }

    /// Sends `message` with as many queued updates piggybacked as fit
    /// (memberlist's `sendMsg`, which leaves out the 2-byte length field
    /// of `message` itself in the compound, so that its packets may exceed
    /// the budget by 2 bytes; here they never do).
    pub(super) fn send(&mut self, to: MemberId, message: Message) {
        let budget = u64::from(self.config.udp_buffer_size)
            .saturating_sub(message.bytes() + COMPOUND_HEADER_BYTES + COMPOUND_ENTRY_BYTES);
        let limit = self.retransmit_limit();
        let mut messages = vec![message];
        self.queue
            .take(COMPOUND_ENTRY_BYTES, budget, limit, &mut messages);
        self.transmits.push_back(Transmit {
            to,
            packet: Packet { messages },
        });
    }

    /// Sends `message` over TCP.
    pub(super) fn send_stream(&mut self, to: MemberId, message: Stream) {
        self.streams.push_back(StreamTransmit { to, message });
    }

    /// Sends exactly `messages` (the buddy system's ping + suspect).
    pub(super) fn send_raw(&mut self, to: MemberId, messages: Vec<Message>) {
        self.transmits.push_back(Transmit {
            to,
            packet: Packet { messages },
        });
    }

    /// A gossip round: queued updates to `gossip_nodes` random members
    /// that are alive, suspect, or dead since at most
    /// `gossip_to_the_dead_time` (so they can refute); stops at the first
    /// member for whom nothing is left (memberlist's `gossip`).
    fn gossip(&mut self, now: Nanos) {
        if self.queue.len() == 0 {
            return;
        }
        let mut targets = std::mem::take(&mut self.scratch);
        let dead_time = self.config.gossip_to_the_dead_time;
        let me = self.members.me();
        self.members.sample(
            self.config.gossip_nodes as usize,
            &mut self.rng,
            |i, m| {
                i != me
                    && match m.state {
                        MemberState::Alive | MemberState::Suspect => true,
                        MemberState::Dead => now - m.state_change <= dead_time,
                    }
            },
            &mut targets,
        );
        let budget = u64::from(self.config.udp_buffer_size) - COMPOUND_HEADER_BYTES;
        let limit = self.retransmit_limit();
        for &i in &targets {
            let mut messages = Vec::new();
            self.queue
                .take(COMPOUND_ENTRY_BYTES, budget, limit, &mut messages);
            if messages.is_empty() {
                break;
            }
            let to = self.members.get(i).id;
            self.transmits.push_back(Transmit {
                to,
                packet: Packet { messages },
            });
        }
        self.scratch = targets;
    }
}

/// The first tick strictly after `now` of a ticker of `period` started
/// `ago` before `now` (Go's `time.NewTicker`: ticks at its start plus whole
/// periods; a tick exactly at `now` counts as one already sent).
fn first_tick(now: Nanos, ago: Nanos, period: Nanos) -> Nanos {
    debug_assert!(!period.is_zero());
    let into = ago.as_nanos() % period.as_nanos();
    now + Nanos(period.as_nanos() - into)
}

/// The next tick of a periodic timer due at `due` after `now`, skipping
/// the ticks missed (a ticker drops them).
fn next_on_grid(due: Nanos, now: Nanos, period: Nanos) -> Nanos {
    if due > now {
        return due;
    }
    let missed = (now - due).as_nanos() / period.as_nanos() + 1;
    due + Nanos(missed.saturating_mul(period.as_nanos()))
}
