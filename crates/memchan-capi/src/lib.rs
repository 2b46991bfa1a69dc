//! `libmemchan.so` for C: OpenSHMEM 1.5 (`include/shmem.h`) and the native API
//! (`include/memchan.h`) over the public `memchan` crate.
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
//! (K/M/G/T suffixes, fractions allowed; default 256 MiB), mapped rx by every PE with `remote_read` on, and
//! mapped a second time at a 1 GiB-aligned address ([`view`]), where `shmem_malloc`
//! returns pointers (the program loads and stores there directly); every PE runs the
//! same first-fit ([`heap::Heap`]) so the same calls give the same offsets, and the
//! same aligned offsets are aligned addresses on every PE. A put to PE `r` writes through a tx mapping towards `pes[r]`
//! (made on a thread's first put there); a get and an atomic go through the segment's
//! [`Rma`] handle.
//!
//! **State.** The PE is an `Arc<Pe>` held by `STATE` (a mutex, taken only by init,
//! finalize and a thread's first call). Each thread that makes calls keeps its own
//! [`Handles`]: the `Arc`, its own [`Rma`] handle and tx mappings (memchan's handles
//! serve one thread at a time). The thread that called `shmem_init` (the owner) keeps
//! them in a global slot it alone touches, found by comparing `pthread_self` with
//! `OWNER`; every other thread in a thread-local cache (in a shared library each
//! thread-local access is a call to `__tls_get_addr`: the slot saves about a
//! nanosecond of an 8-byte put + quiet). So a call takes no lock: it reads the `LIVE`
//! flag and its handles, nothing else shared (a mutex round trip was two locked
//! instructions per call, most of an 8-byte put + quiet).
//! `shmem_finalize` clears the flag, its own thread's cache and `STATE`: the PE leaves
//! the cluster then, unless another thread that made calls is still alive (its cache
//! keeps the PE until it exits); any later call is refused by name.
//!
//! **Errors.** OpenSHMEM calls return no errors: a failure prints
//! `memchan shmem: CALL: PROBLEM` on stderr and exits the PE with status 1 (which
//! `memchan run` turns into the job's exit code, ending the other PEs). What the
//! library reports on its own goes through `tracing` to stderr ([`log`]).

mod env;
mod heap;
mod log;
/// The native API, `include/memchan.h`.
mod native;
mod shmem;
mod view;

use env::SIZE_VAR;
use memchan::{Cluster, Dest, NodeId, Rma, RxAttrs, RxMapping, Segment, TxAttrs, TxMapping};
use std::cell::{RefCell, UnsafeCell};
use std::ffi::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

// `long` is the 8-byte word memchan's atomics and `shmem_long_*` act on (LP64).
const _: () = assert!(size_of::<c_long>() == 8);

/// How long `shmem_init` waits for every PE of the job to join.
const JOIN_TIMEOUT: Duration = Duration::from_secs(120);
/// One initialised PE: what all its threads share.
struct Pe {
    cluster: Cluster,
    me: usize,
    /// Rank -> node id.
    pes: Vec<NodeId>,
    heap: Mutex<heap::Heap>,
    /// Heap-segment offset of the library's own area past the user's heap
    /// ([`shmem::sys`]): collective sync words and scratch.
    sys: usize,
    /// The executable's data range made symmetric ([`shmem::statics`]): its start,
    /// length and heap-segment offset; `None` where the transport cannot alias it.
    statics: Option<(usize, usize, usize)>,
    /// The PEs that share this PE's memory (`shared_pes`): `SHMEM_TEAM_SHARED`, and
    /// the heaps `shmem_ptr` reaches.
    shared: shmem::set::Set,
    /// Rank -> that PE's heap segment mapped here for loads and stores, made at the
    /// first `shmem_ptr` towards it and kept for the job's life (a pointer handed to
    /// the program must stay mapped).
    peers: Mutex<Vec<Option<memchan::PeerMemory>>>,
    /// Held by a collective throughout: they share the library area ([`shmem::sys`]),
    /// so one runs at a time per PE (puts, gets and atomics do not take it).
    coll: Mutex<()>,
    /// The split teams this PE belongs to ([`shmem::team`]).
    teams: Mutex<shmem::team::Table>,
    /// The local copy of the heap: its start (as an address: the aligned [`view`]
    /// where there is one) and the user's length (the heap's size, kept outside its
    /// mutex for the address checks).
    base: usize,
    len: usize,
    /// The largest alignment `shmem_align` can give on every PE: that of `base`.
    max_align: usize,
    _view: Option<view::View>,
    seg: Segment,
    // Kept mapped for the job's life: the table's and the heap's receive memory (the
    // heap's also read through, by a get from this PE itself).
    _table: Mutex<RxMapping>,
    rx: Mutex<RxMapping>,
}

