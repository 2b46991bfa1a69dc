//! This node's **host domain**: the nodes of its cluster that name the same domain
//! (`Config::host_domain`) on a host whose `/dev/shm` they share. Each keeps its
//! receive memory as a named object there (`memchan_shm::domain::RxMemory`, the
//! one-host transport's layout), so a point-to-point write from one of them to
//! another is a store into it, never a frame (`tx.rs`); what reaches other hosts or
//! several nodes goes through the hub as before. Here: names, the wake-up
//! descriptor, and a sender's view of one destination.
//!
//! Names: `memchan.<cluster>.h<instance>[.<domain>]` then `.s<seg>.g<gen>.n<node>` for
//! receive memory and `.n<node>.wake` for the wake-up FIFO. The instance is the hub's
//! random number (`Welcome::instance`), so two clusters of one name on one host never
//! meet, and only a member (or root) knows the names to squat them. Each node joins
//! with its domain's digest ([`identity`]) and the hub tells it which members share
//! it (its neighbours); a sender finds a neighbour's receive memory by opening its
//! object (none there: not mapped yet), and never looks for another host's node.
//! Either way the write goes through the hub until the object is found.
//!
//! **Wake-ups.** A node's blocked waiter polls the link and the wake-up descriptor
//! (`service.rs`'s `progress`). In a domain that descriptor is a FIFO the host's other
//! nodes may write to (mode `0622`: a stray writer can only cause a spurious wake-up);
//! a sender whose store landed on a notify page bumps the destination's notify count
//! and, if a waiter announced itself in the object's header (`mapping.rs`), writes one
//! word to the FIFO: the same lost-wakeup-free handshake as one host's futex
//! (`memchan_core::notify`), with the FIFO for the futex.
//!
//! [`Near`] is a sender's cached way to one node that may be on its host: what a tx
//! mapping stores into (`tx.rs`) and a remote read or atomic loads from (`rma.rs`),
//! once the sticky rule (`Shared::settle`) is kept.

mod sweep;

