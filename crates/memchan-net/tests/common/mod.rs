//! What the hub transport's tests share: a keyed node config, and a raw node (a link
//! that speaks the protocol without the library's node side, for tests that must do
//! what the library would not).
//!
//! Each test file uses only some of these, hence `allow(dead_code)` on the module.

use memchan_core::NodeId;
use memchan_hub::{Hub, HubConfig};
use memchan_link::link::{Handler, Link, LinkConfig};
use memchan_link::proto::{code, get_response, Join, Op, SegInfo, ROLE_NODE};
use memchan_link::wire::{Key, Kind};
use memchan_net::node::{HubSpec, NetConfig};
use std::time::{Duration, Instant};

/// Starts a keyed hub on loopback with `key`, after `tune` set its other settings;
/// returns it and its address.
pub fn keyed_hub(key: &Key, tune: impl FnOnce(&mut HubConfig)) -> (Hub, String) {
    let mut cfg = HubConfig {
        key: key.clone(),
        keyed: true,
        ..HubConfig::default()
    };
    tune(&mut cfg);
    let hub = Hub::start(cfg).expect("start the hub");
    let addr = hub.local_addr().to_string();
    (hub, addr)
}

/// [`node_cfg`] with the timing most tests use: heartbeat 100 ms, failure 800 ms.
pub fn node_cfg_std(addr: &str, key: &Key) -> NetConfig {
    node_cfg(
        addr,
        key,
        Duration::from_millis(100),
        Duration::from_millis(800),
    )
}

/// A node of a keyed cluster joining the hub at `addr`, with the given liveness timing.
pub fn node_cfg(addr: &str, key: &Key, heartbeat: Duration, failure: Duration) -> NetConfig {
    NetConfig {
        hub: HubSpec::connect(addr),
        key: key.clone(),
        keyed: true,
        page_size: None,
        heartbeat,
        failure_timeout: failure,
        link: LinkConfig::default(),
        // Every write through the hub: these tests are of the network path.
        host_domain: None,
        direct: true,
    }
}

/// Joins `cluster` at `addr` as a raw node claiming `uid` (and the same gid), with link
/// settings `link`; returns its link and the node id the hub gave it.
pub fn raw_join(
    addr: &str,
    key: &Key,
    cluster: &str,
    host: &str,
    uid: u32,
    link: LinkConfig,
) -> (Link, NodeId) {
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
        domain: memchan_link::proto::NO_DOMAIN,
    };
    let j = memchan_link::handshake::join(addr, key, join).expect("raw join");
    let id = j.welcome.node;
    (Link::new(j.sock, j.key, j.dec, link).expect("raw link"), id)
}

/// Every reliable frame a raw node got: (kind, payload).
pub struct Frames(pub Vec<(Kind, Vec<u8>)>);

impl Handler for Frames {
    fn frame(&mut self, _l: &Link, _s: u64, kind: Kind, p: &[u8]) {
        self.0.push((kind, p.to_vec()));
    }
}

/// Reads `raw` into `f` until `done` holds of what it got (a guard ends a hung test).
pub fn read_until(raw: &Link, f: &mut Frames, done: impl Fn(&Frames) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done(f) {
        assert!(Instant::now() < deadline, "nothing came");
        raw.wait(None, Duration::from_millis(50));
        raw.receive(f).unwrap();
    }
}

/// Sends request `op` as `id` on `raw`; returns (status, body) of the first answer.
pub fn ask(raw: &Link, op: Op, id: u32) -> (u8, Vec<u8>) {
    raw.send(Kind::Request, &[&op.put(id)]).unwrap();
    let mut f = Frames(Vec::new());
    read_until(raw, &mut f, |f| {
        f.0.iter().any(|(k, _)| *k == Kind::Response)
    });
    let (_, p) = f.0.iter().find(|(k, _)| *k == Kind::Response).unwrap();
    let (_, status, body) = get_response(p).unwrap();
    (status, body.to_vec())
}

/// Opens the existing segment `name` by a raw request, which must succeed.
pub fn seg_info(raw: &Link, name: &str) -> SegInfo {
    let op = Op::SegOpen {
        create: false,
        size: 0,
        mode: 0,
        flags: 0,
        name: name.into(),
    };
    let (status, body) = ask(raw, op, 9);
    assert_eq!(status, code::OK);
    SegInfo::get(&body).unwrap()
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

/// Maps the existing segment `name` rx by raw requests; returns the status of the map
/// request (opening must succeed).
pub fn raw_map_rx(raw: &Link, name: &str) -> u8 {
    let info = seg_info(raw, name);
    let map = Op::MapRx {
        seg: info.seg,
        gen: info.gen,
    };
    ask(raw, map, 8).0
}
