//! Payloads of the frames the hub and its nodes exchange (little-endian, every read
//! bounds-checked by [`Get`]); the hub's coded answers are [`reply`], remote
//! accesses' payloads [`rma`], deposits' [`deposit`], the clock's [`clock`].

use crate::wire::{Get, Put, WireError};
use memchan_core::status::LinkCounters;
use memchan_core::{Dest, GroupId, NodeId, NodeSet};

pub mod clock;
pub mod deposit;
pub mod reply;
pub mod rma;

type R<T> = Result<T, WireError>;

/// Role of a connection.
pub const ROLE_NODE: u8 = 0;
/// A status query (`memchan status`): answered and closed.
pub const ROLE_OBSERVER: u8 = 1;
/// A standby hub asking the active one for its tables (dual rail): answered and closed.
pub const ROLE_MIRROR: u8 = 2;
/// A node moving its link to a standby hub (dual rail): a `RailResume` frame follows.
pub const ROLE_RESUME: u8 = 3;

/// A join request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    /// Echo of the hub's Hello nonce (freshness).
    pub hub_nonce: [u8; 16],
    /// The node's nonce (link key).
    pub node_nonce: [u8; 16],
    /// [`ROLE_NODE`], [`ROLE_OBSERVER`], [`ROLE_MIRROR`] or [`ROLE_RESUME`].
    pub role: u8,
    /// Wanted page size (0: accept the cluster's).
    pub page_size: u32,
    /// Process id, uid and gid on the node's host.
    pub pid: u32,
    /// Effective uid.
    pub uid: u32,
    /// Effective gid.
    pub gid: u32,
    /// Cluster name.
    pub cluster: String,
    /// Host name.
    pub host: String,
    /// The node's host domain ([`DomainId`]; [`NO_DOMAIN`]: none, every write
    /// through the hub).
    pub domain: DomainId,
}

/// Which host domain a node is in: a digest of the shared memory it can reach (the
/// kernel's boot, the `/dev/shm` it mounts) and its domain label. Equal for two
/// nodes that can store into each other's receive memory; the hub tells each node
/// which members share its domain, so that no node looks in `/dev/shm` for a node
/// of another host.
pub type DomainId = [u8; 16];

/// The [`DomainId`] of a node without a host domain.
pub const NO_DOMAIN: DomainId = [0; 16];

impl Join {
    /// The join of a connection that is not a node (`role`: an observer's status
    /// query, a standby's mirror): no cluster, no page size, no ids but the pid;
    /// `handshake::connect` fills the nonces.
    pub fn service(role: u8) -> Join {
        Join {
            hub_nonce: [0; 16],
            node_nonce: [0; 16],
            role,
            page_size: 0,
            pid: std::process::id(),
            uid: 0,
            gid: 0,
            cluster: String::new(),
            host: String::new(),
            domain: NO_DOMAIN,
        }
    }

    /// Encodes.
    pub fn put(&self) -> Vec<u8> {
        Put::new()
            .bytes(&self.hub_nonce)
            .bytes(&self.node_nonce)
            .u8(self.role)
            .u32(self.page_size)
            .u32(self.pid)
            .u32(self.uid)
            .u32(self.gid)
            .str(&self.cluster)
            .str(&self.host)
            .bytes(&self.domain)
            .0
    }
    /// Decodes.
    pub fn get(b: &[u8]) -> R<Join> {
        let mut g = Get::new(b, "join");
        Ok(Join {
            hub_nonce: g.array()?,
            node_nonce: g.array()?,
            role: g.u8()?,
            page_size: g.u32()?,
            pid: g.u32()?,
            uid: g.u32()?,
            gid: g.u32()?,
            cluster: g.str()?,
            host: g.str()?,
            domain: g.array()?,
        })
    }
}

/// The hub's acceptance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Welcome {
    /// Assigned node id.
    pub node: NodeId,
    /// Assigned incarnation.
    pub incarnation: u64,
    /// Epoch after the join.
    pub epoch: u64,
    /// The cluster's page size.
    pub page_size: u32,
    /// Heartbeat period and failure timeout the hub uses, in ms.
    pub heartbeat_ms: u32,
    /// Failure timeout in ms.
    pub timeout_ms: u32,
    /// Members after the join.
    pub members: NodeSet,
    /// The cluster's instance: a random number its hub drew (kept by a standby that
    /// takes over), which names the receive memory of its host domains so that no two
    /// clusters of one name on a host ever share an object.
    pub instance: u64,
    /// The members (the joiner aside) in the joiner's host domain: the nodes whose
    /// receive memory it may find in its `/dev/shm`. Empty without a domain.
    pub neighbours: NodeSet,
}

