//! `include/shmem.h` against the OpenSHMEM 1.5 specification's list of names: every
//! routine, generic interface, constant and type the C binding defines, written out
//! here from the specification's sections and type tables (not from memchan's own
//! type table, `src/shmem/table.rs`, which this checks). A C file naming each one is
//! compiled as C11 with the system compiler; a missing name fails the build and the
//! test lists every one missing.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// Table 5 (standard RMA types): TYPENAME, TYPE.
const RMA: &[(&str, &str)] = &[
    ("float", "float"),
    ("double", "double"),
    ("longdouble", "long double"),
    ("char", "char"),
    ("schar", "signed char"),
    ("short", "short"),
    ("int", "int"),
    ("long", "long"),
    ("longlong", "long long"),
    ("uchar", "unsigned char"),
    ("ushort", "unsigned short"),
    ("uint", "unsigned int"),
    ("ulong", "unsigned long"),
    ("ulonglong", "unsigned long long"),
    ("int8", "int8_t"),
    ("int16", "int16_t"),
    ("int32", "int32_t"),
    ("int64", "int64_t"),
    ("uint8", "uint8_t"),
    ("uint16", "uint16_t"),
    ("uint32", "uint32_t"),
    ("uint64", "uint64_t"),
    ("size", "size_t"),
    ("ptrdiff", "ptrdiff_t"),
];

/// Table 6 (standard AMO types).
const AMO_STD: &[&str] = &[
    "int",
    "long",
    "longlong",
    "uint",
    "ulong",
    "ulonglong",
    "int32",
    "int64",
    "uint32",
    "uint64",
    "size",
    "ptrdiff",
];
/// Table 7 (extended AMO types): the standard ones and these.
const AMO_EXT: &[&str] = &["float", "double"];
/// Table 8 (bitwise AMO types).
const AMO_BIT: &[&str] = &[
    "uint",
    "ulong",
    "ulonglong",
    "int32",
    "int64",
    "uint32",
    "uint64",
];
/// Table 9 (point-to-point synchronization types).
const SYNC: &[&str] = &[
    "short",
    "int",
    "long",
    "longlong",
    "ushort",
    "uint",
    "ulong",
    "ulonglong",
    "int32",
    "int64",
    "uint32",
    "uint64",
    "size",
    "ptrdiff",
];
/// Table 10, AND/OR/XOR reductions.
const RED_BIT: &[&str] = &[
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "ulonglong",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "size",
];
/// Table 10, MAX/MIN reductions.
const RED_MINMAX: &[&str] = &[
    "char",
    "schar",
    "short",
    "int",
    "long",
    "longlong",
    "ptrdiff",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "ulonglong",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "size",
    "float",
    "double",
    "longdouble",
];
/// Table 10, SUM/PROD reductions: the MAX/MIN types and these.
const RED_CPLX: &[&str] = &["complexd", "complexf"];
/// The sized RMA routines' SIZEs.
const SIZES: &[&str] = &["8", "16", "32", "64", "128"];

/// Routines outside the typed families (sections 9.1-9.11), deprecated ones included.
const ROUTINES: &[&str] = &[
    "shmem_init",
    "shmem_init_thread",
    "shmem_query_thread",
    "shmem_finalize",
    "shmem_global_exit",
    "shmem_my_pe",
    "shmem_n_pes",
    "shmem_pe_accessible",
    "shmem_addr_accessible",
    "shmem_ptr",
    "shmem_team_ptr",
    "shmem_info_get_version",
    "shmem_info_get_name",
    "start_pes",
    "_my_pe",
    "_num_pes",
    "shmem_malloc",
    "shmem_free",
    "shmem_realloc",
    "shmem_align",
    "shmem_malloc_with_hints",
    "shmem_calloc",
    "shmalloc",
    "shfree",
    "shrealloc",
    "shmemalign",
    "shmem_team_my_pe",
    "shmem_team_n_pes",
    "shmem_team_get_config",
    "shmem_team_translate_pe",
    "shmem_team_split_strided",
    "shmem_team_split_2d",
    "shmem_team_destroy",
    "shmem_ctx_create",
    "shmem_team_create_ctx",
    "shmem_ctx_destroy",
    "shmem_ctx_get_team",
    "shmem_putmem",
    "shmem_getmem",
    "shmem_putmem_nbi",
    "shmem_getmem_nbi",
    "shmem_ctx_putmem",
    "shmem_ctx_getmem",
    "shmem_ctx_putmem_nbi",
    "shmem_ctx_getmem_nbi",
    "shmem_putmem_signal",
    "shmem_putmem_signal_nbi",
    "shmem_ctx_putmem_signal",
    "shmem_ctx_putmem_signal_nbi",
    "shmem_signal_fetch",
    "shmem_signal_wait_until",
    "shmem_barrier_all",
    "shmem_barrier",
    "shmem_sync_all",
    "shmem_team_sync",
    "shmem_alltoallmem",
    "shmem_alltoallsmem",
    "shmem_broadcastmem",
    "shmem_collectmem",
    "shmem_fcollectmem",
    "shmem_broadcast32",
    "shmem_broadcast64",
    "shmem_collect32",
    "shmem_collect64",
    "shmem_fcollect32",
    "shmem_fcollect64",
    "shmem_alltoall32",
    "shmem_alltoall64",
    "shmem_alltoalls32",
    "shmem_alltoalls64",
    "shmem_quiet",
    "shmem_fence",
    "shmem_ctx_quiet",
    "shmem_ctx_fence",
    "shmem_set_lock",
    "shmem_clear_lock",
    "shmem_test_lock",
    "shmem_pcontrol",
    "shmem_clear_cache_inv",
    "shmem_set_cache_inv",
    "shmem_clear_cache_line_inv",
    "shmem_set_cache_line_inv",
    "shmem_udcflush",
    "shmem_udcflush_line",
    "shmem_wait",
    "shmem_wait_until",
    "shmem_swap",
];

