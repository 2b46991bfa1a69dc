//! Receiving: posting a receive, delivering a matched message into its buffer (an rx
//! mapping's included: direct deposit), the rendezvous clear-to-send and the
//! acknowledgement words, the control slots, and the blocking and non-blocking receive
//! calls.

use super::*;

impl<'c> Comm<'c> {
    pub(crate) fn start_recv(
        &mut self,
        src: u32,
        tag: u32,
        buf: Buf,
        cap: usize,
    ) -> Result<Request> {
        if tag != ANY_TAG && tag > TAG_UB {
            return Err(invalid("tag", format!("{tag} is above TAG_UB ({TAG_UB})")));
        }
        if src != ANY_SOURCE
            && self
                .peers
                .get(src as usize)
                .is_none_or(|p| p.state == PeerState::Absent)
        {
            return Err(invalid("source", format!("{src} is not a member")));
        }
        let r = self.alloc(Req {
            op: Op::Recv { src, tag },
            buf,
            len: cap,
            tag,
            done: None,
        });
        let i = (r.0 & 0xffff_ffff) as usize;
        // No progress round first: a message still in a ring is newer than every
        // unexpected one and meets the posted queue, in order, when it is drained.
        self.post(i)?;
        Ok(r)
    }

    /// Matches request `i` against the unexpected store, else queues it.
    pub(crate) fn post(&mut self, i: usize) -> Result<()> {
        let (src, tag, cap) = match self.reqs[i].as_ref() {
            Some(Req {
                op: Op::Recv { src, tag },
                len,
                ..
            }) => (*src, *tag, *len),
            _ => return Ok(()),
        };
        let found = self.unexp.iter().position(|u| {
            u.claimed.is_none()
                && (src == ANY_SOURCE || u.src == src)
                && (tag == ANY_TAG || u.tag == tag)
        });
        if let Some(k) = found {
            let u = &self.unexp[k];
            if u.len > cap {
                let e = MsgError::Truncated {
                    node: u.src,
                    tag: u.tag,
                    len: u.len,
                    capacity: cap,
                };
                self.complete(i, Err(e));
                return Ok(());
            }
            match u.kind {
                UKind::Rts(cookie) => {
                    let u = self.unexp.remove(k).expect("found");
                    self.unexp_bytes -= SLOT;
                    if let Err(e) = self.clear_to_send(u.src as usize, cookie, i, u.len, u.tag) {
                        self.on_error(u.src as usize, e)?;
                    }
                }
                UKind::Data if !u.complete => self.unexp[k].claimed = Some(i),
                UKind::Data => {
                    let u = self.unexp.remove(k).expect("found");
                    self.unexp_bytes -= u.len + SLOT;
                    self.deliver_whole(i, &u)?;
                    if u.sync.is_some() {
                        if let Err(e) = self.push(u.src as usize) {
                            self.on_error(u.src as usize, e)?;
                        }
                    }
                }
            }
            return Ok(());
        }
        if let Some(PeerState::Gone(why)) = self.peers.get(src as usize).map(|p| &p.state) {
            let e = gone_error(src, why);
            self.complete(i, Err(e));
            return Ok(());
        }
        self.posted.push_back(i);
        Ok(())
    }

    /// Copies a whole unexpected message into request `i` and completes it.
    pub(crate) fn deliver_whole(&mut self, i: usize, u: &Unexp) -> Result<()> {
        self.write_req(i, 0, &u.data)?;
        self.complete(
            i,
            Ok(Status {
                source: u.src,
                tag: u.tag,
                len: u.len,
            }),
        );
        if let Some(cookie) = u.sync {
            self.ack(u.src as usize, cookie)?;
        }
        Ok(())
    }

    /// Writes `data` at `at` of request `i`'s buffer.
    pub(crate) fn write_req(&mut self, i: usize, at: usize, data: &[u8]) -> Result<()> {
        let me = self.me;
        let Some(r) = self.reqs[i].as_mut() else {
            return Ok(());
        };
        if let Some(b) = r.buf.bytes_mut() {
            b[at..at + data.len()].copy_from_slice(data);
            return Ok(());
        }
        match &mut r.buf {
            Buf::Owned(_) | Buf::Raw(..) => {}
            Buf::Rx { name, offset } => {
                let (name, off) = (name.clone(), *offset + at);
                self.direct_tx(&name, me)?.write(off, data)?;
                // Through a hub the copy comes back asynchronously: it must have
                // landed before the receive completes.
                self.cluster.ack()?;
            }
        }
        Ok(())
    }

