//! `memchan.h`: message passing (the `memchan-msg` crate): communicators, blocking
//! and non-blocking send and receive in both modes (full postal: `send`, `isend`;
//! restricted zero-copy: `ssend`, `issend`, `irecv_rx`), completion by wait / test
//! (one, all, any), probe.
//!
//! A communicator is used by one thread at a time (its calls make progress for it);
//! ranks are node ids. Non-blocking calls use the caller's memory, as MPI's do: the
//! buffer must stay valid (and, for a receive, untouched) until `memchan_wait`
//! returns its request.

use super::{bytes, bytes_mut, call, get, insert, invalid, lock, put, remove, Fail, Obj, Res};
use memchan_msg::Completion;
use memchan_msg::{Comm, CommConfig, Request, Status};
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex};

/// A communicator: this node's endpoint of message passing.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_comm {
    pub id: u64,
}

/// A pending non-blocking send or receive.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_request {
    pub id: u64,
}

/// A received message's envelope.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_status {
    pub source: u32,
    pub tag: u32,
    pub len: usize,
}

/// Receive from any source.
pub const MEMCHAN_ANY_SOURCE: u32 = u32::MAX;
/// Receive with any tag.
pub const MEMCHAN_ANY_TAG: u32 = u32::MAX;
/// The largest tag.
pub const MEMCHAN_TAG_UB: u32 = i32::MAX as u32;

// Spelled as literals for the header; they are memchan-msg's values.
const _: () = assert!(
    MEMCHAN_ANY_SOURCE == memchan_msg::ANY_SOURCE
        && MEMCHAN_ANY_TAG == memchan_msg::ANY_TAG
        && MEMCHAN_TAG_UB == memchan_msg::TAG_UB
);

type CommDep<'a> = Comm<'a>;

self_cell::self_cell!(
    /// A communicator and the cluster it borrows (kept alive by it).
    struct CommCell {
        owner: Arc<memchan::Cluster>,
        #[not_covariant]
        dependent: CommDep,
    }
);

/// A communicator as the handle table holds it.
pub(crate) struct CommObj(CommCell);

// SAFETY: a `Comm` is `!Send` only for the raw pointers of C buffers given to the
// non-blocking calls; C promises those stay valid until the request completes, from
// whichever thread, and the object is only reached under its mutex.
unsafe impl Send for CommObj {}

fn comm(id: u64) -> Res<Arc<Mutex<CommObj>>> {
    get("communicator", id, |o| match o {
        Obj::Comm(c) => Some(c.clone()),
        _ => None,
    })
}

/// Runs `f` on the communicator `id`.
fn with_comm<T>(id: u64, f: impl FnOnce(&mut Comm<'_>) -> Res<T>) -> Res<T> {
    let c = comm(id)?;
    let mut g = lock(&c);
    g.0.with_dependent_mut(|_, comm| f(comm))
}

fn status(s: Status) -> memchan_status {
    memchan_status {
        source: s.source,
        tag: s.tag,
        len: s.len,
    }
}

/// Creates this node's endpoint of the communicator `name` with the default limits:
/// collective over every live member of the cluster (it ends with a barrier).
///
/// # Safety
/// `name` is null or NUL-terminated; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_comm_new(
    c: super::api::memchan_cluster,
    name: *const c_char,
    out: *mut memchan_comm,
) -> c_int {
    call("memchan_comm_new", || {
        // SAFETY: the caller's promise about `name`.
        let name = unsafe { super::c_str("communicator name", name) }?;
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        let cl = get("cluster", c.id, |o| match o {
            Obj::Cluster(c) => Some(c.clone()),
            _ => None,
        })?;
        let cell = CommCell::try_new(cl, |cl| Comm::new(cl, name, CommConfig::default()))?;
        let id = insert(Obj::Comm(Arc::new(Mutex::new(CommObj(cell)))));
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, memchan_comm { id }) }
    })
}

/// This node's rank (its node id).
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_comm_rank(c: memchan_comm, out: *mut u32) -> c_int {
    call("memchan_comm_rank", || {
        let r = with_comm(c.id, |c| Ok(c.rank()))?;
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, r) }
    })
}

