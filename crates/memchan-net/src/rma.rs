//! Remote reads and atomics of a hub cluster (`memchan_core::transport::RmaOps`).
//!
//! ```text
//!  origin A                    hub                          target N (link side)
//!  RmaRequest(req, seg, N, ..) -> checks: segment, bounds,
//!                                 A's rights (read; read and
//!                                 write for an atomic), N a
//!                                 member that maps it rx
//!                                 token -> (A, req)
//!                                 RmaServe(token, ..) ------> remote_read on every page?
//!                                                             load / atomic on RxMem
//!                              <--------------------------- RmaDone(token, status, body)
//!  Response(req, status, body) <- (only N may answer its token)
//! ```
//!
//! The request travels A's link and then N's, behind every earlier `Deliver` of A's
//! writes to N, so it is served after them (single-sender rule). N's link side (its
//! service thread, or an application thread reading the link) serves it from its
//! receive memory without the application; a target in the hub's own process is
//! served at once (`LocalPort::rma`). A target that fails is answered for by the hub
//! (`UnknownNode`), so an origin waits only while the hub is alive.
//!
//! **A target on another host with a direct link** (`direct.rs`): the request goes on
//! the link (one hop each way), behind the origin's earlier writes on it and, as a
//! direct write, only once those through the hub were acked; the target checks it as
//! the hub would (its right by the uid and gid the hub vouched for) and answers on
//! the link. A link that ends first answers what it held as lost (`AckIncomplete`).
//!
//! **A target on this host** (`domain.rs`): the origin reads or runs the atomic on
//! the target's receive memory itself, as on one host (`memchan-shm`'s `rma.rs`),
//! once the sticky rule has its earlier writes to the target applied
//! (`Near::target`), with the pages' `remote_read` bits read on every operation and
//! the kernel's rights as the opening of the memory to write. An origin that may
//! only read the segment cannot open it so, and asks through the hub.
//!
//! This is the node side: the origin's [`Rma`] here, the target's serving in
//! `rma/serve.rs`, their shared bookkeeping in `rma/table.rs`; the payloads are
//! `memchan_link::proto::rma`, the hub's checks and forwarding `memchan-hub`'s `rma.rs`.

pub(crate) mod serve;
pub(crate) mod table;

use crate::domain::{Near, Peer};
use crate::state::{garbled, Reading, Shared};
use memchan_core::rma::{self, AtomicOp, Completion, PeerMemory, Pending, GET_CHUNK};
use memchan_core::{Error, NodeId, Result, MAX_NODES};
use memchan_link::proto::reply::{self, Refusal};
use memchan_link::proto::rma::{Request, What};
use memchan_link::proto::SegInfo;
use memchan_link::wire::Kind;
use std::cell::Ref;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use table::RmaState;

impl RmaState {
    /// Request `id` was sent: kept for a switch, if this node has a standby hub and
    /// has not switched yet (one switch per node).
    fn in_flight(&self, sh: &Shared, id: u32, payload: &[u8]) {
        if sh.standby.is_some() && !self.asked_again.load(Ordering::Acquire) {
            self.unanswered
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id, payload.to_vec());
        }
    }

    /// Request `id` has its answer (kept only with a standby: nothing to forget
    /// otherwise, and no lock on a node without one).
    fn answered_here(&self, sh: &Shared, id: u32) {
        if sh.standby.is_some() && !self.asked_again.load(Ordering::Acquire) {
            self.unanswered
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
        }
    }

    /// After a switch, sends every request still unanswered to the standby, once (by
    /// whichever waiting thread sees the switch first). The target applies an atomic
    /// asked twice once and answers it again ([`Answered`]); a get is read again. An
    /// answer that then comes twice leaves its second copy unclaimed.
    fn ask_again_after_switch(&self, sh: &Shared) {
        if sh.standby.is_none() || self.asked_again.load(Ordering::Acquire) {
            return;
        }
        if !sh.rail_switched() {
            return;
        }
        let mut u = self.unanswered.lock().unwrap_or_else(|e| e.into_inner());
        if self.asked_again.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut all: Vec<(u32, Vec<u8>)> = u.drain().collect();
        drop(u);
        // In the order they were first sent (ids grow, wrapping aside).
        all.sort_unstable_by_key(|(id, _)| *id);
        tracing::info!(
            node = sh.me.0,
            requests = all.len(),
            "asking unanswered remote accesses again at the standby hub"
        );
        for (id, payload) in all {
            if let Err(e) = sh.send(Kind::RmaRequest, &[&payload]) {
                tracing::warn!(node = sh.me.0, request = id, error = %e, "could not ask a remote access again at the standby hub");
            }
        }
    }
}