    pub(crate) fn direct_tx(&mut self, name: &str, node: usize) -> Result<&TxMapping> {
        let key = (name.to_string(), node);
        if !self.direct.contains_key(&key) {
            let seg = self.cluster.open_segment(name)?;
            let tx = seg.map_tx(Dest::Node(NodeId(node as u16)), TxAttrs::default())?;
            self.direct.insert(key.clone(), tx);
        }
        Ok(&self.direct[&key])
    }

    /// Deposits a zero-copy body where `p`'s clear-to-send said. The segment and the
    /// range are `p`'s input: one that does not exist, that this node may not write,
    /// or a range past its end is `p` breaking the protocol, which fails `p` alone
    /// (as an error of the write it was, it failed every later call of this
    /// communicator, the stream retried at the head of `p`'s queue). This node's own
    /// trouble (isolated, hub lost, the system's refusals, `p` gone) stays the
    /// caller's, as on every other write.
    pub(crate) fn deposit_direct(
        &mut self,
        p: usize,
        name: &str,
        offset: usize,
        data: &[u8],
    ) -> Result<()> {
        let r = match self.direct_tx(name, p) {
            Ok(tx) => tx.write(offset, data).map_err(MsgError::from),
            Err(e) => Err(e),
        };
        r.map_err(|e| match e {
            MsgError::Cluster(
                e @ (memchan::Error::Isolated { .. }
                | memchan::Error::HubLost(_)
                | memchan::Error::Os { .. }
                | memchan::Error::Timeout(..)
                | memchan::Error::Stalled { .. }
                | memchan::Error::TableFull(_)
                | memchan::Error::UnknownNode(_)),
            ) => MsgError::Cluster(e),
            MsgError::Cluster(e) => protocol(
                p,
                &format!(
                    "its clear-to-send names {} bytes at offset {offset} of segment \
                     `{name}`: {e}",
                    data.len()
                ),
            ),
            e => e,
        })
    }

    /// Sends the clear-to-send for the request-to-send `cookie` from `src`, matched by
    /// receive `i`.
    pub(crate) fn clear_to_send(
        &mut self,
        src: usize,
        cookie: u64,
        i: usize,
        len: usize,
        tag: u32,
    ) -> Result<()> {
        let rx_target = match self.reqs[i].as_ref().map(|r| &r.buf) {
            Some(Buf::Rx { name, offset }) => Some((name.clone(), *offset)),
            _ => None,
        };
        self.peers[src].inflight.insert(
            cookie,
            InFlight {
                sink: Sink::Req(i),
                len,
                got: 0,
                tag,
            },
        );
        let p = &mut self.peers[src];
        let mut b = Body::new(Kind::Cts, 0, 0, 0);
        b.set_p(0, cookie);
        match rx_target {
            None => p.out.push_back((b, None)),
            Some((name, offset)) => {
                let n = name.as_bytes();
                b.set_p(1, 1);
                b.set_p(2, offset as u64);
                b.set_p(3, n.len() as u64);
                let mut first = [0u8; 8];
                let k = n.len().min(8);
                first[..k].copy_from_slice(&n[..k]);
                b.set_p(4, u64::from_le_bytes(first));
                p.out.push_back((b, None));
                for part in n[k..].chunks(EAGER_MAX) {
                    let mut nb = Body::new(Kind::Name, 0, part.len() as u8, 0);
                    nb.set_bytes(part);
                    p.out.push_back((nb, None));
                }
            }
        }
        p.next_seq += 1 + (rx_target_slots(&self.reqs[i]) as u64);
        self.push(src)
    }