/// Sends `len` bytes to `dest` with `tag` (buffered: may return before the receive).
///
/// # Safety
/// `data` is null or points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn memchan_send(
    c: memchan_comm,
    dest: u32,
    tag: u32,
    data: *const c_void,
    len: usize,
) -> c_int {
    call("memchan_send", || {
        // SAFETY: the caller's promise about `data`.
        let d = unsafe { bytes("data", data.cast(), len) }?;
        with_comm(c.id, |c| Ok(c.send(dest, tag, d)?))
    })
}

/// Receives a message from `src` (or `MEMCHAN_ANY_SOURCE`) with `tag` (or
/// `MEMCHAN_ANY_TAG`) into `buf` of `cap` bytes; its envelope into `st` (may be null).
/// A message longer than `cap` is `MEMCHAN_E_TRUNCATED` and stays queued.
///
/// # Safety
/// `buf` is null or points to `cap` writable bytes; `st` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_recv(
    c: memchan_comm,
    src: u32,
    tag: u32,
    buf: *mut c_void,
    cap: usize,
    st: *mut memchan_status,
) -> c_int {
    call("memchan_recv", || {
        // SAFETY: the caller's promise about `buf`.
        let b = unsafe { bytes_mut("buf", buf.cast(), cap) }?;
        let s = with_comm(c.id, |c| Ok(c.recv(src, tag, b)?))?;
        if !st.is_null() {
            // SAFETY: not null; the caller promises it is writable.
            unsafe { st.write(status(s)) };
        }
        Ok(())
    })
}

/// Starts a send of the caller's `len` bytes (they must stay unchanged until
/// `memchan_wait` returns the request).
///
/// # Safety
/// `data` is null or points to `len` readable bytes that stay valid and unchanged
/// until the request completes; `req` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_isend(
    c: memchan_comm,
    dest: u32,
    tag: u32,
    data: *const c_void,
    len: usize,
    req: *mut memchan_request,
) -> c_int {
    // SAFETY: the caller's promises, as `start_send` takes them.
    unsafe { start_send("memchan_isend", c, dest, tag, data, len, req, false) }
}

/// `memchan_isend` (or, with `sync`, `memchan_issend`) as the call `name`.
///
/// # Safety
/// As `memchan_isend`.
#[allow(clippy::too_many_arguments)]
unsafe fn start_send(
    name: &str,
    c: memchan_comm,
    dest: u32,
    tag: u32,
    data: *const c_void,
    len: usize,
    req: *mut memchan_request,
    sync: bool,
) -> c_int {
    call(name, || {
        // SAFETY: the caller's promise about `data` (checked for null here).
        let d = unsafe { bytes("data", data.cast(), len) }?;
        if req.is_null() {
            return Err(invalid("req", "null pointer"));
        }
        let r = with_comm(c.id, |c| {
            // SAFETY: the caller promises the bytes stay valid until the request completes.
            Ok(unsafe { c.isend_ptr(dest, tag, d.as_ptr(), len, sync) }?)
        })?;
        // SAFETY: the caller's promise about `req`.
        unsafe { put("req", req, memchan_request { id: r.0 }) }
    })
}

/// Starts a receive into the caller's `cap` bytes (untouched by the caller until
/// `memchan_wait` returns the request).
///
/// # Safety
/// `buf` is null or points to `cap` writable bytes that stay valid, and unused by
/// anyone else, until the request completes; `req` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_irecv(
    c: memchan_comm,
    src: u32,
    tag: u32,
    buf: *mut c_void,
    cap: usize,
    req: *mut memchan_request,
) -> c_int {
    call("memchan_irecv", || {
        // SAFETY: the caller's promise about `buf` (checked for null here).
        let b = unsafe { bytes_mut("buf", buf.cast(), cap) }?;
        if req.is_null() {
            return Err(invalid("req", "null pointer"));
        }
        let p = b.as_mut_ptr();
        let r = with_comm(c.id, |c| {
            // SAFETY: the caller promises the memory stays valid until the request completes.
            Ok(unsafe { c.irecv_ptr(src, tag, p, cap) }?)
        })?;
        // SAFETY: the caller's promise about `req`.
        unsafe { put("req", req, memchan_request { id: r.0 }) }
    })
}