/// Encodes a node set as 32 bytes.
pub fn put_set(p: Put, s: &NodeSet) -> Put {
    let mut b = [0u8; 32];
    for n in s.iter() {
        b[n.index() / 8] |= 1 << (n.index() % 8);
    }
    p.bytes(&b)
}

/// Decodes a node set.
pub fn get_set(g: &mut Get<'_>) -> R<NodeSet> {
    let b: [u8; 32] = g.array()?;
    let mut s = NodeSet::EMPTY;
    for i in 0..256usize {
        if b[i / 8] & (1 << (i % 8)) != 0 {
            s.insert(NodeId(i as u16));
        }
    }
    Ok(s)
}

impl Welcome {
    /// Encodes.
    pub fn put(&self) -> Vec<u8> {
        let p = Put::new()
            .u16(self.node.0)
            .u64(self.incarnation)
            .u64(self.epoch)
            .u32(self.page_size)
            .u32(self.heartbeat_ms)
            .u32(self.timeout_ms);
        let p = put_set(p, &self.members).u64(self.instance);
        put_set(p, &self.neighbours).0
    }
    /// Decodes.
    pub fn get(b: &[u8]) -> R<Welcome> {
        let mut g = Get::new(b, "welcome");
        Ok(Welcome {
            node: NodeId(g.u16()?),
            incarnation: g.u64()?,
            epoch: g.u64()?,
            page_size: g.u32()?,
            heartbeat_ms: g.u32()?,
            timeout_ms: g.u32()?,
            members: get_set(&mut g)?,
            instance: g.u64()?,
            neighbours: get_set(&mut g)?,
        })
    }
}

/// Bytes before the data in a Data payload.
pub const DATA_HEAD: usize = 20;
/// Bytes before the data in a Deliver payload.
pub const DELIVER_HEAD: usize = 19;
/// Data flag: the sender's own rx mapping gets a copy in the global order.
pub const FLAG_LOCAL_COPY: u8 = 1;
/// Data and Deliver flag: the packet is a record (`write_record` with the published
/// word just before the body): its first 8 bytes are the word, at `offset` (8-aligned),
/// the rest the body; a receiver applies the body, then the word, so that one frame
/// carries what took two and a reader that sees the word sees the body.
pub const FLAG_RECORD: u8 = 2;
/// Data and Deliver flag: the packet wakes no waiter (`write_no_notify`): applied as
/// any, the destination's notify count left as it was. Without it, two message-layer
/// nodes that tell each other they sleep woke each other for ever across hosts.
pub const FLAG_QUIET: u8 = 4;

/// Whether a packet flagged [`FLAG_RECORD`] is well formed: an aligned word and a
/// body after it. Anything else is refused whole.
pub fn record_ok(offset: u64, data: &[u8]) -> bool {
    offset.is_multiple_of(8) && data.len() > 8 && offset.checked_add(data.len() as u64).is_some()
}

/// Encodes a Data header (the data follows as a second part).
pub fn data_head(seg: u32, gen: u32, offset: u64, dest: Dest, flags: u8) -> [u8; DATA_HEAD] {
    let (kind, id) = match dest {
        Dest::Node(n) => (0u8, n.0),
        Dest::Group(g) => (1, g.0),
        Dest::Broadcast => (2, 0),
    };
    let mut h = [0u8; DATA_HEAD];
    h[0..4].copy_from_slice(&seg.to_le_bytes());
    h[4..8].copy_from_slice(&gen.to_le_bytes());
    h[8..16].copy_from_slice(&offset.to_le_bytes());
    h[16] = kind;
    h[17..19].copy_from_slice(&id.to_le_bytes());
    h[19] = flags;
    h
}

/// A decoded Data payload.
pub struct Data<'a> {
    /// Segment id and generation.
    pub seg: u32,
    /// Segment generation.
    pub gen: u32,
    /// Offset in the segment.
    pub offset: u64,
    /// Destination.
    pub dest: Dest,
    /// Flags.
    pub flags: u8,
    /// The bytes.
    pub data: &'a [u8],
}

