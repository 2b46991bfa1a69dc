//! Collectives over an active set (OpenSHMEM 1.0: `PE_start`, `logPE_stride`,
//! `PE_size` and a user's pSync) or a team (1.5: the team's own pSync in the library
//! area, [`sys`](super::sys)): barrier, broadcast, collect, fcollect, reductions.
//!
//! **Barrier** (`set.rs`) over every PE: the cluster's barrier (as `shmem_barrier_all`), pSync
//! untouched. Over a smaller set (words 0 and 1 of pSync, which start at
//! `SHMEM_SYNC_VALUE`, 0, and are 0 again on return): each member first completes its
//! puts (`ack`); every
//! member but the set's first adds 1 to word 0 on the first and waits for its own
//! word 1; the first waits for `size - 1`, clears word 0, and sets word 1 on each
//! other member, after its own earlier writes to it (memchan keeps a sender's order
//! per destination). A member clears its word 1 before leaving, and the first can
//! set it again only after that member arrived at the next barrier.
//!
//! **Data** moves by puts between barriers (into this PE's own copy by atomic
//! stores, not the ordered path a tx mapping to oneself takes): a broadcast root
//! puts to every member; collect members deposit their byte counts in the library
//! area, then their blocks at the sum of the counts before them. A reduction is a
//! reduce-scatter and an allgather by the owner of each share of the elements
//! ([`reduce_set`]): each member gets its share of every member's `src`, combines,
//! and puts the result into that share of every `dest`. The entry barrier keeps a
//! fast PE from writing into a slow one's `dest` (or reading its `src`) while that
//! PE still uses it.
//!
//! A collective holds this PE's collective mutex throughout (one at a time per
//! process: they share the library area), never a lock other calls need.

use super::atomic;
use super::set::{barrier, deposit, fail, Set};
use super::team::{self, Resolved};
use super::{sys, Team};
use crate::{die, with_pe, Handles, Pe};
use std::ffi::{c_int, c_long, c_void};

/// The pSync words a barrier uses (the header's sync sizes are larger).
const SYNC_WORDS: usize = 2;

/// The active set of a 1.0-era collective, checked: within the job and holding
/// this PE.
fn active_set(call: &str, p: &Pe, start: c_int, log: c_int, size: c_int) -> Set {
    let n = p.pes.len();
    let bad = |why: String| -> ! {
        die(
            call,
            format!("active set (PE_start {start}, logPE_stride {log}, PE_size {size}): {why}"),
        )
    };
    let (Ok(s), Ok(l), Ok(z)) = (
        usize::try_from(start),
        u32::try_from(log),
        usize::try_from(size),
    ) else {
        bad("negative".into())
    };
    if z == 0 || l >= usize::BITS - 1 {
        bad("empty, or the stride overflows".into());
    }
    let set = Set::new(s, 1 << l, z);
    if (z - 1)
        .checked_mul(1 << l)
        .and_then(|d| d.checked_add(s))
        .is_none_or(|last| last >= n)
    {
        bad(format!("reaches past the last PE ({})", n - 1));
    }
    if set.index_of(p.me).is_none() {
        bad(format!("does not hold the calling PE {}", p.me));
    }
    set
}

/// The heap offset of a user's pSync array, checked.
fn psync_off(call: &str, p: &Pe, psync: *mut c_long) -> usize {
    let off = p.offset(call, psync.cast_const().cast(), 8 * SYNC_WORDS);
    if !off.is_multiple_of(8) {
        die(call, format!("pSync {psync:p} is not 8-byte aligned"));
    }
    off
}

/// The caller's `len` bytes at `src` (not NULL unless `len` is 0).
///
/// # Safety
/// `src` is readable for `len` bytes.
unsafe fn source<'a>(call: &str, src: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    if src.is_null() {
        die(call, "source is NULL");
    }
    // SAFETY: the caller's contract; non-null checked.
    unsafe { std::slice::from_raw_parts(src.cast(), len) }
}

fn bytes(call: &str, n: usize, es: usize) -> usize {
    n.checked_mul(es)
        .unwrap_or_else(|| die(call, format!("{n} elements of {es} bytes overflow")))
}

