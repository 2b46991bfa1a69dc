//! The rest of shmem.h's Rust side: heap extras (align/calloc/realloc), address
//! queries, global exit, version and name, threads.

use crate::{die, with_pe};
use std::ffi::{c_char, c_int, c_long, c_void};

use super::VERSION;
/// `SHMEM_VENDOR_STRING`, NUL-terminated.
const NAME: &[u8] = b"memchan\0";

#[no_mangle]
pub extern "C" fn shmem_align(alignment: usize, size: usize) -> *mut c_void {
    const CALL: &str = "shmem_align";
    if !alignment.is_power_of_two() {
        with_pe(CALL, |_| ());
        die(CALL, format!("alignment {alignment} is not a power of two"));
    }
    crate::malloc(CALL, size, alignment)
}

/// `shmem_malloc` with usage hints (`SHMEM_MALLOC_ATOMICS_REMOTE`,
/// `SHMEM_MALLOC_SIGNAL_REMOTE`): every block already serves atomics and signals, so
/// the hints change nothing, and bits no hint names are ignored as the standard
/// allows hints to be.
#[no_mangle]
pub extern "C" fn shmem_malloc_with_hints(size: usize, hints: c_long) -> *mut c_void {
    let _ = hints;
    crate::malloc("shmem_malloc_with_hints", size, crate::heap::ALIGN)
}

/// OpenSHMEM 1.0's `shmemalign`.
#[no_mangle]
pub extern "C" fn shmemalign(alignment: usize, size: usize) -> *mut c_void {
    shmem_align(alignment, size)
}

/// OpenSHMEM 1.0's `shrealloc`.
#[no_mangle]
pub extern "C" fn shrealloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    shmem_realloc(ptr, size)
}

/// NULL without a barrier when `count` or `size` is 0; else the zeroed block,
/// after the barrier (so no PE puts into it before its owner zeroed it).
#[no_mangle]
pub extern "C" fn shmem_calloc(count: usize, size: usize) -> *mut c_void {
    const CALL: &str = "shmem_calloc";
    let Some(len) = count.checked_mul(size) else {
        die(CALL, format!("{count} elements of {size} bytes overflow"))
    };
    if len == 0 {
        with_pe(CALL, |_| ());
        return std::ptr::null_mut();
    }
    let ptr = crate::alloc_block(CALL, len, crate::heap::ALIGN);
    // SAFETY: a new block of `len` bytes of this PE's heap mapping; no other PE
    // writes it before the barrier below (a correct program does not).
    unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, len) };
    crate::heap_barrier(CALL);
    ptr
}

/// As `shmem_malloc` for a NULL `ptr`, as `shmem_free` for `size` 0; else a
/// barrier on entry (no PE still uses the old block), the block kept if it holds
/// `size` or moved (contents copied), and a barrier on exit.
#[no_mangle]
pub extern "C" fn shmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    const CALL: &str = "shmem_realloc";
    if ptr.is_null() {
        return crate::malloc(CALL, size, crate::heap::ALIGN);
    }
    if size == 0 {
        crate::free(CALL, ptr);
        return std::ptr::null_mut();
    }
    let old_len = crate::block_len(CALL, ptr);
    crate::heap_barrier(CALL);
    let new = if size <= old_len {
        ptr
    } else {
        let new = crate::alloc_block(CALL, size, crate::heap::ALIGN);
        // SAFETY: both blocks are in this PE's heap mapping, `old_len` bytes each at
        // least, and distinct (the old one is still allocated); no other PE writes
        // either between the two barriers.
        unsafe { std::ptr::copy_nonoverlapping(ptr.cast::<u8>(), new.cast::<u8>(), old_len) };
        with_pe(CALL, |h| {
            let off = h.pe.offset(CALL, ptr, 0);
            h.pe.heap
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .free(off);
        });
        new
    };
    crate::heap_barrier(CALL);
    new
}

/// The address of `dest`'s copy on `pe` in this PE's address space, for loads and
/// stores: its own, or on one host another PE's heap segment mapped here once
/// (memchan's `Rma::peer_memory`, kept for the job's life); NULL for a PE outside
/// `SHMEM_TEAM_SHARED` (through a hub, another host's) or a refused mapping.
#[no_mangle]
pub extern "C" fn shmem_ptr(dest: *const c_void, pe: c_int) -> *mut c_void {
    const CALL: &str = "shmem_ptr";
    with_pe(CALL, |p| {
        let t = p.check_pe(CALL, pe);
        let off = p.offset(CALL, dest, 0);
        if t == p.me {
            return dest.cast_mut();
        }
        if p.shared.index_of(t).is_none() {
            return std::ptr::null_mut();
        }
        let mut peers = p.peers.lock().unwrap_or_else(|e| e.into_inner());
        if peers[t].is_none() {
            match p.rma.peer_memory(p.pes[t]) {
                Ok(m) => peers[t] = Some(m),
                Err(e) => {
                    tracing::debug!(pe = t, error = %e, "shmem_ptr: no load/store access");
                    return std::ptr::null_mut();
                }
            }
        }
        let base = peers[t].as_ref().expect("mapped above").as_ptr();
        // SAFETY: `off` is within the segment (checked by `offset`), which the
        // mapping covers whole.
        unsafe { base.add(off) }.cast()
    })
}