/// Decodes a Data payload.
pub fn get_data(b: &[u8]) -> R<Data<'_>> {
    if b.len() < DATA_HEAD {
        return Err(WireError::Malformed("data packet"));
    }
    get_data_split(&b[..DATA_HEAD], &b[DATA_HEAD..])
}

/// Decodes a Data payload given as its header and its bytes (no copy to join them).
pub fn get_data_split<'a>(head: &[u8], data: &'a [u8]) -> R<Data<'a>> {
    let mut g = Get::new(head, "data packet");
    let seg = g.u32()?;
    let gen = g.u32()?;
    let offset = g.u64()?;
    let kind = g.u8()?;
    let id = g.u16()?;
    let flags = g.u8()?;
    let dest = match kind {
        0 => Dest::Node(NodeId(id)),
        1 => Dest::Group(GroupId(id)),
        2 => Dest::Broadcast,
        _ => return Err(WireError::Malformed("data destination")),
    };
    Ok(Data {
        seg,
        gen,
        offset,
        dest,
        flags,
        data,
    })
}

/// Encodes a Deliver header (`flags`: [`FLAG_RECORD`], [`FLAG_QUIET`]).
pub fn deliver_head(origin: u16, seg: u32, gen: u32, offset: u64, flags: u8) -> [u8; DELIVER_HEAD] {
    let mut h = [0u8; DELIVER_HEAD];
    h[0..2].copy_from_slice(&origin.to_le_bytes());
    h[2..6].copy_from_slice(&seg.to_le_bytes());
    h[6..10].copy_from_slice(&gen.to_le_bytes());
    h[10..18].copy_from_slice(&offset.to_le_bytes());
    h[18] = flags;
    h
}

/// A decoded Deliver payload.
pub struct Deliver<'a> {
    /// The sending node (or the hub).
    pub origin: u16,
    /// Segment id.
    pub seg: u32,
    /// Segment generation.
    pub gen: u32,
    /// Offset in the segment.
    pub offset: u64,
    /// Flags ([`FLAG_RECORD`], [`FLAG_QUIET`]).
    pub flags: u8,
    /// The bytes.
    pub data: &'a [u8],
}

/// Decodes a Deliver payload.
pub fn get_deliver(b: &[u8]) -> R<Deliver<'_>> {
    let mut g = Get::new(b, "deliver packet");
    Ok(Deliver {
        origin: g.u16()?,
        seg: g.u32()?,
        gen: g.u32()?,
        offset: g.u64()?,
        flags: g.u8()?,
        data: g.rest(),
    })
}

/// Request operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Find or create a segment.
    SegOpen {
        /// Create if missing.
        create: bool,
        /// Size in bytes (create) or 0.
        size: u64,
        /// Mode bits.
        mode: u32,
        /// 1: lock segment.
        flags: u8,
        /// Name.
        name: String,
    },
    /// Free a segment.
    SegFree {
        /// Id.
        seg: u32,
        /// Generation.
        gen: u32,
    },
    /// Start receiving a segment.
    MapRx {
        /// Id.
        seg: u32,
        /// Generation.
        gen: u32,
    },
    /// Stop receiving a segment.
    UnmapRx {
        /// Id.
        seg: u32,
        /// Generation.
        gen: u32,
    },
    /// Create (or find) a multicast group.
    GroupCreate {
        /// Name.
        name: String,
        /// Members.
        members: NodeSet,
    },
    /// Look a group up.
    GroupLookup {
        /// Name.
        name: String,
    },
    /// Answer once every earlier write of this node is released everywhere.
    Ack,
    /// Barrier over a group (`u16::MAX`: the cluster).
    Barrier {
        /// Group id or `u16::MAX`.
        group: u16,
        /// This arrival's number: the node's barriers in the scope since it joined,
        /// this one included (1, 2, ...). The hub counts an arrival once by it, so
        /// one asked again (after a rail switch) is not counted twice, and one a
        /// standby's copy missed is counted when a later one comes.
        number: u64,
    },
    /// Leave the cluster.
    Leave,
    /// Whether a group exists (`UNKNOWN_GROUP` if not).
    GroupCheck {
        /// Group id.
        group: u16,
    },
    /// This node takes direct links from other hosts' nodes on `port` (at the
    /// address the hub sees it from).
    DirectListen {
        /// TCP port.
        port: u16,
    },
    /// A direct link to node `to`: the hub tells `to` to expect this node (a
    /// `DirectExpect`) and answers with where to connect ([`DirectWay`]).
    DirectOpen {
        /// The destination.
        to: u16,
    },
}

