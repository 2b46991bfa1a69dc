//! OpenSHMEM's profiling interface (1.5, section 10): every routine is also exported
//! under its name-shifted `pshmem_` name, so that a profiling library can define
//! `shmem_X`, measure, and call `pshmem_X` to reach libmemchan's. `include/pshmem.h`
//! declares them.
//!
//! The typed families get their `pshmem_` entries from `build.rs` beside the
//! `shmem_` ones; this file lists the rest, each against the function it enters (the
//! compiler checks the signature; a test checks that the library exports a `pshmem_`
//! name for every `shmem_` one and no other). They are functions of their own, not
//! linker aliases, because rustc exports only the symbols it defines.
//!
//! The call inside each entry is a Rust call, bound when libmemchan is built: a
//! profiling library's own `shmem_X` is never re-entered through it.

#![allow(non_snake_case, clippy::too_many_arguments)]

use super::coll;
use super::misc;
use super::sync;
use super::team::{self, Config};
use super::Team;
use std::ffi::{c_char, c_int, c_long, c_void};

/// `fn pshmem_X(PARAMS) -> RET = path::shmem_X;` exports `pshmem_X` calling
/// `shmem_X`; `unsafe fn` for the routines whose callers keep a contract.
macro_rules! entries {
    ($(fn $p:ident($($a:ident: $t:ty),* $(,)?) $(-> $r:ty)? = $f:path;)*
     $(unsafe fn $up:ident($($ua:ident: $ut:ty),* $(,)?) $(-> $ur:ty)? = $uf:path;)*) => {
        $(
            #[doc = concat!("`", stringify!($p), "`: the profiling interface's entry to `", stringify!($f), "`.")]
            #[no_mangle]
            pub extern "C" fn $p($($a: $t),*) $(-> $r)? { $f($($a),*) }
        )*
        $(
            #[doc = concat!("`", stringify!($up), "`: the profiling interface's entry to `", stringify!($uf), "`.")]
            ///
            /// # Safety
            /// The contract of the routine it enters.
            #[no_mangle]
            pub unsafe extern "C" fn $up($($ua: $ut),*) $(-> $ur)? {
                // SAFETY: the caller keeps the entered routine's contract.
                unsafe { $uf($($ua),*) }
            }
        )*
    };
}