/// A thread's own handles on the PE: memchan's tx mappings and RMA handles serve one
/// thread at a time, so each thread that makes calls has its own.
struct Handles {
    pe: Arc<Pe>,
    rma: Rma,
    /// Rank -> tx mapping of the heap towards that PE, made on first put.
    tx: Vec<Option<TxMapping>>,
}

enum State {
    Uninit,
    Ready(Arc<Pe>),
    Finalized,
}

static STATE: Mutex<State> = Mutex::new(State::Uninit);

/// True from the end of `shmem_init` to the start of `shmem_finalize`: while it is,
/// a thread's cached PE is the one in `STATE`.
static LIVE: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread's handles on `STATE`'s PE, made at its first call.
    static CACHE: RefCell<Option<Handles>> = const { RefCell::new(None) };
    /// Set on the owner thread when it fills [`OWNER_SLOT`]: its drop, at the thread's
    /// exit, empties the slot and gives up the ownership.
    static OWNER_GUARD: OwnerGuard = const { OwnerGuard };
}

/// The `pthread_self` of the thread whose handles [`OWNER_SLOT`] holds (0: none).
/// In a shared library every thread-local access is a call (`__tls_get_addr`), two
/// per 8-byte put + quiet; this global is one load and `pthread_self` one more. The
/// owner is the thread that calls `shmem_init`, the one that makes most calls in
/// nearly every program; every other thread keeps its handles in `CACHE`.
static OWNER: AtomicUsize = AtomicUsize::new(0);
static OWNER_SLOT: OwnerSlot = OwnerSlot {
    handles: UnsafeCell::new(None),
    busy: UnsafeCell::new(false),
};

/// The owner thread's handles, and whether a call of it is using them (a call made
/// inside another, such as a log line's, goes the `CACHE` way).
struct OwnerSlot {
    handles: UnsafeCell<Option<Handles>>,
    busy: UnsafeCell<bool>,
}

// SAFETY: the slot is touched only by the thread whose `pthread_self` is in `OWNER`
// (every access checks it first), which fills it, uses it and empties it (at
// finalize, or at its exit through `OwnerGuard`, which also clears `OWNER`, so that no
// later thread given the same `pthread_t` finds handles it did not make).
unsafe impl Sync for OwnerSlot {}

struct OwnerGuard;

impl Drop for OwnerGuard {
    fn drop(&mut self) {
        if OWNER.load(Ordering::Relaxed) == this_thread() {
            // SAFETY: this is the owner thread (checked), and no call of it is under
            // way: it is exiting.
            let h = unsafe { (*OWNER_SLOT.handles.get()).take() };
            OWNER.store(0, Ordering::Relaxed);
            drop(h);
        }
    }
}

/// This thread's id, without a thread-local access: `pthread_self` reads it from the
/// thread pointer.
#[inline(always)]
fn this_thread() -> usize {
    // SAFETY: pthread_self has no preconditions and cannot fail.
    unsafe { libc::pthread_self() as usize }
}

