//! Dual rail, the active hub's side of the copy (synchronous replication of the
//! control plane). A standby keeps its [`ROLE_MIRROR`](memchan_link::proto::ROLE_MIRROR)
//! connection open; the active sends it the whole tables (they are small) when it
//! connects, every heartbeat, and whenever a member, segment, rx set or group changes,
//! and then waits for the standby's `MirrorReceipt` before it answers the node whose
//! request made the change ([`Shared::replicate`], called under the hub lock). So
//! whatever a node was told of is known to every standby in the mirror set, and a
//! switch loses no segment made or mapped in the last heartbeat before it.
//!
//! Bounded: a standby that does not confirm within a quarter of the failure timeout
//! (the hub lock is held meanwhile, and the nodes' links must not go silent) is
//! dropped from the mirror set and logged, so a dead standby never blocks the
//! cluster. It is stale from then on, until its mirror thread connects again (every
//! heartbeat) and gets the whole tables; a takeover by a stale standby refuses the
//! writes to segments it does not know (the writer's next `ack` fails) rather than
//! lose them silently.

pub(crate) mod set;

use crate::standby::copy::{MemberCopy, SegCopy, Tables};
use crate::state::{Shared, State};
use memchan_link::wire::{self, Decoder, FrameKey};
use set::{Mirror, MirrorError};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Instant;

impl Shared {
    /// A standby's mirror connection whose join the gate verified: it joins the
    /// mirror set and gets the tables at once (in a thread of its own, not to hold the
    /// gate up for its receipt).
    pub(super) fn add_mirror(
        self: &Arc<Self>,
        sock: TcpStream,
        key: FrameKey,
        dec: Decoder,
        peer: SocketAddr,
    ) {
        let sh = self.clone();
        let spawned = std::thread::Builder::new()
            .name("memchan-hub-mirror".into())
            .spawn(move || {
                if let Err(e) = sock.set_nonblocking(false) {
                    tracing::warn!(%peer, error = %e, "standby's mirror connection dropped");
                    return;
                }
                let _ = sock.set_nodelay(true);
                let mut st = sh.lock();
                st.mirrors.list.push(Mirror {
                    sock,
                    peer,
                    key,
                    dec,
                    counter: 1,
                });
                tracing::info!(%peer, "a standby mirrors the tables");
                sh.replicate(&mut st);
            });
        if let Err(e) = spawned {
            tracing::warn!(%peer, error = %e, "no thread to take a standby's mirror connection");
        }
    }

    /// Sends the tables to every standby and waits for their receipts, dropping a
    /// standby that does not confirm in time (see the module doc).
    pub(super) fn replicate(&self, st: &mut State) {
        // A hub being stopped isolates its nodes as their links close: those are not
        // the cluster's changes, and the standby must still know them.
        if st.mirrors.list.is_empty() || self.stop.load(Relaxed) {
            return;
        }
        st.mirrors.version += 1;
        let mut tables = Tables::of(st, self.cfg.rail);
        tables.version = st.mirrors.version;
        let json = serde_json::to_vec(&tables).unwrap_or_default();
        if json.len() > wire::MAX_PAYLOAD {
            tracing::error!(
                bytes = json.len(),
                "the tables exceed a frame: the standbys' copies are not updated"
            );
            return;
        }
        let deadline = Instant::now() + self.cfg.failure_timeout / 4;
        let version = tables.version;
        let mut list = std::mem::take(&mut st.mirrors.list);
        // Sent to all first, so the standbys' round trips overlap.
        list.retain_mut(|m| {
            m.send(&json, deadline)
                .map_err(|e| drop_mirror(m, &e))
                .is_ok()
        });
        list.retain_mut(|m| {
            m.receipt(version, deadline)
                .map_err(|e| drop_mirror(m, &e))
                .is_ok()
        });
        st.mirrors.list = list;
    }
}

fn drop_mirror(m: &Mirror, why: &MirrorError) {
    tracing::warn!(
        standby = %m.peer,
        reason = %why,
        "standby dropped from the mirror set: its copy of the tables is stale until it connects again"
    );
    let _ = m.sock.shutdown(std::net::Shutdown::Both);
}

impl Tables {
    /// The active hub's tables now (what a standby's mirror connection is answered).
    pub(super) fn of(st: &State, numbered: bool) -> Tables {
        Tables {
            numbered,
            version: 0,
            cluster: st.cluster.clone().unwrap_or_default(),
            page_size: st.page.map_or(0, |p| p.bytes() as u32),
            epoch: st.epoch,
            next_inc: st.next_inc,
            instance: st.instance,
            next_gen: st.next_gen,
            members: st
                .ports
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let p = p.as_ref()?;
                    Some(MemberCopy {
                        node: i as u16,
                        inc: p.inc,
                        host: p.host.clone(),
                        domain: p.domain,
                        pid: p.pid,
                        uid: p.uid,
                        gid: p.gid,
                        joined_epoch: p.joined_epoch,
                    })
                })
                .collect(),
            segs: st
                .segs
                .iter()
                .map(|s| {
                    s.as_ref().map(|s| SegCopy {
                        name: s.name.clone(),
                        gen: s.gen,
                        size: s.size as u64,
                        uid: s.uid,
                        gid: s.gid,
                        mode: s.mode,
                        rx: s.rx.iter().map(|n| n.0).collect(),
                        shadow: s.shadow.clone(),
                    })
                })
                .collect(),
            groups: st
                .groups
                .iter()
                .map(|(n, m)| (n.clone(), m.iter().map(|n| n.0).collect()))
                .collect(),
            barriers: st
                .barrier_counts
                .iter()
                .map(|(&scope, c)| (scope, c.to_vec()))
                .collect(),
            barrier_seen: st
                .barrier_seen
                .iter()
                .map(|(&scope, c)| (scope, c.to_vec()))
                .collect(),
        }
    }
}
