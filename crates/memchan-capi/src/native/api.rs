//! `memchan.h`: clusters, membership, segments, mappings, locks, remote access.
//!
//! Every function returns `MEMCHAN_OK` (0) or an error code (`MEMCHAN_E_*`), with the
//! failing call's message in `memchan_last_error()`; results go through out-pointers.
//! Timeouts are in milliseconds, a negative one waits for ever.

use super::{
    bytes, bytes_mut, c_str, call, get, insert, invalid, lock, node, put, remove, restore, timeout,
    Fail, Obj, Res,
};
use memchan::{AtomicOp, Cluster, Cmp, Dest, EventKind, GroupId, RxAttrs, TxAttrs};
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::{Arc, Mutex};

/// A joined cluster (this process's node). A zeroed handle is never valid.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_cluster {
    pub id: u64,
}

/// A named segment of the cluster's address space.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_segment {
    pub id: u64,
}

/// A tx mapping: writes through it land in its destination's rx mappings.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_tx {
    pub id: u64,
}

/// An rx mapping: local memory receiving every write addressed to the segment.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_rx {
    pub id: u64,
}

/// Remote reads and atomics on every node's copy of one segment (one thread at a
/// time, like a tx mapping).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_rma {
    pub id: u64,
}

/// A named cluster lock.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_lock {
    pub id: u64,
}

/// Where a tx mapping's writes go: `kind` is `MEMCHAN_DEST_NODE` (`id` a node id),
/// `MEMCHAN_DEST_GROUP` (`id` a group id) or `MEMCHAN_DEST_BROADCAST` (`id` unused).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_dest {
    pub kind: c_int,
    pub id: u32,
}

/// A membership event: `kind` is `MEMCHAN_EVENT_JOINED`, `_LEFT` or `_FAILED`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct memchan_event {
    pub epoch: u64,
    pub incarnation: u64,
    pub node: u32,
    pub kind: c_int,
}

/// `memchan_dest.kind`: one node.
pub const MEMCHAN_DEST_NODE: c_int = 0;
/// `memchan_dest.kind`: a multicast group.
pub const MEMCHAN_DEST_GROUP: c_int = 1;
/// `memchan_dest.kind`: every node.
pub const MEMCHAN_DEST_BROADCAST: c_int = 2;

/// `memchan_event.kind`: the node joined.
pub const MEMCHAN_EVENT_JOINED: c_int = 1;
/// `memchan_event.kind`: the node left.
pub const MEMCHAN_EVENT_LEFT: c_int = 2;
/// `memchan_event.kind`: the node was declared failed and isolated.
pub const MEMCHAN_EVENT_FAILED: c_int = 3;

/// `memchan_map_tx` flag: the sender's own rx mapping receives an ordered copy.
pub const MEMCHAN_TX_LOCAL_COPY: c_uint = 1;
/// `memchan_map_tx` flag: every write returns once applied everywhere.
pub const MEMCHAN_TX_ACK_REQUEST: c_uint = 2;
/// `memchan_map_tx` flag: point-to-point writes still go while isolated.
pub const MEMCHAN_TX_UNDER_ERROR: c_uint = 4;
/// `memchan_map_tx` flag: start with transmit disabled.
pub const MEMCHAN_TX_DISABLED: c_uint = 8;

/// `memchan_map_rx` flag: a write landing wakes `memchan_rx_wait`.
pub const MEMCHAN_RX_NOTIFY: c_uint = 1;
/// `memchan_map_rx` flag: other nodes may get from and run atomics on this copy.
pub const MEMCHAN_RX_REMOTE_READ: c_uint = 2;
/// `memchan_map_rx` flag: writes to the pages are dropped (receive disabled).
pub const MEMCHAN_RX_RECEIVE_DISABLED: c_uint = 4;

