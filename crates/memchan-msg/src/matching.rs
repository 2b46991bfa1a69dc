//! Incoming slots: matching a message against the posted receives and the unexpected
//! store (MPI's non-overtaking order), and `handle`, the dispatcher of every
//! slot kind, each validated before use (the sender is hostile until proven otherwise).

use super::*;

impl<'c> Comm<'c> {
    pub(crate) fn find_unexp(&self, src: u32, tag: u32) -> Option<Status> {
        self.unexp
            .iter()
            .find(|u| {
                u.claimed.is_none()
                    && (src == ANY_SOURCE || u.src == src)
                    && (tag == ANY_TAG || u.tag == tag)
            })
            .map(|u| Status {
                source: u.src,
                tag: u.tag,
                len: u.len,
            })
    }

    /// The first posted receive that (`src`, `tag`) matches.
    pub(crate) fn match_posted(&self, src: u32, tag: u32) -> Option<(usize, usize)> {
        self.posted
            .iter()
            .enumerate()
            .find_map(|(k, &i)| match self.reqs[i].as_ref() {
                Some(Req {
                    op: Op::Recv { src: s, tag: t },
                    ..
                }) if (*s == ANY_SOURCE || *s == src) && (*t == ANY_TAG || *t == tag) => {
                    Some((k, i))
                }
                _ => None,
            })
    }