/// Prints why `call` cannot go on and ends the process (OpenSHMEM has no error
/// returns). Plain stderr, not `tracing`: the user must see this line whatever
/// `MEMCHAN_LOG` says. One `write` of the whole line, so that PEs sharing a
/// stderr do not interleave their messages.
#[cold]
#[inline(never)]
fn die(call: &str, why: impl std::fmt::Display) -> ! {
    use std::io::Write;
    let line = format!("memchan shmem: {call}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    std::process::exit(1)
}

/// [`die`] with the message built only on the way out: the calls' fast paths keep
/// the formatting (and its stack) out of line.
#[cold]
#[inline(never)]
fn die_lazy(call: &str, why: impl FnOnce() -> String) -> ! {
    die(call, why())
}

fn lock() -> MutexGuard<'static, State> {
    // A poisoned lock only means a panic elsewhere; the state itself is whole.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on this thread's handles on the initialised PE, or ends the process
/// naming `call`. No lock once this thread has made a call (see the crate doc).
#[inline(always)]
fn with_pe<R>(call: &str, f: impl FnOnce(&mut Handles) -> R) -> R {
    if LIVE.load(Ordering::Acquire) && OWNER.load(Ordering::Relaxed) == this_thread() {
        // SAFETY: this is the owner thread (checked), the only one that touches the
        // slot; `busy` keeps a call made inside `f` off the handles `f` is using.
        unsafe {
            let busy = &mut *OWNER_SLOT.busy.get();
            if let (false, Some(h)) = (*busy, (*OWNER_SLOT.handles.get()).as_mut()) {
                *busy = true;
                let r = f(h);
                *OWNER_SLOT.busy.get() = false;
                return r;
            }
        }
    }
    with_pe_cached(call, f)
}

/// [`with_pe`] through the thread-local cache: any thread but the owner, the owner's
/// first call (which fills its slot) and a call made inside another.
#[inline(never)]
fn with_pe_cached<R>(call: &str, f: impl FnOnce(&mut Handles) -> R) -> R {
    let mut f = Some(f);
    let fast = CACHE.try_with(|c| {
        if !LIVE.load(Ordering::Acquire) {
            return None;
        }
        // Borrowed already only if a call made inside `f` came here: the slow path.
        let mut b = c.try_borrow_mut().ok()?;
        let h = b.as_mut()?;
        f.take().map(|f| f(h))
    });
    if let Ok(Some(r)) = fast {
        return r;
    }
    let mut h = first_call(call);
    let f = f.take().expect("the fast path did not run it");
    let r = f(&mut h);
    let Some(h) = keep_as_owner(h) else {
        return r;
    };
    // Kept for this thread's next calls, unless its cache is being torn down (or
    // in use by an outer call).
    let _ = CACHE.try_with(|c| {
        if let Ok(mut b) = c.try_borrow_mut() {
            *b = Some(h);
        }
    });
    r
}

/// The PEs that share memory with PE `me` (of node ids `pes`): every PE on one host;
/// through a hub, the block of consecutive ranks around `me` in its host domain
/// (the launcher places a host's ranks in one block; the relation is the same from
/// every member, so they agree on the team). Called once every PE maps its heap.
fn shared_pes(cluster: &Cluster, seg: &Segment, me: usize, pes: &[NodeId]) -> shmem::set::Set {
    use shmem::set::Set;
    if cluster.transport() == memchan::TransportKind::SharedMemory {
        return Set::new(0, 1, pes.len());
    }
    let Ok(rma) = seg.rma() else {
        return Set::new(me, 1, 1);
    };
    let near = |r: usize| rma.shares_memory_with(pes[r]);
    let lo = (0..me).rev().take_while(|&r| near(r)).last().unwrap_or(me);
    let hi = (me + 1..pes.len())
        .take_while(|&r| near(r))
        .last()
        .unwrap_or(me);
    Set::new(lo, 1, hi - lo + 1)
}

/// This thread's handles, made at its first call (or the end of the process naming
/// `call`).
#[cold]
#[inline(never)]
fn first_call(call: &str) -> Handles {
    let pe = match &*lock() {
        State::Ready(p) => Arc::clone(p),
        State::Uninit => die(call, "called before shmem_init"),
        State::Finalized => die(call, "called after shmem_finalize"),
    };
    let rma = pe
        .seg
        .rma()
        .unwrap_or_else(|e| die(call, format!("the heap's get/atomic handle: {e}")));
    Handles {
        tx: (0..pe.pes.len()).map(|_| None).collect(),
        pe,
        rma,
    }
}

/// Keeps `h` in the owner's slot if this thread is the owner and the slot is empty
/// and not in use (the owner's first call); else hands it back.
fn keep_as_owner(h: Handles) -> Option<Handles> {
    if OWNER.load(Ordering::Relaxed) != this_thread() {
        return Some(h);
    }
    // Registers the guard that empties the slot at this thread's exit; without it
    // (the thread is being torn down) the slot stays empty.
    if OWNER_GUARD.try_with(|_| ()).is_err() {
        return Some(h);
    }
    // SAFETY: this is the owner thread (checked), the only one that touches the slot.
    unsafe {
        let slot = &mut *OWNER_SLOT.handles.get();
        if *OWNER_SLOT.busy.get() || slot.is_some() {
            return Some(h);
        }
        *slot = Some(h);
    }
    None
}

fn init() -> Pe {
    const CALL: &str = "shmem_init";
    log::init();
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
                format!("{SIZE_VAR}={v:?} is not a size (bytes, or a number with K, M, G or T)"),
            )
        }),
        Err(_) => heap::DEFAULT_SIZE,
    };
    env::announce(rank.rank);
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
    // SAFETY: the heap mapping just made, a shared one of `seg_len` bytes (page
    // multiples), kept in `Pe` for as long as the view.
    let view = match unsafe { view::View::new(rx.as_ptr() as usize, seg_len) } {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::debug!(error = %e, "the heap keeps the receive mapping's page alignment");
            None
        }
    };
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
    let pes: Vec<NodeId> = (0..n)
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
    let shared = shared_pes(&cluster, &seg, me, &pes);
    Pe {
        me,
        pes,
        heap: Mutex::new(heap::Heap::new(want)),
        sys,
        statics,
        shared,
        peers: Mutex::new((0..n).map(|_| None).collect()),
        coll: Mutex::new(()),
        teams: Mutex::default(),
        base: view.as_ref().map_or(rx.as_ptr() as usize, view::View::addr),
        max_align: if view.is_some() { view::ALIGN } else { 4096 },
        _view: view,
        len: want,
        seg,
        cluster,
        _table: Mutex::new(table),
        rx: Mutex::new(rx),
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
        within(self.base, self.len)
    }

    /// As [`sym_offset`](Self::sym_offset), or the end naming `call`.
    #[inline(always)]
    fn offset(&self, call: &str, addr: *const c_void, len: usize) -> usize {
        match self.sym_offset(addr, len) {
            Some(off) => off,
            None => die_lazy(call, || {
                let statics = match self.statics {
                    Some((lo, size, _)) => format!("static data ({lo:#x}, {size} bytes)"),
                    None => "static data (not symmetric on this transport)".into(),
                };
                format!(
                    "{addr:p} (+{len} bytes) is not in the symmetric heap ({:#x}, {} bytes) or the {statics}",
                    self.base, self.len
                )
            }),
        }
    }

    /// As [`offset`](Self::offset) for an access of `len` bytes, which touches
    /// nothing when `len` is 0: then any pointer (NULL included) is accepted, as the
    /// standard's zero-length operations ask.
    #[inline(always)]
    fn span_offset(&self, call: &str, addr: *const c_void, len: usize) -> usize {
        if len == 0 {
            return 0;
        }
        self.offset(call, addr, len)
    }

    /// Reads this PE's own copy of the heap segment at `off`, through the rx
    /// mapping's word-wise atomic loads (other PEs may be writing it).
    fn read_own(&self, off: usize, buf: &mut [u8]) -> memchan::Result<()> {
        self.rx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .read(off, buf)
    }

    #[inline(always)]
    fn check_pe(&self, call: &str, pe: c_int) -> usize {
        match usize::try_from(pe) {
            Ok(p) if p < self.pes.len() => p,
            _ => die_lazy(call, || {
                format!("PE {pe} is not a PE of this job (0..{})", self.pes.len())
            }),
        }
    }
}

