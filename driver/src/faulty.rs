//! Partitions, loss and slow links in user space: a fault filter in front of
//! a [`Transport`].
//!
//! [`Filter`] is sans-IO (time is an input, randomness comes from a
//! [`Dice`] the host supplies): it decides the fate of every datagram this
//! node *sends*, as fdlab's simulator decides a control datagram's fate at
//! its send instant (`sim/src/engine.rs`, `send` and `transmit_datagram`):
//!
//! 1. a partition window that cuts the link drops the datagram, or holds it
//!    until the window ends (`mode = "hold"`) and then sends it as if it had
//!    been sent at the heal; the first cutting window decides, as in the
//!    simulator;
//! 2. otherwise the datagram is lost with probability
//!    `1 - (1 - base_loss) * prod(1 - loss of each loss window in force)`,
//!    one draw from the dice;
//! 3. a kept datagram is delayed by the sum of the slow-link windows' extra
//!    latencies in force (on top of what the real network adds).
//!
//! Filtering on send, not on receive, is what makes a one-way partition of a
//! node ("everything n2 sends is lost") a property of the sender's plan, and
//! what lets a held datagram leave at the heal in its send order. The cost: a
//! delayed or held datagram waits in the sender's process, so a sender that
//! is stopped (`SIGSTOP`) while datagrams are in its delay queue sends them
//! late (a killed one never); the simulator's network would deliver them
//! meanwhile.
//!
//! [`FaultyTransport`] is the async adapter: it runs the filter on `send`,
//! and its `recv` also sends the delayed and released datagrams when they
//! are due (the driver keeps one `recv` future alive, so it is always being
//! polled).

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::io;
use std::pin::pin;
use std::task::{Poll, Waker};

use fdlab_protocol::Nanos;

use crate::node::{Clock, Transport};

/// Most datagrams one hold-mode partition window keeps for a heal; more are
/// dropped (a real buffer is finite too). Far above what a few minutes of
/// heartbeats make.
pub const MAX_HELD_PER_WINDOW: usize = 1 << 16;

/// A loss model of one window.
#[derive(Clone, Debug, PartialEq)]
pub enum Loss {
    None,
    /// Every datagram is lost with this probability.
    Independent(f64),
    /// Gilbert-Elliott as the simulator resolves it: loss `p` inside the
    /// listed `[start, end)` bursts (sorted, disjoint), none outside.
    Bursts {
        p: f64,
        bursts: Vec<(Nanos, Nanos)>,
    },
}

impl Loss {
    /// Loss probability at `at`.
    pub fn at(&self, at: Nanos) -> f64 {
        match self {
            Loss::None => 0.0,
            Loss::Independent(p) => *p,
            Loss::Bursts { p, bursts } => {
                let i = bursts.partition_point(|&(_, end)| end <= at);
                if bursts.get(i).is_some_and(|&(start, _)| start <= at) {
                    *p
                } else {
                    0.0
                }
            }
        }
    }
}

/// What a window does to the datagrams sent to its peer.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// A partition: drop, or hold until the window ends.
    Cut { hold: bool },
    /// A slow link and/or a loss fault.
    Degrade { extra_latency: Nanos, loss: Loss },
}

/// One fault window on the link from this node to `peer`, in the node's
/// local time (nanoseconds since the run's common start), `[start, end)`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkWindow<A> {
    pub peer: A,
    pub start: Nanos,
    pub end: Nanos,
    pub effect: Effect,
}

impl<A: PartialEq> LinkWindow<A> {
    fn covers(&self, to: &A, at: Nanos) -> bool {
        self.start <= at && at < self.end && self.peer == *to
    }
}

/// Every fault that concerns the datagrams this node sends.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkPlan<A> {
    /// Loss of every datagram, all the time (a scenario's `network.loss`).
    pub base_loss: f64,
    /// Partition windows first match first, as the simulator's partitions.
    pub windows: Vec<LinkWindow<A>>,
}

impl<A> Default for LinkPlan<A> {
    fn default() -> Self {
        LinkPlan {
            base_loss: 0.0,
            windows: Vec::new(),
        }
    }
}

impl<A> LinkPlan<A> {
    /// Whether the plan can change any datagram's fate.
    pub fn is_empty(&self) -> bool {
        self.base_loss <= 0.0 && self.windows.is_empty()
    }
}