/// `memchan_atomic_*` op: read the word.
pub const MEMCHAN_ATOMIC_FETCH: c_int = 0;
/// `memchan_atomic_*` op: store `a`.
pub const MEMCHAN_ATOMIC_SET: c_int = 1;
/// `memchan_atomic_*` op: add `a` (wrapping).
pub const MEMCHAN_ATOMIC_ADD: c_int = 2;
/// `memchan_atomic_*` op: add `a` (wrapping); the old value is the point.
pub const MEMCHAN_ATOMIC_FETCH_ADD: c_int = 3;
/// `memchan_atomic_*` op: store `a`, returning the old value.
pub const MEMCHAN_ATOMIC_SWAP: c_int = 4;
/// `memchan_atomic_*` op: store `b` if the word holds `a` (it swapped iff old == a).
pub const MEMCHAN_ATOMIC_COMPARE_SWAP: c_int = 5;
/// `memchan_atomic_*` op: bitwise and with `a`.
pub const MEMCHAN_ATOMIC_FETCH_AND: c_int = 6;
/// `memchan_atomic_*` op: bitwise or with `a`.
pub const MEMCHAN_ATOMIC_FETCH_OR: c_int = 7;
/// `memchan_atomic_*` op: bitwise xor with `a`.
pub const MEMCHAN_ATOMIC_FETCH_XOR: c_int = 8;

/// `memchan_rx_wait_until_u64` comparison: word == value.
pub const MEMCHAN_CMP_EQ: c_int = 0;
/// word != value.
pub const MEMCHAN_CMP_NE: c_int = 1;
/// word > value.
pub const MEMCHAN_CMP_GT: c_int = 2;
/// word >= value.
pub const MEMCHAN_CMP_GE: c_int = 3;
/// word < value.
pub const MEMCHAN_CMP_LT: c_int = 4;
/// word <= value.
pub const MEMCHAN_CMP_LE: c_int = 5;

/// A lock handle: the lock and, while this handle holds it, its guard.
pub(crate) struct HeldLock(LockCell);

type Guard<'a> = Option<memchan::LockGuard<'a>>;

self_cell::self_cell!(
    struct LockCell {
        owner: memchan::Lock,
        #[not_covariant]
        dependent: Guard,
    }
);

// SAFETY: the guard borrows the `Lock` in the same cell (`Lock` is `Send`, not `Sync`:
// a guard's `&Lock` is `!Send`). The cell moves as a whole and is only reached under
// its mutex, so the lock and the guard are never used from two threads at once.
unsafe impl Send for HeldLock {}

// The table is shared by every thread; the objects in it are reached under a mutex.
fn cluster(id: u64) -> Res<Arc<Cluster>> {
    get("cluster", id, |o| match o {
        Obj::Cluster(c) => Some(c.clone()),
        _ => None,
    })
}

fn segment(id: u64) -> Res<Arc<Mutex<Option<memchan::Segment>>>> {
    get("segment", id, |o| match o {
        Obj::Segment(s) => Some(s.clone()),
        _ => None,
    })
}

/// Runs `f` on the segment `id`, if it was not freed.
fn with_segment<T>(id: u64, f: impl FnOnce(&memchan::Segment) -> Res<T>) -> Res<T> {
    let s = segment(id)?;
    let g = lock(&s);
    match g.as_ref() {
        Some(s) => f(s),
        None => Err(invalid("segment handle", format!("{id} was freed"))),
    }
}

fn tx(id: u64) -> Res<Arc<Mutex<memchan::TxMapping>>> {
    get("tx mapping", id, |o| match o {
        Obj::Tx(t) => Some(t.clone()),
        _ => None,
    })
}

pub(super) fn rx(id: u64) -> Res<Arc<Mutex<memchan::RxMapping>>> {
    get("rx mapping", id, |o| match o {
        Obj::Rx(r) => Some(r.clone()),
        _ => None,
    })
}

fn rma(id: u64) -> Res<Arc<Mutex<memchan::Rma>>> {
    get("remote-access handle", id, |o| match o {
        Obj::Rma(r) => Some(r.clone()),
        _ => None,
    })
}

fn lock_obj(id: u64) -> Res<Arc<Mutex<HeldLock>>> {
    get("lock", id, |o| match o {
        Obj::Lock(l) => Some(l.clone()),
        _ => None,
    })
}

/// Joins the cluster `name` (one host's shared memory, or a hub as `MEMCHAN_HUB`
/// names), as a new node.
///
/// # Safety
/// `name` is null or a NUL-terminated string; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_join(name: *const c_char, out: *mut memchan_cluster) -> c_int {
    call("memchan_join", || {
        // SAFETY: the caller's promise about `name`.
        let name = unsafe { c_str("cluster name", name) }?;
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        crate::log::init();
        let c = Cluster::join(name)?;
        let id = insert(Obj::Cluster(Arc::new(c)));
        // SAFETY: checked not null above; the caller promises it is writable.
        unsafe { put("out", out, memchan_cluster { id }) }
    })
}

