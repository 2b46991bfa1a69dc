//! The reference measurements memchan is judged against, all on the same cores
//! in the same run: the raw shared-memory cache-line ping-pong (the physical
//! limit), TCP loopback, single-core memcpy, a local 32-byte store + release
//! fence, and the time of one floating-point operation (LINPACK 100×100).

use std::alloc::{self, Layout};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use rustix::fs::Mode;
use rustix::mm::{MapFlags, ProtFlags};
use rustix::shm;

use super::pingpong::Endpoint;
use super::timer::{spin_until, ticks, Clock};

/// How long a spinning side waits for its peer before giving up.
pub const PEER_TIMEOUT: Duration = Duration::from_secs(30);

/// Offsets of the two lines in the cache-line region: ping→pong and pong→ping.
/// Two lines apart so the adjacent-line prefetcher does not couple them.
pub const LINE_A: usize = 0;
pub const LINE_B: usize = 128;
/// Size of the cache-line region.
pub const REGION_LEN: usize = 4096;

/// A POSIX shared-memory mapping (`shm_open` + `mmap`). The creator unlinks
/// the name when dropped.
pub struct ShmRegion {
    ptr: NonNull<u8>,
    len: usize,
    name: String,
    owner: bool,
}

impl ShmRegion {
    /// Creates a new, zeroed region (fails if the name exists).
    pub fn create(name: &str, len: usize) -> Result<Self> {
        let fd = shm::open(
            name,
            shm::OFlags::CREATE | shm::OFlags::EXCL | shm::OFlags::RDWR,
            Mode::from_raw_mode(0o600),
        )
        .with_context(|| format!("shm_open({name}, O_CREAT|O_EXCL)"))?;
        let region = Self::map(name, fd, len, true)?;
        Ok(region)
    }

    /// Opens a region created by another process.
    pub fn open(name: &str, len: usize) -> Result<Self> {
        let fd = shm::open(name, shm::OFlags::RDWR, Mode::empty())
            .with_context(|| format!("shm_open({name})"))?;
        Self::map(name, fd, len, false)
    }

    fn map(name: &str, fd: rustix::fd::OwnedFd, len: usize, owner: bool) -> Result<Self> {
        if owner {
            if let Err(e) = rustix::fs::ftruncate(&fd, len as u64) {
                let _ = shm::unlink(name);
                return Err(e).with_context(|| format!("ftruncate({name}, {len})"));
            }
        }
        // SAFETY: a fresh shared mapping of `len` bytes of a shm object that
        // is at least `len` long (the creator truncated it before any opener
        // was started); we own the returned range until `Drop` unmaps it.
        let p = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                &fd,
                0,
            )
        };
        let p = match p {
            Ok(p) => p,
            Err(e) => {
                if owner {
                    let _ = shm::unlink(name);
                }
                return Err(e).with_context(|| format!("mmap({name}, {len})"));
            }
        };
        Ok(Self {
            ptr: NonNull::new(p.cast::<u8>()).context("mmap returned null")?,
            len,
            name: name.to_string(),
            owner,
        })
    }

    /// The 8-byte atomic word at `offset` (must be 8-aligned and in range).
    pub fn atomic_u64(&self, offset: usize) -> &AtomicU64 {
        assert!(
            offset.is_multiple_of(8) && offset + 8 <= self.len,
            "bad offset {offset}"
        );
        // SAFETY: the word is in bounds and 8-byte aligned (the mapping is
        // page aligned); shared memory is only ever accessed atomically through
        // these references, and the borrow cannot outlive the mapping.
        unsafe { &*self.ptr.as_ptr().add(offset).cast::<AtomicU64>() }
    }
}

impl Drop for ShmRegion {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the range mapped in `map`; no reference into
        // it can outlive `self` (they borrow from it).
        unsafe {
            let _ = rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len);
        }
        if self.owner {
            let _ = shm::unlink(self.name.as_str());
        }
    }
}

/// Raw cache-line ping-pong endpoint: a Release store into our outgoing line,
/// a spin with Acquire loads on the incoming one.
pub struct CacheLine<'a> {
    pub out: &'a AtomicU64,
    pub inp: &'a AtomicU64,
}

impl Endpoint for CacheLine<'_> {
    #[inline]
    fn send(&mut self, seq: u64) -> Result<()> {
        self.out.store(seq, Ordering::Release);
        Ok(())
    }
    #[inline]
    fn wait(&mut self, seq: u64) -> Result<()> {
        let inp = self.inp;
        spin_until(
            || inp.load(Ordering::Acquire) == seq,
            PEER_TIMEOUT,
            "the cache-line peer",
        )
    }
}

