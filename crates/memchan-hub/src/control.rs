//! The hub's control requests (`Kind::Request`, `proto::Op`): segments (open, free,
//! map and unmap rx, checks), groups (create, look up, check), leave, ack and barrier
//! arrivals. Each is checked against the asker's rights and answered at once, or,
//! for an ack or a barrier, once `sync.rs` finds it complete.

use crate::state::{seg_info, BarrierWait, PendingAck, Port, Seg, Shared, Sink, State, HUB_ORIGIN};
use crate::sync::count_arrival;
use memchan_core::membership::Cause;
use memchan_core::{validate, Error, GroupId, NodeId, NodeSet, PageSize, MAX_GROUPS};
use memchan_link::proto::reply::{Refusal, Table};
use memchan_link::proto::{self, code, Op};
use memchan_link::wire::{Kind, Put};
use std::time::Instant;

impl Shared {
    pub(crate) fn request(&self, st: &mut State, n: NodeId, payload: &[u8]) {
        let (req, op) = match Op::get(payload) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(node = n.0, error = %e, "malformed request dropped");
                return;
            }
        };
        let Some(Some(me)) = st.ports.get(n.index()) else {
            return;
        };
        let (uid, gid, inc) = (me.uid, me.gid, me.inc);
        match op {
            Op::SegOpen {
                create,
                size,
                mode,
                flags,
                name,
            } => {
                // The node checked these too; the hub never relies on it.
                let checked = validate::stored_segment_name(&name, flags & 1 != 0).and_then(|()| {
                    if create {
                        validate::segment_size(size)?;
                        validate::mode(mode)?;
                    }
                    Ok(())
                });
                if let Err(e) = checked {
                    return st.refuse(n, req, &e);
                }
                let page = st.page.unwrap_or(PageSize::K4);
                let found = st
                    .segs
                    .iter()
                    .position(|s| s.as_ref().is_some_and(|s| s.name == name));
                if let Some(i) = found {
                    let s = st.segs[i].as_ref().expect("found");
                    let want = page.round_up(size as usize);
                    if create && size != 0 && want != s.size {
                        let r = Refusal::SizeMismatch {
                            segment: name,
                            existing: s.size as u64,
                            requested: want as u64,
                        };
                        return st.refuse_with(n, req, &r);
                    }
                    let info = seg_info(i, s);
                    return st.respond(n, req, code::OK, &info.put());
                }
                if !create {
                    return st.refuse_with(n, req, &Refusal::UnknownSegment(name));
                }
                let i = match st.segs.iter().position(|s| s.is_none()) {
                    Some(i) => i,
                    None if st.segs.len() < validate::MAX_SEGMENTS => {
                        st.segs.push(None);
                        st.segs.len() - 1
                    }
                    None => return st.refuse_with(n, req, &Refusal::TableFull(Table::Segment)),
                };
                let size = page.round_up(size as usize);
                let gen = st.next_gen;
                st.next_gen += 1;
                st.segs[i] = Some(Seg {
                    name,
                    gen,
                    size,
                    uid,
                    gid,
                    mode,
                    rx: NodeSet::EMPTY,
                    shadow: (flags & 1 != 0).then(|| vec![0; size]),
                });
                let info = seg_info(i, st.segs[i].as_ref().expect("new"));
                self.replicate(st);
                st.respond(n, req, code::OK, &info.put());
            }
            Op::SegFree { seg, gen } => match st.segs.get(seg as usize) {
                Some(Some(s)) if s.gen == gen => {
                    if uid != 0 && uid != s.uid {
                        let e = Error::PermissionDenied {
                            segment: s.name.clone(),
                            op: "free",
                            uid: s.uid,
                            gid: s.gid,
                            mode: s.mode,
                            caller_uid: uid,
                        };
                        return st.refuse(n, req, &e);
                    }
                    st.segs[seg as usize] = None;
                    self.replicate(st);
                    st.respond(n, req, code::OK, &[]);
                }
                _ => st.refuse_with(n, req, &Refusal::SegmentFreed(String::new())),
            },
            Op::MapRx { seg, gen } => match st.segs.get_mut(seg as usize) {
                Some(Some(s)) if s.gen == gen => {
                    // Read permission, from the uid and gid the node joined with.
                    let perm = memchan_core::perm::check(
                        (uid, gid),
                        (s.uid, s.gid, s.mode),
                        4,
                        &s.name,
                        "map_rx",
                    );
                    if let Err(e) = perm {
                        return st.refuse(n, req, &e);
                    }
                    s.rx.insert(n);
                    if let Some(shadow) = s.shadow.clone() {
                        let head = proto::deliver_head(HUB_ORIGIN, seg, gen, 0, 0);
                        if let Some(ds) = st.send(n, Kind::Deliver, &[&head, &shadow]) {
                            if let Some(Some(p)) = st.ports.get_mut(n.index()) {
                                p.owed.push_back((ds, HUB_ORIGIN, 0));
                            }
                        }
                    }
                    self.replicate(st);
                    st.respond(n, req, code::OK, &[]);
                }
                _ => st.refuse_with(n, req, &Refusal::SegmentFreed(String::new())),
            },
            Op::UnmapRx { seg, gen } => {
                if let Some(Some(s)) = st.segs.get_mut(seg as usize) {
                    if s.gen == gen {
                        s.rx.remove(n);
                    }
                }
                self.replicate(st);
                st.respond(n, req, code::OK, &[]);
            }
            Op::GroupCreate { name, members } => {
                let list: Vec<NodeId> = members.iter().collect();
                let checked = validate::group_name(&name)
                    .and_then(|()| validate::group_members(&list, &st.members()));
                if let Err(e) = checked {
                    return st.refuse(n, req, &e);
                }
                if let Some(i) = st.groups.iter().position(|g| g.0 == name) {
                    if st.groups[i].1 != members {
                        let r = Refusal::Invalid {
                            what: "request".into(),
                            why: format!("group `{name}` exists with other members"),
                        };
                        return st.refuse_with(n, req, &r);
                    }
                    return st.respond(n, req, code::OK, &(i as u16).to_le_bytes());
                }
                if st.groups.len() >= MAX_GROUPS {
                    return st.refuse_with(n, req, &Refusal::TableFull(Table::Group));
                }
                st.groups.push((name, members));
                self.replicate(st);
                let id = (st.groups.len() - 1) as u16;
                st.respond(n, req, code::OK, &id.to_le_bytes());
            }
            Op::GroupLookup { name } => match st.groups.iter().position(|g| g.0 == name) {
                Some(i) => {
                    let body = proto::put_set(Put::new().u16(i as u16), &st.groups[i].1).0;
                    st.respond(n, req, code::OK, &body);
                }
                None => st.refuse_with(n, req, &Refusal::UnknownGroup(name)),
            },
            Op::Ack => {
                let mut waits = Vec::new();
                for (i, p) in st.ports.iter().enumerate() {
                    if let Some(Port {
                        inc,
                        sink: Sink::Remote(l),
                        ..
                    }) = p
                    {
                        let target = l.last_sent();
                        if l.peer_released() < target {
                            waits.push((NodeId(i as u16), *inc, target));
                            l.request_release(target);
                        }
                    }
                }
                st.acks.push(PendingAck {
                    origin: n,
                    inc,
                    req,
                    waits,
                    missing: Vec::new(),
                    released: 0,
                    moved: Instant::now(),
                });
                self.check_acks(st);
            }
            Op::Barrier { group, number } => {
                if group != u16::MAX {
                    let g = GroupId(group);
                    match st.groups.get(g.index()) {
                        None => return st.refuse(n, req, &validate::unknown_group(g)),
                        Some((_, m)) if !m.contains(n) => {
                            let e = Error::Invalid {
                                what: "group barrier",
                                why: format!("{n} is not a member of group #{group}"),
                            };
                            return st.refuse(n, req, &e);
                        }
                        Some(_) => {}
                    }
                }
                let target = count_arrival(st, n, group, number);
                st.barrier_waits.push(BarrierWait {
                    node: n,
                    inc,
                    req,
                    scope: group,
                    target,
                    missing: NodeSet::EMPTY,
                    handled: 0,
                    moved: Instant::now(),
                });
                self.check_barriers(st);
            }
            Op::GroupCheck { group } => {
                if st.groups.get(usize::from(group)).is_some() {
                    st.respond(n, req, code::OK, &[]);
                } else {
                    st.refuse(n, req, &validate::unknown_group(GroupId(group)));
                }
            }
            Op::DirectListen { port } => {
                let way = me.addr.parse::<std::net::SocketAddr>().ok().map(|mut a| {
                    a.set_port(port);
                    a.to_string()
                });
                match (way, &mut st.ports[n.index()]) {
                    (Some(w), Some(p)) if matches!(p.sink, Sink::Remote(_)) && port != 0 => {
                        p.direct = Some(w);
                        st.respond(n, req, code::OK, &[]);
                    }
                    _ => {
                        let e = Error::Invalid {
                            what: "direct link",
                            why: "only a node of another host may take direct links".into(),
                        };
                        st.refuse(n, req, &e);
                    }
                }
            }
            Op::DirectOpen { to } => self.open_direct(st, n, req, NodeId(to)),
            Op::Leave => {
                st.respond(n, req, code::OK, &[]);
                // A node that leaves is no destination any more: the acks of others
                // stop waiting for its releases, and do not name it as gone before
                // releasing (`AckIncomplete` is for a node that failed). A leaver
                // that was asked for its releases as it left made such an ack fail.
                for a in &mut st.acks {
                    a.waits.retain(|&(d, i, _)| (d, i) != (n, inc));
                }
                self.remove(st, n, inc, Cause::Left, "left");
            }
        }
    }
}

