//! The interface's counters ([`Counters`]) and their snapshot ([`CounterSnapshot`],
//! the line `memchan ip` prints). A leaf.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The interface's counters (monotonic).
#[derive(Debug, Default)]
pub struct Counters {
    pub tx_packets: AtomicU64,
    pub tx_bytes: AtomicU64,
    pub rx_packets: AtomicU64,
    pub rx_bytes: AtomicU64,
    /// Packets for an address no live node has (a multicast group no other node
    /// joined), or not IPv4.
    pub drop_no_route: AtomicU64,
    /// Packets dropped because the destination's ring stayed full.
    pub drop_ring_full: AtomicU64,
    /// Waits for a receiver's credits (a full unicast ring).
    pub ring_full_waits: AtomicU64,
    /// Records a sender wrote that no honest sender writes (its ring is abandoned).
    pub bad_records: AtomicU64,
    /// Frames dropped because their `virtio_net_hdr` is one no honest sender writes
    /// (segmentation, unknown flags, a checksum place past the packet); the ring is
    /// kept.
    pub bad_frames: AtomicU64,
    /// Failed memchan writes and TUN writes.
    pub errors: AtomicU64,
    /// Multicast packets sent through a memchan group, and received through one.
    pub tx_multicast: AtomicU64,
    pub rx_multicast: AtomicU64,
    /// Multicast packets sent through the broadcast ring because no group could be
    /// had (the cluster's groups are all taken).
    pub mc_fallback: AtomicU64,
    /// Times a multicast ring reader fell behind (or its sender restarted) and
    /// skipped to the head, losing packets.
    pub mc_skipped: AtomicU64,
    /// Busy-poll windows the receive thread ran after traffic.
    pub spins: AtomicU64,
    /// Times it stopped spinning because spinning got it too little of a core (a
    /// busy machine; it tries again after 100 ms, or up to 1.6 s while it keeps
    /// failing).
    pub spin_backoffs: AtomicU64,
    /// Times the interactive spin window opened to its longest: the next packet of
    /// an exchange came after a spin that caught nothing, within the longest window.
    pub spin_window_opens: AtomicU64,
}

/// A copy of [`Counters`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub drop_no_route: u64,
    pub drop_ring_full: u64,
    pub ring_full_waits: u64,
    pub bad_records: u64,
    pub bad_frames: u64,
    pub errors: u64,
    pub tx_multicast: u64,
    pub rx_multicast: u64,
    pub mc_fallback: u64,
    pub mc_skipped: u64,
    pub spins: u64,
    pub spin_backoffs: u64,
    pub spin_window_opens: u64,
}

impl Counters {
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            tx_packets: self.tx_packets.load(Relaxed),
            tx_bytes: self.tx_bytes.load(Relaxed),
            rx_packets: self.rx_packets.load(Relaxed),
            rx_bytes: self.rx_bytes.load(Relaxed),
            drop_no_route: self.drop_no_route.load(Relaxed),
            drop_ring_full: self.drop_ring_full.load(Relaxed),
            ring_full_waits: self.ring_full_waits.load(Relaxed),
            bad_records: self.bad_records.load(Relaxed),
            bad_frames: self.bad_frames.load(Relaxed),
            errors: self.errors.load(Relaxed),
            tx_multicast: self.tx_multicast.load(Relaxed),
            rx_multicast: self.rx_multicast.load(Relaxed),
            mc_fallback: self.mc_fallback.load(Relaxed),
            mc_skipped: self.mc_skipped.load(Relaxed),
            spins: self.spins.load(Relaxed),
            spin_backoffs: self.spin_backoffs.load(Relaxed),
            spin_window_opens: self.spin_window_opens.load(Relaxed),
        }
    }
}

impl std::fmt::Display for CounterSnapshot {
    /// One line of `key=value` pairs (what `memchan ip` prints).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tx_packets={} tx_bytes={} rx_packets={} rx_bytes={} drop_no_route={} drop_ring_full={} ring_full_waits={} bad_records={} bad_frames={} errors={} tx_multicast={} rx_multicast={} mc_fallback={} mc_skipped={} spins={} spin_backoffs={} spin_window_opens={}",
            self.tx_packets,
            self.tx_bytes,
            self.rx_packets,
            self.rx_bytes,
            self.drop_no_route,
            self.drop_ring_full,
            self.ring_full_waits,
            self.bad_records,
            self.bad_frames,
            self.errors,
            self.tx_multicast,
            self.rx_multicast,
            self.mc_fallback,
            self.mc_skipped,
            self.spins,
            self.spin_backoffs,
            self.spin_window_opens
        )
    }
}
