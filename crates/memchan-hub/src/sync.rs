//! The hub's synchronisation answers: an ack (every earlier write of the asker
//! released at every destination, or the destinations that left or stalled named)
//! and a barrier (every live member of its scope arrived, or the stalled ones named).
//! Both are checked again whenever releases, arrivals or members change. The hub
//! places the barrier (`memchan_core::barrier`) on a table of counts: a node's
//! barrier number per scope, moved by its arrival requests.

use crate::state::{Port, Shared, Sink, State};
use memchan_core::barrier as bar;
use memchan_core::{NodeId, NodeSet, MAX_NODES};
use memchan_link::proto::code;
use memchan_link::proto::reply::Refusal;
use std::collections::HashMap;
use std::time::{Duration, Instant};

impl Shared {
    pub(crate) fn check_acks(&self, st: &mut State) {
        let mut done = Vec::new();
        let mut i = 0;
        while i < st.acks.len() {
            let a = &mut st.acks[i];
            let ports = &st.ports;
            let before = a.waits.len();
            a.waits.retain(|&(d, inc, target)| match &ports[d.index()] {
                Some(Port {
                    inc: pi,
                    sink: Sink::Remote(l),
                    ..
                }) if *pi == inc => l.peer_released() < target,
                _ => {
                    a.missing.push(d);
                    false
                }
            });
            if a.waits.is_empty() {
                done.push(st.acks.swap_remove(i));
                continue;
            }
            // Progress is any waited destination releasing more, or a wait ending: a
            // backlog that drains, however slowly, is not a failure. A destination that
            // stays connected (heartbeating) but releases nothing for the failure
            // timeout fails the ack by name instead of holding it forever.
            let released: u64 = a
                .waits
                .iter()
                .filter_map(|&(d, _, _)| match &ports[d.index()] {
                    Some(Port {
                        sink: Sink::Remote(l),
                        ..
                    }) => Some(l.peer_released()),
                    _ => None,
                })
                .sum();
            if released != a.released || a.waits.len() < before {
                a.released = released;
                a.moved = Instant::now();
            }
            if a.moved.elapsed() > self.cfg.failure_timeout {
                done.push(st.acks.swap_remove(i));
            } else {
                i += 1;
            }
        }
        for a in done {
            if !st.alive(a.origin, a.inc) {
                continue;
            }
            if !a.waits.is_empty() {
                let set: NodeSet = a.waits.iter().map(|w| w.0).collect();
                let ms = self.cfg.failure_timeout.as_millis() as u64;
                tracing::warn!(node = a.origin.0, stalled = ?set, "ack stalled: no release for {ms} ms");
                let r = Refusal::AckStalled {
                    waited_ms: ms,
                    stalled: set,
                };
                st.refuse_with(a.origin, a.req, &r);
            } else if a.missing.is_empty() {
                st.respond(a.origin, a.req, code::OK, &[]);
            } else {
                let set: NodeSet = a.missing.iter().copied().collect();
                st.refuse_with(a.origin, a.req, &Refusal::AckIncomplete(set));
            }
        }
    }

    /// Fails the barrier waits whose missing members, alive and connected, made no
    /// progress for the stall bound: none arrived or left, and none sent a write or a
    /// request (a member busy on its way to the barrier is progress, however long it
    /// takes). The same bound as on one host: 25 failure timeouts, at least 1 s.
    pub(crate) fn expire_barriers(&self, st: &mut State) {
        let bound = (self.cfg.failure_timeout * 25).max(Duration::from_secs(1));
        let members = st.members();
        let mut done = Vec::new();
        let State {
            barrier_waits,
            barrier_counts,
            ports,
            groups,
            ..
        } = st;
        barrier_waits.retain_mut(|w| {
            let want = waited(groups, members, w.scope);
            let counts = &barrier_counts[&w.scope];
            let missing = bar::missing(&want, w.target, |m| counts[m.index()]);
            let handled = missing
                .iter()
                .filter_map(|m| ports[m.index()].as_ref().map(|p| p.handled))
                .sum();
            if missing != w.missing || handled != w.handled {
                (w.missing, w.handled, w.moved) = (missing, handled, Instant::now());
            }
            let stalled = w.moved.elapsed() > bound;
            if stalled {
                done.push((w.node, w.inc, w.req, missing));
            }
            !stalled
        });
        for (n, inc, req, missing) in done {
            if !st.alive(n, inc) {
                continue;
            }
            let ms = bound.as_millis() as u64;
            tracing::warn!(node = n.0, missing = ?missing, "barrier stalled: no progress for {ms} ms");
            let r = Refusal::BarrierStalled {
                waited_ms: ms,
                missing,
            };
            st.refuse_with(n, req, &r);
        }
    }

    /// Answers every barrier waiter whose scope's live members all reached its count.
    pub(crate) fn check_barriers(&self, st: &mut State) {
        let members = st.members();
        // The lowest count among each waited scope's live members, once per scope: a
        // waiter passes when it reaches the waiter's target (the waiter's own count
        // does, it arrived), so a call costs O(members + waiters), not their product.
        let mut lowest: HashMap<u16, Option<u64>> = HashMap::new();
        let mut done = Vec::new();
        st.barrier_waits.retain(|w| {
            let low = *lowest.entry(w.scope).or_insert_with(|| {
                let counts = &st.barrier_counts[&w.scope];
                let want = waited(&st.groups, members, w.scope);
                bar::lowest(want.iter().map(|m| counts[m.index()]))
            });
            let passed = low.is_none_or(|l| bar::reached(l, w.target));
            if passed {
                done.push((w.node, w.inc, w.req));
            }
            !passed
        });
        for (n, inc, req) in done {
            if st.alive(n, inc) {
                st.respond(n, req, code::OK, &[]);
            }
        }
    }
}

/// The members a barrier of `scope` (a group id, `u16::MAX` the cluster) waits for;
/// none for a group that does not exist.
fn waited(groups: &[(String, NodeSet)], members: NodeSet, scope: u16) -> NodeSet {
    let group = match scope {
        u16::MAX => None,
        g => Some(
            groups
                .get(usize::from(g))
                .map_or(NodeSet::EMPTY, |(_, m)| *m),
        ),
    };
    bar::scope(members, group)
}

/// Counts `n`'s barrier arrival `number` of `scope` (its own numbering, from 1 at its
/// join, asked again after a rail switch: `bar::count_arrival`) and returns the
/// barrier number it waits for.
pub(crate) fn count_arrival(st: &mut State, n: NodeId, scope: u16, number: u64) -> u64 {
    let counts = st.barrier_counts.entry(scope).or_insert([0; MAX_NODES]);
    let seen = st.barrier_seen.entry(scope).or_insert([0; MAX_NODES]);
    let i = n.index();
    bar::count_arrival(&mut counts[i], &mut seen[i], number)
}
