//! `libmemchan.so` for C: a first slice of OpenSHMEM (`include/shmem.h`) over the
//! public `memchan` crate.
//!
//! A PE joins the cluster `MEMCHAN_CLUSTER` that `memchan run` names, learns its rank
//! from [`memchan_launch::rank_from_env`], and waits until every PE has joined.
//!
//! **Rank -> node.** Node ids follow join order, which ranks do not. Each PE maps the
//! segment `shmem.pes` rx, and after a barrier writes its node id (plus one, so that 0
//! means "not yet") into slot `rank` of every other PE's copy; after a second barrier
//! every PE reads the whole table from its own memory. A PE addresses PE `r` as
//! `pes[r]` from then on.
//!
//! **Symmetric heap.** One segment, `shmem.heap`, of `SHMEM_SYMMETRIC_SIZE` bytes
//! (K/M/G suffixes; default 256 MiB), mapped rx by every PE with `remote_read` on. The
//! local copy is where `shmem_malloc` returns pointers (the program loads and stores
//! there directly); every PE runs the same first-fit ([`heap::Heap`]) so the same calls
//! give the same offsets. A put to PE `r` writes through a tx mapping towards `pes[r]`
//! (made on first use); a get and an atomic go through the segment's [`Rma`] handle.
//!
//! **Errors.** OpenSHMEM calls return no errors: a failure prints
//! `memchan shmem: CALL: PROBLEM` on stderr and exits the PE with status 1 (which
//! `memchan run` turns into the job's exit code, ending the other PEs).

mod heap;
/// The native API, `include/memchan.h`.
mod native;
mod shmem;

use memchan::{Cluster, Dest, NodeId, Rma, RxAttrs, RxMapping, Segment, TxAttrs, TxMapping};
use std::ffi::{c_int, c_long, c_void};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

// `long` is the 8-byte word memchan's atomics and `shmem_long_*` act on (LP64).
const _: () = assert!(size_of::<c_long>() == 8);

/// How long `shmem_init` waits for every PE of the job to join.
const JOIN_TIMEOUT: Duration = Duration::from_secs(120);
/// The heap-size variable (OpenSHMEM's name).
const SIZE_VAR: &str = "SHMEM_SYMMETRIC_SIZE";

/// One initialised PE.
struct Pe {
    cluster: Cluster,
    me: usize,
    /// Rank -> node id.
    pes: Vec<NodeId>,
    heap: heap::Heap,
    /// Heap-segment offset of the library's own area past the user's heap
    /// ([`shmem::sys`]): collective sync words and scratch.
    sys: usize,
    /// The executable's data range made symmetric ([`shmem::statics`]): its start,
    /// length and heap-segment offset; `None` where the transport cannot alias it.
    statics: Option<(usize, usize, usize)>,
    /// The local copy of the heap: its start, as an address.
    base: usize,
    seg: Segment,
    rma: Rma,
    /// Rank -> tx mapping of the heap towards that PE, made on first put.
    tx: Vec<Option<TxMapping>>,
    // Kept mapped for the job's life: the table's and the heap's receive memory.
    _table: RxMapping,
    rx: RxMapping,
}

enum State {
    Uninit,
    Ready(Box<Pe>),
    Finalized,
}

static STATE: Mutex<State> = Mutex::new(State::Uninit);

