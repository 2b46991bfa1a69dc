//! The hub's answers, in codes: why a join is refused ([`JoinRefusal`], the payload of
//! a `Refuse` frame) and why a request is refused ([`Refusal`], a `Response`'s status
//! and body). The hub encodes, the node decodes, both here, so the two halves cannot
//! drift; neither side reads the other's English. A detail string some variants carry
//! is for people (logs, error messages) and is never parsed.
//!
//! Both ends are this build (the handshake refuses another protocol version,
//! `wire::VERSION`), so the codes need no negotiation. A code no version sends, or a
//! body that does not parse as its code says, is a [`ReplyError`], never a guess.

use crate::proto::{code, get_set, put_set};
use crate::wire::{Get, Put, WireError, VERSION};
use memchan_core::{validate, Error, NodeId, NodeSet};
use std::time::Duration;

/// A reply that does not decode: the peer is not speaking this build's protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// A code no version sends.
    #[error("unknown {what} code {code}")]
    UnknownCode {
        /// Which kind of reply.
        what: &'static str,
        /// The code received.
        code: u8,
    },
    /// A body that does not parse as its code says.
    #[error(transparent)]
    Malformed(#[from] WireError),
}

/// Why the hub refuses a join (or a standby a node's resume): the payload of a
/// `Refuse` frame, a code byte and the fields of its variant. Its `Display` is the
/// reason in words, as the hub logs it and the node reports it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JoinRefusal {
    /// The hub's gate is at a cap (pending handshakes; see `memchan-hub`'s `gate.rs`): not a
    /// refusal of the node itself, which tries again for a while.
    #[error("the hub is busy: {0}")]
    Busy(String),
    /// This hub is a standby: nodes join the active hub.
    #[error("this is a standby hub: nodes join the active hub")]
    Standby,
    /// The hub serves another cluster.
    #[error("this hub serves cluster `{serves}`, not `{asked}`")]
    OtherCluster {
        /// The hub's cluster.
        serves: String,
        /// The one the join named.
        asked: String,
    },
    /// The cluster has another page size.
    #[error("the cluster uses {existing}-byte pages, not {requested}")]
    PageSize {
        /// The cluster's page size in bytes.
        existing: u32,
        /// The one the join asked for.
        requested: u32,
    },
    /// Every node slot is taken.
    #[error("the cluster's node table is full")]
    NodeTableFull,
    /// The join's MAC does not verify under the hub's key.
    #[error("wrong cluster key (the join's MAC does not verify)")]
    WrongKey,
    /// The peer speaks another protocol version.
    #[error("protocol version {theirs} is not this hub's {ours}")]
    Version {
        /// The peer's version.
        theirs: u16,
        /// The hub's.
        ours: u16,
    },
    /// The bytes are not a memchan frame (the decoder's reason).
    #[error("not a memchan node: {0}")]
    NotANode(String),
    /// The handshake broke off otherwise (timed out, a frame too long or damaged, a
    /// stale or missing join, no resources for the link); the detail says which.
    #[error("{0}")]
    Handshake(String),
    /// A standby refused a node's resume (dual rail); the detail says why.
    #[error("{0}")]
    Resume(String),
}

mod join_code {
    pub const BUSY: u8 = 1;
    pub const STANDBY: u8 = 2;
    pub const OTHER_CLUSTER: u8 = 3;
    pub const PAGE_SIZE: u8 = 4;
    pub const NODE_TABLE_FULL: u8 = 5;
    pub const WRONG_KEY: u8 = 6;
    pub const VERSION: u8 = 7;
    pub const NOT_A_NODE: u8 = 8;
    pub const HANDSHAKE: u8 = 9;
    pub const RESUME: u8 = 10;
}

impl JoinRefusal {
    /// The refusal of a peer whose join frame failed to decode with `e`.
    pub fn of_wire(e: &WireError) -> JoinRefusal {
        match e {
            WireError::BadMac => JoinRefusal::WrongKey,
            WireError::Version { theirs } => JoinRefusal::Version {
                theirs: *theirs,
                ours: VERSION,
            },
            e => JoinRefusal::NotANode(e.to_string()),
        }
    }

