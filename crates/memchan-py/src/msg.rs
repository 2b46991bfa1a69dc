//! `memchan.Comm`: message passing (crate `memchan-msg`) with MPI's shape: blocking
//! and non-blocking send and receive, tags and wildcards, probe. Every call that
//! waits releases the GIL.

use crate::args::{self, Buf};
use crate::cluster::Cluster;
use crate::errors::{self, invalid};
use crate::mapping::RxMapping;
use memchan_msg::{CommConfig, Request as RawRequest};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, Mutex, PoisonError};

/// A communicator's endpoint, owned by the binding.
struct Endpoint(memchan_msg::Comm<'static>);

// SAFETY: `Comm` is not `Send` only because a request may hold a raw pointer to the
// caller's memory (its `isend_ptr` / `irecv_ptr`), which this binding never calls:
// its buffers are owned `Vec`s or an rx mapping by name. Everything else it holds
// is `Send` (checked by `_parts_are_send` below); the `Mutex` around it gives one
// thread at a time.
unsafe impl Send for Endpoint {}

/// The parts of a `Comm` besides its requests' buffers; if one stopped being `Send`
/// or `Sync`, the claim above would need a new look, and this stops compiling.
fn _parts_are_send() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    sync::<memchan::Cluster>();
    send::<memchan::Segment>();
    send::<memchan::RxMapping>();
    send::<memchan::TxMapping>();
}

/// A communicator over the cluster's nodes (rank = node id), made collectively by
/// every live member (it ends with a cluster barrier).
///
/// >>> import memchan, os, threading
/// >>> name = f"doc-comm-{os.getpid()}"
/// >>> a, b = memchan.Cluster.join(name), memchan.Cluster.join(name)
/// >>> made = []  # two nodes in one process: b makes its endpoint in a thread
/// >>> t = threading.Thread(target=lambda: made.append(memchan.Comm(b, "w")))
/// >>> t.start(); ca = memchan.Comm(a, "w"); t.join(); cb = made[0]
/// >>> ca.send(b.node_id, b"hello", tag=7)
/// >>> m = cb.recv()
/// >>> (m.data, m.source == a.node_id, m.tag)
/// (b'hello', True, 7)
#[pyclass(module = "memchan", frozen)]
pub struct Comm {
    // Declared before `_cluster`: the endpoint borrows the node and must drop first.
    ep: Mutex<Option<Endpoint>>,
    _cluster: Arc<memchan::Cluster>,
}

/// A message's envelope (`source`, `tag`, `len`) and, for a completed receive, its
/// bytes (`data`; `None` for sends and probes).
#[pyclass(module = "memchan", frozen, get_all)]
pub struct Status {
    /// The sender's rank.
    source: u32,
    /// The message's tag.
    tag: u32,
    /// The message's length in bytes.
    len: usize,
    /// The message (a completed `recv` / `irecv`), else `None`.
    data: Option<Py<PyBytes>>,
}

#[pymethods]
impl Status {
    fn __repr__(&self) -> String {
        format!(
            "Status(source={}, tag={}, len={})",
            self.source, self.tag, self.len
        )
    }
}

impl Status {
    fn new(s: memchan_msg::Status, data: Option<Py<PyBytes>>) -> Status {
        Status {
            source: s.source,
            tag: s.tag,
            len: s.len,
            data,
        }
    }
}

/// A pending non-blocking send or receive; complete it with `Comm.wait` / `test`.
#[pyclass(module = "memchan", frozen)]
pub struct Request {
    raw: RawRequest,
    recv: bool,
}

#[pymethods]
impl Request {
    /// Whether this is a receive.
    #[getter]
    fn is_recv(&self) -> bool {
        self.recv
    }
}

fn tag_arg(tag: Option<u32>) -> u32 {
    tag.unwrap_or(memchan_msg::ANY_TAG)
}

fn src_arg(src: Option<i64>) -> PyResult<u32> {
    match src {
        None => Ok(memchan_msg::ANY_SOURCE),
        Some(s) => u32::try_from(s).map_err(|_| invalid("source", format!("{s} is not a rank"))),
    }
}