/// Waits for the request; a receive's envelope into `st` (may be null). The request's
/// own failure (`MEMCHAN_E_TRUNCATED`, `MEMCHAN_E_PEER_GONE`, ...) is the result.
///
/// # Safety
/// `st` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_wait(
    c: memchan_comm,
    req: memchan_request,
    st: *mut memchan_status,
) -> c_int {
    call("memchan_wait", || {
        let s = with_comm(c.id, |c| Ok(c.wait(Request(req.id)).result?))?;
        if !st.is_null() {
            // SAFETY: not null; the caller promises it is writable.
            unsafe { st.write(status(s)) };
        }
        Ok(())
    })
}

/// Sends `len` bytes to `dest` with `tag` in zero-copy mode: synchronous, it returns
/// once a receive matched the message (a long one is deposited straight into a
/// receive buffer posted with `memchan_irecv_rx`).
///
/// # Safety
/// `data` is null or points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn memchan_ssend(
    c: memchan_comm,
    dest: u32,
    tag: u32,
    data: *const c_void,
    len: usize,
) -> c_int {
    call("memchan_ssend", || {
        // SAFETY: the caller's promise about `data`.
        let d = unsafe { bytes("data", data.cast(), len) }?;
        with_comm(c.id, |c| Ok(c.ssend(dest, tag, d)?))
    })
}

/// Starts a zero-copy-mode send of the caller's `len` bytes: it completes once a
/// receive matched it (the bytes stay unchanged until `memchan_wait` or another
/// completion call returns the request).
///
/// # Safety
/// `data` is null or points to `len` readable bytes that stay valid and unchanged
/// until the request completes; `req` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_issend(
    c: memchan_comm,
    dest: u32,
    tag: u32,
    data: *const c_void,
    len: usize,
    req: *mut memchan_request,
) -> c_int {
    // SAFETY: the caller's promises, as `start_send` takes them.
    unsafe { start_send("memchan_issend", c, dest, tag, data, len, req, true) }
}

/// Starts a receive into `len` bytes at `offset` of the rx mapping `rx` (of a segment
/// the senders may write): a matching `memchan_ssend` / `memchan_issend` longer than
/// the eager limit deposits its body there directly, one copy. Read the data through
/// `rx` once the request completes.
///
/// # Safety
/// `req` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_irecv_rx(
    c: memchan_comm,
    src: u32,
    tag: u32,
    rx: super::api::memchan_rx,
    offset: usize,
    len: usize,
    req: *mut memchan_request,
) -> c_int {
    call("memchan_irecv_rx", || {
        if req.is_null() {
            return Err(invalid("req", "null pointer"));
        }
        let m = super::api::rx(rx.id)?;
        let m = lock(&m);
        let r = with_comm(c.id, |c| Ok(c.irecv_rx(src, tag, &m, offset, len)?))?;
        // SAFETY: the caller's promise about `req`.
        unsafe { put("req", req, memchan_request { id: r.0 }) }
    })
}

/// The requests C passed as `(reqs, n)`.
///
/// # Safety
/// With `n > 0`, `reqs` is null or points to `n` requests.
unsafe fn requests(reqs: *const memchan_request, n: usize) -> Res<Vec<Request>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if reqs.is_null() {
        return Err(invalid("reqs", format!("null pointer with count {n}")));
    }
    // SAFETY: not null; the caller promises n requests.
    let rs = unsafe { std::slice::from_raw_parts(reqs, n) };
    Ok(rs.iter().map(|r| Request(r.id)).collect())
}

/// Waits for all `n` requests. Each one's envelope goes to `sts[i]` and its own
/// result code to `codes[i]` (either array may be null, else holds `n`); the result
/// is `MEMCHAN_OK` if every request succeeded, else the first failed one's code.
/// An unknown request fails the call before anything is waited for.
///
/// # Safety
/// `reqs` points to `n` requests; `sts` and `codes` are null or hold `n` writable
/// entries.
#[no_mangle]
pub unsafe extern "C" fn memchan_wait_all(
    c: memchan_comm,
    reqs: *const memchan_request,
    n: usize,
    sts: *mut memchan_status,
    codes: *mut c_int,
) -> c_int {
    call("memchan_wait_all", || {
        // SAFETY: the caller's promise about `reqs`.
        let rs = unsafe { requests(reqs, n) }?;
        let done = with_comm(c.id, |c| Ok(c.wait_all(&rs)?))?;
        let mut first: Option<Fail> = None;
        for (i, comp) in done.into_iter().enumerate() {
            let code = match comp.result {
                Ok(s) => {
                    if !sts.is_null() {
                        // SAFETY: the caller promises n writable entries.
                        unsafe { sts.add(i).write(status(s)) };
                    }
                    0
                }
                Err(e) => {
                    let f = Fail::from(e);
                    let code = f.code;
                    first.get_or_insert(f);
                    code
                }
            };
            if !codes.is_null() {
                // SAFETY: the caller promises n writable entries.
                unsafe { codes.add(i).write(code) };
            }
        }
        first.map_or(Ok(()), Err)
    })
}

