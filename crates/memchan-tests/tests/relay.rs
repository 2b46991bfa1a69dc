//! End-to-end tests of `memchan relay`: the real binary between a test "node" and a
//! test "hub" (plain TCP sockets of this process), fed frames made by
//! `memchan_link::wire::encode`; the stats file must count what the hub observed.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use memchan_link::wire::{encode, Decoder, FrameKey, Key, Kind, Received};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(10);

fn key() -> FrameKey {
    Key::from_secret(b"relay test")
        .link(&[1; 16], &[2; 16])
        .to_hub
}

/// A frame under counter `seq + 1` (the tests send seqs in order, so counters grow;
/// the relay never looks at them).
fn frame(kind: Kind, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode(&mut out, &key(), seq + 1, kind, seq, 0, &[payload]);
    out
}

/// A Data frame whose payload names its seq, so the tests can tell frames apart.
fn data(seq: u64) -> Vec<u8> {
    frame(Kind::Data, seq, format!("data frame {seq}").as_bytes())
}

/// The relay process, killed if a test fails before stopping it.
struct Relay {
    child: Child,
    addr: String,
    stats: PathBuf,
}

impl Relay {
    fn start(hub: &TcpListener, faults: &[&str]) -> Relay {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let stats = std::env::temp_dir().join(format!(
            "memchan-relay-test-{}-{}.json",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&stats);
        let mut child = Command::new(memchan_tests::memchan_exe())
            .args(["relay", "--listen", "127.0.0.1:0", "--to"])
            .arg(hub.local_addr().unwrap().to_string())
            .arg("--stats-file")
            .arg(&stats)
            .args(faults)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn memchan relay");
        // "listening ADDR\n", read byte by byte so nothing past the line is consumed.
        let mut out = child.stdout.take().unwrap();
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while out.read(&mut b).expect("relay stdout") == 1 && b[0] != b'\n' {
            line.push(b[0]);
        }
        let line = String::from_utf8(line).unwrap();
        let addr = line
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("relay printed `{line}`, not `listening ADDR`"))
            .to_string();
        Relay { child, addr, stats }
    }

    /// SIGTERM, wait for a clean exit; returns the final stats and the stderr.
    fn stop(mut self) -> (Value, String) {
        // SAFETY: kill(2) on our own child's pid.
        let sent = unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(sent, 0);
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "relay ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(5));
        };
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(status.success(), "relay exited {status}; stderr:\n{err}");
        assert!(err.contains("relay: "), "no summary on stderr:\n{err}");
        let text = std::fs::read_to_string(&self.stats).expect("stats file");
        let _ = std::fs::remove_file(&self.stats);
        (serde_json::from_str(&text).expect("stats JSON"), err)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.stats);
    }
}

/// Connects a node through the relay; returns (node side, hub side).
fn link(hub: &TcpListener, relay: &Relay) -> (TcpStream, TcpStream) {
    let node = TcpStream::connect(&relay.addr).expect("connect to relay");
    hub.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + WAIT;
    let hub_side = loop {
        match hub.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                assert!(
                    Instant::now() < deadline,
                    "relay never connected to the hub"
                );
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => panic!("accept: {e}"),
        }
    };
    hub_side.set_nonblocking(false).unwrap();
    for s in [&node, &hub_side] {
        s.set_read_timeout(Some(WAIT)).unwrap();
    }
    (node, hub_side)
}

fn hub() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").unwrap()
}

/// Reads exactly `n` bytes.
fn read_bytes(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut b = vec![0; n];
    s.read_exact(&mut b).expect("read through relay");
    b
}

/// Decodes `n` frames, checking their CRCs (not their MACs and counters: a link would
/// refuse the relay's duplicated and reordered copies as replayed, and these tests
/// count the copies).
fn read_frames(s: &mut TcpStream, n: usize) -> Vec<Received> {
    let mut d = Decoder::new(None);
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    while got.len() < n {
        while let Some(r) = d.next_frame().expect("decodable stream") {
            got.push(r);
        }
        if got.len() >= n {
            break;
        }
        let k = s.read(&mut chunk).expect("read through relay");
        assert!(k > 0, "relay closed after {} of {n} frames", got.len());
        d.push(&chunk[..k]);
    }
    assert_eq!(d.pending(), 0, "bytes after the expected frames");
    assert_eq!(got.len(), n, "more frames than expected: {got:?}");
    got
}

/// Nothing more arrives within 100 ms.
fn assert_quiet(s: &mut TcpStream) {
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut b = [0u8; 64];
    match s.read(&mut b) {
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
        other => panic!("unexpected bytes or close: {other:?}"),
    }
    s.set_read_timeout(Some(WAIT)).unwrap();
}

