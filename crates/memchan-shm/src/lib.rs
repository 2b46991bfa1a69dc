//! memchan's one-host transport: processes on one host form a cluster through shared
//! memory, with **direct deposit** (a write is a store into the destination's receive
//! memory: no daemon, no system call, no lock on the point-to-point path), a
//! shared-memory **point of global order** for broadcast, multicast and local copy,
//! cross-process futex **notify**, and a per-process service thread for **heartbeats
//! and failure detection**.
//!
//! Most users want the `memchan` crate, which re-exports this behind `Cluster`.
//!
//! ```
//! use memchan_shm::{Config, Node};
//! use memchan_core::{Dest, TxAttrs};
//! let name = format!("doc-shm-{}", std::process::id());
//! let a = Node::join(&name, Config::default())?;
//! let b = Node::join(&name, Config::default())?;
//! let seg = b.segment("data", 4096, 0o600)?;
//! let rx = seg.map_rx()?;
//! let tx = a.segment("data", 4096, 0o600)?.map_tx(Dest::Node(b.id()), TxAttrs::default())?;
//! tx.write_u64(64, 42)?;
//! assert_eq!(rx.load_u64(64)?, 42);
//! # Ok::<(), memchan_core::Error>(())
//! ```

mod control;
mod futex;
mod idle;
mod lock;
mod node;
mod rx;
mod rxmap;
mod service;
mod shm;
mod tx;

pub use lock::{Lock, LockGuard};
pub use node::{Config, EventKind, MembershipEvent};
pub use rxmap::RxMapping;
pub use tx::TxMapping;

use memchan_core::{Dest, GroupId, NodeId, NodeSet, Result, RxAttrs, TxAttrs};
use node::{Inner, SegRef};
use std::sync::Arc;
use std::time::Duration;

/// A process's membership in a cluster on this host. Leaves on drop.
pub struct Node {
    inner: Arc<Inner>,
    service: Option<std::thread::JoinHandle<()>>,
    cursor: std::sync::Mutex<u64>,
}

impl Node {
    /// Joins the cluster `name`, creating it if this is its first node.
    pub fn join(name: &str, cfg: Config) -> Result<Node> {
        let inner = Inner::join(name, cfg)?;
        let service = Some(service::start(&inner));
        let cursor = std::sync::Mutex::new(inner.event_head());
        Ok(Node {
            inner,
            service,
            cursor,
        })
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.inner.me
    }

    /// This node's incarnation: unique for every join, never reused.
    pub fn incarnation(&self) -> u64 {
        self.inner.incarnation
    }

    /// The cluster's name.
    pub fn cluster(&self) -> &str {
        &self.inner.cluster
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.inner.page.bytes()
    }

    /// Live members.
    pub fn members(&self) -> NodeSet {
        self.inner.members()
    }

    /// Current membership epoch.
    pub fn epoch(&self) -> u64 {
        self.inner.epoch()
    }

    /// The next membership event after the last one returned (starting at this join),
    /// waiting up to `timeout`.
    pub fn next_event(&self, timeout: Option<Duration>) -> Option<MembershipEvent> {
        let mut c = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
        self.inner.next_event(&mut c, timeout)
    }

    /// Finds or creates the segment `name` of `size` bytes (rounded up to pages), owned
    /// by the caller with permission bits `mode` if it is created.
    pub fn segment(&self, name: &str, size: usize, mode: u32) -> Result<Segment> {
        let seg = self.inner.segment(name, size, mode, 0, true)?;
        Ok(Segment {
            inner: self.inner.clone(),
            seg,
        })
    }

    /// Opens an existing segment.
    pub fn open_segment(&self, name: &str) -> Result<Segment> {
        let seg = self.inner.segment(name, 0, 0, 0, false)?;
        Ok(Segment {
            inner: self.inner.clone(),
            seg,
        })
    }

    /// Creates (or finds, with the same members) a multicast group.
    pub fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId> {
        self.inner
            .create_group(name, &members.iter().copied().collect())
    }

    /// Looks a multicast group up by name.
    pub fn group(&self, name: &str) -> Result<GroupId> {
        self.inner.group(name)
    }

    /// Returns once every earlier write of this node is applied at every destination.
    /// On one host every write is applied by the time it returns; the fence makes it
    /// visible to every reader.
    pub fn ack(&self) -> Result<()> {
        self.inner.check_alive()?;
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Barrier over every live member.
    pub fn barrier(&self) -> Result<()> {
        self.inner.barrier(0, None)
    }

    /// Barrier over the live members of group `g` (this node must be one).
    pub fn barrier_group(&self, g: GroupId) -> Result<()> {
        let members = self.inner.group_members(g)?;
        if !members.contains(self.inner.me) {
            return Err(memchan_core::Error::Invalid {
                what: "group barrier",
                why: format!("{} is not a member of group #{}", self.inner.me, g.0),
            });
        }
        self.inner.barrier(1 + g.index(), Some(members))
    }

    /// The cluster lock `name`.
    pub fn lock(&self, name: &str) -> Result<Lock> {
        Lock::new(&self.inner, name)
    }

    /// Waits until at least `n` nodes are members.
    pub fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        let deadline = std::time::Instant::now() + timeout;
        while self.members().len() < n {
            if std::time::Instant::now() >= deadline {
                return Err(memchan_core::Error::Timeout(timeout, "cluster members"));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Leaves the cluster now (dropping the node does the same).
    pub fn leave(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(h) = self.service.take() {
            self.inner.leave();
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A named segment of the cluster's address space.
#[derive(Clone)]
pub struct Segment {
    inner: Arc<Inner>,
    seg: SegRef,
}

impl Segment {
    /// Name.
    pub fn name(&self) -> &str {
        &self.seg.name
    }

    /// Size in bytes (whole pages).
    pub fn size(&self) -> usize {
        self.seg.size
    }

    /// Maps the segment rx with default attributes (receive enabled, no notify).
    pub fn map_rx(&self) -> Result<RxMapping> {
        self.map_rx_with(RxAttrs::default())
    }

    /// Maps the segment rx with `attrs` on every page.
    pub fn map_rx_with(&self, attrs: RxAttrs) -> Result<RxMapping> {
        RxMapping::new(self.inner.clone(), self.seg.clone(), attrs)
    }

    /// Maps the segment tx towards `dest`.
    pub fn map_tx(&self, dest: Dest, attrs: TxAttrs) -> Result<TxMapping> {
        TxMapping::new(self.inner.clone(), self.seg.clone(), dest, attrs)
    }

    /// Frees the segment (owner or root only); every mapping of it stops working.
    pub fn free(self) -> Result<()> {
        self.inner.free_segment(&self.seg)
    }
}
