//! The transports behind the public types: one list of them (`flavors!`), the private
//! flavor enums it generates (one variant per transport, for the node, segment, tx and
//! rx mappings, lock, guard and remote-access handle), the dispatch macros every
//! public method calls the transport through (`each!`, `hot!`, `wrap!`,
//! `wrap_some!`), the join that picks a transport, and the public [`TransportKind`].

use memchan_core::transport::{LockOps, SegmentOps, Transport};
use memchan_core::{Config, Error, Result};

/// The transports behind the public types, one line each: its doc, the variant (of
/// the flavor enums and of [`TransportKind`]), the type that implements
/// `memchan_core::transport::Transport`, and when a join picks it (the first line
/// whose condition holds). The first line's data path is inlined; the others' runs
/// out of line, so the one-host store stays a few instructions. Adding a transport is
/// one implementation of the contract and one line here.
macro_rules! flavors {
    ($d:tt;
        $(#[$hot_doc:meta])* $hot:ident($hot_t:ty) if $hot_when:expr,
        $($(#[$doc:meta])* $v:ident($t:ty) if $when:expr),* $(,)?
    ) => {
        pub(crate) enum NodeFlavor { $hot($hot_t), $($v($t)),* }
        pub(crate) enum SegFlavor { $hot(<$hot_t as Transport>::Segment), $($v(<$t as Transport>::Segment)),* }
        pub(crate) enum TxFlavor { $hot(<$hot_t as Transport>::Tx), $($v(<$t as Transport>::Tx)),* }
        pub(crate) enum RxFlavor { $hot(<$hot_t as Transport>::Rx), $($v(<$t as Transport>::Rx)),* }
        pub(crate) enum LockFlavor { $hot(<$hot_t as Transport>::Lock), $($v(<$t as Transport>::Lock)),* }
        pub(crate) enum RmaFlavor {
            $hot(<<$hot_t as Transport>::Segment as SegmentOps>::Rma),
            $($v(<<$t as Transport>::Segment as SegmentOps>::Rma)),*
        }
        pub(crate) enum GuardFlavor<'a> {
            $hot(<<$hot_t as Transport>::Lock as LockOps>::Guard<'a>),
            $($v(<<$t as Transport>::Lock as LockOps>::Guard<'a>)),*
        }

        /// `$e` with `$b` bound to whichever transport's value `$x` holds.
        macro_rules! each {
            ($d f:ident, $d x:expr, $d b:ident => $d e:expr) => {
                match $d x { $d f::$hot($d b) => $d e, $($d f::$v($d b) => $d e),* }
            };
        }

        /// As `each!`, the first transport inline and the others out of line.
        macro_rules! hot {
            ($d f:ident, $d x:expr, $d b:ident => $d e:expr) => {
                match $d x { $d f::$hot($d b) => $d e, $($d f::$v($d b) => crate::flavor::cold(|| $d e)),* }
            };
        }

        /// `$e` of whichever transport `$x` holds, wrapped in the same variant of `$to`.
        macro_rules! wrap {
            ($d f:ident => $d to:ident, $d x:expr, $d b:ident => $d e:expr) => {
                match $d x { $d f::$hot($d b) => $d to::$hot($d e), $($d f::$v($d b) => $d to::$v($d e)),* }
            };
        }

        /// As `wrap!` for an `Option`.
        macro_rules! wrap_some {
            ($d f:ident => $d to:ident, $d x:expr, $d b:ident => $d e:expr) => {
                match $d x { $d f::$hot($d b) => $d e.map($d to::$hot), $($d f::$v($d b) => $d e.map($d to::$v)),* }
            };
        }

        pub(crate) fn join_flavor(name: &str, cfg: &Config) -> Result<NodeFlavor> {
            let picks = |f: fn(&Config) -> bool| f(cfg);
            if picks($hot_when) {
                return Ok(NodeFlavor::$hot(<$hot_t as Transport>::join(name, cfg)?));
            }
            $(if picks($when) {
                return Ok(NodeFlavor::$v(<$t as Transport>::join(name, cfg)?));
            })*
            Err(Error::Unsupported("no transport serves this configuration"))
        }

        /// The transport a node joined through
        /// ([`Cluster::transport`](crate::Cluster::transport)). It displays as the
        /// transport's short name (`shm`, `hub`), which `memchan status` and the
        /// Python package show too.
        ///
        /// ```
        /// use memchan::TransportKind;
        /// assert_eq!(TransportKind::SharedMemory.to_string(), "shm");
        /// assert_eq!(TransportKind::Hub.to_string(), "hub");
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum TransportKind { $(#[$hot_doc])* $hot, $($(#[$doc])* $v),* }

        impl TransportKind {
            /// The transport's short name: `shm` or `hub`.
            pub fn name(self) -> &'static str {
                match self {
                    TransportKind::$hot => <$hot_t as Transport>::NAME,
                    $(TransportKind::$v => <$t as Transport>::NAME),*
                }
            }
        }

        impl NodeFlavor {
            pub(crate) fn kind(&self) -> TransportKind {
                match self {
                    NodeFlavor::$hot(_) => TransportKind::$hot,
                    $(NodeFlavor::$v(_) => TransportKind::$v),*
                }
            }
        }
    };
}

flavors!($;
    /// Shared memory, on one host (`memchan-shm`): no daemon, a write is a store.
    SharedMemory(memchan_shm::Node) if |c| c.hub.is_none(),
    /// Through a hub, across hosts (`memchan-net`), or a hub one node hosts.
    Hub(memchan_net::node::Node) if |c| c.hub.is_some(),
);

impl std::fmt::Display for TransportKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs `f` out of line (the other transports' writes, beside the inlined one-host store).
#[cold]
#[inline(never)]
pub(crate) fn cold<T>(f: impl FnOnce() -> T) -> T {
    f()
}
