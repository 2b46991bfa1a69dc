//! A transmit window onto a segment of a hub cluster: every write is checked (bounds,
//! alignment, transmit enable) and goes up to the hub as `Data` packets of at most
//! [`wire::PACKET`] bytes, each naming the segment, its generation, the offset and the
//! destination. The hub orders them and delivers them (see `rx.rs`).
//!
//! **A destination on this host** (`domain.rs`): a point-to-point write without local
//! copy to a node of this node's host domain is a store into that node's receive
//! memory, as on one host; nothing enters the network. Why the ordering rules still
//! hold: rule 2 constrains only writes that reach several nodes, and those all go
//! through the hub's one order. Rule 1 (a sender's writes in order at each
//! destination) holds on each path by itself (stores in program order; the hub's
//! FIFO per sender), and across the two by the **sticky rule**: a store into node `n`
//! first waits for an ack covering every earlier frame through the hub that may reach
//! `n` (`Shared::hazard_any`, `hazard_to`), so it never overtakes one; a frame
//! through the hub after a store cannot overtake it, the store being in `n`'s memory
//! already. A sender pays the wait only when it turns from the hub's path to a store.

mod deposit;

use crate::domain::{Near, Peer};
use crate::state::Shared;
use memchan_core::{Dest, Error, NodeId, Result, TxAttrs};
use memchan_link::proto::{self, SegInfo};
use memchan_link::wire;
use std::cell::Ref;
use std::sync::Arc;

/// A transmit window onto a segment of a hub cluster.
///
/// Not `Sync`: a tx mapping belongs to one thread at a time; make one per thread.
pub struct TxMapping {
    sh: Arc<Shared>,
    name: String,
    info: SegInfo,
    dest: Dest,
    attrs: TxAttrs,
    flags: u8,
    /// A point-to-point destination, when this node is in a host domain.
    local: Option<Near>,
}

impl TxMapping {
    /// A mapping of segment `name` (`info`) towards `dest`.
    pub(crate) fn new(
        sh: Arc<Shared>,
        name: String,
        info: SegInfo,
        dest: Dest,
        attrs: TxAttrs,
    ) -> TxMapping {
        let mut flags = 0;
        if attrs.local_copy {
            flags |= proto::FLAG_LOCAL_COPY;
        }
        let local = match dest {
            Dest::Node(n) if n != sh.me && !attrs.local_copy && sh.domain.is_some() => {
                Some(Near::new(n))
            }
            _ => None,
        };
        TxMapping {
            sh,
            name,
            info,
            dest,
            attrs,
            flags,
            local,
        }
    }