/// Broadcast of `len` bytes from member `root` (an index in `set`) to `dest` of
/// the others, and of the root itself if `to_root` (1.5 teams).
///
/// # Safety
/// `src` is readable for `len` bytes on the root.
#[allow(clippy::too_many_arguments)]
unsafe fn broadcast(
    call: &str,
    p: &mut Handles,
    set: &Set,
    ps: usize,
    dest: *mut c_void,
    src: *const c_void,
    len: usize,
    root: c_int,
    to_root: bool,
) {
    let Some(root) = usize::try_from(root).ok().filter(|&r| r < set.size) else {
        die(
            call,
            format!("root {root} is not a member index (0..{})", set.size),
        )
    };
    let off = p.span_offset(call, dest.cast_const(), len);
    barrier(call, p, set, ps);
    if set.pe(root) == p.me {
        // SAFETY: forwarded caller contract.
        let data = unsafe { source(call, src, len) };
        let me = p.me;
        for m in set.members().filter(|&m| m != me || to_root) {
            deposit(call, p, m, off, data);
        }
    }
    barrier(call, p, set, ps);
}

/// Collect: each member's `len` bytes, in member order, into `dest` of every member.
///
/// # Safety
/// `src` is readable for `len` bytes.
unsafe fn collect(
    call: &str,
    p: &mut Handles,
    set: &Set,
    ps: usize,
    dest: *mut c_void,
    src: *const c_void,
    len: usize,
) {
    // SAFETY: forwarded caller contract.
    let data = unsafe { source(call, src, len) };
    barrier(call, p, set, ps);
    let (me, slot) = (p.me, p.sys + sys::SIZES + 8 * p.me);
    for m in set.members() {
        if let Err(e) = p.tx(call, m).write_u64(slot, len as u64) {
            fail(call, &format!("telling PE {m} this PE's size"), e);
        }
    }
    barrier(call, p, set, ps);
    // Counts another PE wrote: bounded by the dest check below before any use.
    let (mut before, mut total) = (0usize, 0usize);
    for m in set.members() {
        if m == me {
            before = total;
        }
        // SAFETY: the library area's SIZES words are in this PE's heap mapping, aligned.
        let c = unsafe { atomic::load::<u64>(p.base + p.sys + sys::SIZES + 8 * m) };
        let c = usize::try_from(c).ok();
        total = c.and_then(|c| total.checked_add(c)).unwrap_or(usize::MAX);
    }
    let off = p.span_offset(call, dest.cast_const(), total);
    if before.checked_add(len).is_none_or(|end| end > total) {
        die(
            call,
            format!(
                "the members' sizes ({total} bytes in all) do not hold this PE's {len} at {before}"
            ),
        );
    }
    for m in set.members() {
        deposit(call, p, m, off + before, data);
    }
    barrier(call, p, set, ps);
}

/// Fcollect: member `i`'s `len` bytes at `dest + i * len` of every member.
///
/// # Safety
/// `src` is readable for `len` bytes.
unsafe fn fcollect(
    call: &str,
    p: &mut Handles,
    set: &Set,
    ps: usize,
    dest: *mut c_void,
    src: *const c_void,
    len: usize,
) {
    // SAFETY: forwarded caller contract.
    let data = unsafe { source(call, src, len) };
    let off = p.span_offset(call, dest.cast_const(), bytes(call, set.size, len));
    let at = off + set.index_of(p.me).expect("a member") * len;
    barrier(call, p, set, ps);
    for m in set.members() {
        deposit(call, p, m, at, data);
    }
    barrier(call, p, set, ps);
}

