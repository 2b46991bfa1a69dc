//! A node's remote-access bookkeeping, the data its link side and its origins share:
//! gets under way, answers queued while the link is read, requests kept for a rail
//! switch, and the answers of atomics this node applied ([`Answered`]). A leaf: the
//! origin side (`rma.rs`) and the serving side (`rma/serve.rs`) work on it.

use crate::recent::Recent;
use memchan_core::NodeId;
use memchan_link::proto::rma::Asker;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// A node's remote-access state: non-blocking gets under way (an ack waits for
/// them), and answers served while the link was being read, sent once it is not.
#[derive(Default)]
pub(crate) struct RmaState {
    /// Request ids of gets not yet taken; an id whose `Pending` was dropped is
    /// `abandoned`: its answer is thrown away when it comes.
    pub(crate) outstanding: Mutex<(HashSet<u32>, HashSet<u32>)>,
    replies: Mutex<Vec<Vec<u8>>>,
    /// Held while an atomic is looked up, applied and kept (two link readers may
    /// serve the two copies of one request at once).
    pub(crate) answered: Mutex<Answered>,
    /// With a standby hub, until the switch: the requests sent and not yet answered
    /// (id -> payload), asked again at the standby once this node switched (the old
    /// hub may have taken one and been lost before its answer came back).
    pub(crate) unanswered: Mutex<HashMap<u32, Vec<u8>>>,
    /// Set once the unanswered requests were asked again.
    pub(crate) asked_again: AtomicBool,
}

impl RmaState {
    /// Queues an answer (called while the link is being read: sending there could
    /// wait for releases that only the same read brings).
    pub(crate) fn queue(&self, done: Vec<u8>) {
        self.replies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(done);
    }

    /// Drops the queued answers: at a rail switch they answer the lost hub's tokens,
    /// which the standby never sent (the origins ask again).
    pub(crate) fn forget_replies(&self) {
        self.replies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Takes the queued answers, to send them up the link.
    pub(crate) fn take_replies(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.replies.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The answers of the atomics this node applied, the last [`Answered::PER_ASKER`] of
/// each origin (incarnation), so that one asked twice is applied once. An origin
/// waits for each atomic before it sends its next one from that thread, so only a
/// few of its requests can be in flight at once; the bound is far above that.
#[derive(Default)]
pub(crate) struct Answered {
    /// Per origin: its incarnation and its kept answers.
    by_origin: HashMap<NodeId, (u64, Recent<Kept>)>,
}

/// A kept answer: (request id, status, body).
type Kept = (u32, u8, Vec<u8>);

impl Answered {
    /// Answers kept per origin.
    const PER_ASKER: usize = 256;

    pub(crate) fn get(&self, a: Asker) -> Option<(u8, &[u8])> {
        let (inc, kept) = self.by_origin.get(&a.node)?;
        if *inc != a.inc {
            return None;
        }
        kept.find(|(req, ..)| *req == a.req)
            .map(|(_, status, body)| (*status, body.as_slice()))
    }

    pub(crate) fn keep(&mut self, a: Asker, status: u8, body: Vec<u8>) {
        let e = self
            .by_origin
            .entry(a.node)
            .or_insert_with(|| (a.inc, Recent::new(Self::PER_ASKER)));
        if e.0 != a.inc {
            // A new incarnation of the origin: the old one's answers are void.
            *e = (a.inc, Recent::new(Self::PER_ASKER));
        }
        e.1.push((a.req, status, body));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memchan_link::proto::code::OK;

    #[test]
    fn an_atomic_asked_again_gets_the_kept_answer_and_a_new_incarnation_does_not() {
        let mut a = Answered::default();
        let asker = |inc, req| Asker {
            node: NodeId(2),
            inc,
            req,
        };
        a.keep(asker(1, 10), OK, vec![1]);
        assert_eq!(a.get(asker(1, 10)), Some((OK, &[1u8][..])));
        assert_eq!(a.get(asker(1, 11)), None);
        assert_eq!(a.get(asker(2, 10)), None, "another incarnation's request");
        a.keep(asker(2, 10), OK, vec![2]);
        assert_eq!(
            a.get(asker(1, 10)),
            None,
            "the old incarnation's answers are void"
        );
        for req in 0..Answered::PER_ASKER as u32 + 1 {
            a.keep(asker(2, 100 + req), OK, vec![]);
        }
        assert_eq!(a.get(asker(2, 100)), None, "the oldest answer made room");
        assert!(a.get(asker(2, 101)).is_some());
    }
}