    /// Encodes (a `Refuse` frame's payload).
    pub fn put(&self) -> Vec<u8> {
        use join_code as c;
        let p = Put::new();
        match self {
            JoinRefusal::Busy(why) => p.u8(c::BUSY).str(why),
            JoinRefusal::Standby => p.u8(c::STANDBY),
            JoinRefusal::OtherCluster { serves, asked } => {
                p.u8(c::OTHER_CLUSTER).str(serves).str(asked)
            }
            JoinRefusal::PageSize {
                existing,
                requested,
            } => p.u8(c::PAGE_SIZE).u32(*existing).u32(*requested),
            JoinRefusal::NodeTableFull => p.u8(c::NODE_TABLE_FULL),
            JoinRefusal::WrongKey => p.u8(c::WRONG_KEY),
            JoinRefusal::Version { theirs, ours } => p.u8(c::VERSION).u16(*theirs).u16(*ours),
            JoinRefusal::NotANode(why) => p.u8(c::NOT_A_NODE).str(why),
            JoinRefusal::Handshake(why) => p.u8(c::HANDSHAKE).str(why),
            JoinRefusal::Resume(why) => p.u8(c::RESUME).str(why),
        }
        .0
    }

    /// Decodes a `Refuse` frame's payload (read without a MAC: anyone can send one).
    ///
    /// # Errors
    /// [`ReplyError::UnknownCode`] for a code no version sends, `Malformed` for a
    /// body that does not parse as its code says (trailing bytes included).
    pub fn get(b: &[u8]) -> Result<JoinRefusal, ReplyError> {
        use join_code as c;
        let mut g = Get::new(b, "join refusal");
        let r = match g.u8()? {
            c::BUSY => JoinRefusal::Busy(g.str()?),
            c::STANDBY => JoinRefusal::Standby,
            c::OTHER_CLUSTER => JoinRefusal::OtherCluster {
                serves: g.str()?,
                asked: g.str()?,
            },
            c::PAGE_SIZE => JoinRefusal::PageSize {
                existing: g.u32()?,
                requested: g.u32()?,
            },
            c::NODE_TABLE_FULL => JoinRefusal::NodeTableFull,
            c::WRONG_KEY => JoinRefusal::WrongKey,
            c::VERSION => JoinRefusal::Version {
                theirs: g.u16()?,
                ours: g.u16()?,
            },
            c::NOT_A_NODE => JoinRefusal::NotANode(g.str()?),
            c::HANDSHAKE => JoinRefusal::Handshake(g.str()?),
            c::RESUME => JoinRefusal::Resume(g.str()?),
            code => {
                return Err(ReplyError::UnknownCode {
                    what: "join refusal",
                    code,
                })
            }
        };
        end(&mut g)?;
        Ok(r)
    }
}

/// Refuses trailing bytes: a body longer than its code says was not made by us.
fn end(g: &mut Get<'_>) -> Result<(), ReplyError> {
    if g.rest().is_empty() {
        Ok(())
    } else {
        Err(ReplyError::Malformed(WireError::Malformed(
            "trailing bytes",
        )))
    }
}

/// The tables a request can find full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The segment table.
    Segment,
    /// The group table.
    Group,
}

