//! `wait_until` on a word of a receive mapping: the waiting thread reads the link
//! itself. (The deposit operations that change such words are applied to the
//! receive memory, `rx.rs`.)

use super::RxMapping;
use crate::state::Reading;
use memchan_core::deposit::{self, Cmp};
use memchan_core::transport::wait_until_slice;
use memchan_core::Result;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

impl RxMapping {
    /// Waits until the word at `offset` satisfies `word <cmp> value`: see
    /// `memchan_core::transport::RxOps::wait_until_u64`. The waiting thread reads the
    /// link itself (as `wait` does), so the frame that changes the word wakes it.
    pub fn wait_until_u64(
        &self,
        offset: usize,
        cmp: Cmp,
        value: u64,
        timeout: Option<Duration>,
    ) -> Result<Option<u64>> {
        deposit::check_word(&self.name, self.mem.size, offset, 8)?;
        // SAFETY: aligned and in bounds (checked); the mapping lives with `self.mem`.
        let w = unsafe { &*(self.mem.base.add(offset) as *const AtomicU64) };
        let deadline = timeout.map(|t| Instant::now() + t);
        let _reading = Reading::new(&self.sh);
        loop {
            if let Some(v) = cmp.load_if(w, value) {
                return Ok(Some(v));
            }
            self.sh.check()?;
            let Some(slice) = wait_until_slice(deadline) else {
                return Ok(None);
            };
            self.sh.progress(slice);
        }
    }
}