/// Waits for one of the `n` requests: its position into `*index`, its envelope into
/// `st` (may be null); the result is that request's own.
///
/// # Safety
/// `reqs` points to `n` requests; `index` is null or writable; `st` is null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_wait_any(
    c: memchan_comm,
    reqs: *const memchan_request,
    n: usize,
    index: *mut usize,
    st: *mut memchan_status,
) -> c_int {
    call("memchan_wait_any", || {
        if index.is_null() {
            return Err(invalid("index", "null pointer"));
        }
        // SAFETY: the caller's promise about `reqs`.
        let rs = unsafe { requests(reqs, n) }?;
        let (i, comp): (usize, Completion) = with_comm(c.id, |c| Ok(c.wait_any(&rs)?))?;
        // SAFETY: the caller's promise about `index`.
        unsafe { put("index", index, i) }?;
        let s = comp.result?;
        if !st.is_null() {
            // SAFETY: not null; the caller promises it is writable.
            unsafe { st.write(status(s)) };
        }
        Ok(())
    })
}

/// Whether the request completed: `*done` 1 (and `st` filled, may be null) or 0.
///
/// # Safety
/// `done` and `st` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_test(
    c: memchan_comm,
    req: memchan_request,
    done: *mut c_int,
    st: *mut memchan_status,
) -> c_int {
    call("memchan_test", || {
        if done.is_null() {
            return Err(invalid("done", "null pointer"));
        }
        let got = with_comm(c.id, |c| Ok(c.test(Request(req.id))?))?;
        let fin = match got {
            None => 0,
            Some(comp) => {
                let s = comp.result?;
                if !st.is_null() {
                    // SAFETY: not null; the caller promises it is writable.
                    unsafe { st.write(status(s)) };
                }
                1
            }
        };
        // SAFETY: the caller's promise about `done`.
        unsafe { put("done", done, fin) }
    })
}

/// Waits until a message from `src` with `tag` is there to receive; its envelope into
/// `st`.
///
/// # Safety
/// `st` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_probe(
    c: memchan_comm,
    src: u32,
    tag: u32,
    st: *mut memchan_status,
) -> c_int {
    call("memchan_probe", || {
        if st.is_null() {
            return Err(invalid("st", "null pointer"));
        }
        let s = with_comm(c.id, |c| Ok(c.probe(src, tag)?))?;
        // SAFETY: the caller's promise about `st`.
        unsafe { put("st", st, status(s)) }
    })
}

/// As `memchan_probe` without waiting: `*found` 1 (and `st` filled) or 0.
///
/// # Safety
/// `found` and `st` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_iprobe(
    c: memchan_comm,
    src: u32,
    tag: u32,
    found: *mut c_int,
    st: *mut memchan_status,
) -> c_int {
    call("memchan_iprobe", || {
        if found.is_null() || st.is_null() {
            return Err(invalid("found/st", "null pointer"));
        }
        let s = with_comm(c.id, |c| Ok(c.iprobe(src, tag)?))?;
        // SAFETY: the caller's promise about `found` and `st`.
        unsafe {
            if let Some(s) = s {
                put("st", st, status(s))?;
            }
            put("found", found, c_int::from(s.is_some()))
        }
    })
}

/// Completes the communicator's traffic before leaving (as `MPI_Finalize`), then
/// closes the handle (also when `finish` fails: its error is the result).
#[no_mangle]
pub extern "C" fn memchan_comm_free(c: memchan_comm) -> c_int {
    call("memchan_comm_free", || {
        let obj = remove("communicator", c.id, |o| match o {
            Obj::Comm(c) => Some(c.clone()),
            _ => None,
        })?;
        let mut g = lock(&obj);
        g.0.with_dependent_mut(|_, comm| Ok(comm.finish()?))
    })
}
