//! The cross-process futex: `FUTEX_WAIT`/`FUTEX_WAKE` *without* `FUTEX_PRIVATE_FLAG`,
//! so a wake in one process reaches a sleeper in another on the same shared page.

use memchan_core::notify::Futex;
use rustix::thread::futex;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// The shared futex (see the module doc).
pub(crate) struct SharedFutex;

impl Futex for SharedFutex {
    fn wait(&self, word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
        let ts = timeout.map(|t| rustix::time::Timespec {
            tv_sec: t.as_secs() as i64,
            tv_nsec: i64::from(t.subsec_nanos()),
        });
        // EAGAIN (value changed), EINTR and ETIMEDOUT all mean "look again".
        let _ = futex::wait(word, futex::Flags::empty(), expected, ts.as_ref());
    }

    fn wake(&self, word: &AtomicU32) {
        let _ = futex::wake(word, futex::Flags::empty(), i32::MAX as u32);
    }
}