/// The host's randomness (sans-IO: the filter draws nothing itself).
pub trait Dice<A> {
    /// Whether a datagram to `to` survives, given the probability `keep` of
    /// keeping it. Called once for every datagram that gets past the
    /// partitions, also when `keep` is 1, so that a host mirroring the
    /// simulator's random streams can draw exactly what the simulator draws
    /// for that message (a loss draw only when `keep < 1`, then its latency).
    fn keeps(&mut self, to: &A, bytes: &[u8], keep: f64) -> bool;
}

impl<A, F: FnMut(&A, &[u8], f64) -> bool> Dice<A> for F {
    fn keeps(&mut self, to: &A, bytes: &[u8], keep: f64) -> bool {
        self(to, bytes, keep)
    }
}

/// What became of a datagram handed to [`Filter::handle_send`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Send it now.
    Send,
    /// Cut by a partition in drop mode (or over the hold limit).
    Cut,
    /// Held by a partition in hold mode, until its end.
    Held,
    /// Lost to a loss draw.
    Lost,
    /// Kept, and queued until this local instant (a slow link).
    Delayed(Nanos),
}

/// The sans-IO fault filter of one node's outgoing datagrams.
#[derive(Debug)]
pub struct Filter<A> {
    plan: LinkPlan<A>,
    /// Per window: the datagrams a hold-mode partition keeps, in send order.
    held: Vec<Vec<(A, Vec<u8>)>>,
    /// Per window: whether its held datagrams went out (at its end).
    healed: Vec<bool>,
    /// Datagrams to send now (released by a heal).
    ready: VecDeque<(A, Vec<u8>)>,
    /// Delayed datagrams by (due instant, arrival order).
    delayed: BTreeMap<(Nanos, u64), (A, Vec<u8>)>,
    sequence: u64,
}

impl<A: Clone + PartialEq> Filter<A> {
    pub fn new(plan: LinkPlan<A>) -> Filter<A> {
        let n = plan.windows.len();
        Filter {
            plan,
            held: vec![Vec::new(); n],
            healed: vec![false; n],
            ready: VecDeque::new(),
            delayed: BTreeMap::new(),
            sequence: 0,
        }
    }

    pub fn plan(&self) -> &LinkPlan<A> {
        &self.plan
    }

    /// The node sends `bytes` to `to` at local time `now`. On [`Fate::Send`]
    /// the caller sends it at once; on any other fate the filter keeps or
    /// discards it.
    pub fn handle_send(
        &mut self,
        now: Nanos,
        to: &A,
        bytes: &[u8],
        dice: &mut impl Dice<A>,
    ) -> Fate {
        // Whatever a heal released leaves before anything sent after it.
        self.handle_heals(now, dice);
        let cut = self
            .plan
            .windows
            .iter()
            .position(|w| matches!(w.effect, Effect::Cut { .. }) && w.covers(to, now));
        if let Some(i) = cut {
            let hold = matches!(self.plan.windows[i].effect, Effect::Cut { hold: true });
            if hold && self.held[i].len() < MAX_HELD_PER_WINDOW {
                self.held[i].push((to.clone(), bytes.to_vec()));
                return Fate::Held;
            }
            return Fate::Cut;
        }
        let fate = self.transmit(now, to, bytes, dice);
        if !self.ready.is_empty() && fate == Fate::Send {
            // Keep send order behind released datagrams not yet taken.
            self.ready.push_back((to.clone(), bytes.to_vec()));
            return Fate::Delayed(now);
        }
        fate
    }

    /// Loss and extra latency at `now` for a datagram past the partitions.
    fn transmit(&mut self, now: Nanos, to: &A, bytes: &[u8], dice: &mut impl Dice<A>) -> Fate {
        let mut keep = 1.0 - self.plan.base_loss;
        let mut extra = Nanos::ZERO;
        for w in &self.plan.windows {
            if let Effect::Degrade {
                extra_latency,
                loss,
            } = &w.effect
            {
                if w.covers(to, now) {
                    keep *= 1.0 - loss.at(now);
                    extra = extra.saturating_add(*extra_latency);
                }
            }
        }
        if !dice.keeps(to, bytes, keep) {
            return Fate::Lost;
        }
        if extra.is_zero() {
            return Fate::Send;
        }
        let due = now.saturating_add(extra);
        self.delayed
            .insert((due, self.sequence), (to.clone(), bytes.to_vec()));
        self.sequence += 1;
        Fate::Delayed(due)
    }

