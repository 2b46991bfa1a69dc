//! The one atomics facade: std atomics normally, loom's under `cfg(loom)`, so the
//! algorithms in [`crate::order`] are model-checked exactly as they run.

#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
#[cfg(loom)]
pub use loom::thread::yield_now as spin_hint;

#[cfg(not(loom))]
pub use std::hint::spin_loop as spin_hint;
#[cfg(not(loom))]
pub use std::sync::atomic::{fence, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
