//! A remote member's link read and acted on: its reading thread ([`serve`]), one
//! read of what the link has (`Shared::pump`, also called by threads of the hub's
//! own node while they wait), and the handler that takes each frame under the hub
//! lock.

use crate::state::Shared;
use memchan_core::NodeId;
use memchan_link::link::{Handler, Link, LinkError};
use memchan_link::proto::{self, clock};
use memchan_link::wire::Kind;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

/// A joined remote node's reading thread: reads its link until it ends.
pub(crate) fn serve(sh: Arc<Shared>, node: NodeId, inc: u64, link: Arc<Link>) {
    loop {
        if sh.stop.load(Relaxed) || !sh.lock().alive(node, inc) {
            return;
        }
        // While a thread of the hub's own node waits for data, it reads the links
        // itself (one wake-up per frame instead of two); this thread stays out, deaf
        // to frames until that thread leaves (`end_progress`).
        if link.serve_wait(Duration::from_millis(50), || sh.external.away())
            && !sh.pump(node, inc, &link)
        {
            return;
        }
    }
}

impl Shared {
    /// Reads what `node`'s link has and acts on it; `false` once the link is gone.
    pub(crate) fn pump(&self, node: NodeId, inc: u64, link: &Link) -> bool {
        let mut handler = HubHandler {
            sh: self,
            node,
            inc,
            dirty: Vec::new(),
        };
        let read = link.receive(&mut handler);
        // Outside the hub lock: the writes of what the frames just read queued.
        for l in handler.dirty.drain(..) {
            l.flush();
        }
        match read {
            Ok(_) => {
                if link.release_moved() {
                    self.settle(&mut self.lock(), node);
                }
                true
            }
            Err(e) => {
                let why = match e {
                    LinkError::Closed => "its link closed".to_string(),
                    LinkError::Protocol(w) => format!("protocol violation: {w}"),
                    e => e.to_string(),
                };
                self.isolate(&mut self.lock(), node, inc, &why);
                false
            }
        }
    }
}

struct HubHandler<'a> {
    sh: &'a Shared,
    node: NodeId,
    inc: u64,
    /// The links the frames acted on queued to, taken from the state under the lock
    /// each frame already holds, written once the read is done.
    dirty: Vec<Arc<Link>>,
}

impl Handler for HubHandler<'_> {
    fn frame(&mut self, link: &Link, seq: u64, kind: Kind, payload: &[u8]) {
        let mut st = self.sh.lock();
        if st.alive(self.node, self.inc) {
            st.corked.set(true);
            self.sh.frame(&mut st, self.node, seq, kind, payload);
            st.corked.set(false);
            self.dirty.append(&mut st.dirty.borrow_mut());
            // `frame` settled this node: the releases its header ack moved (this
            // thread's `receive`, before this call) need no second settle in `pump`.
            link.release_moved();
        }
    }

    fn control(&mut self, _link: &Link, kind: Kind, payload: &[u8]) {
        if kind == Kind::TimeProbe {
            // Stamped on arrival, before the lock: a later stamp only loosens the
            // node's upper bound. The answer goes out in the hub's order.
            let now = clock::mono_ns();
            if let Some((t, bound)) = clock::get_probe(payload) {
                let mut st = self.sh.lock();
                if let Some(p) = st.port_mut(self.node, self.inc) {
                    p.clock_bound_ns = bound;
                }
                if self.sh.cfg.clock_period.is_some() && st.alive(self.node, self.inc) {
                    st.send(self.node, Kind::Time, &[&clock::time(now, t)]);
                }
            }
            return;
        }
        if kind == Kind::Heartbeat {
            if let Ok(c) = proto::get_heartbeat(payload) {
                let mut st = self.sh.lock();
                if let Some(p) = st.port_mut(self.node, self.inc) {
                    p.node_counters = c;
                }
            }
        }
    }
}
