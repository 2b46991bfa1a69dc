//! The mappings of a segment: [`TxMapping`] (a transmit window, the write path) and
//! [`RxMapping`] (this node's receive memory, the read path).

use crate::flavor::{RxFlavor, TxFlavor};
use memchan_core::deposit::{Cmp, CondResult, Shape, SignalOp};
use memchan_core::transport::{RxOps, TxOps};
use memchan_core::{Dest, Result, RxAttrs, TxAttrs};
use std::time::Duration;

/// A transmit window: writes land in the destination's rx mappings. Each write is
/// checked (bounds, alignment, transmit enable) before anything is sent: a refused
/// write deposits nothing. A write longer than 8 bytes is applied page by page: each
/// page lands whole, in the one order; another sender's packets may fall between the
/// pages of one write, on every transport.
pub struct TxMapping {
    pub(crate) tx: TxFlavor,
}

impl TxMapping {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        each!(TxFlavor, &self.tx, t => TxOps::len(t))
    }
    /// Never empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Destination.
    pub fn dest(&self) -> Dest {
        each!(TxFlavor, &self.tx, t => TxOps::dest(t))
    }
    /// Attributes.
    pub fn attrs(&self) -> TxAttrs {
        each!(TxFlavor, &self.tx, t => TxOps::attrs(t))
    }
    /// Turns transmit enable on or off.
    pub fn set_transmit_enable(&mut self, on: bool) {
        each!(TxFlavor, &mut self.tx, t => TxOps::set_transmit_enable(t, on))
    }
    /// Atomic 8-byte write.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`, `TransmitDisabled`, `Isolated`, `SegmentFreed`,
    /// `HubLost`.
    #[inline(always)]
    pub fn write_u64(&self, offset: usize, v: u64) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_u64(t, offset, v))
    }
    /// Atomic 4-byte write.
    ///
    /// # Errors
    /// As [`write_u64`](Self::write_u64).
    #[inline(always)]
    pub fn write_u32(&self, offset: usize, v: u32) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_u32(t, offset, v))
    }
    /// Atomic 2-byte write.
    ///
    /// # Errors
    /// As [`write_u64`](Self::write_u64).
    #[inline(always)]
    pub fn write_u16(&self, offset: usize, v: u16) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_u16(t, offset, v))
    }
    /// 1-byte write.
    ///
    /// # Errors
    /// As [`write_u64`](Self::write_u64).
    #[inline(always)]
    pub fn write_u8(&self, offset: usize, v: u8) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_u8(t, offset, v))
    }
    /// Writes `data` at `offset` (applied page by page, see the type's doc).
    ///
    /// # Errors
    /// As [`write_u64`](Self::write_u64), less `Unaligned`.
    #[inline(always)]
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write(t, offset, data))
    }
    /// As [`write`](Self::write), but the destination need not post notify on
    /// receive for it, even on a notify page: write a record's body this way and
    /// publish its last word with [`write_u64`](Self::write_u64), and a reader blocked
    /// in [`RxMapping::wait`] is woken once, after the whole record landed. Order and
    /// atomicity as `write`. A direct deposit on one host posts none; other paths
    /// (broadcast, local copy, across hosts) may still notify.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    #[inline(always)]
    pub fn write_no_notify(&self, offset: usize, data: &[u8]) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_no_notify(t, offset, data))
    }
    /// A record in one call: `body` at `offset` as by
    /// [`write_no_notify`](Self::write_no_notify), then the aligned 8-byte `word` at
    /// `publish` as by [`write_u64`](Self::write_u64). A reader that sees the word
    /// sees the whole body, and a reader blocked in [`RxMapping::wait`] on a notify
    /// page is woken once the record landed. Both ranges are checked first: a bad
    /// one writes nothing. On one host it costs less than the two calls (the
    /// destination is resolved once): the message layer publishes each slot this
    /// way.
    ///
    /// ```
    /// # use memchan::{Cluster, Dest, RxAttrs, TxAttrs};
    /// # let c = Cluster::join(&format!("doc-record-{}", std::process::id()))?;
    /// let seg = c.segment("records", 4096, 0o600)?;
    /// let rx = seg.map_rx_with(RxAttrs { notify: true, ..RxAttrs::default() })?;
    /// let tx = seg.map_tx(Dest::Node(c.node_id()), TxAttrs::default())?;
    /// // A 16-byte body after its 8-byte sequence word.
    /// tx.write_record(8, &[7u8; 16], 0, 1)?;
    /// assert_eq!(rx.load_u64(0)?, 1);
    /// assert_eq!(rx.load_u64(16)?, u64::from_ne_bytes([7; 8]));
    /// // An unaligned publish word: an error, and the body was not written either.
    /// assert!(tx.write_record(1024, &[9u8; 8], 4, 2).is_err());
    /// assert_eq!(rx.load_u64(1024)?, 0);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`write`](Self::write) for the body and [`write_u64`](Self::write_u64) for
    /// the word.
    #[inline(always)]
    pub fn write_record(
        &self,
        offset: usize,
        body: &[u8],
        publish: usize,
        word: u64,
    ) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_record(t, offset, body, publish, word))
    }
    /// Strided deposit (the T3D case of seed 002): `shape.count` elements of
    /// `shape.elem` bytes, element `i` read from `src[i * shape.src_stride..]` and
    /// written at `shape.offset + i * shape.dst_stride` (strides in bytes). Each
    /// element is one packet in this sender's order, as if written by one
    /// [`write`](Self::write) each (an aligned 1/2/4/8-byte element atomically): no
    /// reader ever sees an element before the ones ahead of it. Across hosts the
    /// elements travel packed, as few frames as the wire allows, and are applied
    /// one by one at each destination.
    ///
    /// ```
    /// use memchan::{Cluster, Dest, Shape, TxAttrs};
    /// let name = format!("doc-strided-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let rx = b.segment("m", 4096, 0o600)?.map_rx()?;
    /// let tx = a.segment("m", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// // A column of a 4x4 matrix of u64: four words, 32 bytes apart.
    /// let col: Vec<u8> = [1u64, 2, 3, 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let shape = Shape { elem: 8, count: 4, src_stride: 8, dst_stride: 32, offset: 8 };
    /// tx.put_strided(&shape, &col)?;
    /// a.ack()?;
    /// assert_eq!(rx.load_u64(8 + 3 * 32)?, 4);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// Checked before anything is sent: `BadShape` (element size 0 or over 64 KiB, a
    /// stride whose arithmetic overflows, `src` too short), `OutOfBounds` (the last
    /// element past the segment); then as [`write`](Self::write).
    pub fn put_strided(&self, shape: &Shape, src: &[u8]) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::put_strided(t, shape, src))
    }
    /// Indexed deposit: element `i` (`src[i * elem..][..elem]`) written at
    /// `offsets[i]`, with the ordering of [`put_strided`](Self::put_strided).
    ///
    /// ```
    /// use memchan::{Cluster, Dest, TxAttrs};
    /// let name = format!("doc-indexed-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let rx = b.segment("m", 4096, 0o600)?.map_rx()?;
    /// let tx = a.segment("m", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// tx.put_indexed(4, &[400, 12, 2000], &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0])?;
    /// a.ack()?;
    /// assert_eq!((rx.load_u32(400)?, rx.load_u32(12)?, rx.load_u32(2000)?), (1, 2, 3));
    /// // An offset past the segment is named, and nothing is sent.
    /// assert!(matches!(tx.put_indexed(4, &[0, 4096], &[0; 8]), Err(memchan::Error::OutOfBounds { offset: 4096, .. })));
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// `BadShape` (element size, `src.len() != offsets.len() * elem`), `OutOfBounds`
    /// naming the first offset past the segment; then as [`write`](Self::write).
    pub fn put_indexed(&self, elem: usize, offsets: &[usize], src: &[u8]) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::put_indexed(t, elem, offsets, src))
    }
    /// Put with signal (OpenSHMEM 1.5 `shmem_put_signal`): writes `data` at `offset`,
    /// then sets the 8-byte word at `signal` to `value` ([`SignalOp::Set`]) or adds
    /// `value` to it atomically at each destination ([`SignalOp::Add`]). The signal is
    /// one packet after the data, so every destination applies it after the data: a
    /// reader that [`RxMapping::wait_until_u64`] saw the signal reads the data whole.
    ///
    /// ```
    /// use memchan::{Cluster, Cmp, Dest, SignalOp, TxAttrs};
    /// use std::time::Duration;
    /// let name = format!("doc-signal-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let rx = b.segment("m", 4096, 0o600)?.map_rx()?;
    /// let tx = a.segment("m", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// tx.put_signal(64, b"payload", 0, SignalOp::Add, 1)?;
    /// assert_eq!(rx.wait_until_u64(0, Cmp::Ge, 1, Some(Duration::from_secs(10)))?, Some(1));
    /// let mut got = [0u8; 7];
    /// rx.read(64, &mut got)?;
    /// assert_eq!(&got, b"payload");
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// `Unaligned` / `OutOfBounds` for the signal word (checked before the data is
    /// sent), and as [`write`](Self::write).
    pub fn put_signal(
        &self,
        offset: usize,
        data: &[u8],
        signal: usize,
        op: SignalOp,
        value: u64,
    ) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::put_signal(t, offset, data, signal, op, value))
    }
    /// Conditional write (MEMORY CHANNEL 2): at each destination, the 8-byte word at
    /// `offset` becomes `new` only if it holds `expected`; returns each destination's
    /// [`Outcome`](crate::Outcome), carried back by its acknowledgement (no second
    /// round trip).
    ///
    /// Its place in the ordering rules: one packet in this sender's order and, for
    /// broadcast, multicast or local copy, in the global order, evaluated at each
    /// destination against the word as the writes before it in that order left it. It
    /// returns once every destination reported, each after it applied this mapping's
    /// earlier writes, so it acknowledges those too. Destinations that do not map the
    /// segment rx report nothing; one that failed before it reported is
    /// [`Outcome::Lost`](crate::Outcome::Lost) (across hosts only: on one host the
    /// sender does the compare-and-swap itself).
    ///
    /// Recoverable messaging: a sender claims a mailbox slot with one conditional
    /// write; the outcome says at once whether the receiver had emptied it, so a lost
    /// or refused message is known without a reply from the receiver's application.
    ///
    /// ```
    /// use memchan::{Cluster, Dest, Outcome, TxAttrs};
    /// let name = format!("doc-cond-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let rx = b.segment("box", 4096, 0o600)?.map_rx()?;
    /// let tx = a.segment("box", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// const EMPTY: u64 = 0;
    /// // Message 1 goes in: the slot was empty.
    /// let r = tx.write_if_u64(0, EMPTY, 1)?;
    /// assert_eq!((r[0].node, r[0].outcome), (b.node_id(), Outcome::Applied));
    /// // Message 2 is refused, and the sender learns the slot still holds message 1.
    /// assert_eq!(tx.write_if_u64(0, EMPTY, 2)?[0].outcome, Outcome::Held(1));
    /// assert_eq!(rx.load_u64(0)?, 1);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// `Unaligned`, `OutOfBounds`, and as [`write`](Self::write).
    pub fn write_if_u64(&self, offset: usize, expected: u64, new: u64) -> Result<Vec<CondResult>> {
        each!(TxFlavor, &self.tx, t => TxOps::write_if_u64(t, offset, expected, new))
    }
}

