//! A node's **presence lock**: the file `memchan.<cluster>.n<node>.i<incarnation>.live`
//! (`local::live_name`), made by the node at join (`O_CREAT|O_EXCL|O_NOFOLLOW`) and
//! held `flock(LOCK_EX)` for its life. The kernel drops the lock when the process
//! ends, however it ends, so whether anyone holds it is a kernel fact about that
//! (slot, incarnation) that no word of the control block changes: memchan takes a
//! member for gone (takes its order point over, reaps its slot, stops counting it) on
//! a pid word only after this lock says so ([`vacant`]), never on the word alone.
//!
//! The descriptor is close-on-exec; a child forked without exec would share the lock
//! and keep its node counted while it lives.
//!
//! Another member can hold the lock of a dead node's file (it may open it), which
//! keeps that node counted until the stall bounds end the waits on it; it cannot
//! release a live node's lock, nor remove the file (`/dev/shm` is sticky).

use crate::shm::{Open, ShmMap};
use memchan_core::{Error, Result};
use rustix::fd::OwnedFd;
use rustix::fs::FlockOperation;
use rustix::io::Errno;

/// A held presence lock; the file is removed when it is dropped (the node's end).
pub(crate) struct PresenceLock {
    _fd: OwnedFd,
    name: String,
}

impl PresenceLock {
    /// Creates `name` with `mode` (the members' read bits: they open it to test the
    /// lock) and holds it. A leftover of a crashed cluster of the same name is removed
    /// first; one this process may not remove, or one locked by another process, is
    /// refused.
    pub(crate) fn take(name: &str, mode: u32) -> Result<PresenceLock> {
        let create = || Open::Create { len: 0, mode };
        let fd = match ShmMap::open_fd(name, &create()) {
            Err(e) if errno(&e) == Some(Errno::EXIST) => {
                ShmMap::unlink(name);
                ShmMap::open_fd(name, &create()).map_err(|e| squatted(name, e))?
            }
            r => r?,
        };
        rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| squatted(name, Error::os(format!("flock /{name}"), e)))?;
        Ok(PresenceLock {
            _fd: fd,
            name: name.to_string(),
        })
    }
}

impl Drop for PresenceLock {
    fn drop(&mut self) {
        ShmMap::unlink(&self.name);
    }
}

/// Whether no process holds presence lock `name`: the file is gone (its node left or
/// was cleaned up, or never was) or nobody holds its lock (its process ended). False
/// if held, or if it cannot be told (another uid's file this uid may not open).
pub(crate) fn vacant(name: &str) -> bool {
    let fd = match ShmMap::open_fd(name, &Open::ReadOnly) {
        Ok(fd) => fd,
        Err(e) => return errno(&e) == Some(Errno::NOENT),
    };
    // A shared lock conflicts with the node's exclusive one, also from another
    // descriptor of the node's own process; it is let go when `fd` closes.
    rustix::fs::flock(&fd, FlockOperation::NonBlockingLockShared).is_ok()
}

fn errno(e: &Error) -> Option<Errno> {
    match e {
        Error::Os { source, .. } => source.raw_os_error().map(Errno::from_raw_os_error),
        _ => None,
    }
}

fn squatted(name: &str, e: Error) -> Error {
    match errno(&e) {
        Some(Errno::EXIST | Errno::WOULDBLOCK) => Error::Invalid {
            what: "presence lock",
            why: format!("/dev/shm/{name} exists and is not this uid's to replace (squatted?)"),
        },
        _ => e,
    }
}