    /// Releases the held datagrams of every hold window that has ended.
    fn handle_heals(&mut self, now: Nanos, dice: &mut impl Dice<A>) {
        for i in 0..self.plan.windows.len() {
            if self.healed[i] || now < self.plan.windows[i].end {
                continue;
            }
            self.healed[i] = true;
            for (to, bytes) in std::mem::take(&mut self.held[i]) {
                if self.transmit(now, &to, &bytes, dice) == Fate::Send {
                    self.ready.push_back((to, bytes));
                }
            }
        }
    }

    /// The next datagram to send at `now` (released by a heal, or a delayed
    /// one that is due), if any.
    pub fn poll_transmit(&mut self, now: Nanos, dice: &mut impl Dice<A>) -> Option<(A, Vec<u8>)> {
        self.handle_heals(now, dice);
        if let Some(d) = self.ready.pop_front() {
            return Some(d);
        }
        let (&key, _) = self.delayed.first_key_value()?;
        if key.0 > now {
            return None;
        }
        self.delayed.remove(&key)
    }

    /// The next local instant at which [`Filter::poll_transmit`] may return
    /// something.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        if !self.ready.is_empty() {
            return Some(Nanos::ZERO);
        }
        let heal = (0..self.plan.windows.len())
            .filter(|&i| !self.healed[i] && !self.held[i].is_empty())
            .map(|i| self.plan.windows[i].end);
        let delayed = self.delayed.keys().next().map(|&(due, _)| due);
        heal.chain(delayed).min()
    }
}

/// The filter and its dice behind the transport's `&self` methods, and the
/// waker of a pending `recv` that must re-plan when a send queues something
/// earlier than it waits for.
struct State<A, D> {
    filter: Filter<A>,
    dice: D,
    /// Bumped whenever a send may have moved the filter's timeout earlier.
    plan_version: u64,
    recv_waker: Option<Waker>,
}

/// A [`Transport`] whose outgoing datagrams pass a [`Filter`]; `clock` must
/// be the node's clock (the plan's windows are in its time).
pub struct FaultyTransport<T: Transport, C, D> {
    pub inner: T,
    clock: C,
    state: RefCell<State<T::Addr, D>>,
}

impl<T: Transport, C: Clock, D: Dice<T::Addr>> FaultyTransport<T, C, D> {
    pub fn new(inner: T, clock: C, plan: LinkPlan<T::Addr>, dice: D) -> Self {
        FaultyTransport {
            inner,
            clock,
            state: RefCell::new(State {
                filter: Filter::new(plan),
                dice,
                plan_version: 0,
                recv_waker: None,
            }),
        }
    }

    /// Sends every datagram the filter releases at the current time.
    async fn flush(&self) {
        loop {
            let next = {
                let mut st = self.state.borrow_mut();
                let State { filter, dice, .. } = &mut *st;
                filter.poll_transmit(self.clock.now(), dice)
            };
            let Some((to, bytes)) = next else { return };
            // A failed send is a lost datagram, as for the driver's own sends.
            let _ = self.inner.send(&to, &bytes).await;
        }
    }
}

impl<T: Transport, C: Clock, D: Dice<T::Addr>> Transport for FaultyTransport<T, C, D> {
    type Addr = T::Addr;

    async fn recv(&self) -> io::Result<(Vec<u8>, T::Addr)> {
        let mut inner = pin!(self.inner.recv());
        loop {
            self.flush().await;
            let (wake, version) = {
                let st = self.state.borrow();
                (st.filter.poll_timeout(), st.plan_version)
            };
            let mut sleep = pin!(async {
                match wake {
                    Some(t) => self.clock.sleep_until(t).await,
                    None => std::future::pending().await,
                }
            });
            let arrived = std::future::poll_fn(|cx| {
                if let Poll::Ready(r) = inner.as_mut().poll(cx) {
                    return Poll::Ready(Some(r));
                }
                if sleep.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                let mut st = self.state.borrow_mut();
                if st.plan_version != version {
                    return Poll::Ready(None);
                }
                st.recv_waker = Some(cx.waker().clone());
                Poll::Pending
            })
            .await;
            if let Some(result) = arrived {
                return result;
            }
        }
    }