/// Waits until every non-blocking get of this node has its answer (the ack's part).
pub(crate) fn quiet(sh: &Shared) -> Result<()> {
    let ids = || {
        let o = sh.rma.outstanding.lock().unwrap_or_else(|e| e.into_inner());
        o.0.iter().copied().collect::<Vec<u32>>()
    };
    let waiting = ids();
    if waiting.is_empty() {
        return Ok(());
    }
    let _reading = Reading::new(sh);
    loop {
        let left = {
            let mut st = sh.lock();
            let mut o = sh.rma.outstanding.lock().unwrap_or_else(|e| e.into_inner());
            let (live, abandoned) = &mut *o;
            abandoned.retain(|id| {
                if st.responses.remove(id).is_some() {
                    live.remove(id);
                    return false;
                }
                true
            });
            waiting
                .iter()
                .filter(|id| live.contains(id) && !st.responses.contains_key(id))
                .count()
        };
        if left == 0 {
            return Ok(());
        }
        sh.check()?;
        sh.rma.ask_again_after_switch(sh);
        sh.progress(Duration::from_millis(100));
    }
}

/// Remote reads and atomics on every node's copy of one segment of a hub cluster.
///
/// Not `Sync`: one thread at a time, like a tx mapping (its ways to the nodes of its
/// host are a private cache).
pub struct Rma {
    sh: Arc<Shared>,
    name: String,
    info: SegInfo,
    may_read: bool,
    may_write: bool,
    /// Each node that may be on this host, when this node is in a host domain.
    near: Option<Box<[Near]>>,
}

impl Rma {
    pub(crate) fn new(sh: Arc<Shared>, name: String, info: SegInfo) -> Result<Rma> {
        sh.check()?;
        let rights = (info.uid, info.gid, info.mode);
        let may_read = memchan_core::perm::allows((sh.uid, sh.gid), rights, 4);
        let may_write = memchan_core::perm::allows((sh.uid, sh.gid), rights, 6);
        let near = sh.domain.is_some().then(|| {
            (0..MAX_NODES)
                .map(|i| Near::new(NodeId(i as u16)))
                .collect()
        });
        Ok(Rma {
            sh,
            name,
            info,
            may_read,
            may_write,
            near,
        })
    }

