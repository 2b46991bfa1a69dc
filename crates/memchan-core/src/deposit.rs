//! Strided and indexed deposit, put with signal, `wait_until` and conditional write:
//! the shapes and outcomes every transport shares, and their argument checks (one
//! place, as `validate` is for the rest), made before anything is sent.
//!
//! **Ordering.** Each element of a strided or indexed write is one packet, in the
//! sender's order (element 0 first): a reader that sees element `i` sees every element
//! before it (and every earlier write of the sender), and destinations that receive
//! them see them in the one global order (MEMORY CHANNEL's rules 1 and 2, as for any
//! write). A signal update is one packet after the data of its put; a conditional
//! write is one packet, evaluated at each destination where it falls in that order.
//!
//! ```
//! use memchan_core::deposit::{self, Cmp, Shape};
//! let s = Shape { elem: 8, count: 4, src_stride: 8, dst_stride: 64, offset: 0 };
//! deposit::check_strided("seg", 4096, &s, 32).unwrap();
//! let at: Vec<(usize, usize)> = s.elements().collect();
//! assert_eq!(at, vec![(0, 0), (64, 8), (128, 16), (192, 24)]);
//! // An element past the segment, or a stride whose arithmetic overflows, is refused.
//! assert!(deposit::check_strided("seg", 128, &s, 32).is_err());
//! let huge = Shape { dst_stride: usize::MAX, ..s };
//! assert!(deposit::check_strided("seg", 4096, &huge, 32).is_err());
//! assert!(Cmp::Ge.holds(5, 5) && !Cmp::Gt.holds(5, 5));
//! ```

use crate::error::{Error, Result};
use crate::names::NodeId;
use crate::sync::{AtomicU64, Ordering};

/// Largest element of a strided or indexed write (one packet across hosts).
pub const MAX_ELEM: usize = 64 * 1024;

/// A comparison of `wait_until` (OpenSHMEM's `SHMEM_CMP_*`): `word <op> value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `word == value`
    Eq,
    /// `word != value`
    Ne,
    /// `word > value`
    Gt,
    /// `word >= value`
    Ge,
    /// `word < value`
    Lt,
    /// `word <= value`
    Le,
}

impl Cmp {
    /// Whether `word <op> value` holds (unsigned).
    pub fn holds(self, word: u64, value: u64) -> bool {
        match self {
            Cmp::Eq => word == value,
            Cmp::Ne => word != value,
            Cmp::Gt => word > value,
            Cmp::Ge => word >= value,
            Cmp::Lt => word < value,
            Cmp::Le => word <= value,
        }
    }

    /// One look of a `wait_until` at its word: the word (read with Acquire, so what
    /// was written before it is seen too) when `word <op> value` holds.
    pub fn load_if(self, w: &AtomicU64, value: u64) -> Option<u64> {
        let v = w.load(Ordering::Acquire);
        self.holds(v, value).then_some(v)
    }
}

/// How a put with signal updates its signal word (OpenSHMEM's `SHMEM_SIGNAL_SET` /
/// `SHMEM_SIGNAL_ADD`); the add is an atomic add on the destination's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignalOp {
    /// The word becomes the value.
    Set,
    /// The value is added to the word (wrapping).
    Add,
}

/// What a conditional write did at one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The word held the expected value and now holds the new one.
    Applied,
    /// The word held this other value; nothing was written.
    Held(u64),
    /// The page's receive enable is off there (or it stopped mapping the segment);
    /// nothing was written.
    Disabled,
    /// The destination failed (or its link closed) before it reported: whether it
    /// applied the write is not known. Only across hosts; the recoverable-messaging
    /// case the outcome exists for.
    Lost,
}

/// The outcome of a conditional write at one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CondResult {
    /// The destination.
    pub node: NodeId,
    /// What happened there.
    pub outcome: Outcome,
}

/// The shape of a strided write: `count` elements of `elem` bytes, element `i` read
/// from `src[i * src_stride..][..elem]` and written at `offset + i * dst_stride`
/// (strides in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Element size in bytes.
    pub elem: usize,
    /// Number of elements.
    pub count: usize,
    /// Bytes between elements in the source.
    pub src_stride: usize,
    /// Bytes between elements in the segment.
    pub dst_stride: usize,
    /// Segment offset of element 0.
    pub offset: usize,
}

impl Shape {
    /// `(target offset, source offset)` of each element, in order. Only for a shape
    /// [`check_strided`] accepted (no overflow then).
    pub fn elements(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.count).map(|i| (self.offset + i * self.dst_stride, i * self.src_stride))
    }
}

fn bad(segment: &str, why: String) -> Error {
    Error::BadShape {
        segment: segment.to_string(),
        why,
    }
}

fn elem_size(segment: &str, elem: usize) -> Result<()> {
    if elem == 0 || elem > MAX_ELEM {
        return Err(bad(
            segment,
            format!("element size {elem} (1..={MAX_ELEM} bytes)"),
        ));
    }
    Ok(())
}

