//! The packet store: how bytes are copied into and out of memory that other processes
//! (or threads) read and write at the same time — receive memory, the journal's
//! payload. Both transports apply packets with it, and the receive side reads with it.
//!
//! Every access to the shared side is atomic: 8-byte words as `AtomicU64`, and the
//! unaligned head and tail as the widest aligned `AtomicU32`/`AtomicU16`/`AtomicU8`
//! that fits. A plain copy (`ptr::copy`, `memcpy`) into memory another process reads
//! concurrently is a data race, which Rust leaves undefined however the hardware
//! behaves; Relaxed atomic stores and loads compile to the same plain moves on x86-64
//! and aarch64. What they cost is width: no vector moves. On x86-64 long runs of
//! words are aligned 16-byte SSE moves (atomic as a whole where the processor has
//! AVX) or one `rep movsq`, whose elements are the same atomic 8-byte accesses (see
//! `wide` below), and run at about the speed of `memcpy`.
//!
//! Accesses are Relaxed: the ordering against other memory is the caller's (a Release
//! fence before [`store`], an Acquire fence after [`load`], or the Release/Acquire
//! word that publishes the packet). Within one call the order of the accesses is
//! unspecified.
//!
//! **Single-copy atomicity.** A packet of 1, 2, 4 or 8 bytes aligned to its size is
//! one atomic access of that size, so a reader that loads the same word never sees it
//! torn. Longer packets are atomic per access only: a reader may see part of a packet.
//!
//! ```
//! use memchan_core::packet;
//! use std::sync::atomic::AtomicU64;
//! // Stands for memory another process maps: atomics, never a plain `[u64; 4]`.
//! let shared: [AtomicU64; 4] = Default::default();
//! let dst = shared.as_ptr() as *mut u8;
//! // SAFETY: `shared` is 32 bytes, reached only through atomics.
//! unsafe { packet::store(dst.add(3), b"hello, world") };
//! let mut back = [0u8; 12];
//! // SAFETY: as above.
//! unsafe { packet::load(dst.add(3), &mut back) };
//! assert_eq!(&back, b"hello, world");
//! ```

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// Copies `src` to the shared memory at `dst`, with atomic stores.
///
/// # Safety
/// `dst..dst + src.len()` must be valid for writes for the whole call and lie in one
/// allocation or mapping; it must not overlap `src`; every concurrent access to it (by
/// any thread or process) must be atomic. The bytes are plain data: no invariant of
/// a Rust type may rest on them.
#[inline(always)]
pub unsafe fn store(dst: *mut u8, src: &[u8]) {
    let n = src.len();
    let s = src.as_ptr();
    // The packet is cut at dst's alignment: a head up to the first 8-byte boundary, the
    // words, a tail. Masks only: a division by a runtime length costs more than a store.
    let head = (dst as usize).wrapping_neg() & 7;
    let mut i = 0;
    if head != 0 {
        i = head.min(n);
        // SAFETY: `i ≤ n` bytes of both ranges (caller's contract for `dst`).
        unsafe { store_short(dst, s, i) };
    }
    let end = i + (n - i) / 8 * 8;
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if end - i >= wide::MIN {
        // SAFETY: `dst + i` is 8-aligned and the `(end - i) / 8` words from there lie
        // inside both ranges.
        unsafe { wide::store(dst.add(i), s.add(i), (end - i) / 8) };
        i = end;
    }
    // Four words a turn: LLVM neither vectorizes nor unrolls atomic accesses, and one
    // word a turn runs at half the store ports' rate.
    while i + 32 <= end {
        // SAFETY: `dst + i` is 8-aligned (past the head) and `i + 32 ≤ n`; the source
        // words are read unaligned from the caller's slice.
        unsafe {
            let w = (s.add(i) as *const [u64; 4]).read_unaligned();
            let d = dst.add(i) as *mut u64;
            AtomicU64::from_ptr(d).store(w[0], Relaxed);
            AtomicU64::from_ptr(d.add(1)).store(w[1], Relaxed);
            AtomicU64::from_ptr(d.add(2)).store(w[2], Relaxed);
            AtomicU64::from_ptr(d.add(3)).store(w[3], Relaxed);
        }
        i += 32;
    }
    while i < end {
        // SAFETY: as above, for one word: `i + 8 ≤ n`.
        unsafe {
            let w = (s.add(i) as *const u64).read_unaligned();
            AtomicU64::from_ptr(dst.add(i) as *mut u64).store(w, Relaxed);
        }
        i += 8;
    }
    if i < n {
        // SAFETY: the last `n - i < 8` bytes of both ranges.
        unsafe { store_short(dst.add(i), s.add(i), n - i) };
    }
}