fn seq_and_payload(r: &Received) -> (Kind, u64, Vec<u8>) {
    match r {
        Received::Frame(h, p) => (h.kind, h.seq, p.clone()),
        other => panic!("not a good frame: {other:?}"),
    }
}

fn stat(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("no `{k}` in stats {v}"))
}

#[test]
fn without_faults_bytes_pass_unchanged_both_ways_and_a_close_closes_the_other_side() {
    let hub = hub();
    let relay = Relay::start(&hub, &[]);
    let (mut node, mut hub_side) = link(&hub, &relay);

    let mut up = Vec::new();
    up.extend(frame(Kind::Join, 0, b"join payload"));
    for seq in 1..=20 {
        up.extend(data(seq));
    }
    // Larger than one read of the relay: frames split across reads.
    up.extend(frame(Kind::Data, 21, &vec![0xa5; 300 * 1024]));
    up.extend(frame(Kind::Heartbeat, 0, b"counters"));
    up.extend(frame(Kind::Release, 0, b""));
    // Written in odd-sized pieces so frames straddle segment boundaries.
    for piece in up.chunks(1000) {
        node.write_all(piece).unwrap();
    }
    assert_eq!(read_bytes(&mut hub_side, up.len()), up);

    let mut down = Vec::new();
    down.extend(frame(Kind::Hello, 0, &[7; 16]));
    down.extend(frame(Kind::Welcome, 0, b"welcome"));
    for seq in 1..=10 {
        down.extend(frame(Kind::Deliver, seq, &seq.to_le_bytes()));
    }
    hub_side.write_all(&down).unwrap();
    assert_eq!(read_bytes(&mut node, down.len()), down);

    // The node goes away: the relay must close the hub's side too.
    drop(node);
    let mut b = [0u8; 1];
    assert_eq!(hub_side.read(&mut b).expect("hub side read"), 0);

    let (st, _) = relay.stop();
    assert_eq!(stat(&st, "connections"), 1);
    assert_eq!(stat(&st, "frames"), 24 + 12);
    for k in [
        "dropped",
        "corrupted",
        "duplicated",
        "reordered",
        "delayed",
        "passthrough",
    ] {
        assert_eq!(stat(&st, k), 0, "{k} in {st}");
    }
}

#[test]
fn corrupt_1_damages_every_frame_but_the_handshake() {
    let hub = hub();
    let relay = Relay::start(&hub, &["--corrupt", "1", "--seed", "7"]);
    let (mut node, mut hub_side) = link(&hub, &relay);
    let mut up = frame(Kind::Join, 0, b"join me");
    for seq in 1..=30 {
        up.extend(data(seq));
    }
    up.extend(frame(Kind::Heartbeat, 0, b"hb"));
    node.write_all(&up).unwrap();
    let got = read_frames(&mut hub_side, 32);
    assert_eq!(
        seq_and_payload(&got[0]),
        (Kind::Join, 0, b"join me".to_vec())
    );
    for (i, r) in got[1..].iter().enumerate() {
        assert_eq!(*r, Received::Corrupt, "frame {} passed intact", i + 1);
    }
    let (st, _) = relay.stop();
    assert_eq!(stat(&st, "frames"), 32);
    assert_eq!(stat(&st, "corrupted"), 31);
    assert_eq!(stat(&st, "dropped"), 0);
}

#[test]
fn drop_1_loses_every_frame_but_the_handshake() {
    let hub = hub();
    let relay = Relay::start(&hub, &["--drop", "1"]);
    let (mut node, mut hub_side) = link(&hub, &relay);
    let mut up = frame(Kind::Hello, 0, &[1; 16]);
    for seq in 1..=10 {
        up.extend(data(seq));
    }
    // A handshake frame after the data marks that the relay has seen all of it.
    up.extend(frame(Kind::Refuse, 0, b"the end"));
    node.write_all(&up).unwrap();
    let got = read_frames(&mut hub_side, 2);
    assert_eq!(seq_and_payload(&got[0]), (Kind::Hello, 0, vec![1; 16]));
    assert_eq!(got[1], Received::Refused(b"the end".to_vec()));
    assert_quiet(&mut hub_side);
    let (st, _) = relay.stop();
    assert_eq!(stat(&st, "frames"), 12);
    assert_eq!(stat(&st, "dropped"), 10);
}

