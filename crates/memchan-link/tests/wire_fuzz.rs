//! Property tests of the link decoder, the only code that parses bytes from the
//! network: arbitrary bytes in arbitrary chunkings never panic it, valid frames
//! roundtrip, a damaged frame is `Corrupt` without losing the frames after it, a
//! wrong key is `BadMac`, a frame seen before is `Replayed` without losing the frames
//! after it, and the payload readers survive anything.

use memchan_link::wire::{
    encode, Decoder, FrameKey, Get, Key, Kind, Put, Received, WireError, HEADER, MAC, MAX_PAYLOAD,
    VERSION,
};
use proptest::prelude::*;

/// Every kind except `Refuse`, which is read without a CRC or MAC check.
const CHECKED_KINDS: [Kind; 17] = [
    Kind::Hello,
    Kind::Join,
    Kind::Welcome,
    Kind::Data,
    Kind::Deliver,
    Kind::Request,
    Kind::Response,
    Kind::Event,
    Kind::Release,
    Kind::Nak,
    Kind::Heartbeat,
    Kind::Isolated,
    Kind::Time,
    Kind::TimeProbe,
    Kind::Deposit,
    Kind::DepositDeliver,
    Kind::Outcome,
];

const RELIABLE_KINDS: [Kind; 9] = [
    Kind::Data,
    Kind::Deliver,
    Kind::Request,
    Kind::Response,
    Kind::Event,
    Kind::Time,
    Kind::Deposit,
    Kind::DepositDeliver,
    Kind::Outcome,
];

fn key_of(seed: u8) -> FrameKey {
    Key::from_secret(&[seed; 7])
        .link(&[seed; 16], &[7; 16])
        .to_hub
}

/// A frame to encode: kind, seq, ack, payload and where to split it into two parts.
#[derive(Debug, Clone)]
struct Spec {
    kind: Kind,
    seq: u64,
    ack: u64,
    payload: Vec<u8>,
    split: usize,
}

impl Spec {
    /// Encodes as the `i`-th frame of its stream (counter `i + 1`).
    fn encode(&self, out: &mut Vec<u8>, key: &FrameKey, i: usize) {
        let (a, b) = self.payload.split_at(self.split.min(self.payload.len()));
        encode(
            out,
            key,
            i as u64 + 1,
            self.kind,
            self.seq,
            self.ack,
            &[a, b],
        );
    }
}

fn spec(kinds: &'static [Kind], max_payload: usize) -> impl Strategy<Value = Spec> {
    (
        prop::sample::select(kinds),
        prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>()],
        any::<u64>(),
        prop::collection::vec(any::<u8>(), 0..=max_payload),
        any::<usize>(),
    )
        .prop_map(|(kind, seq, ack, payload, split)| {
            let split = split % (payload.len() + 1);
            Spec {
                kind,
                seq,
                ack,
                payload,
                split,
            }
        })
}

/// How to feed the decoder: chunk sizes (cycled), and per chunk whether to go
/// through `spare`/`filled` asking for much more room than needed, which exercises
/// the buffer's compaction and growth.
#[derive(Debug, Clone)]
struct Chunking {
    sizes: Vec<usize>,
    room: Vec<usize>,
}

fn chunking() -> impl Strategy<Value = Chunking> {
    (
        prop::collection::vec(
            prop_oneof![3 => 1usize..64, 2 => 64usize..2048, 1 => 2048usize..20_000],
            1..8,
        ),
        prop::collection::vec(
            prop_oneof![
                4 => Just(0usize),
                1 => 1usize..1024,
                1 => Just(200_000usize),
                1 => Just(300_000usize),
            ],
            1..5,
        ),
    )
        .prop_map(|(sizes, room)| Chunking { sizes, room })
}

/// What the decoder produced for a stream: frames and `Replayed` refusals in order,
/// then the error that ended it, if any.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    items: Vec<Result<Received, WireError>>,
    error: Option<WireError>,
}

impl Outcome {
    /// The frames (not the refusals).
    fn received(&self) -> Vec<&Received> {
        self.items.iter().filter_map(|r| r.as_ref().ok()).collect()
    }
}

