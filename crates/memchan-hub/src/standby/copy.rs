//! A standby's state (in the hub's `State`): its copy of the active hub's tables
//! ([`Tables`], checked before use), where it is ([`Phase`]), the nodes that resumed
//! here and the takeover's replay ([`Standby`]).

use memchan_core::status::RailStatus;
use memchan_core::{validate, NodeId, NodeSet, PageSize, MAX_GROUPS, MAX_NODES};
use memchan_link::rail::Report;
use memchan_link::wire::Kind;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

/// The tables a standby copies from the active hub.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Tables {
    /// Whether the active hub numbers its order (`HubConfig::rail`): without it the
    /// nodes' reports say nothing of what they applied, and a takeover would apply
    /// packets twice.
    #[serde(default)]
    pub(crate) numbered: bool,
    /// Counts the copies the active sent; the standby confirms it (`mirror.rs`).
    #[serde(default)]
    pub(crate) version: u64,
    pub(crate) cluster: String,
    pub(crate) page_size: u32,
    pub(crate) epoch: u64,
    pub(crate) next_inc: u64,
    /// The active's instance, which this hub takes over with the tables.
    #[serde(default)]
    pub(crate) instance: u64,
    pub(crate) next_gen: u32,
    pub(crate) members: Vec<MemberCopy>,
    /// By segment id (`None`: a free slot).
    pub(crate) segs: Vec<Option<SegCopy>>,
    pub(crate) groups: Vec<(String, Vec<u16>)>,
    /// Barrier arrivals per scope: (scope, counts by node id).
    pub(crate) barriers: Vec<(u16, Vec<u64>)>,
    /// Per scope, the number of each node's last arrival counted (taken with the
    /// counts, so the two agree).
    #[serde(default)]
    pub(crate) barrier_seen: Vec<(u16, Vec<u64>)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MemberCopy {
    pub(crate) node: u16,
    pub(crate) inc: u64,
    pub(crate) host: String,
    #[serde(default)]
    pub(crate) domain: memchan_link::proto::DomainId,
    pub(crate) pid: u32,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) joined_epoch: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SegCopy {
    pub(crate) name: String,
    pub(crate) gen: u32,
    pub(crate) size: u64,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) mode: u32,
    pub(crate) rx: Vec<u16>,
    pub(crate) shadow: Option<Vec<u8>>,
}

impl Tables {
    /// Whether a copy that came over the wire is one a hub could hold (it comes from
    /// a holder of the cluster key, and is checked all the same before use).
    /// The reason it is not, if it is not.
    pub(super) fn check(&self) -> Result<(), String> {
        let bad = |why: String| Err(why);
        if !self.numbered {
            return bad("the active hub does not number its order (run it with --rail)".into());
        }
        if self.members.is_empty() {
            // No node joined the active hub yet: nothing to take over.
            return Ok(());
        }
        if let Err(e) = validate::cluster_name(&self.cluster) {
            return bad(e.to_string());
        }
        if PageSize::from_bytes(self.page_size as usize).is_none() {
            return bad(format!("page size {}", self.page_size));
        }
        let node_ok = |n: u16| usize::from(n) < MAX_NODES;
        let mut seen = NodeSet::EMPTY;
        for m in &self.members {
            if !node_ok(m.node) || seen.contains(NodeId(m.node)) {
                return bad(format!("member {} out of range or twice", m.node));
            }
            seen.insert(NodeId(m.node));
        }
        if self.segs.len() > validate::MAX_SEGMENTS || self.groups.len() > MAX_GROUPS {
            return bad("more segments or groups than a hub holds".into());
        }
        for s in self.segs.iter().flatten() {
            if let Err(e) = validate::segment_size(s.size) {
                return bad(e.to_string());
            }
            let shadow_ok = s.shadow.as_ref().is_none_or(|b| b.len() as u64 == s.size);
            if !shadow_ok || !s.rx.iter().all(|&n| node_ok(n)) {
                return bad(format!("segment `{}` inconsistent", s.name));
            }
        }
        let groups_ok = self
            .groups
            .iter()
            .all(|(_, m)| m.iter().all(|&n| node_ok(n)));
        let barriers_ok = self
            .barriers
            .iter()
            .chain(&self.barrier_seen)
            .all(|(_, c)| c.len() == MAX_NODES);
        if !groups_ok || !barriers_ok {
            return bad("a group or barrier count out of range".into());
        }
        Ok(())
    }

    pub(super) fn member(&self, node: u16) -> Option<&MemberCopy> {
        self.members.iter().find(|m| m.node == node)
    }
}

pub(super) fn set_of(ids: &[u16]) -> NodeSet {
    ids.iter().map(|&n| NodeId(n)).collect()
}

/// Where a standby is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Phase {
    /// Copying the active's tables.
    Mirroring,
    /// Nodes are resuming; the first came at this instant.
    Gathering(Instant),
    /// The plan is made and told; the held frames are being handled in its order, a
    /// slice at a time (`Standby::replay`), frames that arrive meanwhile held too.
    Replaying,
    /// The cluster's hub now.
    TookOver,
    /// The reports could not be planned; every resumed node was isolated.
    Failed(String),
}

/// A node that resumed its link here, until the takeover.
pub(super) struct Resumed {
    pub(super) report: Report,
    pub(super) rx: Vec<(u32, u32)>,
    /// Its barrier arrivals per scope (`Resume::barriers`).
    pub(super) barriers: Vec<(u16, u64)>,
    /// Its copies of the lock pages it maps rx (`Resume::locks`).
    pub(super) locks: Vec<(u32, u32, Vec<u8>)>,
    /// The last held seq its link must resend before the plan can run (0: none).
    pub(super) need: u64,
    /// Reliable frames its link delivered meanwhile, in seq order.
    pub(super) held: VecDeque<(u64, Kind, Vec<u8>)>,
    /// The last seq received.
    pub(super) got: u64,
}

