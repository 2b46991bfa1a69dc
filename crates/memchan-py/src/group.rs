//! `Group`, a multicast group's handle: a leaf, which `cluster.rs` (that creates
//! groups) and `mapping.rs` (that maps towards them) both read.

use pyo3::prelude::*;

/// A multicast group (`Cluster.create_group`), usable as a tx destination and in
/// `Cluster.barrier(group=...)`.
#[pyclass(module = "memchan", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub struct Group {
    /// The group's id.
    #[pyo3(get)]
    pub id: u16,
}

#[pymethods]
impl Group {
    fn __repr__(&self) -> String {
        format!("Group({})", self.id)
    }
}
