//! Payloads of the deposit frames (`Kind::Deposit`, `Kind::DepositDeliver`,
//! `Kind::Outcome`): strided and indexed elements, signal updates, conditional
//! writes and their outcomes. A `Deposit` is a Data header ([`super::data_head`]) and
//! an [`Op`]; the hub checks it as it checks Data, and forwards the op unchanged after
//! a Deliver header. Every read is bounds-checked, and [`Op::check`] proves every
//! element inside the segment before anything is applied.
//!
//! ```text
//!  op 1 strided: elem u32, count u32, stride u64, count*elem bytes (element i at
//!                head offset + i*stride)
//!  op 2 indexed: elem u32, count u32, count offsets u64, count*elem bytes
//!  op 3 signal:  how u8 (0 set, 1 add), value u64 (the word at head offset)
//!  op 4 cond:    token u64, expected u64, new u64 (the word at head offset)
//!  outcome:      peer u16, token u64, status u8 (0 applied, 1 held, 2 disabled,
//!                3 lost, 4 done: every destination reported), found u64
//! ```

use crate::wire::{Get, Put, WireError};
use memchan_core::deposit::Outcome;

type R<T> = Result<T, WireError>;

const STRIDED: u8 = 1;
const INDEXED: u8 = 2;
const SIGNAL: u8 = 3;
const COND: u8 = 4;

/// Op bytes before a strided op's data.
pub const STRIDED_HEAD: usize = 17;
/// Op bytes before an indexed op's offsets.
pub const INDEXED_HEAD: usize = 9;

/// A deposit operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// Elements at `base + i * stride`.
    Strided {
        /// Element size.
        elem: u32,
        /// Bytes between elements in the segment.
        stride: u64,
        /// The elements, packed.
        data: &'a [u8],
    },
    /// Elements at the listed offsets.
    Indexed {
        /// Element size.
        elem: u32,
        /// The offsets, u64 LE each.
        offsets: &'a [u8],
        /// The elements, packed.
        data: &'a [u8],
    },
    /// A signal update of the word at the base offset.
    Signal {
        /// Add (else set).
        add: bool,
        /// The value.
        value: u64,
    },
    /// A conditional write of the word at the base offset.
    Cond {
        /// The sender's number for it (its outcomes carry it back).
        token: u64,
        /// The value the word must hold.
        expected: u64,
        /// Its value after.
        new: u64,
    },
}

/// Encodes a strided op's head (the packed elements follow as another part).
pub fn strided_head(elem: u32, count: u32, stride: u64) -> [u8; STRIDED_HEAD] {
    let mut h = [0u8; STRIDED_HEAD];
    h[0] = STRIDED;
    h[1..5].copy_from_slice(&elem.to_le_bytes());
    h[5..9].copy_from_slice(&count.to_le_bytes());
    h[9..17].copy_from_slice(&stride.to_le_bytes());
    h
}

/// Encodes an indexed op's head (offsets, then elements, follow as other parts).
pub fn indexed_head(elem: u32, count: u32) -> [u8; INDEXED_HEAD] {
    let mut h = [0u8; INDEXED_HEAD];
    h[0] = INDEXED;
    h[1..5].copy_from_slice(&elem.to_le_bytes());
    h[5..9].copy_from_slice(&count.to_le_bytes());
    h
}

/// Encodes a signal op.
pub fn signal(add: bool, value: u64) -> Vec<u8> {
    Put::new().u8(SIGNAL).u8(u8::from(add)).u64(value).0
}

/// Encodes a conditional write.
pub fn cond(token: u64, expected: u64, new: u64) -> Vec<u8> {
    Put::new().u8(COND).u64(token).u64(expected).u64(new).0
}