/// This node's receive memory for a segment.
pub struct RxMapping {
    pub(crate) rx: RxFlavor,
}

impl RxMapping {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        each!(RxFlavor, &self.rx, r => RxOps::len(r))
    }
    /// Never empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Segment name.
    pub fn name(&self) -> &str {
        each!(RxFlavor, &self.rx, r => RxOps::name(r))
    }
    /// Start of the receive memory (written concurrently: read it through atomics).
    pub fn as_ptr(&self) -> *const u8 {
        each!(RxFlavor, &self.rx, r => RxOps::as_ptr(r))
    }
    /// Atomic 8-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`.
    #[inline(always)]
    pub fn load_u64(&self, offset: usize) -> Result<u64> {
        each!(RxFlavor, &self.rx, r => RxOps::load_u64(r, offset))
    }
    /// Atomic 4-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`.
    #[inline(always)]
    pub fn load_u32(&self, offset: usize) -> Result<u32> {
        each!(RxFlavor, &self.rx, r => RxOps::load_u32(r, offset))
    }
    /// Atomic 2-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`.
    #[inline(always)]
    pub fn load_u16(&self, offset: usize) -> Result<u16> {
        each!(RxFlavor, &self.rx, r => RxOps::load_u16(r, offset))
    }
    /// 1-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`.
    #[inline(always)]
    pub fn load_u8(&self, offset: usize) -> Result<u8> {
        each!(RxFlavor, &self.rx, r => RxOps::load_u8(r, offset))
    }
    /// Copies bytes out.
    ///
    /// # Errors
    /// `OutOfBounds`.
    pub fn read(&self, offset: usize, buf: &mut [u8]) -> Result<()> {
        each!(RxFlavor, &self.rx, r => RxOps::read(r, offset, buf))
    }
    /// Sets the attributes of the pages covering `offset..offset+len`.
    ///
    /// # Errors
    /// `OutOfBounds`.
    pub fn set_attrs(&self, offset: usize, len: usize, attrs: RxAttrs) -> Result<()> {
        each!(RxFlavor, &self.rx, r => RxOps::set_attrs(r, offset, len, attrs))
    }
    /// The attributes of the page holding `offset`.
    ///
    /// # Errors
    /// `OutOfBounds`.
    pub fn attrs(&self, offset: usize) -> Result<RxAttrs> {
        each!(RxFlavor, &self.rx, r => RxOps::attrs(r, offset))
    }
    /// Receive-side remap (seed 000's MEMORY CHANNEL 2): the writes addressed to page
    /// `page` of this mapping land on page `to` of it from now on, at the same place
    /// within the page and with page `page`'s attributes, without the senders knowing
    /// (`to == page` undoes it). It holds for every packet applied after it returns;
    /// a packet being applied at that moment may land at either place, so remap at a
    /// point the senders' writes are ordered against (an `ack` or a barrier). Loads
    /// read where they are addressed. Pages are the cluster's (4 or 8 KiB).
    ///
    /// ```
    /// use memchan::{Cluster, Dest, TxAttrs};
    /// let name = format!("doc-remap-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let page = b.page_size();
    /// let rx = b.segment("frames", 3 * page, 0o600)?.map_rx()?;
    /// let tx = a.segment("frames", 3 * page, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// rx.remap_page(0, 2)?;                     // page 0's writes now fill page 2
    /// tx.write_u64(8, 5)?;
    /// a.ack()?;
    /// assert_eq!((rx.load_u64(8)?, rx.load_u64(2 * page + 8)?), (0, 5));
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// `OutOfBounds` for a page past the segment.
    pub fn remap_page(&self, page: usize, to: usize) -> Result<()> {
        each!(RxFlavor, &self.rx, r => RxOps::remap_page(r, page, to))
    }
    /// Blocks, without a busy core, until a write lands on a notify page (`Ok(true)`)
    /// or `timeout` passes (`Ok(false)`).
    ///
    /// # Errors
    /// `Isolated` or `HubLost` where the transport can tell.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        each!(RxFlavor, &self.rx, r => RxOps::wait(r, timeout))
    }
    /// Like [`wait`](Self::wait) but busy-polling, on every transport: lower latency,
    /// one busy core (through a hub it reads the link itself, in the calling thread).
    ///
    /// # Errors
    /// As [`wait`](Self::wait).
    pub fn wait_spin(&self, timeout: Option<Duration>) -> Result<bool> {
        each!(RxFlavor, &self.rx, r => RxOps::wait_spin(r, timeout))
    }
    /// Blocks, without a busy core (a short spin, then asleep on notify), until the
    /// aligned 8-byte word at `offset` satisfies `word <cmp> value` (OpenSHMEM's
    /// `shmem_wait_until` / `shmem_signal_wait_until`); returns the word, or `None` when
    /// `timeout` passes first. Woken by signal updates ([`TxMapping::put_signal`]),
    /// conditional writes and writes to notify pages; a plain write to a page without
    /// notify is seen within [`WAIT_UNTIL_RECHECK`](crate::WAIT_UNTIL_RECHECK) at the
    /// latest.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`, and as [`wait`](Self::wait).
    pub fn wait_until_u64(
        &self,
        offset: usize,
        cmp: Cmp,
        value: u64,
        timeout: Option<Duration>,
    ) -> Result<Option<u64>> {
        each!(RxFlavor, &self.rx, r => RxOps::wait_until_u64(r, offset, cmp, value, timeout))
    }
}