/// The C11 generic interfaces (function-like macros).
const GENERICS: &[&str] = &[
    "shmem_put",
    "shmem_get",
    "shmem_p",
    "shmem_g",
    "shmem_iput",
    "shmem_iget",
    "shmem_put_nbi",
    "shmem_get_nbi",
    "shmem_put_signal",
    "shmem_put_signal_nbi",
    "shmem_atomic_fetch",
    "shmem_atomic_set",
    "shmem_atomic_compare_swap",
    "shmem_atomic_swap",
    "shmem_atomic_fetch_inc",
    "shmem_atomic_inc",
    "shmem_atomic_fetch_add",
    "shmem_atomic_add",
    "shmem_atomic_fetch_and",
    "shmem_atomic_and",
    "shmem_atomic_fetch_or",
    "shmem_atomic_or",
    "shmem_atomic_fetch_xor",
    "shmem_atomic_xor",
    "shmem_atomic_fetch_nbi",
    "shmem_atomic_compare_swap_nbi",
    "shmem_atomic_swap_nbi",
    "shmem_atomic_fetch_inc_nbi",
    "shmem_atomic_fetch_add_nbi",
    "shmem_atomic_fetch_and_nbi",
    "shmem_atomic_fetch_or_nbi",
    "shmem_atomic_fetch_xor_nbi",
    "shmem_broadcast",
    "shmem_collect",
    "shmem_fcollect",
    "shmem_alltoall",
    "shmem_alltoalls",
    "shmem_and_reduce",
    "shmem_or_reduce",
    "shmem_xor_reduce",
    "shmem_max_reduce",
    "shmem_min_reduce",
    "shmem_sum_reduce",
    "shmem_prod_reduce",
    "shmem_wait_until",
    "shmem_wait_until_all",
    "shmem_wait_until_any",
    "shmem_wait_until_some",
    "shmem_wait_until_all_vector",
    "shmem_wait_until_any_vector",
    "shmem_wait_until_some_vector",
    "shmem_test",
    "shmem_test_all",
    "shmem_test_any",
    "shmem_test_some",
    "shmem_test_all_vector",
    "shmem_test_any_vector",
    "shmem_test_some_vector",
    "shmem_sync",
];

/// Constants (section 6, Tables 1-3 and the deprecated `_SHMEM_` spellings).
const CONSTANTS: &[&str] = &[
    "SHMEM_THREAD_SINGLE",
    "SHMEM_THREAD_FUNNELED",
    "SHMEM_THREAD_SERIALIZED",
    "SHMEM_THREAD_MULTIPLE",
    "SHMEM_TEAM_NUM_CONTEXTS",
    "SHMEM_TEAM_INVALID",
    "SHMEM_CTX_INVALID",
    "SHMEM_CTX_SERIALIZED",
    "SHMEM_CTX_PRIVATE",
    "SHMEM_CTX_NOSTORE",
    "SHMEM_SIGNAL_SET",
    "SHMEM_SIGNAL_ADD",
    "SHMEM_MALLOC_ATOMICS_REMOTE",
    "SHMEM_MALLOC_SIGNAL_REMOTE",
    "SHMEM_BARRIER_SYNC_SIZE",
    "SHMEM_BCAST_SYNC_SIZE",
    "SHMEM_REDUCE_SYNC_SIZE",
    "SHMEM_SYNC_SIZE",
    "SHMEM_COLLECT_SYNC_SIZE",
    "SHMEM_ALLTOALL_SYNC_SIZE",
    "SHMEM_ALLTOALLS_SYNC_SIZE",
    "SHMEM_REDUCE_MIN_WRKDATA_SIZE",
    "SHMEM_SYNC_VALUE",
    "SHMEM_CMP_EQ",
    "SHMEM_CMP_NE",
    "SHMEM_CMP_GT",
    "SHMEM_CMP_GE",
    "SHMEM_CMP_LT",
    "SHMEM_CMP_LE",
    "SHMEM_MAJOR_VERSION",
    "SHMEM_MINOR_VERSION",
    "SHMEM_MAX_NAME_LEN",
    "SHMEM_VENDOR_STRING",
    "_SHMEM_SYNC_VALUE",
    "_SHMEM_BARRIER_SYNC_SIZE",
    "_SHMEM_BCAST_SYNC_SIZE",
    "_SHMEM_REDUCE_SYNC_SIZE",
    "_SHMEM_COLLECT_SYNC_SIZE",
    "_SHMEM_REDUCE_MIN_WRKDATA_SIZE",
    "_SHMEM_MAJOR_VERSION",
    "_SHMEM_MINOR_VERSION",
    "_SHMEM_MAX_NAME_LEN",
    "_SHMEM_VENDOR_STRING",
    "_SHMEM_CMP_EQ",
    "_SHMEM_CMP_NE",
    "_SHMEM_CMP_GT",
    "_SHMEM_CMP_GE",
    "_SHMEM_CMP_LT",
    "_SHMEM_CMP_LE",
];