/// Copies from the shared memory at `src` into `dst`, with atomic loads.
///
/// # Safety
/// `src..src + dst.len()` must be valid for reads for the whole call and lie in one
/// allocation or mapping, and every concurrent write to it must be atomic.
#[inline(always)]
pub unsafe fn load(src: *const u8, dst: &mut [u8]) {
    let n = dst.len();
    let d = dst.as_mut_ptr();
    let head = (src as usize).wrapping_neg() & 7;
    let mut i = 0;
    if head != 0 {
        i = head.min(n);
        // SAFETY: `i ≤ n` bytes of both ranges (caller's contract for `src`).
        unsafe { load_short(src, d, i) };
    }
    let end = i + (n - i) / 8 * 8;
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if end - i >= wide::MIN {
        // SAFETY: `src + i` is 8-aligned and the `(end - i) / 8` words from there lie
        // inside both ranges.
        unsafe { wide::load(src.add(i), d.add(i), (end - i) / 8) };
        i = end;
    }
    // Four words a turn, as in `store`.
    while i + 32 <= end {
        // SAFETY: `src + i` is 8-aligned and `i + 32 ≤ n`; the words are written
        // unaligned into the caller's slice.
        unsafe {
            let p = src.add(i) as *mut u64;
            let w = [
                AtomicU64::from_ptr(p).load(Relaxed),
                AtomicU64::from_ptr(p.add(1)).load(Relaxed),
                AtomicU64::from_ptr(p.add(2)).load(Relaxed),
                AtomicU64::from_ptr(p.add(3)).load(Relaxed),
            ];
            (d.add(i) as *mut [u64; 4]).write_unaligned(w);
        }
        i += 32;
    }
    while i < end {
        // SAFETY: as above, for one word: `i + 8 ≤ n`.
        unsafe {
            let w = AtomicU64::from_ptr(src.add(i) as *mut u64).load(Relaxed);
            (d.add(i) as *mut u64).write_unaligned(w);
        }
        i += 8;
    }
    if i < n {
        // SAFETY: the last `n - i < 8` bytes of both ranges.
        unsafe { load_short(src.add(i), d.add(i), n - i) };
    }
}

/// The words of long packets on x86-64. Rust has no atomic wider than 8 bytes and
/// LLVM neither vectorizes nor merges atomic accesses, so the word loop moves 8 bytes
/// a store; for a 4 KiB packet it reached 0.8x of `memcpy` (at 1 MiB writes) where a
/// plain copy reached 1.0x. Two ways past that, both in `asm!`, which the compiler
/// sees as touching any memory, so it moves no access across them:
///
/// - **16-byte SSE moves**, aligned on the shared side, where the processor has AVX:
///   such processors carry out an aligned 16-byte `movdqa` as one atomic access
///   (Intel SDM vol. 3A, 9.1.1 "Guaranteed Atomic Operations"; AMD APM vol. 2, 7.3.2
///   "Access Atomicity"), so each 8-byte word in it is single-copy atomic too. Measured
///   on an EPYC (2 cores): `shmem_putmem` of 1 MiB between two processes 10-20% faster
///   than with `rep movsq`; 32-byte AVX moves were no faster.
/// - **`rep movsq`** on Intel processors with fast strings (ERMS) from
///   [`wide::STRINGS_MIN`] bytes, and where SSE moves are not atomic: its elements are
///   aligned quadwords, each loaded and stored single-copy atomic (Intel SDM vol. 3A,
///   "Fast-String Operation and Out-of-Order Stores": atomicity is guaranteed for the
///   native data elements of the string). Measured on a Xeon (Sapphire Rapids, 2
///   cores), one core copying: `memcpy`'s speed, where the SSE loop reached 0.89x at
///   1 MiB and 0.75x at 4 KiB (and was faster only below 2 KiB).
///
/// Either way the stores of one call may become visible in any order among themselves
/// (as Relaxed stores may), and the block is not reordered with other stores, so the
/// caller's fences keep their meaning. Below [`wide::MIN`] bytes the start-up costs
/// more than it saves. Miri cannot run `asm!`; it checks the word loop.
#[cfg(all(target_arch = "x86_64", not(miri)))]
mod wide {
    use std::arch::asm;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    /// Shortest run of words worth the wide path (measured on the development
    /// machine: below about 1 KiB the four-word loop is faster).
    pub(super) const MIN: usize = 1024;

