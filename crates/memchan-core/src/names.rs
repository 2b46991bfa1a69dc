//! Identifiers and sizes named in docs/spec.md (Concepts): node, group, page, and a set of nodes.

use std::fmt;

/// The most nodes one cluster may hold (docs/spec.md, Concepts: at least 256).
pub const MAX_NODES: usize = 256;
/// The most multicast groups one cluster may define.
pub const MAX_GROUPS: usize = 32;

/// A node's id within its cluster, `0..MAX_NODES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u16);

impl NodeId {
    /// The id as an index into per-node tables.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node {}", self.0)
    }
}

/// A multicast group's id within its cluster, `0..MAX_GROUPS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupId(pub u16);

impl GroupId {
    /// The id as an index into the group table.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// The unit of mapping, chosen per cluster: 4 KiB (default) or 8 KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageSize {
    /// 4096 bytes.
    #[default]
    K4,
    /// 8192 bytes.
    K8,
}

impl PageSize {
    /// The page size in bytes.
    pub fn bytes(self) -> usize {
        match self {
            PageSize::K4 => 4096,
            PageSize::K8 => 8192,
        }
    }

    /// The page size for a byte count, if it is one memchan supports.
    pub fn from_bytes(bytes: usize) -> Option<PageSize> {
        match bytes {
            4096 => Some(PageSize::K4),
            8192 => Some(PageSize::K8),
            _ => None,
        }
    }

    /// `len` rounded up to a whole number of pages.
    pub fn round_up(self, len: usize) -> usize {
        len.div_ceil(self.bytes()) * self.bytes()
    }
}

/// A set of node ids, as the bitmap shared memory stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct NodeSet(pub [u64; MAX_NODES / 64]);

impl NodeSet {
    /// The empty set.
    pub const EMPTY: NodeSet = NodeSet([0; MAX_NODES / 64]);

    /// Adds `n`; an id past [`MAX_NODES`] names no node and is ignored (callers
    /// validate ids first, see `validate::node`).
    pub fn insert(&mut self, n: NodeId) {
        if let Some(w) = self.0.get_mut(n.index() / 64) {
            *w |= 1 << (n.index() % 64);
        }
    }

    /// Removes `n` (nothing for an id past [`MAX_NODES`]).
    pub fn remove(&mut self, n: NodeId) {
        if let Some(w) = self.0.get_mut(n.index() / 64) {
            *w &= !(1 << (n.index() % 64));
        }
    }

    /// Whether `n` is in the set (never for an id past [`MAX_NODES`]).
    pub fn contains(&self, n: NodeId) -> bool {
        self.0
            .get(n.index() / 64)
            .is_some_and(|w| w & (1 << (n.index() % 64)) != 0)
    }

    /// The members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = NodeId> {
        let words = self.0;
        words.into_iter().enumerate().flat_map(|(w, bits)| {
            let mut rest = bits;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let b = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(NodeId((w * 64 + b) as u16))
            })
        })
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The members of both sets.
    pub fn intersect(&self, other: &NodeSet) -> NodeSet {
        let mut out = *self;
        for (a, b) in out.0.iter_mut().zip(other.0.iter()) {
            *a &= *b;
        }
        out
    }
}

impl FromIterator<NodeId> for NodeSet {
    fn from_iter<I: IntoIterator<Item = NodeId>>(iter: I) -> Self {
        let mut s = NodeSet::EMPTY;
        for n in iter {
            s.insert(n);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_set_roundtrip() {
        let s: NodeSet = [NodeId(0), NodeId(63), NodeId(64), NodeId(255)]
            .into_iter()
            .collect();
        assert_eq!(s.len(), 4);
        assert!(s.contains(NodeId(64)) && !s.contains(NodeId(65)));
        let v: Vec<_> = s.iter().collect();
        assert_eq!(v, vec![NodeId(0), NodeId(63), NodeId(64), NodeId(255)]);
        let mut t = s;
        t.remove(NodeId(63));
        t.insert(NodeId(999));
        t.remove(NodeId(999));
        assert!(!t.contains(NodeId(999)));
        assert_eq!(s.intersect(&t).len(), 3);
    }

    #[test]
    fn page_rounding() {
        assert_eq!(PageSize::K4.round_up(1), 4096);
        assert_eq!(PageSize::K8.round_up(8193), 16384);
        assert_eq!(PageSize::from_bytes(8192), Some(PageSize::K8));
        assert_eq!(PageSize::from_bytes(1000), None);
    }
}
