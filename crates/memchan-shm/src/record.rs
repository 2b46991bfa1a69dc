//! The journal object: where a holder of the point of global order journals its
//! packet in flight (`memchan_core::journal`'s `state` and `progress` words and the
//! record: segment, generation, offset, destinations, payload). One per node that has
//! sent an ordered packet, `/dev/shm/memchan.<cluster>.n<node>.i<incarnation>.journal`
//! (`local::journal_name`), created by that node (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode
//! 0600) on its first ordered packet and removed with its other files.
//!
//! Why not in the control block, which every member can write: a survivor finishes a
//! dead holder's record in other nodes' receive memory, so the record must say, by a
//! fact the kernel keeps, who wrote it. Only its owner (or root) can write an object of
//! mode 0600, so its owner and group are the writer's, and a survivor finishes the
//! record only if they may write the segment (`order.rs`, `Order::recover`). Mode 0600
//! also means no other uid reads a payload, in flight or not; the holder zeroes the
//! payload before it marks the packet done, so not even its own uid finds a finished
//! packet's bytes here.
//!
//! # Layout
//!
//! ```text
//!  0       8       12         16    20        24    28    32       40            72
//!  +-------+-------+----------+-----+---------+-----+-----+--------+-------------+-------------+
//!  | magic | state | progress | seg | seg_gen | len | op  | offset | dests       | payload     |
//!  |       |  u32  |   u32    | u32 |   u32   | u32 |     |  u64   | 256-bit set | 8 KiB       |
//!  +-------+-------+----------+-----+---------+-----+-----+--------+-------------+-------------+
//!  fields are atomics; the payload is written and read with the packet store
//!  (`memchan_core::packet`), as receive memory is;
//!  magic "MCJOURN\0"
//! ```

use crate::control::MAX_PACKET;
use crate::shm::{Open, ShmMap};
use memchan_core::sync::{AtomicU32, AtomicU64, Ordering};
use memchan_core::{Error, Result, MAX_NODES};
use rustix::io::Errno;

const JOURNAL_MAGIC: u64 = u64::from_le_bytes(*b"MCJOURN\0");

/// The journal object's contents.
#[repr(C, align(64))]
pub(crate) struct Record {
    pub magic: AtomicU64,
    /// `memchan_core::journal::IDLE` or `APPLYING`.
    pub state: AtomicU32,
    /// Destinations applied so far (count, in order).
    pub progress: AtomicU32,
    /// Segment index of the packet.
    pub seg: AtomicU32,
    pub seg_gen: AtomicU32,
    pub len: AtomicU32,
    /// 0: the payload is written at `offset`; else a word operation on the 8-byte
    /// word there, its operands the payload (`rx::WordOp::encode`).
    pub op: AtomicU32,
    pub offset: AtomicU64,
    /// Destinations, applied in increasing node order.
    pub dests: [AtomicU64; MAX_NODES / 64],
    pub data: [AtomicU64; MAX_PACKET / 8],
}

/// A journal object mapped in this process: this node's own (read-write), or a failed
/// holder's, opened by a survivor (read-write if the survivor may, else read-only).
pub(crate) struct JournalObject {
    map: ShmMap,
    /// Its owner and group (`fstat`): the writer of its record.
    pub owner: (u32, u32),
    /// Mapped read-write: the survivor may mark a finished record IDLE and zero it.
    pub writable: bool,
}

impl JournalObject {
    /// Creates this node's journal object `name`. A leftover of the same name (a
    /// cluster of that name that crashed) is removed first; one this process may not
    /// remove (another user's) is refused.
    pub(crate) fn create(name: &str) -> Result<JournalObject> {
        let create = || Open::Create {
            len: std::mem::size_of::<Record>(),
            mode: 0o600,
        };
        let fd = match ShmMap::open_fd(name, &create()) {
            Err(e) if errno(&e) == Some(Errno::EXIST) => {
                ShmMap::unlink(name);
                ShmMap::open_fd(name, &create()).map_err(|e| match errno(&e) {
                    Some(Errno::EXIST) => Error::Invalid {
                        what: "journal object",
                        why: format!(
                            "/dev/shm/{name} exists and is not this uid's to replace (squatted?)"
                        ),
                    },
                    _ => e,
                })?
            }
            r => r?,
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| Error::os("fstat journal object", e))?;
        let map = ShmMap::map_opened(fd, name, create())?;
        let j = JournalObject {
            map,
            owner: (st.st_uid, st.st_gid),
            writable: true,
        };
        j.record().magic.store(JOURNAL_MAGIC, Ordering::Release);
        Ok(j)
    }

