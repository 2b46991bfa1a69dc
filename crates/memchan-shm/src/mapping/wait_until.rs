//! `wait_until` on one host: a short spin on the word, then asleep on the receive
//! memory's notify pair (`memchan_core::notify`), which every signal update and
//! conditional write posts whatever the page's notify bit.

use super::RxMapping;
use crate::futex::SharedFutex;
use memchan_core::deposit::{self, Cmp};
use memchan_core::notify::Notify;
use memchan_core::sync::AtomicU64;
use memchan_core::transport::wait_until_slice;
use memchan_core::Result;
use std::time::{Duration, Instant};

/// Loads of the word before the first sleep: about a microsecond, the usual distance
/// between a put and its signal on one host.
const SPINS: u32 = 256;

impl RxMapping {
    /// Waits until the word at `offset` satisfies `word <cmp> value`: see
    /// `memchan_core::transport::RxOps::wait_until_u64`.
    pub fn wait_until_u64(
        &self,
        offset: usize,
        cmp: Cmp,
        value: u64,
        timeout: Option<Duration>,
    ) -> Result<Option<u64>> {
        deposit::check_word(&self.seg.name, self.seg.size, offset, 8)?;
        // SAFETY: aligned and in bounds (checked); the mapping lives with `self.obj`
        // and is reached only through atomics.
        let w = unsafe { &*(self.obj.data().add(offset) as *const AtomicU64) };
        for _ in 0..SPINS {
            if let Some(v) = cmp.load_if(w, value) {
                return Ok(Some(v));
            }
            std::hint::spin_loop();
        }
        let h = self.obj.header();
        let n = Notify::new(&h.notify_seq, &h.notify_waiters);
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            // The count before the load: a post after the load moves it, so the wait
            // below returns at once (no lost wake-up).
            let seen = n.current();
            if let Some(v) = cmp.load_if(w, value) {
                return Ok(Some(v));
            }
            self.inner.local.check_alive()?;
            let Some(slice) = wait_until_slice(deadline) else {
                return Ok(None);
            };
            n.wait(seen, Some(slice), &SharedFutex);
        }
    }
}