/// Checks a strided write into a `size`-byte segment from a `src_len`-byte source.
///
/// # Errors
/// `BadShape` (element size, overflowing arithmetic, short source), `OutOfBounds`
/// (the last element past the segment).
pub fn check_strided(segment: &str, size: usize, s: &Shape, src_len: usize) -> Result<()> {
    elem_size(segment, s.elem)?;
    if s.count == 0 {
        return Ok(());
    }
    let last = s.count - 1;
    let src_end = last
        .checked_mul(s.src_stride)
        .and_then(|o| o.checked_add(s.elem))
        .ok_or_else(|| bad(segment, format!("source stride {} overflows", s.src_stride)))?;
    if src_end > src_len {
        return Err(bad(
            segment,
            format!(
                "{} elements of {} bytes at source stride {} need {src_end} source bytes, got {src_len}",
                s.count, s.elem, s.src_stride
            ),
        ));
    }
    let last_off = last
        .checked_mul(s.dst_stride)
        .and_then(|o| o.checked_add(s.offset))
        .ok_or_else(|| bad(segment, format!("target stride {} overflows", s.dst_stride)))?;
    if last_off.checked_add(s.elem).is_none_or(|e| e > size) {
        return Err(Error::OutOfBounds {
            segment: segment.to_string(),
            offset: last_off,
            len: s.elem,
            size,
        });
    }
    // Every element lies between offset and last_off, so all are in bounds.
    Ok(())
}

/// Checks an indexed write: element `i` (`src[i * elem..][..elem]`) lands at
/// `offsets[i]`; `src_len` must be `offsets.len() * elem`.
///
/// # Errors
/// `BadShape` (element size, source length), `OutOfBounds` naming the first offset
/// past the segment.
pub fn check_indexed(
    segment: &str,
    size: usize,
    elem: usize,
    offsets: &[usize],
    src_len: usize,
) -> Result<()> {
    elem_size(segment, elem)?;
    if offsets.len().checked_mul(elem) != Some(src_len) {
        return Err(bad(
            segment,
            format!(
                "{} offsets of {elem}-byte elements need {} source bytes, got {src_len}",
                offsets.len(),
                offsets.len().saturating_mul(elem)
            ),
        ));
    }
    if let Some(&o) = offsets
        .iter()
        .find(|&&o| o.checked_add(elem).is_none_or(|e| e > size))
    {
        return Err(Error::OutOfBounds {
            segment: segment.to_string(),
            offset: o,
            len: elem,
            size,
        });
    }
    Ok(())
}

/// Checks the 8-byte word of a signal, a conditional write or `wait_until`: inside
/// the segment and 8-aligned (the word is updated atomically).
///
/// # Errors
/// `OutOfBounds`, `Unaligned`.
pub fn check_word(segment: &str, size: usize, offset: usize, width: usize) -> Result<()> {
    if offset.checked_add(width).is_none_or(|e| e > size) {
        return Err(Error::OutOfBounds {
            segment: segment.to_string(),
            offset,
            len: width,
            size,
        });
    }
    if !offset.is_multiple_of(width) {
        return Err(Error::Unaligned {
            segment: segment.to_string(),
            offset,
            size: width,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_checks_catch_every_overflow_and_short_source() {
        let s = Shape {
            elem: 8,
            count: 3,
            src_stride: 16,
            dst_stride: 24,
            offset: 8,
        };
        assert!(check_strided("s", 64, &s, 40).is_ok());
        // last element at 8 + 48 = 56, needs 64 bytes
        assert!(matches!(
            check_strided("s", 63, &s, 40),
            Err(Error::OutOfBounds { offset: 56, .. })
        ));
        assert!(matches!(
            check_strided("s", 64, &s, 39),
            Err(Error::BadShape { .. })
        ));
        let over = Shape {
            src_stride: usize::MAX / 2 + 1,
            ..s
        };
        assert!(matches!(
            check_strided("s", 64, &over, 40),
            Err(Error::BadShape { .. })
        ));
        let off = Shape {
            offset: usize::MAX - 8,
            ..s
        };
        assert!(matches!(
            check_strided("s", 64, &off, 40),
            Err(Error::BadShape { .. })
        ));
        assert!(matches!(
            check_strided("s", 64, &Shape { elem: 0, ..s }, 40),
            Err(Error::BadShape { .. })
        ));
        assert!(check_strided("s", 0, &Shape { count: 0, ..s }, 0).is_ok());
    }

    #[test]
    fn indexed_checks_name_the_bad_offset() {
        assert!(check_indexed("s", 64, 8, &[0, 56, 8], 24).is_ok());
        assert!(matches!(
            check_indexed("s", 64, 8, &[0, 57], 16),
            Err(Error::OutOfBounds { offset: 57, .. })
        ));
        assert!(matches!(
            check_indexed("s", 64, 8, &[usize::MAX], 8),
            Err(Error::OutOfBounds { .. })
        ));
        assert!(matches!(
            check_indexed("s", 64, 8, &[0], 9),
            Err(Error::BadShape { .. })
        ));
    }

    #[test]
    fn word_checks_bounds_then_alignment() {
        assert!(check_word("s", 64, 56, 8).is_ok());
        assert!(matches!(
            check_word("s", 64, 60, 8),
            Err(Error::OutOfBounds { .. })
        ));
        assert!(matches!(
            check_word("s", 64, 4, 8),
            Err(Error::Unaligned { .. })
        ));
        assert!(matches!(
            check_word("s", 64, usize::MAX, 8),
            Err(Error::OutOfBounds { .. })
        ));
    }

    #[test]
    fn comparisons() {
        let all = [Cmp::Eq, Cmp::Ne, Cmp::Gt, Cmp::Ge, Cmp::Lt, Cmp::Le];
        let got: Vec<bool> = all.iter().map(|c| c.holds(3, 3)).collect();
        assert_eq!(got, [true, false, false, true, false, true]);
        let got: Vec<bool> = all.iter().map(|c| c.holds(4, 3)).collect();
        assert_eq!(got, [false, true, true, true, false, false]);
    }
}