/// Alltoall of `n` elements of `es` bytes per member, strided: member `i`'s elements
/// `(j * n + k) * sst` of `src` go to elements `(i * n + k) * dst` of member `j`'s
/// `dest` (`dst = sst = 1`: the plain alltoall, block `j` to block `i`). A barrier on
/// entry (every `dest` free) and on exit (every block arrived).
///
/// # Safety
/// `src` is readable for the `set.size * n` elements at stride `sst`.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoall(
    call: &str,
    p: &mut Handles,
    set: &Set,
    ps: usize,
    dest: *mut c_void,
    src: *const c_void,
    (n, es): (usize, usize),
    (dst, sst): (isize, isize),
) {
    if dst < 1 || sst < 1 {
        die(
            call,
            format!("strides must be positive (dst {dst}, sst {sst})"),
        );
    }
    let (dst, sst) = (dst as usize, sst as usize);
    // The span of `count` elements at `stride`, in bytes.
    let span = |count: usize, stride: usize| -> usize {
        count.checked_sub(1).map_or(0, |last| {
            last.checked_mul(stride)
                .and_then(|e| e.checked_add(1))
                .and_then(|e| e.checked_mul(es))
                .unwrap_or_else(|| {
                    die(
                        call,
                        format!("{count} elements at stride {stride} overflow"),
                    )
                })
        })
    };
    let all = bytes(call, set.size, n);
    // SAFETY: forwarded caller contract.
    let data = unsafe { source(call, src, span(all, sst)) };
    let off = p.span_offset(call, dest.cast_const(), span(all, dst));
    let i = set.index_of(p.me).expect("a member");
    barrier(call, p, set, ps);
    let mut block = Vec::new();
    for (j, m) in set.members().enumerate() {
        block.clear();
        if sst == 1 {
            block.extend_from_slice(&data[j * n * es..(j + 1) * n * es]);
        } else {
            for k in 0..n {
                let at = (j * n + k) * sst * es;
                block.extend_from_slice(&data[at..at + es]);
            }
        }
        if dst == 1 {
            deposit(call, p, m, off + i * n * es, &block);
        } else {
            for (k, e) in block.chunks_exact(es).enumerate() {
                deposit(call, p, m, off + (i * n + k) * dst * es, e);
            }
        }
    }
    barrier(call, p, set, ps);
}

/// `shmem_TYPE_alltoall` / `alltoalls` (1.5); 0.
///
/// # Safety
/// `src` is readable for the team's size times `n` elements at stride `sst`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn team_alltoall(
    call: &str,
    team: Team,
    dest: *mut c_void,
    src: *const c_void,
    dst: isize,
    sst: isize,
    n: usize,
    es: usize,
) -> c_int {
    // SAFETY: forwarded caller contract.
    on_team(call, team, |p, set, ps| unsafe {
        alltoall(call, p, set, ps, dest, src, (n, es), (dst, sst))
    })
}

/// A reduction's arithmetic (`sum`/`prod` wrap for integers, as C's unsigned do).
pub trait Arith: Copy {
    fn sum(a: Self, b: Self) -> Self;
    fn prod(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
}

/// A reduction's bitwise operations (integers only).
pub trait Bits: Copy {
    fn and(a: Self, b: Self) -> Self;
    fn or(a: Self, b: Self) -> Self;
    fn xor(a: Self, b: Self) -> Self;
}

macro_rules! int_ops {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn sum(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn prod(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            fn min(a: Self, b: Self) -> Self { Ord::min(a, b) }
            fn max(a: Self, b: Self) -> Self { Ord::max(a, b) }
        }
        impl Bits for $t {
            fn and(a: Self, b: Self) -> Self { a & b }
            fn or(a: Self, b: Self) -> Self { a | b }
            fn xor(a: Self, b: Self) -> Self { a ^ b }
        }
    )*};
}
int_ops!(i8, u8, i16, u16, i32, u32, i64, u64, isize, usize);

macro_rules! float_ops {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn sum(a: Self, b: Self) -> Self { a + b }
            fn prod(a: Self, b: Self) -> Self { a * b }
            fn min(a: Self, b: Self) -> Self { if b < a { b } else { a } }
            fn max(a: Self, b: Self) -> Self { if b > a { b } else { a } }
        }
    )*};
}
float_ops!(f32, f64);

/// C's `long double` (x86-64: the x87 80-bit extended format in 16 bytes, which the
/// table passes as `[u8; 16]`): no Rust type computes in it, so the x87 unit does, as
/// C does; min and max compare as C's `<` (false with a NaN).
impl Arith for [u8; 16] {
    fn sum(a: Self, b: Self) -> Self {
        x87::add(a, b)
    }
    fn prod(a: Self, b: Self) -> Self {
        x87::mul(a, b)
    }
    fn min(a: Self, b: Self) -> Self {
        if x87::less(b, a) {
            b
        } else {
            a
        }
    }
    fn max(a: Self, b: Self) -> Self {
        if x87::less(a, b) {
            b
        } else {
            a
        }
    }
}

/// `long double` arithmetic on the x87 unit (its default extended precision).
#[cfg(target_arch = "x86_64")]
mod x87 {
    use std::arch::asm;