/// Leaves the cluster and closes the handle. Refused (`MEMCHAN_E_INVALID`) while a
/// communicator made from it is open or another thread is inside a call on it.
/// Segments, mappings and locks made from it stay valid handles; their calls report
/// the cluster's errors.
#[no_mangle]
pub extern "C" fn memchan_leave(c: memchan_cluster) -> c_int {
    call("memchan_leave", || {
        let arc = remove("cluster", c.id, |o| match o {
            Obj::Cluster(c) => Some(c.clone()),
            _ => None,
        })?;
        match Arc::try_unwrap(arc) {
            Ok(cl) => {
                cl.leave();
                Ok(())
            }
            Err(arc) => {
                let users = Arc::strong_count(&arc) - 1;
                restore(c.id, Obj::Cluster(arc));
                Err(invalid(
                    "cluster handle",
                    format!("{users} communicator(s) or call(s) still use it: free them first"),
                ))
            }
        }
    })
}

/// This node's id.
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_node_id(c: memchan_cluster, out: *mut u32) -> c_int {
    call("memchan_node_id", || {
        let id = cluster(c.id)?.node_id();
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, u32::from(id.0)) }
    })
}

/// The live members' node ids: up to `cap` into `ids`, and how many there are into
/// `count` (call with `cap` 0 and `ids` null to ask the number).
///
/// # Safety
/// `ids` is null or has room for `cap` ids; `count` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_members(
    c: memchan_cluster,
    ids: *mut u32,
    cap: usize,
    count: *mut usize,
) -> c_int {
    call("memchan_members", || {
        let m = cluster(c.id)?.members();
        if cap > 0 && ids.is_null() {
            return Err(invalid("ids", format!("null pointer with capacity {cap}")));
        }
        for (i, n) in m.iter().take(cap).enumerate() {
            // SAFETY: i < cap, and the caller promises room for cap ids.
            unsafe { ids.add(i).write(u32::from(n.0)) };
        }
        // SAFETY: the caller's promise about `count`.
        unsafe { put("count", count, m.len()) }
    })
}

/// Waits until the cluster has at least `n` live members (`MEMCHAN_E_TIMEOUT` after
/// `timeout_ms`).
#[no_mangle]
pub extern "C" fn memchan_wait_for_members(c: memchan_cluster, n: usize, timeout_ms: u64) -> c_int {
    call("memchan_wait_for_members", || {
        let d = std::time::Duration::from_millis(timeout_ms);
        Ok(cluster(c.id)?.wait_for_members(n, d)?)
    })
}

/// The next membership event (a node's events start at its own join), waiting up to
/// `timeout_ms`: `MEMCHAN_E_TIMEOUT` when none came.
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_next_event(
    c: memchan_cluster,
    timeout_ms: i64,
    out: *mut memchan_event,
) -> c_int {
    call("memchan_next_event", || {
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        let Some(ev) = cluster(c.id)?.next_event(timeout(timeout_ms)) else {
            return Err(Fail {
                code: super::errors::MEMCHAN_E_TIMEOUT,
                msg: format!("no membership event within {timeout_ms} ms"),
            });
        };
        let kind = match ev.kind {
            EventKind::Joined => MEMCHAN_EVENT_JOINED,
            EventKind::Left => MEMCHAN_EVENT_LEFT,
            EventKind::Failed => MEMCHAN_EVENT_FAILED,
        };
        let e = memchan_event {
            epoch: ev.epoch,
            incarnation: ev.incarnation,
            node: u32::from(ev.node.0),
            kind,
        };
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, e) }
    })
}

/// Returns once every write this node made before is applied at every destination.
#[no_mangle]
pub extern "C" fn memchan_ack(c: memchan_cluster) -> c_int {
    call("memchan_ack", || Ok(cluster(c.id)?.ack()?))
}

/// Barrier over every live member.
#[no_mangle]
pub extern "C" fn memchan_barrier(c: memchan_cluster) -> c_int {
    call("memchan_barrier", || Ok(cluster(c.id)?.barrier()?))
}