/// A standby hub's state (in the hub's `State`).
pub(crate) struct Standby {
    pub(super) active: String,
    pub(super) tables: Option<Tables>,
    pub(super) mirrored_at: Option<Instant>,
    pub(super) mirror_error: String,
    pub(super) phase: Phase,
    pub(super) resumed: HashMap<u16, Resumed>,
    pub(super) replanned: u64,
    /// The takeover's order, while `Phase::Replaying`.
    pub(super) replay: Option<Replay>,
    /// The thread that handles the held frames (`replay_loop`), woken at the takeover.
    pub(super) replayer: Option<std::thread::Thread>,
}

/// A takeover's replay: the plan's order of held packets and how far it got.
pub(super) struct Replay {
    pub(super) order: Vec<(u16, u64)>,
    pub(super) next_gseq: u64,
    /// The next place in `order`.
    pub(super) at: usize,
    /// The copy taken over (its members that did not resume are failed at the end).
    pub(super) tables: Tables,
    pub(super) nodes: Vec<u16>,
    /// Per lock page, the bid slots some resumed node's copy showed taken: those of
    /// nodes that are not members after the takeover are cleared at its end.
    pub(super) bids: Vec<(usize, NodeSet)>,
    pub(super) started: Instant,
}

impl Standby {
    pub(crate) fn new(active: String) -> Standby {
        Standby {
            active,
            tables: None,
            mirrored_at: None,
            mirror_error: String::new(),
            phase: Phase::Mirroring,
            resumed: HashMap::new(),
            replanned: 0,
            replay: None,
            replayer: None,
        }
    }

    /// Whether reliable frames are held for the plan rather than handled.
    pub(crate) fn holding(&self) -> bool {
        matches!(self.phase, Phase::Gathering(_) | Phase::Replaying)
    }

    /// Whether ordinary joins are refused (a standby serves nodes once it took over).
    pub(crate) fn refuses_joins(&self) -> bool {
        self.phase != Phase::TookOver
    }

    /// Holds a frame a resumed node sent during the gathering.
    pub(crate) fn hold(&mut self, n: NodeId, seq: u64, kind: Kind, payload: &[u8]) {
        if let Some(r) = self.resumed.get_mut(&n.0) {
            r.got = r.got.max(seq);
            r.held.push_back((seq, kind, payload.to_vec()));
        }
    }

    /// A resumed node left (isolated before the takeover): it takes no part.
    pub(crate) fn forget(&mut self, n: NodeId) {
        self.resumed.remove(&n.0);
    }

    pub(crate) fn status(&self, gseq: u64) -> RailStatus {
        let mut resumed: Vec<u16> = self.resumed.keys().copied().collect();
        resumed.sort_unstable();
        RailStatus {
            role: match &self.phase {
                Phase::Mirroring => "standby".into(),
                Phase::Gathering(_) => "gathering".into(),
                Phase::Replaying => "replaying".into(),
                Phase::TookOver => "took over".into(),
                Phase::Failed(why) => format!("failed: {why}"),
            },
            active: self.active.clone(),
            mirrored_ms_ago: self.mirrored_at.map(|t| t.elapsed().as_millis() as u64),
            mirror_error: self.mirror_error.clone(),
            gseq,
            resumed,
            replanned: self.replanned,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy() -> Tables {
        Tables {
            numbered: true,
            version: 1,
            cluster: "c".into(),
            page_size: 4096,
            epoch: 3,
            next_inc: 10,
            instance: 1,
            next_gen: 2,
            members: vec![MemberCopy {
                node: 1,
                inc: 9,
                host: "h".into(),
                domain: [7; 16],
                pid: 1,
                uid: 0,
                gid: 0,
                joined_epoch: 2,
            }],
            segs: vec![Some(SegCopy {
                name: "_lock.l".into(),
                gen: 1,
                size: 4096,
                uid: 0,
                gid: 0,
                mode: 0o666,
                rx: vec![1],
                shadow: Some(vec![0; 4096]),
            })],
            groups: vec![("g".into(), vec![1])],
            barriers: vec![(u16::MAX, vec![0; MAX_NODES])],
            barrier_seen: vec![(u16::MAX, vec![0; MAX_NODES])],
        }
    }

    #[test]
    fn a_copy_of_the_tables_is_checked_before_use() {
        assert!(copy().check().is_ok());
        let bad: [fn(&mut Tables); 7] = [
            |t| t.members[0].node = MAX_NODES as u16,
            |t| t.members.push(t.members[0].clone()),
            |t| t.segs[0].as_mut().unwrap().shadow = Some(vec![0; 10]),
            |t| t.segs[0].as_mut().unwrap().rx = vec![u16::MAX],
            |t| t.groups[0].1 = vec![999],
            |t| t.barriers[0].1.truncate(3),
            |t| t.barrier_seen[0].1.truncate(3),
        ];
        for (i, spoil) in bad.iter().enumerate() {
            let mut t = copy();
            spoil(&mut t);
            assert!(t.check().is_err(), "spoiled copy {i} accepted");
        }
        // Nothing joined yet: nothing to check, nothing to take over.
        let empty = Tables {
            numbered: true,
            ..Tables::default()
        };
        assert!(empty.check().is_ok());
        assert!(
            Tables::default().check().is_err(),
            "an active hub without --rail"
        );
    }
}
