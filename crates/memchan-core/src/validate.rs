//! Every argument check of the contract, written once: both transports call these
//! before they act, and the hub calls them again on every request it receives (it
//! never trusts a node to have checked). The cluster's fixed limits live here too.
//!
//! ```
//! use memchan_core::{validate, Error, NodeId, NodeSet};
//! assert!(validate::segment_name("inbox").is_ok());
//! assert!(matches!(validate::segment_name("../../etc/passwd"), Err(Error::Invalid { .. })));
//! let members: NodeSet = [NodeId(0), NodeId(1)].into_iter().collect();
//! assert!(matches!(validate::node(NodeId(300), &members), Err(Error::UnknownNode(NodeId(300)))));
//! ```

use crate::attr::Dest;
use crate::error::{Error, Result};
use crate::names::{GroupId, NodeId, NodeSet, MAX_GROUPS};

/// The most segments one cluster may hold (each cluster lock uses one).
pub const MAX_SEGMENTS: usize = 256;
/// The longest segment, group or lock name, in bytes.
pub const NAME_LEN: usize = 64;
/// The longest cluster name, in bytes.
pub const CLUSTER_NAME_LEN: usize = 48;
/// The largest segment, in bytes (16 GiB).
pub const MAX_SEGMENT_SIZE: usize = 1 << 34;
/// Permission bits a segment's mode may carry (no setuid, setgid or sticky bits).
pub const MODE_BITS: u32 = 0o777;
/// How many membership events a node keeps for its reader; one further behind skips
/// to the oldest kept (the same on every transport).
pub const EVENT_RING: usize = 128;
/// Segment names starting with this are memchan's own (cluster lock pages).
pub const RESERVED_PREFIX: char = '_';
/// The segment of the cluster lock `name` is `LOCK_PREFIX` + `name`.
pub const LOCK_PREFIX: &str = "_lock.";

/// The words an [`Error::Invalid`] may name, so a refusal that crossed the network
/// is rebuilt with the same `what` (see [`what_from`]).
pub const WHATS: &[&str] = &[
    "cluster name",
    "segment name",
    "segment size",
    "segment mode",
    "group name",
    "group members",
    "group barrier",
    "lock name",
    "rx mapping",
    "group",
    "request",
];

/// The `&'static` entry of [`WHATS`] equal to `s` (`"request"` if none is).
pub fn what_from(s: &str) -> &'static str {
    WHATS
        .iter()
        .find(|w| **w == s)
        .copied()
        .unwrap_or("request")
}

fn name(what: &'static str, name: &str, max: usize) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= max
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && name != "."
        && name != "..";
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid {
            what,
            why: format!(
                "`{}`: use 1..={max} characters of [A-Za-z0-9._-]",
                name.escape_debug()
            ),
        })
    }
}

/// A cluster name: 1..=48 characters of `[A-Za-z0-9._-]`.
///
/// # Errors
/// [`Error::Invalid`] (`"cluster name"`).
pub fn cluster_name(n: &str) -> Result<()> {
    name("cluster name", n, CLUSTER_NAME_LEN)
}

/// A segment name an application chose: 1..=64 characters of `[A-Za-z0-9._-]`, not
/// starting with `_` (memchan's own segments).
///
/// # Errors
/// [`Error::Invalid`] (`"segment name"`).
pub fn segment_name(n: &str) -> Result<()> {
    name("segment name", n, NAME_LEN)?;
    if n.starts_with(RESERVED_PREFIX) {
        return Err(Error::Invalid {
            what: "segment name",
            why: format!("`{n}`: names starting with `_` are memchan's own"),
        });
    }
    Ok(())
}

/// The segment name of the cluster lock `n` (`_lock.` + `n`, at most 64 bytes).
///
/// # Errors
/// [`Error::Invalid`] (`"lock name"`).
pub fn lock_segment(n: &str) -> Result<String> {
    name("lock name", n, NAME_LEN - LOCK_PREFIX.len())?;
    Ok(format!("{LOCK_PREFIX}{n}"))
}

/// A segment name as the cluster stores it: an application's name, or a lock page's
/// (`lock` says which the request claims to be). The hub checks every request so.
///
/// # Errors
/// [`Error::Invalid`] (`"segment name"` or `"lock name"`).
pub fn stored_segment_name(n: &str, lock: bool) -> Result<()> {
    match (lock, n.strip_prefix(LOCK_PREFIX)) {
        (true, Some(rest)) => lock_segment(rest).map(drop),
        (true, None) => Err(Error::Invalid {
            what: "lock name",
            why: format!("`{}` is not a lock page's name", n.escape_debug()),
        }),
        (false, _) => segment_name(n),
    }
}