    /// Opens a failed holder's journal object `name`: `Ok(None)` if there is none (the
    /// node never sent an ordered packet, so it has nothing in flight). Refused unless
    /// it is a regular file that no one but its owner (and root) can write, of the
    /// right size and magic: otherwise its owner would not say who wrote it.
    pub(crate) fn open_failed(name: &str) -> Result<Option<JournalObject>> {
        let (fd, how) = match ShmMap::open_fd(name, &Open::Existing) {
            Ok(fd) => (fd, Open::Existing),
            Err(e) if errno(&e) == Some(Errno::NOENT) => return Ok(None),
            Err(e) if errno(&e) == Some(Errno::ACCESS) => {
                match ShmMap::open_fd(name, &Open::ReadOnly) {
                    Ok(fd) => (fd, Open::ReadOnly),
                    Err(e) if errno(&e) == Some(Errno::NOENT) => return Ok(None),
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| Error::os("fstat journal object", e))?;
        let bad = |why: String| Error::Invalid {
            what: "journal object",
            why: format!("/dev/shm/{name} {why}"),
        };
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(bad("is not a regular file".into()));
        }
        if st.st_mode & 0o022 != 0 {
            return Err(bad(format!(
                "has mode {:o}: others than its owner can write it",
                st.st_mode & 0o7777
            )));
        }
        if (st.st_size as usize) < std::mem::size_of::<Record>() {
            return Err(bad(format!("is {} bytes long", st.st_size)));
        }
        let writable = matches!(how, Open::Existing);
        let j = JournalObject {
            map: ShmMap::map_opened(fd, name, how)?,
            owner: (st.st_uid, st.st_gid),
            writable,
        };
        if j.record().magic.load(Ordering::Acquire) != JOURNAL_MAGIC {
            return Err(bad("has no journal header".into()));
        }
        Ok(Some(j))
    }

    /// The record. Read-only mappings are only ever loaded from (`writable`).
    pub(crate) fn record(&self) -> &Record {
        // SAFETY: the mapping holds a whole `Record` (created at that size, or checked
        // on open), page-aligned, lives as long as `self`; every field is an atomic.
        unsafe { &*(self.map.ptr() as *const Record) }
    }
}

impl Record {
    /// Stores `data` (≤ `MAX_PACKET` bytes) as the payload, with the packet store.
    #[inline]
    pub(crate) fn store_payload(&self, data: &[u8]) {
        assert!(data.len() <= MAX_PACKET);
        // SAFETY: the payload words are MAX_PACKET writable bytes of this mapping,
        // reached only through atomics.
        unsafe { memchan_core::packet::store(self.data.as_ptr() as *mut u8, data) };
    }

    /// The first `len` (≤ `MAX_PACKET`) bytes of the payload.
    pub(crate) fn load_payload(&self, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len.min(MAX_PACKET)];
        // SAFETY: at most MAX_PACKET bytes of the payload words, reached only through
        // atomics.
        unsafe { memchan_core::packet::load(self.data.as_ptr() as *const u8, &mut out) };
        out
    }

    /// Zeroes the first `len` bytes of the payload (all of it if `len` is larger).
    #[inline]
    pub(crate) fn clear_payload(&self, len: usize) {
        static ZEROS: [u8; MAX_PACKET] = [0; MAX_PACKET];
        self.store_payload(&ZEROS[..len.min(MAX_PACKET)]);
    }
}

/// The errno of an `Error::Os`.
fn errno(e: &Error) -> Option<Errno> {
    match e {
        Error::Os { source, .. } => source.raw_os_error().map(Errno::from_raw_os_error),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_the_diagram() {
        use std::mem::offset_of;
        assert_eq!(offset_of!(Record, offset), 32);
        assert_eq!(offset_of!(Record, dests), 40);
        assert_eq!(offset_of!(Record, data), 72);
    }

    #[test]
    fn payload_roundtrips_through_words_and_clears() {
        let name = format!("memchan.rec-{}.n0.i1.journal", std::process::id());
        let j = JournalObject::create(&name).unwrap();
        let r = j.record();
        let data: Vec<u8> = (0..13u8).collect();
        r.store_payload(&data);
        assert_eq!(r.load_payload(13), data);
        r.clear_payload(13);
        assert!(r.data.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        let mode = std::fs::metadata(format!("/dev/shm/{name}")).unwrap();
        ShmMap::unlink(&name);
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o600
        );
    }
}