fn dest_arg(d: i64) -> PyResult<u32> {
    u32::try_from(d).map_err(|_| invalid("destination", format!("{d} is not a rank")))
}

impl Comm {
    /// Runs `f` on the endpoint with the GIL released; the mutex is taken and given
    /// back inside, so a thread waiting for it never holds the GIL.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut memchan_msg::Comm<'static>) -> Result<T, memchan_msg::MsgError> + Send,
    ) -> PyResult<T> {
        let ep = &self.ep;
        py.detach(
            || match &mut *ep.lock().unwrap_or_else(PoisonError::into_inner) {
                Some(e) => Ok(f(&mut e.0)),
                None => Err(()),
            },
        )
        .map_err(|()| invalid("communicator", "it was closed"))?
        .map_err(errors::msg)
    }

    /// A non-blocking send of a copy of `data`: buffered, or with `sync` zero-copy
    /// mode (complete once a receive matched it).
    fn start_send(
        &self,
        py: Python<'_>,
        dest: i64,
        data: &Bound<'_, PyAny>,
        tag: u32,
        sync: bool,
    ) -> PyResult<Request> {
        let d = dest_arg(dest)?;
        let v = Buf::get(data, false)?.bytes().to_vec();
        let raw = self.run(py, |c| {
            if sync {
                c.issend(d, tag, v)
            } else {
                c.isend(d, tag, v)
            }
        })?;
        Ok(Request { raw, recv: false })
    }

    /// A completion as a `Status` (with the received bytes for a receive).
    fn done(py: Python<'_>, c: memchan_msg::Completion, recv: bool) -> PyResult<Status> {
        let s = c.result.map_err(errors::msg)?;
        let data = recv.then(|| PyBytes::new(py, &c.buf[..s.len.min(c.buf.len())]).unbind());
        Ok(Status::new(s, data))
    }
}

