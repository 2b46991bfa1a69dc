//! What the hub transport's tests share: a keyed node config, and a raw node (a link
//! that speaks the protocol without the library's node side, for tests that must do
//! what the library would not).
//!
//! Each test file uses only some of these, hence `allow(dead_code)` on the module.

use memchan_net::link::{Link, LinkConfig};
use memchan_net::node::{HubSpec, NetConfig};
use memchan_net::proto::{Join, ROLE_NODE};
use memchan_net::wire::Key;
use std::time::Duration;

/// A node of a keyed cluster joining the hub at `addr`, with the given liveness timing.
pub fn node_cfg(addr: &str, key: &Key, heartbeat: Duration, failure: Duration) -> NetConfig {
    NetConfig {
        hub: HubSpec::Connect(addr.to_string()),
        key: key.clone(),
        keyed: true,
        page_size: None,
        heartbeat,
        failure_timeout: failure,
        link: LinkConfig::default(),
    }
}

/// Joins `cluster` at `addr` as a raw node claiming `uid` (and the same gid), with link
/// settings `link`.
pub fn raw_join(
    addr: &str,
    key: &Key,
    cluster: &str,
    host: &str,
    uid: u32,
    link: LinkConfig,
) -> Link {
    let join = Join {
        hub_nonce: [0; 16],
        node_nonce: [0; 16],
        role: ROLE_NODE,
        page_size: 0,
        pid: std::process::id(),
        uid,
        gid: uid,
        cluster: cluster.into(),
        host: host.into(),
    };
    let j = memchan_net::handshake::join(addr, key, join).expect("raw join");
    Link::new(j.sock, j.key, link, &j.pending).expect("raw link")
}

/// A TCP connection to `to` from the loopback address `from` (any of 127.0.0.0/8):
/// tests play several hosts with it.
pub fn connect_from(from: std::net::Ipv4Addr, to: std::net::SocketAddr) -> std::net::TcpStream {
    use rustix::net::{bind, connect, socket, AddressFamily, SocketType};
    let fd = socket(AddressFamily::INET, SocketType::STREAM, None).expect("socket");
    bind(&fd, &std::net::SocketAddrV4::new(from, 0)).expect("bind the source address");
    connect(&fd, &to).expect("connect");
    std::net::TcpStream::from(fd)
}