/// Why the hub (or a remote-access target) refuses a request: a `Response`'s status
/// ([`code`]) and body. The hub makes one from the [`Error`] it refuses with
/// ([`Refusal::of`]); the node turns it back into that error ([`Refusal::into_error`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No segment of that name (or, for a packet refused after a rail switch, the
    /// segment and generation the standby never learnt).
    UnknownSegment(String),
    /// The segment exists with another size.
    SizeMismatch {
        /// Its name.
        segment: String,
        /// Its size.
        existing: u64,
        /// The size asked for (rounded up to pages).
        requested: u64,
    },
    /// No group of that name.
    UnknownGroup(String),
    /// A table is full.
    TableFull(Table),
    /// The request is invalid: `what` is one of `memchan_core::validate`'s names.
    Invalid {
        /// What is invalid.
        what: String,
        /// Why.
        why: String,
    },
    /// These destinations left before they released the acknowledged writes.
    AckIncomplete(NodeSet),
    /// The segment was freed (its name, or empty when the asker knows it).
    SegmentFreed(String),
    /// Not a member.
    UnknownNode(NodeId),
    /// The segment's owner and mode do not allow the operation.
    PermissionDenied {
        /// The segment.
        segment: String,
        /// The operation refused (`map_rx`, `map_tx`, `get`, `atomic`, `free`).
        op: &'static str,
        /// The owner's uid.
        uid: u32,
        /// The owner's gid.
        gid: u32,
        /// The segment's mode.
        mode: u32,
        /// The asker's uid.
        caller_uid: u32,
    },
    /// No destination released any of the acknowledged writes for the failure
    /// timeout; the ones still waited for.
    AckStalled {
        /// How long it waited, in ms.
        waited_ms: u64,
        /// The destinations that released nothing.
        stalled: NodeSet,
    },
    /// The remote-access target does not map the segment rx.
    NotMapped(NodeId),
    /// The page at `offset` does not allow remote access at the target.
    RemoteReadOff {
        /// The target.
        node: NodeId,
        /// The refused page's offset.
        offset: u64,
    },
    /// The target received a remote access and did not answer it.
    RmaStalled {
        /// How long the hub waited, in ms.
        waited_ms: u64,
    },
    /// The barrier's missing members made no progress for the stall bound.
    BarrierStalled {
        /// How long it waited, in ms.
        waited_ms: u64,
        /// The members that did not arrive.
        missing: NodeSet,
    },
}

/// The operations a `PermissionDenied` can name.
const OPS: [&str; 5] = ["map_rx", "map_tx", "get", "atomic", "free"];

impl Refusal {
    /// The refusal that carries `e` to the node (the cases a hub refuses with; any
    /// other error travels as `Invalid` in words).
    pub fn of(e: &Error) -> Refusal {
        match e {
            Error::Invalid { what, why } => Refusal::Invalid {
                what: (*what).to_string(),
                why: why.clone(),
            },
            Error::UnknownNode(id) => Refusal::UnknownNode(*id),
            Error::UnknownGroup(g) => Refusal::UnknownGroup(g.clone()),
            Error::UnknownSegment(s) => Refusal::UnknownSegment(s.clone()),
            Error::TableFull("group") => Refusal::TableFull(Table::Group),
            Error::TableFull(_) => Refusal::TableFull(Table::Segment),
            Error::SegmentFreed { segment } => Refusal::SegmentFreed(segment.clone()),
            Error::PermissionDenied {
                segment,
                op,
                uid,
                gid,
                mode,
                caller_uid,
            } => Refusal::PermissionDenied {
                segment: segment.clone(),
                op: OPS.iter().find(|o| *o == op).copied().unwrap_or("free"),
                uid: *uid,
                gid: *gid,
                mode: *mode,
                caller_uid: *caller_uid,
            },
            other => Refusal::Invalid {
                what: "request".into(),
                why: other.to_string(),
            },
        }
    }

    /// Its status code ([`code`]).
    pub fn code(&self) -> u8 {
        match self {
            Refusal::UnknownSegment(_) => code::UNKNOWN_SEGMENT,
            Refusal::SizeMismatch { .. } => code::SIZE_MISMATCH,
            Refusal::UnknownGroup(_) => code::UNKNOWN_GROUP,
            Refusal::TableFull(_) => code::TABLE_FULL,
            Refusal::Invalid { .. } => code::INVALID,
            Refusal::AckIncomplete(_) => code::ACK_INCOMPLETE,
            Refusal::SegmentFreed(_) => code::SEGMENT_FREED,
            Refusal::UnknownNode(_) => code::UNKNOWN_NODE,
            Refusal::PermissionDenied { .. } => code::PERMISSION_DENIED,
            Refusal::AckStalled { .. } => code::ACK_STALLED,
            Refusal::NotMapped(_) => code::NOT_MAPPED,
            Refusal::RemoteReadOff { .. } => code::REMOTE_READ_OFF,
            Refusal::RmaStalled { .. } => code::RMA_STALLED,
            Refusal::BarrierStalled { .. } => code::BARRIER_STALLED,
        }
    }

