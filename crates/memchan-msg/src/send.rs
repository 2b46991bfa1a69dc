//! Sending: argument checks, the eager and buffered paths of [`Comm::send`] /
//! [`Comm::isend`], the synchronous ones of [`Comm::ssend`] / [`Comm::issend`] and their
//! acknowledgement, completion of a send.

use super::*;

impl<'c> Comm<'c> {
    #[inline(always)]
    pub(crate) fn check_dest(&self, dest: u32, tag: u32) -> Result<usize> {
        let d = dest as usize;
        if tag <= TAG_UB
            && self
                .peers
                .get(d)
                .is_some_and(|p| matches!(p.state, PeerState::Live))
        {
            return Ok(d);
        }
        Err(self.dest_refusal(dest, tag))
    }

    /// Why [`check_dest`](Self::check_dest) refused: out of line, so that the
    /// message's formatting stays off the eager path.
    #[cold]
    #[inline(never)]
    pub(crate) fn dest_refusal(&self, dest: u32, tag: u32) -> MsgError {
        if tag > TAG_UB {
            return invalid("tag", format!("{tag} is above TAG_UB ({TAG_UB})"));
        }
        match self.peers.get(dest as usize).map(|p| &p.state) {
            Some(PeerState::Gone(why)) => gone_error(dest, why),
            _ => invalid("destination", format!("{dest} is not a member")),
        }
    }

    pub(crate) fn start_send(
        &mut self,
        dest: u32,
        tag: u32,
        buf: Buf,
        sync: bool,
    ) -> Result<Request> {
        let d = self.check_dest(dest, tag)?;
        let len = buf.bytes().len();
        if len > MAX_MESSAGE {
            return Err(invalid("length", "over MAX_MESSAGE"));
        }
        let r = self.alloc(Req {
            op: Op::Send,
            buf,
            len,
            tag,
            done: None,
        });
        let i = (r.0 & 0xffff_ffff) as usize;
        let p = &mut self.peers[d];
        let cookie = p.next_seq;
        p.next_seq += 1;
        let flags = if sync { F_SYNC } else { 0 };
        if len <= EAGER_MAX {
            let mut b = Body::new(Kind::Eager, flags, len as u8, tag);
            if let Some(r) = &self.reqs[i] {
                b.set_bytes(r.buf.bytes());
            }
            if sync {
                p.awaiting.insert(cookie, i, true);
                p.out.push_back((b, None));
            } else {
                p.out.push_back((b, Some(i)));
            }
        } else if sync {
            let mut b = Body::new(Kind::Rts, flags, 0, tag);
            b.set_p(0, len as u64);
            p.awaiting.insert(cookie, i, false);
            p.out.push_back((b, None));
        } else {
            let mut b = Body::new(Kind::Hdr, 0, 0, tag);
            b.set_p(0, len as u64);
            p.out.push_back((b, None));
            p.streams.push_back(Stream {
                cookie,
                req: i,
                sent: 0,
                target: Target::Bulk,
            });
        }
        // A protocol error of `d`'s (a credit past what was sent) fails `d`, and
        // with it this request, which the caller then waits for.
        if let Err(e) = self.push(d) {
            self.on_error(d, e)?;
        }
        Ok(r)
    }

    /// Full-postal non-blocking send of `data` (buffered: it may precede its receive).
    /// The buffer comes back in the [`Completion`].
    ///
    /// # Errors
    /// `Invalid` (tag above [`TAG_UB`], not a member), `PeerGone`, the cluster's.
    pub fn isend(&mut self, dest: u32, tag: u32, data: Vec<u8>) -> Result<Request> {
        self.start_send(dest, tag, Buf::Owned(data), false)
    }

    /// [`isend`](Self::isend) (or, with `sync`, [`issend`](Self::issend)) of the
    /// caller's memory (for a C API, or to send one buffer many times); the
    /// completion's buffer is empty.
    ///
    /// # Safety
    /// `data..data+len` must stay readable and unchanged until the request completes
    /// (is returned by `wait`, `test`, `wait_all` or `wait_any`).
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub unsafe fn isend_ptr(
        &mut self,
        dest: u32,
        tag: u32,
        data: *const u8,
        len: usize,
        sync: bool,
    ) -> Result<Request> {
        self.start_send(dest, tag, Buf::Raw(data.cast_mut(), len), sync)
    }

    /// [`irecv`](Self::irecv) into the caller's memory (for a C API, or to reuse one
    /// buffer); the completion's buffer is empty.
    ///
    /// # Safety
    /// `buf..buf+cap` must stay writable, and unused by anyone else, until the request
    /// completes.
    ///
    /// # Errors
    /// As [`irecv`](Self::irecv).
    pub unsafe fn irecv_ptr(
        &mut self,
        src: u32,
        tag: u32,
        buf: *mut u8,
        cap: usize,
    ) -> Result<Request> {
        self.start_recv(src, tag, Buf::Raw(buf, cap), cap)
    }