/// Creates the multicast group `name` of `n` node ids; its id into `out`.
///
/// # Safety
/// `name` is null or NUL-terminated; `members` is null or holds `n` ids; `out` is null
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_create_group(
    c: memchan_cluster,
    name: *const c_char,
    members: *const u32,
    n: usize,
    out: *mut u32,
) -> c_int {
    call("memchan_create_group", || {
        // SAFETY: the caller's promise about `name`.
        let name = unsafe { c_str("group name", name) }?;
        if n > 0 && members.is_null() {
            return Err(invalid("members", format!("null pointer with {n} members")));
        }
        let ids = (0..n)
            // SAFETY: i < n, and the caller promises n ids.
            .map(|i| node(unsafe { members.add(i).read() }))
            .collect::<Res<Vec<_>>>()?;
        let g = cluster(c.id)?.create_group(name, &ids)?;
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, u32::from(g.0)) }
    })
}

/// The id of the multicast group `name` into `out` (`MEMCHAN_E_UNKNOWN_GROUP` if none).
///
/// # Safety
/// `name` is null or NUL-terminated; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_group(
    c: memchan_cluster,
    name: *const c_char,
    out: *mut u32,
) -> c_int {
    call("memchan_group", || {
        // SAFETY: the caller's promise about `name`.
        let name = unsafe { c_str("group name", name) }?;
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        let g = cluster(c.id)?.group(name)?;
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, u32::from(g.0)) }
    })
}

/// Barrier over the live members of the group `group`.
#[no_mangle]
pub extern "C" fn memchan_barrier_group(c: memchan_cluster, group: u32) -> c_int {
    call("memchan_barrier_group", || {
        let g = u16::try_from(group)
            .map_err(|_| invalid("group id", format!("{group} is not a group id")))?;
        Ok(cluster(c.id)?.barrier_group(GroupId(g))?)
    })
}

/// Creates (or opens, with the same size) the segment `name` of `size` bytes with
/// permission bits `mode` (e.g. 0600).
///
/// # Safety
/// `name` is null or NUL-terminated; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_segment_create(
    c: memchan_cluster,
    name: *const c_char,
    size: usize,
    mode: u32,
    out: *mut memchan_segment,
) -> c_int {
    call("memchan_segment_create", || {
        // SAFETY: the caller's promise about `name`.
        let name = unsafe { c_str("segment name", name) }?;
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        let s = cluster(c.id)?.segment(name, size, mode)?;
        let id = insert(Obj::Segment(Arc::new(Mutex::new(Some(s)))));
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, memchan_segment { id }) }
    })
}

/// Opens the existing segment `name` (`MEMCHAN_E_UNKNOWN_SEGMENT` if none).
///
/// # Safety
/// `name` is null or NUL-terminated; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_segment_open(
    c: memchan_cluster,
    name: *const c_char,
    out: *mut memchan_segment,
) -> c_int {
    call("memchan_segment_open", || {
        // SAFETY: the caller's promise about `name`.
        let name = unsafe { c_str("segment name", name) }?;
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        let s = cluster(c.id)?.open_segment(name)?;
        let id = insert(Obj::Segment(Arc::new(Mutex::new(Some(s)))));
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, memchan_segment { id }) }
    })
}

/// The segment's size in bytes.
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_segment_size(s: memchan_segment, out: *mut usize) -> c_int {
    call("memchan_segment_size", || {
        let n = with_segment(s.id, |s| Ok(s.size()))?;
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, n) }
    })
}

/// Frees the segment in the cluster (its mappings everywhere become invalid) and
/// closes the handle.
#[no_mangle]
pub extern "C" fn memchan_segment_free(s: memchan_segment) -> c_int {
    call("memchan_segment_free", || {
        let seg = segment(s.id)?;
        let taken = lock(&seg).take();
        let Some(taken) = taken else {
            return Err(invalid("segment handle", format!("{} was freed", s.id)));
        };
        // Closed first: a failed free leaves nothing to retry through (as Rust's
        // `Segment::free(self)`), and the handle must not outlive its segment.
        let _ = remove("segment", s.id, |o| {
            matches!(o, Obj::Segment(_)).then_some(())
        });
        Ok(taken.free()?)
    })
}

