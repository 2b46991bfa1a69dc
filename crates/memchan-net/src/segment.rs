//! A segment of a hub cluster, as this node sees it: the hub's table entry (index,
//! generation, size, owner and mode), the permission check of `map_rx` / `map_tx`,
//! and the mappings made from it; the transport contract's `SegmentOps`.

use crate::mapping::RxMapping;
use crate::rx::RxMem;
use crate::state::Shared;
use crate::tx::TxMapping;
use memchan_core::transport::SegmentOps;
use memchan_core::{validate, Dest, Error, Result, RxAttrs, TxAttrs};
use memchan_link::proto::{Op, SegInfo};
use std::sync::Arc;

/// A segment of a hub cluster.
pub struct Segment {
    sh: Arc<Shared>,
    name: String,
    info: SegInfo,
}

impl Segment {
    /// The segment `name` the hub answered with `info`.
    pub(crate) fn new(sh: Arc<Shared>, name: String, info: SegInfo) -> Segment {
        Segment { sh, name, info }
    }

    /// Name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Size in bytes (whole pages).
    pub fn size(&self) -> usize {
        self.info.size as usize
    }

    /// Its creator's uid, its group and mode, as the hub recorded them (the uid and
    /// gid its creator gave at join).
    pub fn owner(&self) -> memchan_core::SegOwner {
        memchan_core::SegOwner {
            uid: self.info.uid,
            gid: self.info.gid,
            mode: self.info.mode,
        }
    }

    /// Maps the segment rx with default attributes.
    pub fn map_rx(&self) -> Result<RxMapping> {
        self.map_rx_with(RxAttrs::default())
    }

    /// Maps the segment rx; every page gets `attrs`.
    pub fn map_rx_with(&self, attrs: RxAttrs) -> Result<RxMapping> {
        self.check_perm(4, "map_rx")?;
        let shared = self.sh.domain.as_ref().map(|d| {
            let name = d.rx_name(self.info.seg, self.info.gen, self.sh.me);
            (name, self.info.mode, self.info.gid)
        });
        let mut mem = RxMem::new(self.info.gen, self.size(), self.sh.page, attrs, shared)?;
        mem.lock_page = self.name.starts_with(memchan_core::validate::LOCK_PREFIX);
        mem.owner = (
            self.name.clone(),
            self.info.uid,
            self.info.gid,
            self.info.mode,
        );
        let mem = Arc::new(mem);
        {
            // Every id that is not a member now is fenced off until it joins, under
            // the state lock that the membership events take to move the fences.
            let st = self.sh.lock();
            if self.sh.domain.is_some() || self.sh.direct.get().is_some() {
                for i in 0..memchan_core::MAX_NODES {
                    let n = memchan_core::NodeId(i as u16);
                    if !st.members.contains(n) && n != self.sh.me {
                        mem.set_fenced(n, true);
                    }
                }
            }
            let mut map = self.sh.rx.write().unwrap_or_else(|e| e.into_inner());
            if map.contains_key(&self.info.seg) {
                return Err(Error::Invalid {
                    what: "map_rx",
                    why: format!("segment `{}` is already mapped rx on this node", self.name),
                });
            }
            map.insert(self.info.seg, mem.clone());
        }
        let op = Op::MapRx {
            seg: self.info.seg,
            gen: self.info.gen,
        };
        if let Err(e) = self.sh.request(op) {
            self.sh
                .rx
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&self.info.seg);
            return Err(e);
        }
        Ok(RxMapping::new(
            self.sh.clone(),
            self.name.clone(),
            self.info.seg,
            mem,
        ))
    }

    /// Maps the segment tx towards `dest`.
    pub fn map_tx(&self, dest: Dest, attrs: TxAttrs) -> Result<TxMapping> {
        self.check_perm(2, "map_tx")?;
        self.sh.check()?;
        let members = self.sh.lock().members;
        validate::dest(dest, &members)?;
        if let Dest::Group(g) = dest {
            self.sh.request(Op::GroupCheck { group: g.0 })?;
        }
        Ok(TxMapping::new(
            self.sh.clone(),
            self.name.clone(),
            self.info.clone(),
            dest,
            attrs,
        ))
    }

    fn check_perm(&self, want: u32, op: &'static str) -> Result<()> {
        let i = &self.info;
        memchan_core::perm::check(
            (self.sh.uid, self.sh.gid),
            (i.uid, i.gid, i.mode),
            want,
            &self.name,
            op,
        )
    }

    /// Remote reads and atomics on any node's copy of the segment (`crate::rma`).
    pub fn rma(&self) -> Result<crate::rma::Rma> {
        crate::rma::Rma::new(self.sh.clone(), self.name.clone(), self.info.clone())
    }

    /// Frees the segment.
    pub fn free(self) -> Result<()> {
        self.sh
            .request(Op::SegFree {
                seg: self.info.seg,
                gen: self.info.gen,
            })
            .map(drop)
    }
}

impl SegmentOps for Segment {
    type Tx = TxMapping;
    type Rx = RxMapping;
    type Rma = crate::rma::Rma;
    fn name(&self) -> &str {
        self.name()
    }
    fn size(&self) -> usize {
        self.size()
    }
    fn owner(&self) -> memchan_core::SegOwner {
        self.owner()
    }
    fn map_rx_with(&self, attrs: RxAttrs) -> Result<RxMapping> {
        self.map_rx_with(attrs)
    }
    fn map_tx(&self, dest: Dest, attrs: TxAttrs) -> Result<TxMapping> {
        self.map_tx(dest, attrs)
    }
    fn free(self) -> Result<()> {
        self.free()
    }
    fn rma(&self) -> Result<crate::rma::Rma> {
        self.rma()
    }
}
