//! A communicator's sizes ([`CommConfig`]): a leaf, read by the ring layout
//! (`wire.rs`) and the communicator.

/// A communicator's sizes. Every member must use the same values.
#[derive(Clone, Debug)]
pub struct CommConfig {
    /// Slots per sender ring (a power of two, 8..=4096).
    pub ring_slots: usize,
    /// Bytes per bulk chunk (a multiple of 4096).
    pub chunk_size: usize,
    /// Bulk chunks per sender (2..=64).
    pub chunks: usize,
    /// Node ids of members must be below this (it sizes the segment).
    pub max_nodes: usize,
    /// Bytes of unexpected messages a receiver buffers before it stops draining.
    pub unexpected_limit: usize,
    /// Polls that complete nothing before a waiting caller sleeps.
    pub spin: u32,
    /// Permission bits of the communicator's segment.
    pub mode: u32,
}

impl Default for CommConfig {
    fn default() -> Self {
        CommConfig {
            ring_slots: 64,
            // 2 MiB in flight per (sender, receiver): more than a core's L2 cache
            // (1 MiB here). A smaller bulk ring is still in the receiver's cache when
            // the sender writes it again, and each line written then waits for a
            // transfer from the other core: 64 KiB x 4 gave 8 GB/s for 1 MiB
            // messages, 512 KiB x 4 gives 33-37 GB/s (Open MPI: 13). Only the pages a
            // sender uses are touched on one host.
            chunk_size: 512 * 1024,
            chunks: 4,
            max_nodes: 16,
            unexpected_limit: 64 << 20,
            spin: 20_000,
            mode: 0o600,
        }
    }
}
