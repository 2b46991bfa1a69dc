//! The remote reads and atomics under way at their targets, by the hub's token
//! (`Table`).

use memchan_core::NodeId;
use std::collections::HashMap;
use std::time::Instant;

/// A request forwarded to its target and not yet answered.
pub(super) struct Entry {
    pub(super) target: NodeId,
    pub(super) target_inc: u64,
    pub(super) origin: NodeId,
    pub(super) origin_inc: u64,
    pub(super) req: u32,
    /// The down seq of its `RmaServe` on the target's link.
    pub(super) seq: u64,
    /// When the target released (received) that frame: its link side answers right
    /// after, so a target that then stays silent on it past the failure timeout, while
    /// its link lives, is not answering.
    pub(super) received: Option<Instant>,
}

/// The requests under way, by token.
pub(crate) struct Table {
    pub(super) next: u64,
    pub(super) open: HashMap<u64, Entry>,
}

impl Default for Table {
    /// Tokens start at a random number: a target that served a request of a lost
    /// active hub may send its answer to the standby after a rail switch, and that
    /// token must not name one of the standby's own requests (it would answer the
    /// wrong origin). The standby drops it as never sent.
    fn default() -> Table {
        let mut b = [0u8; 8];
        let next = getrandom::fill(&mut b).map_or(0, |()| u64::from_le_bytes(b) >> 1);
        Table {
            next,
            open: HashMap::new(),
        }
    }
}