#[pymethods]
impl Comm {
    /// Creates this node's endpoint of the communicator `name`, collectively with
    /// every live member (it waits, GIL released, in a cluster barrier). Every member
    /// passes the same sizes: `ring_slots`, `chunk_size`, `chunks`, `max_nodes` (node
    /// ids must be below it), and its own `unexpected_limit` and `mode`.
    #[new]
    #[pyo3(signature = (cluster, name, *, ring_slots=None, chunk_size=None, chunks=None, max_nodes=None, unexpected_limit=None, mode=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        cluster: &Cluster,
        name: &str,
        ring_slots: Option<usize>,
        chunk_size: Option<usize>,
        chunks: Option<usize>,
        max_nodes: Option<usize>,
        unexpected_limit: Option<usize>,
        mode: Option<u32>,
    ) -> PyResult<Comm> {
        let node = cluster.get()?;
        let d = CommConfig::default();
        let cfg = CommConfig {
            ring_slots: ring_slots.unwrap_or(d.ring_slots),
            chunk_size: chunk_size.unwrap_or(d.chunk_size),
            chunks: chunks.unwrap_or(d.chunks),
            max_nodes: max_nodes.unwrap_or(d.max_nodes),
            unexpected_limit: unexpected_limit.unwrap_or(d.unexpected_limit),
            mode: mode.unwrap_or(d.mode),
            ..d
        };
        // SAFETY: the node lives in an `Arc` that `_cluster` holds as long as the
        // endpoint exists (the endpoint drops first: field order, and `close` drops
        // it alone), so the reference outlives every use the endpoint makes of it.
        let static_node: &'static memchan::Cluster = unsafe { &*Arc::as_ptr(&node) };
        let comm = py
            .detach(|| memchan_msg::Comm::new(static_node, name, cfg).map(Endpoint))
            .map_err(errors::msg)?;
        Ok(Comm {
            ep: Mutex::new(Some(comm)),
            _cluster: node,
        })
    }

    /// This node's rank (its node id).
    #[getter]
    fn rank(&self, py: Python<'_>) -> PyResult<u32> {
        self.run(py, |c| Ok(c.rank()))
    }

    /// The members' ranks when the communicator was made.
    fn ranks(&self, py: Python<'_>) -> PyResult<Vec<u32>> {
        self.run(py, |c| Ok(c.ranks()))
    }

    /// Buffered (full postal) send: returns once `data` (any buffer) may be reused.
    #[pyo3(signature = (dest, data, tag=0))]
    fn send(&self, py: Python<'_>, dest: i64, data: &Bound<'_, PyAny>, tag: u32) -> PyResult<()> {
        let d = dest_arg(dest)?;
        let buf = Buf::get(data, false)?;
        let bytes = buf.bytes();
        self.run(py, |c| c.send(d, tag, bytes))
    }

    /// Synchronous (zero-copy mode) send: returns once a receive matched it.
    #[pyo3(signature = (dest, data, tag=0))]
    fn ssend(&self, py: Python<'_>, dest: i64, data: &Bound<'_, PyAny>, tag: u32) -> PyResult<()> {
        let d = dest_arg(dest)?;
        let buf = Buf::get(data, false)?;
        let bytes = buf.bytes();
        self.run(py, |c| c.ssend(d, tag, bytes))
    }

    /// Receives the next message from `source` with `tag` (`None`: any) and returns
    /// its `Status` with `data`. Without `max_len` it first probes for the message's
    /// length; with it, a longer message raises `TruncatedError` (it stays queued).
    #[pyo3(signature = (source=None, tag=None, max_len=None))]
    fn recv(
        &self,
        py: Python<'_>,
        source: Option<i64>,
        tag: Option<u32>,
        max_len: Option<usize>,
    ) -> PyResult<Status> {
        let (src, tag) = (src_arg(source)?, tag_arg(tag));
        let (s, buf) = self.run(py, |c| {
            // Probe, then receive from the probed sender and tag: MPI's
            // non-overtaking rule makes it the same message.
            let (src, tag, cap) = match max_len {
                Some(n) => (src, tag, n),
                None => {
                    let p = c.probe(src, tag)?;
                    (p.source, p.tag, p.len)
                }
            };
            let mut buf = vec![0u8; cap];
            let s = c.recv(src, tag, &mut buf)?;
            Ok((s, buf))
        })?;
        let data = PyBytes::new(py, &buf[..s.len]).unbind();
        Ok(Status::new(s, Some(data)))
    }

    /// Receives into `buf` (a writable buffer: bytearray, a numpy array): returns
    /// the `Status` (`data` is `None`; the message is in the first `len` bytes).
    #[pyo3(signature = (buf, source=None, tag=None))]
    fn recv_into(
        &self,
        py: Python<'_>,
        buf: &Bound<'_, PyAny>,
        source: Option<i64>,
        tag: Option<u32>,
    ) -> PyResult<Status> {
        let (src, tag) = (src_arg(source)?, tag_arg(tag));
        let mut b = Buf::get(buf, true)?;
        let out = b.bytes_mut();
        let s = self.run(py, |c| c.recv(src, tag, out))?;
        Ok(Status::new(s, None))
    }

    /// Synchronous receive straight into `length` bytes at `offset` of the rx mapping
    /// `rx` (of a segment the sender may write): a matching `ssend` longer than one
    /// cache line deposits its body there (one copy).
    #[pyo3(signature = (rx, offset, length, source=None, tag=None))]
    fn recv_rx(
        &self,
        py: Python<'_>,
        rx: &RxMapping,
        offset: i64,
        length: i64,
        source: Option<i64>,
        tag: Option<u32>,
    ) -> PyResult<Status> {
        let (src, tag) = (src_arg(source)?, tag_arg(tag));
        let off = args::offset("offset", offset)?;
        let len = args::offset("length", length)?;
        let rx = rx.inner();
        let s = self.run(py, |c| {
            let rx = rx.lock().unwrap_or_else(PoisonError::into_inner);
            c.recv_rx(src, tag, &rx, off, len)
        })?;
        Ok(Status::new(s, None))
    }

    /// Non-blocking buffered send of a copy of `data`.
    #[pyo3(signature = (dest, data, tag=0))]
    fn isend(
        &self,
        py: Python<'_>,
        dest: i64,
        data: &Bound<'_, PyAny>,
        tag: u32,
    ) -> PyResult<Request> {
        self.start_send(py, dest, data, tag, false)
    }

    /// Non-blocking zero-copy-mode send of a copy of `data`: it completes once a
    /// receive matched it (a long one lands straight in a buffer posted by `recv_rx`).
    #[pyo3(signature = (dest, data, tag=0))]
    fn issend(
        &self,
        py: Python<'_>,
        dest: i64,
        data: &Bound<'_, PyAny>,
        tag: u32,
    ) -> PyResult<Request> {
        self.start_send(py, dest, data, tag, true)
    }

    /// Non-blocking receive of at most `max_len` bytes; `wait` returns its data.
    #[pyo3(signature = (max_len, source=None, tag=None))]
    fn irecv(
        &self,
        py: Python<'_>,
        max_len: usize,
        source: Option<i64>,
        tag: Option<u32>,
    ) -> PyResult<Request> {
        let (src, tag) = (src_arg(source)?, tag_arg(tag));
        let raw = self.run(py, |c| c.irecv(src, tag, vec![0u8; max_len]))?;
        Ok(Request { raw, recv: true })
    }

    /// Waits (GIL released) for `req`; its `Status` (with `data` for a receive).
    fn wait(&self, py: Python<'_>, req: &Request) -> PyResult<Status> {
        let raw = req.raw;
        let c = self.run(py, |c| Ok(c.wait(raw)))?;
        Self::done(py, c, req.recv)
    }

    /// One round of progress: `req`'s `Status` if it completed, else `None`.
    fn test(&self, py: Python<'_>, req: &Request) -> PyResult<Option<Status>> {
        let raw = req.raw;
        match self.run(py, |c| c.test(raw))? {
            Some(c) => Self::done(py, c, req.recv).map(Some),
            None => Ok(None),
        }
    }

    /// Waits (GIL released) for every request; their `Status`es in order.
    fn wait_all(&self, py: Python<'_>, reqs: Vec<PyRef<'_, Request>>) -> PyResult<Vec<Status>> {
        let raws: Vec<RawRequest> = reqs.iter().map(|r| r.raw).collect();
        let cs = self.run(py, |c| c.wait_all(&raws))?;
        cs.into_iter()
            .zip(&reqs)
            .map(|(c, r)| Self::done(py, c, r.recv))
            .collect()
    }

    /// Waits (GIL released) for one of the requests; its position in `reqs` and its
    /// `Status`. The others stay pending.
    fn wait_any(&self, py: Python<'_>, reqs: Vec<PyRef<'_, Request>>) -> PyResult<(usize, Status)> {
        let raws: Vec<RawRequest> = reqs.iter().map(|r| r.raw).collect();
        let (i, c) = self.run(py, |c| c.wait_any(&raws))?;
        Ok((i, Self::done(py, c, reqs[i].recv)?))
    }

    /// Waits (GIL released) for a message `recv(source, tag)` would get; its envelope.
    #[pyo3(signature = (source=None, tag=None))]
    fn probe(&self, py: Python<'_>, source: Option<i64>, tag: Option<u32>) -> PyResult<Status> {
        let (src, tag) = (src_arg(source)?, tag_arg(tag));
        let s = self.run(py, |c| c.probe(src, tag))?;
        Ok(Status::new(s, None))
    }

    /// The envelope of a message `recv(source, tag)` would get, if one arrived.
    #[pyo3(signature = (source=None, tag=None))]
    fn iprobe(
        &self,
        py: Python<'_>,
        source: Option<i64>,
        tag: Option<u32>,
    ) -> PyResult<Option<Status>> {
        let (src, tag) = (src_arg(source)?, tag_arg(tag));
        let s = self.run(py, |c| c.iprobe(src, tag))?;
        Ok(s.map(|s| Status::new(s, None)))
    }

    /// Waits (GIL released) until everything this node queued was delivered, so
    /// peers can finish without it: call before leaving (`MPI_Finalize`).
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |c| c.finish())
    }

    /// Drops this endpoint (later calls raise `InvalidError`).
    fn close(&self, py: Python<'_>) {
        let ep = &self.ep;
        py.detach(|| drop(ep.lock().unwrap_or_else(PoisonError::into_inner).take()));
    }
}
