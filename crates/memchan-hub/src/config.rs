//! How a hub runs: [`HubConfig`].

use memchan_core::PageSize;
use memchan_link::link::LinkConfig;
use memchan_link::wire::Key;
use std::time::Duration;

/// How a hub runs.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// `HOST:PORT` to listen on (port 0: any).
    pub listen: String,
    /// The one cluster this hub serves; `None`: the first join names it.
    pub cluster: Option<String>,
    /// The cluster key joins and links are authenticated with.
    pub key: Key,
    /// Whether `key` came from a secret (else anyone who reaches the port may join).
    pub keyed: bool,
    /// Page size; `None`: the first join chooses (4 KiB by default).
    pub page_size: Option<PageSize>,
    /// Heartbeat period on every link.
    pub heartbeat: Duration,
    /// A node silent this long is isolated.
    pub failure_timeout: Duration,
    /// Tunables of the links to nodes (by default, deliveries go in batches of up to
    /// 32 KiB).
    pub link: LinkConfig,
    /// Connections that may be between accept and join at once (see `gate.rs`).
    pub max_pending: usize,
    /// Pending connections from one source (IPv4 address, IPv6 /64), at most.
    pub max_pending_per_source: usize,
    /// How often every member gets a time packet (`memchan_link::proto::clock`); `None`: the hub's
    /// clock is off (no time packets, probes unanswered), so no node's global clock
    /// synchronises (a test's "not synchronised" case).
    pub clock_period: Option<Duration>,
    /// The period of a member's time packets once it has had a window of them
    /// (`time_plan.rs`); never below `clock_period`.
    pub clock_period_settled: Duration,
    /// Dual rail: number every packet of a remote sender in the hub's order and tell
    /// the nodes the release mark, so that a standby hub can take over
    /// (`memchan_link::rail`).
    pub rail: bool,
    /// Dual rail: this hub is the standby of the active hub at this address: it copies
    /// its tables every heartbeat, refuses ordinary joins, and takes over when nodes
    /// resume their links here (`standby.rs`). Implies `rail`.
    pub standby_of: Option<String>,
}

/// Payload bytes of one batch on a link to a node: a burst of deliveries to one node
/// goes as batches of up to this much, one MAC and one write each.
const NODE_BATCH: usize = 32 * 1024;

impl HubConfig {
    /// The tunables of a link to a node: `link`, with a replay memory bounded by the
    /// senders' (see `admit.rs`), so it never waits for room, and the node finished
    /// with a frame once it received it.
    pub(crate) fn node_link(&self) -> LinkConfig {
        LinkConfig {
            replay_limit: usize::MAX / 2,
            peer_releases_on_receive: true,
            ..self.link.clone()
        }
    }
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            listen: "127.0.0.1:0".into(),
            cluster: None,
            key: Key::open(),
            keyed: false,
            page_size: None,
            heartbeat: Duration::from_millis(100),
            failure_timeout: Duration::from_millis(800),
            link: LinkConfig {
                batch_bytes: NODE_BATCH,
                ..LinkConfig::default()
            },
            max_pending: 256,
            max_pending_per_source: 32,
            clock_period: Some(Duration::from_millis(50)),
            clock_period_settled: Duration::from_millis(500),
            rail: false,
            standby_of: None,
        }
    }
}