/// The predefined handles, usable as values.
const HANDLES: &[&str] = &["SHMEM_TEAM_WORLD", "SHMEM_TEAM_SHARED", "SHMEM_CTX_DEFAULT"];

/// Every routine name of the typed families, with and without `ctx_`.
fn typed_routines() -> Vec<String> {
    let mut v = Vec::new();
    let both = |v: &mut Vec<String>, name: String| {
        v.push(name.replacen("shmem_", "shmem_ctx_", 1));
        v.push(name);
    };
    for (t, _) in RMA {
        for op in [
            "put",
            "get",
            "p",
            "g",
            "iput",
            "iget",
            "put_nbi",
            "get_nbi",
            "put_signal",
            "put_signal_nbi",
        ] {
            both(&mut v, format!("shmem_{t}_{op}"));
        }
        for op in ["broadcast", "collect", "fcollect", "alltoall", "alltoalls"] {
            v.push(format!("shmem_{t}_{op}"));
        }
    }
    for s in SIZES {
        for op in ["put", "get", "iput", "iget"] {
            both(&mut v, format!("shmem_{op}{s}"));
        }
        for op in ["put", "get"] {
            both(&mut v, format!("shmem_{op}{s}_nbi"));
        }
        for op in ["_signal", "_signal_nbi"] {
            both(&mut v, format!("shmem_put{s}{op}"));
        }
    }
    let ext: Vec<&str> = AMO_STD.iter().chain(AMO_EXT).copied().collect();
    for t in &ext {
        for op in ["fetch", "set", "swap", "fetch_nbi", "swap_nbi"] {
            both(&mut v, format!("shmem_{t}_atomic_{op}"));
        }
    }
    for t in AMO_STD {
        for op in [
            "compare_swap",
            "fetch_inc",
            "inc",
            "fetch_add",
            "add",
            "compare_swap_nbi",
            "fetch_inc_nbi",
            "fetch_add_nbi",
        ] {
            both(&mut v, format!("shmem_{t}_atomic_{op}"));
        }
    }
    for t in AMO_BIT {
        for op in [
            "fetch_and",
            "and",
            "fetch_or",
            "or",
            "fetch_xor",
            "xor",
            "fetch_and_nbi",
            "fetch_or_nbi",
            "fetch_xor_nbi",
        ] {
            both(&mut v, format!("shmem_{t}_atomic_{op}"));
        }
    }
    // The deprecated AMO names (1.0-era, Table 6/7 of earlier versions).
    for t in ["int", "long", "longlong"] {
        for op in [
            "fetch", "set", "swap", "cswap", "finc", "inc", "fadd", "add",
        ] {
            v.push(format!("shmem_{t}_{op}"));
        }
    }
    for t in ["float", "double"] {
        for op in ["fetch", "set", "swap"] {
            v.push(format!("shmem_{t}_{op}"));
        }
    }
    for t in SYNC {
        for op in [
            "wait_until",
            "wait_until_all",
            "wait_until_any",
            "wait_until_some",
            "wait_until_all_vector",
            "wait_until_any_vector",
            "wait_until_some_vector",
            "test",
            "test_all",
            "test_any",
            "test_some",
            "test_all_vector",
            "test_any_vector",
            "test_some_vector",
        ] {
            v.push(format!("shmem_{t}_{op}"));
        }
    }
    for t in RED_BIT {
        for op in ["and", "or", "xor"] {
            v.push(format!("shmem_{t}_{op}_reduce"));
        }
    }
    for t in RED_MINMAX {
        for op in ["max", "min", "sum", "prod"] {
            v.push(format!("shmem_{t}_{op}_reduce"));
        }
    }
    for t in RED_CPLX {
        for op in ["sum", "prod"] {
            v.push(format!("shmem_{t}_{op}_reduce"));
        }
    }
    // The deprecated active-set reductions.
    for t in ["short", "int", "long", "longlong"] {
        for op in ["and", "or", "xor"] {
            v.push(format!("shmem_{t}_{op}_to_all"));
        }
    }
    for t in [
        "short",
        "int",
        "long",
        "longlong",
        "float",
        "double",
        "longdouble",
    ] {
        for op in ["max", "min", "sum", "prod"] {
            v.push(format!("shmem_{t}_{op}_to_all"));
        }
    }
    for t in RED_CPLX {
        for op in ["sum", "prod"] {
            v.push(format!("shmem_{t}_{op}_to_all"));
        }
    }
    for t in ["short", "int", "long", "longlong"] {
        v.push(format!("shmem_{t}_wait"));
    }
    v.sort();
    v.dedup();
    v
}

