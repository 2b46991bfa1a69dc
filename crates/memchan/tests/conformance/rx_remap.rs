//! Receive-side remap (seed 000's MEMORY CHANNEL 2) and the page-size-sensitive
//! operations, on every transport at 4 KiB and at 8 KiB pages. The receiver is this
//! test's process, the sender a worker process that never learns of the remap: its
//! point-to-point and broadcast writes to page 0 land on page 2 while page 0 is
//! remapped there, and where they are addressed once it is not; multi-page writes,
//! per-page attributes, narrow writes at the end of the segment, notify, the lock and
//! the barrier work at the page size the cluster chose.

use memchan::{Cluster, Config, Dest, Error, NodeId, PageSize, RxAttrs, TxAttrs};
use memchan_testkit::harness::{unique_cluster, Transport};
use memchan_testkit::on_every_transport;
use std::time::Duration;

const PAGES: usize = 4;

fn cfg(page: usize) -> Config {
    Config::default().with_page_size(PageSize::from_bytes(page).expect("4 or 8 KiB"))
}

/// The multi-page write's bytes.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

/// Worker: `cluster page_bytes` — the sender. Node 0 is the receiver; every step is
/// between barriers the receiver takes part in.
pub fn worker(a: &[String]) {
    let page: usize = a[1].parse().unwrap();
    let c = Cluster::join_with(&a[0], cfg(page)).unwrap();
    assert_eq!(c.page_size(), page);
    c.wait_for_members(2, Duration::from_secs(30)).unwrap();
    let seg = c.segment("r", PAGES * page, 0o600).unwrap();
    let to_rx = seg
        .map_tx(Dest::Node(NodeId(0)), TxAttrs::default())
        .unwrap();
    let all = seg
        .map_tx(
            Dest::Broadcast,
            TxAttrs {
                local_copy: true,
                ..TxAttrs::default()
            },
        )
        .unwrap();
    let own = seg.map_rx().unwrap();
    c.barrier().unwrap(); // 1: the receiver remapped page 0 to page 2
    to_rx.write_u64(8, 11).unwrap();
    all.write_u64(24, 12).unwrap();
    // 32 bytes across the end of page 0 into page 1.
    to_rx.write(page - 16, &pattern(32)).unwrap();
    to_rx.write_u32(page + 64, 22).unwrap();
    // A record (the message layer's slot) within remapped page 0.
    to_rx.write_record(40, &record_body(1), 32, 71).unwrap();
    // Whole words without notify, as the message layer's acknowledgement word.
    to_rx.write_no_notify(64, &record_body(5)).unwrap();
    c.ack().unwrap();
    // The sender's own copy is not remapped: the broadcast is where it is addressed.
    assert_eq!(own.load_u64(24).unwrap(), 12);
    c.barrier().unwrap(); // 2: written
    c.barrier().unwrap(); // 3: the receiver undid the remap, disabled page 1
    to_rx.write_u64(8, 33).unwrap();
    to_rx.write_u64(page + 8, 44).unwrap(); // page 1: receive disabled, dropped
    to_rx.write_u64(page - 8, 45).unwrap();
    // A record within page 1 is dropped whole; one on page 0 lands.
    to_rx
        .write_record(page + 40, &record_body(2), page + 32, 72)
        .unwrap();
    to_rx.write_no_notify(page + 72, &record_body(6)).unwrap();
    to_rx.write_record(40, &record_body(3), 32, 73).unwrap();
    // A record whose body crosses from page 2 into page 3, published on page 3.
    to_rx
        .write_record(3 * page - 8, &record_body(4), 3 * page + 16, 74)
        .unwrap();
    c.ack().unwrap();
    c.barrier().unwrap(); // 4: written
    c.barrier().unwrap(); // 5: page 1 enabled again
    let big = pattern(PAGES * page - 100);
    to_rx.write(50, &big).unwrap();
    to_rx.write_u8(PAGES * page - 1, 0xab).unwrap();
    to_rx.write_u16(PAGES * page - 4, 0xcdef).unwrap();
    to_rx.write_u32(PAGES * page - 8, 0x0102_0304).unwrap();
    c.ack().unwrap();
    {
        let lock = c.lock("L").unwrap();
        let g = lock.acquire().unwrap();
        g.release().unwrap();
    }
    c.barrier().unwrap(); // 6: written
    println!("DONE");
    c.barrier().unwrap(); // 7: the receiver is done with the cluster
}

