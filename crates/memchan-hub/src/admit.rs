//! Admission: a join the gate verified becomes a member (`Shared::enter` for a
//! remote node, with its link and its reading thread; `Shared::admit` for any node:
//! cluster and page size checked, an id and an incarnation given, barrier counts
//! level with the members, the tables mirrored, the `Joined` event sent).

use crate::reader::serve;
use crate::state::{Port, Shared, Sink};
use memchan_core::barrier;
use memchan_core::status::LinkCounters;
use memchan_core::{NodeId, PageSize};
use memchan_link::link::Link;
use memchan_link::proto::reply::JoinRefusal;
use memchan_link::proto::{event_kind, Join, Welcome};
use memchan_link::wire::{Decoder, FrameKey, Kind};
use std::collections::VecDeque;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;

impl Shared {
    /// A node whose join the gate verified: admitted with a link over `sock` (a
    /// duplicate of it; the gate closes its own) writing under `key` and reading with
    /// `dec` (the node's direction, holding what it sent past its Join), and a thread
    /// reading it, or the reason it is refused.
    pub(crate) fn enter(
        self: &Arc<Self>,
        sock: &TcpStream,
        key: FrameKey,
        dec: Decoder,
        join: &Join,
        peer: SocketAddr,
    ) -> Result<(), JoinRefusal> {
        let cfg = self.cfg.node_link();
        let link = sock
            .try_clone()
            .and_then(|s| Link::new(s, key, dec, cfg))
            .map_err(|e| JoinRefusal::Handshake(format!("cannot set up the link: {e}")))?;
        let link = Arc::new(link);
        let welcome = self.admit(join, Sink::Remote(link.clone()), peer.to_string())?;
        let (node, inc) = (welcome.node, welcome.incarnation);
        tracing::info!(
            node = node.0,
            incarnation = inc,
            %peer,
            host = %join.host,
            pid = join.pid,
            epoch = welcome.epoch,
            "joined"
        );
        let sh = self.clone();
        let reader = std::thread::Builder::new()
            .name("memchan-hub-link".into())
            .spawn(move || serve(sh, node, inc, link));
        if let Err(e) = reader {
            let why = format!("no thread to read its link: {e}");
            self.isolate(&mut self.lock(), node, inc, &why);
        }
        Ok(())
    }

    pub(crate) fn admit(&self, j: &Join, sink: Sink, addr: String) -> Result<Welcome, JoinRefusal> {
        let mut st = self.lock();
        if st.standby.as_ref().is_some_and(|s| s.refuses_joins()) {
            return Err(JoinRefusal::Standby);
        }
        match &st.cluster {
            Some(c) if *c != j.cluster => {
                return Err(JoinRefusal::OtherCluster {
                    serves: c.clone(),
                    asked: j.cluster.clone(),
                })
            }
            Some(_) => {}
            None => st.cluster = Some(j.cluster.clone()),
        }
        let page = match (st.page, PageSize::from_bytes(j.page_size as usize)) {
            (Some(p), Some(want)) if p != want => {
                return Err(JoinRefusal::PageSize {
                    existing: p.bytes() as u32,
                    requested: want.bytes() as u32,
                })
            }
            (Some(p), _) => p,
            (None, want) => *st.page.insert(want.unwrap_or(PageSize::K4)),
        };
        let Some(id) = st.ports.iter().position(|p| p.is_none()) else {
            return Err(JoinRefusal::NodeTableFull);
        };
        let node = NodeId(id as u16);
        st.next_inc += 1;
        st.epoch += 1;
        st.joins += 1;
        let inc = st.next_inc;
        st.ports[id] = Some(Port {
            inc,
            sink,
            host: j.host.clone(),
            domain: j.domain,
            pid: j.pid,
            uid: j.uid,
            gid: j.gid,
            addr,
            joined_epoch: st.epoch,
            node_counters: LinkCounters::default(),
            inflight: VecDeque::new(),
            owed: VecDeque::new(),
            acks_seen: 0,
            clock_bound_ns: None,
            handled: 0,
            direct: None,
        });
        let welcome = Welcome {
            node,
            incarnation: inc,
            epoch: st.epoch,
            page_size: page.bytes() as u32,
            heartbeat_ms: self.cfg.heartbeat.as_millis() as u32,
            timeout_ms: self.cfg.failure_timeout.as_millis() as u32,
            members: st.members(),
            instance: st.instance,
            neighbours: st.neighbours(node, &j.domain),
        };
        // Level with the live members before the standby's copy is taken.
        let mut live = st.members();
        live.remove(node);
        for counts in st.barrier_counts.values_mut() {
            counts[id] = barrier::level(live.iter().map(|m| counts[m.index()]));
        }
        // Its own numbering of arrivals starts at its join.
        for seen in st.barrier_seen.values_mut() {
            seen[id] = 0;
        }
        self.replicate(&mut st);
        if let Some(Sink::Remote(l)) = st.ports[id].as_ref().map(|p| &p.sink) {
            l.send_control(Kind::Welcome, &welcome.put());
        }
        self.refresh_links(&st);
        st.event(node, inc, event_kind::JOINED);
        Ok(welcome)
    }
}
