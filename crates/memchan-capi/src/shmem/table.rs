// The one type table of shmem.h's typed families (OpenSHMEM 1.5, Tables 5-9 and
// 10-11). `build.rs` includes this file and expands every typed function from it,
// in Rust (`$OUT_DIR/shmem_gen.rs`, included by `src/shmem/mod.rs`) and in C (the
// block of `include/shmem.h` between its GENERATED markers, which the test
// `shmem::tests::header_matches_the_type_table` compares with the table).
//
// Plain data for the build script (included there, not a module of the library).

/// Every typed RMA family: put/get/p/g, `_nbi`, iput/iget, broadcast/collect.
const RMA: u32 = 1;
/// fetch / set / swap (the extended AMO types).
const AMO_EXT: u32 = 1 << 1;
/// compare_swap, fetch_inc/inc, fetch_add/add (the standard AMO types).
const AMO_STD: u32 = 1 << 2;
/// fetch_and/and, fetch_or/or, fetch_xor/xor (the bitwise AMO types).
const AMO_BIT: u32 = 1 << 3;
/// The 1.0-era atomic names (`shmem_int_fadd`, `_finc`, `_cswap`, ...), for the ops
/// the type has.
const AMO_OLD: u32 = 1 << 4;
/// wait_until / test (the point-to-point synchronization types).
const WAIT: u32 = 1 << 5;
/// The 1.0-era `shmem_TYPE_wait(ivar, value)`.
const WAIT_OLD: u32 = 1 << 6;
/// The 1.0-era active-set `*_to_all` sum/prod/min/max.
const TOALL: u32 = 1 << 7;
/// The 1.0-era active-set `*_to_all` and/or/xor.
const TOALL_BIT: u32 = 1 << 8;
/// The 1.5 team `*_reduce` sum/prod/min/max.
const RED: u32 = 1 << 9;
/// The 1.5 team `*_reduce` and/or/xor.
const RED_BIT: u32 = 1 << 10;
/// No Rust value type (`long double`): `p`/`g` are header-only inline functions over
/// putmem/getmem; its reductions compute on the x87 unit (`coll`'s `Arith` for
/// `[u8; 16]`).
const OPAQUE: u32 = 1 << 11;
/// Complex: the `*_to_all` and team `*_reduce` sum and prod only.
const CPLX: u32 = 1 << 12;

/// One C type: its TYPENAME, its C spelling, the Rust type with its ABI, its families.
struct CType {
    name: &'static str,
    c: &'static str,
    rust: &'static str,
    has: u32,
}

const STD_AMO: u32 = AMO_EXT | AMO_STD;
const BIT_AMO: u32 = STD_AMO | AMO_BIT;
const INTEGER: u32 = RMA | WAIT | RED;

const TYPES: &[CType] = &[
    CType { name: "float", c: "float", rust: "f32", has: RMA | AMO_EXT | AMO_OLD | TOALL | RED },
    CType { name: "double", c: "double", rust: "f64", has: RMA | AMO_EXT | AMO_OLD | TOALL | RED },
    CType { name: "longdouble", c: "long double", rust: "[u8; 16]", has: RMA | OPAQUE | TOALL | RED },
    CType { name: "char", c: "char", rust: "std::ffi::c_char", has: RMA | RED },
    CType { name: "schar", c: "signed char", rust: "i8", has: RMA | RED },
    CType { name: "short", c: "short", rust: "i16", has: INTEGER | RED_BIT | WAIT_OLD | TOALL | TOALL_BIT },
    CType { name: "int", c: "int", rust: "i32", has: INTEGER | RED_BIT | STD_AMO | AMO_OLD | WAIT_OLD | TOALL | TOALL_BIT },
    CType { name: "long", c: "long", rust: "i64", has: INTEGER | RED_BIT | STD_AMO | AMO_OLD | WAIT_OLD | TOALL | TOALL_BIT },
    CType { name: "longlong", c: "long long", rust: "i64", has: INTEGER | RED_BIT | STD_AMO | AMO_OLD | WAIT_OLD | TOALL | TOALL_BIT },
    CType { name: "uchar", c: "unsigned char", rust: "u8", has: RMA | RED | RED_BIT },
    CType { name: "ushort", c: "unsigned short", rust: "u16", has: INTEGER | RED_BIT },
    CType { name: "uint", c: "unsigned int", rust: "u32", has: INTEGER | BIT_AMO | RED_BIT },
    CType { name: "ulong", c: "unsigned long", rust: "u64", has: INTEGER | BIT_AMO | RED_BIT },
    CType { name: "ulonglong", c: "unsigned long long", rust: "u64", has: INTEGER | BIT_AMO | RED_BIT },
    CType { name: "int8", c: "int8_t", rust: "i8", has: RMA | RED | RED_BIT },
    CType { name: "int16", c: "int16_t", rust: "i16", has: RMA | RED | RED_BIT },
    CType { name: "int32", c: "int32_t", rust: "i32", has: INTEGER | BIT_AMO | RED_BIT },
    CType { name: "int64", c: "int64_t", rust: "i64", has: INTEGER | BIT_AMO | RED_BIT },
    CType { name: "uint8", c: "uint8_t", rust: "u8", has: RMA | RED | RED_BIT },
    CType { name: "uint16", c: "uint16_t", rust: "u16", has: RMA | RED | RED_BIT },
    CType { name: "uint32", c: "uint32_t", rust: "u32", has: INTEGER | BIT_AMO | RED_BIT },
    CType { name: "uint64", c: "uint64_t", rust: "u64", has: INTEGER | BIT_AMO | RED_BIT },
    CType { name: "size", c: "size_t", rust: "usize", has: INTEGER | STD_AMO | RED_BIT },
    CType { name: "ptrdiff", c: "ptrdiff_t", rust: "isize", has: INTEGER | STD_AMO },
    CType { name: "complexf", c: "float _Complex", rust: "coll::Complex32", has: CPLX },
    CType { name: "complexd", c: "double _Complex", rust: "coll::Complex64", has: CPLX },
];

/// The sized families `shmem_putN`/`getN`/`iputN`/`igetN` (and `_nbi`): bits per element.
const SIZES: &[usize] = &[8, 16, 32, 64, 128];