/// Prints why `call` cannot go on and ends the process (OpenSHMEM has no error
/// returns). Plain stderr, not `tracing`: a C program installs no subscriber, and the
/// user must see this line. One `write` of the whole line, so that PEs sharing a
/// stderr do not interleave their messages.
fn die(call: &str, why: impl std::fmt::Display) -> ! {
    use std::io::Write;
    let line = format!("memchan shmem: {call}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    std::process::exit(1)
}

fn lock() -> MutexGuard<'static, State> {
    // A poisoned lock only means a panic elsewhere; the state itself is whole.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The initialised PE, or the end of the process naming `call`.
fn pe_of<'a>(st: &'a mut MutexGuard<'static, State>, call: &str) -> &'a mut Pe {
    match &mut **st {
        State::Ready(p) => p,
        State::Uninit => die(call, "called before shmem_init"),
        State::Finalized => die(call, "called after shmem_finalize"),
    }
}

fn init() -> Pe {
    const CALL: &str = "shmem_init";
    let rank = match memchan_launch::rank_from_env(|k| std::env::var(k).ok()) {
        Ok(Some(r)) => r,
        Ok(None) => die(CALL, "no rank in the environment (MEMCHAN_RANK/MEMCHAN_SIZE, SLURM_PROCID/SLURM_NTASKS, PMI_RANK/PMI_SIZE): start the program with `memchan run -n N`"),
        Err(e) => die(CALL, e),
    };
    let name = std::env::var(memchan_launch::CLUSTER).unwrap_or_else(|_| {
        die(
            CALL,
            "MEMCHAN_CLUSTER is not set: start the program with `memchan run -n N`",
        )
    });
    let want = match std::env::var(SIZE_VAR) {
        Ok(v) => heap::parse_size(&v).unwrap_or_else(|| {
            die(
                CALL,
                format!("{SIZE_VAR}={v:?} is not a size (bytes, or a number with K, M or G)"),
            )
        }),
        Err(_) => heap::DEFAULT_SIZE,
    };
    let (me, n) = (rank.rank as usize, rank.size as usize);
    let fail = |what: &str, e: memchan::Error| -> ! { die(CALL, format!("{what}: {e}")) };
    let cluster =
        Cluster::join(&name).unwrap_or_else(|e| fail(&format!("joining cluster {name}"), e));
    let table_seg = cluster
        .segment("shmem.pes", 8 * memchan::MAX_NODES, 0o600)
        .unwrap_or_else(|e| fail("the PE table segment", e));
    let table = table_seg
        .map_rx()
        .unwrap_or_else(|e| fail("mapping the PE table", e));
    let sys = want
        .checked_next_multiple_of(4096)
        .unwrap_or_else(|| die(CALL, format!("{SIZE_VAR}={want} is too large")));
    // The executable's data range rides at the end of the heap segment.
    let data = shmem::statics::data_range();
    let area = sys + shmem::sys::LEN;
    let seg_len = area + data.map_or(0, |(lo, hi)| hi - lo);
    let seg = cluster
        .segment("shmem.heap", seg_len, 0o600)
        .unwrap_or_else(|e| {
            fail(
                &format!(
                    "the symmetric heap of {want} bytes ({SIZE_VAR} must be the same on every PE)"
                ),
                e,
            )
        });
    let open = RxAttrs {
        remote_read: true,
        ..RxAttrs::default()
    };
    let rx = seg
        .map_rx_with(open)
        .unwrap_or_else(|e| fail("mapping the symmetric heap", e));
    let statics = data.and_then(|(lo, hi)| {
        // SAFETY: `area..area + (hi - lo)` lies in the heap mapping just made (page-
        // aligned: `sys` and `sys::LEN` are page multiples), which no other PE
        // writes before the barriers below; `[lo, hi)` is the executable's data
        // range, and only this thread runs the program's code during init.
        let r = unsafe { shmem::statics::alias(rx.as_ptr() as usize + area, lo, hi - lo) };
        match r {
            Ok(()) => Some((lo, hi - lo, area)),
            Err(e) => {
                tracing::debug!(error = %e, "static data stays local");
                None
            }
        }
    });
    let rma = seg
        .rma()
        .unwrap_or_else(|e| fail("the heap's get/atomic handle", e));
    cluster
        .wait_for_members(n, JOIN_TIMEOUT)
        .unwrap_or_else(|e| fail(&format!("waiting for {n} PEs to join"), e));
    // Every PE maps the table before anyone writes into it.
    cluster.barrier().unwrap_or_else(|e| fail("barrier", e));
    let mine = u64::from(cluster.node_id().0) + 1;
    for m in cluster.members() {
        if m == cluster.node_id() {
            continue;
        }
        let tx = table_seg
            .map_tx(Dest::Node(m), TxAttrs::default())
            .unwrap_or_else(|e| fail("publishing this PE's node id", e));
        tx.write_u64(8 * me, mine)
            .unwrap_or_else(|e| fail("publishing this PE's node id", e));
    }
    cluster
        .ack()
        .unwrap_or_else(|e| fail("publishing this PE's node id", e));
    cluster.barrier().unwrap_or_else(|e| fail("barrier", e));
    let pes = (0..n)
        .map(|r| {
            if r == me {
                return cluster.node_id();
            }
            let v = table
                .load_u64(8 * r)
                .unwrap_or_else(|e| fail("reading the PE table", e));
            match v.checked_sub(1).and_then(|id| u16::try_from(id).ok()) {
                Some(id) if v != 0 => NodeId(id),
                _ => die(
                    CALL,
                    format!("PE {r} published no node id (is another program in cluster {name}?)"),
                ),
            }
        })
        .collect();
    Pe {
        me,
        pes,
        heap: heap::Heap::new(want),
        sys,
        statics,
        base: rx.as_ptr() as usize,
        rma,
        tx: (0..n).map(|_| None).collect(),
        seg,
        cluster,
        _table: table,
        rx,
    }
}

impl Pe {
    /// The heap-segment offset of `[addr, addr + len)`: in the user's heap, or in
    /// the static data ([`shmem::statics`]); `None` elsewhere.
    fn sym_offset(&self, addr: *const c_void, len: usize) -> Option<usize> {
        let a = addr as usize;
        let within = |start: usize, size: usize| {
            let d = a.checked_sub(start)?;
            d.checked_add(len).filter(|&end| end <= size).map(|_| d)
        };
        if let Some((lo, size, area)) = self.statics {
            if let Some(d) = within(lo, size) {
                return Some(area + d);
            }
        }
        within(self.base, self.heap.size())
    }

    /// As [`sym_offset`](Self::sym_offset), or the end naming `call`.
    fn offset(&self, call: &str, addr: *const c_void, len: usize) -> usize {
        self.sym_offset(addr, len).unwrap_or_else(|| {
            let statics = match self.statics {
                Some((lo, size, _)) => format!("static data ({lo:#x}, {size} bytes)"),
                None => "static data (not symmetric on this transport)".into(),
            };
            die(
                call,
                format!(
                    "{addr:p} (+{len} bytes) is not in the symmetric heap ({:#x}, {} bytes) or the {statics}",
                    self.base,
                    self.heap.size()
                ),
            )
        })
    }

    fn check_pe(&self, call: &str, pe: c_int) -> usize {
        match usize::try_from(pe) {
            Ok(p) if p < self.pes.len() => p,
            _ => die(
                call,
                format!("PE {pe} is not a PE of this job (0..{})", self.pes.len()),
            ),
        }
    }

    fn tx(&mut self, call: &str, pe: usize) -> &TxMapping {
        if self.tx[pe].is_none() {
            let t = self
                .seg
                .map_tx(Dest::Node(self.pes[pe]), TxAttrs::default())
                .unwrap_or_else(|e| die(call, format!("mapping PE {pe}'s heap: {e}")));
            self.tx[pe] = Some(t);
        }
        self.tx[pe].as_ref().expect("made above")
    }
}

/// Copies `len` bytes from `src` to the heap address `dest` (checked) of PE `pe`.
///
/// # Safety
/// `src` is readable for `len` bytes (the caller's contract).
unsafe fn put(call: &str, dest: *const c_void, src: *const c_void, len: usize, pe: c_int) {
    if len == 0 {
        return;
    }
    if src.is_null() {
        die(call, "source is NULL");
    }
    let mut st = lock();
    let p = pe_of(&mut st, call);
    let target = p.check_pe(call, pe);
    let off = p.offset(call, dest, len);
    // SAFETY: the caller promises `src` is readable for `len` bytes (non-null, checked).
    let data = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), len) };
    // To this PE too through a tx mapping: other PEs write the same memory, so a
    // plain copy would race with them (memchan's stores are atomic per word).
    if let Err(e) = p.tx(call, target).write(off, data) {
        die(call, format!("writing {len} bytes to PE {pe}: {e}"));
    }
}