    pub(crate) fn handle(&mut self, p: usize, seq: u64, b: &Body) -> Result<Handled> {
        let kind = b.kind().ok_or_else(|| protocol(p, "unknown slot kind"))?;
        let src = p as u32;
        let tag = b.tag();
        match kind {
            Kind::Eager | Kind::Hdr | Kind::Rts => {
                if tag > TAG_UB {
                    return Err(protocol(p, "tag above TAG_UB"));
                }
                let len = match kind {
                    Kind::Eager => b.ilen(),
                    _ => usize::try_from(b.p(0)).unwrap_or(usize::MAX),
                };
                if (kind == Kind::Eager && len > EAGER_MAX)
                    || (kind != Kind::Eager && (len <= EAGER_MAX || len > MAX_MESSAGE))
                {
                    return Err(protocol(p, "bad message length"));
                }
                let m = self.match_posted(src, tag);
                let fits =
                    m.is_some_and(|(_, i)| self.reqs[i].as_ref().is_some_and(|r| len <= r.len));
                let store = if kind == Kind::Rts { SLOT } else { len + SLOT };
                if !fits && self.unexp_bytes + store > self.cfg.unexpected_limit {
                    return Ok(Handled::Stall);
                }
                let sync = (b.flags() & F_SYNC != 0).then_some(seq);
                if let Some((k, i)) = m {
                    if fits {
                        self.posted.remove(k);
                        match kind {
                            Kind::Eager => {
                                self.write_req(i, 0, &b.bytes()[..len])?;
                                self.complete(
                                    i,
                                    Ok(Status {
                                        source: src,
                                        tag,
                                        len,
                                    }),
                                );
                                if let Some(c) = sync {
                                    self.ack(p, c)?;
                                }
                            }
                            Kind::Hdr => {
                                self.peers[p].inflight.insert(
                                    seq,
                                    InFlight {
                                        sink: Sink::Req(i),
                                        len,
                                        got: 0,
                                        tag,
                                    },
                                );
                            }
                            _ => self.clear_to_send(p, seq, i, len, tag)?,
                        }
                        return Ok(Handled::Consumed);
                    }
                    let cap = self.reqs[i].as_ref().map_or(0, |r| r.len);
                    self.posted.remove(k);
                    self.complete(
                        i,
                        Err(MsgError::Truncated {
                            node: src,
                            tag,
                            len,
                            capacity: cap,
                        }),
                    );
                }
                let uid = self.next_uid;
                self.next_uid += 1;
                self.unexp_bytes += store;
                let (data, complete, ukind) = match kind {
                    Kind::Eager => (b.bytes()[..len].to_vec(), true, UKind::Data),
                    Kind::Hdr => (vec![0; len], false, UKind::Data),
                    _ => (Vec::new(), true, UKind::Rts(seq)),
                };
                if kind == Kind::Hdr {
                    self.peers[p].inflight.insert(
                        seq,
                        InFlight {
                            sink: Sink::Unexp(uid),
                            len,
                            got: 0,
                            tag,
                        },
                    );
                }
                self.unexp.push_back(Unexp {
                    uid,
                    src,
                    tag,
                    len,
                    data,
                    complete,
                    kind: ukind,
                    sync,
                    claimed: None,
                });
            }
            Kind::Frag => {
                let cookie = b.p(0);
                let n = usize::try_from(b.p(1)).unwrap_or(usize::MAX);
                let at = self.lay.chunk_at(p, self.peers[p].chunks_recvd);
                let f = self.peers[p]
                    .inflight
                    .get(&cookie)
                    .ok_or_else(|| protocol(p, "fragment of no message"))?;
                if n == 0 || n > self.lay.chunk || n > f.len - f.got {
                    return Err(protocol(p, "bad fragment length"));
                }
                let (sink, got, len, tag) = (f.sink, f.got, f.len, f.tag);
                match sink {
                    Sink::Req(i) => match self.reqs[i].as_mut().and_then(|r| r.buf.bytes_mut()) {
                        Some(v) => self.rx.read(at, &mut v[got..got + n])?,
                        _ => {
                            let mut tmp = vec![0; n];
                            self.rx.read(at, &mut tmp)?;
                            self.write_req(i, got, &tmp)?;
                        }
                    },
                    Sink::Unexp(uid) => {
                        if let Some(u) = self.unexp.iter_mut().find(|u| u.uid == uid) {
                            self.rx.read(at, &mut u.data[got..got + n])?;
                        }
                    }
                }
                let peer = &mut self.peers[p];
                peer.chunks_recvd += 1;
                let used = peer.chunks_recvd;
                peer.tx
                    .as_ref()
                    .expect("live peer has a tx mapping")
                    .write_u64(self.lay.credit(self.me) + 8, used)?;
                if got + n < len {
                    if let Some(f) = peer.inflight.get_mut(&cookie) {
                        f.got += n;
                    }
                    return Ok(Handled::Consumed);
                }
                peer.inflight.remove(&cookie);
                match sink {
                    Sink::Req(i) => self.complete(
                        i,
                        Ok(Status {
                            source: src,
                            tag,
                            len,
                        }),
                    ),
                    Sink::Unexp(uid) => {
                        if let Some(k) = self.unexp.iter().position(|u| u.uid == uid) {
                            self.unexp[k].complete = true;
                            if let Some(i) = self.unexp[k].claimed {
                                let u = self.unexp.remove(k).expect("found");
                                self.unexp_bytes -= u.len + SLOT;
                                self.deliver_whole(i, &u)?;
                            }
                        }
                    }
                }
            }
            Kind::Fin => {
                let cookie = b.p(0);
                let f = self.peers[p]
                    .inflight
                    .remove(&cookie)
                    .ok_or_else(|| protocol(p, "finish of no message"))?;
                if b.p(1) != f.len as u64 {
                    return Err(protocol(p, "finish length differs"));
                }
                if let Sink::Req(i) = f.sink {
                    self.complete(
                        i,
                        Ok(Status {
                            source: src,
                            tag: f.tag,
                            len: f.len,
                        }),
                    );
                }
            }
            Kind::Ack => {
                let i = self.peers[p]
                    .awaiting
                    .remove(b.p(0), true)
                    .ok_or_else(|| protocol(p, "acknowledge of no message"))?;
                self.complete_send(i);
            }
            Kind::Cts => {
                let cookie = b.p(0);
                if !self.peers[p].awaiting.contains(cookie) || self.peers[p].cts.is_some() {
                    return Err(protocol(p, "clear-to-send of no request"));
                }
                match b.p(1) {
                    0 => self.start_stream(p, cookie, Target::Bulk),
                    1 => {
                        let name_len = usize::try_from(b.p(3)).unwrap_or(usize::MAX);
                        let offset = usize::try_from(b.p(2)).unwrap_or(usize::MAX);
                        if name_len == 0 || name_len > NAME_MAX {
                            return Err(protocol(p, "bad segment name length"));
                        }
                        let mut name = Vec::with_capacity(name_len);
                        name.extend_from_slice(&b.p(4).to_le_bytes());
                        name.truncate(name_len);
                        self.peers[p].cts = Some(PendingCts {
                            cookie,
                            offset,
                            name,
                            name_len,
                        });
                        self.finish_cts(p)?;
                    }
                    _ => return Err(protocol(p, "bad clear-to-send target")),
                }
            }
            Kind::Name => {
                let Some(c) = self.peers[p].cts.as_mut() else {
                    return Err(protocol(p, "name continuation without a clear-to-send"));
                };
                let want = (c.name_len - c.name.len()).min(EAGER_MAX);
                if b.ilen() != want {
                    return Err(protocol(p, "bad name continuation length"));
                }
                c.name.extend_from_slice(&b.bytes()[..want]);
                self.finish_cts(p)?;
            }
        }
        Ok(Handled::Consumed)
    }
}
