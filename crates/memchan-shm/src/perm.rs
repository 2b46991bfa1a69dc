//! Segment permissions on one host, kept by the kernel. Each segment has a
//! **permission object**: a zero-length file `/dev/shm/memchan.<cluster>.s<seg>.g<gen>.perm`
//! (`local::perm_name`) that the segment's creator makes with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` and the segment's mode, so its owner, group and mode are
//! the segment's and only its owner (or root) can change or remove it. Nothing about
//! permissions is read from the control block, which every member can write.
//!
//! A node that opens the segment keeps the object open ([`SegPerm`], in every
//! `SegRef`) with its `fstat`; `map_rx` must be able to open it for reading and
//! `map_tx` for writing (the kernel decides, root passes as always), `free` needs the
//! object's owner or root. The same facts decide, where no open can be tried, who may
//! read a destination's receive memory (its file's owner and group) and who may have
//! written a journal record (its journal object's owner and group): see `order.rs`.

use crate::shm::ShmMap;
use memchan_core::{Error, Result};
use rustix::fd::OwnedFd;
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

/// An open permission object and what `fstat` said about it when it was opened.
#[derive(Debug)]
pub(crate) struct SegPerm {
    /// Its name under /dev/shm.
    name: String,
    /// Held for the life of the segment handle: the inode cannot be reused meanwhile,
    /// so [`access`](Self::access) can tell it still opens the same object.
    _fd: OwnedFd,
    pub uid: u32,
    pub gid: u32,
    /// Permission bits (`0o777`).
    pub mode: u32,
    dev: u64,
    ino: u64,
}

impl SegPerm {
    /// Creates the permission object `name` for a new segment with `mode`, owned by
    /// this process. A leftover of the same name (a cluster of that name that
    /// crashed) is removed first; one this process may not remove (another user's:
    /// /dev/shm is sticky) is refused.
    pub(crate) fn create(name: &str, mode: u32) -> Result<SegPerm> {
        let path = path(name);
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut fd = rustix::fs::open(path.as_str(), flags, Mode::from_raw_mode(mode & 0o777));
        if matches!(fd, Err(Errno::EXIST)) {
            ShmMap::unlink(name);
            fd = rustix::fs::open(path.as_str(), flags, Mode::from_raw_mode(mode & 0o777));
        }
        let fd = fd.map_err(|e| match e {
            Errno::EXIST => Error::Invalid {
                what: "permission object",
                why: format!("{path} exists and is not this uid's to replace (squatted?)"),
            },
            e => Error::os(format!("create {path}"), e),
        })?;
        // open applies the umask; the object's mode is the segment's.
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode & 0o777))
            .map_err(|e| Error::os(format!("fchmod {path}"), e))?;
        Self::from_fd(name, fd)
    }

    /// Opens the permission object `name` of an existing segment, following no
    /// symbolic link. `O_PATH`: opening it needs no permission on the object itself,
    /// so every member can hold a segment handle and be told what it may do.
    pub(crate) fn open(name: &str) -> Result<SegPerm> {
        let path = path(name);
        let fd = rustix::fs::open(
            path.as_str(),
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| Error::os(format!("open {path}"), e))?;
        Self::from_fd(name, fd)
    }

    fn from_fd(name: &str, fd: OwnedFd) -> Result<SegPerm> {
        let st = rustix::fs::fstat(&fd).map_err(|e| Error::os(format!("fstat /{name}"), e))?;
        // With O_PATH|O_NOFOLLOW a symbolic link opens as itself: refused here.
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(Error::Invalid {
                what: "permission object",
                why: format!("{} is not a regular file", path(name)),
            });
        }
        Ok(SegPerm {
            name: name.to_string(),
            _fd: fd,
            uid: st.st_uid,
            gid: st.st_gid,
            mode: st.st_mode & 0o777,
            dev: st.st_dev,
            ino: st.st_ino,
        })
    }

    /// Whether this process may `want` (4 read, 2 write) on the segment: the kernel
    /// opens the object with that access or refuses (`EACCES`), checking this
    /// process's uid, gid and supplementary groups against the object's owner, group
    /// and mode as they are now. `segment` and `op` name the refusal; `caller_uid`
    /// goes in it.
    pub(crate) fn access(
        &self,
        want: u32,
        segment: &str,
        op: &'static str,
        caller_uid: u32,
    ) -> Result<()> {
        let access = match want & 6 {
            6 => OFlags::RDWR,
            2 => OFlags::WRONLY,
            _ => OFlags::RDONLY,
        };
        let path = path(&self.name);
        let freed = || Error::SegmentFreed {
            segment: segment.to_string(),
        };
        let fd = match rustix::fs::open(
            path.as_str(),
            access | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::ACCESS | Errno::PERM) => {
                return Err(Error::PermissionDenied {
                    segment: segment.to_string(),
                    op,
                    uid: self.uid,
                    gid: self.gid,
                    mode: self.mode,
                    caller_uid,
                })
            }
            // Removed (the segment was freed) or replaced by a link.
            Err(Errno::NOENT | Errno::LOOP) => return Err(freed()),
            Err(e) => return Err(Error::os(format!("open {path}"), e)),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| Error::os(format!("fstat {path}"), e))?;
        // Another object under the name: ours was unlinked, so the segment was freed.
        if (st.st_dev, st.st_ino) != (self.dev, self.ino) {
            return Err(freed());
        }
        Ok(())
    }

    /// Whether a process of `uid` and `gid` may `want` on the segment, by the rule of
    /// `memchan_core::perm` over this object's owner, group and mode. For parties that
    /// are not this process, known only by the owner and group of a file they made.
    pub(crate) fn allows(&self, (uid, gid): (u32, u32), want: u32) -> bool {
        memchan_core::perm::allows((uid, gid), (self.uid, self.gid, self.mode), want)
    }

    /// The object's inode: which permission object this is, whatever its name.
    pub(crate) fn ino(&self) -> u64 {
        self.ino
    }

    /// The object's name, to unlink it when the segment is freed.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

fn path(name: &str) -> String {
    format!("/dev/shm/{name}")
}

/// The owner and group of an object under /dev/shm, without opening or following it,
/// if it is a regular file (for `memchan status`, which holds no segment handle).
pub(crate) fn stat_owner(name: &str) -> Option<(u32, u32, u32)> {
    let st = rustix::fs::statat(
        rustix::fs::CWD,
        path(name).as_str(),
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
    )
    .ok()?;
    (FileType::from_raw_mode(st.st_mode) == FileType::RegularFile).then_some((
        st.st_uid,
        st.st_gid,
        st.st_mode & 0o777,
    ))
}