    macro_rules! binop {
        ($name:ident, $ins:literal) => {
            /// `a` and `b` combined by the x87 instruction the name says.
            pub fn $name(a: [u8; 16], b: [u8; 16]) -> [u8; 16] {
                let mut out = [0u8; 16];
                // SAFETY: reads 10 bytes at `a` and at `b` and writes 10 at `out`, all
                // 16-byte locals; two loads and two pops leave the x87 stack as found,
                // and every x87 register is declared clobbered.
                unsafe {
                    asm!(
                        "fld tbyte ptr [{a}]",
                        "fld tbyte ptr [{b}]",
                        concat!($ins, " st(1), st"),
                        "fstp tbyte ptr [{o}]",
                        a = in(reg) a.as_ptr(),
                        b = in(reg) b.as_ptr(),
                        o = in(reg) out.as_mut_ptr(),
                        out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                        out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                        options(nostack),
                    );
                }
                out
            }
        };
    }
    binop!(add, "faddp");
    binop!(mul, "fmulp");

    /// C's `b < a`: false when either is a NaN (unordered sets the parity flag).
    pub fn less(b: [u8; 16], a: [u8; 16]) -> bool {
        let lt: u8;
        // SAFETY: reads 10 bytes at `a` and at `b` (16-byte locals); two loads and two
        // pops leave the x87 stack as found; every x87 register is declared clobbered.
        unsafe {
            asm!(
                "fld tbyte ptr [{a}]",
                "fld tbyte ptr [{b}]",
                "fucomip st, st(1)",
                "fstp st(0)",
                "setb {lt}",
                "setnp {t}",
                "and {lt}, {t}",
                a = in(reg) a.as_ptr(),
                b = in(reg) b.as_ptr(),
                lt = out(reg_byte) lt,
                t = out(reg_byte) _,
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        lt != 0
    }
}

/// Elsewhere `long double` is another format: its reductions end the program.
#[cfg(not(target_arch = "x86_64"))]
mod x87 {
    fn unsupported() -> ! {
        crate::die(
            "long double reduction",
            "not supported on this architecture",
        )
    }
    pub fn add(_: [u8; 16], _: [u8; 16]) -> [u8; 16] {
        unsupported()
    }
    pub fn mul(_: [u8; 16], _: [u8; 16]) -> [u8; 16] {
        unsupported()
    }
    pub fn less(_: [u8; 16], _: [u8; 16]) -> bool {
        unsupported()
    }
}

/// C's `float _Complex` / `double _Complex`: laid out as an array of the real and
/// the imaginary part (C11 6.2.5p13).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct Complex<T>(pub [T; 2]);
pub type Complex32 = Complex<f32>;
pub type Complex64 = Complex<f64>;

/// The reductions complex types have: sum and product.
pub trait Ring: Copy {
    fn sum(a: Self, b: Self) -> Self;
    fn prod(a: Self, b: Self) -> Self;
}

impl<T> Ring for Complex<T>
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Sub<Output = T> + std::ops::Mul<Output = T>,
{
    fn sum(a: Self, b: Self) -> Self {
        Complex([a.0[0] + b.0[0], a.0[1] + b.0[1]])
    }
    /// (ar + ai i)(br + bi i), as C computes it for finite values.
    fn prod(a: Self, b: Self) -> Self {
        let ([ar, ai], [br, bi]) = (a.0, b.0);
        Complex([ar * br - ai * bi, ar * bi + ai * br])
    }
}

/// Bytes of each member's slice a reduction combines per step: the slices and the
/// result stay in the core's cache between the gets and the puts.
const STEP_BYTES: usize = 64 << 10;

/// `v`'s bytes.
fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: the same memory, `size_of_val(v)` bytes, read as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), size_of_val(v)) }
}

/// `v`'s bytes, to be overwritten.
///
/// # Safety
/// Every bit pattern is a `T` (the C scalars of the reductions).
unsafe fn as_bytes_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: the same memory, exclusively borrowed; any bytes written make `T`s
    // (the caller's contract).
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), size_of_val(v)) }
}

/// Copies `buf.len()` bytes at heap offset `off` of member `m` into `buf`: a get,
/// or this PE's own copy through its receive mapping.
fn fetch(call: &str, p: &Handles, m: usize, off: usize, buf: &mut [u8]) {
    let got = if m == p.me {
        p.read_own(off, buf)
    } else {
        p.rma.get(p.pes[m], off, buf)
    };
    if let Err(e) = got {
        fail(call, &format!("reading {} bytes of PE {m}", buf.len()), e);
    }
}

