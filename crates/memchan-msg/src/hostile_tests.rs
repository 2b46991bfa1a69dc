//! A member that writes what the protocol forbids into another's receive memory:
//! the victim fails that member alone, with a typed error naming what it wrote, and
//! goes on with the others. Three real nodes of one cluster on shared memory, in this
//! process; the hostile one writes through its communicator's own tx mapping (the
//! words any member can write there).

use super::*;
use std::io::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Barrier;

/// Node indexes in the communicator: the victim, the hostile member, an honest one.
const A: usize = 0;
const B: usize = 1;
const C: usize = 2;

/// Runs the three roles, each on its node's communicator in a thread of its own
/// (a `Comm` stays on the thread that made it). A and B share `ab` to order their
/// steps; all three wait for each other before leaving, so that no one sees another
/// leave.
fn run3(
    a: impl FnOnce(&mut Comm<'_>, &Barrier) + Send,
    b: impl FnOnce(&mut Comm<'_>, &Barrier) + Send,
    c: impl FnOnce(&mut Comm<'_>) + Send,
) {
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "msg-hostile-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    // Joined one after the other: node ids 0, 1, 2 are A, B, C.
    let cs: Vec<Cluster> = (0..3)
        .map(|_| Cluster::join(&name).expect("join"))
        .collect();
    for (i, c) in cs.iter().enumerate() {
        assert_eq!(c.node_id().index(), i, "a fresh cluster numbers from 0");
    }
    let (ab, all) = (Barrier::new(2), Barrier::new(3));
    let comm = |c| Comm::new(c, "hostile", CommConfig::default()).expect("communicator");
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut m = comm(&cs[A]);
            or_exit(|| a(&mut m, &ab));
            all.wait();
        });
        s.spawn(|| {
            let mut m = comm(&cs[B]);
            or_exit(|| b(&mut m, &ab));
            all.wait();
        });
        s.spawn(|| {
            let mut m = comm(&cs[C]);
            or_exit(|| c(&mut m));
            all.wait();
        });
    });
}

/// Runs a role; if it fails, ends the test process (failed) rather than leave the
/// other roles waiting for it for ever, saying why on the process's stderr (the
/// test harness's capture would be lost with the process).
fn or_exit(f: impl FnOnce()) {
    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        let why = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("?");
        let _ = writeln!(
            std::io::stderr(),
            "a role failed, ending the test process: {why}"
        );
        std::process::exit(101);
    }
}

/// `from` publishes `words` (a slot's body words) as its next slot towards `to`.
fn forge(from: &mut Comm<'_>, to: usize, words: &[u64]) {
    let mut b = Body::default();
    b.w[..words.len()].copy_from_slice(words);
    from.publish_bytes(to, b.first_words(words.len()), false)
        .expect("the hostile write lands");
}

/// The error is `Protocol` from node `node`, its reason containing `why`.
fn assert_protocol(e: &MsgError, node: usize, why: &str) {
    match e {
        MsgError::Protocol { node: n, why: w } if *n == node as u32 && w.contains(why) => {}
        e => panic!("wanted a protocol error of node {node} ({why}), got {e:?}"),
    }
}

/// A's part after B broke the protocol: A refuses B with the same error, and still
/// exchanges messages with C both ways ([`c_goes_on_with_a`] the other side).
fn a_goes_on_with_c(a: &mut Comm<'_>, why: &str) {
    let e = a.send(B as u32, 1, b"more").expect_err("B is failed");
    assert_protocol(&e, B, why);
    let mut buf = [0u8; 16];
    let s = a.recv(C as u32, 2, &mut buf).expect("A receives from C");
    assert_eq!(&buf[..s.len], b"from C");
    a.send(C as u32, 3, b"to C").expect("A sends to C");
}

fn c_goes_on_with_a(c: &mut Comm<'_>) {
    c.send(A as u32, 2, b"from C").expect("C sends");
    let mut buf = [0u8; 16];
    let s = c.recv(A as u32, 3, &mut buf).expect("C receives from A");
    assert_eq!(&buf[..s.len], b"to C");
}

