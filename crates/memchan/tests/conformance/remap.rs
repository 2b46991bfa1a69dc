//! A receiver that unmaps a segment and maps it again gets every later write: senders
//! that resolved its earlier receive memory (direct deposit and ordered packets, from
//! another node and from itself with local copy) deliver to the new one.

use memchan::{Dest, TxAttrs};
use memchan_testkit::harness::{unique_cluster, Transport};
use memchan_testkit::on_every_transport;

fn a_receiver_that_maps_a_segment_again_gets_the_later_writes(t: &Transport) {
    let name = unique_cluster("remap");
    let a = t.join(&name).unwrap();
    let b = t.join(&name).unwrap();
    let seg_a = a.segment("r", 4096, 0o600).unwrap();
    let seg_b = b.segment("r", 4096, 0o600).unwrap();
    let own = TxAttrs {
        local_copy: true,
        ..TxAttrs::default()
    };
    let direct = seg_a
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    let bcast = seg_a.map_tx(Dest::Broadcast, own).unwrap();
    let mut rx_a = seg_a.map_rx().unwrap();
    let mut rx_b = seg_b.map_rx().unwrap();
    for round in 1..=3u64 {
        // Both senders use (and so resolve) the receive memory of this round.
        direct.write_u64(0, round).unwrap();
        bcast.write_u64(8, round).unwrap();
        a.ack().unwrap();
        assert_eq!(rx_b.load_u64(0).unwrap(), round, "direct, round {round}");
        assert_eq!(rx_b.load_u64(8).unwrap(), round, "broadcast, round {round}");
        assert_eq!(
            rx_a.load_u64(8).unwrap(),
            round,
            "local copy, round {round}"
        );
        // Unmap and map again: fresh, zeroed receive memory at both nodes.
        drop(rx_b);
        rx_b = seg_b.map_rx().unwrap();
        drop(rx_a);
        rx_a = seg_a.map_rx().unwrap();
        assert_eq!(rx_b.load_u64(0).unwrap(), 0, "new receive memory");
    }
    direct.write_u64(16, 7).unwrap();
    bcast.write_u64(24, 9).unwrap();
    a.ack().unwrap();
    assert_eq!(rx_b.load_u64(16).unwrap(), 7, "direct after the last map");
    assert_eq!(
        rx_b.load_u64(24).unwrap(),
        9,
        "broadcast after the last map"
    );
    assert_eq!(
        rx_a.load_u64(24).unwrap(),
        9,
        "local copy after the last map"
    );
}
on_every_transport!(a_receiver_that_maps_a_segment_again_gets_the_later_writes);
