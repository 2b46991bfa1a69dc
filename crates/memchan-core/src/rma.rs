//! Remote memory access (docs/spec.md, Semantics 8, issue 12 points 1 and 3): what both
//! transports share for a remote read (`get`) or a remote atomic on a target node's
//! receive memory. The argument checks (one error for one bad input on every
//! transport), the atomic operations as one enum and the one function that executes
//! them on a word ([`apply_u64`] / [`apply_u32`]: on one host the caller runs it on
//! the target's shared mapping, across hosts the target's link side runs it on its
//! own receive memory), their wire codes, and [`Pending`], a non-blocking get.

use crate::error::{Error, Result};
use crate::names::NodeId;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The most bytes one get request carries across hosts; a longer get is several
/// requests, sent before the first answer is awaited.
pub const GET_CHUNK: usize = 64 * 1024;

/// An atomic operation on a 4- or 8-byte word of a target node's receive memory: the
/// set OpenSHMEM programs need. Each returns the word's value before it (the
/// non-fetching [`Set`](AtomicOp::Set) and [`Add`](AtomicOp::Add) too: the caller
/// drops it). On a 4-byte word the operands are truncated to 32 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    /// Reads the word atomically (`shmem_atomic_fetch`).
    Fetch,
    /// Stores `v` (`shmem_atomic_set`).
    Set(u64),
    /// Adds `v`, wrapping (`shmem_atomic_add`).
    Add(u64),
    /// Adds `v`, wrapping, and returns the old value (`shmem_atomic_fetch_add`).
    FetchAdd(u64),
    /// Stores `v` and returns the old value (`shmem_atomic_swap`).
    Swap(u64),
    /// Stores `new` if the word holds `expected`; returns the old value either way
    /// (`shmem_atomic_compare_swap`): it swapped iff the result equals `expected`.
    CompareSwap {
        /// The value the word must hold.
        expected: u64,
        /// The value stored if it does.
        new: u64,
    },
    /// Bitwise and with `v` (`shmem_atomic_fetch_and`).
    FetchAnd(u64),
    /// Bitwise or with `v` (`shmem_atomic_fetch_or`).
    FetchOr(u64),
    /// Bitwise xor with `v` (`shmem_atomic_fetch_xor`).
    FetchXor(u64),
}

impl AtomicOp {
    /// The operation as (code, first operand, second operand) for the wire.
    pub fn encode(self) -> (u8, u64, u64) {
        match self {
            AtomicOp::Fetch => (1, 0, 0),
            AtomicOp::Set(v) => (2, v, 0),
            AtomicOp::Add(v) => (3, v, 0),
            AtomicOp::FetchAdd(v) => (4, v, 0),
            AtomicOp::Swap(v) => (5, v, 0),
            AtomicOp::CompareSwap { expected, new } => (6, expected, new),
            AtomicOp::FetchAnd(v) => (7, v, 0),
            AtomicOp::FetchOr(v) => (8, v, 0),
            AtomicOp::FetchXor(v) => (9, v, 0),
        }
    }

    /// The operation from its wire code, or `None` for a code no version sends.
    pub fn decode(code: u8, a: u64, b: u64) -> Option<AtomicOp> {
        Some(match code {
            1 => AtomicOp::Fetch,
            2 => AtomicOp::Set(a),
            3 => AtomicOp::Add(a),
            4 => AtomicOp::FetchAdd(a),
            5 => AtomicOp::Swap(a),
            6 => AtomicOp::CompareSwap {
                expected: a,
                new: b,
            },
            7 => AtomicOp::FetchAnd(a),
            8 => AtomicOp::FetchOr(a),
            9 => AtomicOp::FetchXor(a),
            _ => return None,
        })
    }
}

/// Executes `op` on `w`, returning the old value. SeqCst: every atomic on a word is
/// in one order with every other atomic on that word, from any node and from the
/// owner's own CPU atomics, and a fetch sees the writes that came before it.
#[inline(always)]
pub fn apply_u64(w: &AtomicU64, op: AtomicOp) -> u64 {
    const O: Ordering = Ordering::SeqCst;
    match op {
        AtomicOp::Fetch => w.load(O),
        AtomicOp::Set(v) | AtomicOp::Swap(v) => w.swap(v, O),
        AtomicOp::Add(v) | AtomicOp::FetchAdd(v) => w.fetch_add(v, O),
        AtomicOp::CompareSwap { expected, new } => match w.compare_exchange(expected, new, O, O) {
            Ok(old) | Err(old) => old,
        },
        AtomicOp::FetchAnd(v) => w.fetch_and(v, O),
        AtomicOp::FetchOr(v) => w.fetch_or(v, O),
        AtomicOp::FetchXor(v) => w.fetch_xor(v, O),
    }
}

