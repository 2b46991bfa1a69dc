//! The error codes of `memchan.h`: the Rust `Error::code()` and `MsgError::code()`
//! values, and the functions that turn them into text.

use std::ffi::{c_char, c_int, CStr};

/// Success.
pub const MEMCHAN_OK: c_int = 0;
/// A write or read reaches past the end of its segment.
pub const MEMCHAN_E_OUT_OF_BOUNDS: c_int = 1;
/// An atomic access at an offset not aligned to its size.
pub const MEMCHAN_E_UNALIGNED: c_int = 2;
/// A write through a tx mapping whose transmit enable is off.
pub const MEMCHAN_E_TRANSMIT_DISABLED: c_int = 3;
/// This node was isolated by the cluster; rejoin to send again.
pub const MEMCHAN_E_ISOLATED: c_int = 4;
/// The segment was freed after the mapping was made.
pub const MEMCHAN_E_SEGMENT_FREED: c_int = 5;
/// The caller's uid/gid may not do this under the segment's mode.
pub const MEMCHAN_E_PERMISSION_DENIED: c_int = 6;
/// No segment of that name exists.
pub const MEMCHAN_E_UNKNOWN_SEGMENT: c_int = 7;
/// The segment exists with another size.
pub const MEMCHAN_E_SEGMENT_SIZE_MISMATCH: c_int = 8;
/// The node is not a member of the cluster.
pub const MEMCHAN_E_UNKNOWN_NODE: c_int = 9;
/// No multicast group of that name or id exists.
pub const MEMCHAN_E_UNKNOWN_GROUP: c_int = 10;
/// A bad argument: a name, size, flag, null pointer or handle memchan cannot accept.
pub const MEMCHAN_E_INVALID: c_int = 11;
/// A fixed table (nodes, segments, groups) is full.
pub const MEMCHAN_E_TABLE_FULL: c_int = 12;
/// The cluster's shared state was written by another protocol version.
pub const MEMCHAN_E_VERSION_MISMATCH: c_int = 13;
/// The cluster runs with another page size.
pub const MEMCHAN_E_PAGE_SIZE_MISMATCH: c_int = 14;
/// An acknowledgement did not complete.
pub const MEMCHAN_E_ACK_INCOMPLETE: c_int = 15;
/// A wait ran out of time.
pub const MEMCHAN_E_TIMEOUT: c_int = 16;
/// The hub refused the join.
pub const MEMCHAN_E_HUB_REFUSED: c_int = 17;
/// The link to the hub is lost.
pub const MEMCHAN_E_HUB_LOST: c_int = 18;
/// The transport does not offer this operation.
pub const MEMCHAN_E_UNSUPPORTED: c_int = 19;
/// An operating-system call failed.
pub const MEMCHAN_E_OS: c_int = 20;
/// A peer stopped making progress.
pub const MEMCHAN_E_STALLED: c_int = 21;
/// The page is not open to remote reads and atomics.
pub const MEMCHAN_E_REMOTE_READ_OFF: c_int = 22;
/// The target node does not map the segment rx.
pub const MEMCHAN_E_NOT_MAPPED: c_int = 23;
/// A strided or indexed shape that does not describe a deposit.
pub const MEMCHAN_E_BAD_SHAPE: c_int = 26;
/// The global clock is not synchronised yet.
pub const MEMCHAN_E_CLOCK_NOT_SYNCHRONISED: c_int = 30;
/// A message is longer than the receive buffer (it stays queued).
pub const MEMCHAN_E_TRUNCATED: c_int = 101;
/// The peer left or failed before the operation completed.
pub const MEMCHAN_E_PEER_GONE: c_int = 102;
/// A bad message-passing argument.
pub const MEMCHAN_E_MSG_INVALID: c_int = 103;
/// A peer broke the message protocol; it is treated as gone.
pub const MEMCHAN_E_PROTOCOL: c_int = 104;
/// A request that is not pending on this communicator.
pub const MEMCHAN_E_UNKNOWN_REQUEST: c_int = 105;
/// A panic caught at the C boundary: a bug in memchan.
pub const MEMCHAN_E_INTERNAL: c_int = -1;