/// 1 if `pe` is a PE of this job.
#[no_mangle]
pub extern "C" fn shmem_pe_accessible(pe: c_int) -> c_int {
    with_pe("shmem_pe_accessible", |p| {
        c_int::from(usize::try_from(pe).is_ok_and(|r| r < p.pes.len()))
    })
}

/// 1 if `addr` is symmetric and `pe` a PE of this job.
#[no_mangle]
pub extern "C" fn shmem_addr_accessible(addr: *const c_void, pe: c_int) -> c_int {
    with_pe("shmem_addr_accessible", |p| {
        let ok_pe = usize::try_from(pe).is_ok_and(|r| r < p.pes.len());
        c_int::from(ok_pe && p.sym_offset(addr, 1).is_some())
    })
}

/// Ends this PE with `status` (C's `exit`: stdio flushed); a non-zero status ends
/// the whole job under `memchan run`, whose exit code it becomes.
#[no_mangle]
pub extern "C" fn shmem_global_exit(status: c_int) {
    crate::GLOBAL_EXIT.store(true, std::sync::atomic::Ordering::Release);
    std::process::exit(status)
}

/// # Safety
/// `major` and `minor` are writable `int`s.
#[no_mangle]
pub unsafe extern "C" fn shmem_info_get_version(major: *mut c_int, minor: *mut c_int) {
    if major.is_null() || minor.is_null() {
        die("shmem_info_get_version", "major or minor is NULL");
    }
    // SAFETY: the caller's contract; non-null checked.
    unsafe { (major.write(VERSION.0), minor.write(VERSION.1)) };
}

/// # Safety
/// `name` is writable for `SHMEM_MAX_NAME_LEN` bytes.
#[no_mangle]
pub unsafe extern "C" fn shmem_info_get_name(name: *mut c_char) {
    if name.is_null() {
        die("shmem_info_get_name", "name is NULL");
    }
    // SAFETY: the caller's contract (256 bytes, more than NAME); non-null checked.
    unsafe { std::ptr::copy_nonoverlapping(NAME.as_ptr().cast(), name, NAME.len()) };
}

/// Each thread calls through its own handles (the PE's shared parts behind mutexes),
/// so any thread level holds: the one asked for.
///
/// # Safety
/// `provided` is NULL or a writable `int`.
#[no_mangle]
pub unsafe extern "C" fn shmem_init_thread(requested: c_int, provided: *mut c_int) -> c_int {
    crate::shmem_init();
    if !provided.is_null() {
        // SAFETY: the caller's contract; non-null checked.
        unsafe { provided.write(requested.clamp(0, 3)) };
    }
    0
}

/// # Safety
/// `provided` is a writable `int`.
#[no_mangle]
pub unsafe extern "C" fn shmem_query_thread(provided: *mut c_int) {
    if provided.is_null() {
        die("shmem_query_thread", "provided is NULL");
    }
    // SAFETY: the caller's contract; non-null checked.
    unsafe { provided.write(3) };
}

/// OpenSHMEM 1.0's `shmem_swap` on a `long`.
#[no_mangle]
pub extern "C" fn shmem_swap(target: *mut c_long, value: c_long, pe: c_int) -> c_long {
    use super::atomic::{amo, Word};
    amo::<i64>(
        "shmem_swap",
        target,
        pe,
        memchan::AtomicOp::Swap(value.bits()),
    )
}

/// `shmem_pcontrol(level, ...)`: memchan has no profiling levels, so it does nothing;
/// it is an exported function (not an inline one) so that a profiling library can
/// define its own and see every call.
///
/// The C prototype is variadic and this definition reads only `level`: Rust cannot
/// define a C-variadic function, and on the System V x86-64 and AAPCS64 calling
/// conventions the named argument sits where a non-variadic function reads it.
#[no_mangle]
pub extern "C" fn shmem_pcontrol(level: c_int) {
    let _ = level;
}

/// Cache management (deprecated since 1.3): memchan's memory is coherent, so each
/// routine does nothing; exported so that old programs link and profilers see them.
macro_rules! cache_no_ops {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: a no-op (coherent memory).")]
        #[no_mangle]
        pub extern "C" fn $name($($arg: $ty),*) {
            $(let _ = $arg;)*
        }
    )*};
}
cache_no_ops! {
    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_clear_cache_line_inv(dest: *mut c_void);
    shmem_set_cache_line_inv(dest: *mut c_void);
    shmem_udcflush();
    shmem_udcflush_line(dest: *mut c_void);
}