/// Closes the segment handle (the segment stays in the cluster; mappings made from it
/// stay valid).
#[no_mangle]
pub extern "C" fn memchan_segment_close(s: memchan_segment) -> c_int {
    call("memchan_segment_close", || {
        remove("segment", s.id, |o| {
            matches!(o, Obj::Segment(_)).then_some(())
        })
    })
}

/// Maps the segment rx with `flags` (`MEMCHAN_RX_*`, 0 for the defaults).
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_map_rx(
    s: memchan_segment,
    flags: c_uint,
    out: *mut memchan_rx,
) -> c_int {
    call("memchan_map_rx", || {
        let known = MEMCHAN_RX_NOTIFY | MEMCHAN_RX_REMOTE_READ | MEMCHAN_RX_RECEIVE_DISABLED;
        if flags & !known != 0 {
            return Err(invalid("rx flags", format!("{flags:#x} has unknown bits")));
        }
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        let attrs = RxAttrs {
            receive_enable: flags & MEMCHAN_RX_RECEIVE_DISABLED == 0,
            notify: flags & MEMCHAN_RX_NOTIFY != 0,
            remote_read: flags & MEMCHAN_RX_REMOTE_READ != 0,
        };
        let m = with_segment(s.id, |s| Ok(s.map_rx_with(attrs)?))?;
        let id = insert(Obj::Rx(Arc::new(Mutex::new(m))));
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, memchan_rx { id }) }
    })
}

/// Maps the segment tx towards `dest` with `flags` (`MEMCHAN_TX_*`, 0 for the
/// defaults).
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_map_tx(
    s: memchan_segment,
    dest: memchan_dest,
    flags: c_uint,
    out: *mut memchan_tx,
) -> c_int {
    call("memchan_map_tx", || {
        let known = MEMCHAN_TX_LOCAL_COPY
            | MEMCHAN_TX_ACK_REQUEST
            | MEMCHAN_TX_UNDER_ERROR
            | MEMCHAN_TX_DISABLED;
        if flags & !known != 0 {
            return Err(invalid("tx flags", format!("{flags:#x} has unknown bits")));
        }
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        let d = match dest.kind {
            MEMCHAN_DEST_NODE => Dest::Node(node(dest.id)?),
            MEMCHAN_DEST_GROUP => {
                Dest::Group(GroupId(u16::try_from(dest.id).map_err(|_| {
                    invalid("group id", format!("{} is not a group id", dest.id))
                })?))
            }
            MEMCHAN_DEST_BROADCAST => Dest::Broadcast,
            k => {
                return Err(invalid(
                    "destination kind",
                    format!("{k} (0 node, 1 group, 2 broadcast)"),
                ))
            }
        };
        let attrs = TxAttrs {
            transmit_enable: flags & MEMCHAN_TX_DISABLED == 0,
            local_copy: flags & MEMCHAN_TX_LOCAL_COPY != 0,
            ack_request: flags & MEMCHAN_TX_ACK_REQUEST != 0,
            transmit_under_error: flags & MEMCHAN_TX_UNDER_ERROR != 0,
        };
        let m = with_segment(s.id, |s| Ok(s.map_tx(d, attrs)?))?;
        let id = insert(Obj::Tx(Arc::new(Mutex::new(m))));
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, memchan_tx { id }) }
    })
}

/// Writes `len` bytes at `offset` (split into packets at page boundaries). A write
/// refused for bad input deposits nothing.
///
/// # Safety
/// `data` is null or points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn memchan_tx_write(
    t: memchan_tx,
    offset: usize,
    data: *const c_void,
    len: usize,
) -> c_int {
    call("memchan_tx_write", || {
        // SAFETY: the caller's promise about `data`.
        let d = unsafe { bytes("data", data.cast(), len) }?;
        Ok(lock(&*tx(t.id)?).write(offset, d)?)
    })
}

/// Writes the aligned 8-byte word at `offset` as one packet.
#[no_mangle]
pub extern "C" fn memchan_tx_write_u64(t: memchan_tx, offset: usize, v: u64) -> c_int {
    call("memchan_tx_write_u64", || {
        Ok(lock(&*tx(t.id)?).write_u64(offset, v)?)
    })
}

/// Writes the aligned 4-byte word at `offset` as one packet.
#[no_mangle]
pub extern "C" fn memchan_tx_write_u32(t: memchan_tx, offset: usize, v: u32) -> c_int {
    call("memchan_tx_write_u32", || {
        Ok(lock(&*tx(t.id)?).write_u32(offset, v)?)
    })
}