/// TCP loopback ping-pong endpoint: 8 bytes each way, blocking, TCP_NODELAY.
pub struct Tcp(pub TcpStream);

impl Tcp {
    pub fn new(s: TcpStream) -> Result<Self> {
        s.set_nodelay(true).context("TCP_NODELAY")?;
        s.set_read_timeout(Some(PEER_TIMEOUT))
            .context("SO_RCVTIMEO")?;
        Ok(Self(s))
    }
}

impl Endpoint for Tcp {
    fn send(&mut self, seq: u64) -> Result<()> {
        self.0.write_all(&seq.to_le_bytes()).context("tcp send")
    }
    fn wait(&mut self, seq: u64) -> Result<()> {
        let mut b = [0u8; 8];
        self.0.read_exact(&mut b).context("tcp receive")?;
        ensure!(
            u64::from_le_bytes(b) == seq,
            "tcp ping-pong out of sequence"
        );
        Ok(())
    }
}

/// A heap buffer aligned to a page, like a memchan rx mapping.
pub struct PageBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

impl PageBuf {
    pub fn new(len: usize, fill: u8) -> Self {
        let layout = Layout::from_size_align(len.max(1), 4096).expect("layout");
        // SAFETY: the layout has non-zero size.
        let p = unsafe { alloc::alloc(layout) };
        let ptr = NonNull::new(p).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        // SAFETY: `ptr` is valid for `layout.size()` bytes; filling also
        // faults every page in before anything is timed.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), fill, layout.size()) };
        Self { ptr, layout }
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: initialised above, valid for `size` bytes while `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for PageBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// Copies per timed window in the bandwidth measurements (memcpy and memchan).
pub const WINDOW: usize = 64;

/// Number of windows to time for size `size`: about `budget` bytes, within
/// `[min, max]`.
pub fn windows_for(size: usize, budget: usize, min: usize, max: usize) -> usize {
    (budget / (size * WINDOW)).clamp(min, max)
}

/// Single-core memcpy: for each size, `windows` timings of a window of 64
/// copies of `size` bytes from one page-aligned buffer into another.
/// Returns ns per window.
pub fn memcpy_window_ns(size: usize, windows: usize, clock: &Clock) -> Vec<f64> {
    let src = PageBuf::new(size, 0x5a);
    let mut dst = PageBuf::new(size, 0);
    let mut out = Vec::with_capacity(windows);
    for w in 0..windows + 1 {
        let t0 = ticks();
        for _ in 0..WINDOW {
            dst.as_mut_slice()
                .copy_from_slice(std::hint::black_box(src.as_slice()));
            std::hint::black_box(dst.as_mut_slice());
        }
        let t1 = ticks();
        if w > 0 {
            out.push(clock.ns(t1.wrapping_sub(t0)));
        }
    }
    out
}

/// Writes per timed batch in the overhead measurements.
pub const OVERHEAD_BATCH: usize = 1000;

/// A local 32-byte store + release fence + release store of a flag (what a
/// memchan 32-byte write does, minus the interconnect): ns per write, timed
/// per batch of 1000.
pub fn store_fence_ns(batches: usize, clock: &Clock) -> Vec<f64> {
    #[repr(C, align(64))]
    struct Line {
        data: [u8; 32],
        flag: AtomicU64,
    }
    let mut line = Line {
        data: [0; 32],
        flag: AtomicU64::new(0),
    };
    let src = [0xa5u8; 32];
    let mut out = Vec::with_capacity(batches);
    for b in 0..batches + 1 {
        let t0 = ticks();
        for i in 0..OVERHEAD_BATCH {
            let l = std::hint::black_box(&mut line);
            l.data.copy_from_slice(std::hint::black_box(&src));
            fence(Ordering::Release);
            l.flag.store(i as u64, Ordering::Release);
        }
        let t1 = ticks();
        if b > 0 {
            out.push(clock.ns(t1.wrapping_sub(t0)) / OVERHEAD_BATCH as f64);
        }
    }
    std::hint::black_box(&line);
    out
}

/// Matrix order of the flop-time measurement.
pub const LINPACK_N: usize = 100;

/// Time of one floating-point operation, LINPACK style: LU factorisation with
/// partial pivoting (dgefa) and solve (dgesl) of a 100×100 system, flops =
/// 2/3 n³ + 2 n², one sample (ns per flop) per repeat.
pub fn flop_ns(repeats: usize, clock: &Clock) -> Result<Vec<f64>> {
    let n = LINPACK_N;
    let (a0, b0) = matgen(n);
    let flops = 2.0 / 3.0 * (n as f64).powi(3) + 2.0 * (n as f64).powi(2);
    let mut a = a0.clone();
    let mut b = b0.clone();
    let mut ipvt = vec![0usize; n];
    let mut out = Vec::with_capacity(repeats);
    for r in 0..repeats + 1 {
        a.copy_from_slice(&a0);
        b.copy_from_slice(&b0);
        let t0 = ticks();
        dgefa(std::hint::black_box(&mut a), n, &mut ipvt)?;
        dgesl(&a, n, &ipvt, &mut b);
        let t1 = ticks();
        std::hint::black_box(&b);
        if r == 0 {
            // The matrix is built so that the solution is all ones.
            let err = b.iter().map(|x| (x - 1.0).abs()).fold(0.0, f64::max);
            ensure!(err < 1e-6, "LINPACK check failed: max |x - 1| = {err}");
        } else {
            out.push(clock.ns(t1.wrapping_sub(t0)) / flops);
        }
    }
    Ok(out)
}

/// LINPACK's matgen: pseudo-random column-major matrix and the right-hand
/// side that makes x = (1, …, 1).
fn matgen(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = vec![0.0; n * n];
    let mut init: i64 = 1325;
    for j in 0..n {
        for i in 0..n {
            init = 3125 * init % 65536;
            a[j * n + i] = (init as f64 - 32768.0) / 16384.0;
        }
    }
    let mut b = vec![0.0; n];
    for j in 0..n {
        for i in 0..n {
            b[i] += a[j * n + i];
        }
    }
    (a, b)
}

/// LU factorisation with partial pivoting, column-major, LINPACK's dgefa.
fn dgefa(a: &mut [f64], n: usize, ipvt: &mut [usize]) -> Result<()> {
    for k in 0..n.saturating_sub(1) {
        let col = k * n;
        // idamax over a[k..n, k]
        let mut l = k;
        let mut max = a[col + k].abs();
        for i in k + 1..n {
            let v = a[col + i].abs();
            if v > max {
                max = v;
                l = i;
            }
        }
        ipvt[k] = l;
        if a[col + l] == 0.0 {
            bail!("LINPACK matrix is singular at column {k}");
        }
        if l != k {
            a.swap(col + l, col + k);
        }
        // dscal: multipliers
        let t = -1.0 / a[col + k];
        for i in k + 1..n {
            a[col + i] *= t;
        }
        // row elimination with column indexing (daxpy)
        for j in k + 1..n {
            let cj = j * n;
            let t = a[cj + l];
            if l != k {
                a[cj + l] = a[cj + k];
                a[cj + k] = t;
            }
            let (left, right) = a.split_at_mut(cj);
            let pivot_col = &left[col + k + 1..col + n];
            let target = &mut right[k + 1..n];
            for (x, m) in target.iter_mut().zip(pivot_col) {
                *x += t * m;
            }
        }
    }
    if n > 0 {
        ipvt[n - 1] = n - 1;
        if a[(n - 1) * n + n - 1] == 0.0 {
            bail!("LINPACK matrix is singular");
        }
    }
    Ok(())
}

/// Solves A x = b with the factors from [`dgefa`] (LINPACK's dgesl, job = 0).
fn dgesl(a: &[f64], n: usize, ipvt: &[usize], b: &mut [f64]) {
    // forward elimination: L y = b
    for k in 0..n.saturating_sub(1) {
        let l = ipvt[k];
        let t = b[l];
        if l != k {
            b[l] = b[k];
            b[k] = t;
        }
        let col = k * n;
        for i in k + 1..n {
            b[i] += t * a[col + i];
        }
    }
    // back substitution: U x = y
    for k in (0..n).rev() {
        let col = k * n;
        b[k] /= a[col + k];
        let t = -b[k];
        for i in 0..k {
            b[i] += t * a[col + i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linpack_solves() {
        let clock = Clock { ghz: 1.0 };
        let v = flop_ns(2, &clock).unwrap();
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn windows_clamped() {
        assert_eq!(windows_for(8, 1 << 20, 10, 2000), 2000);
        assert_eq!(windows_for(4 << 20, 1 << 20, 10, 2000), 10);
    }
}