/// Feeds `bytes` in `ch`'s chunks, draining the decoder after each, until the first
/// error that ends a connection (every error but `Replayed`, after which the stream
/// goes on). Checks the invariants every output must keep.
fn feed(d: &mut Decoder, bytes: &[u8], ch: &Chunking) -> Outcome {
    let mut items = Vec::new();
    let mut fed = 0usize;
    let mut payload_out = 0usize;
    let mut framed_out = 0usize;
    let mut i = 0;
    while fed < bytes.len() {
        let n = ch.sizes[i % ch.sizes.len()].min(bytes.len() - fed);
        let room = ch.room[i % ch.room.len()];
        let chunk = &bytes[fed..fed + n];
        if room == 0 {
            d.push(chunk);
        } else {
            let want = n.max(room);
            let spare = d.spare(want);
            assert!(spare.len() >= want);
            spare[..n].copy_from_slice(chunk);
            d.filled(n);
        }
        fed += n;
        i += 1;
        loop {
            match d.next_frame() {
                Ok(None) => break,
                Err(e @ WireError::Replayed { .. }) => {
                    framed_out += HEADER + MAC;
                    assert!(framed_out <= fed, "{framed_out} frame bytes from {fed}");
                    items.push(Err(e));
                }
                Ok(Some(r)) => {
                    if let Received::Frame(h, p) = &r {
                        assert_eq!(h.len, p.len());
                        assert!(p.len() <= MAX_PAYLOAD);
                        payload_out += p.len();
                        framed_out += HEADER + p.len() + MAC;
                    } else {
                        framed_out += HEADER + MAC;
                    }
                    assert!(payload_out <= fed, "{payload_out} payload bytes from {fed}");
                    assert!(framed_out <= fed, "{framed_out} frame bytes from {fed}");
                    assert!(d.pending() <= fed - framed_out);
                    items.push(Ok(r));
                }
                Err(e) => {
                    // Calling again must not panic either.
                    let _ = d.next_frame();
                    return Outcome {
                        items,
                        error: Some(e),
                    };
                }
            }
        }
        assert!(d.pending() <= fed - framed_out);
    }
    Outcome { items, error: None }
}

/// Byte streams worth fuzzing: pure noise, noise behind a plausible header, and
/// valid frames (keyed with `key_of(0)`) with random bytes overwritten, cut short
/// or spliced with noise.
fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
    let noise = prop::collection::vec(any::<u8>(), 0..4096);
    let plausible = (
        any::<u8>(),
        prop_oneof![0u32..64, 0u32..5000, Just(MAX_PAYLOAD as u32), any::<u32>()],
        prop::collection::vec(any::<u8>(), 0..2048),
    )
        .prop_map(|(kind, len, rest)| {
            let mut b = b"MCHN".to_vec();
            b.extend_from_slice(&VERSION.to_le_bytes());
            b.push(kind % 16);
            b.push(0);
            b.extend_from_slice(&len.to_le_bytes());
            b.extend_from_slice(&rest);
            b
        });
    let mutated = (
        prop::collection::vec(spec(&CHECKED_KINDS, 300), 1..6),
        prop::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        any::<usize>(),
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(frames, edits, cut, tail)| {
            let mut b = Vec::new();
            for (i, f) in frames.iter().enumerate() {
                f.encode(&mut b, &key_of(0), i);
            }
            for (at, v) in edits {
                let at = at % b.len();
                b[at] = v;
            }
            b.truncate(cut % (b.len() + 1));
            b.extend_from_slice(&tail);
            b
        });
    prop_oneof![1 => noise, 1 => plausible, 2 => mutated]
}