/// A thread's handles read as their PE (`h.me`, `h.offset(..)`), so the families in
/// [`shmem`] reach the shared fields and this thread's own handles alike.
impl std::ops::Deref for Handles {
    type Target = Pe;

    fn deref(&self) -> &Pe {
        &self.pe
    }
}

impl Handles {
    #[inline(always)]
    fn tx(&mut self, call: &str, pe: usize) -> &TxMapping {
        if self.tx[pe].is_none() {
            self.map_tx(call, pe);
        }
        self.tx[pe].as_ref().expect("made above")
    }

    /// Makes the tx mapping towards PE `pe` (once per thread and PE).
    #[cold]
    #[inline(never)]
    fn map_tx(&mut self, call: &str, pe: usize) {
        let t = self
            .pe
            .seg
            .map_tx(Dest::Node(self.pe.pes[pe]), TxAttrs::default())
            .unwrap_or_else(|e| die(call, format!("mapping PE {pe}'s heap: {e}")));
        self.tx[pe] = Some(t);
    }
}

/// Copies `len` bytes from `src` to the heap address `dest` (checked) of PE `pe`.
///
/// # Safety
/// `src` is readable for `len` bytes (the caller's contract).
#[inline(always)]
unsafe fn put(call: &str, dest: *const c_void, src: *const c_void, len: usize, pe: c_int) {
    if len == 0 {
        return;
    }
    if src.is_null() {
        die(call, "source is NULL");
    }
    with_pe(call, |h| {
        let target = h.pe.check_pe(call, pe);
        let off = h.pe.offset(call, dest, len);
        // To this PE too through a tx mapping: other PEs write the same memory, so a
        // plain copy would race with them (memchan's stores are atomic per word).
        let tx = h.tx(call, target);
        // SAFETY: the caller promises `src` is readable for `len` bytes (non-null, checked).
        let wrote = tx.write(off, unsafe {
            std::slice::from_raw_parts(src.cast::<u8>(), len)
        });
        if let Err(e) = wrote {
            die_lazy(call, || format!("writing {len} bytes to PE {pe}: {e}"));
        }
    })
}