    /// Shortest run, in bytes, that `rep movsq` takes where [`strings_win`] holds.
    pub(super) const STRINGS_MIN: usize = 2048;

    /// Whether `words` words go through the SSE loop: where its moves are atomic,
    /// unless `rep movsq` beats it (see the module's comment).
    #[inline(always)]
    fn sse_for(words: usize) -> bool {
        sse_atomic() && !(words * 8 >= STRINGS_MIN && strings_win())
    }

    /// Whether `rep movsq` beats the SSE loop here: an Intel processor with fast
    /// strings. Both answers are cached by the standard library's feature detection
    /// and `OnceLock`: one load each on the copy path.
    #[inline(always)]
    fn strings_win() -> bool {
        static INTEL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        std::arch::is_x86_feature_detected!("ermsb")
            && *INTEL.get_or_init(|| {
                let v = std::arch::x86_64::__cpuid(0);
                // "GenuineIntel", in the order cpuid leaf 0 returns it.
                (v.ebx, v.edx, v.ecx) == (0x756e_6547, 0x4965_6e69, 0x6c65_746e)
            })
    }

    /// Moves `$blocks` (> 0) blocks of 64 bytes from `$s` to `$d` in 16-byte SSE moves,
    /// loading with `$ld` and storing with `$st` (`movdqa` on the aligned, shared
    /// side); advances both pointers past them.
    macro_rules! blocks64 {
        ($ld:literal, $st:literal, $d:ident, $s:ident, $blocks:expr) => {
            asm!(
                "2:",
                concat!($ld, " xmm0, [rsi]"),
                concat!($ld, " xmm1, [rsi + 16]"),
                concat!($ld, " xmm2, [rsi + 32]"),
                concat!($ld, " xmm3, [rsi + 48]"),
                concat!($st, " [rdi], xmm0"),
                concat!($st, " [rdi + 16], xmm1"),
                concat!($st, " [rdi + 32], xmm2"),
                concat!($st, " [rdi + 48], xmm3"),
                "add rsi, 64",
                "add rdi, 64",
                "dec rcx",
                "jnz 2b",
                inout("rdi") $d,
                inout("rsi") $s,
                inout("rcx") $blocks => _,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                options(nostack),
            )
        };
    }

    /// Whether aligned 16-byte moves are atomic here (see the module's comment).
    #[inline(always)]
    fn sse_atomic() -> bool {
        std::arch::is_x86_feature_detected!("avx")
    }

