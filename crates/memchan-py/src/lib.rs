//! Python bindings of memchan: the extension module `memchan._memchan`, which the
//! Python package `memchan` (python/memchan) re-exports. Built with maturin
//! (`pip install ./crates/memchan-py`); its tests are the pytest suite in tests/.
//!
//! Over the public Rust API only: `Cluster` (membership, segments, groups, ack,
//! barrier, locks, events, clock), `Segment`, `TxMapping`, `RxMapping` (a read-only
//! buffer that numpy views without a copy), `Rma` (remote get and atomics) and
//! `Comm` (message passing, crate `memchan-msg`). Every call that waits releases the
//! GIL; every Rust error becomes a subclass of `memchan.Error` carrying its code.

mod args;
mod cluster;
mod errors;
mod group;
mod mapping;
mod msg;

use pyo3::prelude::*;

#[pymodule]
fn _memchan(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<cluster::Cluster>()?;
    m.add_class::<group::Group>()?;
    m.add_class::<cluster::Event>()?;
    m.add_class::<cluster::GlobalTime>()?;
    m.add_class::<cluster::Lock>()?;
    m.add_class::<mapping::Segment>()?;
    m.add_class::<mapping::TxMapping>()?;
    m.add_class::<mapping::RxMapping>()?;
    m.add_class::<mapping::Rma>()?;
    m.add_class::<mapping::Pending>()?;
    m.add_class::<msg::Comm>()?;
    m.add_class::<msg::Request>()?;
    m.add_class::<msg::Status>()?;
    m.add("ANY_SOURCE", memchan_msg::ANY_SOURCE)?;
    m.add("ANY_TAG", memchan_msg::ANY_TAG)?;
    m.add("MAX_NODES", memchan::MAX_NODES)?;
    m.add("BROADCAST", "broadcast")?;
    Ok(())
}
