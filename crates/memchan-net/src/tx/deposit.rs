//! Deposit operations across hosts: strided and indexed elements packed into as few
//! `Deposit` frames as the frame limit allows (the receiving node applies them one by
//! one, in order), a signal update as one `Deposit` after the data's `Data` packets,
//! and a conditional write as one `Deposit` whose outcomes the hub sends back, one
//! per destination, then a last report.

use super::TxMapping;
use crate::state::Reading;
use memchan_core::deposit::{self, CondResult, Shape, SignalOp};
use memchan_core::{Error, Result};
use memchan_link::proto::{self, deposit as wire_op};
use memchan_link::wire::{self, Kind};
use std::time::Duration;

/// Bytes of one frame's payload left for a deposit's offsets and elements.
const BUDGET: usize = wire::MAX_PAYLOAD - 64;

impl TxMapping {
    fn check_tx(&self) -> Result<()> {
        if !self.attrs.transmit_enable {
            return Err(Error::TransmitDisabled {
                segment: self.name.clone(),
            });
        }
        Ok(())
    }

    fn deposit(&self, offset: u64, parts: &[&[u8]]) -> Result<()> {
        let head = proto::data_head(self.info.seg, self.info.gen, offset, self.dest, self.flags);
        let mut all: Vec<&[u8]> = Vec::with_capacity(parts.len() + 1);
        all.push(&head);
        all.extend_from_slice(parts);
        self.sh.send(Kind::Deposit, &all)
    }

    /// Strided deposit: see `memchan_core::transport::TxOps::put_strided`.
    pub fn put_strided(&self, shape: &Shape, src: &[u8]) -> Result<()> {
        deposit::check_strided(&self.name, self.len(), shape, src.len())?;
        self.check_tx()?;
        let per = (BUDGET - wire_op::STRIDED_HEAD) / shape.elem;
        let mut packed = Vec::with_capacity(per.min(shape.count) * shape.elem);
        let mut first = 0;
        while first < shape.count {
            let n = per.min(shape.count - first);
            packed.clear();
            for i in first..first + n {
                let s = i * shape.src_stride;
                packed.extend_from_slice(&src[s..s + shape.elem]);
            }
            let head = wire_op::strided_head(shape.elem as u32, n as u32, shape.dst_stride as u64);
            let at = shape.offset + first * shape.dst_stride;
            self.deposit(at as u64, &[&head, &packed])?;
            first += n;
        }
        Ok(())
    }

    /// Indexed deposit: see `memchan_core::transport::TxOps::put_indexed`.
    pub fn put_indexed(&self, elem: usize, offsets: &[usize], src: &[u8]) -> Result<()> {
        deposit::check_indexed(&self.name, self.len(), elem, offsets, src.len())?;
        self.check_tx()?;
        let per = (BUDGET - wire_op::INDEXED_HEAD) / (elem + 8);
        for (offs, data) in offsets.chunks(per).zip(src.chunks(per * elem)) {
            let head = wire_op::indexed_head(elem as u32, offs.len() as u32);
            let list: Vec<u8> = offs
                .iter()
                .flat_map(|&o| (o as u64).to_le_bytes())
                .collect();
            self.deposit(0, &[&head, &list, data])?;
        }
        Ok(())
    }

    /// Put with signal: see `memchan_core::transport::TxOps::put_signal`.
    pub fn put_signal(
        &self,
        offset: usize,
        data: &[u8],
        signal: usize,
        op: SignalOp,
        value: u64,
    ) -> Result<()> {
        deposit::check_word(&self.name, self.len(), signal, 8)?;
        self.write(offset, data)?;
        self.check_tx()?;
        self.deposit(
            signal as u64,
            &[&wire_op::signal(op == SignalOp::Add, value)],
        )
    }

    /// Conditional write: see `memchan_core::transport::TxOps::write_if_u64`. Waits,
    /// reading the link itself as a request does, for the hub's last report on it:
    /// one outcome per destination (a failed one reported lost) comes before it.
    pub fn write_if_u64(&self, offset: usize, expected: u64, new: u64) -> Result<Vec<CondResult>> {
        deposit::check_word(&self.name, self.len(), offset, 8)?;
        self.check_tx()?;
        let token = self.sh.outcomes.open();
        let sent = self.deposit(offset as u64, &[&wire_op::cond(token, expected, new)]);
        let _reading = Reading::new(&self.sh);
        let waited = sent.and_then(|()| loop {
            if let Some(r) = self.sh.outcomes.take_if_done(token) {
                return Ok(r);
            }
            self.sh.check()?;
            self.sh.progress(Duration::from_millis(100));
        });
        if waited.is_err() {
            self.sh.outcomes.close(token);
        }
        waited
    }
}