    /// Stores `words` 8-byte words from `src` (any alignment) at `dst`.
    ///
    /// # Safety
    /// `dst` is 8-aligned; both ranges valid for `8 * words` bytes and disjoint (as
    /// [`super::store`] requires).
    #[inline(always)]
    pub(super) unsafe fn store(dst: *mut u8, src: *const u8, words: usize) {
        let (mut d, mut s, mut left) = (dst, src, words);
        if sse_for(words) {
            // SAFETY: each step stays within the first `words` words of both ranges
            // (`left` counts what is left); the word stores are aligned (`d` is
            // 8-aligned), the SSE stores 16-aligned (after the head word).
            unsafe {
                if d as usize & 8 != 0 && left > 0 {
                    let w = (s as *const u64).read_unaligned();
                    AtomicU64::from_ptr(d as *mut u64).store(w, Relaxed);
                    (d, s, left) = (d.add(8), s.add(8), left - 1);
                }
                let blocks = left / 8;
                if blocks > 0 {
                    blocks64!("movdqu", "movdqa", d, s, blocks);
                    left %= 8;
                }
                for k in 0..left {
                    let w = (s.add(8 * k) as *const u64).read_unaligned();
                    AtomicU64::from_ptr(d.add(8 * k) as *mut u64).store(w, Relaxed);
                }
            }
            return;
        }
        // SAFETY: moves exactly `words` quadwords between the caller's ranges; the
        // direction flag is clear on entry (the ABI); see the module's comment for
        // why it is atomic per word.
        unsafe {
            asm!(
                "rep movsq",
                inout("rdi") dst => _,
                inout("rsi") src => _,
                inout("rcx") words => _,
                options(nostack, preserves_flags),
            );
        }
    }

    /// Loads `words` 8-byte words at `src` into `dst` (any alignment).
    ///
    /// # Safety
    /// `src` is 8-aligned; both ranges valid for `8 * words` bytes and disjoint (as
    /// [`super::load`] requires).
    #[inline(always)]
    pub(super) unsafe fn load(src: *const u8, dst: *mut u8, words: usize) {
        let (mut s, mut d, mut left) = (src, dst, words);
        if sse_for(words) {
            // SAFETY: as in `store`, with the aligned (shared) side read.
            unsafe {
                if s as usize & 8 != 0 && left > 0 {
                    let w = AtomicU64::from_ptr(s as *mut u64).load(Relaxed);
                    (d as *mut u64).write_unaligned(w);
                    (s, d, left) = (s.add(8), d.add(8), left - 1);
                }
                let blocks = left / 8;
                if blocks > 0 {
                    blocks64!("movdqa", "movdqu", d, s, blocks);
                    left %= 8;
                }
                for k in 0..left {
                    let w = AtomicU64::from_ptr(s.add(8 * k) as *mut u64).load(Relaxed);
                    (d.add(8 * k) as *mut u64).write_unaligned(w);
                }
            }
            return;
        }
        // SAFETY: as in `store`, with the aligned quadwords read at `src`.
        unsafe {
            asm!(
                "rep movsq",
                inout("rdi") dst => _,
                inout("rsi") src => _,
                inout("rcx") words => _,
                options(nostack, preserves_flags),
            );
        }
    }
}

/// Stores `len < 8` bytes (or a head that ends at an 8-byte boundary) from `s` at `dst`
/// in the widest aligned pieces: first up the alignment of `dst`, then down.
///
/// # Safety
/// As [`store`], for `dst..dst + len` and `s..s + len`.
#[inline(always)]
unsafe fn store_short(dst: *mut u8, s: *const u8, len: usize) {
    let mut p = dst;
    let mut s = s;
    let mut left = len;
    // SAFETY: (every step) each piece is inside `dst..dst + len` (it moves `p` and
    // `left` together) and aligned to its size (the test on `p`'s bits, or, on the way
    // down, the pieces before it); the source is read unaligned.
    unsafe {
        if p as usize & 1 != 0 && left >= 1 {
            AtomicU8::from_ptr(p).store(*s, Relaxed);
            (p, s, left) = (p.add(1), s.add(1), left - 1);
        }
        if p as usize & 2 != 0 && left >= 2 {
            let v = (s as *const u16).read_unaligned();
            AtomicU16::from_ptr(p as *mut u16).store(v, Relaxed);
            (p, s, left) = (p.add(2), s.add(2), left - 2);
        }
        if p as usize & 4 != 0 && left >= 4 {
            let v = (s as *const u32).read_unaligned();
            AtomicU32::from_ptr(p as *mut u32).store(v, Relaxed);
            (p, s, left) = (p.add(4), s.add(4), left - 4);
        }
        // `p` is now aligned to every piece that still fits in `left`.
        if left >= 4 {
            let v = (s as *const u32).read_unaligned();
            AtomicU32::from_ptr(p as *mut u32).store(v, Relaxed);
            (p, s, left) = (p.add(4), s.add(4), left - 4);
        }
        if left >= 2 {
            let v = (s as *const u16).read_unaligned();
            AtomicU16::from_ptr(p as *mut u16).store(v, Relaxed);
            (p, s, left) = (p.add(2), s.add(2), left - 2);
        }
        if left >= 1 {
            AtomicU8::from_ptr(p).store(*s, Relaxed);
        }
    }
}

