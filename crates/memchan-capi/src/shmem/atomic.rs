//! Atomics on symmetric words: on another PE through the heap's [`Rma`](memchan::Rma)
//! handle, on this PE with the CPU's atomics on its own copy (which `Rma` documents
//! as atomic against its own operations).

use crate::{die, with_pe};
use memchan::AtomicOp;
use std::ffi::c_int;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// A C scalar as the bits of its word (zero-extended to 64).
pub trait Word: Copy + PartialOrd {
    /// The value's bits, zero-extended.
    fn bits(self) -> u64;
    /// The value of the low `size_of::<Self>()` bytes of `b`.
    fn of_bits(b: u64) -> Self;
}

macro_rules! int_word {
    ($($t:ty => $u:ty),*) => {$(
        impl Word for $t {
            fn bits(self) -> u64 {
                self as $u as u64
            }
            fn of_bits(b: u64) -> Self {
                b as $u as $t
            }
        }
    )*};
}
int_word!(i8 => u8, u8 => u8, i16 => u16, u16 => u16, i32 => u32, u32 => u32, i64 => u64, u64 => u64, isize => usize, usize => usize);

impl Word for f32 {
    fn bits(self) -> u64 {
        self.to_bits().into()
    }
    fn of_bits(b: u64) -> Self {
        f32::from_bits(b as u32)
    }
}

impl Word for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn of_bits(b: u64) -> Self {
        f64::from_bits(b)
    }
}

/// Runs `op` on the aligned `width`-byte word at `addr` with the CPU's atomics;
/// returns the old value.
///
/// # Safety
/// `addr` is mapped, aligned to `width` (4 or 8), and reached only atomically.
unsafe fn local(addr: usize, width: usize, op: AtomicOp) -> u64 {
    macro_rules! run {
        ($a:ty, $t:ty) => {{
            // SAFETY: the caller's contract (mapped, aligned, atomics only).
            let w = unsafe { <$a>::from_ptr(addr as *mut $t) };
            let o = Ordering::SeqCst;
            u64::from(match op {
                AtomicOp::Fetch => w.load(o),
                AtomicOp::Set(v) | AtomicOp::Swap(v) => w.swap(v as $t, o),
                AtomicOp::Add(v) | AtomicOp::FetchAdd(v) => w.fetch_add(v as $t, o),
                AtomicOp::CompareSwap { expected, new } => {
                    match w.compare_exchange(expected as $t, new as $t, o, o) {
                        Ok(v) | Err(v) => v,
                    }
                }
                AtomicOp::FetchAnd(v) => w.fetch_and(v as $t, o),
                AtomicOp::FetchOr(v) => w.fetch_or(v as $t, o),
                AtomicOp::FetchXor(v) => w.fetch_xor(v as $t, o),
            })
        }};
    }
    if width == 8 {
        run!(AtomicU64, u64)
    } else {
        run!(AtomicU32, u32)
    }
}

/// `op` on the symmetric `T` at `dest` of PE `pe` (T of 4 or 8 bytes); the old value.
pub fn amo<T: Word>(call: &str, dest: *const T, pe: c_int, op: AtomicOp) -> T {
    let w = size_of::<T>();
    with_pe(call, |p| {
        let t = p.check_pe(call, pe);
        let off = p.offset(call, dest.cast(), w);
        if !off.is_multiple_of(w) {
            die(call, format!("{dest:p} is not {w}-byte aligned"));
        }
        let old = if t == p.me {
            // SAFETY: `off..off + w` lies in this PE's heap mapping (checked), aligned
            // (the mapping is page-aligned); other PEs reach it only through atomics.
            unsafe { local(p.base + off, w, op) }
        } else if w == 8 {
            p.rma
                .atomic_u64(p.pes[t], off, op)
                .unwrap_or_else(|e| die(call, format!("on PE {pe}: {e}")))
        } else {
            p.rma
                .atomic_u32(p.pes[t], off, op)
                .map(u64::from)
                .unwrap_or_else(|e| die(call, format!("on PE {pe}: {e}")))
        };
        T::of_bits(old)
    })
}

/// A nonblocking fetching atomic (`shmem_*_atomic_*_nbi`): the blocking operation
/// `op`, its fetched value stored at the caller's `fetch` (completion at return is
/// allowed: the next quiet would find it done). A bad `fetch` stops the call before
/// the operation.
pub fn fetch_nbi<T: Word>(call: &str, fetch: *mut T, op: impl FnOnce() -> T) {
    if fetch.is_null() || !fetch.is_aligned() {
        die(
            call,
            format!("fetch address {fetch:p} is null or misaligned"),
        );
    }
    let old = op();
    // SAFETY: non-null and aligned (checked); the caller passes a `TYPE *` of its
    // own (a local object, the OpenSHMEM contract of `fetch`).
    unsafe { fetch.write(old) };
}

/// Atomic load of this PE's `T` (1, 2, 4 or 8 bytes) at `addr`.
///
/// # Safety
/// `addr` is mapped and aligned to `size_of::<T>()`.
pub unsafe fn load<T: Word>(addr: usize) -> T {
    let o = Ordering::Acquire;
    // SAFETY: each arm's pointer is the caller's mapped, aligned `addr`.
    let b = unsafe {
        match size_of::<T>() {
            1 => u64::from(AtomicU8::from_ptr(addr as *mut u8).load(o)),
            2 => u64::from(AtomicU16::from_ptr(addr as *mut u16).load(o)),
            4 => u64::from(AtomicU32::from_ptr(addr as *mut u32).load(o)),
            _ => AtomicU64::from_ptr(addr as *mut u64).load(o),
        }
    };
    T::of_bits(b)
}

/// Atomic store of `v` into this PE's 8-byte word at `addr`.
///
/// # Safety
/// `addr` is mapped and 8-byte aligned.
pub unsafe fn store_u64(addr: usize, v: u64) {
    // SAFETY: the caller's contract.
    unsafe { AtomicU64::from_ptr(addr as *mut u64) }.store(v, Ordering::Release)
}
