//! `memchan.Cluster` (a node's membership: segments, groups, ack, barrier, locks,
//! membership events, the global clock), `Event`, `GlobalTime` and `Lock`.
//! Every call that waits releases the GIL.

use crate::args;
use crate::errors::{self, invalid};
use crate::group::Group;
use crate::mapping::Segment;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};

/// This process's membership in a cluster (a node).
///
/// Join with `Cluster.join(name)`; leave with `leave()` or a `with` block (or when
/// the object goes away). Several processes that join the same name on one host form
/// a cluster over shared memory; `hub="HOST:PORT"` joins through a hub instead.
///
/// >>> import memchan, os
/// >>> with memchan.Cluster.join(f"doc-{os.getpid()}") as c:
/// ...     seg = c.segment("inbox", 4096)
/// ...     c.node_id in c.members()
/// True
#[pyclass(module = "memchan", frozen)]
pub struct Cluster {
    node: Mutex<Option<Arc<memchan::Cluster>>>,
}

impl Cluster {
    /// The node, or `InvalidError` once this handle left.
    pub fn get(&self) -> PyResult<Arc<memchan::Cluster>> {
        self.node
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| invalid("cluster handle", "this node left the cluster"))
    }
}

#[pymethods]
impl Cluster {
    /// Joins (or creates) the cluster `name`. Keywords override the defaults, which
    /// come from the environment (`MEMCHAN_HUB`, `MEMCHAN_HUB_HOST`, `MEMCHAN_KEY_FILE`,
    /// `MEMCHAN_SHM_MODE`): `page_size` 4096 or 8192, `heartbeat` and
    /// `failure_timeout` in seconds, `hub="HOST:PORT"` (join through that hub;
    /// `"ACTIVE,STANDBY"` for two rails),
    /// `host_hub="HOST:PORT"` (host the hub in this process), `key_file` (the
    /// cluster key), `shm_mode` (the control block's permission bits, one host).
    ///
    /// >>> import memchan, os
    /// >>> c = memchan.Cluster.join(f"doc-{os.getpid()}", page_size=8192)
    /// >>> c.page_size
    /// 8192
    /// >>> c.leave()
    #[staticmethod]
    #[pyo3(signature = (name, *, page_size=None, heartbeat=None, failure_timeout=None, hub=None, host_hub=None, key_file=None, shm_mode=None))]
    #[allow(clippy::too_many_arguments)]
    fn join(
        py: Python<'_>,
        name: &str,
        page_size: Option<usize>,
        heartbeat: Option<f64>,
        failure_timeout: Option<f64>,
        hub: Option<String>,
        host_hub: Option<String>,
        key_file: Option<std::path::PathBuf>,
        shm_mode: Option<u32>,
    ) -> PyResult<Cluster> {
        let mut cfg = memchan::Config::default();
        if let Some(p) = page_size {
            cfg = cfg.with_page_size(memchan::PageSize::from_bytes(p).ok_or_else(|| {
                invalid(
                    "page size",
                    format!("{p} bytes; memchan pages are 4096 or 8192"),
                )
            })?);
        }
        if let Some(t) = args::timeout(heartbeat)? {
            cfg = cfg.with_heartbeat(t);
        }
        if let Some(t) = args::timeout(failure_timeout)? {
            cfg = cfg.with_failure_timeout(t);
        }
        match (hub, host_hub) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "hub",
                    "give `hub` (join) or `host_hub` (host), not both",
                ))
            }
            // `ACTIVE,STANDBY` names two rails, as `MEMCHAN_HUB` does.
            (Some(list), None) => {
                let hub = memchan::HubSpec::parse_rails(&list)
                    .map_err(|e| invalid("hub address", e.to_string()))?;
                cfg = cfg.with_hub(hub);
            }
            (None, Some(listen)) => cfg = cfg.with_hub(memchan::HubSpec::Host(listen)),
            (None, None) => {}
        }
        if let Some(path) = key_file {
            cfg = cfg.with_key_file(path);
        }
        if let Some(m) = shm_mode {
            cfg = cfg.with_shm_mode(m);
        }
        let node = py
            .detach(|| memchan::Cluster::join_with(name, cfg))
            .map_err(errors::cluster)?;
        Ok(Cluster {
            node: Mutex::new(Some(Arc::new(node))),
        })
    }

    /// This node's id (`0..256`).
    #[getter]
    fn node_id(&self) -> PyResult<u16> {
        Ok(self.get()?.node_id().0)
    }

    /// This node's incarnation (new on every join).
    #[getter]
    fn incarnation(&self) -> PyResult<u64> {
        Ok(self.get()?.incarnation())
    }

    /// The cluster's name.
    #[getter]
    fn name(&self) -> PyResult<String> {
        Ok(self.get()?.name().to_string())
    }

    /// The cluster's page size in bytes.
    #[getter]
    fn page_size(&self) -> PyResult<usize> {
        Ok(self.get()?.page_size())
    }

    /// `"shm"` (one host, shared memory) or `"hub"`.
    #[getter]
    fn transport(&self) -> PyResult<&'static str> {
        Ok(self.get()?.transport().name())
    }

    /// The membership epoch: it grows with every join, leave and failure.
    #[getter]
    fn epoch(&self) -> PyResult<u64> {
        Ok(self.get()?.epoch())
    }

    /// The live members' node ids.
    fn members(&self) -> PyResult<Vec<u16>> {
        Ok(self.get()?.members().iter().map(|n| n.0).collect())
    }

    /// The next membership event from this node's join on, waiting up to `timeout`
    /// seconds (`None`: forever) with the GIL released; `None` when none came.
    #[pyo3(signature = (timeout=None))]
    fn next_event(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<Event>> {
        let (c, t) = (self.get()?, args::timeout(timeout)?);
        Ok(py.detach(|| c.next_event(t)).map(Event::from))
    }

    /// Waits (GIL released) until at least `n` nodes are members; `TimeoutError` after
    /// `timeout` seconds.
    fn wait_for_members(&self, py: Python<'_>, n: usize, timeout: f64) -> PyResult<()> {
        let c = self.get()?;
        let t = args::timeout(Some(timeout))?.unwrap_or_default();
        py.detach(|| c.wait_for_members(n, t))
            .map_err(errors::cluster)
    }

    /// Finds the segment `name` or creates it with `size` bytes (rounded up to whole
    /// pages), owned by this process's uid with permission bits `mode`.
    #[pyo3(signature = (name, size, mode=0o600))]
    fn segment(&self, py: Python<'_>, name: &str, size: i64, mode: u32) -> PyResult<Segment> {
        let c = self.get()?;
        let size = args::offset("segment size", size)?;
        py.detach(|| c.segment(name, size, mode))
            .map(Segment::new)
            .map_err(errors::cluster)
    }

    /// Opens an existing segment (`UnknownSegmentError` if there is none).
    fn open_segment(&self, py: Python<'_>, name: &str) -> PyResult<Segment> {
        let c = self.get()?;
        py.detach(|| c.open_segment(name))
            .map(Segment::new)
            .map_err(errors::cluster)
    }

    /// Creates (or finds, with the same members) the multicast group `name`.
    fn create_group(&self, py: Python<'_>, name: &str, members: Vec<i64>) -> PyResult<Group> {
        let c = self.get()?;
        let ids = members
            .into_iter()
            .map(args::node)
            .collect::<PyResult<Vec<_>>>()?;
        py.detach(|| c.create_group(name, &ids))
            .map(|g| Group { id: g.0 })
            .map_err(errors::cluster)
    }

    /// Looks up the multicast group `name`.
    fn group(&self, py: Python<'_>, name: &str) -> PyResult<Group> {
        let c = self.get()?;
        py.detach(|| c.group(name))
            .map(|g| Group { id: g.0 })
            .map_err(errors::cluster)
    }

    /// Returns (GIL released) once every earlier write of this node has been applied
    /// at every destination (OpenSHMEM's `quiet`); completes pending gets.
    fn ack(&self, py: Python<'_>) -> PyResult<()> {
        let c = self.get()?;
        py.detach(|| c.ack()).map_err(errors::cluster)
    }

    /// Waits (GIL released) until every live member reached this barrier; with
    /// `group`, over the live members of that group.
    #[pyo3(signature = (group=None))]
    fn barrier(&self, py: Python<'_>, group: Option<&Group>) -> PyResult<()> {
        let c = self.get()?;
        let g = group.map(|g| memchan::GroupId(g.id));
        py.detach(|| match g {
            Some(g) => c.barrier_group(g),
            None => c.barrier(),
        })
        .map_err(errors::cluster)
    }

    /// The cluster lock `name` (created on first use).
    fn lock(&self, py: Python<'_>, name: &str) -> PyResult<Lock> {
        let c = self.get()?;
        let lock = py.detach(|| c.lock(name)).map_err(errors::cluster)?;
        Ok(Lock {
            state: Mutex::new(LockState {
                guard: None,
                lock: Box::new(lock),
            }),
        })
    }

    /// The cluster's global clock: `GlobalTime(ns, bound_ns)`.
    fn global_time(&self) -> PyResult<GlobalTime> {
        let t = self.get()?.global_time().map_err(errors::cluster)?;
        Ok(GlobalTime {
            ns: t.ns,
            bound_ns: t.bound_ns,
        })
    }

    /// `"HOST:PORT"` of the hub this node hosts (joined with `host_hub=`).
    fn hosted_hub_addr(&self) -> PyResult<String> {
        Ok(self
            .get()?
            .hosted_hub_addr()
            .map_err(errors::cluster)?
            .to_string())
    }

    /// Leaves the cluster. Later calls on this handle raise `InvalidError`; a `Comm`
    /// still open keeps the node until it goes too.
    fn leave(&self, py: Python<'_>) {
        let node = self
            .node
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // Leaving waits for the transport's service threads.
        py.detach(|| drop(node));
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _ty: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> bool {
        self.leave(py);
        false
    }

    fn __repr__(&self) -> String {
        match self.get() {
            Ok(c) => format!(
                "Cluster(name={:?}, node_id={}, transport={:?})",
                c.name(),
                c.node_id().0,
                c.transport().name()
            ),
            Err(_) => "Cluster(left)".to_string(),
        }
    }
}

/// A membership change: `kind` is `"joined"`, `"left"` or `"failed"`.
#[pyclass(module = "memchan", frozen, get_all)]
pub struct Event {
    /// The epoch this change started.
    epoch: u64,
    /// The node concerned.
    node: u16,
    /// Its incarnation.
    incarnation: u64,
    /// `"joined"`, `"left"` or `"failed"`.
    kind: &'static str,
}

impl From<memchan::MembershipEvent> for Event {
    fn from(e: memchan::MembershipEvent) -> Event {
        Event {
            epoch: e.epoch,
            node: e.node.0,
            incarnation: e.incarnation,
            kind: match e.kind {
                memchan::EventKind::Joined => "joined",
                memchan::EventKind::Left => "left",
                memchan::EventKind::Failed => "failed",
            },
        }
    }
}

#[pymethods]
impl Event {
    fn __repr__(&self) -> String {
        format!(
            "Event(kind={:?}, node={}, epoch={}, incarnation={})",
            self.kind, self.node, self.epoch, self.incarnation
        )
    }
}

/// A reading of the global clock: the cluster's time lies within `ns ± bound_ns`.
#[pyclass(module = "memchan", frozen, get_all)]
pub struct GlobalTime {
    /// Nanoseconds.
    ns: u64,
    /// The accuracy bound in nanoseconds.
    bound_ns: u64,
}

#[pymethods]
impl GlobalTime {
    fn __repr__(&self) -> String {
        format!("GlobalTime(ns={}, bound_ns={})", self.ns, self.bound_ns)
    }
}

/// A named cluster lock: at most one node holds it. `acquire()` waits with the GIL
/// released; `with lock:` holds it for the block.
///
/// >>> import memchan, os
/// >>> c = memchan.Cluster.join(f"doc-lock-{os.getpid()}")
/// >>> lock = c.lock("counter")
/// >>> with lock:
/// ...     lock.held
/// True
/// >>> lock.held
/// False
#[pyclass(module = "memchan", frozen)]
pub struct Lock {
    /// Every use of the lock, guard included, under this mutex: taken inside
    /// `detach`, so a thread waiting for it never holds the GIL.
    state: Mutex<LockState>,
}

/// A lock and, while this handle holds it, its guard.
struct LockState {
    // Declared before `lock`: the guard borrows it and must drop first.
    guard: Option<memchan::LockGuard<'static>>,
    lock: Box<memchan::Lock>,
}

// SAFETY: `memchan::Lock` is `Send` but not `Sync` (it keeps a backoff cell and its
// mappings' cursors), so its guard, a reference to it, is not `Send`. Here the lock
// and its guard move together and are only ever used under `Lock::state`'s mutex,
// by one thread at a time, which is what `Sync` would have promised; neither
// transport's guard depends on the thread that made it.
unsafe impl Send for LockState {}

impl Lock {
    /// Runs `f` on the state with the GIL released, the mutex taken inside.
    fn run<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut LockState) -> T + Send) -> T {
        let state = &self.state;
        py.detach(|| f(&mut state.lock().unwrap_or_else(PoisonError::into_inner)))
    }

    /// Acquires (or tries once) unless this handle holds the lock.
    fn take(&self, py: Python<'_>, wait: bool) -> PyResult<bool> {
        self.run(py, |s| {
            if s.guard.is_some() {
                return Ok(None);
            }
            // SAFETY: the box keeps the lock at this address until `LockState`
            // drops, and the guard made from this reference lives in the same
            // `LockState`, which drops it first (field order); `release` takes it
            // out only to release it at once, under the mutex.
            let lock: &'static memchan::Lock = unsafe { &*std::ptr::from_ref(&*s.lock) };
            let g = if wait {
                lock.acquire().map(Some)
            } else {
                lock.try_acquire()
            }?;
            let held = g.is_some();
            s.guard = g;
            Ok(Some(held))
        })
        .map_err(errors::cluster)?
        .ok_or_else(|| invalid("lock use", "this handle holds the lock already"))
    }
}

#[pymethods]
impl Lock {
    /// Waits (GIL released) until this node holds the lock.
    fn acquire(&self, py: Python<'_>) -> PyResult<()> {
        self.take(py, true).map(drop)
    }

    /// Tries once; `False` if another node holds or bids for it.
    fn try_acquire(&self, py: Python<'_>) -> PyResult<bool> {
        self.take(py, false)
    }

    /// Releases the lock (`InvalidError` if this handle does not hold it).
    fn release(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |s| s.guard.take().map(memchan::LockGuard::release))
            .ok_or_else(|| invalid("lock release", "this handle does not hold the lock"))?
            .map_err(errors::cluster)
    }

    /// Whether this handle holds the lock.
    #[getter]
    fn held(&self, py: Python<'_>) -> bool {
        self.run(py, |s| s.guard.is_some())
    }

    fn __enter__(slf: Py<Self>, py: Python<'_>) -> PyResult<Py<Self>> {
        slf.get().acquire(py)?;
        Ok(slf)
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _ty: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.release(py)?;
        Ok(false)
    }
}
