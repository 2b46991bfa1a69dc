//! The heap as the program sees it: a second mapping of the heap segment's receive
//! memory at an address aligned to [`ALIGN`], the same alignment on every PE.
//!
//! Why: `shmem_align(a, n)` must return an address aligned to `a` on every PE, and
//! the heap hands out the same offset on every PE. An offset aligned to `a` is an
//! address aligned to `a` only where the heap starts on a multiple of `a`, and the
//! receive mapping starts wherever the kernel put it (a page boundary). So this PE
//! reserves `len + ALIGN` bytes of address space, maps the heap's pages again at the
//! aligned address inside (`mremap` of a shared mapping with old size 0, as
//! [`statics`](crate::shmem::statics) does for the data range), and returns the rest
//! of the reservation. Loads, stores and atomics through either mapping meet in the
//! same pages.

use rustix::mm::{self, MapFlags, MremapFlags, ProtFlags};
use std::ffi::c_void;

/// The alignment of every PE's heap start, so the largest `shmem_align` honoured.
pub const ALIGN: usize = 1 << 30;

/// The aligned second mapping, unmapped on drop.
#[derive(Debug)]
pub struct View {
    at: usize,
    len: usize,
}

impl View {
    /// Maps the `len` bytes (a page multiple) of the shared mapping at `from` again at
    /// an [`ALIGN`]-aligned address.
    ///
    /// # Errors
    /// The system's refusal (address space, a mapping that is not shared).
    ///
    /// # Safety
    /// `[from, from + len)` is one shared mapping of this process that stays mapped
    /// while the view is used.
    pub unsafe fn new(from: usize, len: usize) -> rustix::io::Result<View> {
        let span = len + ALIGN;
        // SAFETY: a fresh inaccessible reservation at an address the kernel picks.
        let res = unsafe {
            mm::mmap_anonymous(
                std::ptr::null_mut(),
                span,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        }? as usize;
        let at = res.next_multiple_of(ALIGN);
        // SAFETY: `[at, at + len)` lies in the reservation just made (nobody else uses
        // it); old size 0 keeps `from` mapped and maps its pages again there.
        let moved = unsafe {
            mm::mremap_fixed(
                from as *mut c_void,
                0,
                len,
                MremapFlags::MAYMOVE,
                at as *mut c_void,
            )
        };
        let unmap = |a: usize, l: usize| {
            if l > 0 {
                // SAFETY: a part of the reservation that holds nothing of ours.
                let _ = unsafe { mm::munmap(a as *mut c_void, l) };
            }
        };
        match moved {
            Ok(p) if p as usize == at => {
                unmap(res, at - res);
                unmap(at + len, res + span - (at + len));
                Ok(View { at, len })
            }
            Ok(p) => {
                // SAFETY: the mapping just made, elsewhere than asked; ours alone.
                let _ = unsafe { mm::munmap(p, len) };
                unmap(res, span);
                Err(rustix::io::Errno::FAULT)
            }
            Err(e) => {
                unmap(res, span);
                Err(e)
            }
        }
    }

    /// The aligned address of the heap segment's first byte.
    pub fn addr(&self) -> usize {
        self.at
    }
}

impl Drop for View {
    fn drop(&mut self) {
        // SAFETY: the second mapping this view made; the PE that held it is gone, and
        // with it every address the program was given into it.
        let _ = unsafe { mm::munmap(self.at as *mut c_void, self.len) };
    }
}
