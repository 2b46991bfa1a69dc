//! `memchan.Segment`, `TxMapping`, `RxMapping` (a read-only buffer: numpy views it
//! without a copy), `Rma` (remote get and atomics) and `Pending`.

use crate::args::{self, Buf};
use crate::errors::{self, invalid};
use crate::group::Group;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::os::raw::c_int;
use std::sync::{Mutex, MutexGuard, PoisonError};

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` on the value in `m`: at once when the mutex is free, else with the GIL
/// released while waiting for it (its holder may be a thread that waits, detached,
/// and must be able to take the GIL back).
fn with_locked<T: Send, R: Send>(
    py: Python<'_>,
    m: &Mutex<T>,
    f: impl FnOnce(&T) -> R + Send,
) -> R {
    match m.try_lock() {
        Ok(g) => f(&g),
        Err(std::sync::TryLockError::Poisoned(p)) => f(&p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => py.detach(|| f(&locked(m))),
    }
}

/// A named segment of the cluster's address space.
#[pyclass(module = "memchan", frozen)]
pub struct Segment {
    name: String,
    seg: Mutex<Option<memchan::Segment>>,
}

impl Segment {
    pub fn new(seg: memchan::Segment) -> Segment {
        Segment {
            name: seg.name().to_string(),
            seg: Mutex::new(Some(seg)),
        }
    }

    /// Runs `f` on the segment with the GIL released (mapping may wait for the
    /// cluster's control plane); `SegmentFreedError` once `free` took it.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&memchan::Segment) -> memchan::Result<T> + Send,
    ) -> PyResult<T> {
        let seg = &self.seg;
        match py.detach(|| locked(seg).as_ref().map(f)) {
            Some(r) => r.map_err(errors::cluster),
            None => Err(errors::cluster(memchan::Error::SegmentFreed {
                segment: self.name.clone(),
            })),
        }
    }
}

#[pymethods]
impl Segment {
    /// The segment's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Size in bytes (whole pages).
    #[getter]
    fn size(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |s| Ok(s.size()))
    }

    /// `(uid, gid, mode)` of the segment's creator.
    fn owner(&self, py: Python<'_>) -> PyResult<(u32, u32, u32)> {
        self.with(py, |s| {
            let o = s.owner();
            Ok((o.uid, o.gid, o.mode))
        })
    }

    /// Maps it rx: local memory that receives every write addressed to the segment.
    /// `notify` lets `RxMapping.wait` sleep until a write lands; `remote_read` opens
    /// the memory to other nodes' `Rma` gets and atomics.
    #[pyo3(signature = (*, notify=false, remote_read=false, receive_enable=true))]
    fn map_rx(
        &self,
        py: Python<'_>,
        notify: bool,
        remote_read: bool,
        receive_enable: bool,
    ) -> PyResult<RxMapping> {
        let attrs = memchan::RxAttrs {
            receive_enable,
            notify,
            remote_read,
        };
        let rx = self.with(py, |s| s.map_rx_with(attrs))?;
        Ok(RxMapping {
            ptr: rx.as_ptr() as usize,
            len: rx.len(),
            name: rx.name().to_string(),
            rx: Mutex::new(rx),
        })
    }

    /// Maps it tx towards `dest`: a node id (`int`), a `Group`, or `"broadcast"`.
    /// `local_copy` puts the sender's own copy in the same order; `ack_request`
    /// makes every write wait until applied everywhere.
    #[pyo3(signature = (dest, *, local_copy=false, ack_request=false, transmit_under_error=false))]
    fn map_tx(
        &self,
        py: Python<'_>,
        dest: &Bound<'_, PyAny>,
        local_copy: bool,
        ack_request: bool,
        transmit_under_error: bool,
    ) -> PyResult<TxMapping> {
        let dest = if let Ok(g) = dest.cast::<Group>() {
            memchan::Dest::Group(memchan::GroupId(g.get().id))
        } else if let Ok(n) = dest.extract::<i64>() {
            memchan::Dest::Node(args::node(n)?)
        } else if dest.extract::<&str>().is_ok_and(|s| s == "broadcast") {
            memchan::Dest::Broadcast
        } else {
            return Err(invalid(
                "destination",
                format!("{dest}: give a node id, a Group or \"broadcast\""),
            ));
        };
        let attrs = memchan::TxAttrs {
            transmit_enable: true,
            local_copy,
            ack_request,
            transmit_under_error,
        };
        let tx = self.with(py, |s| s.map_tx(dest, attrs))?;
        Ok(TxMapping {
            name: self.name.clone(),
            tx: Mutex::new(tx),
        })
    }

    /// A handle for remote gets and atomics on any node's copy of the segment.
    fn rma(&self, py: Python<'_>) -> PyResult<Rma> {
        let rma = self.with(py, |s| s.rma())?;
        Ok(Rma {
            rma: Mutex::new(rma),
        })
    }

    /// Frees the segment (its owner only); every mapping of it stops working.
    fn free(&self, py: Python<'_>) -> PyResult<()> {
        let seg = &self.seg;
        match py.detach(|| locked(seg).take().map(memchan::Segment::free)) {
            Some(r) => r.map_err(errors::cluster),
            None => Err(errors::cluster(memchan::Error::SegmentFreed {
                segment: self.name.clone(),
            })),
        }
    }

    fn __repr__(&self) -> String {
        format!("Segment({:?})", self.name)
    }
}

/// A transmit window: writes land in the destination's rx mappings, in MEMORY
/// CHANNEL's order. Every write is checked (bounds, alignment) before anything is
/// sent: a refused write deposits nothing. Writes keep the GIL (they do not wait,
/// unless the mapping was made with `ack_request`); `write_if_u64` releases it.
///
/// >>> import memchan, os, numpy as np
/// >>> name = f"doc-tx-{os.getpid()}"
/// >>> a, b = memchan.Cluster.join(name), memchan.Cluster.join(name)
/// >>> rx = b.segment("m", 4096).map_rx()
/// >>> tx = a.segment("m", 4096).map_tx(b.node_id)
/// >>> tx.write(0, np.arange(4, dtype=np.float64))
/// >>> a.ack()
/// >>> np.frombuffer(rx, dtype=np.float64, count=4).tolist()
/// [0.0, 1.0, 2.0, 3.0]
#[pyclass(module = "memchan", frozen)]
pub struct TxMapping {
    name: String,
    tx: Mutex<memchan::TxMapping>,
}

impl TxMapping {
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&memchan::TxMapping) -> memchan::Result<T> + Send,
    ) -> PyResult<T> {
        with_locked(py, &self.tx, f).map_err(errors::cluster)
    }
}

#[pymethods]
impl TxMapping {
    /// The segment's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __len__(&self) -> usize {
        locked(&self.tx).len()
    }

    /// Transmit enable: while `False` every write raises `TransmitDisabledError`.
    #[getter]
    fn transmit_enable(&self) -> bool {
        locked(&self.tx).attrs().transmit_enable
    }

    #[setter]
    fn set_transmit_enable(&self, on: bool) {
        locked(&self.tx).set_transmit_enable(on);
    }

    /// Writes the bytes of `data` (any buffer: bytes, bytearray, a C-contiguous numpy
    /// array) at `offset`, page by page.
    fn write(&self, py: Python<'_>, offset: i64, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let off = args::offset("offset", offset)?;
        let buf = Buf::get(data, false)?;
        let bytes = buf.bytes();
        self.with(py, |t| t.write(off, bytes))
    }

    /// Atomic 8-byte write.
    fn write_u64(&self, py: Python<'_>, offset: i64, value: u64) -> PyResult<()> {
        let off = args::offset("offset", offset)?;
        self.with(py, |t| t.write_u64(off, value))
    }

    /// Atomic 4-byte write.
    fn write_u32(&self, py: Python<'_>, offset: i64, value: u32) -> PyResult<()> {
        let off = args::offset("offset", offset)?;
        self.with(py, |t| t.write_u32(off, value))
    }

    /// Atomic 2-byte write.
    fn write_u16(&self, py: Python<'_>, offset: i64, value: u16) -> PyResult<()> {
        let off = args::offset("offset", offset)?;
        self.with(py, |t| t.write_u16(off, value))
    }

    /// 1-byte write.
    fn write_u8(&self, py: Python<'_>, offset: i64, value: u8) -> PyResult<()> {
        let off = args::offset("offset", offset)?;
        self.with(py, |t| t.write_u8(off, value))
    }

    /// Strided deposit: `count` elements of `elem` bytes, element `i` read at
    /// `i * src_stride` of `data` and written at `offset + i * dst_stride`, each one
    /// packet in this sender's order.
    #[pyo3(signature = (data, *, elem, count, src_stride, dst_stride, offset))]
    #[allow(clippy::too_many_arguments)]
    fn put_strided(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        elem: i64,
        count: i64,
        src_stride: i64,
        dst_stride: i64,
        offset: i64,
    ) -> PyResult<()> {
        let shape = memchan::Shape {
            elem: args::offset("elem", elem)?,
            count: args::offset("count", count)?,
            src_stride: args::offset("src_stride", src_stride)?,
            dst_stride: args::offset("dst_stride", dst_stride)?,
            offset: args::offset("offset", offset)?,
        };
        let buf = Buf::get(data, false)?;
        let bytes = buf.bytes();
        self.with(py, |t| t.put_strided(&shape, bytes))
    }

    /// Indexed deposit: element `i` (`elem` bytes of `data`) written at `offsets[i]`.
    fn put_indexed(
        &self,
        py: Python<'_>,
        elem: i64,
        offsets: Vec<i64>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let elem = args::offset("elem", elem)?;
        let offs = offsets
            .into_iter()
            .map(|o| args::offset("offset", o))
            .collect::<PyResult<Vec<_>>>()?;
        let buf = Buf::get(data, false)?;
        let bytes = buf.bytes();
        self.with(py, |t| t.put_indexed(elem, &offs, bytes))
    }

    /// Put with signal: writes `data` at `offset`, then sets (`op="set"`) or adds to
    /// (`op="add"`) the 8-byte word at `signal`; every destination applies the signal
    /// after the data.
    #[pyo3(signature = (offset, data, signal, value, op="set"))]
    fn put_signal(
        &self,
        py: Python<'_>,
        offset: i64,
        data: &Bound<'_, PyAny>,
        signal: i64,
        value: u64,
        op: &str,
    ) -> PyResult<()> {
        let off = args::offset("offset", offset)?;
        let sig = args::offset("signal offset", signal)?;
        let op = match op {
            "set" => memchan::SignalOp::Set,
            "add" => memchan::SignalOp::Add,
            _ => {
                return Err(invalid(
                    "signal op",
                    format!("`{op}` is neither set nor add"),
                ))
            }
        };
        let buf = Buf::get(data, false)?;
        let bytes = buf.bytes();
        self.with(py, |t| t.put_signal(off, bytes, sig, op, value))
    }

    /// Conditional write: at each destination the 8-byte word at `offset` becomes
    /// `new` only where it holds `expected`. Returns `[(node, outcome)]` with outcome
    /// `"applied"`, `("held", value)`, `"disabled"` or `"lost"`. Waits for the
    /// outcomes with the GIL released.
    fn write_if_u64(
        &self,
        py: Python<'_>,
        offset: i64,
        expected: u64,
        new: u64,
    ) -> PyResult<Vec<(u16, Py<PyAny>)>> {
        let off = args::offset("offset", offset)?;
        let tx = &self.tx;
        let res = py
            .detach(|| locked(tx).write_if_u64(off, expected, new))
            .map_err(errors::cluster)?;
        res.into_iter()
            .map(|r| {
                let o = match r.outcome {
                    memchan::Outcome::Applied => "applied".into_pyobject(py)?.into_any(),
                    memchan::Outcome::Held(v) => ("held", v).into_pyobject(py)?.into_any(),
                    memchan::Outcome::Disabled => "disabled".into_pyobject(py)?.into_any(),
                    memchan::Outcome::Lost => "lost".into_pyobject(py)?.into_any(),
                };
                Ok((r.node.0, o.unbind()))
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("TxMapping({:?})", self.name)
    }
}

/// This node's receive memory for a segment: a **read-only buffer** of the segment's
/// bytes, so `memoryview(rx)` and `numpy.frombuffer(rx, dtype)` view it without a
/// copy. Other nodes' writes change it at any time: read after an `ack`, a barrier,
/// `wait` or `wait_until_u64` tells you the data is there (the load methods are
/// atomic; a numpy read of a word being written may see the old or new value). The
/// methods serve one thread at a time (another thread's call waits, GIL released,
/// while one waits in `wait`); buffer views need no turn.
///
/// >>> import memchan, os, numpy as np
/// >>> name = f"doc-rx-{os.getpid()}"
/// >>> a, b = memchan.Cluster.join(name), memchan.Cluster.join(name)
/// >>> rx = b.segment("m", 4096).map_rx()
/// >>> view = np.frombuffer(rx, dtype=np.uint64)   # no copy: it follows the memory
/// >>> tx = a.segment("m", 4096).map_tx(b.node_id)
/// >>> tx.write_u64(8, 42); a.ack()
/// >>> int(view[1]), view.flags.writeable
/// (42, False)
#[pyclass(module = "memchan", frozen)]
pub struct RxMapping {
    /// `rx.as_ptr()` and `rx.len()`, taken once: they never change for a mapping.
    ptr: usize,
    len: usize,
    name: String,
    /// One thread at a time (the handle keeps its wait cursor); the buffer view
    /// needs no lock.
    rx: Mutex<memchan::RxMapping>,
}

impl RxMapping {
    /// The mapping, for the message-passing receive into it.
    pub fn inner(&self) -> &Mutex<memchan::RxMapping> {
        &self.rx
    }

    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&memchan::RxMapping) -> memchan::Result<T> + Send,
    ) -> PyResult<T> {
        with_locked(py, &self.rx, f).map_err(errors::cluster)
    }
}

#[pymethods]
impl RxMapping {
    /// The segment's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __len__(&self) -> usize {
        self.len
    }

    /// Exports the receive memory read-only (PEP 3118).
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let (ptr, len) = (slf.get().ptr, slf.get().len);
        let len = isize::try_from(len).map_err(|_| invalid("rx mapping", "too large to export"))?;
        // SAFETY: `view` is the Py_buffer the caller passed to fill; `ptr..ptr+len` is
        // this mapping's receive memory, mapped until the mapping drops, and the view
        // holds a reference to `slf` (FillInfo sets `view.obj`), so it stays mapped
        // while any view exists. readonly = 1: FillInfo refuses PyBUF_WRITABLE.
        let r = unsafe {
            ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                ptr as *mut std::ffi::c_void,
                len,
                1,
                flags,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(PyErr::fetch(slf.py()))
        }
    }

    /// Atomic 8-byte load.
    fn load_u64(&self, py: Python<'_>, offset: i64) -> PyResult<u64> {
        let off = args::offset("offset", offset)?;
        self.with(py, |r| r.load_u64(off))
    }

    /// Atomic 4-byte load.
    fn load_u32(&self, py: Python<'_>, offset: i64) -> PyResult<u32> {
        let off = args::offset("offset", offset)?;
        self.with(py, |r| r.load_u32(off))
    }

    /// Atomic 2-byte load.
    fn load_u16(&self, py: Python<'_>, offset: i64) -> PyResult<u16> {
        let off = args::offset("offset", offset)?;
        self.with(py, |r| r.load_u16(off))
    }

    /// 1-byte load.
    fn load_u8(&self, py: Python<'_>, offset: i64) -> PyResult<u8> {
        let off = args::offset("offset", offset)?;
        self.with(py, |r| r.load_u8(off))
    }

    /// A copy of `length` bytes at `offset` (each aligned word read atomically).
    fn read<'py>(
        &self,
        py: Python<'py>,
        offset: i64,
        length: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let off = args::offset("offset", offset)?;
        let n = args::offset("length", length)?;
        let mut out = vec![0u8; n];
        self.with(py, |r| r.read(off, &mut out))?;
        Ok(PyBytes::new(py, &out))
    }

    /// Sets the receive attributes of the pages covering `offset..offset+length`.
    #[pyo3(signature = (offset, length, *, notify=false, remote_read=false, receive_enable=true))]
    fn set_attrs(
        &self,
        py: Python<'_>,
        offset: i64,
        length: i64,
        notify: bool,
        remote_read: bool,
        receive_enable: bool,
    ) -> PyResult<()> {
        let attrs = memchan::RxAttrs {
            receive_enable,
            notify,
            remote_read,
        };
        let off = args::offset("offset", offset)?;
        let n = args::offset("length", length)?;
        self.with(py, |r| r.set_attrs(off, n, attrs))
    }

    /// The attributes of the page holding `offset`, as a dict.
    fn attrs(
        &self,
        py: Python<'_>,
        offset: i64,
    ) -> PyResult<std::collections::HashMap<&'static str, bool>> {
        let off = args::offset("offset", offset)?;
        let a = self.with(py, |r| r.attrs(off))?;
        Ok([
            ("receive_enable", a.receive_enable),
            ("notify", a.notify),
            ("remote_read", a.remote_read),
        ]
        .into())
    }

    /// Receive-side remap: writes addressed to page `page` land on page `to`
    /// (`to == page` undoes it).
    fn remap_page(&self, py: Python<'_>, page: i64, to: i64) -> PyResult<()> {
        let p = args::offset("page", page)?;
        let t = args::offset("page", to)?;
        self.with(py, |r| r.remap_page(p, t))
    }

    /// Sleeps (GIL released, no busy core) until a write lands on a notify page
    /// (`True`) or `timeout` seconds pass (`False`).
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let t = args::timeout(timeout)?;
        let rx = &self.rx;
        py.detach(|| locked(rx).wait(t)).map_err(errors::cluster)
    }

    /// Waits (GIL released) until the 8-byte word at `offset` satisfies
    /// `word <cmp> value` (`cmp` one of "eq", "ne", "gt", "ge", "lt", "le"); returns
    /// the word, or `None` after `timeout` seconds.
    #[pyo3(signature = (offset, cmp, value, timeout=None))]
    fn wait_until_u64(
        &self,
        py: Python<'_>,
        offset: i64,
        cmp: &str,
        value: u64,
        timeout: Option<f64>,
    ) -> PyResult<Option<u64>> {
        let off = args::offset("offset", offset)?;
        let (c, t) = (args::cmp(cmp)?, args::timeout(timeout)?);
        let rx = &self.rx;
        py.detach(|| locked(rx).wait_until_u64(off, c, value, t))
            .map_err(errors::cluster)
    }

    fn __repr__(&self) -> String {
        format!("RxMapping({:?}, {} bytes)", self.name, self.len)
    }
}

/// Remote reads and atomics on other nodes' copies of one segment (the target's
/// pages need `remote_read=True`). Calls that cross hosts wait with the GIL released.
///
/// >>> import memchan, os
/// >>> name = f"doc-rma-{os.getpid()}"
/// >>> a, b = memchan.Cluster.join(name), memchan.Cluster.join(name)
/// >>> _rx = b.segment("counters", 4096).map_rx(remote_read=True)
/// >>> rma = a.segment("counters", 4096).rma()
/// >>> rma.fetch_add_u64(b.node_id, 0, 5), rma.get_u64(b.node_id, 0)
/// (0, 5)
#[pyclass(module = "memchan", frozen)]
pub struct Rma {
    rma: Mutex<memchan::Rma>,
}

impl Rma {
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&memchan::Rma) -> memchan::Result<T> + Send,
    ) -> PyResult<T> {
        let rma = &self.rma;
        py.detach(|| f(&locked(rma))).map_err(errors::cluster)
    }
}

/// `Rma`'s methods: the named atomics, each one `AtomicOp` on a 4- or 8-byte word,
/// then the rest as written (one `#[pymethods]` block).
macro_rules! rma_methods {
    ($($(#[$doc:meta])* $name:ident($t:ty, $via:ident $(, $arg:ident)*) => $op:expr;)* @rest { $($rest:tt)* }) => {
        #[pymethods]
        impl Rma {
            $($rest)*
            $(
                $(#[$doc])*
                fn $name(&self, py: Python<'_>, node: i64, offset: i64 $(, $arg: $t)*) -> PyResult<$t> {
                    let (n, off) = (args::node(node)?, args::offset("offset", offset)?);
                    self.run(py, |r| r.$via(n, off, $op))
                }
            )*
        }
    };
}

rma_methods! {
    /// Atomic read of the 8-byte word.
    fetch_u64(u64, atomic_u64) => memchan::AtomicOp::Fetch;
    /// Stores `v`; returns the old value.
    set_u64(u64, atomic_u64, v) => memchan::AtomicOp::Set(v);
    /// Adds `v` (wrapping); returns the old value.
    fetch_add_u64(u64, atomic_u64, v) => memchan::AtomicOp::FetchAdd(v);
    /// Stores `v`; returns the old value.
    swap_u64(u64, atomic_u64, v) => memchan::AtomicOp::Swap(v);
    /// Stores `new` where the word holds `expected`; returns the old value.
    compare_swap_u64(u64, atomic_u64, expected, new) => memchan::AtomicOp::CompareSwap { expected, new };
    /// Bitwise and; returns the old value.
    fetch_and_u64(u64, atomic_u64, v) => memchan::AtomicOp::FetchAnd(v);
    /// Bitwise or; returns the old value.
    fetch_or_u64(u64, atomic_u64, v) => memchan::AtomicOp::FetchOr(v);
    /// Bitwise xor; returns the old value.
    fetch_xor_u64(u64, atomic_u64, v) => memchan::AtomicOp::FetchXor(v);
    /// Atomic read of the 4-byte word.
    fetch_u32(u32, atomic_u32) => memchan::AtomicOp::Fetch;
    /// Adds `v` (wrapping) to the 4-byte word; returns the old value.
    fetch_add_u32(u32, atomic_u32, v) => memchan::AtomicOp::FetchAdd(v.into());
    /// Stores `new` where the 4-byte word holds `expected`; returns the old value.
    compare_swap_u32(u32, atomic_u32, expected, new) => memchan::AtomicOp::CompareSwap { expected: expected.into(), new: new.into() };
@rest {
    /// `length` bytes at `offset` of `node`'s copy.
    fn get<'py>(
        &self,
        py: Python<'py>,
        node: i64,
        offset: i64,
        length: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (n, off) = (args::node(node)?, args::offset("offset", offset)?);
        let mut out = vec![0u8; args::offset("length", length)?];
        self.run(py, |r| r.get(n, off, &mut out))?;
        Ok(PyBytes::new(py, &out))
    }

    /// The aligned 8-byte word at `offset` of `node`'s copy.
    fn get_u64(&self, py: Python<'_>, node: i64, offset: i64) -> PyResult<u64> {
        let (n, off) = (args::node(node)?, args::offset("offset", offset)?);
        self.run(py, |r| r.get_u64(n, off))
    }

    /// The aligned 4-byte word at `offset` of `node`'s copy.
    fn get_u32(&self, py: Python<'_>, node: i64, offset: i64) -> PyResult<u32> {
        let (n, off) = (args::node(node)?, args::offset("offset", offset)?);
        self.run(py, |r| r.get_u32(n, off))
    }

    /// Starts a get (OpenSHMEM `get_nbi`): the node's next `ack()` completes it, then
    /// `Pending.take()` returns the bytes.
    fn get_nbi(&self, py: Python<'_>, node: i64, offset: i64, length: i64) -> PyResult<Pending> {
        let (n, off) = (args::node(node)?, args::offset("offset", offset)?);
        let len = args::offset("length", length)?;
        let p = self.run(py, |r| r.get_nbi(n, off, len))?;
        Ok(Pending {
            pending: Mutex::new(Some(p)),
        })
    }
}}

/// A non-blocking get under way (`Rma.get_nbi`).
#[pyclass(module = "memchan", frozen)]
pub struct Pending {
    pending: Mutex<Option<memchan::Pending>>,
}

#[pymethods]
impl Pending {
    /// The bytes read (waiting, GIL released, if no `ack()` came between). Once only.
    fn take<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let p = locked(&self.pending)
            .take()
            .ok_or_else(|| invalid("pending get", "its bytes were taken already"))?;
        let bytes = py.detach(|| p.take()).map_err(errors::cluster)?;
        Ok(PyBytes::new(py, &bytes))
    }
}