/// A record's body: two words that name it (`n << 8`, then `(n << 8) + 1`).
fn record_body(n: u64) -> Vec<u8> {
    [n << 8, (n << 8) + 1]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

/// The record `record_body(n)` published with `word` at `publish` (its body after it).
fn assert_record(rx: &memchan::RxMapping, publish: usize, n: u64, word: u64, what: &str) {
    let got = [publish, publish + 8, publish + 16].map(|o| rx.load_u64(o).unwrap());
    assert_eq!(got, [word, n << 8, (n << 8) + 1], "{what}");
}

fn remap_and_pages(t: &Transport, page: usize) {
    let name = unique_cluster("rxremap");
    let c = t.join_with(&name, cfg(page)).unwrap();
    assert_eq!((c.node_id(), c.page_size()), (NodeId(0), page));
    let seg = c.segment("r", PAGES * page, 0o600).unwrap();
    let rx = seg
        .map_rx_with(RxAttrs {
            notify: true,
            ..RxAttrs::default()
        })
        .unwrap();
    let mut w = t.spawn("rx-remap", &[name.clone(), page.to_string()]);
    c.wait_for_members(2, Duration::from_secs(30)).unwrap();

    // Bad input changes nothing.
    for (p, to) in [(PAGES, 0), (0, PAGES), (usize::MAX, 1)] {
        assert!(
            matches!(rx.remap_page(p, to), Err(Error::OutOfBounds { .. })),
            "remap_page({p}, {to})"
        );
    }
    rx.remap_page(0, 2).unwrap();
    c.barrier().unwrap(); // 1
    c.barrier().unwrap(); // 2: the sender's writes are acked
    assert_eq!(rx.load_u64(8).unwrap(), 0, "page 0 is remapped");
    assert_eq!(
        rx.load_u64(2 * page + 8).unwrap(),
        11,
        "direct write remapped"
    );
    assert_eq!(rx.load_u64(24).unwrap(), 0);
    assert_eq!(
        rx.load_u64(2 * page + 24).unwrap(),
        12,
        "broadcast remapped"
    );
    let p = pattern(32);
    let mut got = [0u8; 16];
    rx.read(3 * page - 16, &mut got).unwrap();
    assert_eq!(
        got[..],
        p[..16],
        "page 0's part of the crossing write, on page 2"
    );
    rx.read(page, &mut got).unwrap();
    assert_eq!(got[..], p[16..], "page 1's part where it is addressed");
    assert_eq!(rx.load_u32(page + 64).unwrap(), 22);
    assert_eq!(rx.load_u64(32).unwrap(), 0, "the record's page is remapped");
    assert_record(&rx, 2 * page + 32, 1, 71, "a record on a remapped page");
    assert_eq!(
        [2 * page + 64, 2 * page + 72, 64].map(|o| rx.load_u64(o).unwrap()),
        [5 << 8, (5 << 8) + 1, 0],
        "whole words without notify on a remapped page"
    );
    // Page 0's attributes (notify) held for what landed on page 2.
    assert!(rx.wait(Some(Duration::ZERO)).unwrap(), "notify of page 0");
    rx.remap_page(0, 0).unwrap();
    rx.set_attrs(
        page,
        page,
        RxAttrs {
            receive_enable: false,
            notify: false,
            remote_read: false,
        },
    )
    .unwrap();
    // set_attrs keeps a remap: remap page 3 to 1, set its attributes, undo both.
    rx.remap_page(3, 1).unwrap();
    rx.set_attrs(3 * page, 1, RxAttrs::default()).unwrap();
    rx.remap_page(3, 3).unwrap();
    c.barrier().unwrap(); // 3
    c.barrier().unwrap(); // 4
    assert_eq!(rx.load_u64(8).unwrap(), 33, "remap undone");
    assert_eq!(
        rx.load_u64(2 * page + 8).unwrap(),
        11,
        "page 2 keeps its copy"
    );
    let before = u64::from_le_bytes(p[24..32].try_into().unwrap());
    assert_eq!(
        rx.load_u64(page + 8).unwrap(),
        before,
        "receive disabled on page 1"
    );
    assert_eq!(rx.load_u64(page - 8).unwrap(), 45);
    assert_eq!(
        (
            rx.load_u64(page + 32).unwrap(),
            rx.load_u64(page + 40).unwrap()
        ),
        (0, 0),
        "a record on a receive-disabled page is dropped whole"
    );
    assert_eq!(
        rx.load_u64(page + 72).unwrap(),
        0,
        "words without notify on a receive-disabled page are dropped"
    );
    assert_record(&rx, 32, 3, 73, "a record where it is addressed again");
    assert_eq!(rx.load_u64(3 * page + 16).unwrap(), 74);
    assert_eq!(
        (
            rx.load_u64(3 * page - 8).unwrap(),
            rx.load_u64(3 * page).unwrap()
        ),
        (4 << 8, (4 << 8) + 1),
        "a record's body across two pages"
    );
    assert!(!rx.attrs(page).unwrap().receive_enable);
    assert!(
        rx.attrs(page - 1).unwrap().receive_enable,
        "page 0 unchanged"
    );
    rx.set_attrs(page, page, RxAttrs::default()).unwrap();
    c.barrier().unwrap(); // 5
    c.barrier().unwrap(); // 6
    let big = pattern(PAGES * page - 100);
    let mut back = vec![0u8; big.len()];
    rx.read(50, &mut back).unwrap();
    assert!(back == big, "multi-page write");
    assert_eq!(rx.load_u8(PAGES * page - 1).unwrap(), 0xab);
    assert_eq!(rx.load_u16(PAGES * page - 4).unwrap(), 0xcdef);
    assert_eq!(rx.load_u32(PAGES * page - 8).unwrap(), 0x0102_0304);
    w.expect_line("DONE", Duration::from_secs(60));
    c.barrier().unwrap(); // 7
    w.finish(Duration::from_secs(60));
}

fn remap_and_pages_4k(t: &Transport) {
    remap_and_pages(t, 4096);
}
on_every_transport!(remap_and_pages_4k);

fn remap_and_pages_8k(t: &Transport) {
    remap_and_pages(t, 8192);
}
on_every_transport!(remap_and_pages_8k);

/// A write across pages of an rx mapping without notify (whose pages the one-host
/// transport stores in runs of pages with the same receive bits): a receive-disabled
/// page in the middle drops its part, a remapped one sends its part where it points,
/// and every other page gets its own part.
fn a_write_across_pages_honours_every_pages_bits(t: &Transport) {
    const N: usize = 8;
    let page = 4096;
    let name = unique_cluster("rxruns");
    let a = t.join_with(&name, cfg(page)).unwrap();
    let b = t.join_with(&name, cfg(page)).unwrap();
    a.wait_for_members(2, Duration::from_secs(30)).unwrap();
    let seg_b = b.segment("runs", N * page, 0o600).unwrap();
    let rx = seg_b.map_rx().unwrap();
    let off = RxAttrs {
        receive_enable: false,
        ..RxAttrs::default()
    };
    rx.set_attrs(2 * page, page, off).unwrap();
    rx.remap_page(4, 7).unwrap();
    let seg_a = a.segment("runs", N * page, 0o600).unwrap();
    let tx = seg_a
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    // Bytes 50 .. 6 pages - 50: pages 0 to 5.
    let data = pattern(6 * page - 100);
    tx.write(50, &data).unwrap();
    a.ack().unwrap();
    let mut want = vec![0u8; N * page];
    for (i, &byte) in data.iter().enumerate() {
        let at = 50 + i;
        match at / page {
            2 => {}
            4 => want[7 * page + at % page] = byte,
            _ => want[at] = byte,
        }
    }
    let mut got = vec![0u8; N * page];
    rx.read(0, &mut got).unwrap();
    for p in 0..N {
        assert!(
            got[p * page..(p + 1) * page] == want[p * page..(p + 1) * page],
            "page {p}"
        );
    }
    drop((tx, rx));
    a.leave();
    b.leave();
}
on_every_transport!(a_write_across_pages_honours_every_pages_bits);