/// What a code means, as a static string (never null; "unknown error code" for a code
/// memchan does not use).
#[no_mangle]
pub extern "C" fn memchan_strerror(code: c_int) -> *const c_char {
    let s: &'static CStr = match code {
        MEMCHAN_OK => c"success",
        MEMCHAN_E_OUT_OF_BOUNDS => c"past the end of the segment",
        MEMCHAN_E_UNALIGNED => c"unaligned atomic access",
        MEMCHAN_E_TRANSMIT_DISABLED => c"transmit disabled on this tx mapping",
        MEMCHAN_E_ISOLATED => c"isolated by the cluster",
        MEMCHAN_E_SEGMENT_FREED => c"segment freed",
        MEMCHAN_E_PERMISSION_DENIED => c"permission denied",
        MEMCHAN_E_UNKNOWN_SEGMENT => c"unknown segment",
        MEMCHAN_E_SEGMENT_SIZE_MISMATCH => c"segment exists with another size",
        MEMCHAN_E_UNKNOWN_NODE => c"unknown node",
        MEMCHAN_E_UNKNOWN_GROUP => c"unknown group",
        MEMCHAN_E_INVALID => c"invalid argument",
        MEMCHAN_E_TABLE_FULL => c"table full",
        MEMCHAN_E_VERSION_MISMATCH => c"protocol version mismatch",
        MEMCHAN_E_PAGE_SIZE_MISMATCH => c"page size mismatch",
        MEMCHAN_E_ACK_INCOMPLETE => c"acknowledgement incomplete",
        MEMCHAN_E_TIMEOUT => c"timed out",
        MEMCHAN_E_HUB_REFUSED => c"hub refused",
        MEMCHAN_E_HUB_LOST => c"hub lost",
        MEMCHAN_E_UNSUPPORTED => c"unsupported by this transport",
        MEMCHAN_E_OS => c"operating-system error",
        MEMCHAN_E_STALLED => c"stalled",
        MEMCHAN_E_REMOTE_READ_OFF => c"remote read off on this page",
        MEMCHAN_E_NOT_MAPPED => c"segment not mapped rx by the target",
        MEMCHAN_E_BAD_SHAPE => c"bad deposit shape",
        MEMCHAN_E_CLOCK_NOT_SYNCHRONISED => c"global clock not synchronised",
        MEMCHAN_E_TRUNCATED => c"message truncated",
        MEMCHAN_E_PEER_GONE => c"peer gone",
        MEMCHAN_E_MSG_INVALID => c"invalid message-passing argument",
        MEMCHAN_E_PROTOCOL => c"message protocol broken by a peer",
        MEMCHAN_E_UNKNOWN_REQUEST => c"unknown request",
        MEMCHAN_E_INTERNAL => c"internal error in memchan",
        _ => c"unknown error code",
    };
    s.as_ptr()
}

/// The message of this thread's last failed call: the call's name and what went
/// wrong (e.g. `memchan_tx_write: offset 4090 + length 8 is past the end of segment
/// ...`). Empty before any failure; valid until this thread's next failed call.
#[no_mangle]
pub extern "C" fn memchan_last_error() -> *const c_char {
    super::last_message()
}

#[cfg(test)]
mod tests {
    use super::*;
    use memchan::{Error, NodeId};

    /// The C constants are the Rust codes (the header promises it).
    #[test]
    fn codes_are_the_rust_codes() {
        let seg = || "s".to_owned();
        let pairs = [
            (
                Error::OutOfBounds {
                    segment: seg(),
                    offset: 0,
                    len: 0,
                    size: 0,
                },
                MEMCHAN_E_OUT_OF_BOUNDS,
            ),
            (
                Error::Unaligned {
                    segment: seg(),
                    offset: 0,
                    size: 8,
                },
                MEMCHAN_E_UNALIGNED,
            ),
            (
                Error::TransmitDisabled { segment: seg() },
                MEMCHAN_E_TRANSMIT_DISABLED,
            ),
            (
                Error::Isolated {
                    node: NodeId(0),
                    epoch: 0,
                },
                MEMCHAN_E_ISOLATED,
            ),
            (
                Error::SegmentFreed { segment: seg() },
                MEMCHAN_E_SEGMENT_FREED,
            ),
            (Error::UnknownSegment(seg()), MEMCHAN_E_UNKNOWN_SEGMENT),
            (Error::UnknownNode(NodeId(1)), MEMCHAN_E_UNKNOWN_NODE),
            (Error::UnknownGroup(seg()), MEMCHAN_E_UNKNOWN_GROUP),
            (
                Error::Invalid {
                    what: "x",
                    why: seg(),
                },
                MEMCHAN_E_INVALID,
            ),
            (Error::TableFull("nodes"), MEMCHAN_E_TABLE_FULL),
            (Error::Unsupported("x"), MEMCHAN_E_UNSUPPORTED),
            (Error::os("x", std::io::Error::other("y")), MEMCHAN_E_OS),
        ];
        for (e, c) in pairs {
            assert_eq!(e.code(), c, "{e}");
        }
        let gone = memchan_msg::MsgError::PeerGone(1);
        assert_eq!(gone.code(), MEMCHAN_E_PEER_GONE);
        assert_eq!(
            memchan_msg::MsgError::UnknownRequest.code(),
            MEMCHAN_E_UNKNOWN_REQUEST
        );
    }

    #[test]
    fn every_code_has_its_own_text() {
        let codes = [
            MEMCHAN_OK,
            MEMCHAN_E_OUT_OF_BOUNDS,
            MEMCHAN_E_INVALID,
            MEMCHAN_E_TIMEOUT,
            MEMCHAN_E_BAD_SHAPE,
            MEMCHAN_E_CLOCK_NOT_SYNCHRONISED,
            MEMCHAN_E_TRUNCATED,
            MEMCHAN_E_UNKNOWN_REQUEST,
            MEMCHAN_E_INTERNAL,
        ];
        let unknown = unsafe_text(memchan_strerror(12345));
        assert_eq!(unknown, "unknown error code");
        for c in codes {
            assert_ne!(unsafe_text(memchan_strerror(c)), unknown, "code {c}");
        }
    }

    fn unsafe_text(p: *const c_char) -> String {
        // SAFETY: memchan_strerror returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}