/// Reduction of `n` elements of `src` over `set` with `f`, into `dest` of every
/// member.
///
/// Reduce-scatter then allgather, both by the owner of each share: member `i` owns
/// the `i`-th of `size` near-equal shares of the elements; it reads that share of
/// every member's `src` (a get: on one host a load from the member's memory),
/// combines them in member order, and puts the result into that share of every
/// member's `dest`. No member reads or writes another's share, so `src` may be
/// `dest` (in place) with no barrier between reading and writing, and every member
/// receives bit-identical results (one PE combined each element). Two barriers: on
/// entry (every `src` is ready, every `dest` free) and on exit (every share
/// arrived, no `src` still read).
///
/// # Safety
/// `src` is readable for `n` elements.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_set<T: Copy + Default>(
    call: &str,
    p: &mut Handles,
    set: &Set,
    ps: usize,
    dest: *mut T,
    src: *const T,
    n: usize,
    f: impl Fn(T, T) -> T + Copy,
) {
    let es = size_of::<T>();
    let len = bytes(call, n, es);
    if len == 0 {
        barrier(call, p, set, ps);
        return;
    }
    let doff = p.offset(call, dest.cast_const().cast(), len);
    let soff = p.offset(call, src.cast(), len);
    if soff != doff && soff < doff + len && doff < soff + len {
        die(
            call,
            format!("source {src:p} and dest {dest:p} ({len} bytes) overlap without being the same array"),
        );
    }
    let (z, i) = (set.size, set.index_of(p.me).expect("a member"));
    let lo = i * (n / z) + i.min(n % z);
    let hi = lo + n / z + usize::from(i < n % z);
    barrier(call, p, set, ps);
    let step = (STEP_BYTES / es).max(1).min(hi - lo);
    let (mut acc, mut got) = (vec![T::default(); step], vec![T::default(); step]);
    let mut at = lo;
    while at < hi {
        let k = step.min(hi - at);
        let off = at * es;
        let (acc, got) = (&mut acc[..k], &mut got[..k]);
        for (j, m) in set.members().enumerate() {
            let into = if j == 0 { &mut *acc } else { &mut *got };
            // SAFETY: the reductions' `T`s are C scalars: any bytes are a value.
            fetch(call, p, m, soff + off, unsafe { as_bytes_mut(into) });
            if j > 0 {
                for (a, &b) in acc.iter_mut().zip(got.iter()) {
                    *a = f(*a, b);
                }
            }
        }
        for m in set.members() {
            deposit(call, p, m, doff + off, as_bytes(acc));
        }
        at += k;
    }
    barrier(call, p, set, ps);
}

/// `shmem_TYPE_OP_to_all`.
///
/// # Safety
/// `src` is readable for `nreduce` elements.
#[allow(clippy::too_many_arguments)]
pub unsafe fn to_all<T: Copy + Default>(
    call: &str,
    dest: *mut T,
    src: *const T,
    nreduce: c_int,
    start: c_int,
    log: c_int,
    size: c_int,
    psync: *mut c_long,
    f: impl Fn(T, T) -> T + Copy,
) {
    let Ok(n) = usize::try_from(nreduce) else {
        die(call, format!("nreduce {nreduce} is negative"))
    };
    with_pe(call, |p| {
        let set = active_set(call, p, start, log, size);
        let ps = psync_off(call, p, psync);
        // SAFETY: forwarded caller contract.
        one_at_a_time(p, |p| unsafe {
            reduce_set(call, p, &set, ps, dest, src, n, f)
        })
    })
}

/// `shmem_TYPE_OP_reduce` (1.5); 0.
///
/// # Safety
/// `src` is readable for `nreduce` elements.
pub unsafe fn reduce<T: Copy + Default>(
    call: &str,
    team: Team,
    dest: *mut T,
    src: *const T,
    nreduce: usize,
    f: impl Fn(T, T) -> T + Copy,
) -> c_int {
    // SAFETY: forwarded caller contract.
    on_team(call, team, |p, set, ps| unsafe {
        reduce_set(call, p, set, ps, dest, src, nreduce, f)
    })
}

/// Runs `f` holding this PE's collective mutex ([`Pe::coll`](crate::Pe)): the
/// collectives share the library area, so two threads' collectives take turns.
/// Per PE, not global: puts, gets and atomics of other threads go on meanwhile.
fn one_at_a_time<R>(p: &mut Handles, f: impl FnOnce(&mut Handles) -> R) -> R {
    let pe = std::sync::Arc::clone(&p.pe);
    let _turn = pe.coll.lock().unwrap_or_else(|e| e.into_inner());
    f(p)
}

