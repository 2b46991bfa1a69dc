//! The last few of something a node remembers so that a repeat is recognised: the
//! answers of atomics it applied and the outcomes of conditional writes it sent (per
//! origin, for a request the standby orders again after a rail switch), and the
//! requests its waiters abandoned. Bounded: the oldest goes when a new one comes.

use std::collections::VecDeque;

/// At most `cap` entries, oldest first.
#[derive(Debug)]
pub(crate) struct Recent<T> {
    q: VecDeque<T>,
    cap: usize,
}

impl<T> Recent<T> {
    pub(crate) fn new(cap: usize) -> Recent<T> {
        Recent {
            q: VecDeque::new(),
            cap,
        }
    }

    /// Remembers `t`, forgetting the oldest if full.
    pub(crate) fn push(&mut self, t: T) {
        if self.q.len() == self.cap {
            self.q.pop_front();
        }
        self.q.push_back(t);
    }

    /// The newest entry that `f` picks.
    pub(crate) fn find(&self, f: impl Fn(&T) -> bool) -> Option<&T> {
        self.q.iter().rev().find(|t| f(t))
    }

    /// Takes out the newest entry that `f` picks.
    pub(crate) fn take(&mut self, f: impl Fn(&T) -> bool) -> Option<T> {
        let i = self.q.iter().rposition(f)?;
        self.q.remove(i)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.q.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}
