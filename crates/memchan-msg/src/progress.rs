//! Progress: pushing queued slots into each peer's ring as credits allow, streaming long
//! bodies in chunks, draining the rings that peers write into this node's memory, and
//! returning credits.

use super::*;

impl<'c> Comm<'c> {
    /// One round over the peers: drain each ring, push what is queued. A round stops
    /// after a peer whose drain stopped at a completion, so that the caller sees it
    /// before polling more rings (each poll of a ring its sender wrote is a cache
    /// miss), and returns true; the next round starts after that peer, so every ring
    /// gets its turn.
    pub(crate) fn progress(&mut self) -> Result<bool> {
        let n = self.active.len();
        for j in 0..n {
            let mut k = self.turn + j;
            if k >= n {
                k -= n;
            }
            let p = self.active[k];
            if self.peers[p].state != PeerState::Live {
                continue;
            }
            let stopped = match self.drain(p) {
                Ok(s) => s,
                Err(e) => {
                    self.on_error(p, e)?;
                    continue;
                }
            };
            // Nothing queued towards `p`: nothing to push (the common case of a poll).
            let peer = &self.peers[p];
            if !(peer.out.is_empty() && peer.streams.is_empty()) {
                if let Err(e) = self.push(p) {
                    self.on_error(p, e)?;
                }
            }
            if stopped {
                self.turn = if k + 1 >= n { 0 } else { k + 1 };
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Writes queued slots and stream chunks towards `p` as credits allow.
    pub(crate) fn push(&mut self, p: usize) -> Result<()> {
        loop {
            self.flush(p)?;
            if !self.peers[p].out.is_empty() || !self.stream_step(p)? {
                return Ok(());
            }
        }
    }

    #[inline(always)]
    pub(crate) fn ring_room(&mut self, p: usize) -> Result<bool> {
        let k = self.lay.slots as u64;
        let peer = &self.peers[p];
        if peer.sent - peer.credit < k {
            return Ok(true);
        }
        let c = self.word(self.lay.credit(p));
        let peer = &mut self.peers[p];
        if c > peer.sent {
            return Err(protocol(p, "credit past what was sent"));
        }
        peer.credit = peer.credit.max(c);
        Ok(peer.sent - peer.credit < k)
    }

    pub(crate) fn flush(&mut self, p: usize) -> Result<()> {
        while !self.peers[p].out.is_empty() && self.ring_room(p)? {
            let peer = &mut self.peers[p];
            let (b, done) = peer.out.pop_front().expect("non-empty");
            // A blocked receiver is woken once per batch: by the last slot's sequence
            // word, which is written after every earlier slot (the next slot surely
            // follows when the queue holds one and the known credit leaves room).
            let more = !peer.out.is_empty() && peer.sent + 1 - peer.credit < self.lay.slots as u64;
            self.publish(p, &b, more)?;
            if let Some(i) = done {
                let s = self.reqs[i].as_ref().map(|r| Status {
                    source: self.me as u32,
                    tag: r.tag,
                    len: r.len,
                });
                if let Some(s) = s {
                    self.complete(i, Ok(s));
                }
            }
        }
        Ok(())
    }

    /// Writes slot `b` as the next of this node's ring at `p` (the caller checked
    /// the room): its words, then its sequence word, the publish, which notifies
    /// unless `quiet`.
    #[inline(always)]
    pub(crate) fn publish(&mut self, p: usize, b: &Body, quiet: bool) -> Result<()> {
        self.publish_bytes(p, b.used_bytes(), quiet)
    }

    /// [`publish`](Self::publish) of a body's words in use, as bytes.
    #[inline(always)]
    pub(crate) fn publish_bytes(&mut self, p: usize, body: &[u8], quiet: bool) -> Result<()> {
        let peer = &mut self.peers[p];
        let seq = peer.sent + 1;
        let off = self.lay.slot(self.me, seq);
        let tx = peer.tx.as_ref().expect("live peer has a tx mapping");
        if quiet {
            tx.write_no_notify(off + 8, body)?;
            tx.write_no_notify(off, &seq.to_le_bytes())?;
        } else {
            tx.write_record(off + 8, body, off, seq)?;
        }
        peer.sent = seq;
        Ok(())
    }

    /// One step of the head stream towards `p` (a chunk, or a whole direct deposit).
    /// Returns whether it made progress.
    pub(crate) fn stream_step(&mut self, p: usize) -> Result<bool> {
        let Some(s) = self.peers[p].streams.front() else {
            return Ok(false);
        };
        let (cookie, i, sent) = (s.cookie, s.req, s.sent);
        let (len, tag) = match self.reqs[i].as_ref() {
            Some(r) => (r.len, r.tag),
            None => return Ok(false),
        };
        let direct = match &s.target {
            Target::Rx { name, offset } => Some((name.clone(), *offset)),
            Target::Bulk => None,
        };
        if !self.ring_room(p)? {
            return Ok(false);
        }
        let me = self.me;
        if let Some((name, offset)) = direct {
            let (ptr, n) = match self.reqs[i].as_ref() {
                Some(r) => (r.buf.bytes().as_ptr(), r.buf.bytes().len()),
                None => return Ok(false),
            };
            // SAFETY: the request's bytes (a Vec it owns, or the caller's memory under
            // the `_ptr` contract) stay put until it completes, which is after this.
            let data = unsafe { std::slice::from_raw_parts(ptr, n) };
            self.deposit_direct(p, &name, offset, data)?;
            let peer = &mut self.peers[p];
            peer.streams.pop_front();
            let mut b = Body::new(Kind::Fin, 0, 0, tag);
            b.set_p(0, cookie);
            b.set_p(1, len as u64);
            peer.next_seq += 1;
            peer.out.push_back((b, Some(i)));
            return Ok(true);
        }
        let used = self.word(self.lay.credit(p) + 8);
        let peer = &self.peers[p];
        if used > peer.chunks_sent {
            return Err(protocol(p, "chunk credit past what was sent"));
        }
        if peer.chunks_sent - used >= self.lay.chunks as u64 {
            return Ok(false);
        }
        let n = self.lay.chunk.min(len - sent);
        let at = self.lay.chunk_at(me, peer.chunks_sent);
        if let Some(r) = self.reqs[i].as_ref() {
            peer.tx
                .as_ref()
                .expect("live peer has a tx mapping")
                .write(at, &r.buf.bytes()[sent..sent + n])?;
        }
        let peer = &mut self.peers[p];
        peer.chunks_sent += 1;
        let mut b = Body::new(Kind::Frag, 0, 0, tag);
        b.set_p(0, cookie);
        b.set_p(1, n as u64);
        peer.next_seq += 1;
        let last = sent + n == len;
        peer.out.push_back((b, last.then_some(i)));
        if last {
            peer.streams.pop_front();
        } else if let Some(s) = peer.streams.front_mut() {
            s.sent += n;
        }
        Ok(true)
    }

    /// Reads the complete slots from `p`'s ring, until the unexpected store is full or
    /// a small message or an acknowledgement completed a request: then it returns true
    /// (the next slot's poll can wait for the next round: it is a cache miss on the
    /// path of the message just received, and a reply behind an acknowledgement is
    /// better taken by the receive that follows than buffered now).
    pub(crate) fn drain(&mut self, p: usize) -> Result<bool> {
        loop {
            let before = self.completed;
            let seq = self.peers[p].recvd + 1;
            let off = self.lay.slot(p, seq);
            // An acknowledgement may wait in the ack word of the slot not yet
            // consumed; the slot itself (often the reply behind it) is left to the
            // receive that follows.
            self.see_ack_word(p, seq)?;
            if self.completed != before {
                return Ok(true);
            }
            if self.word(off) != seq {
                break;
            }
            let b = self.read_slot(off, EAGER_MAX);
            match self.handle(p, seq, &b)? {
                Handled::Stall => break,
                Handled::Consumed => {}
            }
            self.consumed(p, seq)?;
            if self.completed != before && matches!(b.kind(), Some(Kind::Eager | Kind::Ack)) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The slot at `off` (its sequence word seen with Acquire): the header word,
    /// then the payload words in use ([`Body::words_within`] `cap`: an eager receive
    /// into `cap` bytes reads no more). Inlined, and returned in registers: on the
    /// receive path a result returned through memory cost a store-forwarding stall.
    /// Relaxed loads from one base: the sequence word's Acquire already ordered them,
    /// and an Acquire load per word made the compiler reload `self` between them.
    #[inline(always)]
    pub(crate) fn read_slot(&self, off: usize, cap: usize) -> Body {
        debug_assert!(off.is_multiple_of(8) && off + SLOT <= self.lay.size);
        let at = (self.base + off) as *const std::sync::atomic::AtomicU64;
        // SAFETY: a slot of the layout: `SLOT` bytes at an 8-aligned offset inside
        // this node's receive memory, mapped while `self` lives; other processes
        // write it concurrently, so it is read only through atomic loads.
        let load = |k: usize| unsafe { (*at.add(k)).load(std::sync::atomic::Ordering::Relaxed) };
        let mut b = Body::default();
        b.w[0] = load(1);
        for k in 1..b.words_within(cap) {
            b.w[k] = load(1 + k);
        }
        b
    }

    /// Slot `seq` of `p`'s ring is consumed (its ack word read again: it may have
    /// been written after an earlier look, before the slot was published); its
    /// credit goes back in batches of a quarter ring.
    #[inline(always)]
    pub(crate) fn consumed(&mut self, p: usize, seq: u64) -> Result<()> {
        self.see_ack_word(p, seq)?;
        let peer = &mut self.peers[p];
        peer.recvd = seq;
        if peer.recvd - peer.credited >= (self.lay.slots / 4) as u64 {
            peer.credited = peer.recvd;
            let v = peer.recvd;
            peer.tx
                .as_ref()
                .expect("live peer has a tx mapping")
                .write_u64(self.lay.credit(self.me), v)?;
        }
        Ok(())
    }
}