    async fn send(&self, to: &T::Addr, bytes: &[u8]) -> io::Result<()> {
        let fate = {
            let mut st = self.state.borrow_mut();
            let State { filter, dice, .. } = &mut *st;
            filter.handle_send(self.clock.now(), to, bytes, dice)
        };
        match fate {
            Fate::Send => self.inner.send(to, bytes).await,
            Fate::Cut | Fate::Lost => Ok(()),
            Fate::Held | Fate::Delayed(_) => {
                // The pending `recv` may sleep past this datagram's instant.
                let mut st = self.state.borrow_mut();
                st.plan_version += 1;
                if let Some(w) = st.recv_waker.take() {
                    w.wake();
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Nanos {
        Nanos::from_millis(n)
    }

    fn window(peer: u32, start: u64, end: u64, effect: Effect) -> LinkWindow<u32> {
        LinkWindow {
            peer,
            start: ms(start),
            end: ms(end),
            effect,
        }
    }

    /// Dice that keep everything and record the `keep` they were asked about.
    fn recording(asked: &mut Vec<f64>) -> impl FnMut(&u32, &[u8], f64) -> bool + '_ {
        |_, _, keep| {
            asked.push(keep);
            true
        }
    }

    #[test]
    fn a_drop_partition_cuts_only_its_peer_and_only_inside_its_window() {
        let plan = LinkPlan {
            base_loss: 0.0,
            windows: vec![window(2, 100, 200, Effect::Cut { hold: false })],
        };
        let mut f = Filter::new(plan);
        let mut asked = Vec::new();
        let mut dice = recording(&mut asked);
        assert_eq!(f.handle_send(ms(99), &2, b"a", &mut dice), Fate::Send);
        assert_eq!(f.handle_send(ms(100), &2, b"b", &mut dice), Fate::Cut);
        assert_eq!(f.handle_send(ms(150), &3, b"c", &mut dice), Fate::Send);
        assert_eq!(f.handle_send(ms(199), &2, b"d", &mut dice), Fate::Cut);
        assert_eq!(f.handle_send(ms(200), &2, b"e", &mut dice), Fate::Send);
        assert_eq!(f.poll_timeout(), None);
        assert_eq!(f.poll_transmit(ms(1000), &mut dice), None);
        drop(dice);
        // Cut datagrams never reach the dice (no draw, as in the simulator).
        assert_eq!(asked, [1.0, 1.0, 1.0]);
    }

    #[test]
    fn a_hold_partition_releases_in_send_order_at_its_end() {
        let plan = LinkPlan {
            base_loss: 0.0,
            windows: vec![window(2, 100, 200, Effect::Cut { hold: true })],
        };
        let mut f = Filter::new(plan);
        let mut dice = |_: &u32, _: &[u8], _| true;
        assert_eq!(f.handle_send(ms(120), &2, b"1", &mut dice), Fate::Held);
        assert_eq!(f.handle_send(ms(130), &2, b"2", &mut dice), Fate::Held);
        assert_eq!(f.poll_timeout(), Some(ms(200)));
        assert_eq!(f.poll_transmit(ms(199), &mut dice), None);
        // A send after the heal goes behind the released datagrams.
        assert_eq!(
            f.handle_send(ms(201), &2, b"3", &mut dice),
            Fate::Delayed(ms(201))
        );
        let out: Vec<Vec<u8>> = std::iter::from_fn(|| f.poll_transmit(ms(201), &mut dice))
            .map(|(_, b)| b)
            .collect();
        assert_eq!(out, [b"1".to_vec(), b"2".to_vec(), b"3".to_vec()]);
        assert_eq!(f.poll_timeout(), None);
    }

    #[test]
    fn the_first_cutting_window_decides_drop_or_hold() {
        let plan = LinkPlan {
            base_loss: 0.0,
            windows: vec![
                window(2, 0, 100, Effect::Cut { hold: false }),
                window(2, 50, 150, Effect::Cut { hold: true }),
            ],
        };
        let mut f = Filter::new(plan);
        let mut dice = |_: &u32, _: &[u8], _| true;
        assert_eq!(f.handle_send(ms(60), &2, b"x", &mut dice), Fate::Cut);
        assert_eq!(f.handle_send(ms(100), &2, b"y", &mut dice), Fate::Held);
    }

    #[test]
    fn loss_probabilities_combine_and_slow_links_add_up() {
        let plan = LinkPlan {
            base_loss: 0.5,
            windows: vec![
                window(
                    2,
                    0,
                    100,
                    Effect::Degrade {
                        extra_latency: ms(30),
                        loss: Loss::Independent(0.5),
                    },
                ),
                window(
                    2,
                    50,
                    100,
                    Effect::Degrade {
                        extra_latency: ms(20),
                        loss: Loss::None,
                    },
                ),
            ],
        };
        let mut f = Filter::new(plan);
        let mut asked = Vec::new();
        {
            let mut dice = recording(&mut asked);
            assert_eq!(
                f.handle_send(ms(10), &2, b"a", &mut dice),
                Fate::Delayed(ms(40))
            );
            assert_eq!(
                f.handle_send(ms(60), &2, b"b", &mut dice),
                Fate::Delayed(ms(110))
            );
            assert_eq!(f.handle_send(ms(60), &3, b"c", &mut dice), Fate::Send);
            assert_eq!(f.poll_timeout(), Some(ms(40)));
            assert_eq!(f.poll_transmit(ms(39), &mut dice), None);
            assert_eq!(f.poll_transmit(ms(40), &mut dice), Some((2, b"a".to_vec())));
            assert_eq!(f.poll_timeout(), Some(ms(110)));
            assert_eq!(
                f.poll_transmit(ms(110), &mut dice),
                Some((2, b"b".to_vec()))
            );
            assert_eq!(f.poll_timeout(), None);
        }
        assert_eq!(asked, [0.25, 0.25, 0.5]);
        // A losing draw loses the datagram, delayed or not.
        let mut lose = |_: &u32, _: &[u8], _| false;
        assert_eq!(f.handle_send(ms(10), &2, b"d", &mut lose), Fate::Lost);
        assert_eq!(f.poll_timeout(), None);
    }

    #[test]
    fn bursty_loss_applies_only_inside_bursts() {
        let loss = Loss::Bursts {
            p: 0.9,
            bursts: vec![(ms(10), ms(20)), (ms(40), ms(45))],
        };
        for (t, p) in [
            (0, 0.0),
            (10, 0.9),
            (19, 0.9),
            (20, 0.0),
            (44, 0.9),
            (45, 0.0),
        ] {
            assert_eq!(loss.at(ms(t)), p, "at {t} ms");
        }
    }

    #[test]
    fn held_datagrams_meet_the_loss_and_latency_in_force_at_the_heal() {
        let plan = LinkPlan {
            base_loss: 0.0,
            windows: vec![
                window(2, 0, 100, Effect::Cut { hold: true }),
                window(
                    2,
                    0,
                    1000,
                    Effect::Degrade {
                        extra_latency: ms(5),
                        loss: Loss::Independent(0.1),
                    },
                ),
            ],
        };
        let mut f = Filter::new(plan);
        let mut asked = Vec::new();
        let mut dice = recording(&mut asked);
        assert_eq!(f.handle_send(ms(1), &2, b"h", &mut dice), Fate::Held);
        assert_eq!(f.poll_transmit(ms(100), &mut dice), None);
        assert_eq!(f.poll_timeout(), Some(ms(105)));
        assert_eq!(
            f.poll_transmit(ms(105), &mut dice),
            Some((2, b"h".to_vec()))
        );
        drop(dice);
        assert_eq!(asked, [0.9]);
    }

    #[test]
    fn the_hold_buffer_is_bounded() {
        let plan = LinkPlan {
            base_loss: 0.0,
            windows: vec![window(2, 0, 100, Effect::Cut { hold: true })],
        };
        let mut f = Filter::new(plan);
        let mut dice = |_: &u32, _: &[u8], _| true;
        for _ in 0..MAX_HELD_PER_WINDOW {
            assert_eq!(f.handle_send(ms(1), &2, b"h", &mut dice), Fate::Held);
        }
        assert_eq!(f.handle_send(ms(1), &2, b"h", &mut dice), Fate::Cut);
    }
}
