//! "A member slow to reach the barrier is not a failure": through a hub, a barrier
//! waits as long as its missing members make progress (arrive, leave, or send a write
//! or a request), however long that takes, and fails with `Error::Stalled` naming them
//! only once they made none for the stall bound (25 failure timeouts, at least 1 s).
//!
//! Nothing asserts how fast anything is: the busy member writes for several bounds
//! before it arrives (a fixed timer of one bound would fail the barrier), and the idle
//! member never arrives; deadlines are hang guards only.

use memchan_core::{Dest, Error, TxAttrs};
use memchan_net::node::Node;
use memchan_net::wire::Key;
use std::time::{Duration, Instant};

#[allow(dead_code)]
mod common;

const FAILURE: Duration = Duration::from_millis(200);
/// The hub's stall bound for `FAILURE`: 25 failure timeouts, at least 1 s.
const BOUND: Duration = Duration::from_secs(5);

fn two_nodes(tag: &str) -> (memchan_net::hub::Hub, Node, Node) {
    let key = Key::from_secret(tag.as_bytes());
    let (hub, _) = common::keyed_hub(&key, |c| {
        c.heartbeat = Duration::from_millis(40);
        c.failure_timeout = FAILURE;
    });
    let addr = hub.local_addr().to_string();
    let cfg = || common::node_cfg(&addr, &key, Duration::from_millis(40), FAILURE * 4);
    let a = Node::join(tag, cfg()).unwrap();
    let b = Node::join(tag, cfg()).unwrap();
    a.wait_for_members(2, Duration::from_secs(10)).unwrap();
    (hub, a, b)
}

#[test]
fn a_member_busy_for_several_stall_bounds_does_not_fail_the_barrier() {
    let (_hub, a, b) = two_nodes("bar-busy");
    let seg = b.segment("s", 4096, 0o600).unwrap();
    let tx = seg.map_tx(Dest::Node(b.id()), TxAttrs::default()).unwrap();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| a.barrier());
        // Writes (each one progress at the hub) for two bounds, then arrives.
        let start = Instant::now();
        let mut i = 0u64;
        while start.elapsed() < BOUND * 2 {
            tx.write_u64(0, i).unwrap();
            i += 1;
            std::thread::sleep(Duration::from_millis(2));
        }
        b.barrier().unwrap();
        waiter
            .join()
            .unwrap()
            .expect("the barrier waits for a busy member");
    });
}

#[test]
fn a_member_that_never_arrives_nor_works_fails_the_barrier_by_name() {
    let (_hub, a, b) = two_nodes("bar-idle");
    let guard = Instant::now();
    match a.barrier() {
        Err(Error::Stalled {
            cluster,
            what,
            nodes,
            ..
        }) => {
            assert_eq!(cluster, "bar-idle");
            assert_eq!(what, "barrier arrivals");
            assert_eq!(nodes, vec![b.id()]);
        }
        other => panic!("expected Stalled naming {}, got {other:?}", b.id()),
    }
    assert!(guard.elapsed() < Duration::from_secs(120), "hang guard");
    // b is still a member: the hub never took the stall for a failure.
    assert_eq!(a.members().len(), 2);
}