/// A segment size to create: 1 byte ..= 16 GiB (rounded up to pages afterwards).
///
/// # Errors
/// [`Error::Invalid`] (`"segment size"`).
pub fn segment_size(size: u64) -> Result<()> {
    if size == 0 || size > MAX_SEGMENT_SIZE as u64 {
        return Err(Error::Invalid {
            what: "segment size",
            why: format!("{size} bytes: must be 1 byte ..= 16 GiB"),
        });
    }
    Ok(())
}

/// A segment's mode: permission bits only (`0o777`).
///
/// # Errors
/// [`Error::Invalid`] (`"segment mode"`).
pub fn mode(mode: u32) -> Result<()> {
    if mode & !MODE_BITS != 0 {
        return Err(Error::Invalid {
            what: "segment mode",
            why: format!("{mode:o}: only permission bits (0o777) are allowed"),
        });
    }
    Ok(())
}

/// A group name: 1..=64 characters of `[A-Za-z0-9._-]`.
///
/// # Errors
/// [`Error::Invalid`] (`"group name"`).
pub fn group_name(n: &str) -> Result<()> {
    name("group name", n, NAME_LEN)
}

/// A node id naming a live member (ids past the node table are not members either).
///
/// # Errors
/// [`Error::UnknownNode`].
pub fn node(n: NodeId, members: &NodeSet) -> Result<()> {
    if members.contains(n) {
        Ok(())
    } else {
        Err(Error::UnknownNode(n))
    }
}

/// A group id inside the group table (whether the group exists is the transport's
/// to say, with the same error).
///
/// # Errors
/// [`Error::UnknownGroup`].
pub fn group_id(g: GroupId) -> Result<()> {
    if g.index() < MAX_GROUPS {
        Ok(())
    } else {
        Err(unknown_group(g))
    }
}

/// The error for a group id that names no group.
pub fn unknown_group(g: GroupId) -> Error {
    Error::UnknownGroup(format!("#{}", g.0))
}

/// A new group's members: at least one, each a live member.
///
/// # Errors
/// [`Error::Invalid`] (`"group members"`) for an empty list, [`Error::UnknownNode`]
/// for an id that is not a member.
pub fn group_members(list: &[NodeId], members: &NodeSet) -> Result<NodeSet> {
    if list.is_empty() {
        return Err(Error::Invalid {
            what: "group members",
            why: "a group needs at least one member".into(),
        });
    }
    let mut set = NodeSet::EMPTY;
    for &n in list {
        node(n, members)?;
        set.insert(n);
    }
    Ok(set)
}

/// A tx mapping's destination, before the transport looks up a group: a node must be
/// a member, a group id inside the table.
///
/// # Errors
/// [`Error::UnknownNode`] or [`Error::UnknownGroup`].
pub fn dest(d: Dest, members: &NodeSet) -> Result<()> {
    match d {
        Dest::Node(n) => node(n, members),
        Dest::Group(g) => group_id(g),
        Dest::Broadcast => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_findings_bad_names_are_refused() {
        for bad in ["", "../../etc/passwd", "a/b", ".", "..", "sp ace", "_mine"] {
            assert!(segment_name(bad).is_err(), "{bad:?}");
        }
        assert!(segment_name(&"x".repeat(65)).is_err());
        assert!(segment_name(&"x".repeat(64)).is_ok());
        assert!(cluster_name(&"c".repeat(49)).is_err());
        assert!(cluster_name("a/b").is_err());
        assert_eq!(lock_segment("counter").unwrap(), "_lock.counter");
        assert!(lock_segment(&"l".repeat(59)).is_err());
        assert!(stored_segment_name("_lock.counter", true).is_ok());
        assert!(stored_segment_name("_lock.counter", false).is_err());
        assert!(stored_segment_name("plain", true).is_err());
    }

    #[test]
    fn sizes_modes_ids() {
        assert!(segment_size(0).is_err());
        assert!(segment_size((1 << 34) + 1).is_err());
        assert!(segment_size(u64::MAX).is_err());
        assert!(segment_size(1 << 34).is_ok());
        assert!(mode(0o1777).is_err());
        assert!(mode(0o777).is_ok());
        let m: NodeSet = [NodeId(0), NodeId(2)].into_iter().collect();
        assert!(matches!(node(NodeId(1), &m), Err(Error::UnknownNode(_))));
        assert!(matches!(node(NodeId(999), &m), Err(Error::UnknownNode(_))));
        assert!(matches!(
            dest(Dest::Group(GroupId(99)), &m),
            Err(Error::UnknownGroup(_))
        ));
        assert!(group_members(&[], &m).is_err());
        assert!(matches!(
            group_members(&[NodeId(0), NodeId(250)], &m),
            Err(Error::UnknownNode(_))
        ));
        assert_eq!(group_members(&[NodeId(2)], &m).unwrap().len(), 1);
        assert_eq!(what_from("segment mode"), "segment mode");
        assert_eq!(what_from("anything else"), "request");
    }
}