/// Copies `len` bytes at `src` (a heap address) of PE `pe` into `dest`.
///
/// # Safety
/// `dest` is writable for `len` bytes.
#[inline(always)]
unsafe fn get(call: &str, dest: *mut c_void, src: *const c_void, len: usize, pe: c_int) {
    if len == 0 {
        return;
    }
    if dest.is_null() {
        die(call, "destination is NULL");
    }
    with_pe(call, |h| {
        let p = &h.pe;
        let target = p.check_pe(call, pe);
        let off = p.offset(call, src, len);
        // SAFETY: the caller promises `dest` is writable for `len` bytes (non-null, checked).
        let buf = unsafe { std::slice::from_raw_parts_mut(dest.cast::<u8>(), len) };
        // This PE's own copy through the rx mapping's word-wise atomic loads: other PEs
        // may be writing it.
        let got = if target == p.me {
            p.read_own(off, buf)
        } else {
            h.rma.get(p.pes[target], off, buf)
        };
        if let Err(e) = got {
            die_lazy(call, || format!("reading {len} bytes from PE {pe}: {e}"));
        }
    })
}

#[no_mangle]
pub extern "C" fn shmem_init() {
    let mut st = lock();
    match &*st {
        State::Uninit => {
            *st = State::Ready(Arc::new(init()));
            OWNER.store(this_thread(), Ordering::Relaxed);
            LIVE.store(true, Ordering::Release);
            leave_at_exit_once();
        }
        State::Ready(_) => {} // a second init (or start_pes after it) changes nothing
        State::Finalized => die("shmem_init", "called after shmem_finalize"),
    }
}