/// The load side of [`store_short`]: the same pieces, so a packet and its read-back
/// meet access for access.
///
/// # Safety
/// As [`load`], for `src..src + len` and `d..d + len`.
#[inline(always)]
unsafe fn load_short(src: *const u8, d: *mut u8, len: usize) {
    let mut p = src as *mut u8;
    let mut d = d;
    let mut left = len;
    // SAFETY: (every step) as in `store_short`, with the roles of the sides swapped.
    unsafe {
        if p as usize & 1 != 0 && left >= 1 {
            *d = AtomicU8::from_ptr(p).load(Relaxed);
            (p, d, left) = (p.add(1), d.add(1), left - 1);
        }
        if p as usize & 2 != 0 && left >= 2 {
            let v = AtomicU16::from_ptr(p as *mut u16).load(Relaxed);
            (d as *mut u16).write_unaligned(v);
            (p, d, left) = (p.add(2), d.add(2), left - 2);
        }
        if p as usize & 4 != 0 && left >= 4 {
            let v = AtomicU32::from_ptr(p as *mut u32).load(Relaxed);
            (d as *mut u32).write_unaligned(v);
            (p, d, left) = (p.add(4), d.add(4), left - 4);
        }
        if left >= 4 {
            let v = AtomicU32::from_ptr(p as *mut u32).load(Relaxed);
            (d as *mut u32).write_unaligned(v);
            (p, d, left) = (p.add(4), d.add(4), left - 4);
        }
        if left >= 2 {
            let v = AtomicU16::from_ptr(p as *mut u16).load(Relaxed);
            (d as *mut u16).write_unaligned(v);
            (p, d, left) = (p.add(2), d.add(2), left - 2);
        }
        if left >= 1 {
            *d = AtomicU8::from_ptr(p).load(Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// 64-byte aligned words standing for shared memory.
    #[repr(C, align(64))]
    struct Shared([AtomicU64; 320]);

    impl Shared {
        fn new() -> Shared {
            Shared(std::array::from_fn(|_| AtomicU64::new(0)))
        }
        fn ptr(&self) -> *mut u8 {
            self.0.as_ptr() as *mut u8
        }
        /// The first `words` words, as bytes.
        fn bytes(&self, words: usize) -> Vec<u8> {
            self.0[..words]
                .iter()
                .flat_map(|w| w.load(Ordering::Relaxed).to_ne_bytes())
                .collect()
        }
    }

    fn pattern(n: usize, salt: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt) | 1)
            .collect()
    }

    /// Every offset and length up to 40 bytes (all head and tail shapes), and long
    /// ones around the switches to the wide path: the bytes land exactly
    /// there, nothing around them changes, and `load` reads them back.
    #[test]
    fn store_and_load_every_offset_and_length() {
        // Around the switches to the wide path (1 KiB of words) and, on an Intel
        // processor with fast strings, to `rep movsq` (2 KiB), and past them. Miri runs
        // the word loop only (no `asm!`), whose shapes repeat every 8 bytes.
        let long: &[usize] = if cfg!(miri) {
            &[127, 128, 1040]
        } else {
            &[
                127, 128, 1023, 1024, 1025, 1031, 1032, 1039, 1040, 2000, 2047, 2048, 2056, 2063,
                2500,
            ]
        };
        for off in 0..if cfg!(miri) { 9 } else { 24 } {
            for len in (0..=40).chain(long.iter().copied()) {
                let mem = Shared::new();
                let data = pattern(len, off as u8);
                // SAFETY: `off + len ≤ 2524 < 2560` bytes of `mem`, used atomically.
                unsafe { store(mem.ptr().add(off), &data) };
                // The packet's words and two more: nothing past it was written.
                let words = (off + len).div_ceil(8) + 2;
                let mut want = vec![0u8; words * 8];
                want[off..off + len].copy_from_slice(&data);
                assert_eq!(mem.bytes(words), want, "store at {off}, {len} bytes");
                let mut back = vec![0u8; len];
                // SAFETY: as above.
                unsafe { load(mem.ptr().add(off), &mut back) };
                assert_eq!(back, data, "load at {off}, {len} bytes");
            }
        }
    }

    /// An unaligned private side: the source and destination slices may start anywhere,
    /// for the word loop and for `rep movsq`.
    #[test]
    fn unaligned_private_buffers() {
        let mem = Shared::new();
        let big = pattern(1200, 7);
        for len in [64, 1100] {
            for skew in 0..8 {
                let src = &big[skew..skew + len];
                // SAFETY: `len` bytes at offset 8 of a 2560-byte block.
                unsafe { store(mem.ptr().add(8), src) };
                let mut out = [0u8; 1108];
                // SAFETY: as above.
                unsafe { load(mem.ptr().add(8), &mut out[skew..skew + len]) };
                assert_eq!(&out[skew..skew + len], src, "{len} bytes, skew {skew}");
            }
        }
    }

    /// An aligned 1/2/4/8-byte packet is one access of its size: a concurrent reader of
    /// that word sees the old or the new value, never a mix; so is each aligned word of
    /// a long packet (the wide path: SSE moves or `rep movsq`). Under miri this also
    /// checks that store and load race only atomically.
    #[test]
    fn aligned_words_are_never_torn() {
        let rounds = if cfg!(miri) { 50 } else { 20_000 };
        let long = if cfg!(miri) { 64 } else { 2048 };
        for size in [1usize, 2, 4, 8, long] {
            let mem = Arc::new(Shared::new());
            let stop = Arc::new(AtomicBool::new(false));
            let writer = {
                let (mem, stop) = (mem.clone(), stop.clone());
                std::thread::spawn(move || {
                    for r in 0..rounds {
                        let b = if r % 2 == 0 { 0xAA } else { 0x55 };
                        // SAFETY: `size` bytes at offset 8 of `mem`.
                        unsafe { store(mem.ptr().add(8), &vec![b; size]) };
                    }
                    stop.store(true, Ordering::Release);
                })
            };
            let mut buf = vec![0u8; size];
            while !stop.load(Ordering::Acquire) {
                // SAFETY: as the writer's.
                unsafe { load(mem.ptr().add(8), &mut buf) };
                for word in buf.chunks(8) {
                    let first = word[0];
                    assert!(
                        [0, 0xAA, 0x55].contains(&first) && word.iter().all(|&b| b == first),
                        "torn word of a {size}-byte packet: {word:x?}"
                    );
                }
            }
            writer.join().unwrap();
        }
    }

    /// A packet published by a Release store of a flag and read after an Acquire load
    /// of it is seen whole (the pattern both transports use: packet, then its word),
    /// short and long (`rep movsq`).
    #[test]
    fn published_packet_is_seen_whole() {
        for len in [53, 1500] {
            let mem = Arc::new(Shared::new());
            let flag = Arc::new(AtomicU64::new(0));
            let data = pattern(len, 3);
            let writer = {
                let (mem, flag, data) = (mem.clone(), flag.clone(), data.clone());
                std::thread::spawn(move || {
                    // SAFETY: `len` bytes at offset 5 of the 2560 of `mem`.
                    unsafe { store(mem.ptr().add(5), &data) };
                    flag.store(1, Ordering::Release);
                })
            };
            while flag.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
            let mut back = vec![0u8; len];
            // SAFETY: as the writer's.
            unsafe { load(mem.ptr().add(5), &mut back) };
            assert_eq!(back, data, "{len} bytes");
            writer.join().unwrap();
        }
    }
}