impl Op {
    /// Encodes with a request id.
    pub fn put(&self, id: u32) -> Vec<u8> {
        let p = Put::new().u32(id);
        match self {
            Op::SegOpen {
                create,
                size,
                mode,
                flags,
                name,
            } => p
                .u8(1)
                .u8(u8::from(*create))
                .u64(*size)
                .u32(*mode)
                .u8(*flags)
                .str(name),
            Op::SegFree { seg, gen } => p.u8(2).u32(*seg).u32(*gen),
            Op::MapRx { seg, gen } => p.u8(3).u32(*seg).u32(*gen),
            Op::UnmapRx { seg, gen } => p.u8(4).u32(*seg).u32(*gen),
            Op::GroupCreate { name, members } => put_set(p.u8(5).str(name), members),
            Op::GroupLookup { name } => p.u8(6).str(name),
            Op::Ack => p.u8(7),
            Op::Barrier { group, number } => p.u8(8).u16(*group).u64(*number),
            Op::Leave => p.u8(9),
            Op::GroupCheck { group } => p.u8(10).u16(*group),
            Op::DirectListen { port } => p.u8(11).u16(*port),
            Op::DirectOpen { to } => p.u8(12).u16(*to),
        }
        .0
    }

    /// Decodes (id, op).
    pub fn get(b: &[u8]) -> R<(u32, Op)> {
        let mut g = Get::new(b, "request");
        let id = g.u32()?;
        let op = match g.u8()? {
            1 => Op::SegOpen {
                create: g.u8()? != 0,
                size: g.u64()?,
                mode: g.u32()?,
                flags: g.u8()?,
                name: g.str()?,
            },
            2 => Op::SegFree {
                seg: g.u32()?,
                gen: g.u32()?,
            },
            3 => Op::MapRx {
                seg: g.u32()?,
                gen: g.u32()?,
            },
            4 => Op::UnmapRx {
                seg: g.u32()?,
                gen: g.u32()?,
            },
            5 => Op::GroupCreate {
                name: g.str()?,
                members: get_set(&mut g)?,
            },
            6 => Op::GroupLookup { name: g.str()? },
            7 => Op::Ack,
            8 => Op::Barrier {
                group: g.u16()?,
                number: g.u64()?,
            },
            9 => Op::Leave,
            10 => Op::GroupCheck { group: g.u16()? },
            11 => Op::DirectListen { port: g.u16()? },
            12 => Op::DirectOpen { to: g.u16()? },
            _ => return Err(WireError::Malformed("request op")),
        };
        Ok((id, op))
    }
}

/// A direct link's pair secret: both ends derive the link's keys from it (and
/// from the cluster key: `Key::direct`).
pub const DIRECT_SECRET: usize = 32;

/// The hub's answer to [`Op::DirectOpen`]: where the destination listens, its
/// incarnation, the uid and gid it joined with, the pair secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectWay {
    /// `ip:port`.
    pub addr: String,
    /// The destination's incarnation.
    pub inc: u64,
    /// The uid the destination joined with (its writes on the link, which carries
    /// both ways, are checked against it).
    pub uid: u32,
    /// The gid it joined with.
    pub gid: u32,
    /// The pair secret.
    pub secret: [u8; DIRECT_SECRET],
}

impl DirectWay {
    /// Encodes.
    pub fn put(&self) -> Vec<u8> {
        Put::new()
            .str(&self.addr)
            .u64(self.inc)
            .u32(self.uid)
            .u32(self.gid)
            .bytes(&self.secret)
            .0
    }
    /// Decodes.
    pub fn get(b: &[u8]) -> R<DirectWay> {
        let mut g = Get::new(b, "direct way");
        Ok(DirectWay {
            addr: g.str()?,
            inc: g.u64()?,
            uid: g.u32()?,
            gid: g.u32()?,
            secret: g.array()?,
        })
    }
}