/// As [`apply_u64`] on a 4-byte word (operands truncated to 32 bits).
#[inline(always)]
pub fn apply_u32(w: &AtomicU32, op: AtomicOp) -> u32 {
    const O: Ordering = Ordering::SeqCst;
    match op {
        AtomicOp::Fetch => w.load(O),
        AtomicOp::Set(v) | AtomicOp::Swap(v) => w.swap(v as u32, O),
        AtomicOp::Add(v) | AtomicOp::FetchAdd(v) => w.fetch_add(v as u32, O),
        AtomicOp::CompareSwap { expected, new } => {
            match w.compare_exchange(expected as u32, new as u32, O, O) {
                Ok(old) | Err(old) => old,
            }
        }
        AtomicOp::FetchAnd(v) => w.fetch_and(v as u32, O),
        AtomicOp::FetchOr(v) => w.fetch_or(v as u32, O),
        AtomicOp::FetchXor(v) => w.fetch_xor(v as u32, O),
    }
}

/// Checks a remote access of `len` bytes at `offset` of segment `segment` (`size`
/// bytes) before anything is sent or read: `OutOfBounds`, then for an atomic access
/// (`atomic`: `len` is 4 or 8) `Unaligned`. The same checks, in the same order, on
/// every transport; the target side repeats them on what it is sent.
///
/// ```
/// use memchan_core::rma::check;
/// assert!(check("s", 4096, 4088, 8, true).is_ok());
/// assert_eq!(check("s", 4096, 4092, 8, true).unwrap_err().code(), 1); // OutOfBounds
/// assert_eq!(check("s", 4096, 4, 8, true).unwrap_err().code(), 2); // Unaligned
/// ```
///
/// # Errors
/// `OutOfBounds`, `Unaligned`.
#[inline(always)]
pub fn check(segment: &str, size: usize, offset: usize, len: usize, atomic: bool) -> Result<()> {
    let in_bounds = offset.checked_add(len).is_some_and(|e| e <= size);
    if in_bounds && (!atomic || offset.is_multiple_of(len)) {
        return Ok(());
    }
    Err(refusal(segment, size, offset, len, in_bounds))
}

#[cold]
#[inline(never)]
fn refusal(segment: &str, size: usize, offset: usize, len: usize, in_bounds: bool) -> Error {
    if in_bounds {
        Error::Unaligned {
            segment: segment.to_string(),
            offset,
            size: len,
        }
    } else {
        Error::OutOfBounds {
            segment: segment.to_string(),
            offset,
            len,
            size,
        }
    }
}

/// The refusal of an access to a page of `node` without the remote-read attribute.
pub fn remote_read_off(segment: &str, node: NodeId, offset: usize) -> Error {
    Error::RemoteReadOff {
        segment: segment.to_string(),
        node,
        offset,
    }
}

/// The pages of `offset..offset + len` (with `len > 0`) all have the remote-read bit,
/// as `pct(page)` reads each page's control byte; else the first offset that has not.
pub fn pages_allow(
    page: usize,
    offset: usize,
    len: usize,
    pct: impl Fn(usize) -> u8,
) -> std::result::Result<(), usize> {
    let (first, last) = (offset / page, (offset + len.max(1) - 1) / page);
    for p in first..=last {
        if pct(p) & crate::attr::RX_REMOTE_READ == 0 {
            return Err((p * page).max(offset));
        }
    }
    Ok(())
}

/// How a transport completes a non-blocking get later.
pub trait Completion: Send {
    /// Waits for the answer (bounded as a blocking get is) and returns the bytes.
    ///
    /// # Errors
    /// As the blocking get.
    fn complete(self: Box<Self>) -> Result<Vec<u8>>;
}

/// A non-blocking get under way (OpenSHMEM's `get_nbi`): the node's `ack()` returns
/// once it (and every other get under way) has completed, after which
/// [`take`](Pending::take) returns at once. Dropping it abandons the bytes.
pub struct Pending(PendingInner);

enum PendingInner {
    Ready(Result<Vec<u8>>),
    Later(Box<dyn Completion>),
}

impl Pending {
    /// A get that completed when it was issued (one host: a load from the target's
    /// memory).
    pub fn ready(r: Result<Vec<u8>>) -> Pending {
        Pending(PendingInner::Ready(r))
    }

    /// A get whose answer `c` waits for.
    pub fn later(c: Box<dyn Completion>) -> Pending {
        Pending(PendingInner::Later(c))
    }

    /// The bytes read (waiting for them if no `ack()` came between).
    ///
    /// # Errors
    /// As the blocking get: `RemoteReadOff`, `NotMapped`, `UnknownNode` (the target
    /// failed), `PermissionDenied`, `HubLost`, `Isolated`.
    pub fn take(self) -> Result<Vec<u8>> {
        match self.0 {
            PendingInner::Ready(r) => r,
            PendingInner::Later(c) => c.complete(),
        }
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            PendingInner::Ready(_) => "Pending(ready)",
            PendingInner::Later(_) => "Pending(under way)",
        })
    }
}

