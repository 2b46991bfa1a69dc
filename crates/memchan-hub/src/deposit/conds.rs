//! The conditional writes whose outcomes the hub still waits for (`Conds`), bounded in
//! number.

use memchan_core::{NodeId, NodeSet};
use std::collections::VecDeque;
use std::time::Instant;

/// Most conditional writes awaiting outcomes the hub remembers; past it the oldest is
/// given up (its missing outcomes reported lost), so a destination that never answers
/// costs bounded memory.
const MAX_DUE: usize = 4096;

/// Conditional writes whose outcomes are due: (origin, token, destinations yet to
/// answer, when it was routed), oldest first.
#[derive(Default)]
pub(crate) struct Conds {
    due: VecDeque<(u16, u64, NodeSet, Instant)>,
}

impl Conds {
    /// Remembers a conditional write; the one given up to make room, if any.
    pub(super) fn open(
        &mut self,
        origin: u16,
        token: u64,
        to: NodeSet,
    ) -> Option<(u16, u64, NodeSet)> {
        let evicted = if self.due.len() >= MAX_DUE {
            self.due.pop_front().map(|(o, t, s, _)| (o, t, s))
        } else {
            None
        };
        self.due.push_back((origin, token, to, Instant::now()));
        evicted
    }

    /// The conditional writes routed before `before`, given up.
    pub(super) fn expire(&mut self, before: Instant) -> Vec<(u16, u64, NodeSet)> {
        let mut out = Vec::new();
        while self.due.front().is_some_and(|e| e.3 < before) {
            if let Some((o, t, s, _)) = self.due.pop_front() {
                out.push((o, t, s));
            }
        }
        out
    }

    /// `from` answered (origin, token): `None` if it owed no such answer, else
    /// whether every destination has answered now (the entry is then gone).
    pub(super) fn settle(&mut self, origin: u16, token: u64, from: NodeId) -> Option<bool> {
        let i = self
            .due
            .iter()
            .position(|(o, t, s, _)| *o == origin && *t == token && s.contains(from))?;
        self.due[i].2.remove(from);
        let complete = self.due[i].2.is_empty();
        if complete {
            self.due.remove(i);
        }
        Some(complete)
    }

    /// Node `n` is gone: its own conditional writes are forgotten, and those it owed
    /// an answer are returned as (origin, token, complete now).
    pub(super) fn gone(&mut self, n: NodeId) -> Vec<(u16, u64, bool)> {
        self.due.retain(|(o, _, _, _)| *o != n.0);
        let mut owed = Vec::new();
        for (o, t, s, _) in &mut self.due {
            if s.contains(n) {
                s.remove(n);
                owed.push((*o, *t, s.is_empty()));
            }
        }
        self.due.retain(|(_, _, s, _)| !s.is_empty());
        owed
    }
}