/// Turns transmit on (`on` non-zero) or off (writes then fail with
/// `MEMCHAN_E_TRANSMIT_DISABLED`).
#[no_mangle]
pub extern "C" fn memchan_tx_set_transmit_enable(t: memchan_tx, on: c_int) -> c_int {
    call("memchan_tx_set_transmit_enable", || {
        lock(&*tx(t.id)?).set_transmit_enable(on != 0);
        Ok(())
    })
}

/// Closes the tx mapping.
#[no_mangle]
pub extern "C" fn memchan_tx_close(t: memchan_tx) -> c_int {
    call("memchan_tx_close", || {
        remove("tx mapping", t.id, |o| {
            matches!(o, Obj::Tx(_)).then_some(())
        })
    })
}

/// The aligned 8-byte word at `offset` of the local copy, loaded atomically.
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_rx_load_u64(r: memchan_rx, offset: usize, out: *mut u64) -> c_int {
    call("memchan_rx_load_u64", || {
        let v = lock(&*rx(r.id)?).load_u64(offset)?;
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, v) }
    })
}

/// The aligned 4-byte word at `offset` of the local copy, loaded atomically.
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_rx_load_u32(r: memchan_rx, offset: usize, out: *mut u32) -> c_int {
    call("memchan_rx_load_u32", || {
        let v = lock(&*rx(r.id)?).load_u32(offset)?;
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, v) }
    })
}

/// Copies `len` bytes at `offset` of the local copy into `buf`.
///
/// # Safety
/// `buf` is null or points to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn memchan_rx_read(
    r: memchan_rx,
    offset: usize,
    buf: *mut c_void,
    len: usize,
) -> c_int {
    call("memchan_rx_read", || {
        // SAFETY: the caller's promise about `buf`.
        let b = unsafe { bytes_mut("buf", buf.cast(), len) }?;
        Ok(lock(&*rx(r.id)?).read(offset, b)?)
    })
}

/// The local copy's address and length: read it with loads (other nodes write it at
/// any time: use atomic or volatile loads), valid until `memchan_rx_close`.
///
/// # Safety
/// `base` and `len` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_rx_memory(
    r: memchan_rx,
    base: *mut *const c_void,
    len: *mut usize,
) -> c_int {
    call("memchan_rx_memory", || {
        let m = rx(r.id)?;
        let g = lock(&m);
        if base.is_null() || len.is_null() {
            return Err(invalid("base/len", "null pointer"));
        }
        // SAFETY: the caller's promise about `base` and `len`.
        unsafe {
            put("base", base, g.as_ptr().cast())?;
            put("len", len, g.len())
        }
    })
}

/// Waits until a write lands on a notify page (`MEMCHAN_RX_NOTIFY`), or
/// `MEMCHAN_E_TIMEOUT` after `timeout_ms`.
#[no_mangle]
pub extern "C" fn memchan_rx_wait(r: memchan_rx, timeout_ms: i64) -> c_int {
    call("memchan_rx_wait", || {
        if lock(&*rx(r.id)?).wait(timeout(timeout_ms))? {
            Ok(())
        } else {
            Err(Fail {
                code: super::errors::MEMCHAN_E_TIMEOUT,
                msg: format!("no write landed within {timeout_ms} ms"),
            })
        }
    })
}

/// Waits until the aligned 8-byte word at `offset` satisfies `word CMP value`
/// (`MEMCHAN_CMP_*`); the word into `seen` (may be null), or `MEMCHAN_E_TIMEOUT`.
///
/// # Safety
/// `seen` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_rx_wait_until_u64(
    r: memchan_rx,
    offset: usize,
    cmp: c_int,
    value: u64,
    timeout_ms: i64,
    seen: *mut u64,
) -> c_int {
    call("memchan_rx_wait_until_u64", || {
        let c = match cmp {
            MEMCHAN_CMP_EQ => Cmp::Eq,
            MEMCHAN_CMP_NE => Cmp::Ne,
            MEMCHAN_CMP_GT => Cmp::Gt,
            MEMCHAN_CMP_GE => Cmp::Ge,
            MEMCHAN_CMP_LT => Cmp::Lt,
            MEMCHAN_CMP_LE => Cmp::Le,
            k => {
                return Err(invalid(
                    "comparison",
                    format!("{k} (MEMCHAN_CMP_EQ..LE are 0..5)"),
                ))
            }
        };
        let m = rx(r.id)?;
        let got = lock(&m).wait_until_u64(offset, c, value, timeout(timeout_ms))?;
        let Some(v) = got else {
            return Err(Fail {
                code: super::errors::MEMCHAN_E_TIMEOUT,
                msg: format!("the word at offset {offset} did not satisfy the comparison within {timeout_ms} ms"),
            });
        };
        if !seen.is_null() {
            // SAFETY: not null; the caller promises it is writable.
            unsafe { seen.write(v) };
        }
        Ok(())
    })
}