/// The C file that names everything: a function designator per routine (`shmem_ptr`
/// as a value, which a macro alone would not give), `#ifndef` per generic and
/// constant, the types as declarations.
fn c_source(routines: &[String]) -> String {
    let mut c = String::from("#include <shmem.h>\n");
    for g in GENERICS.iter().chain(CONSTANTS) {
        let _ = writeln!(c, "#ifndef {g}\n#error \"missing: {g}\"\n#endif");
    }
    c.push_str("shmem_team_t memchan_t; shmem_ctx_t memchan_c; shmem_team_config_t memchan_cfg;\n");
    c.push_str("void memchan_names(void);\nvoid memchan_names(void) {\n");
    for h in HANDLES {
        let _ = writeln!(c, "    (void){h};");
    }
    for r in ROUTINES
        .iter()
        .map(|s| s.to_string())
        .chain(routines.iter().cloned())
    {
        // Parenthesised: a routine the header also defines as a generic macro
        // (shmem_wait_until, shmem_swap) is named as the function.
        let _ = writeln!(c, "    (void)({r});");
    }
    c.push_str("    (void)memchan_cfg.num_contexts;\n}\n");
    c
}

/// Compiles `source` as C11 against `include/` and returns the names the compiler
/// found missing (every one, not just its first complaint) with its messages.
fn missing_names(tag: &str, source: &str) -> (bool, Vec<String>, String) {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let dir = std::env::temp_dir().join(format!("memchan-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join("names.c");
    std::fs::write(&src, source).expect("write names.c");
    let out = Command::new("cc")
        .args([
            "-std=c11",
            "-Wall",
            "-Werror",
            "-fsyntax-only",
            "-fmax-errors=0",
            "-I",
        ])
        .arg(&include)
        .arg(&src)
        .output()
        .expect("run cc");
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut missing: Vec<String> = stderr
        .lines()
        .filter_map(|l| {
            l.split_once("missing: ")
                .map(|(_, n)| n.trim_end_matches('"'))
                .or_else(|| {
                    l.split_once("‘")
                        .and_then(|(_, r)| r.split_once("’ undeclared"))
                        .map(|(n, _)| n)
                })
        })
        .map(str::to_string)
        .collect();
    missing.sort();
    missing.dedup();
    (out.status.success(), missing, stderr)
}

#[test]
fn shmem_h_has_every_name_of_the_1_5_specification() {
    let routines = typed_routines();
    let (ok, missing, stderr) = missing_names("spec-names", &c_source(&routines));
    assert!(
        ok,
        "shmem.h lacks {} of the {} names: {missing:?}\n{stderr}",
        missing.len(),
        routines.len() + ROUTINES.len() + GENERICS.len() + CONSTANTS.len()
    );
    assert!(
        routines.len() > 1500,
        "the list itself is short: {}",
        routines.len()
    );
}

/// The profiling interface (section 10): `pshmem.h` names every routine of the
/// specification under its `pshmem_` name.
#[test]
fn pshmem_h_has_the_profiling_name_of_every_routine() {
    let all: Vec<String> = ROUTINES
        .iter()
        .map(|s| s.to_string())
        .chain(typed_routines())
        .filter(|r| r.starts_with("shmem_"))
        .collect();
    let mut c = String::from(
        "#include <pshmem.h>\nvoid memchan_names(void);\nvoid memchan_names(void) {\n",
    );
    for r in &all {
        let _ = writeln!(c, "    (void)(p{r});");
    }
    c.push_str("}\n");
    let (ok, missing, stderr) = missing_names("pshmem-names", &c);
    assert!(
        ok,
        "pshmem.h lacks {} of the {} names: {missing:?}\n{stderr}",
        missing.len(),
        all.len()
    );
}
