//! Load/store access to another node's copy of a segment (`Rma::peer_memory`,
//! OpenSHMEM's `shmem_ptr`), with real processes: on one host the target's own
//! memory, both ways, checked for `remote_read` on every page when it is made and
//! mapped for as long as the handle lives, even after the target died; through a
//! hub, where nodes share no memory, `Unsupported`.

use memchan::{Dest, Error, EventKind, NodeId, RxAttrs, TxAttrs};
use memchan_testkit::harness::{field, unique_cluster, Transport};
use memchan_testkit::on_every_transport;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// Worker: `cluster` — maps `data` rx with remote read on every page, writes 0xfeed
/// at 16 of its own copy, says READY, polls its word at 32 until it is not 0 and
/// prints it (SAW value=..), then only sleeps.
pub fn worker(a: &[String]) {
    let c = memchan::Cluster::join(&a[0]).unwrap();
    let seg = c.open_segment("data").unwrap();
    let open = RxAttrs {
        remote_read: true,
        ..RxAttrs::default()
    };
    let rx = seg.map_rx_with(open).unwrap();
    let me = c.node_id();
    let tx = seg.map_tx(Dest::Node(me), TxAttrs::default()).unwrap();
    tx.write_u64(16, 0xfeed).unwrap();
    c.ack().unwrap();
    println!("READY node={}", me.0);
    let mut v = 0;
    while v == 0 {
        std::thread::yield_now();
        v = rx.load_u64(32).unwrap();
    }
    println!("SAW value={v}");
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn peer_memory_is_the_targets_own_copy(t: &Transport) {
    let name = unique_cluster("rma-peer");
    let a = t.join(&name).unwrap();
    let page = a.page_size();
    let seg = a.segment("data", 3 * page, 0o600).unwrap();
    let mut w = t.spawn("rma-peer", std::slice::from_ref(&name));
    let target = NodeId(field(&w.expect_line("READY", WAIT), "node") as u16);
    let rma = seg.rma().unwrap();
    let mem = match rma.peer_memory(target) {
        Err(Error::Unsupported(_)) if t.is_hub() => return w.kill9(),
        r => r.unwrap(),
    };
    assert!(!t.is_hub(), "a hub's nodes share no memory");
    assert_eq!(mem.len(), 3 * page);
    let word = |off: usize| {
        // SAFETY: `off + 8 <= 3 * page`, 8-aligned (the data is page-aligned), mapped
        // read-write while `mem` lives; reached atomically like all shared memory.
        unsafe { &*(mem.as_ptr().add(off) as *const AtomicU64) }
    };
    // A load sees the target's write; a store reaches the target's own loads.
    assert_eq!(word(16).load(Ordering::Acquire), 0xfeed);
    word(32).store(0x1234, Ordering::Release);
    assert_eq!(field(&w.expect_line("SAW", WAIT), "value"), 0x1234);

    // Refusals: a page closed to remote access (the rma-target worker closes page
    // 1), a node without a copy (this one), a node that does not exist.
    let mut closed = t.spawn("rma-target", std::slice::from_ref(&name));
    let other = NodeId(field(&closed.expect_line("READY", WAIT), "node") as u16);
    let r = rma.peer_memory(other);
    assert!(
        matches!(r, Err(Error::RemoteReadOff { node, offset, .. }) if node == other && offset == page),
        "{r:?}"
    );
    let me = a.node_id();
    assert!(matches!(rma.peer_memory(me), Err(Error::NotMapped { node, .. }) if node == me));
    assert!(matches!(
        rma.peer_memory(NodeId(300)),
        Err(Error::UnknownNode(_))
    ));
    closed.kill9();

    // The target dies: the handle refuses it, but the memory stays mapped under the
    // pointer (no fault), holding what it held.
    w.kill9();
    loop {
        match a.next_event(Some(WAIT)) {
            Some(e) if e.node == target && e.kind == EventKind::Failed => break,
            Some(_) => {}
            None => panic!("no event for the killed target"),
        }
    }
    assert!(matches!(rma.get_u64(target, 16), Err(Error::UnknownNode(x)) if x == target));
    assert!(matches!(
        rma.peer_memory(target),
        Err(Error::UnknownNode(_))
    ));
    assert_eq!(word(16).load(Ordering::Acquire), 0xfeed);
    assert_eq!(word(32).load(Ordering::Acquire), 0x1234);
}

on_every_transport!(peer_memory_is_the_targets_own_copy);