impl<'a> Op<'a> {
    /// Decodes an op (the bytes after a Data or Deliver header).
    pub fn get(b: &'a [u8]) -> R<Op<'a>> {
        let mut g = Get::new(b, "deposit op");
        Ok(match g.u8()? {
            STRIDED => {
                let (elem, count, stride) = (g.u32()?, g.u32()?, g.u64()?);
                let data = g.rest();
                if elem == 0 || (count as usize).checked_mul(elem as usize) != Some(data.len()) {
                    return Err(WireError::Malformed("strided deposit"));
                }
                Op::Strided { elem, stride, data }
            }
            INDEXED => {
                let (elem, count) = (g.u32()?, g.u32()?);
                let offsets = g.bytes(
                    (count as usize)
                        .checked_mul(8)
                        .ok_or(WireError::Malformed("indexed deposit"))?,
                )?;
                let data = g.rest();
                if elem == 0 || (count as usize).checked_mul(elem as usize) != Some(data.len()) {
                    return Err(WireError::Malformed("indexed deposit"));
                }
                Op::Indexed {
                    elem,
                    offsets,
                    data,
                }
            }
            SIGNAL => Op::Signal {
                add: g.u8()? != 0,
                value: g.u64()?,
            },
            COND => Op::Cond {
                token: g.u64()?,
                expected: g.u64()?,
                new: g.u64()?,
            },
            _ => return Err(WireError::Malformed("deposit op")),
        })
    }

    /// Whether every byte the op touches, from segment offset `base`, lies inside a
    /// `size`-byte segment (and a word op's word is 8-aligned). Overflow-safe.
    pub fn check(&self, base: u64, size: usize) -> bool {
        let inside = |o: u64, len: u64| o.checked_add(len).is_some_and(|e| e <= size as u64);
        match *self {
            Op::Strided { elem, stride, data } => {
                let count = (data.len() / elem as usize) as u64;
                count == 0
                    || (count - 1)
                        .checked_mul(stride)
                        .and_then(|o| o.checked_add(base))
                        .is_some_and(|last| inside(last, u64::from(elem)))
            }
            Op::Indexed { elem, offsets, .. } => offsets
                .chunks_exact(8)
                .all(|o| inside(le64(o), u64::from(elem))),
            Op::Signal { .. } | Op::Cond { .. } => base.is_multiple_of(8) && inside(base, 8),
        }
    }

    /// `(offset, bytes)` of each element of a strided or indexed op from `base`, in
    /// order (none for a word op). Only after [`check`](Self::check) said yes.
    pub fn elements(&self, base: u64) -> impl Iterator<Item = (usize, &'a [u8])> + 'a {
        let (elem, stride, offsets, data) = match *self {
            Op::Strided { elem, stride, data } => (elem as usize, stride, &[][..], data),
            Op::Indexed {
                elem,
                offsets,
                data,
            } => (elem as usize, 0, offsets, data),
            _ => (1, 0, &[][..], &[][..]),
        };
        data.chunks_exact(elem).enumerate().map(move |(i, d)| {
            let off = if offsets.is_empty() {
                base + i as u64 * stride
            } else {
                le64(&offsets[i * 8..i * 8 + 8])
            };
            (off as usize, d)
        })
    }
}

fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    u64::from_le_bytes(a)
}

/// Encodes an outcome: `peer` is the origin it is for (node → hub) or the
/// destination it came from (hub → node).
pub fn outcome(peer: u16, token: u64, o: Outcome) -> Vec<u8> {
    let (status, found) = match o {
        Outcome::Applied => (0, 0),
        Outcome::Held(v) => (1, v),
        Outcome::Disabled => (2, 0),
        Outcome::Lost => (3, 0),
    };
    Put::new().u16(peer).u64(token).u8(status).u64(found).0
}

/// Encodes the hub's last report on conditional write `token`: every destination's
/// outcome was sent before it.
pub fn done(token: u64) -> Vec<u8> {
    Put::new().u16(0).u64(token).u8(DONE).u64(0).0
}

const DONE: u8 = 4;

/// Decodes an outcome: (peer, token, outcome), the outcome `None` for [`done`].
pub fn get_outcome(b: &[u8]) -> R<(u16, u64, Option<Outcome>)> {
    let mut g = Get::new(b, "outcome");
    let (peer, token, status, found) = (g.u16()?, g.u64()?, g.u8()?, g.u64()?);
    let o = match status {
        0 => Outcome::Applied,
        1 => Outcome::Held(found),
        2 => Outcome::Disabled,
        3 => Outcome::Lost,
        DONE => return Ok((peer, token, None)),
        _ => return Err(WireError::Malformed("outcome")),
    };
    Ok((peer, token, Some(o)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_round_trip_and_check_bounds() {
        let data = [7u8; 24];
        let b = [&strided_head(8, 3, 100)[..], &data].concat();
        let op = Op::get(&b).unwrap();
        assert!(op.check(0, 208));
        assert!(!op.check(1, 208));
        assert!(!op.check(u64::MAX - 10, 1 << 20));
        let at: Vec<usize> = op.elements(8).map(|(o, _)| o).collect();
        assert_eq!(at, [8, 108, 208]);
        let offs: Vec<u8> = [5u64, 0, 40].iter().flat_map(|o| o.to_le_bytes()).collect();
        let b = [&indexed_head(8, 3)[..], &offs, &data].concat();
        let op = Op::get(&b).unwrap();
        assert!(op.check(0, 48) && !op.check(0, 47));
        assert_eq!(
            op.elements(0).map(|(o, _)| o).collect::<Vec<_>>(),
            [5, 0, 40]
        );
        // A count that does not match the bytes, a zero element, an unknown op.
        assert!(Op::get(&[&strided_head(8, 4, 1)[..], &data].concat()).is_err());
        assert!(Op::get(&[&strided_head(0, 0, 1)[..]].concat()).is_err());
        assert!(Op::get(&[&indexed_head(8, u32::MAX)[..]].concat()).is_err());
        assert!(Op::get(&[9u8]).is_err());
        let c = cond(3, 4, 5);
        assert_eq!(
            Op::get(&c).unwrap(),
            Op::Cond {
                token: 3,
                expected: 4,
                new: 5
            }
        );
        assert!(!Op::get(&c).unwrap().check(4, 64));
        assert!(Op::get(&signal(true, 9)).unwrap().check(56, 64));
        let o = outcome(2, 77, Outcome::Held(6));
        assert_eq!(get_outcome(&o).unwrap(), (2, 77, Some(Outcome::Held(6))));
        assert_eq!(get_outcome(&done(8)).unwrap(), (0, 8, None));
    }
}