#[test]
fn dup_1_sends_every_frame_but_the_handshake_twice() {
    let hub = hub();
    let relay = Relay::start(&hub, &["--dup", "1"]);
    let (mut node, mut hub_side) = link(&hub, &relay);
    let mut up = frame(Kind::Hello, 0, b"hi");
    for seq in 1..=5 {
        up.extend(data(seq));
    }
    up.extend(frame(Kind::Join, 0, b"end"));
    node.write_all(&up).unwrap();
    let got: Vec<_> = read_frames(&mut hub_side, 12)
        .iter()
        .map(seq_and_payload)
        .map(|(k, s, _)| (k, s))
        .collect();
    let mut want = vec![(Kind::Hello, 0)];
    for seq in 1..=5 {
        want.extend([(Kind::Data, seq), (Kind::Data, seq)]);
    }
    want.push((Kind::Join, 0));
    assert_eq!(got, want);
    let (st, _) = relay.stop();
    assert_eq!(stat(&st, "frames"), 7);
    assert_eq!(stat(&st, "duplicated"), 5);
}

#[test]
fn reorder_1_swaps_pairs_and_a_lone_held_frame_still_goes() {
    let hub = hub();
    let relay = Relay::start(&hub, &["--reorder", "1"]);
    let (mut node, mut hub_side) = link(&hub, &relay);
    let mut up = Vec::new();
    for seq in 1..=4 {
        up.extend(data(seq));
    }
    node.write_all(&up).unwrap();
    let got: Vec<u64> = read_frames(&mut hub_side, 4)
        .iter()
        .map(|r| seq_and_payload(r).1)
        .collect();
    assert_eq!(got, [2, 1, 4, 3]);
    // A lone frame is held, then sent anyway when no next frame comes: it arrives
    // while the connection is still open (a close would also flush it, so reading it
    // before `stop` is what shows the hold ends on its own). That it was held, not
    // passed straight through, is the `reordered` count: frames 1, 3 and 5.
    node.write_all(&data(5)).unwrap();
    let got = read_frames(&mut hub_side, 1);
    assert_eq!(seq_and_payload(&got[0]).1, 5);
    let (st, _) = relay.stop();
    assert_eq!(stat(&st, "frames"), 5);
    assert_eq!(stat(&st, "reordered"), 3);
}

#[test]
fn delay_holds_every_frame_and_keeps_their_order() {
    let hub = hub();
    let relay = Relay::start(&hub, &["--delay-us", "20000"]);
    let (mut node, mut hub_side) = link(&hub, &relay);
    let mut up = Vec::new();
    for seq in 1..=10 {
        up.extend(data(seq));
    }
    node.write_all(&up).unwrap();
    // Per frame: each arrives exactly once, intact (CRC checked), and never before
    // the one ahead of it, although each frame's delay is drawn on its own (jitter
    // of ±50%) and several are in flight at once.
    let got: Vec<(Kind, u64, Vec<u8>)> = read_frames(&mut hub_side, 10)
        .iter()
        .map(seq_and_payload)
        .collect();
    let want: Vec<(Kind, u64, Vec<u8>)> = (1..=10)
        .map(|seq| (Kind::Data, seq, format!("data frame {seq}").into_bytes()))
        .collect();
    assert_eq!(got, want, "order kept, nothing lost or repeated");
    // Every frame went through the delay; no other fault was applied. How long the
    // delays took is a performance figure, not asserted here (a busy CI machine
    // stretches any wall-clock bound).
    let (st, _) = relay.stop();
    assert_eq!(stat(&st, "frames"), 10);
    assert_eq!(stat(&st, "delayed"), 10);
    for k in ["dropped", "corrupted", "duplicated", "reordered"] {
        assert_eq!(stat(&st, k), 0, "{k}");
    }
}

#[test]
fn garbage_is_passed_through_raw_from_then_on() {
    let hub = hub();
    let relay = Relay::start(&hub, &["--drop", "1"]);
    let (mut node, mut hub_side) = link(&hub, &relay);
    node.write_all(&data(1)).unwrap(); // dropped
    let mut raw = b"GET / HTTP/1.1\r\n\r\n".to_vec();
    raw.extend(data(2)); // after garbage: no longer parsed, so not dropped
    node.write_all(&raw).unwrap();
    assert_eq!(read_bytes(&mut hub_side, raw.len()), raw);
    assert_quiet(&mut hub_side);
    let (st, _) = relay.stop();
    assert_eq!(stat(&st, "frames"), 1);
    assert_eq!(stat(&st, "dropped"), 1);
    assert_eq!(stat(&st, "passthrough"), 1);
}

#[test]
fn stats_file_is_refreshed_while_running() {
    let hub = hub();
    let relay = Relay::start(&hub, &["--dup", "1"]);
    let (mut node, mut hub_side) = link(&hub, &relay);
    node.write_all(&data(1)).unwrap();
    read_frames(&mut hub_side, 2);
    let deadline = Instant::now() + WAIT;
    loop {
        let v: Option<Value> = std::fs::read_to_string(&relay.stats)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        if v.as_ref().is_some_and(|v| stat(v, "duplicated") == 1) {
            break;
        }
        assert!(Instant::now() < deadline, "stats file not updated: {v:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    relay.stop();
}
