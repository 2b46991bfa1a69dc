//! Python arguments to Rust values: node ids, offsets, timeouts, destinations,
//! comparisons, and the bytes of any object with the buffer protocol. A value Rust
//! cannot even represent (a negative offset, a node id past 65535) is refused here
//! as `memchan.InvalidError` naming the argument, as Rust refuses the rest.

use crate::errors::invalid;
use pyo3::ffi;
use pyo3::prelude::*;
use std::time::Duration;

/// A node id: `0..=65535` reaches Rust (which answers `UnknownNodeError` for one
/// that is not a member); anything else is `InvalidError`.
pub fn node(n: i64) -> PyResult<memchan::NodeId> {
    u16::try_from(n).map(memchan::NodeId).map_err(|_| {
        invalid(
            "node id",
            format!("{n} is not a node id (0..{})", memchan::MAX_NODES),
        )
    })
}

/// A byte offset or length: `InvalidError` if negative.
pub fn offset(what: &'static str, v: i64) -> PyResult<usize> {
    usize::try_from(v).map_err(|_| invalid(what, format!("{v} is negative")))
}

/// A timeout in seconds (`None`: forever).
pub fn timeout(t: Option<f64>) -> PyResult<Option<Duration>> {
    t.map(|s| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| invalid("timeout", format!("{s} is not a number of seconds >= 0")))
    })
    .transpose()
}

/// A comparison of `wait_until_u64` by name.
pub fn cmp(name: &str) -> PyResult<memchan::Cmp> {
    use memchan::Cmp;
    Ok(match name {
        "eq" | "==" => Cmp::Eq,
        "ne" | "!=" => Cmp::Ne,
        "gt" | ">" => Cmp::Gt,
        "ge" | ">=" => Cmp::Ge,
        "lt" | "<" => Cmp::Lt,
        "le" | "<=" => Cmp::Le,
        _ => {
            return Err(invalid(
                "comparison",
                format!("`{name}` is none of eq, ne, gt, ge, lt, le"),
            ))
        }
    })
}

/// A contiguous view of a Python object's bytes (the buffer protocol: `bytes`,
/// `bytearray`, `memoryview`, a C-contiguous numpy array of any dtype, an rx
/// mapping), released on drop. `writable` asks for a buffer the caller may write.
pub struct Buf {
    view: Box<ffi::Py_buffer>,
}

impl Buf {
    pub fn get(obj: &Bound<'_, PyAny>, writable: bool) -> PyResult<Buf> {
        // SAFETY: an all-zero Py_buffer is the documented blank state
        // PyObject_GetBuffer fills in.
        let mut view: Box<ffi::Py_buffer> = Box::new(unsafe { std::mem::zeroed() });
        let flags = if writable {
            ffi::PyBUF_WRITABLE
        } else {
            ffi::PyBUF_SIMPLE
        };
        // SAFETY: `obj` is a live object (we hold the GIL through `obj`'s token) and
        // `view` points to writable memory for one Py_buffer. PyBUF_SIMPLE and
        // PyBUF_WRITABLE ask for a contiguous run of bytes (the exporter refuses
        // otherwise, with a Python exception).
        if unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), &mut *view, flags) } != 0 {
            return Err(PyErr::fetch(obj.py()));
        }
        Ok(Buf { view })
    }

    pub fn len(&self) -> usize {
        usize::try_from(self.view.len).unwrap_or(0)
    }

    /// The bytes. The exporter keeps them while this view exists; another thread may
    /// change them meanwhile (as with `socket.send`), which is the caller's race.
    pub fn bytes(&self) -> &[u8] {
        if self.len() == 0 {
            return &[];
        }
        // SAFETY: the exporter guarantees `buf..buf+len` is one readable contiguous
        // block until PyBuffer_Release (in drop), which cannot run while `self` is
        // borrowed.
        unsafe { std::slice::from_raw_parts(self.view.buf.cast::<u8>(), self.len()) }
    }

    /// The bytes, writable (only for a view taken with `writable`).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        debug_assert!(self.view.readonly == 0);
        if self.len() == 0 {
            return &mut [];
        }
        // SAFETY: as `bytes`; the view was taken with PyBUF_WRITABLE, so the exporter
        // granted write access, and `&mut self` makes this the only slice of it here.
        unsafe { std::slice::from_raw_parts_mut(self.view.buf.cast::<u8>(), self.len()) }
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // Releasing a view calls into the exporter, so it needs the GIL.
        Python::attach(|_| {
            // SAFETY: `view` was filled by a successful PyObject_GetBuffer and is
            // released exactly once, here.
            unsafe { ffi::PyBuffer_Release(&mut *self.view) }
        });
    }
}