/// Copies `len` bytes at `src` (a heap address) of PE `pe` into `dest`.
///
/// # Safety
/// `dest` is writable for `len` bytes.
unsafe fn get(call: &str, dest: *mut c_void, src: *const c_void, len: usize, pe: c_int) {
    if len == 0 {
        return;
    }
    if dest.is_null() {
        die(call, "destination is NULL");
    }
    let mut st = lock();
    let p = pe_of(&mut st, call);
    let target = p.check_pe(call, pe);
    let off = p.offset(call, src, len);
    // SAFETY: the caller promises `dest` is writable for `len` bytes (non-null, checked).
    let buf = unsafe { std::slice::from_raw_parts_mut(dest.cast::<u8>(), len) };
    // This PE's own copy through the rx mapping's word-wise atomic loads: other PEs
    // may be writing it.
    let got = if target == p.me {
        p.rx.read(off, buf)
    } else {
        p.rma.get(p.pes[target], off, buf)
    };
    if let Err(e) = got {
        die(call, format!("reading {len} bytes from PE {pe}: {e}"));
    }
}

#[no_mangle]
pub extern "C" fn shmem_init() {
    let mut st = lock();
    match &*st {
        State::Uninit => *st = State::Ready(Box::new(init())),
        State::Ready(_) => {} // a second init (or start_pes after it) changes nothing
        State::Finalized => die("shmem_init", "called after shmem_finalize"),
    }
}