    /// The destination's receive memory to store into now, if it is on this host
    /// (`Near::target`; `None`: the write goes through the hub).
    fn local_target(&self) -> Result<Option<Ref<'_, Peer>>> {
        match &self.local {
            Some(l) => l.target(&self.sh, &self.info),
            None => Ok(None),
        }
    }

    /// Stores `data` at `offset` into the destination on this host, if it is one
    /// (`false`: the caller sends it through the hub).
    fn store(&self, offset: usize, data: &[u8], notify: bool) -> Result<bool> {
        let Some(p) = self.local_target()? else {
            return Ok(false);
        };
        if p.mem.apply(offset, data) && notify {
            p.post();
        }
        Ok(true)
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.info.size as usize
    }
    /// Never empty.
    pub fn is_empty(&self) -> bool {
        self.info.size == 0
    }
    /// Destination.
    pub fn dest(&self) -> Dest {
        self.dest
    }
    /// Attributes.
    pub fn attrs(&self) -> TxAttrs {
        self.attrs
    }
    /// Turns transmit on or off.
    pub fn set_transmit_enable(&mut self, on: bool) {
        self.attrs.transmit_enable = on;
    }

    fn check(&self, offset: usize, len: usize, atomic: bool) -> Result<()> {
        if offset.checked_add(len).is_none_or(|e| e > self.len()) {
            return Err(Error::OutOfBounds {
                segment: self.name.clone(),
                offset,
                len,
                size: self.len(),
            });
        }
        if atomic && !offset.is_multiple_of(len) {
            return Err(Error::Unaligned {
                segment: self.name.clone(),
                offset,
                size: len,
            });
        }
        if !self.attrs.transmit_enable {
            return Err(Error::TransmitDisabled {
                segment: self.name.clone(),
            });
        }
        Ok(())
    }

    fn packet(&self, offset: usize, data: &[u8]) -> Result<()> {
        if self.store(offset, data, true)? {
            return Ok(());
        }
        self.send_packet(offset, data, self.flags)
    }

    fn send_packet(&self, offset: usize, data: &[u8], flags: u8) -> Result<()> {
        let head = proto::data_head(
            self.info.seg,
            self.info.gen,
            offset as u64,
            self.dest,
            flags,
        );
        self.sh.send_data(self.point(), &[&head, data])
    }

    /// The one node this mapping's packets reach, if it is point to point.
    fn point(&self) -> Option<NodeId> {
        match self.dest {
            Dest::Node(n) if !self.attrs.local_copy => Some(n),
            _ => None,
        }
    }

    /// Atomic 8-byte write.
    pub fn write_u64(&self, offset: usize, v: u64) -> Result<()> {
        self.check(offset, 8, true)?;
        self.packet(offset, &v.to_le_bytes())
    }
    /// Atomic 4-byte write.
    pub fn write_u32(&self, offset: usize, v: u32) -> Result<()> {
        self.check(offset, 4, true)?;
        self.packet(offset, &v.to_le_bytes())
    }
    /// Atomic 2-byte write.
    pub fn write_u16(&self, offset: usize, v: u16) -> Result<()> {
        self.check(offset, 2, true)?;
        self.packet(offset, &v.to_le_bytes())
    }
    /// 1-byte write.
    pub fn write_u8(&self, offset: usize, v: u8) -> Result<()> {
        self.check(offset, 1, true)?;
        self.packet(offset, &[v])
    }
    /// Writes `data` at `offset`, in packets of at most [`wire::PACKET`] bytes.
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        self.write_as(offset, data, true)
    }
    /// A write that wakes no waiter (the contract's `write_no_notify`): stored
    /// without a post on this host, flagged [`proto::FLAG_QUIET`] across hosts.
    pub fn write_no_notify(&self, offset: usize, data: &[u8]) -> Result<()> {
        self.write_as(offset, data, false)
    }

    fn write_as(&self, offset: usize, data: &[u8], notify: bool) -> Result<()> {
        self.check(offset, data.len(), false)?;
        if data.is_empty() || self.store(offset, data, notify)? {
            return Ok(());
        }
        let flags = if notify {
            self.flags
        } else {
            self.flags | proto::FLAG_QUIET
        };
        for (i, chunk) in data.chunks(wire::PACKET).enumerate() {
            self.send_packet(offset + i * wire::PACKET, chunk, flags)?;
        }
        Ok(())
    }
    /// A record (the contract's `write_record`): `body`, then the publish word, each
    /// range checked before either is sent.
    pub fn write_record(
        &self,
        offset: usize,
        body: &[u8],
        publish: usize,
        word: u64,
    ) -> Result<()> {
        self.check(offset, body.len(), false)?;
        self.check(publish, 8, true)?;
        if let Some(p) = self.local_target()? {
            if p.mem.apply_record(offset, body, publish, word) == Some(true) {
                p.post();
            }
            return Ok(());
        }
        if publish + 8 == offset && !body.is_empty() && 8 + body.len() <= wire::PACKET {
            // The word just before the body (the message layer's slot, the IP
            // level's record): one frame, which the receiver applies body first.
            let head = proto::data_head(
                self.info.seg,
                self.info.gen,
                publish as u64,
                self.dest,
                self.flags | proto::FLAG_RECORD,
            );
            return self
                .sh
                .send_data(self.point(), &[&head, &word.to_le_bytes(), body]);
        }
        self.write_no_notify(offset, body)?;
        self.packet(publish, &word.to_le_bytes())
    }
}
