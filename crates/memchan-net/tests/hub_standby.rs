//! Dual rail over loopback, in one process: an active hub (`rail`) and its standby
//! (`standby_of`), 3 real nodes joined with the standby configured. While every node
//! streams broadcast writes with local copy, the active hub stops (its links close);
//! every node moves to the standby without an error, and after `ack` every node holds
//! every sender's last value, each word's values only grew at every reader (no write
//! applied out of its sender's order), and the standby reports that it took over with
//! all 3 nodes. The netns tests (`conformance/rail.rs`) do the same with real
//! processes, a killed hub and a downed link, under the randomized ordering check.

use memchan_core::{Dest, TxAttrs};
use memchan_hub::{Hub, HubConfig};
use memchan_link::wire::Key;
use memchan_net::node::{HubSpec, NetConfig, Node};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[allow(dead_code)]
mod common;

const HANG_GUARD: Duration = Duration::from_secs(60);
const WRITES: u64 = 4000;
const NODES: usize = 3;

fn poll(what: &str, mut ok: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ok() {
        assert!(t0.elapsed() < HANG_GUARD, "hang guard: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// An active hub (`rail`), its standby, and the configuration of a node that joins
/// the active one with the standby named.
fn rails(secret: &[u8]) -> (Hub, Hub, NetConfig) {
    rails_beating(secret, Duration::from_millis(50))
}

/// [`rails`] with the hubs' heartbeat period `heartbeat` (the standby copies the
/// active's tables at each change and every heartbeat).
fn rails_beating(secret: &[u8], heartbeat: Duration) -> (Hub, Hub, NetConfig) {
    let key = Key::from_secret(secret);
    let tune = |c: &mut HubConfig| c.heartbeat = heartbeat;
    let (active, active_addr) = common::keyed_hub(&key, |c| {
        tune(c);
        c.rail = true;
    });
    let (standby, standby_addr) = common::keyed_hub(&key, |c| {
        tune(c);
        c.standby_of = Some(active_addr.clone());
    });
    let mut cfg = common::node_cfg(
        &active_addr,
        &key,
        Duration::from_millis(50),
        Duration::from_secs(5),
    );
    cfg.hub = HubSpec::dual_rail(active_addr.as_str(), standby_addr);
    (active, standby, cfg)
}

#[test]
fn nodes_move_to_the_standby_when_the_active_hub_stops_and_lose_nothing() {
    let (active, standby, cfg) = rails(b"dual rail loopback");
    let ns: Vec<Node> = (0..NODES)
        .map(|_| Node::join("dualrail", cfg.clone()).unwrap())
        .collect();
    ns[0].wait_for_members(NODES, HANG_GUARD).unwrap();
    let attrs = TxAttrs {
        local_copy: true,
        ..TxAttrs::default()
    };
    let (rxs, txs): (Vec<_>, Vec<_>) = ns
        .iter()
        .map(|n| {
            let s = n.segment("r", NODES * 8, 0o600).unwrap();
            (
                s.map_rx().unwrap(),
                s.map_tx(Dest::Broadcast, attrs).unwrap(),
            )
        })
        .unzip();
    // The standby copied the tables (members, segment, receivers) after they were set.
    let set_up = Instant::now();
    poll("the standby's copy of the tables", || {
        let r = standby.status().rail.unwrap();
        assert_eq!(r.role, "standby");
        r.mirrored_ms_ago
            .is_some_and(|ms| u128::from(ms) < set_up.elapsed().as_millis())
    });
    let written = AtomicU64::new(0);
    let stop_reading = AtomicBool::new(false);
    let mut active = Some(active);
    let rxs = std::thread::scope(|s| {
        for (k, tx) in txs.into_iter().enumerate() {
            let written = &written;
            s.spawn(move || {
                for i in 1..=WRITES {
                    if let Err(e) = tx.write_u64(k * 8, i) {
                        panic!("sender {k}, write {i}: {e}");
                    }
                    written.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let readers: Vec<_> = rxs
            .into_iter()
            .map(|rx| {
                let stop = &stop_reading;
                s.spawn(move || {
                    let mut last = [0u64; NODES];
                    let mut reads = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for (w, l) in last.iter_mut().enumerate() {
                            let v = rx.load_u64(w * 8).unwrap();
                            assert!(v >= *l, "word {w} went back from {l} to {v}");
                            *l = v;
                            reads += 1;
                        }
                    }
                    (rx, reads)
                })
            })
            .collect();
        poll("writes under way", || {
            written.load(Ordering::Relaxed) > NODES as u64 * WRITES / 4
        });
        drop(active.take());
        println!(
            "active hub stopped after {} of {} writes",
            written.load(Ordering::Relaxed),
            NODES as u64 * WRITES
        );
        poll("every write sent", || {
            written.load(Ordering::Relaxed) == NODES as u64 * WRITES
        });
        for n in &ns {
            n.ack().unwrap();
        }
        stop_reading.store(true, Ordering::Relaxed);
        readers
            .into_iter()
            .map(|r| {
                let (rx, reads) = r.join().unwrap();
                assert!(reads > 0);
                rx
            })
            .collect::<Vec<_>>()
    });
    for rx in &rxs {
        for k in 0..NODES {
            assert_eq!(
                rx.load_u64(k * 8).unwrap(),
                WRITES,
                "sender {k}'s last value"
            );
        }
    }
    let st = standby.status();
    let r = st.rail.unwrap();
    println!("standby after the switch: {r:?}");
    assert_eq!(r.role, "took over");
    assert_eq!(r.resumed, vec![0, 1, 2]);
    assert_eq!(st.members.len(), NODES);
    for n in &ns {
        assert_eq!(n.members().len(), NODES);
    }
}

/// A node that joins with the id of one that left (ids are reused, lowest free first)
/// starts its link's numbering at 1 again: on a cluster with two rails, the receivers
/// must apply its packets, not skip them as ones they applied before a switch (they
/// compared its seqs with the last seq of the node that left).
#[test]
fn a_node_that_takes_a_left_node_s_id_is_heard_on_a_dual_rail_cluster() {
    let (_active, _standby, cfg) = rails(b"dual rail reuse");
    let reader = Node::join("reuse", cfg.clone()).unwrap();
    let rx = reader.segment("r", 64, 0o600).unwrap().map_rx().unwrap();
    let first = Node::join("reuse", cfg.clone()).unwrap();
    let id = first.id();
    {
        let tx = first
            .segment("r", 64, 0o600)
            .unwrap()
            .map_tx(Dest::Node(reader.id()), TxAttrs::default())
            .unwrap();
        for v in 1..=100u64 {
            tx.write_u64(0, v).unwrap();
        }
        first.ack().unwrap();
    }
    assert_eq!(rx.load_u64(0).unwrap(), 100);
    first.leave();
    poll("the first writer's leave", || reader.members().len() == 1);
    let second = Node::join("reuse", cfg).unwrap();
    assert_eq!(second.id(), id, "the id of the node that left is reused");
    let tx = second
        .segment("r", 64, 0o600)
        .unwrap()
        .map_tx(Dest::Node(reader.id()), TxAttrs::default())
        .unwrap();
    for v in 1..=5u64 {
        tx.write_u64(8, v).unwrap();
    }
    second.ack().unwrap();
    assert_eq!(
        rx.load_u64(8).unwrap(),
        5,
        "the new node's writes reached the reader"
    );
}

/// A lock held at a switch stays held for a node that maps it only after: the
/// standby's copy of the tables (the lock page's shadow, what a node mapping the page
/// is sent) is taken at table changes and every heartbeat, so it misses a bid made
/// since; the standby takes the bids of the node that applied the most instead. Before
/// that, the late node was sent a page without the holder's bid and took the lock too.
#[test]
fn a_lock_held_at_the_switch_stays_held_for_a_node_that_maps_it_later() {
    // Heartbeats far apart: the standby's last copy is the one taken when the holder
    // mapped the lock page, before its bid (time packets keep the links heard).
    let (active, standby, cfg) = rails_beating(b"lock at the switch", Duration::from_secs(60));
    let (a, b) = (
        Node::join("lockrail", cfg.clone()).unwrap(),
        Node::join("lockrail", cfg).unwrap(),
    );
    a.wait_for_members(2, HANG_GUARD).unwrap();
    let la = a.lock("m").unwrap();
    poll("the standby's copy of the lock page", || {
        standby.status().rail.unwrap().mirrored_ms_ago.is_some()
    });
    let held = la.acquire().unwrap();
    // Released: its sender no longer holds the bid for a standby to order again.
    poll("the bid released", || a.rail_report().unreleased.is_empty());
    drop(active);
    poll("the standby's takeover", || {
        standby.status().rail.unwrap().role == "took over"
    });
    let lb = b.lock("m").unwrap();
    assert!(
        lb.try_acquire().unwrap().is_none(),
        "a node that mapped the lock after the switch took it while another held it"
    );
    let locks = standby.status().locks;
    assert_eq!(locks.len(), 1);
    assert_eq!(
        locks[0].bidders,
        vec![a.id().0],
        "the standby's page holds the bid"
    );
    drop(held);
    poll("the lock, released", || lb.try_acquire().unwrap().is_some());
}

/// A lock held by a node that does not come to the standby is released at the
/// takeover, though the standby's copy of the lock page never saw its bid: the page is
/// rebuilt from the resumed nodes' copies, which show it, and every non-member's bid is
/// cleared. (Before, only a bid in the standby's own copy was: the lock stayed taken.)
#[test]
fn a_lock_held_by_a_node_that_does_not_resume_is_released_at_the_takeover() {
    let (active, standby, cfg) = rails_beating(b"lock of a lost node", Duration::from_secs(60));
    let a = Node::join("lostlock", cfg.clone()).unwrap();
    // Without the standby named, c cannot resume there: it is lost with the active.
    let c = Node::join(
        "lostlock",
        NetConfig {
            hub: HubSpec::connect(active.local_addr().to_string()),
            ..cfg
        },
    )
    .unwrap();
    a.wait_for_members(2, HANG_GUARD).unwrap();
    let (la, lc) = (a.lock("m").unwrap(), c.lock("m").unwrap());
    poll("the standby's copy of the lock pages", || {
        standby.status().rail.unwrap().mirrored_ms_ago.is_some()
    });
    let held = lc.acquire().unwrap();
    poll("the bid released", || c.rail_report().unreleased.is_empty());
    assert!(la.try_acquire().unwrap().is_none(), "c holds the lock");
    drop(active);
    poll("the standby's takeover without c", || {
        standby.status().rail.unwrap().role == "took over"
    });
    assert_eq!(standby.status().rail.unwrap().resumed, vec![a.id().0]);
    poll("the lock, released with c", || {
        la.try_acquire().unwrap().is_some()
    });
    std::mem::forget(held);
}