impl Shared {
    /// `n` asks for a direct link to `to`: both must be nodes of other hosts' links
    /// (`to` listening for them); `to` is told to expect `n` under a fresh pair
    /// secret, and `n` where to connect. Anything else is refused, and `n` keeps
    /// writing to `to` through the hub.
    fn open_direct(&self, st: &mut State, n: NodeId, req: u32, to: NodeId) {
        let refuse = |st: &State, why: String| {
            let e = Error::Invalid {
                what: "direct link",
                why,
            };
            st.refuse(n, req, &e);
        };
        let (uid, gid, inc) = match st.ports.get(n.index()) {
            Some(Some(p)) if matches!(p.sink, Sink::Remote(_)) && to != n => (p.uid, p.gid, p.inc),
            _ => return refuse(st, "only a node of another host may open one".into()),
        };
        let (addr, to_inc, to_uid, to_gid) = match st.ports.get(to.index()) {
            Some(Some(Port {
                sink: Sink::Remote(_),
                direct: Some(a),
                inc,
                uid,
                gid,
                ..
            })) => (a.clone(), *inc, *uid, *gid),
            Some(Some(_)) => return refuse(st, format!("{to} takes no direct links")),
            _ => return st.refuse_with(n, req, &Refusal::UnknownNode(to)),
        };
        let secret = match (
            memchan_link::handshake::nonce(),
            memchan_link::handshake::nonce(),
        ) {
            (Ok(a), Ok(b)) => {
                let mut s = [0u8; proto::DIRECT_SECRET];
                s[..16].copy_from_slice(&a);
                s[16..].copy_from_slice(&b);
                s
            }
            (Err(e), _) | (_, Err(e)) => return st.refuse(n, req, &e),
        };
        let expect = proto::DirectExpect {
            from: n.0,
            inc,
            uid,
            gid,
            secret,
        };
        st.send(to, Kind::DirectExpect, &[&expect.put()]);
        let way = proto::DirectWay {
            addr,
            inc: to_inc,
            uid: to_uid,
            gid: to_gid,
            secret,
        };
        st.respond(n, req, code::OK, &way.put());
    }
}
