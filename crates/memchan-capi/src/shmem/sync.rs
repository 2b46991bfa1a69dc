//! Point-to-point synchronization (`wait_until`, `test`, signals) and the
//! distributed locks, on this PE's copy of symmetric words.
//!
//! Waiting is the named idle strategy `memchan::idle::SHMEM_WAIT`: a short spin, then
//! yielding the core on every round, because PEs often share cores (`memchan run
//! --oversubscribe`). No lock is held while waiting.

use super::atomic::{self, Word};
use crate::{die, with_pe};
use memchan::AtomicOp;
use std::ffi::{c_int, c_long};

/// `SHMEM_CMP_EQ`...: the header's values.
pub const CMP_EQ: c_int = 0;
pub const CMP_NE: c_int = 1;
pub const CMP_GT: c_int = 2;
pub const CMP_LE: c_int = 3;
pub const CMP_LT: c_int = 4;
pub const CMP_GE: c_int = 5;

/// The comparison `cmp` names, or the end naming `call`.
fn comparison<T: PartialOrd>(call: &str, cmp: c_int) -> fn(&T, &T) -> bool {
    match cmp {
        CMP_EQ => T::eq,
        CMP_NE => T::ne,
        CMP_GT => T::gt,
        CMP_LE => T::le,
        CMP_LT => T::lt,
        CMP_GE => T::ge,
        _ => die(call, format!("{cmp} is not a SHMEM_CMP_* comparison")),
    }
}

/// This PE's address of the symmetric, aligned `T` at `ivar`, or the end naming `call`.
pub fn local_addr<T>(call: &str, ivar: *const T) -> usize {
    let w = size_of::<T>();
    with_pe(call, |p| {
        let off = p.offset(call, ivar.cast(), w);
        if !off.is_multiple_of(w) {
            die(call, format!("{ivar:p} is not {w}-byte aligned"));
        }
        p.base + off
    })
}

/// `shmem_TYPE_wait_until`: returns once `*ivar cmp value` holds.
pub fn wait_until<T: Word>(call: &str, ivar: *mut T, cmp: c_int, value: T) -> T {
    let f = comparison::<T>(call, cmp);
    let addr = local_addr(call, ivar.cast_const());
    let mut idle = memchan::idle::SHMEM_WAIT.waiter();
    loop {
        // SAFETY: `addr` is in this PE's heap mapping, aligned (checked above).
        let v = unsafe { atomic::load::<T>(addr) };
        if f(&v, &value) {
            return v;
        }
        idle.idle();
    }
}

/// `shmem_TYPE_test`: 1 if `*ivar cmp value` holds now, else 0.
pub fn test<T: Word>(call: &str, ivar: *mut T, cmp: c_int, value: T) -> c_int {
    let f = comparison::<T>(call, cmp);
    let addr = local_addr(call, ivar.cast_const());
    // SAFETY: `addr` is in this PE's heap mapping, aligned (checked above).
    c_int::from(f(&unsafe { atomic::load::<T>(addr) }, &value))
}

/// The lock word's owner value for this PE (0 means free).
fn owner(call: &str) -> i64 {
    with_pe(call, |p| p.me as i64 + 1)
}

/// Locks live on PE 0's copy of the symmetric `long`: 0 free, else holder rank + 1.
#[no_mangle]
pub extern "C" fn shmem_set_lock(lock_word: *mut c_long) {
    const CALL: &str = "shmem_set_lock";
    let me = owner(CALL);
    let mut idle = memchan::idle::SHMEM_WAIT.waiter();
    let cas = AtomicOp::CompareSwap {
        expected: 0,
        new: me.bits(),
    };
    while atomic::amo::<i64>(CALL, lock_word, 0, cas) != 0 {
        idle.idle();
    }
}

/// 0 if this call took the lock, 1 if another PE holds it.
#[no_mangle]
pub extern "C" fn shmem_test_lock(lock_word: *mut c_long) -> c_int {
    const CALL: &str = "shmem_test_lock";
    let me = owner(CALL);
    let cas = AtomicOp::CompareSwap {
        expected: 0,
        new: me.bits(),
    };
    c_int::from(atomic::amo::<i64>(CALL, lock_word, 0, cas) != 0)
}

/// Releases after this PE's puts are complete (quiet), so the next holder sees them.
#[no_mangle]
pub extern "C" fn shmem_clear_lock(lock_word: *mut c_long) {
    const CALL: &str = "shmem_clear_lock";
    let me = owner(CALL);
    if let Err(e) = with_pe(CALL, |p| p.cluster.ack().map_err(Box::new)) {
        die(CALL, e);
    }
    let cas = AtomicOp::CompareSwap {
        expected: me.bits(),
        new: 0,
    };
    let was = atomic::amo::<i64>(CALL, lock_word, 0, cas);
    if was != me {
        die(
            CALL,
            format!(
                "this PE does not hold the lock at {lock_word:p} (held by {})",
                if was == 0 {
                    "nobody".to_string()
                } else {
                    format!("PE {}", was - 1)
                }
            ),
        );
    }
}

