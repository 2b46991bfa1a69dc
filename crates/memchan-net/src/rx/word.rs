//! Deposit operations on receive memory across hosts (elements, signal updates,
//! conditional writes, applied by the thread that reads the link) and `wait_until`.

use super::{RxMapping, RxMem};
use crate::proto::deposit::Op;
use crate::service::Reading;
use memchan_core::deposit::{self, Cmp};
use memchan_core::transport::wait_until_slice;
use memchan_core::Result;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

impl RxMem {
    /// Applies a delivered deposit operation at `base`: whether a waiter may need a
    /// wake-up, and a word operation's word before (`None`: not applied, receive
    /// disabled or out of range). Elements go one by one in order, each as a packet;
    /// a word operation is one atomic access and always counts as a notify (it exists
    /// to be waited on).
    pub(crate) fn apply_op(&self, op: &Op<'_>, base: u64) -> (bool, Option<u64>) {
        if !op.check(base, self.size) {
            return (false, None);
        }
        let (old, notify) = match *op {
            Op::Strided { .. } | Op::Indexed { .. } => {
                let mut notify = false;
                for (o, d) in op.elements(base) {
                    notify |= self.apply(o, d);
                }
                return (notify, None);
            }
            Op::Signal { add, value } => (
                self.word(base as usize, |w| {
                    if add {
                        w.fetch_add(value, Ordering::AcqRel)
                    } else {
                        w.swap(value, Ordering::AcqRel)
                    }
                }),
                true,
            ),
            Op::Cond { expected, new, .. } => (
                self.word(base as usize, |w| {
                    match w.compare_exchange(expected, new, Ordering::AcqRel, Ordering::Acquire) {
                        Ok(v) | Err(v) => v,
                    }
                }),
                true,
            ),
        };
        if old.is_some() && notify {
            // SeqCst: half of the Dekker pair with a waiter (see `Shared::deliver`).
            self.notify.fetch_add(1, Ordering::SeqCst);
        }
        (old.is_some(), old)
    }

    /// `f` on the word at `offset` (checked: 8-aligned, inside), unless its page's
    /// receive enable is off.
    fn word(&self, offset: usize, f: impl FnOnce(&AtomicU64) -> u64) -> Option<u64> {
        if self.pct[offset / self.page].load(Ordering::Acquire) & 1 == 0 {
            return None;
        }
        // SAFETY: 8-aligned and inside the segment (`Op::check`), so inside the
        // mapping, whose base is page-aligned; reached only through atomics.
        Some(f(unsafe { &*(self.base.add(offset) as *const AtomicU64) }))
    }
}

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
