//! POSIX shared-memory objects mapped into this process: the one place memchan-shm
//! calls `shm_open` and `mmap`.

use memchan_core::{Error, Result};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::Mode;
use rustix::fs::OFlags;
use rustix::mm::{MapFlags, ProtFlags};
use rustix::shm;
use std::ptr::NonNull;

/// Where POSIX shared-memory objects live on Linux.
const SHM_DIR: &str = "/dev/shm";

/// A mapped shared-memory object. Unmapped on drop; the name stays until [`unlink`].
pub(crate) struct ShmMap {
    ptr: NonNull<u8>,
    len: usize,
    fd: OwnedFd,
}

// SAFETY: the mapping is plain memory shared with other processes; every access to it
// goes through atomics or through copies whose ordering the callers establish, so
// sharing the handle between threads adds nothing a second process does not.
unsafe impl Send for ShmMap {}
// SAFETY: as above; `ShmMap` itself has no interior state besides the mapping.
unsafe impl Sync for ShmMap {}

/// How to open a shared-memory object.
pub(crate) enum Open {
    /// Create it; fail if it exists.
    Create { len: usize, mode: u32 },
    /// Open an existing one of whatever length it has.
    Existing,
    /// Open an existing one to read only (status).
    ReadOnly,
}

impl ShmMap {
    /// Opens (or creates) `/name` and maps it read-write, shared.
    ///
    /// Opened as `/dev/shm/name` with `O_NOFOLLOW | O_CLOEXEC` (what glibc's
    /// `shm_open` does; rustix's `shm::open` adds no `O_NOFOLLOW`): a symbolic link
    /// planted in /dev/shm is refused (ELOOP), never followed.
    pub(crate) fn open(name: &str, how: Open) -> Result<ShmMap> {
        let fd = Self::open_fd(name, &how)?;
        Self::map_opened(fd, name, how)
    }

    /// The descriptor of `/name`, opened as [`open`](Self::open) does, not mapped yet.
    pub(crate) fn open_fd(name: &str, how: &Open) -> Result<OwnedFd> {
        let path = format!("{SHM_DIR}/{name}");
        let base = OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let (flags, mode) = match how {
            Open::Create { mode, .. } => (
                base | OFlags::CREATE | OFlags::EXCL | OFlags::RDWR,
                Mode::from_raw_mode(*mode & 0o777),
            ),
            Open::Existing => (base | OFlags::RDWR, Mode::empty()),
            Open::ReadOnly => (base | OFlags::RDONLY, Mode::empty()),
        };
        rustix::fs::open(path.as_str(), flags, mode)
            .map_err(|e| Error::os(format!("shm_open /{name}"), e))
    }

    /// Sizes (when created) and maps a descriptor from [`open_fd`](Self::open_fd).
    pub(crate) fn map_opened(fd: OwnedFd, name: &str, how: Open) -> Result<ShmMap> {
        let path = format!("/{name}");
        let prot = match how {
            Open::ReadOnly => ProtFlags::READ,
            _ => ProtFlags::READ | ProtFlags::WRITE,
        };
        let len = match how {
            Open::Create { len, mode } => {
                // open applies the umask; the object's mode is the one asked for.
                rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))
                    .map_err(|e| Error::os(format!("fchmod {path}"), e))?;
                rustix::fs::ftruncate(&fd, len as u64)
                    .map_err(|e| Error::os(format!("ftruncate {path}"), e))?;
                len
            }
            Open::Existing | Open::ReadOnly => {
                rustix::fs::fstat(&fd)
                    .map_err(|e| Error::os(format!("fstat {path}"), e))?
                    .st_size as usize
            }
        };
        Self::map(fd, len, prot, &path)
    }

    /// A page of anonymous shared memory (`memfd_create`) named `name`, mapped here:
    /// a node's presence mark. `/proc/<pid>/maps` shows the mapping as
    /// `/memfd:<name> (deleted)`, and no other process can make this one map a memfd
    /// of a chosen name, so other nodes read it as this process's claim to be that
    /// node. Gone with the mapping; nothing in `/dev/shm` to clean up.
    pub(crate) fn memfd(name: &str) -> Result<ShmMap> {
        Self::memfd_sized(name, memchan_core::PageSize::K4.bytes(), ProtFlags::READ)
    }

    /// `len` bytes of anonymous shared memory (`memfd_create`) named `name`, mapped
    /// here with `prot`: memory no other process can open by a name.
    pub(crate) fn memfd_sized(name: &str, len: usize, prot: ProtFlags) -> Result<ShmMap> {
        let fd = rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::CLOEXEC)
            .map_err(|e| Error::os(format!("memfd_create {name}"), e))?;
        rustix::fs::ftruncate(&fd, len as u64)
            .map_err(|e| Error::os(format!("ftruncate memfd {name}"), e))?;
        Self::map(fd, len, prot, name)
    }

    fn map(fd: OwnedFd, len: usize, prot: ProtFlags, what: &str) -> Result<ShmMap> {
        if len == 0 {
            return Err(Error::Invalid {
                what: "shared memory object",
                why: format!("{what} has length 0 (its creator has not sized it yet)"),
            });
        }
        // SAFETY: a fresh mapping chosen by the kernel (null hint), of a file we hold
        // open; nothing else in this process aliases it yet.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                MapFlags::SHARED | MapFlags::POPULATE,
                &fd,
                0,
            )
        }
        .map_err(|e| Error::os(format!("mmap {what}"), e))?;
        // Resident memory (docs/spec.md, Concepts: rx mappings are not swapped). Failure
        // (RLIMIT_MEMLOCK for non-root) only costs residency, so it is not an error.
        // SAFETY: the range is the mapping just made.
        let _ = unsafe { rustix::mm::mlock(ptr, len) };
        Ok(ShmMap {
            ptr: NonNull::new(ptr.cast()).expect("mmap returned null"),
            len,
            fd,
        })
    }

    /// Removes `/name` from the namespace; mappings stay valid.
    pub(crate) fn unlink(name: &str) {
        let _ = shm::unlink(format!("/{name}").as_str());
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn fd(&self) -> impl AsFd + '_ {
        self.fd.as_fd()
    }
}

impl Drop for ShmMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`; callers hold an `Arc` to
        // this map for as long as they hold pointers into it.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