    /// Its body.
    pub fn put(&self) -> Vec<u8> {
        let p = Put::new();
        match self {
            Refusal::UnknownSegment(s) | Refusal::UnknownGroup(s) | Refusal::SegmentFreed(s) => {
                p.str(s)
            }
            Refusal::SizeMismatch {
                segment,
                existing,
                requested,
            } => p.u64(*existing).u64(*requested).str(segment),
            Refusal::TableFull(Table::Segment) => p.u8(0),
            Refusal::TableFull(Table::Group) => p.u8(1),
            Refusal::Invalid { what, why } => p.str(what).str(why),
            Refusal::AckIncomplete(set) => put_set(p, set),
            Refusal::UnknownNode(n) | Refusal::NotMapped(n) => p.u16(n.0),
            Refusal::PermissionDenied {
                segment,
                op,
                uid,
                gid,
                mode,
                caller_uid,
            } => p
                .u32(*uid)
                .u32(*gid)
                .u32(*mode)
                .u32(*caller_uid)
                .str(op)
                .str(segment),
            Refusal::AckStalled { waited_ms, stalled } => put_set(p.u64(*waited_ms), stalled),
            Refusal::RemoteReadOff { node, offset } => p.u16(node.0).u64(*offset),
            Refusal::RmaStalled { waited_ms } => p.u64(*waited_ms),
            Refusal::BarrierStalled { waited_ms, missing } => put_set(p.u64(*waited_ms), missing),
        }
        .0
    }

    /// Decodes a refusal's status and body (`code::OK` is no refusal).
    ///
    /// # Errors
    /// [`ReplyError::UnknownCode`] for a status no version sends, `Malformed` for a
    /// body that does not parse as its status says.
    pub fn get(status: u8, body: &[u8]) -> Result<Refusal, ReplyError> {
        let mut g = Get::new(body, "refusal");
        let r = match status {
            code::UNKNOWN_SEGMENT => Refusal::UnknownSegment(g.str()?),
            code::SIZE_MISMATCH => {
                let (existing, requested) = (g.u64()?, g.u64()?);
                Refusal::SizeMismatch {
                    segment: g.str()?,
                    existing,
                    requested,
                }
            }
            code::UNKNOWN_GROUP => Refusal::UnknownGroup(g.str()?),
            code::TABLE_FULL => Refusal::TableFull(match g.u8()? {
                0 => Table::Segment,
                1 => Table::Group,
                _ => return Err(WireError::Malformed("full table").into()),
            }),
            code::INVALID => Refusal::Invalid {
                what: g.str()?,
                why: g.str()?,
            },
            code::ACK_INCOMPLETE => Refusal::AckIncomplete(get_set(&mut g)?),
            code::SEGMENT_FREED => Refusal::SegmentFreed(g.str()?),
            code::UNKNOWN_NODE => Refusal::UnknownNode(NodeId(g.u16()?)),
            code::PERMISSION_DENIED => {
                let (uid, gid, mode, caller_uid) = (g.u32()?, g.u32()?, g.u32()?, g.u32()?);
                let op = g.str()?;
                let op = OPS
                    .iter()
                    .find(|o| **o == op)
                    .copied()
                    .ok_or(WireError::Malformed("refused operation"))?;
                Refusal::PermissionDenied {
                    segment: g.str()?,
                    op,
                    uid,
                    gid,
                    mode,
                    caller_uid,
                }
            }
            code::ACK_STALLED => Refusal::AckStalled {
                waited_ms: g.u64()?,
                stalled: get_set(&mut g)?,
            },
            code::NOT_MAPPED => Refusal::NotMapped(NodeId(g.u16()?)),
            code::REMOTE_READ_OFF => Refusal::RemoteReadOff {
                node: NodeId(g.u16()?),
                offset: g.u64()?,
            },
            code::RMA_STALLED => Refusal::RmaStalled {
                waited_ms: g.u64()?,
            },
            code::BARRIER_STALLED => Refusal::BarrierStalled {
                waited_ms: g.u64()?,
                missing: get_set(&mut g)?,
            },
            code => {
                return Err(ReplyError::UnknownCode {
                    what: "refusal",
                    code,
                })
            }
        };
        end(&mut g)?;
        Ok(r)
    }

