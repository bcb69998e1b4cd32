//! The membership agent a silo runs, behind one interface for the run loop:
//! Orleans' (`fdlab_protocol::membership::OrleansAgent`, with its judge and
//! the table service) or SWIM's (`fdlab_protocol::membership::swim`, plain
//! or with Lifeguard, no table). What the reports need of either comes out
//! as one kind of [`Happened`].

use std::sync::Arc;

use fdlab_protocol::membership::swim::{
    MemberId, Packet, Stream, SwimAgent, SwimConfig, SwimEvent,
};
use fdlab_protocol::membership::{
    AgentEvent, JudgeSpec, Message, OrleansAgent, OrleansConfig, SiloId, TableReply, TableRequest,
    TableView,
};
use fdlab_protocol::Nanos;

/// What the silos of one run are.
#[derive(Clone, Debug)]
pub enum Contender {
    /// Orleans, with this judge.
    Orleans(OrleansConfig, JudgeSpec),
    /// SWIM with these switches (plain SWIM or Lifeguard).
    Swim(SwimConfig),
}

/// What travels between silos.
#[derive(Clone, Debug)]
pub(crate) enum Wire {
    Orleans(Message),
    /// A SWIM datagram (UDP).
    Swim(Packet),
    /// A SWIM stream message (TCP): a fallback ping or its ack, a push/pull.
    SwimStream(Stream),
}

impl Contender {
    /// How reports name the judge `name` of this contender: with the
    /// Orleans version it runs (`classic (10.2)`), or as it is.
    pub fn label(&self, name: &str) -> String {
        match self {
            Contender::Orleans(config, _) => format!("{name} ({})", config.version),
            Contender::Swim(_) => name.to_string(),
        }
    }
}

impl Wire {
    pub(crate) fn bytes(&self) -> u64 {
        match self {
            Wire::Orleans(m) => m.bytes(),
            Wire::Swim(p) => p.bytes(),
            Wire::SwimStream(m) => m.bytes(),
        }
    }

    /// Whether only the addressed generation may receive it: an Orleans
    /// message names a silo; a SWIM packet a member, whatever its process.
    pub(crate) fn for_generation(&self) -> bool {
        matches!(self, Wire::Orleans(_))
    }

    /// Whether it travels on a TCP connection: the network retransmits
    /// what it loses, and a host whose process is gone refuses it. A SWIM
    /// packet is a UDP datagram: lost is lost, and memberlist never reads
    /// the ICMP error that a dead port returns, so it just vanishes.
    pub(crate) fn on_connection(&self) -> bool {
        matches!(self, Wire::Orleans(_) | Wire::SwimStream(_))
    }

    /// Whether its sender's agent is told of a refused connection: an
    /// Orleans silo (its probes fail at once); a SWIM member's fallback
    /// ping or push/pull just gets no answer, which the agent sees as such.
    pub(crate) fn refusal_told(&self) -> bool {
        matches!(self, Wire::Orleans(_))
    }
}

/// What an agent did that the ledger records.
#[derive(Clone, Debug)]
pub(crate) enum Happened {
    /// An Orleans agent's event.
    Orleans(AgentEvent),
    /// A SWIM agent's event.
    Swim(SwimEvent),
}

#[derive(Debug)]
pub(crate) enum Agent {
    Orleans(Box<OrleansAgent>),
    Swim(Box<SwimAgent>),
}

impl Agent {
    /// A silo of node `me.node` starting at local time `now`; a SWIM member
    /// starts knowing every node of the cluster (`nodes`), created
    /// `created_ago` before `now` when the run says when (its tickers'
    /// phase: [`SwimAgent::created`]), else at a phase of its own.
    pub(crate) fn start(
        contender: &Contender,
        me: SiloId,
        nodes: u32,
        now: Nanos,
        created_ago: Option<Nanos>,
        entropy: u64,
    ) -> Agent {
        match contender {
            Contender::Orleans(config, judge) => Agent::Orleans(Box::new(OrleansAgent::new(
                config.clone(),
                judge.clone(),
                me,
                now,
                entropy,
            ))),
            Contender::Swim(config) => {
                let members: Vec<MemberId> = (0..nodes).map(MemberId).collect();
                let (config, me) = (config.clone(), MemberId(me.node));
                Agent::Swim(Box::new(match created_ago {
                    Some(ago) => SwimAgent::created(config, me, &members, now, ago, entropy),
                    None => SwimAgent::new(config, me, &members, now, entropy),
                }))
            }
        }
    }