/// OpenSHMEM 1.0's `shmem_wait`: returns once `*ivar != value`.
#[no_mangle]
pub extern "C" fn shmem_wait(ivar: *mut c_long, value: c_long) {
    wait_until("shmem_wait", ivar, CMP_NE, value);
}

/// OpenSHMEM 1.0's `shmem_wait_until` on a `long`.
#[no_mangle]
pub extern "C" fn shmem_wait_until(ivar: *mut c_long, cmp: c_int, value: c_long) {
    wait_until("shmem_wait_until", ivar, cmp, value);
}

/// The signal word's value now.
#[no_mangle]
pub extern "C" fn shmem_signal_fetch(sig_addr: *const u64) -> u64 {
    let addr = local_addr("shmem_signal_fetch", sig_addr);
    // SAFETY: in this PE's heap mapping, 8-byte aligned (checked).
    unsafe { atomic::load::<u64>(addr) }
}

/// Waits until the signal word satisfies `cmp value`; returns it.
#[no_mangle]
pub extern "C" fn shmem_signal_wait_until(sig_addr: *mut u64, cmp: c_int, value: u64) -> u64 {
    wait_until("shmem_signal_wait_until", sig_addr, cmp, value)
}

/// Which 1.5 multi-word wait or test: every active word, any one, or all that hold.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    All,
    Any,
    Some,
}

thread_local! {
    /// Where this thread's next `_any` scan starts.
    static ANY_NEXT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `shmem_TYPE_{wait_until,test}_{all,any,some}[_vector]` (OpenSHMEM 1.5) over the
/// `n` symmetric words at `ivars`, those with `status[i] != 0` left out (`status`
/// may be NULL), each compared with `values[i]` (or `value` when `values` is NULL).
/// `block` waits until the mode holds. Returns: All, 1 if it holds (0 for a test
/// that found it not to); Any, an index that holds or `usize::MAX`; Some, how many
/// hold, their indices written to `indices`. With no active word: All holds, Any is
/// `usize::MAX`, Some is 0, at once.
///
/// # Safety
/// `status` and `values` are NULL or readable for `n` elements; `indices` (Some) is
/// writable for `n`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn wait_set<T: Word>(
    call: &str,
    ivars: *mut T,
    n: usize,
    indices: *mut usize,
    status: *const c_int,
    cmp: c_int,
    values: *const T,
    value: T,
    mode: Mode,
    block: bool,
) -> usize {
    let f = comparison::<T>(call, cmp);
    if n == 0 {
        return if mode == Mode::Any {
            usize::MAX
        } else {
            usize::from(mode == Mode::All)
        };
    }
    if mode == Mode::Some && indices.is_null() {
        die(call, "indices is NULL");
    }
    let w = size_of::<T>();
    let base = {
        let len = n
            .checked_mul(w)
            .unwrap_or_else(|| die(call, format!("{n} words overflow")));
        with_pe(call, |p| {
            let off = p.offset(call, ivars.cast_const().cast(), len);
            if !off.is_multiple_of(w) {
                die(call, format!("{ivars:p} is not {w}-byte aligned"));
            }
            p.base + off
        })
    };
    let active = |i: usize| {
        // SAFETY: `i < n`; `status` readable for `n` (the caller's contract), not NULL.
        status.is_null() || unsafe { *status.add(i) } == 0
    };
    let want = |i: usize| {
        if values.is_null() {
            value
        } else {
            // SAFETY: `i < n`; `values` readable for `n` (the caller's contract).
            unsafe { *values.add(i) }
        }
    };
    // SAFETY: word `i < n` of the checked, aligned symmetric range.
    let holds = |i: usize| f(&unsafe { atomic::load::<T>(base + i * w) }, &want(i));
    // Any scans from just past the index it last returned (per thread), so that a
    // program polling with no status array meets every satisfied index in turn
    // rather than the lowest one forever.
    let from = if mode == Mode::Any {
        ANY_NEXT.with(|c| c.get()) % n
    } else {
        0
    };
    let mut idle = memchan::idle::SHMEM_WAIT.waiter();
    loop {
        let mut live = 0usize;
        let mut found = 0usize;
        for i in (from..n).chain(0..from).filter(|&i| active(i)) {
            live += 1;
            if holds(i) {
                match mode {
                    Mode::Any => {
                        ANY_NEXT.with(|c| c.set(i + 1));
                        return i;
                    }
                    // SAFETY: `found < n`; `indices` writable for `n` (the contract).
                    Mode::Some => unsafe { *indices.add(found) = i },
                    Mode::All => {}
                }
                found += 1;
            }
        }
        let done = match mode {
            Mode::All => found == live,
            Mode::Any => live == 0,
            Mode::Some => found > 0 || live == 0,
        };
        if done || !block {
            return match mode {
                Mode::All => usize::from(done),
                Mode::Any => usize::MAX,
                Mode::Some => found,
            };
        }
        idle.idle();
    }
}
