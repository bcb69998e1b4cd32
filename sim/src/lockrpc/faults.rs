//! Faults on the lock servers (crash, restart, pause, degrade), the
//! dead-peer windows they open, and how a peer is classed (healthy,
//! slow, dead or cut off).

use fdlab_protocol::lockrpc::BreakerState;
use fdlab_protocol::Nanos;

use super::outcome::{DeadPeerStop, PeerClass};
use super::world::{DeadWindow, World};
use super::STOPPED_MARGIN;
use crate::faults::Action;

impl World<'_> {
    pub(super) fn fault(&mut self, action: Action) {
        match action {
            Action::Crash { node } => {
                let s = &mut self.servers[node as usize];
                if s.down {
                    return;
                }
                s.crash();
                s.lease_timer = None;
                // Every connection to it dies: the kernel resets them.
                for n in 0..self.setup.servers {
                    let conn = self.nodes[n as usize].channels[node as usize].connection();
                    self.servers[node as usize].floor[n as usize] = conn + 1;
                    self.refuse(node, n, conn);
                }
                self.windows[node as usize] = Some(DeadWindow {
                    start: self.now,
                    ..DeadWindow::default()
                });
            }
            Action::Restart { node } => {
                let s = &mut self.servers[node as usize];
                if !s.down {
                    return;
                }
                s.down = false;
                s.closed.clear();
                self.close_window(node);
            }
            Action::PauseStart { node, .. } => self.servers[node as usize].paused = true,
            Action::PauseEnd { node } => {
                let s = &mut self.servers[node as usize];
                if !s.paused {
                    return;
                }
                s.paused = false;
                let done = std::mem::take(&mut s.finished_while_paused);
                for (job, lane) in done {
                    self.finish(node, job, lane);
                }
                self.resume_accepting(node);
                self.try_start(node);
            }
            Action::DegradeStart { node, slowdown, .. } => {
                self.servers[node as usize].slowdown = slowdown
            }
            Action::DegradeEnd { node } => self.servers[node as usize].slowdown = Nanos::ZERO,
            // Refused by validation for lock scenarios.
            _ => {}
        }
    }

    pub(super) fn close_window(&mut self, server: u32) {
        let Some(w) = self.windows[server as usize].take() else {
            return;
        };
        let end = self.now;
        let after = |last: Option<Nanos>| last.map_or(Nanos::ZERO, |t| t - w.start);
        let stopped = |last: Option<Nanos>| last.is_none_or(|t| t + STOPPED_MARGIN < end);
        self.out.dead_peers.push(DeadPeerStop {
            server,
            start: w.start,
            end,
            rpc_stop_after: after(w.last_rpc),
            rpcs_stopped: stopped(w.last_rpc),
            stop_after: after(w.last_use),
            stopped: stopped(w.last_use),
            rpcs: w.rpcs,
            probes: w.probes,
            dials: w.dials,
            background_dials: w.background_dials,
        });
    }

    /// Whether node `node`'s channel to `server` is admitting the
    /// breaker's probe now.
    pub(super) fn probing(&self, node: u32, server: u32) -> bool {
        let ch = &self.nodes[node as usize].channels[server as usize];
        matches!(ch.breaker().state(self.now), BreakerState::HalfOpen { .. })
    }

    /// Books an RPC sent to `server` on a connection.
    pub(super) fn note_send(&mut self, server: u32, probe: bool) {
        if let Some(w) = self.windows[server as usize].as_mut() {
            w.rpcs += 1;
            if probe {
                w.probes += 1;
            } else {
                w.last_rpc = Some(self.now);
                w.last_use = Some(self.now);
            }
        }
    }

    /// Books a request that waits for a dial to `server` under way.
    pub(super) fn note_use(&mut self, server: u32, probe: bool) {
        if let Some(w) = self.windows[server as usize].as_mut() {
            if !probe {
                w.last_use = Some(self.now);
            }
        }
    }

    /// Books a dial to `server`: for a request (`background`: false), or
    /// a background re-dial.
    pub(super) fn note_dial(&mut self, server: u32, probe: bool, background: bool) {
        if let Some(w) = self.windows[server as usize].as_mut() {
            if background {
                w.background_dials += 1;
            } else {
                w.dials += 1;
                if !probe {
                    w.last_use = Some(self.now);
                }
            }
        }
    }

    /// What `server` is to node `node` now.
    pub(super) fn class(&self, node: u32, server: u32) -> PeerClass {
        let s = &self.servers[server as usize];
        let cut = self
            .partitions
            .iter()
            .any(|p| p.cuts(node, server, self.now) || p.cuts(server, node, self.now));
        if s.down || cut {
            return PeerClass::Dead;
        }
        let slow_link = self
            .link_faults
            .iter()
            .any(|f| f.applies(node, server, self.now) || f.applies(server, node, self.now));
        if s.paused || !s.slowdown.is_zero() || slow_link {
            PeerClass::Slow
        } else {
            PeerClass::Healthy
        }
    }
}
