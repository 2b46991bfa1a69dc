//! [`IpError`]: what can go wrong starting or running `memchan ip`. A leaf: it
//! imports no module of the crate.

use std::io;

/// What can go wrong starting or running `memchan ip`, each naming the problem.
#[derive(Debug, thiserror::Error)]
pub enum IpError {
    /// The kernel offers no TUN device.
    #[error("no TUN device: /dev/net/tun does not exist (load the `tun` module, or give a container --device /dev/net/tun)")]
    NoTunDevice,
    /// The step needs CAP_NET_ADMIN (root).
    #[error("not permitted: {0} needs root (CAP_NET_ADMIN)")]
    NotPermitted(&'static str),
    /// A configuration value that cannot work.
    #[error("invalid {what}: {why}")]
    Invalid { what: &'static str, why: String },
    /// This node's id has no slot or no address.
    #[error("node id {id} is past the {slots} IP slots (--max-nodes) or the subnet {subnet}")]
    NodeOutOfRange {
        id: u16,
        slots: usize,
        /// The subnet, as `memchan ip --subnet` takes it (a string keeps this module
        /// a leaf: `addr.rs` parses into this error).
        subnet: String,
    },
    /// Another system call failed.
    #[error("{what}: {source}")]
    Os {
        what: &'static str,
        #[source]
        source: io::Error,
    },
    /// The cluster refused (segment size mismatch, permission, ...).
    #[error(transparent)]
    Memchan(#[from] memchan::Error),
}
