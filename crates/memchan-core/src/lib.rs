//! memchan's address space and ordering core: the names, attributes and errors every
//! layer shares, and the lock-free algorithms (order point and its journal, notify
//! handshake, the cluster lock's protocol) written once over a [`sync`] facade so that
//! loom can model them, beside the services' other protocols written once (the
//! [`barrier`], a node's departure in [`membership`]). No I/O lives here.
//!
//! The transports (`memchan-shm` for one host, the hub transport across hosts) place
//! these algorithms on their memory or frames; the public crate `memchan` exposes them
//! as a cluster API.
//!
//! ```
//! use memchan_core::{Dest, NodeId, PageSize, TxAttrs};
//! let page = PageSize::default();
//! assert_eq!(page.bytes(), 4096);
//! let attrs = TxAttrs { local_copy: true, ..TxAttrs::default() };
//! assert!(attrs.transmit_enable);
//! assert_eq!(Dest::Node(NodeId(3)), Dest::Node(NodeId(3)));
//! ```

pub mod attr;
pub mod barrier;
pub mod bidlock;
pub mod clock;
pub mod config;
pub mod deposit;
pub mod error;
pub mod event;
pub mod idle;
pub mod journal;
pub mod membership;
pub mod names;
pub mod notify;
pub mod order;
pub mod packet;
pub mod perm;
pub mod rma;
pub mod status;
pub mod sync;
pub mod transport;
pub mod validate;

pub use attr::{Dest, RxAttrs, TxAttrs};
pub use clock::GlobalTime;
pub use config::{Config, HubListError, HubSpec};
pub use error::{Error, Result};
pub use event::{EventKind, MembershipEvent};
pub use names::{GroupId, NodeId, NodeSet, PageSize, MAX_GROUPS, MAX_NODES};
pub use perm::SegOwner;