/// A `DirectExpect` (hub → node): node `from` (incarnation `inc`, joined as `uid` /
/// `gid`) may open a direct link to this node under `secret`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectExpect {
    /// The node that will connect.
    pub from: u16,
    /// Its incarnation.
    pub inc: u64,
    /// The uid it joined with (its write permission is checked against it).
    pub uid: u32,
    /// The gid it joined with.
    pub gid: u32,
    /// The pair secret.
    pub secret: [u8; DIRECT_SECRET],
}

impl DirectExpect {
    /// Encodes.
    pub fn put(&self) -> Vec<u8> {
        Put::new()
            .u16(self.from)
            .u64(self.inc)
            .u32(self.uid)
            .u32(self.gid)
            .bytes(&self.secret)
            .0
    }
    /// Decodes.
    pub fn get(b: &[u8]) -> R<DirectExpect> {
        let mut g = Get::new(b, "direct expect");
        Ok(DirectExpect {
            from: g.u16()?,
            inc: g.u64()?,
            uid: g.u32()?,
            gid: g.u32()?,
            secret: g.array()?,
        })
    }
}

/// Segment metadata as the hub answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegInfo {
    /// Id.
    pub seg: u32,
    /// Generation.
    pub gen: u32,
    /// Size in bytes.
    pub size: u64,
    /// Owner uid.
    pub uid: u32,
    /// Owner gid.
    pub gid: u32,
    /// Mode.
    pub mode: u32,
}

impl SegInfo {
    /// Encodes.
    pub fn put(&self) -> Vec<u8> {
        Put::new()
            .u32(self.seg)
            .u32(self.gen)
            .u64(self.size)
            .u32(self.uid)
            .u32(self.gid)
            .u32(self.mode)
            .0
    }
    /// Decodes.
    pub fn get(b: &[u8]) -> R<SegInfo> {
        let mut g = Get::new(b, "segment info");
        Ok(SegInfo {
            seg: g.u32()?,
            gen: g.u32()?,
            size: g.u64()?,
            uid: g.u32()?,
            gid: g.u32()?,
            mode: g.u32()?,
        })
    }
}

/// Response status codes; the body of an error is a message, except where noted.
pub mod code {
    /// Success.
    pub const OK: u8 = 0;
    /// Unknown segment (body: name).
    pub const UNKNOWN_SEGMENT: u8 = 1;
    /// Size mismatch (body: existing u64, requested u64, name).
    pub const SIZE_MISMATCH: u8 = 2;
    /// Unknown group (body: name).
    pub const UNKNOWN_GROUP: u8 = 3;
    /// Table full (body: what).
    pub const TABLE_FULL: u8 = 4;
    /// Invalid argument (body: what str, one of `memchan_core::validate::WHATS`; why str).
    pub const INVALID: u8 = 5;
    /// Ack incomplete (body: node set).
    pub const ACK_INCOMPLETE: u8 = 6;
    /// The segment was freed (body: name).
    pub const SEGMENT_FREED: u8 = 7;
    /// Not a member (body: node id u16).
    pub const UNKNOWN_NODE: u8 = 8;
    /// Permission denied (body: owner uid, gid, mode, caller uid u32; op, segment str).
    pub const PERMISSION_DENIED: u8 = 9;
    /// An ack's destinations released nothing for the hub's failure timeout while
    /// still connected (body: the timeout in ms u64, then the node set waited for).
    pub const ACK_STALLED: u8 = 10;
    /// A remote read or atomic addressed a node that does not map the segment rx
    /// (body: node id u16).
    pub const NOT_MAPPED: u8 = 11;
    /// A remote read or atomic reached a page without the target's `remote_read`
    /// attribute (body: node id u16, offset u64).
    pub const REMOTE_READ_OFF: u8 = 12;
    /// The target received a remote read or atomic and did not answer it for the
    /// failure timeout while its link lived (body: the timeout in ms u64).
    pub const RMA_STALLED: u8 = 13;
    /// A barrier's missing members, alive, made no progress (arrived, left, or sent a
    /// write or request) for the stall bound (body: the bound in ms u64, then the node
    /// set waited for).
    pub const BARRIER_STALLED: u8 = 14;
}

/// The request id of a refusal that answers no request: the hub refused a `Data`
/// packet (its sender may not write the segment). A node never uses it for a request.
pub const NO_REQUEST: u32 = 0;

