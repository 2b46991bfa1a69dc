//! The members of a collective ([`Set`]) and the two steps every collective and
//! every team split is made of: the [`barrier`] over a set and the [`deposit`] of
//! bytes into a member's heap (this PE's own copy by atomic stores). A leaf below
//! `coll.rs` (the collectives) and `team.rs` (the teams), which both use it.

use super::atomic;
use crate::{die, Handles, Pe};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// Members `start + i * stride` for `i < size`, as world ranks (a team's stride may
/// be negative; 0 only for one member).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Set {
    start: usize,
    stride: isize,
    pub(super) size: usize,
}

impl Set {
    /// The set of `size` ranks from `start` at `stride`; the caller keeps every
    /// member a rank (checked where the numbers come from a program).
    pub fn new(start: usize, stride: isize, size: usize) -> Set {
        Set {
            start,
            stride,
            size,
        }
    }

    /// Member `i`'s world rank (`i < size`).
    pub(super) fn pe(&self, i: usize) -> usize {
        self.start
            .wrapping_add_signed(self.stride.wrapping_mul(i as isize))
    }

    /// Member `i`'s world rank, if there is a member `i`.
    pub fn get(&self, i: usize) -> Option<usize> {
        (i < self.size).then(|| self.pe(i))
    }

    pub fn len(&self) -> usize {
        self.size
    }

    /// The member index of world rank `pe`.
    pub fn index_of(&self, pe: usize) -> Option<usize> {
        let d = (pe as isize).checked_sub(self.start as isize)?;
        if self.stride == 0 {
            return (d == 0).then_some(0);
        }
        let i = usize::try_from(d / self.stride).ok()?;
        (d % self.stride == 0 && i < self.size).then_some(i)
    }

    pub fn members(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.size).map(|i| self.pe(i))
    }

    /// The members `start + i * stride` (`i < size`) of this set, as world ranks, if
    /// every one of them is a member and no two coincide (a stride of 0 only for one).
    pub fn sub(&self, start: usize, stride: isize, size: usize) -> Option<Set> {
        if stride == 0 && size > 1 {
            return None;
        }
        let last =
            (start as isize).checked_add(stride.checked_mul(size.checked_sub(1)? as isize)?)?;
        let last = usize::try_from(last).ok()?;
        if start >= self.size || last >= self.size {
            return None;
        }
        Some(Set {
            start: self.pe(start),
            stride: stride.checked_mul(self.stride)?,
            size,
        })
    }
}

pub(super) fn fail(call: &str, what: &str, e: memchan::Error) -> ! {
    die(call, format!("{what}: {e}"))
}

/// Waits until this PE's word at heap offset `off` satisfies `ok`.
fn wait_word(p: &Pe, off: usize, ok: impl Fn(u64) -> bool) {
    let mut idle = memchan::idle::SHMEM_WAIT.waiter();
    // SAFETY: `off` is an 8-aligned word of this PE's heap mapping (checked by the
    // callers: a pSync or the library area).
    while !ok(unsafe { atomic::load::<u64>(p.base + off) }) {
        idle.idle();
    }
}

/// The barrier `coll.rs`'s module doc describes, over `set` on the pSync words at `ps`; over every
/// PE, the cluster's own barrier instead.
pub fn barrier(call: &str, p: &mut Handles, set: &Set, ps: usize) {
    if set.size > 1 && set.size == p.pes.len() {
        // Every PE is every member of the cluster: its barrier orders the puts the
        // same way and is one request the waiting thread answers itself (through a
        // hub one ack and one arrival, read from the link by the blocked caller),
        // where the pSync one adds a remote fetch-add and a spinning wait for a put
        // that a busy host's scheduler may hold back for milliseconds.
        if let Err(e) = p.cluster.barrier() {
            fail(call, "the barrier over every PE", e);
        }
        return;
    }
    if let Err(e) = p.cluster.ack() {
        fail(call, "completing this PE's puts", e);
    }
    if set.size == 1 {
        return;
    }
    let first = set.pe(0);
    if p.me == first {
        let others = (set.size - 1) as u64;
        wait_word(p, ps, |v| v >= others);
        // SAFETY: `ps` is this PE's 8-aligned pSync word 0 (checked by the caller).
        unsafe { atomic::store_u64(p.base + ps, 0) };
        for m in set.members().skip(1) {
            if let Err(e) = p.tx(call, m).write_u64(ps + 8, 1) {
                fail(call, &format!("releasing PE {m}"), e);
            }
        }
    } else {
        if let Err(e) = p.rma.fetch_add_u64(p.pes[first], ps, 1) {
            fail(call, &format!("arriving at PE {first}"), e);
        }
        wait_word(p, ps + 8, |v| v != 0);
        // SAFETY: `ps + 8` is this PE's 8-aligned pSync word 1.
        unsafe { atomic::store_u64(p.base + ps + 8, 0) };
    }
}

/// Puts `data` at heap offset `off` of PE `to`.
pub(super) fn put(call: &str, p: &mut Handles, to: usize, off: usize, data: &[u8]) {
    if let Err(e) = p.tx(call, to).write(off, data) {
        fail(call, &format!("writing {} bytes to PE {to}", data.len()), e);
    }
}

/// Writes `data` at heap offset `off` of this PE's own copy, word by word through
/// atomics (other PEs read and write the segment), without the ordered path a tx
/// mapping to oneself takes: a collective writes only bytes no other member
/// touches before its closing barrier.
fn store_own(p: &Handles, off: usize, data: &[u8]) {
    let at = p.base + off;
    // Bytes up to the first 8-aligned address, whole words, then the tail.
    let head = at.next_multiple_of(8).saturating_sub(at).min(data.len());
    let (first, rest) = data.split_at(head);
    let (words, tail) = rest.split_at(rest.len() & !7);
    let store_bytes = |addr: usize, bytes: &[u8]| {
        for (i, &b) in bytes.iter().enumerate() {
            // SAFETY: `addr + i` lies in this PE's heap mapping (the caller's
            // `off + data.len()` is within the segment).
            unsafe { AtomicU8::from_ptr((addr + i) as *mut u8) }.store(b, Ordering::Relaxed);
        }
    };
    store_bytes(at, first);
    for (i, w) in words.chunks_exact(8).enumerate() {
        let v = u64::from_ne_bytes(w.try_into().expect("8 bytes"));
        // SAFETY: 8-aligned (past `head`) and within the heap mapping, as above.
        unsafe { AtomicU64::from_ptr((at + head + 8 * i) as *mut u64) }.store(v, Ordering::Relaxed);
    }
    store_bytes(at + head + words.len(), tail);
}

/// Puts `data` at heap offset `off` of member `m`; this PE's own copy directly.
pub fn deposit(call: &str, p: &mut Handles, m: usize, off: usize, data: &[u8]) {
    if m == p.me {
        store_own(p, off, data);
    } else {
        put(call, p, m, off, data);
    }
}
