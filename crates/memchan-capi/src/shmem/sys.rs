//! The library's own area of the heap segment, past the user's heap (so
//! `SHMEM_SYMMETRIC_SIZE` is all the user's): at the same offset on every PE, never
//! handed out by `shmem_malloc`.
//!
//! ```text
//! offset   0  PSYNC    64 blocks of 16 words: the pSync of the team collectives,
//!                      block 0 SHMEM_TEAM_WORLD/SHARED, 1..=63 the split teams
//!       8192  SIZES    MAX_NODES words, slot = world rank: collect's byte counts,
//!                      and a split's free-block masks (`SCRATCH`)
//! ```

use memchan::MAX_NODES;

/// The team collectives' sync words (as a user's pSync array), a block per team.
pub const PSYNC: usize = 0;
/// The bytes of one team's pSync block.
pub const PSYNC_BLOCK: usize = 128;
/// Where each PE deposits its byte count for `collect`, by world rank.
pub const SIZES: usize = PSYNC + PSYNC_BLOCK * (1 + super::team::SLOTS);
/// The same words as a split's: each parent member's mask of free team blocks. A
/// split and a collect never overlap on a PE (each runs between barriers of its
/// own, one collective at a time).
pub const SCRATCH: usize = SIZES;
/// The whole area, in pages (the static data follows it).
pub const LEN: usize = (SIZES + 8 * MAX_NODES).next_multiple_of(4096);
