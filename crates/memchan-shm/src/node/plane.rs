//! The control-plane lock: the control block's `flock` and, since `flock` does not
//! exclude threads sharing one open file, an in-process flag and condvar beside it.
//! Both are bounded waits ([`Error::Stalled`]). A leaf of `node`: it knows the
//! node only as its [`Local`].

use crate::control::Control;
use crate::futex::SharedFutex;
use crate::local::Local;
use memchan_core::notify::Notify;
use memchan_core::{Error, Result};
use rustix::fd::AsFd;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// What [`Error::Stalled`] names when the control file's `flock` is not released.
pub(super) const PLANE: &str = "the control block's lock (flock)";

/// The in-process half of the control-plane lock: `flock` does not exclude threads
/// that share one open file. A flag and a condvar rather than a `Mutex<()>`, so that
/// waiting for it is bounded like waiting for the `flock`.
pub(super) struct PlaneMutex {
    held: Mutex<bool>,
    freed: Condvar,
}

impl PlaneMutex {
    pub(super) fn new() -> PlaneMutex {
        PlaneMutex {
            held: Mutex::new(false),
            freed: Condvar::new(),
        }
    }

    /// Takes it by `deadline`; false if another thread held it all along.
    fn lock(&self, deadline: Instant) -> bool {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        while *held {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            held = self
                .freed
                .wait_timeout(held, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *held = true;
        true
    }

    fn unlock(&self) {
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = false;
        self.freed.notify_one();
    }
}

/// Holds the control plane: the in-process lock plus the control file's flock.
pub(crate) struct PlaneGuard<'a> {
    local: &'a Local,
    mutex: &'a PlaneMutex,
}

impl Drop for PlaneGuard<'_> {
    fn drop(&mut self) {
        let local = self.local;
        unlock_plane(local.ctl_map().fd(), Some(plane_notify(local.ctl())));
        self.mutex.unlock();
    }
}

/// The header's notify pair that every release of the `flock` posts.
pub(super) fn plane_notify(c: &Control) -> Notify<'_> {
    Notify::new(&c.header.plane_seq, &c.header.plane_waiters)
}

/// Takes the control file's `flock` by `deadline`; `Ok(false)` if it was not released
/// in time.
///
/// `flock` has no timeout, so this tries without blocking and sleeps on the header's
/// plane notify pair (`notify`), which every release posts ([`unlock_plane`]): a
/// waiter wakes when the lock is released, not on a polling period. Each sleep is cut
/// to `slice` so that a holder that never posts (another member holding the `flock`
/// of a read-only descriptor, a process that died holding it) costs latency and, after
/// `deadline`, a typed error, never a hang. `notify` is `None` only while the block's
/// header may not be this version's (a joiner before it checked), whose words must not
/// be written; the wait then sleeps one slice at a time.
pub(super) fn lock_plane(
    fd: impl AsFd,
    notify: Option<Notify<'_>>,
    slice: Duration,
    deadline: Instant,
) -> Result<bool> {
    loop {
        let seen = notify.map(|n| n.current());
        match rustix::fs::flock(&fd, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) => {}
            // Only a bad descriptor or a kernel out of lock records gets here.
            Err(e) => return Err(Error::os("flock control block", e)),
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let nap = left.min(slice);
        match (notify, seen) {
            (Some(n), Some(seen)) => {
                n.wait(seen, Some(nap), &SharedFutex);
            }
            _ => std::thread::sleep(nap),
        }
    }
}

/// Releases the control file's `flock` and wakes its waiters.
pub(super) fn unlock_plane(fd: impl AsFd, notify: Option<Notify<'_>>) {
    let _ = rustix::fs::flock(&fd, rustix::fs::FlockOperation::Unlock);
    if let Some(n) = notify {
        n.post(&SharedFutex);
    }
}

/// Takes the control plane of `local`'s cluster (`mutex` its in-process half),
/// waiting at most [`Local::stall_bound`] for it (`Error::Stalled` naming the cluster
/// otherwise).
pub(super) fn take<'a>(local: &'a Local, mutex: &'a PlaneMutex) -> Result<PlaneGuard<'a>> {
    let bound = local.stall_bound();
    let deadline = Instant::now() + bound;
    if !mutex.lock(deadline) {
        return Err(local.stalled(PLANE, bound, Vec::new()));
    }
    let notify = plane_notify(local.ctl());
    match lock_plane(
        local.ctl_map().fd(),
        Some(notify),
        local.heartbeat,
        deadline,
    ) {
        Ok(true) => Ok(PlaneGuard { local, mutex }),
        Ok(false) => {
            mutex.unlock();
            Err(local.stalled(PLANE, bound, Vec::new()))
        }
        Err(e) => {
            mutex.unlock();
            Err(e)
        }
    }
}