/// Encodes a response.
pub fn response(id: u32, status: u8, body: &[u8]) -> Vec<u8> {
    Put::new().u32(id).u8(status).bytes(body).0
}

/// Decodes a response: (id, status, body).
pub fn get_response(b: &[u8]) -> R<(u32, u8, &[u8])> {
    let mut g = Get::new(b, "response");
    Ok((g.u32()?, g.u8()?, g.rest()))
}

/// Encodes a membership event ([`Event`]'s fields in order).
pub fn event(
    epoch: u64,
    node: NodeId,
    inc: u64,
    kind: u8,
    members: &NodeSet,
    domain: &DomainId,
) -> Vec<u8> {
    put_set(Put::new().u64(epoch).u16(node.0).u64(inc).u8(kind), members)
        .bytes(domain)
        .0
}

/// A membership event as it travels: the hub's epoch after it, the node, its
/// incarnation, what happened ([`event_kind`]), the members after it, and the
/// node's host domain (a join's; [`NO_DOMAIN`] otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The epoch after the event.
    pub epoch: u64,
    /// The node it is about.
    pub node: NodeId,
    /// Its incarnation.
    pub inc: u64,
    /// What happened: an [`event_kind`].
    pub kind: u8,
    /// The members after it.
    pub members: NodeSet,
    /// The node's host domain, on a join.
    pub domain: DomainId,
}

/// Decodes an event.
pub fn get_event(b: &[u8]) -> R<Event> {
    let mut g = Get::new(b, "event");
    Ok(Event {
        epoch: g.u64()?,
        node: NodeId(g.u16()?),
        inc: g.u64()?,
        kind: g.u8()?,
        members: get_set(&mut g)?,
        domain: g.array()?,
    })
}

/// Event kinds on the wire.
pub mod event_kind {
    /// Joined.
    pub const JOINED: u8 = 0;
    /// Left cleanly.
    pub const LEFT: u8 = 1;
    /// Declared failed and isolated.
    pub const FAILED: u8 = 2;
}

/// Heartbeat payload: the sender's link counters.
pub fn heartbeat(c: &LinkCounters) -> Vec<u8> {
    let mut p = Put::new();
    for (_, _, v) in c.fields() {
        p = p.u64(v);
    }
    p.0
}

/// Decodes a heartbeat's counters.
pub fn get_heartbeat(b: &[u8]) -> R<LinkCounters> {
    let mut g = Get::new(b, "heartbeat");
    Ok(LinkCounters {
        frames_tx: g.u64()?,
        frames_rx: g.u64()?,
        bytes_tx: g.u64()?,
        bytes_rx: g.u64()?,
        crc_failures: g.u64()?,
        retransmits: g.u64()?,
        discards: g.u64()?,
        duplicates: g.u64()?,
        replays: g.u64()?,
        naks: g.u64()?,
        backpressure_waits: g.u64()?,
        mac_failures: g.u64()?,
        tcp_retransmits: g.u64()?,
        reader_wakeups: g.u64()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_welcome_and_event_carry_the_host_domain_and_a_short_one_is_refused() {
        let mut join = Join::service(ROLE_NODE);
        join.cluster = "c".into();
        join.host = "h".into();
        join.domain = [9; 16];
        let b = join.put();
        assert_eq!(Join::get(&b), Ok(join));
        assert!(Join::get(&b[..b.len() - 1]).is_err());

        let neighbours: NodeSet = [NodeId(3), NodeId(200)].into_iter().collect();
        let w = Welcome {
            node: NodeId(1),
            incarnation: 2,
            epoch: 3,
            page_size: 4096,
            heartbeat_ms: 100,
            timeout_ms: 800,
            members: NodeSet::EMPTY,
            instance: 7,
            neighbours,
        };
        let b = w.put();
        assert_eq!(Welcome::get(&b), Ok(w));
        assert!(Welcome::get(&b[..b.len() - 1]).is_err());

        let b = event(5, NodeId(3), 4, event_kind::JOINED, &neighbours, &[1; 16]);
        let e = get_event(&b).unwrap();
        assert_eq!((e.node, e.inc, e.domain), (NodeId(3), 4, [1; 16]));
        assert_eq!(e.members, neighbours);
        assert!(get_event(&b[..b.len() - 1]).is_err());
    }
}