    /// The error the node reports for it. A remote access knows the segment it asked
    /// about and names it (`memchan-net`'s `rma.rs`); here a name the refusal does not carry is empty,
    /// and a stalled barrier's cluster is the node's to fill in.
    pub fn into_error(self) -> Error {
        match self {
            Refusal::UnknownSegment(s) => Error::UnknownSegment(s),
            Refusal::SizeMismatch {
                segment,
                existing,
                requested,
            } => Error::SegmentSizeMismatch {
                segment,
                existing: existing as usize,
                requested: requested as usize,
            },
            Refusal::UnknownGroup(g) => Error::UnknownGroup(g),
            Refusal::TableFull(Table::Segment) => Error::TableFull("segment"),
            Refusal::TableFull(Table::Group) => Error::TableFull("group"),
            Refusal::Invalid { what, why } => Error::Invalid {
                what: validate::what_from(&what),
                why,
            },
            Refusal::AckIncomplete(set) => Error::AckIncomplete(set.iter().collect()),
            Refusal::SegmentFreed(segment) => Error::SegmentFreed { segment },
            Refusal::UnknownNode(n) => Error::UnknownNode(n),
            Refusal::PermissionDenied {
                segment,
                op,
                uid,
                gid,
                mode,
                caller_uid,
            } => Error::PermissionDenied {
                segment,
                op,
                uid,
                gid,
                mode,
                caller_uid,
            },
            Refusal::AckStalled { waited_ms, .. } => Error::Timeout(
                Duration::from_millis(waited_ms),
                "a destination to release the acknowledged writes (none released any)",
            ),
            Refusal::NotMapped(node) => Error::NotMapped {
                segment: String::new(),
                node,
            },
            Refusal::RemoteReadOff { node, offset } => {
                memchan_core::rma::remote_read_off("", node, offset as usize)
            }
            Refusal::RmaStalled { waited_ms } => Error::Timeout(
                Duration::from_millis(waited_ms),
                "the target to answer a remote access it received",
            ),
            Refusal::BarrierStalled { waited_ms, missing } => Error::Stalled {
                cluster: String::new(),
                what: "barrier arrivals",
                waited: Duration::from_millis(waited_ms),
                nodes: missing.iter().collect(),
            },
        }
    }
}