/// Set by `shmem_global_exit`: the job ends, the PE must not leave as if it were done.
pub(crate) static GLOBAL_EXIT: AtomicBool = AtomicBool::new(false);

/// Registers [`leave_at_exit`] with the C library, once per process.
fn leave_at_exit_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        extern "C" {
            // glibc's: like `atexit`, and the handler gets the exit status.
            fn on_exit(f: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
        }
        // SAFETY: glibc's `on_exit` with a plain function that lives as long as the
        // process (this library is never unloaded while it has a PE) and no argument.
        if unsafe { on_exit(leave_at_exit, std::ptr::null_mut()) } != 0 {
            tracing::debug!("no exit handler: a PE that exits without shmem_finalize fails");
        }
    });
}

/// The implicit finalize of a program that exits with status 0 without
/// `shmem_finalize` (a 1.0-era one that called `start_pes`, as the OSU benchmarks
/// do): the PE leaves the cluster, so its peers see it leave (no isolation at the
/// hub) rather than fail. No barrier: an exit never waits for other PEs. A PE that
/// exits with an error (its own, `die`'s) or by `shmem_global_exit` does not leave:
/// the job is ending, and a clean leave would let the others pass a barrier it never
/// reached. Skipped when another thread holds the state, or still holds the PE.
extern "C" fn leave_at_exit(status: c_int, _arg: *mut c_void) {
    if status != 0 || GLOBAL_EXIT.load(Ordering::Acquire) {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        let Ok(mut st) = STATE.try_lock() else {
            return;
        };
        if matches!(*st, State::Ready(_)) {
            LIVE.store(false, Ordering::Release);
            let _ = CACHE.try_with(|c| c.try_borrow_mut().map(|mut b| b.take()));
            // The last holder of the PE drops it: its mappings, then the cluster,
            // which leaves.
            *st = State::Finalized;
        }
    });
}

/// OpenSHMEM 1.0's init; the argument is ignored, as the standard says.
#[no_mangle]
pub extern "C" fn start_pes(_npes: c_int) {
    shmem_init()
}

#[no_mangle]
pub extern "C" fn shmem_finalize() {
    const CALL: &str = "shmem_finalize";
    let mut st = lock();
    let p = match &*st {
        State::Ready(p) => p,
        State::Uninit => die(CALL, "called before shmem_init"),
        State::Finalized => die(CALL, "called after shmem_finalize"),
    };
    // Collective: nobody leaves while another PE may still address its memory.
    if let Err(e) = p.cluster.barrier() {
        die(CALL, format!("barrier: {e}"));
    }
    LIVE.store(false, Ordering::Release);
    let _ = CACHE.try_with(|c| c.try_borrow_mut().map(|mut b| b.take()));
    if OWNER.load(Ordering::Relaxed) == this_thread() {
        // SAFETY: this is the owner thread (checked), and no call of it is under way
        // (this is one, and it does not use the slot).
        drop(unsafe { (*OWNER_SLOT.handles.get()).take() });
        OWNER.store(0, Ordering::Relaxed);
    }
    // Drops the mappings and leaves the cluster (with the caches of other threads).
    *st = State::Finalized;
}

#[no_mangle]
pub extern "C" fn shmem_my_pe() -> c_int {
    with_pe("shmem_my_pe", |h| h.pe.me as c_int)
}

#[no_mangle]
pub extern "C" fn _my_pe() -> c_int {
    with_pe("_my_pe", |h| h.pe.me as c_int)
}

#[no_mangle]
pub extern "C" fn shmem_n_pes() -> c_int {
    with_pe("shmem_n_pes", |h| h.pe.pes.len() as c_int)
}

#[no_mangle]
pub extern "C" fn _num_pes() -> c_int {
    with_pe("_num_pes", |h| h.pe.pes.len() as c_int)
}

