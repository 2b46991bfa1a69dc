//! The cluster lock: [`Lock`] and the [`LockGuard`] that holds it.

use crate::flavor::{GuardFlavor, LockFlavor};
use memchan_core::transport::{GuardOps, LockOps};
use memchan_core::Result;

/// A named cluster lock.
pub struct Lock {
    pub(crate) lock: LockFlavor,
}

/// Holds a [`Lock`] until dropped.
pub struct LockGuard<'a> {
    guard: GuardFlavor<'a>,
}

impl Lock {
    /// Waits for the lock.
    ///
    /// # Errors
    /// `Isolated`; `HubLost`.
    pub fn acquire(&self) -> Result<LockGuard<'_>> {
        Ok(LockGuard {
            guard: wrap!(LockFlavor => GuardFlavor, &self.lock, l => LockOps::acquire(l)?),
        })
    }
    /// Tries once; `None` if another node holds or bids.
    ///
    /// # Errors
    /// `Isolated`; `HubLost`.
    pub fn try_acquire(&self) -> Result<Option<LockGuard<'_>>> {
        let guard =
            wrap_some!(LockFlavor => GuardFlavor, &self.lock, l => LockOps::try_acquire(l)?);
        Ok(guard.map(|guard| LockGuard { guard }))
    }
}

impl LockGuard<'_> {
    /// Releases now, reporting errors (drop releases too, ignoring them). It returns
    /// once the release is in the global order (this node's copy of the lock page
    /// shows it), on every transport.
    ///
    /// # Errors
    /// `Isolated` (the cluster already cleared this node's slot); `HubLost`.
    pub fn release(self) -> Result<()> {
        each!(GuardFlavor, self.guard, g => GuardOps::release(g))
    }
}