fn malformed<T>() -> Result<T, WireError> {
    Err(WireError::Malformed("fuzz"))
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Failures print their minimal input; no regression files in the tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(4096))]

    /// (a) Arbitrary bytes, with and without a key, in arbitrary chunkings.
    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in hostile_bytes(),
        ch in chunking(),
        key in prop_oneof![Just(None), Just(Some(0u8)), Just(Some(1u8))],
    ) {
        let mut d = Decoder::new(key.map(key_of));
        let out = feed(&mut d, &bytes, &ch);
        // Chunking does not change what comes out.
        let mut whole = Decoder::new(key.map(key_of));
        let one = feed(&mut whole, &bytes, &Chunking { sizes: vec![usize::MAX], room: vec![0] });
        prop_assert_eq!(out, one);
    }

    /// (b) Valid frames roundtrip exactly through any chunking.
    #[test]
    fn valid_frames_roundtrip(
        frames in prop::collection::vec(spec(&RELIABLE_KINDS, 4096), 1..6),
        ch in chunking(),
        keyed in any::<bool>(),
        seed in any::<u8>(),
    ) {
        let key = key_of(seed);
        let mut bytes = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            f.encode(&mut bytes, &key, i);
        }
        let mut d = Decoder::new(keyed.then(|| key.clone()));
        let out = feed(&mut d, &bytes, &ch);
        prop_assert_eq!(&out.error, &None);
        prop_assert_eq!(out.items.len(), frames.len());
        for (r, f) in out.received().into_iter().zip(&frames) {
            let Received::Frame(h, p) = r else {
                panic!("{r:?}");
            };
            prop_assert_eq!((h.kind, h.seq, h.received, h.len), (f.kind, f.seq, f.ack, f.payload.len()));
            prop_assert!(h.counter >= 1 && h.counter <= frames.len() as u64);
            prop_assert_eq!(p, &f.payload);
        }
        prop_assert_eq!(d.pending(), 0);
        prop_assert_eq!(d.next_frame(), Ok(None));
    }

    /// (c) One bit flipped at byte 12 or later of one frame (CRC, seq, ack, payload or
    /// MAC) makes that frame `Corrupt`; the frames around it still decode.
    #[test]
    fn flipped_bit_is_corrupt_and_the_stream_goes_on(
        frames in prop::collection::vec(spec(&CHECKED_KINDS, 1024), 1..6),
        target in any::<usize>(),
        at in any::<usize>(),
        bit in 0u8..8,
        ch in chunking(),
        keyed in any::<bool>(),
    ) {
        let key = key_of(0);
        let target = target % frames.len();
        let mut bytes = Vec::new();
        let mut start = 0;
        for (i, f) in frames.iter().enumerate() {
            if i == target {
                start = bytes.len();
            }
            f.encode(&mut bytes, &key, i);
        }
        let len = HEADER + frames[target].payload.len() + MAC;
        let at = 12 + at % (len - 12);
        bytes[start + at] ^= 1 << bit;

        let mut d = Decoder::new(keyed.then_some(key));
        let out = feed(&mut d, &bytes, &ch);
        prop_assert_eq!(&out.error, &None);
        prop_assert_eq!(out.items.len(), frames.len());
        for (i, (r, f)) in out.received().into_iter().zip(&frames).enumerate() {
            if i == target {
                prop_assert_eq!(r, &Received::Corrupt, "flip at byte {} bit {}", at, bit);
            } else {
                prop_assert!(matches!(r, Received::Frame(h, p) if h.seq == f.seq && *p == f.payload), "{:?}", r);
            }
        }
    }

    /// (c') The bytes before 12 that do not frame: a flipped flags byte (7) is
    /// `Corrupt`; a flipped kind byte (6) is `Corrupt`, `Refused` (it became
    /// `Refuse`, which is not CRC-checked) or `BadKind`, which ends the stream.
    #[test]
    fn flipped_kind_or_flags_bit(
        frames in prop::collection::vec(spec(&CHECKED_KINDS, 256), 1..5),
        target in any::<usize>(),
        kind_byte in any::<bool>(),
        bit in 0u8..8,
        ch in chunking(),
    ) {
        let key = key_of(0);
        let target = target % frames.len();
        let mut bytes = Vec::new();
        let mut start = 0;
        for (i, f) in frames.iter().enumerate() {
            if i == target {
                start = bytes.len();
            }
            f.encode(&mut bytes, &key, i);
        }
        let at = if kind_byte { 6 } else { 7 };
        bytes[start + at] ^= 1 << bit;
        let flipped = bytes[start + 6];

        let mut d = Decoder::new(Some(key));
        let out = feed(&mut d, &bytes, &ch);
        let r = out.received().get(target).copied();
        match (&out.error, r) {
            (None, Some(Received::Corrupt)) => {}
            (None, Some(Received::Refused(_))) if kind_byte && flipped == Kind::Refuse as u8 => {}
            (Some(WireError::BadKind(k)), None) if kind_byte => {
                prop_assert_eq!(*k, flipped);
                prop_assert_eq!(out.items.len(), target);
                return Ok(());
            }
            other => panic!("flip at byte {at} bit {bit}: {other:?}"),
        }
        prop_assert_eq!(&out.error, &None);
        prop_assert_eq!(out.items.len(), frames.len());
        for (i, (r, f)) in out.received().into_iter().zip(&frames).enumerate() {
            if i != target {
                prop_assert!(matches!(r, Received::Frame(h, p) if h.seq == f.seq && *p == f.payload), "{:?}", r);
            }
        }
    }

    /// (d) A frame made with key A fails the MAC under key B; the good frames before
    /// it still decode.
    #[test]
    fn wrong_key_is_bad_mac(
        good in prop::collection::vec(spec(&CHECKED_KINDS, 512), 0..4),
        bad in spec(&CHECKED_KINDS, 4096),
        a in any::<[u8; 32]>(),
        b in any::<[u8; 32]>(),
        ch in chunking(),
    ) {
        prop_assume!(a != b);
        let (ka, kb) = (Key(a).join(&[0; 16]), Key(b).join(&[0; 16]));
        let mut bytes = Vec::new();
        for (i, f) in good.iter().enumerate() {
            f.encode(&mut bytes, &kb, i);
        }
        bad.encode(&mut bytes, &ka, good.len());
        let mut d = Decoder::new(Some(kb));
        let out = feed(&mut d, &bytes, &ch);
        prop_assert_eq!(&out.error, &Some(WireError::BadMac));
        prop_assert_eq!(out.items.len(), good.len());
        for (r, f) in out.received().into_iter().zip(&good) {
            prop_assert!(matches!(r, Received::Frame(h, p) if h.seq == f.seq && *p == f.payload), "{:?}", r);
        }
        // Without a key (before one is agreed) the same frame passes: CRC only.
        let mut d = Decoder::new(None);
        let out = feed(&mut d, &bytes, &ch);
        prop_assert_eq!(out.error, None);
        prop_assert_eq!(out.items.len(), good.len() + 1);
    }

    /// (f) Frames replayed, duplicated or reordered (each a valid frame of the
    /// stream's key, under the counter it was made with): exactly those whose counter
    /// is above every one accepted before are accepted; every other is `Replayed`,
    /// naming its counter and the last accepted, and the stream goes on. Open or keyed.
    #[test]
    fn frames_seen_before_are_replayed_and_the_stream_goes_on(
        frames in prop::collection::vec(spec(&CHECKED_KINDS, 256), 1..6),
        order in prop::collection::vec(any::<prop::sample::Index>(), 1..16),
        ch in chunking(),
        keyed in any::<bool>(),
    ) {
        let key = if keyed { key_of(3) } else { FrameKey::open() };
        let encoded: Vec<Vec<u8>> = frames
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut b = Vec::new();
                f.encode(&mut b, &key, i);
                b
            })
            .collect();
        let picks: Vec<usize> = order.iter().map(|ix| ix.index(frames.len())).collect();
        let bytes: Vec<u8> = picks.iter().flat_map(|&i| encoded[i].iter().copied()).collect();
        let mut d = Decoder::new(Some(key));
        let out = feed(&mut d, &bytes, &ch);
        prop_assert_eq!(&out.error, &None);
        prop_assert_eq!(out.items.len(), picks.len());
        let mut last = 0u64;
        for (r, &i) in out.items.iter().zip(&picks) {
            let counter = i as u64 + 1;
            if counter > last {
                let ok = matches!(r, Ok(Received::Frame(h, p)) if h.counter == counter && *p == frames[i].payload);
                prop_assert!(ok, "frame {} (counter {}) after {}: {:?}", i, counter, last, r);
                last = counter;
            } else {
                prop_assert_eq!(r, &Err(WireError::Replayed { counter, last }));
            }
        }
        prop_assert_eq!(d.last_counter(), last);
    }

    /// (e) `Get` on arbitrary bytes with arbitrary reads never panics, and each read
    /// succeeds exactly when enough bytes are left, returning them.
    #[test]
    fn get_never_panics(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        ops in prop::collection::vec((0u8..8, prop_oneof![0usize..64, any::<usize>()]), 0..24),
    ) {
        let mut g = Get::new(&bytes, "fuzz");
        let mut pos = 0usize;
        let left = |pos: usize| bytes.len() - pos;
        for (op, n) in ops {
            match op {
                0 => {
                    let r = g.u8();
                    if left(pos) >= 1 { prop_assert_eq!(r, Ok(bytes[pos])); pos += 1; } else { prop_assert_eq!(r, malformed()); }
                }
                1 => {
                    let r = g.u16();
                    if left(pos) >= 2 {
                        prop_assert_eq!(r, Ok(u16::from_le_bytes([bytes[pos], bytes[pos + 1]])));
                        pos += 2;
                    } else { prop_assert_eq!(r, malformed()); }
                }
                2 => {
                    let r = g.u32();
                    if left(pos) >= 4 {
                        prop_assert_eq!(r, Ok(u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap())));
                        pos += 4;
                    } else { prop_assert_eq!(r, malformed()); }
                }
                3 => {
                    let r = g.u64();
                    if left(pos) >= 8 {
                        prop_assert_eq!(r, Ok(u64::from_le_bytes(bytes[pos..pos + 8].try_into().unwrap())));
                        pos += 8;
                    } else { prop_assert_eq!(r, malformed()); }
                }
                4 => {
                    let r = g.bytes(n);
                    if left(pos) >= n { prop_assert_eq!(r, Ok(&bytes[pos..pos + n])); pos += n; } else { prop_assert_eq!(r, malformed()); }
                }
                5 => {
                    let r = g.array::<16>();
                    if left(pos) >= 16 {
                        prop_assert_eq!(r, Ok(bytes[pos..pos + 16].try_into().unwrap()));
                        pos += 16;
                    } else { prop_assert_eq!(r, malformed()); }
                }
                6 => {
                    // The length is consumed even when the body is missing.
                    let r = g.str();
                    if left(pos) < 2 {
                        prop_assert_eq!(r, malformed());
                    } else {
                        let len = u16::from_le_bytes([bytes[pos], bytes[pos + 1]]) as usize;
                        pos += 2;
                        if left(pos) < len {
                            prop_assert_eq!(r, malformed());
                        } else {
                            let want = String::from_utf8(bytes[pos..pos + len].to_vec());
                            pos += len;
                            match want {
                                Ok(s) => prop_assert_eq!(r, Ok(s)),
                                Err(_) => prop_assert_eq!(r, malformed()),
                            }
                        }
                    }
                }
                _ => {
                    prop_assert_eq!(g.rest(), &bytes[pos..]);
                    pos = bytes.len();
                }
            }
        }
        prop_assert_eq!(g.rest(), &bytes[pos..]);
    }

    /// What `Put` writes, `Get` reads back.
    #[test]
    fn put_get_roundtrip(
        a in any::<u8>(), b in any::<u16>(), c in any::<u32>(), e in any::<u64>(),
        s in ".{0,40}", raw in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let p = Put::new().u8(a).u16(b).str(&s).u32(c).u64(e).bytes(&raw).0;
        let mut g = Get::new(&p, "roundtrip");
        prop_assert_eq!(g.u8(), Ok(a));
        prop_assert_eq!(g.u16(), Ok(b));
        prop_assert_eq!(g.str(), Ok(s));
        prop_assert_eq!(g.u32(), Ok(c));
        prop_assert_eq!(g.u64(), Ok(e));
        prop_assert_eq!(g.rest(), &raw[..]);
        prop_assert_eq!(g.u8(), Err(WireError::Malformed("roundtrip")));
    }
}

