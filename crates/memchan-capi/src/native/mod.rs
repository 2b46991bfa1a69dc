//! The native C API (`include/memchan.h`): the `memchan` and `memchan-msg` crates'
//! public API for C, with error codes instead of panics or exits.
//!
//! **Handles.** Every object C holds (cluster, segment, mapping, remote-access handle,
//! lock, communicator) is a small struct holding a number, not a pointer: the number
//! names an entry of one process-wide table. A call looks the number up and gets
//! `MEMCHAN_E_INVALID` for a zero (never issued), a freed, or another kind's handle, so
//! no handle C can pass makes the library touch freed memory. Numbers are never
//! reused. The table's lock is held only to look up (an `Arc` is cloned out), so a call
//! that blocks (barrier, lock, receive) does not hold up other threads' calls.
//!
//! **Errors.** Every call returns `MEMCHAN_OK` (0) or a code: the Rust
//! `Error::code()` (1..), `MsgError::code()` (101..) or `MEMCHAN_E_INTERNAL` (-1, a
//! panic caught at the boundary: a bug in memchan). The failing call's message (the
//! call's name and the Rust error's text) is kept per thread for
//! `memchan_last_error`. The files `api.rs`, `msg.rs` and `errors.rs` are what
//! cbindgen turns into the header (the test `native_header` keeps it current).

mod api;
mod errors;
mod msg;

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A failed call's code and message.
#[derive(Debug)]
pub(crate) struct Fail {
    code: c_int,
    msg: String,
}

impl From<memchan::Error> for Fail {
    fn from(e: memchan::Error) -> Fail {
        Fail {
            code: e.code(),
            msg: e.to_string(),
        }
    }
}

impl From<memchan_msg::MsgError> for Fail {
    fn from(e: memchan_msg::MsgError) -> Fail {
        Fail {
            code: e.code(),
            msg: e.to_string(),
        }
    }
}

/// `MEMCHAN_E_INVALID` naming the bad argument.
pub(crate) fn invalid(what: &str, why: impl std::fmt::Display) -> Fail {
    Fail {
        code: errors::MEMCHAN_E_INVALID,
        msg: format!("invalid {what}: {why}"),
    }
}

type Res<T> = std::result::Result<T, Fail>;

thread_local! {
    /// The message of this thread's last failed call.
    static LAST: RefCell<CString> = RefCell::new(CString::default());
}

/// Runs one C call: its result as a code, its failure's message kept for
/// `memchan_last_error`, a panic caught (unwinding into C is undefined behaviour).
pub(crate) fn call(name: &str, f: impl FnOnce() -> Res<()>) -> c_int {
    let fail = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return errors::MEMCHAN_OK,
        Ok(Err(f)) => f,
        Err(p) => {
            let why = p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Fail {
                code: errors::MEMCHAN_E_INTERNAL,
                msg: format!("internal error (a bug in memchan): {why}"),
            }
        }
    };
    tracing::debug!(call = name, code = fail.code, "{}", fail.msg);
    // A message holds no NUL (Rust error texts; names C passed were checked as C
    // strings), but a stray one must not lose the message: it becomes a space.
    let text = format!("{name}: {}", fail.msg).replace('\0', " ");
    let text = CString::new(text).unwrap_or_default();
    let _ = LAST.try_with(|l| *l.borrow_mut() = text);
    fail.code
}

/// The pointer to this thread's last message (valid until its next failed call).
pub(crate) fn last_message() -> *const c_char {
    LAST.try_with(|l| l.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// A `NUL`-terminated UTF-8 string from C.
///
/// # Safety
/// `p` is null or points to a `NUL`-terminated string.
pub(crate) unsafe fn c_str<'a>(what: &str, p: *const c_char) -> Res<&'a str> {
    if p.is_null() {
        return Err(invalid(what, "null pointer"));
    }
    // SAFETY: not null, and the caller promises a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|_| invalid(what, "not UTF-8"))
}

/// Writes `v` through C's out-pointer `out`.
///
/// # Safety
/// `out` is null or points to writable memory for a `T`.
pub(crate) unsafe fn put<T>(what: &str, out: *mut T, v: T) -> Res<()> {
    if out.is_null() {
        return Err(invalid(what, "null pointer"));
    }
    // SAFETY: not null; the caller promises room for a T (write: no old value to drop).
    unsafe { out.write(v) };
    Ok(())
}

/// C's `(ptr, len)` as a slice (`len == 0` needs no pointer).
///
/// # Safety
/// With `len > 0`, `p` is null or points to `len` readable bytes.
pub(crate) unsafe fn bytes<'a>(what: &str, p: *const u8, len: usize) -> Res<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(invalid(what, format!("null pointer with length {len}")));
    }
    // SAFETY: not null; the caller promises len readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// C's `(ptr, len)` as a writable slice.
///
/// # Safety
/// With `len > 0`, `p` is null or points to `len` writable bytes nothing else uses.
pub(crate) unsafe fn bytes_mut<'a>(what: &str, p: *mut u8, len: usize) -> Res<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(invalid(what, format!("null pointer with length {len}")));
    }
    // SAFETY: not null; the caller promises len writable bytes, used by nothing else.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// A C timeout in milliseconds: negative waits forever.
pub(crate) fn timeout(ms: i64) -> Option<Duration> {
    u64::try_from(ms).ok().map(Duration::from_millis)
}

