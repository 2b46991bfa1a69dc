//! The symmetric heap's bookkeeping: which offsets of the heap segment are allocated.
//! Every PE runs the same deterministic first-fit over the same calls in the same
//! order (OpenSHMEM requires that of a program), so an allocation gets the same
//! offset on every PE and an address means the same object everywhere.

use std::collections::BTreeMap;

/// Every block starts on this boundary: enough for any C scalar (`long double`,
/// 16-byte atomics) and for memchan's aligned 8-byte words.
pub const ALIGN: usize = 16;

/// Default heap size when `SHMEM_SYMMETRIC_SIZE` is unset: 256 MiB (what benchmark
/// suites expect); the pages are shared memory, touched only when used.
pub const DEFAULT_SIZE: usize = 256 << 20;

/// The allocated blocks of a heap of `size` bytes, offset -> length.
pub struct Heap {
    size: usize,
    used: BTreeMap<usize, usize>,
}

impl Heap {
    pub fn new(size: usize) -> Heap {
        Heap {
            size,
            used: BTreeMap::new(),
        }
    }

    /// The offset of a new block of `len` bytes (at least 1), first fit; `None` when
    /// no gap is large enough. (The library asks through `alloc_aligned`.)
    #[cfg(test)]
    pub fn alloc(&mut self, len: usize) -> Option<usize> {
        self.alloc_aligned(len, ALIGN)
    }

    /// As [`alloc`](Self::alloc), the block starting on a multiple of `align` (a
    /// power of two; at least [`ALIGN`]); `None` also for a bad `align`.
    pub fn alloc_aligned(&mut self, len: usize, align: usize) -> Option<usize> {
        if !align.is_power_of_two() {
            return None;
        }
        let align = align.max(ALIGN);
        let len = len.max(1).checked_next_multiple_of(ALIGN)?;
        let mut at = 0;
        for (&off, &l) in &self.used {
            if off >= at && off - at >= len {
                break;
            }
            at = (off + l).checked_next_multiple_of(align)?;
        }
        if self.size.checked_sub(at)? < len {
            return None;
        }
        self.used.insert(at, len);
        Some(at)
    }

    /// The length of the block at `off` (rounded up to [`ALIGN`]), if one starts there.
    pub fn block_len(&self, off: usize) -> Option<usize> {
        self.used.get(&off).copied()
    }

    /// Frees the block at `off`; false when no block starts there.
    pub fn free(&mut self, off: usize) -> bool {
        self.used.remove(&off).is_some()
    }
}

/// Parses `SHMEM_SYMMETRIC_SIZE` as the standard gives it: a non-negative integer or
/// floating-point number with an optional `K`, `M`, `G` or `T` suffix (powers of 1024,
/// either case), `1.5G` included; rounded down to a byte. Zero is refused (a heap
/// must hold something), as is anything that does not fit.
pub fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (number, shift) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 10),
        b'm' | b'M' => (&s[..s.len() - 1], 20),
        b'g' | b'G' => (&s[..s.len() - 1], 30),
        b't' | b'T' => (&s[..s.len() - 1], 40),
        _ => (s, 0),
    };
    let bytes = if let Ok(n) = number.parse::<usize>() {
        n.checked_mul(1usize << shift)?
    } else {
        // Digits and one point only: `f64::from_str` would take "inf" and "1e3".
        if !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return None;
        }
        let v = number.parse::<f64>().ok()? * (1u64 << shift) as f64;
        if v >= usize::MAX as f64 {
            return None;
        }
        v as usize
    };
    Some(bytes).filter(|&v| v > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size("2m"), Some(2 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("1.5G"), Some(3 << 29));
        assert_eq!(parse_size("0.5k"), Some(512));
        assert_eq!(parse_size("2T"), Some(2 << 40));
        assert_eq!(parse_size("1.5"), Some(1));
        assert_eq!(parse_size("0.1"), None);
        assert_eq!(parse_size("inf"), None);
        assert_eq!(parse_size("1e3"), None);
        assert_eq!(parse_size("-1M"), None);
        assert_eq!(parse_size("1.2.3M"), None);
        assert_eq!(parse_size("99999999999T"), None);
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size("M"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn first_fit_reuses_freed_gaps_and_refuses_overrun() {
        let mut h = Heap::new(256);
        assert_eq!(h.alloc(8), Some(0));
        assert_eq!(h.alloc(20), Some(16));
        assert_eq!(h.alloc(1), Some(48));
        assert!(h.free(16));
        assert!(!h.free(16));
        assert_eq!(h.alloc(32), Some(16)); // fits the freed 32-byte gap exactly
        assert_eq!(h.alloc(200), None); // 64..256 holds 192
        assert_eq!(h.alloc(192), Some(64));
        assert_eq!(h.alloc(1), None);
        assert_eq!(h.block_len(64), Some(192));
    }

    #[test]
    fn aligned_blocks_start_on_their_boundary() {
        let mut h = Heap::new(4096);
        assert_eq!(h.alloc(8), Some(0));
        assert_eq!(h.alloc_aligned(8, 256), Some(256));
        assert_eq!(h.alloc(8), Some(16)); // first fit still uses the gap before it
        assert_eq!(h.alloc_aligned(8, 3), None);
        assert_eq!(h.alloc_aligned(4000, 1024), None);
    }
}
