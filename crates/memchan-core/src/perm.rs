//! Segment permissions: Unix-style owner / group / other bits, checked the same way
//! on every transport.

use crate::error::{Error, Result};

/// A segment's owner, group and mode, as the transport knows them: on one host those
/// of its permission object (kernel facts: the uid that created the segment), through
/// a hub those the hub recorded for its creator's join. Names are words any member
/// can write, so a member of another uid can make a segment under a name first;
/// an application that opens a segment by name checks its owner here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegOwner {
    /// The creator's uid.
    pub uid: u32,
    /// The segment's group.
    pub gid: u32,
    /// Its permission bits (`0o777`).
    pub mode: u32,
}

/// The caller (`caller_uid`, `caller_gid`) may `want` (4 read, 2 write) on a segment
/// owned by `uid`/`gid` with `mode`; root may do anything. `segment` and `op` name
/// the refusal.
pub fn check(
    (caller_uid, caller_gid): (u32, u32),
    (uid, gid, mode): (u32, u32, u32),
    want: u32,
    segment: &str,
    op: &'static str,
) -> Result<()> {
    if allows((caller_uid, caller_gid), (uid, gid, mode), want) {
        Ok(())
    } else {
        Err(Error::PermissionDenied {
            segment: segment.to_string(),
            op,
            uid,
            gid,
            mode,
            caller_uid,
        })
    }
}

/// Whether [`check`] would grant `want`: the rule alone, for callers that refuse
/// without an error (a destination that may not read, a journal writer that may not
/// write).
pub fn allows(
    (caller_uid, caller_gid): (u32, u32),
    (uid, gid, mode): (u32, u32, u32),
    want: u32,
) -> bool {
    let bits = if caller_uid == 0 {
        7
    } else if caller_uid == uid {
        (mode >> 6) & 7
    } else if caller_gid == gid {
        (mode >> 3) & 7
    } else {
        mode & 7
    };
    bits & want == want
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_group_other_and_root() {
        let seg = (1000, 100, 0o640);
        assert!(check((1000, 5), seg, 6, "s", "map_tx").is_ok(), "owner rw");
        assert!(check((2000, 100), seg, 4, "s", "map_rx").is_ok(), "group r");
        assert!(
            check((2000, 100), seg, 2, "s", "map_tx").is_err(),
            "group not w"
        );
        assert!(
            check((2000, 5), seg, 4, "s", "map_rx").is_err(),
            "other nothing"
        );
        assert!(check((0, 0), seg, 6, "s", "map_tx").is_ok(), "root");
        match check((2000, 5), seg, 4, "seg", "map_rx") {
            Err(Error::PermissionDenied {
                segment,
                caller_uid,
                mode,
                ..
            }) => assert_eq!((segment.as_str(), caller_uid, mode), ("seg", 2000, 0o640)),
            other => panic!("{other:?}"),
        }
    }
}
