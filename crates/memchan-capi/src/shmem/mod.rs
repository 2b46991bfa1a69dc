//! The OpenSHMEM families of `include/shmem.h` beyond setup and the heap (which
//! `lib.rs` holds): typed and sized RMA, atomics, point-to-point synchronization,
//! locks, collectives, teams, contexts and queries.
//!
//! The typed families are not written here by hand: `build.rs` expands them from the
//! one type table, `table.rs`, into thin exported functions (`generated`) over the
//! generic helpers of [`rma`], [`atomic`], [`sync`] and [`coll`], and into the C
//! prototypes that `include/shmem.h` carries between its GENERATED markers.

pub mod atomic;
pub mod coll;
mod misc;
mod profiling;
pub mod rma;
pub(crate) mod set;
pub mod statics;
pub mod sync;
pub mod sys;
pub mod team;

use std::ffi::c_void;

/// The version of the standard the header's SHMEM_MAJOR/MINOR_VERSION give.
pub(crate) const VERSION: (std::ffi::c_int, std::ffi::c_int) = (1, 5);

/// `shmem_team_t`: an opaque pointer in C, a small number here ([`team`]).
pub type Team = *const c_void;

/// The functions `build.rs` expanded from `table.rs`. Their parameter names are the
/// standard's (`PE_start`, `pSync`), hence the lint exception.
#[allow(non_snake_case, clippy::too_many_arguments)]
mod generated {
    use super::atomic::{self, Word};
    use super::{coll, rma, sync, Team};
    use memchan::AtomicOp;
    use std::ffi::{c_int, c_void};

    include!(concat!(env!("OUT_DIR"), "/shmem_gen.rs"));
}

#[cfg(test)]
mod tests {
    /// The prototypes `build.rs` derived from the type table.
    const GENERATED: &str = include_str!(concat!(env!("OUT_DIR"), "/shmem_gen.h"));
    const HEADER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include/shmem.h");
    const BEGIN: &str = "/* BEGIN GENERATED from src/shmem/table.rs by build.rs: do not edit. */\n";
    const END: &str = "/* END GENERATED */\n";

    /// include/shmem.h must carry exactly what the type table gives. With
    /// `MEMCHAN_BLESS=1` the test rewrites the block instead (then review the diff).
    #[test]
    fn header_matches_the_type_table() {
        let text = std::fs::read_to_string(HEADER).expect("read include/shmem.h");
        let (head, rest) = text.split_once(BEGIN).expect("BEGIN GENERATED marker");
        let (block, tail) = rest.split_once(END).expect("END GENERATED marker");
        if block == GENERATED {
            return;
        }
        if std::env::var_os("MEMCHAN_BLESS").is_some() {
            std::fs::write(HEADER, format!("{head}{BEGIN}{GENERATED}{END}{tail}"))
                .expect("write include/shmem.h");
            return;
        }
        panic!("include/shmem.h's generated block is stale: run `MEMCHAN_BLESS=1 cargo test -p memchan-capi header` and review the diff");
    }

    /// include/pshmem.h must be what `build.rs` derives from include/shmem.h (with
    /// `MEMCHAN_BLESS=1` the test rewrites it instead).
    #[test]
    fn pshmem_h_matches_shmem_h() {
        const DERIVED: &str = include_str!(concat!(env!("OUT_DIR"), "/pshmem.h"));
        const PSHMEM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include/pshmem.h");
        if std::fs::read_to_string(PSHMEM).is_ok_and(|text| text == DERIVED) {
            return;
        }
        if std::env::var_os("MEMCHAN_BLESS").is_some() {
            std::fs::write(PSHMEM, DERIVED).expect("write include/pshmem.h");
            return;
        }
        panic!("include/pshmem.h is stale: run `MEMCHAN_BLESS=1 cargo test -p memchan-capi pshmem` and review the diff");
    }

    #[test]
    fn the_profiling_header_renames_routines_and_keeps_types() {
        const DERIVED: &str = include_str!(concat!(env!("OUT_DIR"), "/pshmem.h"));
        for line in [
            "void pshmem_putmem(void *dest, const void *source, size_t nelems, int pe);",
            "int pshmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size, const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team);",
            "static inline void pshmem_ctx_quiet(shmem_ctx_t ctx) { (void)ctx; pshmem_quiet(); }",
            "void pshmem_pcontrol(const int level, ...);",
            "long pshmem_long_atomic_fetch_add(long *dest, long value, int pe);",
        ] {
            assert!(DERIVED.contains(line), "missing: {line}");
        }
        // Only declarations and inline forms: no macro, no type, no other prefix.
        assert!(!DERIVED.contains("#define shmem") && !DERIVED.contains("#define pshmem"));
        assert!(!DERIVED.contains("typedef"));
        assert!(!DERIVED.contains(" shmem_putmem("));
    }

    #[test]
    fn the_table_gives_every_family_its_old_and_new_names() {
        for name in [
            "void shmem_int_put(int *dest, const int *source, size_t nelems, int pe);",
            "void shmem_longdouble_iget(",
            "int shmem_longdouble_sum_reduce(shmem_team_t team, long double *dest, const long double *source, size_t nreduce);",
            "void shmem_complexf_prod_to_all(float _Complex *dest,",
            "#define shmem_sum_reduce(team, dest, source, nreduce) _Generic(*(dest),",
            "void shmem_put64_nbi(void *dest, const void *source, size_t nelems, int pe);",
            "int shmem_int_fadd(int *dest, int value, int pe);",
            "long long shmem_longlong_atomic_compare_swap(long long *dest, long long cond, long long value, int pe);",
            "unsigned int shmem_uint_atomic_fetch_xor(",
            "double shmem_double_atomic_fetch(const double *dest, int pe);",
            "void shmem_short_wait_until(volatile short *ivar, int cmp, short cmp_value);",
            "void shmem_double_max_to_all(double *dest, const double *source, int nreduce, int PE_start, int logPE_stride, int PE_size, double *pWrk, long *pSync);",
            "int shmem_uint64_xor_reduce(shmem_team_t team, uint64_t *dest, const uint64_t *source, size_t nreduce);",
            "int shmem_float_broadcast(shmem_team_t team, float *dest, const float *source, size_t nelems, int PE_root);",
            "size_t shmem_uint64_wait_until_some_vector(uint64_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint64_t *cmp_values);",
            "static inline int shmem_ctx_int_atomic_fetch_add(shmem_ctx_t ctx, int *dest, int value, int pe) { (void)ctx; return shmem_int_atomic_fetch_add(dest, value, pe); }",
            "static inline void shmem_ctx_uint16_iput(shmem_ctx_t ctx, uint16_t *dest, const uint16_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)",
        ] {
            assert!(GENERATED.contains(name), "missing: {name}");
        }
        // Families the standard leaves out of a type stay out.
        for absent in [
            "shmem_float_atomic_fetch_add(",
            "shmem_int_atomic_fetch_and(",
            "shmem_double_and_to_all(",
            "shmem_complexd_max_reduce(",
            "shmem_complexf_and_to_all(",
            "shmem_ctx_int_fadd(",
        ] {
            assert!(!GENERATED.contains(absent), "should not exist: {absent}");
        }
    }
}
