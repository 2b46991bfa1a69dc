//! The library's own area of the heap segment, past the user's heap (so
//! `SHMEM_SYMMETRIC_SIZE` is all the user's): at the same offset on every PE, never
//! handed out by `shmem_malloc`.
//!
//! ```text
//! offset   0  PSYNC    16 words: the pSync of the team collectives (SHMEM_TEAM_WORLD)
//!        128  SIZES    MAX_NODES words: collect's element counts, slot = world rank
//! ```

use memchan::MAX_NODES;

/// The team collectives' sync words (as a user's pSync array).
pub const PSYNC: usize = 0;
/// Where each PE deposits its byte count for `collect`, by world rank.
pub const SIZES: usize = 128;
/// The whole area, in pages (the static data follows it).
pub const LEN: usize = (SIZES + 8 * MAX_NODES).next_multiple_of(4096);
