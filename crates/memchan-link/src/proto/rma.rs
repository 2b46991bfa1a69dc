//! The payloads of remote reads and atomics through the hub (`Kind::RmaRequest`,
//! `RmaServe`, `RmaDone`): what an origin asks, what the hub asks the target, and the
//! target's answer. Both ends speak them: the node side (`memchan-net`'s `rma.rs`) makes
//! requests and serves them, the hub (`memchan-hub`'s `rma.rs`) checks and forwards
//! them. Every decode is
//! bounds-checked and refuses what no version sends.

use crate::wire::{Get, Put, WireError};
use memchan_core::rma::{self, AtomicOp, GET_CHUNK};
use memchan_core::NodeId;

/// What a request asks of the target's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// Read `len` bytes (at most [`GET_CHUNK`]).
    Get(u32),
    /// Run an atomic on a word of `width` (4 or 8) bytes.
    Atomic(u8, AtomicOp),
}

impl What {
    fn put(self, p: Put) -> Put {
        match self {
            What::Get(len) => p.u8(0).u32(len),
            What::Atomic(width, op) => {
                let (c, a, b) = op.encode();
                p.u8(1).u8(width).u8(c).u64(a).u64(b)
            }
        }
    }

    fn get(g: &mut Get<'_>) -> Result<What, WireError> {
        Ok(match g.u8()? {
            0 => What::Get(g.u32()?),
            1 => {
                let width = g.u8()?;
                let (c, a, b) = (g.u8()?, g.u64()?, g.u64()?);
                let op = AtomicOp::decode(c, a, b).ok_or(WireError::Malformed("atomic op"))?;
                What::Atomic(width, op)
            }
            _ => return Err(WireError::Malformed("rma kind")),
        })
    }

    /// Bytes touched at the target.
    pub fn bytes(self) -> usize {
        match self {
            What::Get(l) => l as usize,
            What::Atomic(w, _) => usize::from(w),
        }
    }

    /// The right it needs (4 read, 6 read and write) and the name of the refusal.
    pub fn right(self) -> (u32, &'static str) {
        match self {
            What::Get(_) => (4, "get"),
            What::Atomic(..) => (6, "atomic"),
        }
    }

    /// Whether its offset and length are a valid access of a `size`-byte segment.
    pub fn fits(self, offset: u64, size: usize) -> bool {
        let ok_len = match self {
            What::Get(l) => l as usize <= GET_CHUNK,
            What::Atomic(w, _) => w == 4 || w == 8,
        };
        let atomic = matches!(self, What::Atomic(..));
        ok_len
            && usize::try_from(offset)
                .is_ok_and(|o| rma::check("", size, o, self.bytes(), atomic).is_ok())
    }
}

/// A request as the origin sends it (`Kind::RmaRequest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The origin's request id (its `Response` carries it).
    pub req: u32,
    /// Segment index and generation.
    pub seg: u32,
    /// Segment generation.
    pub gen: u32,
    /// The target node.
    pub target: NodeId,
    /// Offset in the segment.
    pub offset: u64,
    /// What to do there.
    pub what: What,
}

impl Request {
    /// Encodes.
    pub fn put(&self) -> Vec<u8> {
        let p = Put::new()
            .u32(self.req)
            .u32(self.seg)
            .u32(self.gen)
            .u16(self.target.0)
            .u64(self.offset);
        self.what.put(p).0
    }

    /// Decodes.
    ///
    /// # Errors
    /// `Malformed` for anything no version sends.
    pub fn get(b: &[u8]) -> Result<Request, WireError> {
        let mut g = Get::new(b, "rma request");
        Ok(Request {
            req: g.u32()?,
            seg: g.u32()?,
            gen: g.u32()?,
            target: NodeId(g.u16()?),
            offset: g.u64()?,
            what: What::get(&mut g)?,
        })
    }
}

/// Who asked: the origin node, its incarnation and its request id. The target keys
/// the answers of atomics by it, so that a request that reaches it twice (resent at a
/// dual rail switch) is applied once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Asker {
    /// The origin node.
    pub node: NodeId,
    /// Its incarnation.
    pub inc: u64,
    /// Its request id.
    pub req: u32,
}

/// What the hub asks the target (`Kind::RmaServe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Serve {
    /// The hub's token for the answer.
    pub token: u64,
    /// Whose request it is.
    pub asker: Asker,
    /// Segment index.
    pub seg: u32,
    /// Segment generation.
    pub gen: u32,
    /// Offset in the segment.
    pub offset: u64,
    /// What to do there.
    pub what: What,
}

impl Serve {
    /// Encodes.
    pub fn put(&self) -> Vec<u8> {
        let p = Put::new()
            .u64(self.token)
            .u16(self.asker.node.0)
            .u64(self.asker.inc)
            .u32(self.asker.req)
            .u32(self.seg)
            .u32(self.gen)
            .u64(self.offset);
        self.what.put(p).0
    }

    /// Decodes.
    ///
    /// # Errors
    /// `Malformed` for anything no version sends.
    pub fn get(b: &[u8]) -> Result<Serve, WireError> {
        let mut g = Get::new(b, "rma serve");
        Ok(Serve {
            token: g.u64()?,
            asker: Asker {
                node: NodeId(g.u16()?),
                inc: g.u64()?,
                req: g.u32()?,
            },
            seg: g.u32()?,
            gen: g.u32()?,
            offset: g.u64()?,
            what: What::get(&mut g)?,
        })
    }
}

/// The target's answer (`Kind::RmaDone`): (token, status, body).
pub fn done_payload(token: u64, status: u8, body: &[u8]) -> Vec<u8> {
    Put::new().u64(token).u8(status).bytes(body).0
}

/// Decodes an `RmaDone`.
///
/// # Errors
/// `Malformed`.
pub fn get_done(b: &[u8]) -> Result<(u64, u8, &[u8]), WireError> {
    let mut g = Get::new(b, "rma done");
    Ok((g.u64()?, g.u8()?, g.rest()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_refuse_garbage() {
        let r = Request {
            req: 7,
            seg: 3,
            gen: 9,
            target: NodeId(4),
            offset: 4096,
            what: What::Atomic(
                8,
                AtomicOp::CompareSwap {
                    expected: 1,
                    new: 2,
                },
            ),
        };
        assert_eq!(Request::get(&r.put()).unwrap(), r);
        let g = Request {
            what: What::Get(100),
            ..r
        };
        assert_eq!(Request::get(&g.put()).unwrap(), g);
        let mut bad = r.put();
        bad[22] = 9; // neither get nor atomic
        assert!(Request::get(&bad).is_err());
        assert!(Request::get(&r.put()[..10]).is_err());
        let asker = Asker {
            node: NodeId(3),
            inc: 77,
            req: 9,
        };
        let s = Serve {
            token: 5,
            asker,
            seg: 1,
            gen: 2,
            offset: 8,
            what: What::Get(8),
        };
        assert_eq!(Serve::get(&s.put()).unwrap(), s);
    }

    #[test]
    fn fits_refuses_what_no_library_sends() {
        assert!(What::Get(8).fits(4088, 4096));
        assert!(!What::Get(8).fits(4092, 4096));
        assert!(!What::Get(GET_CHUNK as u32 + 1).fits(0, 1 << 20));
        assert!(!What::Atomic(8, AtomicOp::Fetch).fits(4, 4096));
        assert!(!What::Atomic(2, AtomicOp::Fetch).fits(0, 4096));
        assert!(!What::Get(8).fits(u64::MAX, 4096));
    }
}