/// Closes the rx mapping (its memory goes away).
#[no_mangle]
pub extern "C" fn memchan_rx_close(r: memchan_rx) -> c_int {
    call("memchan_rx_close", || {
        remove("rx mapping", r.id, |o| {
            matches!(o, Obj::Rx(_)).then_some(())
        })
    })
}

/// A handle for remote reads and atomics on every node's copy of the segment.
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_rma_open(s: memchan_segment, out: *mut memchan_rma) -> c_int {
    call("memchan_rma_open", || {
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        let r = with_segment(s.id, |s| Ok(s.rma()?))?;
        let id = insert(Obj::Rma(Arc::new(Mutex::new(r))));
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, memchan_rma { id }) }
    })
}

/// Copies `len` bytes at `offset` of `node`'s copy into `buf` (the target takes no
/// part; its pages need `MEMCHAN_RX_REMOTE_READ`).
///
/// # Safety
/// `buf` is null or points to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn memchan_get(
    r: memchan_rma,
    node_id: u32,
    offset: usize,
    buf: *mut c_void,
    len: usize,
) -> c_int {
    call("memchan_get", || {
        // SAFETY: the caller's promise about `buf`.
        let b = unsafe { bytes_mut("buf", buf.cast(), len) }?;
        Ok(lock(&*rma(r.id)?).get(node(node_id)?, offset, b)?)
    })
}

/// The aligned 8-byte word at `offset` of `node`'s copy, read atomically.
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_get_u64(
    r: memchan_rma,
    node_id: u32,
    offset: usize,
    out: *mut u64,
) -> c_int {
    call("memchan_get_u64", || {
        let v = lock(&*rma(r.id)?).get_u64(node(node_id)?, offset)?;
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, v) }
    })
}

/// The `MEMCHAN_ATOMIC_*` op with operands `a` (and `b`, compare-swap's new value).
fn atomic_op(op: c_int, a: u64, b: u64) -> Res<AtomicOp> {
    Ok(match op {
        MEMCHAN_ATOMIC_FETCH => AtomicOp::Fetch,
        MEMCHAN_ATOMIC_SET => AtomicOp::Set(a),
        MEMCHAN_ATOMIC_ADD => AtomicOp::Add(a),
        MEMCHAN_ATOMIC_FETCH_ADD => AtomicOp::FetchAdd(a),
        MEMCHAN_ATOMIC_SWAP => AtomicOp::Swap(a),
        MEMCHAN_ATOMIC_COMPARE_SWAP => AtomicOp::CompareSwap {
            expected: a,
            new: b,
        },
        MEMCHAN_ATOMIC_FETCH_AND => AtomicOp::FetchAnd(a),
        MEMCHAN_ATOMIC_FETCH_OR => AtomicOp::FetchOr(a),
        MEMCHAN_ATOMIC_FETCH_XOR => AtomicOp::FetchXor(a),
        k => {
            return Err(invalid(
                "atomic op",
                format!("{k} (MEMCHAN_ATOMIC_FETCH..FETCH_XOR are 0..8)"),
            ))
        }
    })
}

/// Runs `op` (`MEMCHAN_ATOMIC_*`) on the aligned 8-byte word at `offset` of `node`'s
/// copy, where it lives; the value before into `old` (may be null).
///
/// # Safety
/// `old` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_atomic_u64(
    r: memchan_rma,
    node_id: u32,
    offset: usize,
    op: c_int,
    a: u64,
    b: u64,
    old: *mut u64,
) -> c_int {
    call("memchan_atomic_u64", || {
        let op = atomic_op(op, a, b)?;
        let v = lock(&*rma(r.id)?).atomic_u64(node(node_id)?, offset, op)?;
        if !old.is_null() {
            // SAFETY: not null; the caller promises it is writable.
            unsafe { old.write(v) };
        }
        Ok(())
    })
}

