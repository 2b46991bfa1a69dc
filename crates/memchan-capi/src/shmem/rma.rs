//! Typed and sized puts and gets over `lib.rs`'s [`put`](crate::put) and
//! [`get`](crate::get): element counts, single values, strided (`iput`/`iget`) and
//! put-with-signal.
//!
//! The `_nbi` forms are these same calls: a put is already posted (complete at the
//! next `shmem_quiet`, memchan's `ack`), and a get returns complete, which the
//! standard allows.

use crate::{die, with_pe};
use memchan::{Shape, SignalOp};
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

/// `n` elements of `es` bytes, in bytes; the end naming `call` on overflow.
fn bytes(call: &str, n: usize, es: usize) -> usize {
    n.checked_mul(es)
        .unwrap_or_else(|| die(call, format!("{n} elements of {es} bytes overflow")))
}

/// # Safety
/// `src` is readable for `n * es` bytes.
pub unsafe fn put_elems(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    n: usize,
    es: usize,
    pe: c_int,
) {
    // SAFETY: forwarded caller contract.
    unsafe { crate::put(call, dest, src, bytes(call, n, es), pe) }
}

/// # Safety
/// `dest` is writable for `n * es` bytes.
pub unsafe fn get_elems(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    n: usize,
    es: usize,
    pe: c_int,
) {
    // SAFETY: forwarded caller contract.
    unsafe { crate::get(call, dest, src, bytes(call, n, es), pe) }
}

/// `shmem_TYPE_p`.
///
/// # Safety
/// None beyond `put`'s checks: the source is a local.
pub unsafe fn p<T: Copy>(call: &str, dest: *mut T, value: T, pe: c_int) {
    // SAFETY: `value` is a live local of `size_of::<T>()` bytes.
    unsafe {
        crate::put(
            call,
            dest.cast(),
            (&raw const value).cast(),
            size_of::<T>(),
            pe,
        )
    }
}

/// `shmem_TYPE_g`. `T` is a C scalar type: every bit pattern is a value.
///
/// # Safety
/// None beyond `get`'s checks: the destination is a local.
pub unsafe fn g<T: Copy>(call: &str, source: *const T, pe: c_int) -> T {
    let mut v = MaybeUninit::<T>::uninit();
    // SAFETY: `v` is writable for `size_of::<T>()` bytes; `get` fills all of them or
    // ends the process.
    unsafe {
        crate::get(
            call,
            v.as_mut_ptr().cast(),
            source.cast(),
            size_of::<T>(),
            pe,
        );
        v.assume_init()
    }
}

/// Byte strides and spans of a strided transfer: (dest stride, source stride, dest
/// span, source span), the end naming `call` for a stride below 1 or an overflow.
fn strides(
    call: &str,
    dst: isize,
    sst: isize,
    n: usize,
    es: usize,
) -> (usize, usize, usize, usize) {
    let (Ok(d), Ok(s)) = (usize::try_from(dst), usize::try_from(sst)) else {
        die(
            call,
            format!("strides must be at least 1 (dst {dst}, sst {sst})"),
        )
    };
    if d == 0 || s == 0 {
        die(
            call,
            format!("strides must be at least 1 (dst {dst}, sst {sst})"),
        );
    }
    let span = |stride: usize| {
        stride
            .checked_mul(es)
            .and_then(|b| Some((b, b.checked_mul(n - 1)?.checked_add(es)?)))
            .unwrap_or_else(|| die(call, format!("{n} elements {stride} apart overflow")))
    };
    let ((db, dspan), (sb, sspan)) = (span(d), span(s));
    (db, sb, dspan, sspan)
}

/// `shmem_TYPE_iput`: element `i` of `src` (every `sst`th) to element `i * dst` of
/// `dest` on `pe`, in one strided deposit.
///
/// # Safety
/// `src` is readable for its span (`(n - 1) * sst + 1` elements).
#[allow(clippy::too_many_arguments)]
pub unsafe fn iput(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    dst: isize,
    sst: isize,
    n: usize,
    es: usize,
    pe: c_int,
) {
    if n == 0 {
        return;
    }
    let (db, sb, dspan, sspan) = strides(call, dst, sst, n, es);
    if src.is_null() {
        die(call, "source is NULL");
    }
    with_pe(call, |p| {
        let target = p.check_pe(call, pe);
        let off = p.offset(call, dest, dspan);
        // SAFETY: the caller promises `src` is readable for its span (non-null, checked).
        let data = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), sspan) };
        let shape = Shape {
            elem: es,
            count: n,
            src_stride: sb,
            dst_stride: db,
            offset: off,
        };
        if let Err(e) = p.tx(call, target).put_strided(&shape, data) {
            die(call, format!("writing {n} elements to PE {pe}: {e}"));
        }
    })
}

/// `shmem_TYPE_iget`: element `i * sst` of `src` on `pe` to element `i * dst` of
/// `dest`, one get per element.
///
/// # Safety
/// `dest` is writable for its span (`(n - 1) * dst + 1` elements).
#[allow(clippy::too_many_arguments)]
pub unsafe fn iget(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    dst: isize,
    sst: isize,
    n: usize,
    es: usize,
    pe: c_int,
) {
    if n == 0 {
        return;
    }
    let (db, sb, dspan, sspan) = strides(call, dst, sst, n, es);
    if dest.is_null() {
        die(call, "destination is NULL");
    }
    with_pe(call, |p| {
        let target = p.check_pe(call, pe);
        let off = p.offset(call, src, sspan);
        // SAFETY: the caller promises `dest` is writable for its span (non-null, checked).
        let out = unsafe { std::slice::from_raw_parts_mut(dest.cast::<u8>(), dspan) };
        for i in 0..n {
            let buf = &mut out[i * db..][..es];
            let at = off + i * sb;
            let got = if target == p.me {
                p.read_own(at, buf)
            } else {
                p.rma.get(p.pes[target], at, buf)
            };
            if let Err(e) = got {
                die(call, format!("reading element {i} from PE {pe}: {e}"));
            }
        }
    })
}

/// `shmem_put_signal` (and the typed forms): the data, then the 8-byte signal word
/// set to or increased by `signal`, both on `pe`; the signal lands after the data.
///
/// # Safety
/// `src` is readable for `n * es` bytes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn put_signal(
    call: &str,
    dest: *mut c_void,
    src: *const c_void,
    n: usize,
    es: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
) {
    let len = bytes(call, n, es);
    let op = match sig_op {
        0 => SignalOp::Set,
        1 => SignalOp::Add,
        _ => die(
            call,
            format!("sig_op {sig_op} is neither SHMEM_SIGNAL_SET (0) nor SHMEM_SIGNAL_ADD (1)"),
        ),
    };
    if len > 0 && src.is_null() {
        die(call, "source is NULL");
    }
    with_pe(call, |p| {
        let target = p.check_pe(call, pe);
        let off = p.span_offset(call, dest, len);
        let sig = p.offset(call, sig_addr.cast_const().cast(), 8);
        if !sig.is_multiple_of(8) {
            die(
                call,
                format!("signal word {sig_addr:p} is not 8-byte aligned"),
            );
        }
        let data: &[u8] = if len == 0 {
            &[]
        } else {
            // SAFETY: the caller promises `src` is readable for `len` bytes (non-null).
            unsafe { std::slice::from_raw_parts(src.cast::<u8>(), len) }
        };
        if let Err(e) = p.tx(call, target).put_signal(off, data, sig, op, signal) {
            die(call, format!("put with signal to PE {pe}: {e}"));
        }
    })
}