/// OpenSHMEM 1.0's init; the argument is ignored, as the standard says.
#[no_mangle]
pub extern "C" fn start_pes(_npes: c_int) {
    shmem_init()
}

#[no_mangle]
pub extern "C" fn shmem_finalize() {
    let mut st = lock();
    let p = pe_of(&mut st, "shmem_finalize");
    // Collective: nobody leaves while another PE may still address its memory.
    if let Err(e) = p.cluster.barrier() {
        die("shmem_finalize", format!("barrier: {e}"));
    }
    *st = State::Finalized; // drops the mappings and leaves the cluster
}

#[no_mangle]
pub extern "C" fn shmem_my_pe() -> c_int {
    pe_of(&mut lock(), "shmem_my_pe").me as c_int
}

#[no_mangle]
pub extern "C" fn _my_pe() -> c_int {
    pe_of(&mut lock(), "_my_pe").me as c_int
}

#[no_mangle]
pub extern "C" fn shmem_n_pes() -> c_int {
    pe_of(&mut lock(), "shmem_n_pes").pes.len() as c_int
}

#[no_mangle]
pub extern "C" fn _num_pes() -> c_int {
    pe_of(&mut lock(), "_num_pes").pes.len() as c_int
}

fn malloc(call: &str, size: usize) -> *mut c_void {
    let mut st = lock();
    let p = pe_of(&mut st, call);
    let Some(off) = p.heap.alloc(size) else {
        die(
            call,
            format!(
                "{size} bytes do not fit in the symmetric heap of {} bytes: raise {SIZE_VAR}",
                p.heap.size()
            ),
        )
    };
    (p.base + off) as *mut c_void
}

fn free(call: &str, ptr: *mut c_void) {
    if ptr.is_null() {
        return;
    }
    let mut st = lock();
    let p = pe_of(&mut st, call);
    let off = p.offset(call, ptr, 0);
    if !p.heap.free(off) {
        die(
            call,
            format!("{ptr:p} is not a block shmem_malloc returned"),
        );
    }
}

#[no_mangle]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    malloc("shmem_malloc", size)
}

#[no_mangle]
pub extern "C" fn shmalloc(size: usize) -> *mut c_void {
    malloc("shmalloc", size)
}

#[no_mangle]
pub extern "C" fn shmem_free(ptr: *mut c_void) {
    free("shmem_free", ptr)
}

#[no_mangle]
pub extern "C" fn shfree(ptr: *mut c_void) {
    free("shfree", ptr)
}

/// # Safety
/// `source` is readable for `nelems` bytes; `dest` is a symmetric address.
#[no_mangle]
pub unsafe extern "C" fn shmem_putmem(
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
) {
    // SAFETY: forwarded caller contract (`source` readable for `nelems` bytes).
    unsafe { put("shmem_putmem", dest, source, nelems, pe) }
}

/// # Safety
/// `dest` is writable for `nelems` bytes; `source` is a symmetric address.
#[no_mangle]
pub unsafe extern "C" fn shmem_getmem(
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
) {
    // SAFETY: forwarded caller contract (`dest` writable for `nelems` bytes).
    unsafe { get("shmem_getmem", dest, source, nelems, pe) }
}

#[no_mangle]
pub extern "C" fn shmem_quiet() {
    let mut st = lock();
    if let Err(e) = pe_of(&mut st, "shmem_quiet").cluster.ack() {
        die("shmem_quiet", e);
    }
}

/// Ordering of puts per PE is already memchan's (each destination sees a sender's
/// writes in order); `ack` gives that and more.
#[no_mangle]
pub extern "C" fn shmem_fence() {
    let mut st = lock();
    if let Err(e) = pe_of(&mut st, "shmem_fence").cluster.ack() {
        die("shmem_fence", e);
    }
}

#[no_mangle]
pub extern "C" fn shmem_barrier_all() {
    let mut st = lock();
    if let Err(e) = pe_of(&mut st, "shmem_barrier_all").cluster.barrier() {
        die("shmem_barrier_all", e);
    }
}