/// Runs `f` on the initialised PE with `team`'s members and pSync: 0, or -1 (and
/// nothing done) for a handle that is no team ([`team`]'s bad handles).
fn on_team(call: &str, team: Team, f: impl FnOnce(&mut Handles, &Set, usize)) -> c_int {
    with_pe(call, |p| {
        let Some(Resolved { set, psync, .. }) = team::resolve(call, p, team) else {
            return -1;
        };
        one_at_a_time(p, |p| f(p, &set, psync));
        0
    })
}

/// Runs `f` on the initialised PE with an active set and its pSync.
fn on_set<R>(
    call: &str,
    start: c_int,
    log: c_int,
    size: c_int,
    psync: *mut c_long,
    f: impl FnOnce(&mut Handles, &Set, usize) -> R,
) -> R {
    with_pe(call, |p| {
        let set = active_set(call, p, start, log, size);
        let ps = psync_off(call, p, psync);
        one_at_a_time(p, |p| f(p, &set, ps))
    })
}

/// `shmem_TYPE_broadcast` (1.5); 0.
///
/// # Safety
/// `src` is readable for `n * es` bytes on the root.
pub unsafe fn team_broadcast(
    call: &str,
    team: Team,
    dest: *mut c_void,
    src: *const c_void,
    n: usize,
    es: usize,
    root: c_int,
) -> c_int {
    let len = bytes(call, n, es);
    // SAFETY: forwarded caller contract.
    on_team(call, team, |p, set, ps| unsafe {
        broadcast(call, p, set, ps, dest, src, len, root, true)
    })
}

/// `shmem_TYPE_collect` (1.5); 0. `_root` keeps the generated calls uniform.
///
/// # Safety
/// `src` is readable for `n * es` bytes.
pub unsafe fn team_collect(
    call: &str,
    team: Team,
    dest: *mut c_void,
    src: *const c_void,
    n: usize,
    es: usize,
    _root: c_int,
) -> c_int {
    let len = bytes(call, n, es);
    // SAFETY: forwarded caller contract.
    on_team(call, team, |p, set, ps| unsafe {
        collect(call, p, set, ps, dest, src, len)
    })
}

/// `shmem_TYPE_fcollect` (1.5); 0.
///
/// # Safety
/// `src` is readable for `n * es` bytes.
pub unsafe fn team_fcollect(
    call: &str,
    team: Team,
    dest: *mut c_void,
    src: *const c_void,
    n: usize,
    es: usize,
    _root: c_int,
) -> c_int {
    let len = bytes(call, n, es);
    // SAFETY: forwarded caller contract.
    on_team(call, team, |p, set, ps| unsafe {
        fcollect(call, p, set, ps, dest, src, len)
    })
}

#[no_mangle]
pub extern "C" fn shmem_barrier(start: c_int, log: c_int, size: c_int, psync: *mut c_long) {
    on_set("shmem_barrier", start, log, size, psync, |p, set, ps| {
        barrier("shmem_barrier", p, set, ps)
    });
}

/// 1.5's `shmem_sync`: a barrier without the quiet; memchan's is no slower with it.
#[no_mangle]
pub extern "C" fn shmem_sync(start: c_int, log: c_int, size: c_int, psync: *mut c_long) {
    on_set("shmem_sync", start, log, size, psync, |p, set, ps| {
        barrier("shmem_sync", p, set, ps)
    });
}

#[no_mangle]
pub extern "C" fn shmem_sync_all() {
    if let Err(e) = with_pe("shmem_sync_all", |p| p.cluster.barrier().map_err(Box::new)) {
        die("shmem_sync_all", e);
    }
}

/// 0, or the end naming the call for a handle that is no team.
#[no_mangle]
pub extern "C" fn shmem_team_sync(team: Team) -> c_int {
    on_team("shmem_team_sync", team, |p, set, ps| {
        barrier("shmem_team_sync", p, set, ps)
    })
}

macro_rules! active_set_data {
    ($($name:ident = $es:expr;)*) => {$(
        /// The 1.0-era active-set form (`nelems` elements of the named width).
        ///
        /// # Safety
        /// `source` is readable for `nelems` elements.
        #[no_mangle]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(dest: *mut c_void, source: *const c_void, nelems: usize, PE_root: c_int, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) {
            const CALL: &str = stringify!($name);
            let len = bytes(CALL, nelems, $es);
            on_set(CALL, PE_start, logPE_stride, PE_size, pSync, |p, set, ps| {
                // SAFETY: forwarded caller contract.
                unsafe { broadcast(CALL, p, set, ps, dest, source, len, PE_root, false) }
            })
        }
    )*};
}
active_set_data!(shmem_broadcast32 = 4; shmem_broadcast64 = 8;);