/// As `memchan_atomic_u64` on an aligned 4-byte word.
///
/// # Safety
/// `old` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_atomic_u32(
    r: memchan_rma,
    node_id: u32,
    offset: usize,
    op: c_int,
    a: u32,
    b: u32,
    old: *mut u32,
) -> c_int {
    call("memchan_atomic_u32", || {
        let op = atomic_op(op, a.into(), b.into())?;
        let v = lock(&*rma(r.id)?).atomic_u32(node(node_id)?, offset, op)?;
        if !old.is_null() {
            // SAFETY: not null; the caller promises it is writable.
            unsafe { old.write(v) };
        }
        Ok(())
    })
}

/// Closes the remote-access handle.
#[no_mangle]
pub extern "C" fn memchan_rma_close(r: memchan_rma) -> c_int {
    call("memchan_rma_close", || {
        remove("remote-access handle", r.id, |o| {
            matches!(o, Obj::Rma(_)).then_some(())
        })
    })
}

/// The cluster lock `name`.
///
/// # Safety
/// `name` is null or NUL-terminated; `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_lock_open(
    c: memchan_cluster,
    name: *const c_char,
    out: *mut memchan_lock,
) -> c_int {
    call("memchan_lock_open", || {
        // SAFETY: the caller's promise about `name`.
        let name = unsafe { c_str("lock name", name) }?;
        if out.is_null() {
            return Err(invalid("out", "null pointer"));
        }
        let l = cluster(c.id)?.lock(name)?;
        let cell = LockCell::new(l, |_| None);
        let id = insert(Obj::Lock(Arc::new(Mutex::new(HeldLock(cell)))));
        // SAFETY: the caller's promise about `out`.
        unsafe { put("out", out, memchan_lock { id }) }
    })
}

/// Waits for the lock. `MEMCHAN_E_INVALID` if this handle holds it already.
#[no_mangle]
pub extern "C" fn memchan_lock_acquire(l: memchan_lock) -> c_int {
    call("memchan_lock_acquire", || {
        let o = lock_obj(l.id)?;
        let mut g = lock(&o);
        g.0.with_dependent_mut(|lk, held| {
            if held.is_some() {
                return Err(invalid("lock handle", "this handle holds the lock already"));
            }
            *held = Some(lk.acquire()?);
            Ok(())
        })
    })
}

/// Tries once: `*got` is 1 if this handle now holds the lock, 0 if another node holds
/// or bids.
///
/// # Safety
/// `got` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn memchan_lock_try_acquire(l: memchan_lock, got: *mut c_int) -> c_int {
    call("memchan_lock_try_acquire", || {
        if got.is_null() {
            return Err(invalid("got", "null pointer"));
        }
        let o = lock_obj(l.id)?;
        let mut g = lock(&o);
        let ok = g.0.with_dependent_mut(|lk, held| {
            if held.is_some() {
                return Err(invalid("lock handle", "this handle holds the lock already"));
            }
            *held = lk.try_acquire()?;
            Ok(held.is_some())
        })?;
        // SAFETY: the caller's promise about `got`.
        unsafe { put("got", got, c_int::from(ok)) }
    })
}

/// Releases the lock (`MEMCHAN_E_INVALID` if this handle does not hold it).
#[no_mangle]
pub extern "C" fn memchan_lock_release(l: memchan_lock) -> c_int {
    call("memchan_lock_release", || {
        let o = lock_obj(l.id)?;
        let mut g = lock(&o);
        g.0.with_dependent_mut(|_, held| match held.take() {
            Some(guard) => Ok(guard.release()?),
            None => Err(invalid("lock handle", "this handle does not hold the lock")),
        })
    })
}

/// Closes the lock handle, releasing the lock if it holds it.
#[no_mangle]
pub extern "C" fn memchan_lock_close(l: memchan_lock) -> c_int {
    call("memchan_lock_close", || {
        remove("lock", l.id, |o| matches!(o, Obj::Lock(_)).then_some(()))
    })
}