    pub(crate) fn handle_wire(&mut self, now: Nanos, from: SiloId, wire: Wire) {
        match (self, wire) {
            (Agent::Orleans(a), Wire::Orleans(m)) => a.handle_message(now, from, m),
            (Agent::Swim(a), Wire::Swim(p)) => a.handle_packet(now, MemberId(from.node), &p),
            (Agent::Swim(a), Wire::SwimStream(m)) => a.handle_stream(now, MemberId(from.node), &m),
            _ => debug_assert!(false, "one kind of agent per run"),
        }
    }

    /// The connection to `silo` was refused or reset (Orleans only).
    pub(crate) fn handle_unreachable(&mut self, now: Nanos, silo: SiloId) {
        if let Agent::Orleans(a) = self {
            a.handle_unreachable(now, silo);
        }
    }

    pub(crate) fn handle_table_reply(&mut self, now: Nanos, reply: TableReply) {
        if let Agent::Orleans(a) = self {
            a.handle_table_reply(now, reply);
        }
    }

    /// A stall: Orleans' health score sees it; a SWIM member only through
    /// its late probes and acks (Lifeguard's awareness reacts to those).
    pub(crate) fn handle_stall(&mut self, now: Nanos, stall: Nanos) {
        if let Agent::Orleans(a) = self {
            a.handle_stall(now, stall);
        }
    }

    pub(crate) fn handle_timeout(&mut self, now: Nanos, entropy: u64) {
        match self {
            Agent::Orleans(a) => a.handle_timeout(now, entropy),
            Agent::Swim(a) => a.handle_timeout(now, entropy),
        }
    }

    pub(crate) fn poll_timeout(&self) -> Option<Nanos> {
        match self {
            Agent::Orleans(a) => a.poll_timeout(),
            Agent::Swim(a) => a.poll_timeout(),
        }
    }

    /// The next message, with its addressee (a SWIM member's generation is
    /// that of the sender's view: 0, never checked).
    pub(crate) fn poll_transmit(&mut self) -> Option<(SiloId, Wire)> {
        match self {
            Agent::Orleans(a) => a.poll_transmit().map(|t| (t.to, Wire::Orleans(t.message))),
            Agent::Swim(a) => {
                let to = |m: MemberId| SiloId {
                    node: m.0,
                    generation: 0,
                };
                match a.poll_transmit() {
                    Some(t) => Some((to(t.to), Wire::Swim(t.packet))),
                    None => a
                        .poll_stream()
                        .map(|t| (to(t.to), Wire::SwimStream(t.message))),
                }
            }
        }
    }

    pub(crate) fn poll_table(&mut self) -> Option<TableRequest> {
        match self {
            Agent::Orleans(a) => a.poll_table(),
            Agent::Swim(_) => None,
        }
    }

    pub(crate) fn poll_event(&mut self) -> Option<Happened> {
        match self {
            Agent::Orleans(a) => a.poll_event().map(Happened::Orleans),
            Agent::Swim(a) => a.poll_event().map(Happened::Swim),
        }
    }

    pub(crate) fn me(&self, generation: u32) -> SiloId {
        match self {
            Agent::Orleans(a) => a.me(),
            Agent::Swim(a) => SiloId {
                node: a.me().0,
                generation,
            },
        }
    }

    /// An Orleans silo's view of the table.
    pub(crate) fn view(&self) -> Option<&Arc<TableView>> {
        match self {
            Agent::Orleans(a) => Some(a.view()),
            Agent::Swim(_) => None,
        }
    }
}