/// A node id from C.
pub(crate) fn node(id: u32) -> Res<memchan::NodeId> {
    u16::try_from(id)
        .map(memchan::NodeId)
        .map_err(|_| invalid("node id", format!("{id} is not a node id (0..65535)")))
}

/// One object C holds.
pub(crate) enum Obj {
    Cluster(Arc<memchan::Cluster>),
    Segment(Arc<Mutex<Option<memchan::Segment>>>),
    Tx(Arc<Mutex<memchan::TxMapping>>),
    Rx(Arc<Mutex<memchan::RxMapping>>),
    Rma(Arc<Mutex<memchan::Rma>>),
    Lock(Arc<Mutex<api::HeldLock>>),
    Comm(Arc<Mutex<msg::CommObj>>),
}

impl Obj {
    fn kind(&self) -> &'static str {
        match self {
            Obj::Cluster(_) => "cluster",
            Obj::Segment(_) => "segment",
            Obj::Tx(_) => "tx mapping",
            Obj::Rx(_) => "rx mapping",
            Obj::Rma(_) => "remote-access handle",
            Obj::Lock(_) => "lock",
            Obj::Comm(_) => "communicator",
        }
    }
}

/// Every live handle, by number.
static TABLE: Mutex<Option<HashMap<u64, Obj>>> = Mutex::new(None);
/// The next handle number; 0 is never issued, so a zeroed handle is invalid.
static NEXT: AtomicU64 = AtomicU64::new(1);

fn table() -> MutexGuard<'static, Option<HashMap<u64, Obj>>> {
    // Poisoned only by a panic inside a map operation; the map itself stays whole.
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers `o`; its new handle number.
pub(crate) fn insert(o: Obj) -> u64 {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    table().get_or_insert_with(HashMap::new).insert(id, o);
    id
}

/// Looks `id` up as the kind `pick` accepts (`pick` clones the `Arc` out).
pub(crate) fn get<T>(want: &str, id: u64, pick: impl FnOnce(&Obj) -> Option<T>) -> Res<T> {
    let t = table();
    let Some(o) = t.as_ref().and_then(|m| m.get(&id)) else {
        return Err(invalid(
            &format!("{want} handle"),
            format!("{id} is not a live handle (never issued, or already closed)"),
        ));
    };
    let kind = o.kind();
    pick(o).ok_or_else(|| {
        invalid(
            &format!("{want} handle"),
            format!("{id} is a {kind} handle"),
        )
    })
}

/// Removes `id` if it is the kind `pick` accepts; returns what `pick` took out.
pub(crate) fn remove<T>(want: &str, id: u64, pick: impl FnOnce(&Obj) -> Option<T>) -> Res<T> {
    let mut t = table();
    let map = t.get_or_insert_with(HashMap::new);
    let got = match map.get(&id) {
        None => Err(invalid(
            &format!("{want} handle"),
            format!("{id} is not a live handle (never issued, or already closed)"),
        )),
        Some(o) => {
            let kind = o.kind();
            pick(o).ok_or_else(|| {
                invalid(
                    &format!("{want} handle"),
                    format!("{id} is a {kind} handle"),
                )
            })
        }
    }?;
    let gone = map.remove(&id);
    // Dropped after the table's lock: dropping a mapping, guard or node may block.
    drop(t);
    drop(gone);
    Ok(got)
}

/// Puts `o` back under `id` (a close that found the object still in use).
pub(crate) fn restore(id: u64, o: Obj) {
    table().get_or_insert_with(HashMap::new).insert(id, o);
}

/// Locks an object's mutex (poison: a caught panic; the object is still usable or
/// reports its own error).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        // SAFETY: last_message points to this thread's NUL-terminated message.
        unsafe { CStr::from_ptr(last_message()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_stops_at_the_boundary_as_an_internal_error() {
        let code = call("memchan_test_call", || panic!("boom"));
        assert_eq!(code, errors::MEMCHAN_E_INTERNAL);
        assert_eq!(
            last(),
            "memchan_test_call: internal error (a bug in memchan): boom"
        );
    }

    #[test]
    fn a_failure_keeps_its_code_and_message_per_thread() {
        let code = call("memchan_x", || Err(invalid("thing", "why")));
        assert_eq!(code, errors::MEMCHAN_E_INVALID);
        assert_eq!(last(), "memchan_x: invalid thing: why");
        // Success leaves the last failure's message; another thread has its own.
        assert_eq!(call("memchan_y", || Ok(())), errors::MEMCHAN_OK);
        assert_eq!(last(), "memchan_x: invalid thing: why");
        std::thread::spawn(|| assert_eq!(last(), ""))
            .join()
            .unwrap();
    }

    #[test]
    fn handles_of_another_kind_or_closed_are_refused() {
        let id = insert(Obj::Segment(Arc::new(Mutex::new(None))));
        let as_tx = get("tx mapping", id, |o| match o {
            Obj::Tx(t) => Some(t.clone()),
            _ => None,
        });
        let msg = as_tx.err().expect("refused").msg;
        assert_eq!(
            msg,
            format!("invalid tx mapping handle: {id} is a segment handle")
        );
        remove("segment", id, |o| {
            matches!(o, Obj::Segment(_)).then_some(())
        })
        .unwrap();
        let again = remove("segment", id, |o| {
            matches!(o, Obj::Segment(_)).then_some(())
        });
        assert!(again
            .expect_err("closed")
            .msg
            .contains("is not a live handle"));
    }
}