/// A node's copy of a whole segment as memory this process loads from and stores
/// to itself (OpenSHMEM's `shmem_ptr`), from `RmaOps::peer_memory`: offered only
/// where nodes share memory (one host). It keeps the mapping while it lives, whatever
/// the node does meanwhile: a node that leaves or fails leaves memory nobody reads
/// any more behind the pointer, never a hole.
///
/// The rights and the pages' `remote_read` attribute are checked once, when it is
/// made. A load or store through it is the caller's own CPU access: none of the
/// checks memchan makes per operation (the target's later page attributes, receive
/// enable, notify, remap, liveness), no atomicity beyond the access's own, and the
/// caller's stores are ordered as its CPU orders them (an `ack` fences them). It
/// suits memory whose owner never changes those attributes, as libmemchan's
/// symmetric heap.
pub struct PeerMemory {
    ptr: *mut u8,
    len: usize,
    _keep: std::sync::Arc<dyn Send + Sync>,
}

// SAFETY: the pointer is into shared memory mapped by `_keep` (itself `Send +
// Sync`); the handle only hands the address out, every access is the caller's.
unsafe impl Send for PeerMemory {}
// SAFETY: as above.
unsafe impl Sync for PeerMemory {}

impl PeerMemory {
    /// # Safety
    /// `ptr` is valid for loads and stores of `len` bytes while `keep` lives.
    pub unsafe fn new(ptr: *mut u8, len: usize, keep: std::sync::Arc<dyn Send + Sync>) -> Self {
        PeerMemory {
            ptr,
            len,
            _keep: keep,
        }
    }

    /// The segment's offset 0 in the node's copy.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The segment's size.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: a segment has at least one page.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::fmt::Debug for PeerMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerMemory")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_round_trips_the_wire_and_does_what_it_says() {
        let ops = [
            AtomicOp::Fetch,
            AtomicOp::Set(9),
            AtomicOp::Add(2),
            AtomicOp::FetchAdd(3),
            AtomicOp::Swap(4),
            AtomicOp::CompareSwap {
                expected: 4,
                new: 5,
            },
            AtomicOp::FetchAnd(0b110),
            AtomicOp::FetchOr(0b1),
            AtomicOp::FetchXor(0b11),
        ];
        for op in ops {
            let (c, a, b) = op.encode();
            assert_eq!(AtomicOp::decode(c, a, b), Some(op));
        }
        assert_eq!(AtomicOp::decode(0, 0, 0), None);
        assert_eq!(AtomicOp::decode(10, 0, 0), None);
        let w = AtomicU64::new(7);
        assert_eq!(apply_u64(&w, AtomicOp::FetchAdd(3)), 7);
        assert_eq!(
            apply_u64(
                &w,
                AtomicOp::CompareSwap {
                    expected: 1,
                    new: 0
                }
            ),
            10
        );
        assert_eq!(w.load(Ordering::SeqCst), 10, "a failed CAS changes nothing");
        assert_eq!(
            apply_u64(
                &w,
                AtomicOp::CompareSwap {
                    expected: 10,
                    new: 1
                }
            ),
            10
        );
        assert_eq!(apply_u64(&w, AtomicOp::FetchOr(6)), 1);
        assert_eq!(apply_u64(&w, AtomicOp::FetchAnd(3)), 7);
        assert_eq!(apply_u64(&w, AtomicOp::FetchXor(1)), 3);
        assert_eq!(apply_u64(&w, AtomicOp::Set(u64::MAX)), 2);
        assert_eq!(apply_u64(&w, AtomicOp::Add(2)), u64::MAX);
        assert_eq!(apply_u64(&w, AtomicOp::Fetch), 1, "adds wrap");
        let h = AtomicU32::new(u32::MAX);
        assert_eq!(apply_u32(&h, AtomicOp::Add(1 << 32 | 1)), u32::MAX);
        assert_eq!(
            h.load(Ordering::SeqCst),
            0,
            "operands are truncated to 32 bits"
        );
    }

    #[test]
    fn pages_allow_names_the_first_closed_offset() {
        let bits = |p: usize| if p == 1 { 1 } else { 5 };
        assert_eq!(pages_allow(4096, 0, 4096, bits), Ok(()));
        assert_eq!(pages_allow(4096, 100, 4096, bits), Err(4096));
        assert_eq!(pages_allow(4096, 5000, 8, bits), Err(5000));
        assert_eq!(pages_allow(4096, 8192, 0, bits), Ok(()));
    }
}