use crate::state::Shared;
use memchan_core::{Error, NodeId, PageSize, Result};
use memchan_link::proto::{DomainId, SegInfo, NO_DOMAIN};
use memchan_shm::domain::RxMemory;
use rustix::fd::OwnedFd;
use rustix::fs::{FileType, Mode, OFlags, CWD};
use std::cell::{Cell, Ref, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{fence, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// The [`DomainId`] of this process's host domain `label`: a digest of the kernel's
/// boot, the `/dev/shm` this process mounts and the label, so that nodes of two
/// hosts (another boot id), or of two containers with their own `/dev/shm` (another
/// device), never share one, whatever their labels. A digest that cannot be read
/// (no `/dev/shm`) is [`NO_DOMAIN`]: the node then has no neighbours.
pub(crate) fn identity(label: &str) -> DomainId {
    let Ok(shm) = rustix::fs::stat("/dev/shm") else {
        return NO_DOMAIN;
    };
    let boot = std::fs::read("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let mut h = blake3::Hasher::new_derive_key("memchan host domain v1");
    h.update(&(boot.len() as u64).to_le_bytes());
    h.update(&boot);
    h.update(&shm.st_dev.to_le_bytes());
    h.update(&shm.st_ino.to_le_bytes());
    h.update(label.as_bytes());
    let mut id = NO_DOMAIN;
    id.copy_from_slice(&h.finalize().as_bytes()[..16]);
    id
}

/// How long a sender that found no receive memory of a node on this host takes the
/// hub's path before it looks again (the node may map it later).
const LOOK_AGAIN: Duration = Duration::from_millis(1);

/// The names of this node's domain, and the receive memory of its other nodes this
/// node has mapped.
pub(crate) struct Domain {
    prefix: String,
    /// Each destination's receive memory mapped once for every handle of this node
    /// (tx mappings, `Rma`, a thread's own of each): an opening populates and locks
    /// the whole segment, which per handle made programs with a handle per thread
    /// and large heaps crawl on one host (`memchan-shm`'s `rma.rs` tells it).
    mapped: Mutex<HashMap<String, Weak<RxMemory>>>,
}

impl Domain {
    /// The domain `label` (`""`: the host's) of cluster `cluster`, instance `instance`.
    pub(crate) fn new(cluster: &str, instance: u64, label: &str) -> Domain {
        let mut prefix = format!("memchan.{cluster}.h{instance:016x}");
        if !label.is_empty() {
            prefix.push('.');
            prefix.push_str(label);
        }
        Domain {
            prefix,
            mapped: Mutex::new(HashMap::new()),
        }
    }

    /// The name of `node`'s receive memory for segment `seg`, generation `gen`.
    pub(crate) fn rx_name(&self, seg: u32, gen: u32, node: NodeId) -> String {
        format!("{}.s{seg}.g{gen}.n{}", self.prefix, node.0)
    }

    /// The name of `node`'s wake-up FIFO.
    fn wake_name(&self, node: NodeId) -> String {
        format!("{}.n{}.wake", self.prefix, node.0)
    }

    /// `node`'s wake-up descriptor: its FIFO, made anew under a name of this process,
    /// opened to read and write (so that it never reads end-of-file and opening it
    /// never blocks), then renamed into place over any leftover of a node that had
    /// the id before. A FIFO under a node's name thus always has its node as reader
    /// while it lives, which is how `sweep.rs` tells a gone node's leftovers.
    pub(crate) fn make_wake(&self, node: NodeId) -> Result<OwnedFd> {
        let path = format!("/dev/shm/{}", self.wake_name(node));
        let new = format!("{path}.{}.new", std::process::id());
        let _ = rustix::fs::unlink(new.as_str());
        rustix::fs::mknodat(
            CWD,
            new.as_str(),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .map_err(|e| Error::os(format!("mkfifo {new}"), e))?;
        let made = rustix::fs::open(
            new.as_str(),
            OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
        )
        .map_err(|e| Error::os(format!("open {new}"), e))
        .and_then(|fd| {
            // mknod applies the umask.
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o622))
                .map_err(|e| Error::os(format!("fchmod {new}"), e))?;
            rustix::fs::rename(new.as_str(), path.as_str())
                .map_err(|e| Error::os(format!("rename {new} to {path}"), e))?;
            Ok(fd)
        });
        if made.is_err() {
            let _ = rustix::fs::unlink(new.as_str());
        }
        made
    }

    /// Removes what nodes of other runs of any cluster left in `/dev/shm` when they
    /// ended without cleaning up (a joining node's sweep: its own run's nodes are
    /// the membership events' to sweep, [`sweep_node`](Self::sweep_node)).
    pub(crate) fn sweep_others(&self) {
        sweep::sweep(|prefix, _| prefix != self.prefix);
    }

    /// Removes the receive memory and FIFO of `node`, which failed, if its
    /// process is gone without removing them.
    pub(crate) fn sweep_node(&self, node: NodeId) {
        let id = node.0.to_string();
        sweep::sweep(|prefix, n| prefix == self.prefix && n == id);
    }

    /// Removes `node`'s wake-up FIFO (it leaves).
    pub(crate) fn remove_wake(&self, node: NodeId) {
        let _ = rustix::fs::unlink(format!("/dev/shm/{}", self.wake_name(node)).as_str());
    }

    /// Whether `node`'s receive memory of segment `seg` (generation `gen`) is here,
    /// for this process to write.
    pub(crate) fn writable(&self, node: NodeId, seg: u32, gen: u32) -> bool {
        let path = format!("/dev/shm/{}", self.rx_name(seg, gen, node));
        rustix::fs::access(path.as_str(), rustix::fs::Access::WRITE_OK).is_ok()
    }

    /// The receive memory `name`: this node's mapping of it if one is held and not
    /// retired, else a new one (`None`: not there, or not this process's to write).
    fn map(&self, name: &str, page: PageSize, size: usize) -> Option<Arc<RxMemory>> {
        let mut mapped = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = mapped.get(name).and_then(Weak::upgrade) {
            if !m.retired() && m.size() == size {
                return Some(m);
            }
        }
        let m = Arc::new(RxMemory::open(name, page, size).ok()?);
        mapped.retain(|_, w| w.strong_count() > 0);
        mapped.insert(name.to_string(), Arc::downgrade(&m));
        Some(m)
    }

    /// Maps `node`'s receive memory of a segment to store into it, if it is on this
    /// host and this process may write it (`None`: through the hub).
    pub(crate) fn peer(
        &self,
        node: NodeId,
        seg: u32,
        gen: u32,
        page: PageSize,
        size: usize,
        view: u64,
    ) -> Option<Peer> {
        let mem = self.map(&self.rx_name(seg, gen, node), page, size)?;
        Some(Peer {
            mem,
            wake_name: format!("/dev/shm/{}", self.wake_name(node)),
            wake: OnceLock::new(),
            view,
        })
    }
}

/// A sender's view of one destination on its host, for one segment.
pub(crate) struct Peer {
    /// Shared with the load/store handles made of it (`rma.rs`'s `peer_memory`).
    pub(crate) mem: Arc<RxMemory>,
    wake_name: String,
    /// The destination's FIFO, opened at the first wake-up it needs.
    wake: OnceLock<Option<OwnedFd>>,
    /// The membership view it was resolved in (`Shared::view`).
    pub(crate) view: u64,
}

impl Peer {
    /// Whether the destination fenced `me` off (it knows this node failed or left):
    /// then the write goes through the hub, which refuses an isolated node's.
    pub(crate) fn fenced(&self, me: NodeId) -> bool {
        self.mem.fenced(me)
    }

    /// Posts a write that landed on a notify page: the destination's notify count,
    /// then, if a waiter announced itself, a word on its FIFO (SeqCst both sides:
    /// Dekker's pair, as `memchan_core::notify`).
    pub(crate) fn post(&self) {
        let (seq, waiters) = self.mem.notify_words();
        seq.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if waiters.load(Ordering::SeqCst) == 0 {
            return;
        }
        let fd = self.wake.get_or_init(|| {
            rustix::fs::open(
                self.wake_name.as_str(),
                OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOFOLLOW,
                Mode::empty(),
            )
            .ok()
        });
        if let Some(fd) = fd {
            // A full FIFO already holds a wake-up the waiter has not read.
            let _ = rustix::io::write(fd, &1u64.to_ne_bytes());
        }
    }
}

/// A sender's way to node `node`'s receive memory of one segment, if it is on this
/// host: cached while its owner keeps it and the membership view stands (one thread
/// at a time: not `Sync`).
pub(crate) struct Near {
    node: NodeId,
    peer: RefCell<Option<Peer>>,
    /// No receive memory was found: the hub's path until then.
    look_again: Cell<Option<Instant>>,
    /// The membership view in which the node was not a neighbour (another host's):
    /// the hub's path, without a look, until the view moves.
    far: Cell<Option<u64>>,
}

impl Near {
    pub(crate) fn new(node: NodeId) -> Near {
        Near {
            node,
            peer: RefCell::new(None),
            look_again: Cell::new(None),
            far: Cell::new(None),
        }
    }

    /// The node's receive memory of segment `info` to reach now, if it is on this
    /// host and has not fenced this node off, once this node may send and the sticky
    /// rule is kept (`None`: through the hub).
    ///
    /// # Errors
    /// As `Shared::check` (this node isolated, the hub lost) and `Shared::settle`.
    pub(crate) fn target(&self, sh: &Shared, info: &SegInfo) -> Result<Option<Ref<'_, Peer>>> {
        let Some(p) = self.peer(sh, info).filter(|p| !p.fenced(sh.me)) else {
            return Ok(None);
        };
        sh.check()?;
        sh.settle(self.node)?;
        Ok(Some(p))
    }

    /// The receive memory, resolved again when its owner retired it or the
    /// membership view moved; for a neighbour, looked for again at most every
    /// [`LOOK_AGAIN`] while it is not found (it may map the segment later); for
    /// another host's node, not looked for until the view moves.
    fn peer(&self, sh: &Shared, info: &SegInfo) -> Option<Ref<'_, Peer>> {
        let view = sh.view.load(Ordering::Acquire);
        if self.far.get() == Some(view) {
            return None;
        }
        let p = self.peer.borrow();
        if p.as_ref()
            .is_some_and(|p| p.view == view && !p.mem.retired())
        {
            return Some(Ref::map(p, |p| p.as_ref().expect("checked")));
        }
        drop(p);
        self.resolve(sh, info, view)
    }

    #[cold]
    fn resolve(&self, sh: &Shared, info: &SegInfo, view: u64) -> Option<Ref<'_, Peer>> {
        *self.peer.borrow_mut() = None;
        let now = Instant::now();
        if self.look_again.get().is_some_and(|t| now < t) {
            return None;
        }
        let d = sh.domain.as_ref()?;
        let near = {
            let st = sh.lock();
            st.members.contains(self.node) && st.neighbours.contains(self.node)
        };
        if !near {
            self.far.set(Some(view));
            return None;
        }
        let found = d.peer(
            self.node,
            info.seg,
            info.gen,
            sh.page,
            info.size as usize,
            view,
        );
        let Some(p) = found else {
            self.look_again.set(Some(now + LOOK_AGAIN));
            return None;
        };
        self.look_again.set(None);
        *self.peer.borrow_mut() = Some(p);
        Some(Ref::map(self.peer.borrow(), |p| {
            p.as_ref().expect("just set")
        }))
    }
}
