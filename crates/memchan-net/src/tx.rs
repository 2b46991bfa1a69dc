//! A transmit window onto a segment of a hub cluster: every write is checked (bounds,
//! alignment, transmit enable) and goes up to the hub as `Data` packets of at most
//! [`wire::PACKET`] bytes, each naming the segment, its generation, the offset and the
//! destination. The hub orders them and delivers them (see `rx.rs`).

mod deposit;

use crate::state::Shared;
use memchan_core::{Dest, Error, Result, TxAttrs};
use memchan_link::proto::{self, SegInfo};
use memchan_link::wire::{self, Kind};
use std::sync::Arc;

/// A transmit window onto a segment of a hub cluster.
pub struct TxMapping {
    sh: Arc<Shared>,
    name: String,
    info: SegInfo,
    dest: Dest,
    attrs: TxAttrs,
    flags: u8,
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
        TxMapping {
            sh,
            name,
            info,
            dest,
            attrs,
            flags,
        }
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
        let head = proto::data_head(
            self.info.seg,
            self.info.gen,
            offset as u64,
            self.dest,
            self.flags,
        );
        self.sh.send(Kind::Data, &[&head, data])
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
        self.check(offset, data.len(), false)?;
        for (i, chunk) in data.chunks(wire::PACKET).enumerate() {
            self.packet(offset + i * wire::PACKET, chunk)?;
        }
        Ok(())
    }
    /// A write that need not notify (the contract's `write_no_notify`). Across hosts
    /// it is a plain [`write`](Self::write): the destination's service applies it as
    /// any packet, so it notifies as the page says; the wire carries no such flag.
    pub fn write_no_notify(&self, offset: usize, data: &[u8]) -> Result<()> {
        self.write(offset, data)
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
                .send(Kind::Data, &[&head, &word.to_le_bytes(), body]);
        }
        self.write(offset, body)?;
        self.packet(publish, &word.to_le_bytes())
    }
}
