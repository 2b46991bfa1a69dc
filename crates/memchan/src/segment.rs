//! [`Segment`]: a named segment of the cluster's address space, from which the
//! mappings and the remote-access handle are made.

use crate::flavor::{RmaFlavor, RxFlavor, SegFlavor, TxFlavor};
use crate::mapping::{RxMapping, TxMapping};
use crate::rma::Rma;
use memchan_core::transport::SegmentOps;
use memchan_core::{Dest, Result, RxAttrs, SegOwner, TxAttrs};

/// A named segment of the cluster's address space.
pub struct Segment {
    pub(crate) seg: SegFlavor,
}

impl Segment {
    /// The segment's name.
    pub fn name(&self) -> &str {
        each!(SegFlavor, &self.seg, s => s.name())
    }
    /// Size in bytes (whole pages).
    pub fn size(&self) -> usize {
        each!(SegFlavor, &self.seg, s => s.size())
    }
    /// Who created it (uid), its group and mode: on one host those of its permission
    /// object, through a hub those the hub recorded. Any member may create a segment
    /// under a name first (SECURITY.md): check the owner of a segment opened by name
    /// before trusting it with data.
    pub fn owner(&self) -> SegOwner {
        each!(SegFlavor, &self.seg, s => s.owner())
    }
    /// Maps it rx: local memory that receives every write addressed to it.
    ///
    /// # Errors
    /// As [`map_rx_with`](Self::map_rx_with).
    pub fn map_rx(&self) -> Result<RxMapping> {
        self.map_rx_with(RxAttrs::default())
    }
    /// Maps it rx with page attributes (receive enable, notify on receive).
    ///
    /// # Errors
    /// `PermissionDenied` (op `map_rx`) without read permission; `Invalid`
    /// (`"rx mapping"`) if this node maps it rx already; `SegmentFreed`.
    pub fn map_rx_with(&self, attrs: RxAttrs) -> Result<RxMapping> {
        Ok(RxMapping {
            rx: wrap!(SegFlavor => RxFlavor, &self.seg, s => s.map_rx_with(attrs)?),
        })
    }
    /// Maps it tx towards `dest`.
    ///
    /// # Errors
    /// `PermissionDenied` (op `map_tx`) without write permission; `UnknownNode` for a
    /// node that is not a live member; `UnknownGroup` for a group that does not exist.
    pub fn map_tx(&self, dest: Dest, attrs: TxAttrs) -> Result<TxMapping> {
        Ok(TxMapping {
            tx: wrap!(SegFlavor => TxFlavor, &self.seg, s => s.map_tx(dest, attrs)?),
        })
    }
    /// A handle for remote reads and atomics on any node's copy of the segment
    /// ([`Rma`]). Which of them the caller may do (read permission for gets; read and
    /// write for atomics) is settled here, once, as `map_tx` settles write.
    ///
    /// # Errors
    /// `Isolated`, `HubLost`, `SegmentFreed`.
    pub fn rma(&self) -> Result<Rma> {
        Ok(Rma {
            rma: wrap!(SegFlavor => RmaFlavor, &self.seg, s => s.rma()?),
        })
    }
    /// Frees the segment: its owner (or root) only; every mapping of it stops working.
    ///
    /// # Errors
    /// `PermissionDenied` (op `free`) for anyone else; `SegmentFreed` if it is gone.
    pub fn free(self) -> Result<()> {
        each!(SegFlavor, self.seg, s => s.free())
    }
}