    /// Acknowledges the synchronous eager message `cookie` of `to`: in the ack word
    /// of the slot this node publishes to `to` next (the line `to` polls, and the
    /// one its next message from here arrives in) if that word is free and the ring
    /// has room for that slot; else as an `Ack` slot, queued. The ack word is
    /// written without a notify unless `to` announced it sleeps (see
    /// [`sleep`](Self::sleep)): a sender that has not gone to sleep polls it.
    pub(crate) fn ack(&mut self, to: usize, cookie: u64) -> Result<()> {
        if self.peers[to].state != PeerState::Live {
            return Ok(());
        }
        let next = self.peers[to].sent + 1;
        if self.peers[to].ack_slot != next && self.ring_room(to)? {
            let off = self.lay.slot(self.me, next) + ACK_WORD;
            self.peers[to].ack_slot = next;
            let tx = self.peers[to]
                .tx
                .as_ref()
                .expect("live peer has a tx mapping");
            // Quiet: a notify's fence would wait for this line to come over before
            // the reply that follows is written into the same line.
            tx.write_no_notify(off, &cookie.to_le_bytes())?;
            // Unless the sender sleeps: it says so in its asleep word here first.
            if self.word(self.lay.asleep(to)) != 0 {
                tx.write_u64(off, cookie)?;
            }
            return Ok(());
        }
        self.control(to, Kind::Ack, &[cookie])
    }

    /// Completes the synchronous eager send that the ack word of slot `seq` of `p`'s
    /// ring acknowledges, if any: a value that is no such cookie is an older
    /// acknowledgement seen already (or one from a lap before), not an error.
    #[inline(always)]
    pub(crate) fn see_ack_word(&mut self, p: usize, seq: u64) -> Result<()> {
        if self.peers[p].awaiting.0.is_empty() {
            return Ok(());
        }
        self.read_ack_word(p, seq)
    }

    #[inline(never)]
    pub(crate) fn read_ack_word(&mut self, p: usize, seq: u64) -> Result<()> {
        let v = self.word(self.lay.slot(p, seq) + ACK_WORD);
        if v == 0 {
            return Ok(());
        }
        if let Some(i) = self.peers[p].awaiting.remove(v, true) {
            self.complete_send(i);
        }
        Ok(())
    }

    /// Queues a control slot (`Ack`) with payload words `words` towards `to`.
    pub(crate) fn control(&mut self, to: usize, kind: Kind, words: &[u64]) -> Result<()> {
        let p = &mut self.peers[to];
        if p.state != PeerState::Live {
            return Ok(());
        }
        let mut b = Body::new(kind, 0, 0, 0);
        for (k, w) in words.iter().enumerate() {
            b.set_p(k, *w);
        }
        p.next_seq += 1;
        p.out.push_back((b, None));
        // Not written yet: an acknowledgement found while draining goes out with the
        // drain's other slots towards `to` (one notify for them all); a caller outside
        // a drain pushes.
        Ok(())
    }

    /// Full-postal / zero-copy non-blocking receive into `buf` (its length is the
    /// capacity). `src` may be [`ANY_SOURCE`], `tag` [`ANY_TAG`].
    ///
    /// # Errors
    /// `Invalid` (tag, a source that is not a member), the cluster's.
    pub fn irecv(&mut self, src: u32, tag: u32, buf: Vec<u8>) -> Result<Request> {
        let cap = buf.len();
        self.start_recv(src, tag, Buf::Owned(buf), cap)
    }

    /// Non-blocking receive into `len` bytes at `offset` of the rx mapping `rx` (of a
    /// segment the senders may write): a matching synchronous send longer than
    /// [`EAGER_MAX`] deposits its body there directly (one copy). Read the data through
    /// `rx` once the request completes.
    ///
    /// # Errors
    /// `Invalid` if the range is outside `rx`; as [`irecv`](Self::irecv).
    pub fn irecv_rx(
        &mut self,
        src: u32,
        tag: u32,
        rx: &RxMapping,
        offset: usize,
        len: usize,
    ) -> Result<Request> {
        if offset.checked_add(len).is_none_or(|e| e > rx.len()) {
            return Err(invalid(
                "receive range",
                format!("{offset}+{len} past the {}-byte rx mapping", rx.len()),
            ));
        }
        let buf = Buf::Rx {
            name: rx.name().to_string(),
            offset,
        };
        self.start_recv(src, tag, buf, len)
    }

    /// Blocking receive into `buf`.
    ///
    /// # Errors
    /// `Truncated` (the message stays queued), `PeerGone`, as [`irecv`](Self::irecv).
    pub fn recv(&mut self, src: u32, tag: u32, buf: &mut [u8]) -> Result<Status> {
        if let Some(s) = self.recv_now(src, tag, buf)? {
            return Ok(s);
        }
        self.recv_slow(src, tag, buf)
    }