    /// `node`'s receive memory if it is on this host (`Near::target`; `None`:
    /// through the hub, as for this node itself).
    fn near(&self, node: NodeId) -> Result<Option<Ref<'_, Peer>>> {
        match self.near.as_ref().and_then(|n| n.get(node.index())) {
            Some(n) if node != self.sh.me => n.target(&self.sh, &self.info),
            _ => Ok(None),
        }
    }

    /// The refusal of `offset..offset + len` of a target on this host unless every
    /// page of it allows remote access.
    fn open_to_me(&self, p: &Peer, node: NodeId, offset: usize, len: usize) -> Result<()> {
        p.mem
            .remote_access(offset, len)
            .map_err(|at| rma::remote_read_off(&self.name, node, at))
    }

    /// A get of `buf.len()` bytes (at least one) from a target on this host.
    fn load_near(&self, p: &Peer, node: NodeId, offset: usize, buf: &mut [u8]) -> Result<()> {
        self.open_to_me(p, node, offset, buf.len())?;
        p.mem.load(offset, buf);
        Ok(())
    }

    fn size(&self) -> usize {
        self.info.size as usize
    }

    /// The caller's right to `what` (the hub checks it again).
    fn allowed(&self, what: What) -> Result<()> {
        let (want, op) = what.right();
        let ok = if want == 4 {
            self.may_read
        } else {
            self.may_write
        };
        if ok {
            return Ok(());
        }
        Err(Error::PermissionDenied {
            segment: self.name.clone(),
            op,
            uid: self.info.uid,
            gid: self.info.gid,
            mode: self.info.mode,
            caller_uid: self.sh.uid,
        })
    }

    /// Sends one request; its id.
    fn start(&self, node: NodeId, offset: usize, what: What) -> Result<u32> {
        let req = loop {
            let id = self.sh.next_req.fetch_add(1, Ordering::Relaxed);
            if id != memchan_link::proto::NO_REQUEST {
                break id;
            }
        };
        let r = Request {
            req,
            seg: self.info.seg,
            gen: self.info.gen,
            target: node,
            offset: offset as u64,
            what,
        };
        let payload = r.put();
        if self.sh.send_direct_rma(node, req, &payload)? {
            return Ok(req);
        }
        self.sh.rma.in_flight(&self.sh, req, &payload);
        self.sh.send(Kind::RmaRequest, &[&payload])?;
        Ok(req)
    }

    /// Waits for the answer to request `id` of `len` bytes.
    fn finish(&self, node: NodeId, id: u32, len: usize) -> Result<Vec<u8>> {
        finish(&self.sh, &self.name, node, id, len)
    }

    /// Copies `buf.len()` bytes of `node`'s copy at `offset`: one request per
    /// [`GET_CHUNK`], all sent before the first answer is awaited.
    pub fn get(&self, node: NodeId, offset: usize, buf: &mut [u8]) -> Result<()> {
        rma::check(&self.name, self.size(), offset, buf.len(), false)?;
        self.allowed(What::Get(0))?;
        if !buf.is_empty() {
            if let Some(p) = self.near(node)? {
                return self.load_near(&p, node, offset, buf);
            }
        }
        let mut ids = Vec::new();
        for (i, chunk) in buf.chunks(GET_CHUNK).enumerate() {
            let what = What::Get(chunk.len() as u32);
            ids.push(self.start(node, offset + i * GET_CHUNK, what)?);
        }
        let mut first_err = None;
        for (id, chunk) in ids.into_iter().zip(buf.chunks_mut(GET_CHUNK)) {
            match self.finish(node, id, chunk.len()) {
                Ok(b) => chunk.copy_from_slice(&b),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// An aligned 8-byte word of `node`'s copy (one atomic load at the target).
    pub fn get_u64(&self, node: NodeId, offset: usize) -> Result<u64> {
        rma::check(&self.name, self.size(), offset, 8, true)?;
        let mut b = [0u8; 8];
        self.get(node, offset, &mut b)?;
        Ok(u64::from_ne_bytes(b))
    }

    /// An aligned 4-byte word of `node`'s copy.
    pub fn get_u32(&self, node: NodeId, offset: usize) -> Result<u32> {
        rma::check(&self.name, self.size(), offset, 4, true)?;
        let mut b = [0u8; 4];
        self.get(node, offset, &mut b)?;
        Ok(u32::from_ne_bytes(b))
    }

    /// Starts a get; `ack()` or [`Pending::take`] completes it.
    pub fn get_nbi(&self, node: NodeId, offset: usize, len: usize) -> Result<Pending> {
        rma::check(&self.name, self.size(), offset, len, false)?;
        self.allowed(What::Get(0))?;
        if len > 0 {
            if let Some(p) = self.near(node)? {
                let mut buf = vec![0; len];
                let r = self.load_near(&p, node, offset, &mut buf);
                return Ok(Pending::ready(r.map(|()| buf)));
            }
        }
        let mut parts = Vec::new();
        for start in (0..len).step_by(GET_CHUNK) {
            let n = (len - start).min(GET_CHUNK);
            let id = self.start(node, offset + start, What::Get(n as u32))?;
            self.sh
                .rma
                .outstanding
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .0
                .insert(id);
            parts.push((id, n));
        }
        Ok(Pending::later(Box::new(NbGet {
            sh: self.sh.clone(),
            name: self.name.clone(),
            node,
            parts,
        })))
    }

    /// Runs `op` at the target on the aligned word of `width` bytes; the old value.
    fn atomic(&self, node: NodeId, offset: usize, width: u8, op: AtomicOp) -> Result<u64> {
        rma::check(&self.name, self.size(), offset, usize::from(width), true)?;
        let what = What::Atomic(width, op);
        self.allowed(what)?;
        if let Some(p) = self.near(node)? {
            self.open_to_me(&p, node, offset, usize::from(width))?;
            // In bounds and aligned (`rma::check` against the size `p` was opened with).
            return Ok(if width == 8 {
                rma::apply_u64(p.mem.word_u64(offset).expect("checked"), op)
            } else {
                u64::from(rma::apply_u32(p.mem.word_u32(offset).expect("checked"), op))
            });
        }
        let id = self.start(node, offset, what)?;
        let b = self.finish(node, id, 8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    /// Runs `op` on the aligned 8-byte word at the target; the old value.
    pub fn atomic_u64(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u64> {
        self.atomic(node, offset, 8, op)
    }

    /// As [`atomic_u64`](Self::atomic_u64) on a 4-byte word.
    pub fn atomic_u32(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u32> {
        self.atomic(node, offset, 4, op).map(|v| v as u32)
    }

    /// Whether `node` (another node) is on this host, mapping the segment in memory
    /// this process may write ([`peer_memory`](Self::peer_memory) can then give it);
    /// maps nothing.
    pub fn shares_memory_with(&self, node: NodeId) -> bool {
        node != self.sh.me
            && self.sh.domain.as_ref().is_some_and(|d| {
                let st = self.sh.lock();
                st.members.contains(node)
                    && st.neighbours.contains(node)
                    && d.writable(node, self.info.seg, self.info.gen)
            })
    }

    /// `node`'s copy of the whole segment for this process's own loads and stores,
    /// when `node` is on this host (OpenSHMEM's `shmem_ptr`): the rights of an atomic
    /// and `remote_read` on every page, checked now.
    ///
    /// # Errors
    /// `Unsupported` for a node this process cannot reach in memory (on another host,
    /// this node itself, or not mapping the segment); `PermissionDenied` (op
    /// `atomic`), `RemoteReadOff`, `Isolated`.
    pub fn peer_memory(&self, node: NodeId) -> Result<PeerMemory> {
        self.allowed(What::Atomic(8, AtomicOp::Add(0)))?;
        let Some(p) = self.near(node)? else {
            return Err(Error::Unsupported(
                "load/store access to a node outside this host's domain",
            ));
        };
        self.open_to_me(&p, node, 0, self.size())?;
        let keep = p.mem.clone();
        // SAFETY: the data of a `size`-byte segment's receive memory, mapped
        // read-write by the object `keep` holds.
        Ok(unsafe { PeerMemory::new(keep.data(), self.size(), keep) })
    }
}

/// Waits (reading the link, while the hub is alive) for the answer to `id`, which
/// must be `len` bytes, and turns a refusal into its error.
fn finish(sh: &Shared, segment: &str, node: NodeId, id: u32, len: usize) -> Result<Vec<u8>> {
    let (status, body) = {
        let _reading = Reading::new(sh);
        loop {
            if let Some(r) = sh.lock().responses.remove(&id) {
                break r;
            }
            sh.check()?;
            sh.rma.ask_again_after_switch(sh);
            sh.progress(Duration::from_millis(100));
        }
    };
    sh.rma.answered_here(sh, id);
    // The refusals that name the segment get its name, which only the origin knows.
    match reply::answer(status, body).map_err(garbled)? {
        Ok(body) if body.len() == len => Ok(body),
        Ok(body) => Err(Error::Invalid {
            what: "remote access answer",
            why: format!(
                "{node} answered a remote access with {} bytes, not {len}",
                body.len()
            ),
        }),
        Err(Refusal::NotMapped(node)) => Err(Error::NotMapped {
            segment: segment.to_string(),
            node,
        }),
        Err(Refusal::RemoteReadOff { node, offset }) => {
            Err(rma::remote_read_off(segment, node, offset as usize))
        }
        Err(Refusal::SegmentFreed(_)) => Err(Error::SegmentFreed {
            segment: segment.to_string(),
        }),
        Err(r) => Err(r.into_error()),
    }
}

/// A non-blocking get through the hub: its requests' ids.
struct NbGet {
    sh: Arc<Shared>,
    name: String,
    node: NodeId,
    parts: Vec<(u32, usize)>,
}

impl Completion for NbGet {
    fn complete(mut self: Box<Self>) -> Result<Vec<u8>> {
        let parts = std::mem::take(&mut self.parts);
        let mut out = Vec::new();
        let mut first_err = None;
        for (i, &(id, n)) in parts.iter().enumerate() {
            let r = finish(&self.sh, &self.name, self.node, id, n);
            self.sh
                .rma
                .outstanding
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .0
                .remove(&id);
            match r {
                Ok(b) => out.extend_from_slice(&b),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
            if first_err.is_some() {
                // The rest are abandoned: their answers are thrown away.
                self.parts = parts[i + 1..].to_vec();
                break;
            }
        }
        first_err.map_or(Ok(out), Err)
    }
}

impl Drop for NbGet {
    fn drop(&mut self) {
        let mut o = self
            .sh
            .rma
            .outstanding
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for &(id, _) in &self.parts {
            o.1.insert(id);
        }
    }
}

impl memchan_core::transport::RmaOps for Rma {
    fn get(&self, node: NodeId, offset: usize, buf: &mut [u8]) -> Result<()> {
        Rma::get(self, node, offset, buf)
    }
    fn get_u64(&self, node: NodeId, offset: usize) -> Result<u64> {
        Rma::get_u64(self, node, offset)
    }
    fn get_u32(&self, node: NodeId, offset: usize) -> Result<u32> {
        Rma::get_u32(self, node, offset)
    }
    fn get_nbi(&self, node: NodeId, offset: usize, len: usize) -> Result<Pending> {
        Rma::get_nbi(self, node, offset, len)
    }
    fn atomic_u64(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u64> {
        Rma::atomic_u64(self, node, offset, op)
    }
    fn atomic_u32(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u32> {
        Rma::atomic_u32(self, node, offset, op)
    }
    fn peer_memory(&self, node: NodeId) -> Result<PeerMemory> {
        Rma::peer_memory(self, node)
    }
    fn shares_memory_with(&self, node: NodeId) -> bool {
        Rma::shares_memory_with(self, node)
    }
}
