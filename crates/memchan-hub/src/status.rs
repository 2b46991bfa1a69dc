//! The hub's report for `memchan status` (and the observer role of its gate):
//! members with their links' counters, segments, groups, locks, the dual rail.

use crate::state::{Shared, Sink};
use memchan_core::status::{
    ClusterStatus, GroupStatus, LinkCounters, LockStatus, MemberStatus, SegmentStatus,
};
use memchan_core::{validate, MAX_NODES};
use memchan_link::proto::clock;
use memchan_link::wire;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

impl Shared {
    pub(crate) fn status(&self) -> ClusterStatus {
        let st = self.lock();
        let mut segments = Vec::new();
        let mut locks = Vec::new();
        for seg in st.segs.iter().flatten() {
            match (&seg.shadow, seg.name.strip_prefix(validate::LOCK_PREFIX)) {
                (Some(page), Some(name)) => locks.push(LockStatus {
                    name: name.to_string(),
                    bidders: (0..page.len().min(MAX_NODES))
                        .filter(|&i| page[i] != 0)
                        .map(|i| i as u16)
                        .collect(),
                }),
                _ => segments.push(SegmentStatus {
                    name: seg.name.clone(),
                    size: seg.size as u64,
                    uid: seg.uid,
                    gid: seg.gid,
                    mode: seg.mode,
                    rx: seg.rx.iter().map(|n| n.0).collect(),
                }),
            }
        }
        ClusterStatus {
            cluster: st.cluster.clone().unwrap_or_default(),
            transport: "hub".into(),
            listen: self.addr.to_string(),
            protocol: wire::VERSION,
            epoch: st.epoch,
            page_size: st.page.map_or(0, |p| p.bytes() as u32),
            keyed: self.cfg.keyed,
            members: st
                .ports
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let p = p.as_ref()?;
                    let (hub_side, heard) = match &p.sink {
                        Sink::Remote(l) => (l.counters(), l.silence()),
                        Sink::Local(_) => (LinkCounters::default(), Duration::ZERO),
                    };
                    Some(MemberStatus {
                        node: i as u16,
                        incarnation: p.inc,
                        host: p.host.clone(),
                        pid: p.pid,
                        uid: p.uid,
                        addr: p.addr.clone(),
                        joined_epoch: p.joined_epoch,
                        barriers: st.barrier_counts.get(&u16::MAX).map_or(0, |c| c[i]),
                        last_heard_ms: heard.as_millis() as u64,
                        hub_side,
                        node_side: p.node_counters.clone(),
                        // The hub's own node reads the hub's clock.
                        clock_bound_ns: match p.sink {
                            Sink::Local(_) => Some(clock::read_cost()),
                            Sink::Remote(_) => p.clock_bound_ns,
                        },
                    })
                })
                .collect(),
            segments,
            groups: st
                .groups
                .iter()
                .enumerate()
                .map(|(i, (name, m))| GroupStatus {
                    id: i as u16,
                    name: name.clone(),
                    members: m.iter().map(|n| n.0).collect(),
                })
                .collect(),
            locks,
            isolations: st.isolations,
            joins: st.joins,
            refused: self.refused.load(Relaxed),
            uptime_s: self.started.elapsed().as_secs(),
            rail: self.rail_status(&st),
        }
    }
}
