//! memchan's one-host transport: processes on one host form a cluster through shared
//! memory, with **direct deposit** (a write is a store into the destination's receive
//! memory: no daemon, no system call, no lock on the point-to-point path), a
//! shared-memory **point of global order** for broadcast, multicast and local copy,
//! cross-process futex **notify**, and per-node service threads for **heartbeats and
//! failure detection**.
//!
//! Most users want the `memchan` crate, which re-exports this behind `Cluster`.
//!
//! It implements the contract of `memchan_core::transport`:
//!
//! ```
//! use memchan_shm::Node;
//! use memchan_core::transport::{SegmentOps, Transport, TxOps, RxOps};
//! use memchan_core::{Config, Dest, RxAttrs, TxAttrs};
//! let name = format!("doc-shm-{}", std::process::id());
//! let cfg = Config::default().without_hub();
//! let a = Node::join(&name, &cfg)?;
//! let b = Node::join(&name, &cfg)?;
//! let seg = b.segment("data", 4096, 0o600)?;
//! let rx = seg.map_rx_with(RxAttrs::default())?;
//! let tx = a.segment("data", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
//! tx.write_u64(64, 42)?;
//! assert_eq!(rx.load_u64(64)?, 42);
//! # Ok::<(), memchan_core::Error>(())
//! ```

mod asym;
mod clock;
mod control;
pub mod domain;
mod futex;
#[cfg(test)]
mod hostile;
mod local;
mod lock;
mod mapping;
#[cfg(test)]
mod member_attacks;
mod node;
mod order;
mod perm;
mod presence;
mod record;
mod rma;
mod rx;
mod service;
mod shm;
pub mod status;
mod tx;
#[cfg(test)]
mod watchers;

pub use lock::{Lock, LockGuard};
pub use mapping::RxMapping;
pub use node::{EventKind, MembershipEvent};
pub use rma::Rma;
pub use tx::TxMapping;

pub use clock::{calibration as clock_calibration, Calibration as ClockCalibration};
use local::SegRef;
use memchan_core::rma::{AtomicOp, Pending};
use memchan_core::transport::{Caps, RmaOps, SegmentOps, Transport};
use memchan_core::{Config, Dest, GroupId, NodeId, NodeSet, Result, RxAttrs, TxAttrs};
use node::Inner;
use std::sync::Arc;
use std::time::Duration;

/// A process's membership in a cluster on this host. Leaves on drop.
pub struct Node {
    inner: Arc<Inner>,
    service: Option<service::Service>,
    cursor: std::sync::Mutex<u64>,
}

impl Transport for Node {
    type Segment = Segment;
    type Tx = TxMapping;
    type Rx = RxMapping;
    type Lock = Lock;
    const NAME: &'static str = "shm";

    fn join(name: &str, cfg: &Config) -> Result<Node> {
        let inner = Inner::join(name, cfg)?;
        let service = match service::start(&inner) {
            Ok(s) => Some(s),
            Err(e) => {
                inner.leave();
                return Err(e);
            }
        };
        let cursor = std::sync::Mutex::new(inner.event_head());
        Ok(Node {
            inner,
            service,
            cursor,
        })
    }

    fn caps(&self) -> Caps {
        Caps::DIRECT_DEPOSIT | Caps::ORDERED | Caps::NOTIFY | Caps::GET | Caps::ATOMICS
    }

    fn node_id(&self) -> NodeId {
        self.inner.local.me
    }

    fn incarnation(&self) -> u64 {
        self.inner.local.incarnation
    }

    fn cluster(&self) -> &str {
        &self.inner.local.cluster
    }

    fn page_size(&self) -> usize {
        self.inner.local.page.bytes()
    }

    fn members(&self) -> NodeSet {
        self.inner.members()
    }

    fn epoch(&self) -> u64 {
        self.inner.epoch()
    }

    fn next_event(&self, timeout: Option<Duration>) -> Option<MembershipEvent> {
        let mut c = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
        self.inner.next_event(&mut c, timeout)
    }

    fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        self.inner.wait_for_members(n, timeout)
    }

    fn segment(&self, name: &str, size: usize, mode: u32) -> Result<Segment> {
        let seg = self.inner.segment(name, size, mode, 0, true)?;
        Ok(Segment {
            inner: self.inner.clone(),
            seg,
        })
    }

    fn open_segment(&self, name: &str) -> Result<Segment> {
        let seg = self.inner.segment(name, 0, 0, 0, false)?;
        Ok(Segment {
            inner: self.inner.clone(),
            seg,
        })
    }

    fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId> {
        self.inner.create_group(name, members)
    }

    fn group(&self, name: &str) -> Result<GroupId> {
        self.inner.group(name)
    }

    /// On one host every write is applied by the time it returns; the fence makes it
    /// visible to every reader.
    fn ack(&self) -> Result<()> {
        self.inner.local.check_alive()?;
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn barrier(&self) -> Result<()> {
        self.inner.barrier(0, None)
    }

    fn barrier_group(&self, g: GroupId) -> Result<()> {
        let members = self.inner.group_members(g)?;
        if !members.contains(self.inner.local.me) {
            return Err(memchan_core::Error::Invalid {
                what: "group barrier",
                why: format!("{} is not a member of group #{}", self.inner.local.me, g.0),
            });
        }
        self.inner.barrier(1 + g.index(), Some(members))
    }

    fn global_time(&self) -> Result<memchan_core::GlobalTime> {
        clock::global_time()
    }

    fn lock(&self, name: &str) -> Result<Lock> {
        Lock::new(&self.inner, name)
    }

    fn leave(mut self) {
        self.shutdown();
    }
}

impl Node {
    /// Leaves, then stops the service threads: bounded, as `Inner::leave` and
    /// `Service::stop` are. The heartbeat goes on while the node leaves (a leave that
    /// waits for the control plane must not look like a hang to the others).
    fn shutdown(&mut self) {
        if let Some(s) = self.service.take() {
            self.inner.leave();
            self.inner
                .stop
                .store(true, memchan_core::sync::Ordering::Release);
            s.stop(self.inner.local.stall_bound());
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

impl SegmentOps for Segment {
    type Tx = TxMapping;
    type Rx = RxMapping;
    type Rma = Rma;

    fn name(&self) -> &str {
        &self.seg.name
    }

    fn size(&self) -> usize {
        self.seg.size
    }

    fn owner(&self) -> memchan_core::SegOwner {
        let p = &self.seg.perm;
        memchan_core::SegOwner {
            uid: p.uid,
            gid: p.gid,
            mode: p.mode,
        }
    }

    fn map_rx_with(&self, attrs: RxAttrs) -> Result<RxMapping> {
        RxMapping::new(self.inner.clone(), self.seg.clone(), attrs)
    }

    fn map_tx(&self, dest: Dest, attrs: TxAttrs) -> Result<TxMapping> {
        TxMapping::new(self.inner.clone(), self.seg.clone(), dest, attrs)
    }

    fn free(self) -> Result<()> {
        self.inner.free_segment(&self.seg)
    }

    fn rma(&self) -> Result<Rma> {
        Rma::new(self.inner.clone(), self.seg.clone())
    }
}

impl RmaOps for Rma {
    fn get(&self, node: NodeId, offset: usize, buf: &mut [u8]) -> Result<()> {
        Rma::get(self, node, offset, buf)
    }
    #[inline(always)]
    fn get_u64(&self, node: NodeId, offset: usize) -> Result<u64> {
        Rma::get_u64(self, node, offset)
    }
    #[inline(always)]
    fn get_u32(&self, node: NodeId, offset: usize) -> Result<u32> {
        Rma::get_u32(self, node, offset)
    }
    fn get_nbi(&self, node: NodeId, offset: usize, len: usize) -> Result<Pending> {
        Rma::get_nbi(self, node, offset, len)
    }
    #[inline(always)]
    fn atomic_u64(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u64> {
        Rma::atomic_u64(self, node, offset, op)
    }
    #[inline(always)]
    fn atomic_u32(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u32> {
        Rma::atomic_u32(self, node, offset, op)
    }
    fn peer_memory(&self, node: NodeId) -> Result<memchan_core::rma::PeerMemory> {
        Rma::peer_memory(self, node)
    }
    /// One host: every node's memory is on it.
    fn shares_memory_with(&self, node: NodeId) -> bool {
        node.index() < memchan_core::MAX_NODES
    }
}

memchan_core::ops_from_inherent!(tx: TxMapping, rx: RxMapping, lock: Lock, guard: LockGuard);