/// A new block of `size` (> 0) bytes starting on a multiple of `align` (a power of
/// two), on this PE only: the collective calls add the barrier. The end naming
/// `call` when it does not fit.
fn alloc_block(call: &str, size: usize, align: usize) -> *mut c_void {
    with_pe(call, |h| {
        let p = &h.pe;
        if align > p.max_align {
            die(
                call,
                format!(
                    "alignment {align} is larger than the heap's own ({}), the most every PE can give",
                    p.max_align
                ),
            );
        }
        let got = p
            .heap
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .alloc_aligned(size, align);
        let Some(off) = got else {
            let aligned = if align > heap::ALIGN {
                format!(" aligned to {align}")
            } else {
                String::new()
            };
            die(
                call,
                format!(
                    "{size} bytes{aligned} do not fit in the symmetric heap of {} bytes: raise {SIZE_VAR}",
                    p.len
                ),
            )
        };
        (p.base + off) as *mut c_void
    })
}

/// The length of the heap block at `ptr` (rounded up to [`heap::ALIGN`]), or the
/// end naming `call` for an address no allocation returned.
fn block_len(call: &str, ptr: *mut c_void) -> usize {
    with_pe(call, |h| {
        let off = h.pe.offset(call, ptr, 0);
        let len =
            h.pe.heap
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .block_len(off);
        len.unwrap_or_else(|| {
            die(
                call,
                format!("{ptr:p} is not a block shmem_malloc returned"),
            )
        })
    })
}

/// The barrier of the collective heap calls (OpenSHMEM 1.5, section 9.3: one
/// semantically equivalent to `shmem_barrier_all`, puts completed): on exit from an
/// allocation, so that every PE holds the block when any PE returns and may put into
/// it; on entry to a free, so that no PE still addresses the block.
fn heap_barrier(call: &str) {
    if let Err(e) = with_pe(call, |h| h.pe.cluster.barrier().map_err(Box::new)) {
        die(call, format!("barrier: {e}"));
    }
}

/// `shmem_malloc` and `shmem_align`: NULL, without a barrier, for `size` 0, as
/// the standard says; else the block, after the barrier.
fn malloc(call: &str, size: usize, align: usize) -> *mut c_void {
    if size == 0 {
        return std::ptr::null_mut();
    }
    let ptr = alloc_block(call, size, align);
    heap_barrier(call);
    ptr
}

/// `shmem_free`: nothing for NULL; else the barrier, then the block is freed.
fn free(call: &str, ptr: *mut c_void) {
    if ptr.is_null() {
        return;
    }
    block_len(call, ptr); // a bad pointer is refused before the barrier
    heap_barrier(call);
    with_pe(call, |h| {
        let off = h.pe.offset(call, ptr, 0);
        h.pe.heap
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .free(off);
    })
}

#[no_mangle]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    malloc("shmem_malloc", size, heap::ALIGN)
}

#[no_mangle]
pub extern "C" fn shmalloc(size: usize) -> *mut c_void {
    malloc("shmalloc", size, heap::ALIGN)
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
    // The error boxed: an `Ok` is then one null word, not the whole error's size
    // moved through the stack three times on every call.
    if let Err(e) = with_pe("shmem_quiet", |h| h.pe.cluster.ack().map_err(Box::new)) {
        die("shmem_quiet", e);
    }
}

/// Ordering of puts per PE is already memchan's (each destination sees a sender's
/// writes in order); `ack` gives that and more.
#[no_mangle]
pub extern "C" fn shmem_fence() {
    if let Err(e) = with_pe("shmem_fence", |h| h.pe.cluster.ack().map_err(Box::new)) {
        die("shmem_fence", e);
    }
}

#[no_mangle]
pub extern "C" fn shmem_barrier_all() {
    if let Err(e) = with_pe("shmem_barrier_all", |h| {
        h.pe.cluster.barrier().map_err(Box::new)
    }) {
        die("shmem_barrier_all", e);
    }
}