/// A `Refuse` frame is read whatever the key and whatever its CRC, so a peer with the
/// wrong key still learns why it was turned away.
#[test]
fn refuse_is_read_with_any_key_and_any_crc() {
    let mut bytes = Vec::new();
    encode(
        &mut bytes,
        &key_of(1),
        1,
        Kind::Refuse,
        0,
        0,
        &[b"wrong cluster key"],
    );
    bytes[12] ^= 0xff;
    let mut d = Decoder::new(Some(key_of(2)));
    d.push(&bytes);
    assert_eq!(
        d.next_frame(),
        Ok(Some(Received::Refused(b"wrong cluster key".to_vec())))
    );
    assert_eq!(d.next_frame(), Ok(None));
}

/// The length limit is enforced on the header alone, before any payload arrives.
#[test]
fn over_long_length_is_refused_from_the_header() {
    let mut bytes = Vec::new();
    encode(&mut bytes, &key_of(0), 1, Kind::Data, 1, 0, &[b"x"]);
    bytes[8..12].copy_from_slice(&(MAX_PAYLOAD as u32 + 1).to_le_bytes());
    let mut d = Decoder::new(None);
    d.push(&bytes[..HEADER]);
    assert_eq!(d.next_frame(), Err(WireError::TooLong(MAX_PAYLOAD + 1)));
}

proptest! {
    #![proptest_config(config(4096))]

    /// (g) A batch's payload is checked whole: arbitrary bytes never panic the check,
    /// and what it accepts splits into records that cover the payload exactly, each of
    /// a kind a batch may carry.
    #[test]
    fn arbitrary_batch_payloads_never_panic_and_accepted_ones_cover_the_payload(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..512),
            prop::collection::vec((0u8..40, prop::collection::vec(any::<u8>(), 0..64)), 0..8)
                .prop_map(|records| {
                    let mut p = Vec::new();
                    for (kind, r) in records {
                        p.push(kind);
                        p.extend_from_slice(&(r.len() as u32).to_le_bytes());
                        p.extend_from_slice(&r);
                    }
                    p
                }),
        ]
    ) {
        if let Ok(records) = memchan_link::wire::records(&bytes) {
            let mut covered = 0;
            for (kind, r) in records {
                prop_assert!(kind.reliable() && kind != Kind::Batch);
                covered += memchan_link::wire::RECORD_HEAD + r.len();
            }
            prop_assert_eq!(covered, bytes.len());
        }
    }
}
