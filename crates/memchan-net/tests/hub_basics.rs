//! The hub transport in one process over loopback TCP: joins, writes in order, ack,
//! lock, barrier, membership events, and the handshake's refusals.

use memchan_core::{Dest, EventKind, RxAttrs, TxAttrs};
use memchan_net::hub::{Hub, HubConfig};
use memchan_net::link::LinkConfig;
use memchan_net::node::{HubSpec, NetConfig, Node};
use memchan_net::wire::Key;
use std::time::Duration;

fn cfg(addr: &str, key: &Key) -> NetConfig {
    NetConfig {
        hub: HubSpec::Connect(addr.to_string()),
        key: key.clone(),
        keyed: true,
        page_size: None,
        heartbeat: Duration::from_millis(50),
        failure_timeout: Duration::from_millis(600),
        link: LinkConfig::default(),
    }
}

fn hub(key: &Key) -> Hub {
    Hub::start(HubConfig {
        key: key.clone(),
        keyed: true,
        heartbeat: Duration::from_millis(50),
        failure_timeout: Duration::from_millis(600),
        ..HubConfig::default()
    })
    .expect("hub")
}

#[test]
fn writes_arrive_in_order_and_ack_covers_them() {
    let key = Key::from_secret(b"basics");
    let h = hub(&key);
    let addr = h.local_addr().to_string();
    let a = Node::join("basics", cfg(&addr, &key)).expect("a joins");
    let b = Node::join("basics", cfg(&addr, &key)).expect("b joins");
    assert_ne!(a.id(), b.id());
    b.wait_for_members(2, Duration::from_secs(5)).unwrap();
    let rx = b.segment("s", 1 << 20, 0o600).unwrap().map_rx().unwrap();
    let tx = a
        .segment("s", 1 << 20, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.id()), TxAttrs::default())
        .unwrap();
    for i in 0..1000u64 {
        tx.write_u64(0, i).unwrap();
    }
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    tx.write(8, &big).unwrap();
    a.ack().unwrap();
    assert_eq!(rx.load_u64(0).unwrap(), 999);
    let mut back = vec![0; big.len()];
    rx.read(8, &mut back).unwrap();
    assert!(back == big, "large write arrived intact");
}

#[test]
fn virtual_hub_two_nodes_notify_and_local_copy() {
    let key = Key::from_secret(b"virtual");
    let mut c = cfg("127.0.0.1:0", &key);
    c.hub = HubSpec::Host("127.0.0.1:0".into());
    let a = Node::join("virt", c).expect("a hosts the hub");
    let addr = a.hosted_hub().unwrap().local_addr().to_string();
    let b = Node::join("virt", cfg(&addr, &key)).expect("b joins a's hub");
    a.wait_for_members(2, Duration::from_secs(5)).unwrap();
    let seg_a = a.segment("v", 4096, 0o600).unwrap();
    let rx_a = seg_a.map_rx().unwrap();
    let rx_b = b
        .segment("v", 4096, 0o600)
        .unwrap()
        .map_rx_with(RxAttrs {
            receive_enable: true,
            notify: true,
        })
        .unwrap();
    let tx = seg_a
        .map_tx(
            Dest::Broadcast,
            TxAttrs {
                local_copy: true,
                ..TxAttrs::default()
            },
        )
        .unwrap();
    tx.write_u64(16, 42).unwrap();
    assert!(rx_b.wait(Some(Duration::from_secs(5))).unwrap());
    assert_eq!(rx_b.load_u64(16).unwrap(), 42);
    a.ack().unwrap();
    assert_eq!(rx_a.load_u64(16).unwrap(), 42, "local copy");
    // And the other way, through the hosted hub.
    let txb = b
        .segment("v", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(a.id()), TxAttrs::default())
        .unwrap();
    txb.write_u32(40, 7).unwrap();
    b.ack().unwrap();
    assert_eq!(rx_a.load_u32(40).unwrap(), 7);
}

#[test]
fn lock_barrier_and_failure_event() {
    let key = Key::from_secret(b"lock");
    let h = hub(&key);
    let addr = h.local_addr().to_string();
    let a = Node::join("lk", cfg(&addr, &key)).unwrap();
    let b = Node::join("lk", cfg(&addr, &key)).unwrap();
    a.wait_for_members(2, Duration::from_secs(5)).unwrap();
    let la = a.lock("m").unwrap();
    let lb = b.lock("m").unwrap();
    let g = la.acquire().unwrap();
    assert!(lb.try_acquire().unwrap().is_none(), "held by a");
    drop(g);
    let g = lb.acquire().unwrap();
    g.release().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| a.barrier().unwrap());
        b.barrier().unwrap();
    });
    // b holds the lock and leaves: a can take it; a sees the Left event.
    let g = lb.acquire().unwrap();
    std::mem::forget(g);
    let (bid, binc) = (b.id(), b.incarnation());
    drop(lb);
    drop(b);
    let mut saw = false;
    while let Some(e) = a.next_event(Some(Duration::from_secs(3))) {
        if e.node == bid && e.incarnation == binc && e.kind == EventKind::Left {
            saw = true;
            break;
        }
    }
    assert!(saw, "a sees b leave");
    let g = la.acquire().expect("lock released with its leaving holder");
    drop(g);
}

#[test]
fn wrong_key_is_refused_and_the_hub_keeps_serving() {
    let key = Key::from_secret(b"right");
    let h = hub(&key);
    let addr = h.local_addr().to_string();
    let good = Node::join("k", cfg(&addr, &key)).unwrap();
    let err = Node::join("k", cfg(&addr, &Key::from_secret(b"wrong")))
        .err()
        .expect("refused");
    let msg = err.to_string();
    assert!(msg.contains("wrong cluster key"), "{msg}");
    assert_eq!(h.status().refused, 1);
    let other = Node::join("k", cfg(&addr, &key)).unwrap();
    good.wait_for_members(2, Duration::from_secs(5)).unwrap();
    drop(other);
}