macro_rules! active_set_gather {
    ($($name:ident = $op:ident, $es:expr;)*) => {$(
        /// The 1.0-era active-set form (`nelems` elements of the named width).
        ///
        /// # Safety
        /// `source` is readable for `nelems` elements.
        #[no_mangle]
        #[allow(non_snake_case)]
        pub unsafe extern "C" fn $name(dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) {
            const CALL: &str = stringify!($name);
            let len = bytes(CALL, nelems, $es);
            on_set(CALL, PE_start, logPE_stride, PE_size, pSync, |p, set, ps| {
                // SAFETY: forwarded caller contract.
                unsafe { $op(CALL, p, set, ps, dest, source, len) }
            })
        }
    )*};
}
active_set_gather!(
    shmem_collect32 = collect, 4;
    shmem_collect64 = collect, 8;
    shmem_fcollect32 = fcollect, 4;
    shmem_fcollect64 = fcollect, 8;
);

macro_rules! active_set_alltoall {
    ($($name:ident = $es:expr;)*) => {$(
        /// The 1.0-era active-set form (`nelems` elements of the named width per PE).
        ///
        /// # Safety
        /// `source` is readable for `PE_size * nelems` elements.
        #[no_mangle]
        #[allow(non_snake_case)]
        pub unsafe extern "C" fn $name(dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) {
            const CALL: &str = stringify!($name);
            on_set(CALL, PE_start, logPE_stride, PE_size, pSync, |p, set, ps| {
                // SAFETY: forwarded caller contract.
                unsafe { alltoall(CALL, p, set, ps, dest, source, (nelems, $es), (1, 1)) }
            })
        }
    )*};
}
active_set_alltoall!(shmem_alltoall32 = 4; shmem_alltoall64 = 8;);

macro_rules! active_set_alltoalls {
    ($($name:ident = $es:expr;)*) => {$(
        /// The 1.0-era active-set strided form (`nelems` elements of the named width
        /// per PE, at strides `dst` and `sst` elements).
        ///
        /// # Safety
        /// `source` is readable for `PE_size * nelems` elements at stride `sst`.
        #[no_mangle]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) {
            const CALL: &str = stringify!($name);
            on_set(CALL, PE_start, logPE_stride, PE_size, pSync, |p, set, ps| {
                // SAFETY: forwarded caller contract.
                unsafe { alltoall(CALL, p, set, ps, dest, source, (nelems, $es), (dst, sst)) }
            })
        }
    )*};
}
active_set_alltoalls!(shmem_alltoalls32 = 4; shmem_alltoalls64 = 8;);

/// # Safety
/// `source` is readable for the team's size times `nelems` bytes.
#[no_mangle]
pub unsafe extern "C" fn shmem_alltoallmem(
    team: Team,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { team_alltoall("shmem_alltoallmem", team, dest, source, 1, 1, nelems, 1) }
}

/// # Safety
/// `source` is readable for the team's size times `nelems` bytes at stride `sst`.
#[no_mangle]
pub unsafe extern "C" fn shmem_alltoallsmem(
    team: Team,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe {
        team_alltoall(
            "shmem_alltoallsmem",
            team,
            dest,
            source,
            dst,
            sst,
            nelems,
            1,
        )
    }
}

/// # Safety
/// `source` is readable for `nelems` bytes on the root.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn shmem_broadcastmem(
    team: Team,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    PE_root: c_int,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { team_broadcast("shmem_broadcastmem", team, dest, source, nelems, 1, PE_root) }
}

/// # Safety
/// `source` is readable for `nelems` bytes.
#[no_mangle]
pub unsafe extern "C" fn shmem_collectmem(
    team: Team,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { team_collect("shmem_collectmem", team, dest, source, nelems, 1, 0) }
}

/// # Safety
/// `source` is readable for `nelems` bytes.
#[no_mangle]
pub unsafe extern "C" fn shmem_fcollectmem(
    team: Team,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { team_fcollect("shmem_fcollectmem", team, dest, source, nelems, 1, 0) }
}
