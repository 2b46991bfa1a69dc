//! The asymmetric fence of the barrier's notify handshake: a publisher stores its
//! barrier word and then reads the waiter count, a waiter increments the count and
//! then reads the word, and one of the two must see the other's write (a store-load
//! pair on each side). A full fence on the publisher's side, on every barrier word,
//! waits until the word's store has left the core, which on a word a peer is reading
//! is a cross-core transfer on the barrier's critical path. Waiters are rare (a wait
//! goes to sleep only after a spin phase), so the cost moves to them: a waiter issues
//! `membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)`, which makes every thread of every
//! registered process execute a full barrier (or pass through a context switch, which
//! is one) before it returns, and a publisher whose process is registered needs only
//! a compiler fence. Either the publisher's read of the count comes after that
//! barrier in its program (and sees the increment, made before the call), or its
//! store came before it (and the waiter's read, after the call, sees the word).
//!
//! A process that cannot register (a kernel before 4.16, a seccomp filter) keeps the
//! full fence on its side. A waiter whose `membarrier` fails while the
//! publisher is registered may miss a wake-up: its sleep is bounded (`node::barrier::SLEEP`),
//! so that costs latency, never progress.

use rustix::thread::{membarrier, MembarrierCommand};
use std::sync::atomic::{fence, Ordering};
use std::sync::OnceLock;

static REGISTERED: OnceLock<bool> = OnceLock::new();

/// Registers this process for global expedited barriers (once; at join).
pub(crate) fn register() -> bool {
    *REGISTERED.get_or_init(|| membarrier(MembarrierCommand::RegisterGlobalExpedited).is_ok())
}

/// Whether this process is registered: a publisher here needs only a compiler fence
/// between its store and its read of the waiter count.
#[inline]
pub(crate) fn registered() -> bool {
    REGISTERED.get().copied().unwrap_or(false)
}

/// The waiter's side: between its increment of the waiter count and its read of
/// the word (a full fence as well, for a publisher that is not registered).
pub(crate) fn heavy() {
    let _ = membarrier(MembarrierCommand::GlobalExpedited);
    fence(Ordering::SeqCst);
}