    /// [`recv`](Self::recv) through a request, out of line as
    /// [`send_slow`](Self::send_slow).
    #[cold]
    #[inline(never)]
    pub(crate) fn recv_slow(&mut self, src: u32, tag: u32, buf: &mut [u8]) -> Result<Status> {
        let mut v = std::mem::take(&mut self.spare);
        v.clear();
        v.resize(buf.len(), 0);
        let r = self.irecv(src, tag, v)?;
        let (s, v) = self.finish_blocking(r)?;
        buf[..s.len].copy_from_slice(&v[..s.len]);
        self.spare = v;
        Ok(s)
    }

    /// The eager path of a blocking receive from one source, without a request: when
    /// no posted receive and no buffered message could match first, it polls `src`'s
    /// ring a while and takes the next slot straight into `buf` if that is an eager
    /// message with the tag that fits (acknowledging a synchronous one). `None`: the
    /// general path decides; nothing was taken (a slot the protocol does not allow
    /// is left to it too).
    #[inline(always)]
    pub(crate) fn recv_now(
        &mut self,
        src: u32,
        tag: u32,
        buf: &mut [u8],
    ) -> Result<Option<Status>> {
        let p = src as usize;
        if src == ANY_SOURCE
            || (tag != ANY_TAG && tag > TAG_UB)
            || self.peers.get(p).is_none_or(|q| q.state != PeerState::Live)
            || !self.posted.is_empty()
            || (!self.unexp.is_empty() && self.find_unexp(src, tag).is_some())
        {
            return Ok(None);
        }
        for _ in 0..self.fast_polls {
            let seq = self.peers[p].recvd + 1;
            let off = self.lay.slot(p, seq);
            if self.word(off) != seq {
                // A pause between polls: on this VM's cores (AMD EPYC) a poll loop
                // without one took 81-86 ns a message against 72-81 with it, 270
                // against 230 in the slow state (the loop's speculative loads are
                // thrown away when the line moves).
                std::hint::spin_loop();
                continue;
            }
            let b = self.read_slot(off, buf.len());
            let len = b.ilen();
            if b.kind() != Some(Kind::Eager)
                || b.tag() > TAG_UB
                || (tag != ANY_TAG && b.tag() != tag)
                || len > EAGER_MAX
                || len > buf.len()
            {
                return Ok(None);
            }
            b.copy_bytes(&mut buf[..len]);
            // The message is taken: a peer gone meanwhile fails its other operations,
            // not this receive.
            let mut ack = || -> Result<()> {
                self.consumed(p, seq)?;
                if b.flags() & F_SYNC != 0 {
                    self.ack(p, seq)?;
                    if !self.peers[p].out.is_empty() {
                        self.push(p)?;
                    }
                }
                Ok(())
            };
            if let Err(e) = ack() {
                self.on_error(p, e)?;
            }
            return Ok(Some(Status {
                source: src,
                tag: b.tag(),
                len,
            }));
        }
        Ok(None)
    }

    /// Blocking receive into an rx mapping (see [`irecv_rx`](Self::irecv_rx)).
    ///
    /// # Errors
    /// As [`irecv_rx`](Self::irecv_rx) and [`recv`](Self::recv).
    pub fn recv_rx(
        &mut self,
        src: u32,
        tag: u32,
        rx: &RxMapping,
        offset: usize,
        len: usize,
    ) -> Result<Status> {
        let r = self.irecv_rx(src, tag, rx, offset, len)?;
        self.finish_blocking(r).map(|(s, _)| s)
    }

    // ---- completion -----------------------------------------------------------------

    pub(crate) fn finish_cts(&mut self, p: usize) -> Result<()> {
        let Some(c) = self.peers[p].cts.as_ref() else {
            return Ok(());
        };
        if c.name.len() < c.name_len {
            return Ok(());
        }
        let c = self.peers[p].cts.take().expect("pending");
        let name = String::from_utf8(c.name).map_err(|_| protocol(p, "segment name not UTF-8"))?;
        self.start_stream(
            p,
            c.cookie,
            Target::Rx {
                name,
                offset: c.offset,
            },
        );
        Ok(())
    }

    pub(crate) fn start_stream(&mut self, p: usize, cookie: u64, target: Target) {
        let peer = &mut self.peers[p];
        if let Some(i) = peer.awaiting.remove(cookie, false) {
            peer.streams.push_back(Stream {
                cookie,
                req: i,
                sent: 0,
                target,
            });
        }
    }
}
