//! Rust errors as Python exceptions: one base class, `memchan.Error`, and a subclass
//! per variant of `memchan::Error` (and of `memchan_msg::MsgError`), each instance
//! carrying the stable `code` (`Error::code`, the C API's number) and the `message`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyType;

create_exception!(
    memchan,
    Error,
    PyException,
    "Base of every memchan exception: `code` is the Rust `Error::code` (stable), `message` says what went wrong."
);

/// Declares the subclasses of [`Error`] and the table that registers them.
macro_rules! subclasses {
    ($($name:ident: $doc:literal,)*) => {
        $(create_exception!(memchan, $name, Error, $doc);)*

        /// Adds `Error` and every subclass to the module.
        pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
            let py = m.py();
            m.add("Error", py.get_type::<Error>())?;
            $(m.add(stringify!($name), py.get_type::<$name>())?;)*
            Ok(())
        }
    };
}

subclasses! {
    OutOfBoundsError: "An access reaches past the end of its segment (code 1).",
    UnalignedError: "An atomic access at an offset not aligned to its size (code 2).",
    TransmitDisabledError: "A write through a tx mapping whose transmit enable is off (code 3).",
    IsolatedError: "This node was isolated by the cluster and may not send (code 4).",
    SegmentFreedError: "The segment was freed (code 5).",
    PermissionDeniedError: "The segment's owner and mode do not allow this (code 6).",
    UnknownSegmentError: "No segment of that name exists (code 7).",
    SegmentSizeMismatchError: "The segment exists with another size (code 8).",
    UnknownNodeError: "The node is not a member of the cluster (code 9).",
    UnknownGroupError: "No multicast group of that name exists (code 10).",
    InvalidError: "A name, size or argument memchan cannot accept (code 11; 103 from message passing).",
    TableFullError: "A fixed table (nodes, segments, groups) is full (code 12).",
    VersionMismatchError: "The cluster speaks another protocol version (code 13).",
    PageSizeMismatchError: "The cluster uses another page size (code 14).",
    AckIncompleteError: "Some nodes did not acknowledge (code 15).",
    TimeoutError: "A wait ran out of time (code 16).",
    HubRefusedError: "The hub could not be joined (code 17).",
    HubLostError: "The link to the hub is gone (code 18).",
    UnsupportedError: "The transport does not offer this operation (code 19).",
    OsError: "An operating-system call failed (code 20).",
    StalledError: "Another party held up a wait past memchan's bound (code 21).",
    RemoteReadOffError: "The target page does not allow remote access (code 22).",
    NotMappedError: "The target node does not map the segment rx (code 23).",
    BadShapeError: "A strided or indexed write whose shape cannot be sent (code 26).",
    ClockNotSynchronisedError: "The global clock is not synchronised yet (code 30).",
    TruncatedError: "The message does not fit the receive buffer; it stays queued (code 101).",
    PeerGoneError: "The peer left or failed before the operation completed (code 102).",
    ProtocolError: "The peer broke the message protocol (code 104).",
    UnknownRequestError: "Not a pending request of this communicator (code 105).",
}

/// The Python exception for a cluster error.
pub fn cluster(e: memchan::Error) -> PyErr {
    use memchan::Error as E;
    let code = e.code();
    let message = e.to_string();
    Python::attach(|py| {
        let class = match e {
            E::OutOfBounds { .. } => py.get_type::<OutOfBoundsError>(),
            E::Unaligned { .. } => py.get_type::<UnalignedError>(),
            E::TransmitDisabled { .. } => py.get_type::<TransmitDisabledError>(),
            E::Isolated { .. } => py.get_type::<IsolatedError>(),
            E::SegmentFreed { .. } => py.get_type::<SegmentFreedError>(),
            E::PermissionDenied { .. } => py.get_type::<PermissionDeniedError>(),
            E::UnknownSegment(_) => py.get_type::<UnknownSegmentError>(),
            E::SegmentSizeMismatch { .. } => py.get_type::<SegmentSizeMismatchError>(),
            E::UnknownNode(_) => py.get_type::<UnknownNodeError>(),
            E::UnknownGroup(_) => py.get_type::<UnknownGroupError>(),
            E::Invalid { .. } => py.get_type::<InvalidError>(),
            E::TableFull(_) => py.get_type::<TableFullError>(),
            E::VersionMismatch { .. } => py.get_type::<VersionMismatchError>(),
            E::PageSizeMismatch { .. } => py.get_type::<PageSizeMismatchError>(),
            E::AckIncomplete(_) => py.get_type::<AckIncompleteError>(),
            E::Timeout(..) => py.get_type::<TimeoutError>(),
            E::HubRefused { .. } => py.get_type::<HubRefusedError>(),
            E::HubLost(_) => py.get_type::<HubLostError>(),
            E::Unsupported(_) => py.get_type::<UnsupportedError>(),
            E::Os { .. } => py.get_type::<OsError>(),
            E::Stalled { .. } => py.get_type::<StalledError>(),
            E::RemoteReadOff { .. } => py.get_type::<RemoteReadOffError>(),
            E::NotMapped { .. } => py.get_type::<NotMappedError>(),
            E::BadShape { .. } => py.get_type::<BadShapeError>(),
            E::ClockNotSynchronised { .. } => py.get_type::<ClockNotSynchronisedError>(),
            // A variant added later still reaches Python, as the base class with its code.
            _ => py.get_type::<Error>(),
        };
        build(&class, code, message)
    })
}

/// The Python exception for a message-passing error.
pub fn msg(e: memchan_msg::MsgError) -> PyErr {
    use memchan_msg::MsgError as M;
    let code = e.code();
    let message = e.to_string();
    Python::attach(|py| {
        let class = match e {
            M::Cluster(e) => return cluster(e),
            M::Truncated { .. } => py.get_type::<TruncatedError>(),
            M::PeerGone(_) => py.get_type::<PeerGoneError>(),
            M::Invalid { .. } => py.get_type::<InvalidError>(),
            M::Protocol { .. } => py.get_type::<ProtocolError>(),
            M::UnknownRequest => py.get_type::<UnknownRequestError>(),
        };
        build(&class, code, message)
    })
}

/// `memchan.InvalidError` (code 11) for a bad argument the binding itself refuses
/// before Rust sees it (a negative offset, a node id past 65535, a handle closed).
pub fn invalid(what: &'static str, why: impl Into<String>) -> PyErr {
    cluster(memchan::Error::Invalid {
        what,
        why: why.into(),
    })
}

/// An instance of `class` with args `(message,)` and the attributes `code` and `message`.
fn build(class: &Bound<'_, PyType>, code: i32, message: String) -> PyErr {
    let made = class.call1((message.clone(),)).and_then(|v| {
        v.setattr("code", code)?;
        v.setattr("message", message)?;
        Ok(v)
    });
    match made {
        Ok(v) => PyErr::from_value(v),
        Err(e) => e,
    }
}