entries! {
    fn pshmem_init() = crate::shmem_init;
    fn pshmem_finalize() = crate::shmem_finalize;
    fn pshmem_my_pe() -> c_int = crate::shmem_my_pe;
    fn pshmem_n_pes() -> c_int = crate::shmem_n_pes;
    fn pshmem_malloc(size: usize) -> *mut c_void = crate::shmem_malloc;
    fn pshmem_free(ptr: *mut c_void) = crate::shmem_free;
    fn pshmem_quiet() = crate::shmem_quiet;
    fn pshmem_fence() = crate::shmem_fence;
    fn pshmem_barrier_all() = crate::shmem_barrier_all;
    fn pshmem_barrier(start: c_int, log: c_int, size: c_int, psync: *mut c_long) = coll::shmem_barrier;
    fn pshmem_sync(start: c_int, log: c_int, size: c_int, psync: *mut c_long) = coll::shmem_sync;
    fn pshmem_sync_all() = coll::shmem_sync_all;
    fn pshmem_team_sync(team: Team) -> c_int = coll::shmem_team_sync;
    fn pshmem_align(alignment: usize, size: usize) -> *mut c_void = misc::shmem_align;
    fn pshmem_malloc_with_hints(size: usize, hints: c_long) -> *mut c_void = misc::shmem_malloc_with_hints;
    fn pshmem_calloc(count: usize, size: usize) -> *mut c_void = misc::shmem_calloc;
    fn pshmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void = misc::shmem_realloc;
    fn pshmem_ptr(dest: *const c_void, pe: c_int) -> *mut c_void = misc::shmem_ptr;
    fn pshmem_pe_accessible(pe: c_int) -> c_int = misc::shmem_pe_accessible;
    fn pshmem_addr_accessible(addr: *const c_void, pe: c_int) -> c_int = misc::shmem_addr_accessible;
    fn pshmem_global_exit(status: c_int) = misc::shmem_global_exit;
    fn pshmem_swap(target: *mut c_long, value: c_long, pe: c_int) -> c_long = misc::shmem_swap;
    fn pshmem_pcontrol(level: c_int) = misc::shmem_pcontrol;
    fn pshmem_clear_cache_inv() = misc::shmem_clear_cache_inv;
    fn pshmem_set_cache_inv() = misc::shmem_set_cache_inv;
    fn pshmem_clear_cache_line_inv(dest: *mut c_void) = misc::shmem_clear_cache_line_inv;
    fn pshmem_set_cache_line_inv(dest: *mut c_void) = misc::shmem_set_cache_line_inv;
    fn pshmem_udcflush() = misc::shmem_udcflush;
    fn pshmem_udcflush_line(dest: *mut c_void) = misc::shmem_udcflush_line;
    fn pshmem_set_lock(lock_word: *mut c_long) = sync::shmem_set_lock;
    fn pshmem_test_lock(lock_word: *mut c_long) -> c_int = sync::shmem_test_lock;
    fn pshmem_clear_lock(lock_word: *mut c_long) = sync::shmem_clear_lock;
    fn pshmem_wait(ivar: *mut c_long, value: c_long) = sync::shmem_wait;
    fn pshmem_wait_until(ivar: *mut c_long, cmp: c_int, value: c_long) = sync::shmem_wait_until;
    fn pshmem_signal_fetch(sig_addr: *const u64) -> u64 = sync::shmem_signal_fetch;
    fn pshmem_signal_wait_until(sig_addr: *mut u64, cmp: c_int, value: u64) -> u64 = sync::shmem_signal_wait_until;
    fn pshmem_team_my_pe(team: Team) -> c_int = team::shmem_team_my_pe;
    fn pshmem_team_n_pes(team: Team) -> c_int = team::shmem_team_n_pes;
    fn pshmem_team_translate_pe(src_team: Team, src_pe: c_int, dest_team: Team) -> c_int = team::shmem_team_translate_pe;
    fn pshmem_team_ptr(team: Team, dest: *const c_void, pe: c_int) -> *mut c_void = team::shmem_team_ptr;
    fn pshmem_team_destroy(team: Team) = team::shmem_team_destroy;
    fn pshmem_ctx_destroy(ctx: *mut c_void) = team::shmem_ctx_destroy;

    unsafe fn pshmem_putmem(dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = crate::shmem_putmem;
    unsafe fn pshmem_getmem(dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) = crate::shmem_getmem;
    unsafe fn pshmem_broadcastmem(team: Team, dest: *mut c_void, source: *const c_void, nelems: usize, PE_root: c_int) -> c_int = coll::shmem_broadcastmem;
    unsafe fn pshmem_collectmem(team: Team, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int = coll::shmem_collectmem;
    unsafe fn pshmem_fcollectmem(team: Team, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int = coll::shmem_fcollectmem;
    unsafe fn pshmem_alltoallmem(team: Team, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int = coll::shmem_alltoallmem;
    unsafe fn pshmem_alltoallsmem(team: Team, dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize) -> c_int = coll::shmem_alltoallsmem;
    unsafe fn pshmem_broadcast32(dest: *mut c_void, source: *const c_void, nelems: usize, PE_root: c_int, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_broadcast32;
    unsafe fn pshmem_broadcast64(dest: *mut c_void, source: *const c_void, nelems: usize, PE_root: c_int, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_broadcast64;
    unsafe fn pshmem_collect32(dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_collect32;
    unsafe fn pshmem_collect64(dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_collect64;
    unsafe fn pshmem_fcollect32(dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_fcollect32;
    unsafe fn pshmem_fcollect64(dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_fcollect64;
    unsafe fn pshmem_alltoall32(dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_alltoall32;
    unsafe fn pshmem_alltoall64(dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_alltoall64;
    unsafe fn pshmem_alltoalls32(dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_alltoalls32;
    unsafe fn pshmem_alltoalls64(dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = coll::shmem_alltoalls64;
    unsafe fn pshmem_info_get_version(major: *mut c_int, minor: *mut c_int) = misc::shmem_info_get_version;
    unsafe fn pshmem_info_get_name(name: *mut c_char) = misc::shmem_info_get_name;
    unsafe fn pshmem_init_thread(requested: c_int, provided: *mut c_int) -> c_int = misc::shmem_init_thread;
    unsafe fn pshmem_query_thread(provided: *mut c_int) = misc::shmem_query_thread;
    unsafe fn pshmem_team_get_config(team: Team, mask: c_long, config: *mut Config) -> c_int = team::shmem_team_get_config;
    unsafe fn pshmem_team_split_strided(parent: Team, start: c_int, stride: c_int, size: c_int, config: *const Config, mask: c_long, new_team: *mut Team) -> c_int = team::shmem_team_split_strided;
    unsafe fn pshmem_team_split_2d(parent: Team, xrange: c_int, xconfig: *const Config, xmask: c_long, xteam: *mut Team, yconfig: *const Config, ymask: c_long, yteam: *mut Team) -> c_int = team::shmem_team_split_2d;
    unsafe fn pshmem_ctx_create(options: c_long, ctx: *mut *mut c_void) -> c_int = team::shmem_ctx_create;
    unsafe fn pshmem_team_create_ctx(team: Team, options: c_long, ctx: *mut *mut c_void) -> c_int = team::shmem_team_create_ctx;
    unsafe fn pshmem_ctx_get_team(ctx: *mut c_void, team: *mut Team) -> c_int = team::shmem_ctx_get_team;
}
