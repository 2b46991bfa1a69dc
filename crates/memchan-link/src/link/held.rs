//! What a link leaves behind when it goes down for a rail switch: its unreleased
//! reliable frames, encoded, and the seq its next frame would have taken.

use crate::wire::Kind;

/// Reliable frames a link held unreleased when it went down ([`Link::take_held`]).
///
/// [`Link::take_held`]: super::Link::take_held
#[derive(Debug)]
pub struct Held {
    /// Encoded frames in seq order (their stamps are replaced when sent again).
    pub(super) frames: Vec<Vec<u8>>,
    pub(super) next_seq: u64,
}

impl Default for Held {
    /// Nothing held; the next seq is 1.
    fn default() -> Self {
        Held {
            frames: Vec::new(),
            next_seq: 1,
        }
    }
}

impl Held {
    /// The seqs held, ascending.
    pub fn seqs(&self) -> Vec<u64> {
        self.frames.iter().map(|b| seq_of(b)).collect()
    }

    /// The first seq held (`next_seq` if none).
    pub fn first(&self) -> u64 {
        self.frames.first().map_or(self.next_seq, |b| seq_of(b))
    }

    /// The seq the next new frame gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The seqs held of frames of `kind`, ascending.
    pub fn seqs_of(&self, kind: Kind) -> Vec<u64> {
        self.frames
            .iter()
            .filter(|b| kind_of(b) == kind as u8)
            .map(|b| seq_of(b))
            .collect()
    }
}

/// The seq in an encoded frame's header.
pub(super) fn seq_of(frame: &[u8]) -> u64 {
    u64::from_le_bytes(frame[16..24].try_into().expect("8 bytes"))
}

/// The kind byte in an encoded frame's header.
pub(super) fn kind_of(frame: &[u8]) -> u8 {
    frame[6]
}