/// A request's answer: its body for `code::OK`, else the refusal it carries.
///
/// # Errors
/// The [`ReplyError`] of a status or body that does not decode.
pub fn answer(status: u8, body: Vec<u8>) -> Result<Result<Vec<u8>, Refusal>, ReplyError> {
    if status == code::OK {
        return Ok(Ok(body));
    }
    Refusal::get(status, &body).map(Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ids: &[u16]) -> NodeSet {
        ids.iter().map(|&i| NodeId(i)).collect()
    }

    #[test]
    fn every_join_refusal_round_trips_and_keeps_its_words() {
        let all = [
            JoinRefusal::Busy("3 handshakes pending from 127.0.1.1".into()),
            JoinRefusal::Standby,
            JoinRefusal::OtherCluster {
                serves: "a".into(),
                asked: "b".into(),
            },
            JoinRefusal::PageSize {
                existing: 4096,
                requested: 65536,
            },
            JoinRefusal::NodeTableFull,
            JoinRefusal::WrongKey,
            JoinRefusal::Version {
                theirs: VERSION + 1,
                ours: VERSION,
            },
            JoinRefusal::NotANode("not a memchan peer".into()),
            JoinRefusal::Handshake("handshake timed out".into()),
            JoinRefusal::Resume("node 3 resumed already".into()),
        ];
        for r in all {
            assert_eq!(JoinRefusal::get(&r.put()), Ok(r.clone()), "{r}");
        }
        assert_eq!(
            JoinRefusal::PageSize {
                existing: 4096,
                requested: 65536
            }
            .to_string(),
            "the cluster uses 4096-byte pages, not 65536"
        );
    }

    #[test]
    fn every_refusal_round_trips() {
        let all = [
            Refusal::UnknownSegment("s".into()),
            Refusal::SizeMismatch {
                segment: "s".into(),
                existing: 4096,
                requested: 8192,
            },
            Refusal::UnknownGroup("g".into()),
            Refusal::TableFull(Table::Segment),
            Refusal::TableFull(Table::Group),
            Refusal::Invalid {
                what: "segment name".into(),
                why: "too long".into(),
            },
            Refusal::AckIncomplete(set(&[1, 200])),
            Refusal::SegmentFreed(String::new()),
            Refusal::UnknownNode(NodeId(9)),
            Refusal::PermissionDenied {
                segment: "s".into(),
                op: "map_tx",
                uid: 1,
                gid: 2,
                mode: 0o640,
                caller_uid: 3,
            },
            Refusal::AckStalled {
                waited_ms: 800,
                stalled: set(&[2]),
            },
            Refusal::NotMapped(NodeId(4)),
            Refusal::RemoteReadOff {
                node: NodeId(5),
                offset: 8192,
            },
            Refusal::RmaStalled { waited_ms: 800 },
            Refusal::BarrierStalled {
                waited_ms: 1600,
                missing: set(&[0, 255]),
            },
        ];
        for r in all {
            assert_eq!(Refusal::get(r.code(), &r.put()), Ok(r.clone()), "{r:?}");
            assert_eq!(answer(r.code(), r.put()), Ok(Err(r)));
        }
        assert_eq!(answer(code::OK, b"body".to_vec()), Ok(Ok(b"body".to_vec())));
    }

    #[test]
    fn errors_travel_as_the_same_error() {
        let e = Error::PermissionDenied {
            segment: "s".into(),
            op: "get",
            uid: 1,
            gid: 2,
            mode: 0o600,
            caller_uid: 3,
        };
        let r = Refusal::of(&e);
        let back = Refusal::get(r.code(), &r.put()).unwrap().into_error();
        assert_eq!(back.to_string(), e.to_string());
        let other = Error::Unsupported("x");
        let back = Refusal::of(&other).into_error();
        assert!(
            matches!(
                back,
                Error::Invalid {
                    what: "request",
                    ..
                }
            ),
            "{back}"
        );
    }

    #[test]
    fn hostile_codes_and_bodies_are_typed_errors() {
        assert_eq!(
            JoinRefusal::get(&[200]),
            Err(ReplyError::UnknownCode {
                what: "join refusal",
                code: 200
            })
        );
        assert_eq!(
            Refusal::get(99, b""),
            Err(ReplyError::UnknownCode {
                what: "refusal",
                code: 99
            })
        );
        // Empty, cut short, a string length past the body, bytes left over, a table
        // and an operation no version names.
        assert!(matches!(
            JoinRefusal::get(&[]),
            Err(ReplyError::Malformed(_))
        ));
        let cut = JoinRefusal::PageSize {
            existing: 1,
            requested: 2,
        }
        .put();
        assert!(matches!(
            JoinRefusal::get(&cut[..cut.len() - 1]),
            Err(ReplyError::Malformed(_))
        ));
        assert!(matches!(
            JoinRefusal::get(&[join_code::BUSY, 0xff, 0xff, b'x']),
            Err(ReplyError::Malformed(_))
        ));
        assert!(matches!(
            JoinRefusal::get(&[join_code::STANDBY, 0]),
            Err(ReplyError::Malformed(_))
        ));
        assert!(matches!(
            Refusal::get(code::TABLE_FULL, &[7]),
            Err(ReplyError::Malformed(_))
        ));
        let mut denied = Refusal::PermissionDenied {
            segment: "s".into(),
            op: "get",
            uid: 0,
            gid: 0,
            mode: 0,
            caller_uid: 0,
        }
        .put();
        denied[18] = b'x'; // "get" -> "xet"
        assert!(matches!(
            Refusal::get(code::PERMISSION_DENIED, &denied),
            Err(ReplyError::Malformed(_))
        ));
        assert!(matches!(
            Refusal::get(code::UNKNOWN_SEGMENT, &[0xc3, 0x28]),
            Err(ReplyError::Malformed(_))
        ));
    }
}
