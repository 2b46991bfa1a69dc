//! Peers that leave or fail: membership checks, failing one peer's requests (and only
//! its), routing a protocol error to the peer that caused it.

use super::*;

impl<'c> Comm<'c> {
    pub(crate) fn check_members(&mut self) {
        let e = self.cluster.epoch();
        if e == self.epoch {
            return;
        }
        self.epoch = e;
        let live = self.cluster.members();
        for k in 0..self.active.len() {
            let p = self.active[k];
            if self.peers[p].state == PeerState::Live && !live.contains(&NodeId(p as u16)) {
                self.fail_peer(p, None);
            }
        }
    }

    /// Completes every pending operation on `p` with an error; `p` is gone for good.
    pub(crate) fn fail_peer(&mut self, p: usize, why: Option<String>) {
        if why.is_some() {
            tracing::warn!(
                node = p,
                why = why.as_deref(),
                "message peer broke the protocol"
            );
        }
        let e = || gone_error(p as u32, &why);
        let peer = &mut self.peers[p];
        peer.state = PeerState::Gone(why.clone());
        let mut hit: Vec<usize> = peer.out.drain(..).filter_map(|(_, r)| r).collect();
        hit.extend(peer.streams.drain(..).map(|s| s.req));
        hit.extend(peer.awaiting.0.drain(..).map(|(_, r, _)| r));
        let inflight: Vec<InFlight> = peer.inflight.drain().map(|(_, f)| f).collect();
        peer.cts = None;
        for f in inflight {
            match f.sink {
                Sink::Req(i) => hit.push(i),
                Sink::Unexp(uid) => {
                    if let Some(k) = self.unexp.iter().position(|u| u.uid == uid) {
                        let u = self.unexp.remove(k).expect("found");
                        self.unexp_bytes -= u.len + SLOT;
                        hit.extend(u.claimed);
                    }
                }
            }
        }
        // Requests-to-send from it can never be served.
        let before = self.unexp.len();
        self.unexp
            .retain(|u| !(u.src == p as u32 && matches!(u.kind, UKind::Rts(_))));
        self.unexp_bytes -= (before - self.unexp.len()) * SLOT;
        let mut keep = VecDeque::new();
        for i in std::mem::take(&mut self.posted) {
            match self.reqs[i].as_ref() {
                Some(Req {
                    op: Op::Recv { src, .. },
                    ..
                }) if *src == p as u32 => hit.push(i),
                _ => keep.push_back(i),
            }
        }
        self.posted = keep;
        for i in hit {
            self.complete(i, Err(e()));
        }
    }

    // ---- progress -------------------------------------------------------------------

    /// A protocol error fails the peer; a write refused because the peer is gone too;
    /// anything else (this node isolated, hub lost) is the caller's.
    pub(crate) fn on_error(&mut self, p: usize, e: MsgError) -> Result<()> {
        match e {
            MsgError::Protocol { why, .. } => {
                self.fail_peer(p, Some(why));
                Ok(())
            }
            MsgError::Cluster(memchan::Error::UnknownNode(_)) => {
                self.fail_peer(p, None);
                Ok(())
            }
            e => Err(e),
        }
    }
}