    /// Zero-copy-mode non-blocking send: synchronous, it completes once a receive
    /// matched it; a long message is deposited straight into an rx-mapped receive
    /// buffer.
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub fn issend(&mut self, dest: u32, tag: u32, data: Vec<u8>) -> Result<Request> {
        self.start_send(dest, tag, Buf::Owned(data), true)
    }

    /// Full-postal blocking send: returns once `data` may be reused.
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub fn send(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<()> {
        if data.len() <= EAGER_MAX && self.send_now(dest, tag, data)? {
            return Ok(());
        }
        self.send_slow(dest, tag, data)
    }

    /// [`send`](Self::send) through a request: kept out of line, so that the eager
    /// path above stays a small function.
    #[cold]
    #[inline(never)]
    pub(crate) fn send_slow(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<()> {
        let v = self.copy_in(data);
        let r = self.isend(dest, tag, v)?;
        self.spare = self.finish_blocking(r)?.1;
        Ok(())
    }

    /// The eager path of a blocking full-postal send without a request: when nothing
    /// is queued towards `dest` (order) and its ring has room (back-pressure), the
    /// slot is written at once and the send is complete. Whether it was.
    #[inline(always)]
    pub(crate) fn send_now(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<bool> {
        let d = self.check_dest(dest, tag)?;
        // A ring without room, or a credit word the general path will find bad.
        if !self.peers[d].out.is_empty() || !matches!(self.ring_room(d), Ok(true)) {
            return Ok(false);
        }
        let mut b = Body::new(Kind::Eager, 0, data.len() as u8, tag);
        b.set_bytes(data);
        self.peers[d].next_seq += 1;
        self.publish_bytes(d, b.first_words(1 + data.len().div_ceil(8)), false)?;
        Ok(true)
    }

    /// The eager path of a blocking synchronous send, as [`send_now`](Self::send_now)
    /// but waiting for the acknowledgement: it polls the ack word of the slot `dest`
    /// publishes here next (where it usually lands, in the line of `dest`'s next
    /// message) a while, then leaves the wait to a request of the general path.
    /// Whether it sent.
    #[inline(always)]
    pub(crate) fn ssend_now(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<bool> {
        let d = self.check_dest(dest, tag)?;
        // A ring without room, or a credit word the general path will find bad.
        if !self.peers[d].out.is_empty() || !matches!(self.ring_room(d), Ok(true)) {
            return Ok(false);
        }
        let mut b = Body::new(Kind::Eager, F_SYNC, data.len() as u8, tag);
        b.set_bytes(data);
        let cookie = self.peers[d].next_seq;
        self.peers[d].next_seq += 1;
        self.publish_bytes(d, b.first_words(1 + data.len().div_ceil(8)), false)?;
        for _ in 0..self.fast_polls {
            let seq = self.peers[d].recvd + 1;
            let off = self.lay.slot(d, seq);
            // A cookie here is an acknowledgement of this message: cookies are
            // never reused, so an older word never holds it.
            if self.word(off + ACK_WORD) == cookie {
                return Ok(true);
            }
            if self.word(off) == seq {
                break; // a slot to read first: the general path does
            }
            std::hint::spin_loop();
        }
        self.await_ack(d, cookie, data.len(), tag)?;
        Ok(true)
    }

    /// The rest of [`ssend_now`](Self::ssend_now)'s wait, through a request of the
    /// general path (out of line: the eager path stays small).
    #[cold]
    #[inline(never)]
    pub(crate) fn await_ack(&mut self, d: usize, cookie: u64, len: usize, tag: u32) -> Result<()> {
        let r = self.alloc(Req {
            op: Op::Send,
            buf: Buf::Owned(Vec::new()),
            len,
            tag,
            done: None,
        });
        let i = (r.0 & 0xffff_ffff) as usize;
        self.peers[d].awaiting.insert(cookie, i, true);
        self.finish_blocking(r)?;
        Ok(())
    }

    /// Zero-copy-mode blocking send: returns once a receive matched it and the data
    /// is delivered.
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub fn ssend(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<()> {
        if data.len() <= EAGER_MAX && self.ssend_now(dest, tag, data)? {
            return Ok(());
        }
        self.ssend_slow(dest, tag, data)
    }

    /// [`ssend`](Self::ssend) through a request, out of line as
    /// [`send_slow`](Self::send_slow).
    #[cold]
    #[inline(never)]
    pub(crate) fn ssend_slow(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<()> {
        let v = self.copy_in(data);
        let r = self.issend(dest, tag, v)?;
        self.spare = self.finish_blocking(r)?.1;
        Ok(())
    }

    pub(crate) fn copy_in(&mut self, data: &[u8]) -> Vec<u8> {
        let mut v = std::mem::take(&mut self.spare);
        v.clear();
        v.extend_from_slice(data);
        v
    }

    pub(crate) fn finish_blocking(&mut self, r: Request) -> Result<(Status, Vec<u8>)> {
        let c = self.wait(r);
        match c.result {
            Ok(s) => Ok((s, c.buf)),
            Err(e) => {
                self.spare = c.buf;
                Err(e)
            }
        }
    }

    /// Completes send request `i` (its status names this node, its tag and length).
    pub(crate) fn complete_send(&mut self, i: usize) {
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
