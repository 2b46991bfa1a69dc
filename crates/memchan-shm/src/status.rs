//! `memchan status` on one host: a cluster's control block read without joining it
//! (mapped read-only), reported in the same [`ClusterStatus`] a hub gives.

use crate::clock::now_ns;
use crate::control::{load_name, load_set, node_state, seg_state, Control, MAGIC, VERSION};
use crate::local::{ctl_name, perm_name, rx_name};
use crate::perm::stat_owner;
use crate::rx::RxObject;
use crate::shm::{Open, ShmMap};
use memchan_core::status::{ClusterStatus, GroupStatus, LockStatus, MemberStatus, SegmentStatus};
use memchan_core::sync::Ordering;
use memchan_core::{validate, Error, PageSize, Result, MAX_NODES};

/// The status of the one-host cluster `cluster`.
///
/// # Errors
/// `Invalid` for a bad cluster name; `Os` (no such file) when no cluster of that name
/// runs on this host; `VersionMismatch` for a control block of another version.
pub fn query(cluster: &str) -> Result<ClusterStatus> {
    validate::cluster_name(cluster)?;
    let map = ShmMap::open(&ctl_name(cluster), Open::ReadOnly)?;
    if map.len() < std::mem::size_of::<Control>() {
        return Err(Error::Invalid {
            what: "cluster",
            why: format!("the control block of `{cluster}` is too short"),
        });
    }
    // SAFETY: the mapping holds a whole `Control` (checked above), is page-aligned,
    // lives as long as `map`, and is only read here.
    let c: &Control = unsafe { &*(map.ptr() as *const Control) };
    let h = &c.header;
    let version = h.version.load(Ordering::Acquire);
    if h.magic.load(Ordering::Acquire) != MAGIC || version != VERSION {
        return Err(Error::VersionMismatch {
            cluster: cluster.to_string(),
            found: version,
            expected: VERSION,
        });
    }
    let page_size = h.page_size.load(Ordering::Acquire);
    let page = PageSize::from_bytes(page_size as usize).unwrap_or_default();
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    let now = now_ns();
    let members = load_set(&h.members)
        .iter()
        .filter_map(|n| {
            let s = &c.nodes[n.index()];
            (s.state.load(Ordering::Acquire) == node_state::ALIVE).then(|| MemberStatus {
                node: n.0,
                incarnation: s.incarnation.load(Ordering::Relaxed),
                host: host.clone(),
                pid: s.pid.load(Ordering::Relaxed),
                uid: s.uid.load(Ordering::Relaxed),
                addr: "local".into(),
                joined_epoch: s.joined_epoch.load(Ordering::Relaxed),
                barriers: memchan_core::barrier::word::number(s.barrier[0].load(Ordering::Acquire)),
                last_heard_ms: now.saturating_sub(s.heartbeat_ns.load(Ordering::Relaxed))
                    / 1_000_000,
                ..MemberStatus::default()
            })
        })
        .collect();
    let mut segments = Vec::new();
    let mut locks = Vec::new();
    for (i, e) in c.segs.iter().enumerate() {
        if e.state.load(Ordering::Acquire) != seg_state::LIVE {
            continue;
        }
        let name = load_name(&e.name);
        let rx = load_set(&e.rx_set);
        let size = e.size.load(Ordering::Relaxed);
        match name.strip_prefix(validate::LOCK_PREFIX) {
            // A size memchan never writes is not used to reach a lock page's copy.
            Some(lock)
                if e.flags.load(Ordering::Relaxed) & seg_state::FLAG_LOCK != 0
                    && validate::segment_size(size).is_ok() =>
            {
                let gen = e.generation.load(Ordering::Acquire);
                locks.push(LockStatus {
                    name: lock.to_string(),
                    bidders: lock_bidders(c, cluster, page, i, gen, rx, size),
                });
            }
            _ => {
                // Owner and mode are the permission object's (the kernel's), not words
                // of the block; an entry without one is no segment anyone can map.
                let gen = e.generation.load(Ordering::Acquire);
                let Some((uid, gid, mode)) = stat_owner(&perm_name(cluster, i as u32, gen)) else {
                    continue;
                };
                segments.push(SegmentStatus {
                    name,
                    size,
                    uid,
                    gid,
                    mode,
                    rx: rx.iter().map(|n| n.0).collect(),
                })
            }
        }
    }
    let groups = c
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.state.load(Ordering::Acquire) == 1)
        .map(|(i, g)| GroupStatus {
            id: i as u16,
            name: load_name(&g.name),
            members: load_set(&g.members).iter().map(|n| n.0).collect(),
        })
        .collect();
    Ok(ClusterStatus {
        cluster: cluster.to_string(),
        transport: "shm".into(),
        protocol: VERSION as u16,
        epoch: h.epoch.load(Ordering::Acquire),
        page_size,
        members,
        segments,
        groups,
        locks,
        isolations: h.isolations.load(Ordering::Relaxed),
        joins: h.incarnations.load(Ordering::Relaxed),
        uptime_s: now.saturating_sub(h.created_ns.load(Ordering::Relaxed)) / 1_000_000_000,
        ..ClusterStatus::default()
    })
}

/// The nodes whose slot is set in a lock page, read from one member's copy (every
/// copy holds the same bytes once the ordered writes in flight have landed).
fn lock_bidders(
    c: &Control,
    cluster: &str,
    page: PageSize,
    seg: usize,
    gen: u32,
    rx: memchan_core::NodeSet,
    size: u64,
) -> Vec<u16> {
    let copy = rx.iter().find_map(|n| {
        let inc = c.nodes[n.index()].incarnation.load(Ordering::Relaxed);
        let name = rx_name(cluster, seg as u32, gen, n, inc);
        RxObject::open(&name, page, size as usize).ok()
    });
    let Some(copy) = copy else { return Vec::new() };
    (0..MAX_NODES.min(size as usize))
        .filter(|&i| {
            // SAFETY: `i < size`: inside the copy's data; shared bytes are read
            // atomically.
            let b = unsafe { &*(copy.data().add(i) as *const memchan_core::sync::AtomicU8) };
            b.load(Ordering::Acquire) != 0
        })
        .map(|i| i as u16)
        .collect()
}