/// Slots B writes (their body words, one after the other), the last of which the
/// protocol forbids, and the reason A gives.
fn forbidden_slots() -> Vec<(Vec<Vec<u64>>, &'static str)> {
    let k = |kind: Kind| kind as u64;
    let one = |v: Vec<(Vec<u64>, &'static str)>| v.into_iter().map(|(w, why)| (vec![w], why));
    let mut all: Vec<_> = one(vec![
        (vec![0x7f], "unknown slot kind"),
        // Eager, 200 bytes (a slot holds 40), tag 5.
        (
            vec![k(Kind::Eager) | (200 << 16) | (5 << 32)],
            "bad message length",
        ),
        (
            vec![
                k(Kind::Eager) | (8 << 16) | (u64::from(TAG_UB) + 1) << 32,
                0,
            ],
            "tag above TAG_UB",
        ),
        // A buffered message short enough to have gone eager.
        (vec![k(Kind::Hdr), 8], "bad message length"),
        (vec![k(Kind::Frag), 99, 8], "fragment of no message"),
        (vec![k(Kind::Fin), 99, 8], "finish of no message"),
        (vec![k(Kind::Ack), 99], "acknowledge of no message"),
        (vec![k(Kind::Cts), 99, 0], "clear-to-send of no request"),
        (
            vec![k(Kind::Name) | (4 << 16), 0],
            "name continuation without a clear-to-send",
        ),
    ])
    .collect();
    // A buffered 1000-byte message (its header is slot 1, its cookie), then a
    // fragment of it longer than the message, or empty.
    let hdr = vec![k(Kind::Hdr) | (5 << 32), 1000];
    for n in [0, 1001] {
        all.push((
            vec![hdr.clone(), vec![k(Kind::Frag) | (5 << 32), 1, n]],
            "bad fragment length",
        ));
    }
    all
}

#[test]
fn a_slot_the_protocol_forbids_fails_its_writer_alone() {
    for (slots, why) in forbidden_slots() {
        run3(
            |a, ab| {
                ab.wait();
                let mut buf = [0u8; 2048];
                let e = a
                    .recv(B as u32, ANY_TAG, &mut buf)
                    .expect_err("a receive from B fails, it does not hang");
                assert_protocol(&e, B, why);
                a_goes_on_with_c(a, why);
            },
            |b, ab| {
                for words in &slots {
                    forge(b, A, words);
                }
                ab.wait();
            },
            c_goes_on_with_a,
        );
    }
}

/// A's synchronous 1000-byte send to B is a request to send (cookie 1: A's first
/// slot to B); B answers with the clear-to-send `cts` (its words). A's send fails
/// with a protocol error containing `why`. B runs `before` first and `after`, with
/// what `before` made, once A is done.
fn clear_to_send_refused<T>(
    cts: [u64; 6],
    why: &'static str,
    before: impl FnOnce(&Comm<'_>) -> T + Send,
    after: impl FnOnce(T) + Send,
) {
    run3(
        |a, ab| {
            let r = a.issend(B as u32, 5, vec![7; 1000]).expect("issend");
            ab.wait();
            ab.wait();
            let e = a.wait(r).result.expect_err("the send fails");
            assert_protocol(&e, B, why);
            a_goes_on_with_c(a, why);
            ab.wait();
        },
        |b, ab| {
            let t = before(b);
            ab.wait();
            let first = b.lay.slot(A, 1);
            assert_eq!(b.word(first), 1, "the request to send landed");
            forge(b, A, &cts);
            ab.wait();
            ab.wait();
            after(t);
        },
        c_goes_on_with_a,
    );
}

#[test]
fn a_clear_to_send_naming_a_segment_the_sender_cannot_open_fails_that_receiver_alone() {
    let name = u64::from_le_bytes(*b"nope\0\0\0\0");
    clear_to_send_refused(
        [Kind::Cts as u64, 1, 1, 0, 4, name],
        "segment `nope`: unknown segment",
        |_| (),
        |()| (),
    );
}

#[test]
fn a_clear_to_send_past_the_end_of_its_segment_writes_nothing() {
    let name = u64::from_le_bytes(*b"target\0\0");
    clear_to_send_refused(
        [Kind::Cts as u64, 1, 1, 4000, 6, name],
        "1000 bytes at offset 4000 of segment `target`",
        // A real segment of 4096 bytes, which B maps.
        |b| {
            let seg = b.cluster.segment("target", 4096, 0o600).expect("segment");
            let rx = seg.map_rx().expect("rx");
            (seg, rx)
        },
        |(_seg, rx)| {
            let mut tail = [0u8; 96];
            rx.read(4000, &mut tail).expect("read");
            assert!(tail.iter().all(|&x| x == 0), "nothing was written");
        },
    );
}

#[test]
fn a_credit_past_what_was_sent_fails_the_receiver_that_wrote_it() {
    let why = "credit past what was sent";
    run3(
        |a, ab| {
            let pending = a.irecv(B as u32, 9, vec![0; 8]).expect("irecv");
            ab.wait();
            // A reads the credit word when its ring towards B looks full: after
            // `ring_slots` sends B did not take.
            for i in 0..a.lay.slots {
                a.send(B as u32, 1, &[i as u8]).expect("room in the ring");
            }
            let e = a.send(B as u32, 1, b"one more").expect_err("refused");
            assert_protocol(&e, B, why);
            // B is failed: the receive from it A had posted is complete, with the
            // same error (B will never send).
            let done = a.test(pending).expect("test").expect("complete");
            assert_protocol(&done.result.expect_err("failed"), B, why);
            a_goes_on_with_c(a, why);
        },
        |b, ab| {
            // B claims to have consumed slots A never sent.
            let credit = b.lay.credit(b.me);
            b.peers[A]
                .tx
                .as_ref()
                .expect("tx")
                .write_u64(credit, 1 << 40)
                .expect("the hostile write lands");
            ab.wait();
        },
        c_goes_on_with_a,
    );
}

#[test]
fn a_chunk_credit_past_what_was_sent_fails_the_receiver_that_wrote_it() {
    let why = "chunk credit past what was sent";
    run3(
        |a, ab| {
            ab.wait();
            // A buffered message longer than a slot goes through the bulk chunks,
            // whose credit word B claims to be past what A sent.
            let r = a.isend(B as u32, 1, vec![3; 1000]).expect("isend");
            let e = a.wait(r).result.expect_err("the send fails");
            assert_protocol(&e, B, why);
            a_goes_on_with_c(a, why);
        },
        |b, ab| {
            let chunks = b.lay.credit(b.me) + 8;
            b.peers[A]
                .tx
                .as_ref()
                .expect("tx")
                .write_u64(chunks, 1 << 40)
                .expect("the hostile write lands");
            ab.wait();
        },
        c_goes_on_with_a,
    );
}
