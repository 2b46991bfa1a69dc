//! Symmetric static and global data: the executable's writable data (`.data`,
//! `.bss`) reachable from other PEs, without a kernel module.
//!
//! How: the heap segment carries one more area, as long as that range (the same
//! on every PE: one executable). At `shmem_init` this PE copies its range into the
//! area of its own copy, then makes the range an alias of the area's pages
//! (`mremap` of a shared mapping with old size 0 maps the same pages again, here
//! over the range). From then on the program's plain loads and stores of a global
//! and other PEs' puts to it meet in the same memory, and an address in the range
//! translates to `area + (address - range start)`, the same offset on every PE even
//! though each PE's executable sits at its own address.
//!
//! Both transports' receive memory is a shared mapping (on one host a shared-memory
//! object, through a hub anonymous shared memory), which the alias needs. Should it
//! fail all the same (no writable range, an `mremap` refused), static data stays
//! local, and a call given a static address says it is not symmetric. The range is
//! all of the executable's `rw-p` mapping, which includes `.got.plt` under lazy
//! binding: another PE of the job can write there (as OpenSHMEM lets it write any
//! global), so a job's PEs trust each other as much as one program's threads do.
//! A child the program forks after `shmem_init` shares those pages with it (they
//! are a shared mapping now), where before it had its own copy.

use std::ffi::c_void;

/// Host pages (the alias is made in these).
const PAGE: usize = 4096;

/// The executable's writable data range `[lo, hi)`, page-aligned: its `rw-p`
/// mapping in `/proc/self/maps` and the anonymous `rw-p` mapping right after it
/// (`.bss` past the file's end). `None` if there is none.
pub fn data_range() -> Option<(usize, usize)> {
    let exe = std::fs::read_link("/proc/self/exe").ok()?;
    let exe = exe.to_str()?;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut range: Option<(usize, usize)> = None;
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(span), Some(perms)) = (f.next(), f.next()) else {
            continue;
        };
        let path = f.nth(3).unwrap_or("");
        let Some((a, b)) = span.split_once('-') else {
            continue;
        };
        let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) else {
            continue;
        };
        match range {
            None if perms == "rw-p" && path == exe => range = Some((a, b)),
            Some((lo, hi)) if a == hi && perms == "rw-p" && path.is_empty() => {
                range = Some((lo, b))
            }
            Some(_) => break,
            None => {}
        }
    }
    range.filter(|&(lo, hi)| lo.is_multiple_of(PAGE) && hi > lo)
}

/// Copies `[lo, lo + len)` to `area` (this PE's copy, in a shared mapping), then
/// maps `area`'s pages over `[lo, lo + len)`.
///
/// # Safety
/// `area` is this process's mapping of `len` writable bytes, page-aligned, that
/// nothing else writes yet; `[lo, lo + len)` is the executable's data range, and
/// no other thread writes it meanwhile.
pub unsafe fn alias(area: usize, lo: usize, len: usize) -> Result<(), String> {
    // SAFETY: the caller's contract: both ranges mapped, `len` bytes, disjoint.
    unsafe { std::ptr::copy_nonoverlapping(lo as *const u8, area as *mut u8, len) };
    // SAFETY: page-aligned ranges of this process (the caller's contract); old size
    // 0 keeps `area` mapped and maps its pages again at `lo`, replacing the range's
    // pages, whose contents were copied above.
    let at = unsafe {
        rustix::mm::mremap_fixed(
            area as *mut c_void,
            0,
            len,
            rustix::mm::MremapFlags::MAYMOVE,
            lo as *mut c_void,
        )
    }
    .map_err(|e| format!("aliasing the data range {lo:#x}+{len}: {e}"))?;
    if at as usize != lo {
        return Err(format!("the alias landed at {at:p}, not {lo:#x}"));
    }
    Ok(())
}
