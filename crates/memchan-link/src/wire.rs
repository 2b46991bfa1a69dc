//! The link's frame format and its decoder: the only code that parses bytes from the
//! network, so it trusts nothing (fuzzed in `tests/wire_fuzz.rs`).
//!
//! ```text
//!  off size
//!   0   4  magic "MCHN"
//!   4   2  protocol version (LE)
//!   6   1  kind
//!   7   1  flags (0)
//!   8   4  payload length (LE), at most MAX_PAYLOAD
//!  12   4  CRC32C of every other byte of the frame, MAC included
//!  16   8  seq: 1, 2, 3… on reliable frames of this direction; 0 on control frames
//!  24   8  received: highest reliable seq received in order from the peer (the
//!          go-back-N cumulative acknowledgement)
//!  32   8  counter: strictly increasing over the frames written in this direction
//!          (retransmissions get a new one); the MAC's nonce
//!  40   n  payload
//! 40+n 16  MAC: AEGIS-128X4 under the direction's frame key, nonce = counter, over
//!          the header but its CRC field, and the payload; zero on an open cluster
//! ```
//!
//! Names: the header's `received` is the go-back-N cumulative acknowledgement (what
//! arrived in order); a `Release` frame says what the receiver is done with (its
//! replay memory may drop it). "Ack" is left to `Cluster::ack`.
//!
//! CRC first, MAC second, counter third: a frame damaged on the way fails its CRC
//! (counted, discarded, retransmitted); a frame with a good CRC and a bad MAC was made
//! by someone without the key, and the link is closed; a frame with a good MAC whose
//! counter is not above the last one accepted was seen before (a replay, or a
//! duplicate or reordered copy from a faulty relay) and is discarded: go-back-N
//! resends what it carried, under a new counter.
//!
//! **Keys.** Each direction of each link has its own [`FrameKey`], derived from the
//! cluster key and both sides' handshake nonces ([`Key::link`]), so a frame cannot be
//! replayed into another connection or reflected into the other direction: its MAC
//! does not verify there. A counter is never reused under a key (the sender allocates
//! them in wire order; the receiver refuses any not above the last), which is what
//! AEGIS needs of its nonce. AEGIS (the `aegis` crate: AEGIS-128L for short frames,
//! AEGIS-128X4 for long ones) runs on the AES instructions (AES-NI / VAES): measured
//! here ~17× faster than the BLAKE3 MAC it replaces on 64 KiB frames, and faster than
//! AES-GCM's GMAC, which hashes a frame given as associated data one block at a time.

use aegis::{aegis128l::Aegis128L, aegis128x4::Aegis128X4};
use std::fmt;

/// Frame magic.
pub const MAGIC: [u8; 4] = *b"MCHN";
/// The protocol version this build speaks. Both ends must match exactly. (2: the
/// frame counter, per-direction keys and the AEGIS MAC; 3: `RmaServe` names the
/// origin and its request; 4: heartbeats carry `reader_wakeups`; 5: `RailResume`
/// carries the node's lock pages; 6: the MAC is AEGIS's AEAD tag over the frame with
/// its CRC field zero, AEGIS-128L for short frames; 7: a Deliver carries flags, and a
/// record (`proto::FLAG_RECORD`) travels as one packet; 8: a Refuse and a refused
/// request's answer carry codes (`proto::reply`), not words to parse; 11: a Join and
/// a join's event carry the node's host domain, a Welcome the joiner's neighbours.)
pub const VERSION: u16 = 11;
/// Header bytes.
pub const HEADER: usize = 40;
/// MAC bytes after the payload.
pub const MAC: usize = 16;
/// Frames up to this many bytes are MACed with AEGIS-128L, longer ones with
/// AEGIS-128X4 (see `FrameKey::tag`).
const SHORT_FRAME: usize = 512;
/// Largest payload a frame may carry.
pub const MAX_PAYLOAD: usize = 1 << 20;
/// Largest data chunk of one packet: a longer write is split into packets of this size.
pub const PACKET: usize = 64 * 1024;

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// hub → node on accept: the hub's nonce.
    Hello = 1,
    /// node → hub: who wants to join, MACed with the cluster key.
    Join = 2,
    /// either way: refused, with the coded reason (`proto::reply::JoinRefusal`; not
    /// MAC-checked, so a wrong-key peer can still read why).
    Refuse = 3,
    /// hub → node: the join is accepted.
    Welcome = 4,
    /// node → hub (reliable): a packet written to a tx mapping.
    Data = 5,
    /// hub → node (reliable): a packet in the hub's order.
    Deliver = 6,
    /// node → hub (reliable): a cluster-service request.
    Request = 7,
    /// hub → node (reliable): the answer to a request.
    Response = 8,
    /// hub → node (reliable): a membership event.
    Event = 9,
    /// control: "released up to the seq in the payload" (u64), then a flags byte
    /// (1: an ask, report your releases once they reach the seq that follows (u64;
    /// absent or 0: at once); 2: at once as well). (The header's `received` says
    /// what arrived; this, what the receiver is done with.)
    Release = 10,
    /// control: the receiver discarded frames after a bad or missing one; resend from
    /// the seq in the payload (u64).
    Nak = 11,
    /// control: liveness, carrying the sender's link counters.
    Heartbeat = 12,
    /// hub → node (control): this node was isolated; the link closes.
    Isolated = 13,
    /// hub → node (reliable, in the hub's order): a time packet, the hub's clock and
    /// the probe it answers, if any (`proto::clock`).
    Time = 26,
    /// node → hub (control): a clock probe, the node's clock; the hub answers with a
    /// `Time` frame.
    TimeProbe = 27,
    /// node → hub (reliable): a deposit operation (strided or indexed elements, a
    /// signal update, a conditional write: `proto::deposit`) with a Data header.
    Deposit = 20,
    /// hub → node (reliable): a deposit operation in the hub's order, with a Deliver
    /// header.
    DepositDeliver = 21,
    /// reliable, both ways: a conditional write's outcome (node → hub: the origin it
    /// is for; hub → node: the destination it came from).
    Outcome = 22,
    /// node → hub (reliable): a remote read or atomic on another node's copy of a
    /// segment (`proto::rma`); answered by a `Response` to its request id.
    RmaRequest = 14,
    /// hub → node (reliable): serve a remote read or atomic from this node's receive
    /// memory, under the hub's token.
    RmaServe = 15,
    /// node → hub (reliable): the outcome of an `RmaServe`, under its token.
    RmaDone = 16,
    /// hub → node (reliable): a Deliver numbered for a standby hub (dual rail): the
    /// sender's seq and the packet's place in the hub's order, then the Deliver.
    RailDeliver = 30,
    /// hub → node (control): the release mark, every numbered packet up to it
    /// released by all its destinations (dual rail).
    RailMark = 31,
    /// node → hub (control, the first frame of a link resumed at a standby hub): the
    /// node's id and incarnation, its first resent seq, its rx mappings and its rail
    /// report (`memchan-hub`'s `standby.rs`).
    RailResume = 32,
    /// hub → node (reliable, the first frame of a standby hub that took over): the
    /// new epoch and members, and the standby's numbering of the node's history.
    RailPlan = 33,
    /// standby → active hub (control, on a mirror connection): the version of the
    /// tables the standby now holds (`memchan-hub`'s `mirror.rs`).
    MirrorReceipt = 34,
    /// hub → node (reliable): a DepositDeliver numbered for a standby hub, as
    /// `RailDeliver` numbers a Deliver.
    RailDeposit = 35,
    /// reliable: several reliable frames under one seq and one MAC, each as a record
    /// (its kind, its length, its payload: [`append_record`], [`records`]). A link
    /// writes what it has for its peer as batches ([`crate::link::LinkConfig::batch_bytes`]),
    /// so a burst costs one MAC and one write, not one per frame.
    Batch = 36,
    /// hub → node (reliable): a node of another host may open a direct link to this
    /// one (`proto::DirectExpect`).
    DirectExpect = 37,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        use Kind::*;
        Some(match v {
            1 => Hello,
            2 => Join,
            3 => Refuse,
            4 => Welcome,
            5 => Data,
            6 => Deliver,
            7 => Request,
            8 => Response,
            9 => Event,
            10 => Release,
            11 => Nak,
            12 => Heartbeat,
            13 => Isolated,
            20 => Deposit,
            21 => DepositDeliver,
            22 => Outcome,
            26 => Time,
            27 => TimeProbe,
            14 => RmaRequest,
            15 => RmaServe,
            16 => RmaDone,
            30 => RailDeliver,
            31 => RailMark,
            32 => RailResume,
            33 => RailPlan,
            34 => MirrorReceipt,
            35 => RailDeposit,
            36 => Batch,
            37 => DirectExpect,
            _ => return None,
        })
    }

    /// Reliable frames carry a seq and are retransmitted until acknowledged.
    pub fn reliable(self) -> bool {
        matches!(
            self,
            Kind::Data
                | Kind::Deliver
                | Kind::Request
                | Kind::Response
                | Kind::Event
                | Kind::Time
                | Kind::Deposit
                | Kind::DepositDeliver
                | Kind::Outcome
                | Kind::RmaRequest
                | Kind::RmaServe
                | Kind::RmaDone
                | Kind::RailDeliver
                | Kind::RailDeposit
                | Kind::RailPlan
                | Kind::Batch
                | Kind::DirectExpect
        )
    }
}

/// The cluster key (32 bytes): never used on a frame itself, only to derive the
/// [`FrameKey`]s of a join and of each link.
#[derive(Clone, PartialEq, Eq)]
pub struct Key(pub [u8; 32]);

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// The cluster key from the secret's bytes (a key file's contents).
    pub fn from_secret(secret: &[u8]) -> Key {
        Key(blake3::derive_key("memchan cluster key v1", secret))
    }

    /// The key used when none is configured: anyone who can reach the hub may join,
    /// and frames carry no MAC (a MAC under a public key would cost and prove nothing).
    pub fn open() -> Key {
        open_key().clone()
    }

    /// Whether this is the [`open`](Self::open) key.
    pub fn is_open(&self) -> bool {
        self == open_key()
    }

    /// The key of a node's `Join` on the connection whose hub said `hub_nonce`: only a
    /// holder of the cluster key can make a Join the hub accepts, and, the nonce being
    /// fresh per connection, a Join recorded on one connection fails on any other.
    pub fn join(&self, hub_nonce: &[u8; 16]) -> FrameKey {
        self.derive(b"memchan join v2\0", hub_nonce, &[0; 16]).0
    }

    /// The two frame keys of the link set up with these nonces: fresh for every
    /// connection, one per direction. Open stays open.
    pub fn link(&self, hub_nonce: &[u8; 16], node_nonce: &[u8; 16]) -> LinkKeys {
        let (to_hub, to_node) = self.derive(b"memchan link v2\0", hub_nonce, node_nonce);
        LinkKeys { to_hub, to_node }
    }

    /// The key of a direct link between two nodes, from the pair secret the hub gave
    /// both: bound to the cluster key too, so that a secret seen on a keyed
    /// cluster's hub links (they are MACed, not encrypted) is no use without it.
    /// Never open: a direct link's frames carry MACs on an open cluster as well,
    /// the secret being all that tells the destination who connects.
    pub fn direct(&self, secret: &[u8; 32]) -> Key {
        let mut h = blake3::Hasher::new_keyed(&self.0);
        h.update(b"memchan direct v1");
        h.update(secret);
        Key(*h.finalize().as_bytes())
    }

    /// Two independent 16-byte keys from the cluster key, a label and two nonces
    /// (keyed BLAKE3 as the KDF: run once per connection, not per frame).
    fn derive(&self, label: &[u8; 16], a: &[u8; 16], b: &[u8; 16]) -> (FrameKey, FrameKey) {
        if self.is_open() {
            return (FrameKey::open(), FrameKey::open());
        }
        let mut h = blake3::Hasher::new_keyed(&self.0);
        h.update(label);
        h.update(a);
        h.update(b);
        let mut out = [0u8; 32];
        h.finalize_xof().fill(&mut out);
        let (x, y) = out.split_at(16);
        (
            FrameKey(Some(x.try_into().expect("16 bytes"))),
            FrameKey(Some(y.try_into().expect("16 bytes"))),
        )
    }
}

fn open_key() -> &'static Key {
    static OPEN: std::sync::OnceLock<Key> = std::sync::OnceLock::new();
    OPEN.get_or_init(|| Key::from_secret(b""))
}

/// The MAC key of one direction of one link (or of one join): an AEGIS-128X4 key, or
/// none on an open cluster (frames then carry a zero MAC, and only their counters are
/// checked).
#[derive(Clone, PartialEq, Eq)]
pub struct FrameKey(Option<[u8; 16]>);

impl fmt::Debug for FrameKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "FrameKey(..)"
        } else {
            "FrameKey(open)"
        })
    }
}

impl FrameKey {
    /// No MAC: the key of an open cluster's frames, and of the frames written before
    /// any key is agreed (`Hello`, `Refuse`).
    pub fn open() -> FrameKey {
        FrameKey(None)
    }

    /// Whether frames under this key carry no MAC.
    pub fn is_open(&self) -> bool {
        self.0.is_none()
    }

    /// The MAC of `frame` (its CRC field zero) under `counter` (zero on an open key):
    /// AEGIS's tag over the frame but its MAC field as associated data with an empty
    /// message, `counter` the nonce. Frames up to [`SHORT_FRAME`] bytes take
    /// AEGIS-128L, longer ones AEGIS-128X4 (measured here: 44 against 64 ns for a
    /// 72-byte frame, 2.8 against 1.2 µs for 64 KiB; the crate's MAC interface took
    /// 85 and 150 ns for the former).
    fn mac(&self, counter: u64, frame: &[u8]) -> [u8; MAC] {
        let Some(k) = self.0.as_ref() else {
            return [0; MAC];
        };
        let (ad, _) = frame.split_at(frame.len() - MAC);
        let n = nonce(counter);
        if frame.len() <= SHORT_FRAME {
            Aegis128L::<MAC>::new(k, &n).encrypt_in_place(&mut [], ad)
        } else {
            Aegis128X4::<MAC>::new(k, &n).encrypt_in_place(&mut [], ad)
        }
    }

    /// Whether `frame`'s (its CRC field zero) MAC field holds its MAC (compared in
    /// constant time, by the crate).
    fn verify(&self, counter: u64, frame: &[u8]) -> bool {
        let Some(k) = self.0.as_ref() else {
            return true;
        };
        let (ad, tag) = frame.split_at(frame.len() - MAC);
        let tag: &[u8; MAC] = tag.try_into().expect("MAC bytes");
        let n = nonce(counter);
        if frame.len() <= SHORT_FRAME {
            Aegis128L::<MAC>::new(k, &n).decrypt_in_place(&mut [], tag, ad)
        } else {
            Aegis128X4::<MAC>::new(k, &n).decrypt_in_place(&mut [], tag, ad)
        }
        .is_ok()
    }
}

/// A frame's nonce: its counter, which is never reused under a key.
fn nonce(counter: u64) -> [u8; 16] {
    let mut n = [0u8; 16];
    n[..8].copy_from_slice(&counter.to_le_bytes());
    n
}

/// The frame keys of one link, one per direction (see [`Key::link`]).
#[derive(Debug, Clone)]
pub struct LinkKeys {
    /// Frames the node writes and the hub reads.
    pub to_hub: FrameKey,
    /// Frames the hub writes and the node reads.
    pub to_node: FrameKey,
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Frame kind.
    pub kind: Kind,
    /// Payload length.
    pub len: usize,
    /// Reliable seq, or 0.
    pub seq: u64,
    /// The go-back-N cumulative acknowledgement, piggybacked: the highest reliable
    /// seq received in order from the peer.
    pub received: u64,
    /// The frame counter (the MAC's nonce).
    pub counter: u64,
}

/// Why bytes on a link are not a frame. All but `Replayed` end the connection: a
/// stream whose framing is lost cannot be resynchronised, and a forged frame means
/// someone without the key is on the link. (A damaged frame is not an error but
/// [`Received::Corrupt`].)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The first bytes are not "MCHN": not a memchan peer.
    #[error("not a memchan peer (bad magic {0:02x?})")]
    Garbage([u8; 4]),
    /// A memchan peer of another protocol version.
    #[error("protocol version {theirs}, this build speaks {VERSION}")]
    Version {
        /// The peer's version.
        theirs: u16,
    },
    /// Unknown frame kind.
    #[error("unknown frame kind {0}")]
    BadKind(u8),
    /// Payload length over the limit.
    #[error("frame of {0} bytes exceeds the {MAX_PAYLOAD}-byte limit")]
    TooLong(usize),
    /// A payload that does not parse as its kind says.
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// Good CRC, bad MAC: sent by someone without the cluster key, or under the key
    /// of another connection or of the other direction.
    #[error("frame MAC does not verify: wrong cluster key, or a forged or misdirected frame")]
    BadMac,
    /// Good MAC, but a counter not above the last one accepted: a frame seen before
    /// (replayed, or duplicated or reordered on the way). The frame is consumed; the
    /// stream goes on (a link discards it and counts it in `replays`).
    #[error("frame counter {counter} is not above the last accepted ({last}): a replayed or duplicated frame")]
    Replayed {
        /// The frame's counter.
        counter: u64,
        /// The highest counter accepted before it.
        last: u64,
    },
}

/// Parses and checks the fixed part of a header. `Ok(None)` means "need more bytes".
pub fn parse_header(b: &[u8]) -> Result<Option<Header>, WireError> {
    if b.len() >= 4 && b[..4] != MAGIC {
        return Err(WireError::Garbage([b[0], b[1], b[2], b[3]]));
    }
    if b.len() < HEADER {
        return Ok(None);
    }
    let version = u16::from_le_bytes([b[4], b[5]]);
    if version != VERSION {
        return Err(WireError::Version { theirs: version });
    }
    let kind = Kind::from_u8(b[6]).ok_or(WireError::BadKind(b[6]))?;
    let len = u32::from_le_bytes(b[8..12].try_into().expect("4 bytes")) as usize;
    if len > MAX_PAYLOAD {
        return Err(WireError::TooLong(len));
    }
    Ok(Some(Header {
        kind,
        len,
        seq: u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
        received: u64::from_le_bytes(b[24..32].try_into().expect("8 bytes")),
        counter: u64::from_le_bytes(b[32..40].try_into().expect("8 bytes")),
    }))
}

/// CRC32C (Castagnoli, as iSCSI) of a whole frame but its own field (bytes 12..16).
fn crc(frame: &[u8]) -> u32 {
    let mut d = crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi);
    d.update(&frame[..12]);
    d.update(&frame[16..]);
    d.finalize() as u32
}

/// Appends one frame whose payload is the concatenation of `parts` to `out`, with
/// `counter` and its MAC under `key`. The caller keeps counters strictly increasing in
/// the order frames are written under one key.
#[allow(clippy::too_many_arguments)]
pub fn encode(
    out: &mut Vec<u8>,
    key: &FrameKey,
    counter: u64,
    kind: Kind,
    seq: u64,
    received: u64,
    parts: &[&[u8]],
) {
    let start = out.len();
    encode_unstamped(out, kind, seq, received, parts);
    stamp(&mut out[start..], key, counter);
}

/// Appends one frame like [`encode`], without its counter, MAC and CRC: a frame a link
/// keeps to [`stamp`] when it is written (and again for every retransmission).
pub fn encode_unstamped(out: &mut Vec<u8>, kind: Kind, seq: u64, received: u64, parts: &[&[u8]]) {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    assert!(len <= MAX_PAYLOAD, "frame payload {len} over the limit");
    let mut head = [0u8; HEADER];
    head[..4].copy_from_slice(&MAGIC);
    head[4..6].copy_from_slice(&VERSION.to_le_bytes());
    head[6] = kind as u8;
    head[8..12].copy_from_slice(&(len as u32).to_le_bytes());
    head[16..24].copy_from_slice(&seq.to_le_bytes());
    head[24..32].copy_from_slice(&received.to_le_bytes());
    out.reserve(HEADER + len + MAC);
    out.extend_from_slice(&head);
    for p in parts {
        out.extend_from_slice(p);
    }
    out.extend_from_slice(&[0; MAC]);
}

/// Gives one encoded frame (exactly one, as [`encode_unstamped`] made it) `counter`,
/// and the MAC under `key` and the CRC that go with it.
pub fn stamp(frame: &mut [u8], key: &FrameKey, counter: u64) {
    debug_assert!(frame.len() >= HEADER + MAC);
    frame[32..40].copy_from_slice(&counter.to_le_bytes());
    // The MAC covers the frame with its CRC field zero (one contiguous input), the CRC
    // the frame with its MAC.
    frame[12..16].fill(0);
    let tag = key.mac(counter, frame);
    let n = frame.len();
    frame[n - MAC..].copy_from_slice(&tag);
    let c = crc(frame);
    frame[12..16].copy_from_slice(&c.to_le_bytes());
}

/// The counter an encoded frame carries.
pub fn counter_of(frame: &[u8]) -> u64 {
    u64::from_le_bytes(frame[32..40].try_into().expect("8 bytes"))
}

/// Bytes before a batch record's payload: its kind and its length (u32).
pub const RECORD_HEAD: usize = 5;

/// Appends a record of `kind` with the payload `parts` to `frame`, one unstamped
/// [`Kind::Batch`] frame as [`encode_unstamped`] made it: the payload grows, the
/// header's length with it, and the MAC's place moves to the end.
pub fn append_record(frame: &mut Vec<u8>, kind: Kind, parts: &[&[u8]]) {
    debug_assert_eq!(frame[6], Kind::Batch as u8);
    debug_assert!(kind.reliable() && kind != Kind::Batch);
    let add: usize = parts.iter().map(|p| p.len()).sum();
    let len = frame.len() - HEADER - MAC + RECORD_HEAD + add;
    assert!(len <= MAX_PAYLOAD, "batch payload {len} over the limit");
    frame.truncate(frame.len() - MAC);
    frame.reserve(RECORD_HEAD + add + MAC);
    frame.push(kind as u8);
    frame.extend_from_slice(&(add as u32).to_le_bytes());
    for p in parts {
        frame.extend_from_slice(p);
    }
    frame.extend_from_slice(&[0; MAC]);
    frame[8..12].copy_from_slice(&(len as u32).to_le_bytes());
}

/// The records of a batch's payload, all checked before the first is returned: each
/// of a reliable kind other than a batch, each length inside the payload, nothing
/// left over. A batch that fails is refused whole, so none of it is acted on.
///
/// # Errors
///
/// [`WireError::Malformed`] naming what is wrong.
pub fn records(payload: &[u8]) -> Result<Records<'_>, WireError> {
    let mut rest = payload;
    while !rest.is_empty() {
        if rest.len() < RECORD_HEAD {
            return Err(WireError::Malformed(
                "batch: a record cut short in its head",
            ));
        }
        match Kind::from_u8(rest[0]) {
            Some(k) if k.reliable() && k != Kind::Batch => {}
            _ => {
                return Err(WireError::Malformed(
                    "batch: a record of a kind a batch cannot carry",
                ))
            }
        }
        let len = u32::from_le_bytes(rest[1..5].try_into().expect("4 bytes")) as usize;
        if len > rest.len() - RECORD_HEAD {
            return Err(WireError::Malformed(
                "batch: a record longer than the batch",
            ));
        }
        rest = &rest[RECORD_HEAD + len..];
    }
    Ok(Records { rest: payload })
}

/// The checked records of a batch ([`records`]).
#[derive(Debug)]
pub struct Records<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Records<'a> {
    type Item = (Kind, &'a [u8]);

    fn next(&mut self) -> Option<(Kind, &'a [u8])> {
        if self.rest.is_empty() {
            return None;
        }
        let kind = Kind::from_u8(self.rest[0]).expect("checked by `records`");
        let len = u32::from_le_bytes(self.rest[1..5].try_into().expect("4 bytes")) as usize;
        let payload = &self.rest[RECORD_HEAD..RECORD_HEAD + len];
        self.rest = &self.rest[RECORD_HEAD + len..];
        Some((kind, payload))
    }
}

/// One received frame, checked.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// CRC and MAC verified.
    Frame(Header, Vec<u8>),
    /// A Refuse frame's payload (a `proto::reply::JoinRefusal` to decode), read
    /// without checking its MAC.
    Refused(Vec<u8>),
    /// The CRC failed: damaged on the way. The header (seq, kind) is not trusted.
    Corrupt,
}

/// [`Received`] with the payload borrowed from the decoder.
#[derive(Debug, PartialEq, Eq)]
pub enum Borrowed<'a> {
    /// CRC and MAC verified.
    Frame(Header, &'a [u8]),
    /// A Refuse frame's payload.
    Refused(&'a [u8]),
    /// The CRC failed.
    Corrupt,
}

/// Splits a byte stream into frames and checks them: CRC, then MAC and counter under
/// the key of the direction it reads.
pub struct Decoder {
    /// Always initialised; bytes `start..end` are received and not yet consumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The key MACs are checked with; `None` checks neither MAC nor counter (before a
    /// key is agreed, and in tools that only split a stream into frames).
    key: Option<FrameKey>,
    /// The highest counter accepted under `key`.
    last: u64,
}

impl Decoder {
    /// An empty decoder checking MACs and counters under `key`, with room for a
    /// link's traffic.
    pub fn new(key: Option<FrameKey>) -> Decoder {
        Decoder::with_capacity(key, 256 * 1024)
    }

    /// An empty decoder with room for `bytes` (it grows when a frame needs more): the
    /// hub checks a join, from a peer not yet authenticated, in a buffer its size.
    pub fn with_capacity(key: Option<FrameKey>, bytes: usize) -> Decoder {
        Decoder {
            buf: vec![0; bytes],
            start: 0,
            end: 0,
            key,
            last: 0,
        }
    }

    /// The highest counter accepted so far (0: none).
    pub fn last_counter(&self) -> u64 {
        self.last
    }

    /// Room to read into: a slice past the received bytes with at least `min` bytes.
    pub fn spare(&mut self, min: usize) -> &mut [u8] {
        if self.start == self.end {
            // Everything read was taken: read to the start again, into lines the
            // cache still holds, rather than walk the whole buffer.
            self.start = 0;
            self.end = 0;
        }
        if self.buf.len() - self.end < min {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() - self.end < min {
                self.buf.resize(self.end + min.max(self.buf.len()), 0);
            }
        }
        &mut self.buf[self.end..]
    }

    /// Marks `n` bytes of [`spare`](Self::spare) as filled by a read.
    pub fn filled(&mut self, n: usize) {
        assert!(self.end + n <= self.buf.len());
        self.end += n;
    }

    /// Feeds bytes (tests and the relay use this instead of `spare`/`filled`).
    pub fn push(&mut self, bytes: &[u8]) {
        self.spare(bytes.len())[..bytes.len()].copy_from_slice(bytes);
        self.filled(bytes.len());
    }

    /// The next complete frame, `Ok(None)` if more bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Received>, WireError> {
        Ok(self.next_borrowed()?.map(|b| match b {
            Borrowed::Frame(h, p) => Received::Frame(h, p.to_vec()),
            Borrowed::Refused(why) => Received::Refused(why.to_vec()),
            Borrowed::Corrupt => Received::Corrupt,
        }))
    }

    /// Like [`next_frame`](Self::next_frame), with the payload borrowed from the
    /// decoder's buffer (no copy).
    pub fn next_borrowed(&mut self) -> Result<Option<Borrowed<'_>>, WireError> {
        let avail = &mut self.buf[self.start..self.end];
        let Some(h) = parse_header(avail)? else {
            return Ok(None);
        };
        let total = HEADER + h.len + MAC;
        if avail.len() < total {
            return Ok(None);
        }
        let frame = &mut avail[..total];
        self.start += total;
        let want = u32::from_le_bytes(frame[12..16].try_into().expect("4 bytes"));
        if h.kind == Kind::Refuse {
            return Ok(Some(Borrowed::Refused(&frame[HEADER..HEADER + h.len])));
        }
        if crc(frame) != want {
            return Ok(Some(Borrowed::Corrupt));
        }
        // As the sender MACed it (see `stamp`).
        frame[12..16].fill(0);
        let frame = &*frame;
        let payload = &frame[HEADER..HEADER + h.len];
        if let Some(key) = &self.key {
            if !key.verify(h.counter, frame) {
                return Err(WireError::BadMac);
            }
            if h.counter <= self.last {
                return Err(WireError::Replayed {
                    counter: h.counter,
                    last: self.last,
                });
            }
            self.last = h.counter;
        }
        Ok(Some(Borrowed::Frame(h, payload)))
    }

    /// Takes the bytes buffered past the last returned frame (a handshake hands them
    /// to the link that takes over the socket).
    pub fn take_pending(&mut self) -> Vec<u8> {
        let v = self.buf[self.start..self.end].to_vec();
        self.start = self.end;
        v
    }

    /// Bytes buffered but not yet returned as frames.
    pub fn pending(&self) -> usize {
        self.end - self.start
    }
}

/// Builds a payload field by field (little-endian).
#[derive(Default)]
pub struct Put(pub Vec<u8>);

impl Put {
    /// An empty payload.
    pub fn new() -> Put {
        Put(Vec::with_capacity(64))
    }
    /// Appends a u8.
    pub fn u8(mut self, v: u8) -> Put {
        self.0.push(v);
        self
    }
    /// Appends a u16.
    pub fn u16(mut self, v: u16) -> Put {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends a u32.
    pub fn u32(mut self, v: u32) -> Put {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends a u64.
    pub fn u64(mut self, v: u64) -> Put {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends raw bytes.
    pub fn bytes(mut self, v: &[u8]) -> Put {
        self.0.extend_from_slice(v);
        self
    }
    /// Appends a string with a u16 length.
    pub fn str(self, s: &str) -> Put {
        let mut n = s.len().min(u16::MAX as usize);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.u16(n as u16).bytes(&s.as_bytes()[..n])
    }
}

/// Reads a payload field by field; every read is bounds-checked.
pub struct Get<'a> {
    b: &'a [u8],
    what: &'static str,
}

impl<'a> Get<'a> {
    /// Reads `b`, naming it `what` in errors.
    pub fn new(b: &'a [u8], what: &'static str) -> Get<'a> {
        Get { b, what }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.b.len() < n {
            return Err(WireError::Malformed(self.what));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    /// A u8.
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    /// A u16.
    pub fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2")))
    }
    /// A u32.
    pub fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    /// A u64.
    pub fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
    /// `n` raw bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        self.take(n)
    }
    /// A fixed array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        Ok(self.take(N)?.try_into().expect("N"))
    }
    /// A u16-length string (UTF-8 checked).
    pub fn str(&mut self) -> Result<String, WireError> {
        let n = self.u16()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| WireError::Malformed(self.what))
    }
    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> LinkKeys {
        Key::from_secret(b"k").link(&[1; 16], &[2; 16])
    }

    fn roundtrip(kind: Kind, payload: &[u8]) -> Received {
        let k = keys().to_hub;
        let mut out = Vec::new();
        encode(&mut out, &k, 1, kind, 7, 3, &[payload]);
        let mut d = Decoder::new(Some(k));
        d.push(&out);
        d.next_frame().unwrap().unwrap()
    }

    /// Bitwise CRC32C (reflected polynomial 0x82F63B78), the definition itself.
    fn crc32c_reference(bytes: impl IntoIterator<Item = u8>) -> u32 {
        let mut c = !0u32;
        for b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
            }
        }
        !c
    }

    #[test]
    fn crc_field_is_crc32c_of_the_rest_of_the_frame() {
        assert_eq!(crc32c_reference(*b"123456789"), 0xE306_9283);
        for key in [FrameKey::open(), keys().to_node] {
            for len in [0usize, 1, 8, 63, 64, 1000, 70_000] {
                let payload: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
                let mut out = Vec::new();
                encode(&mut out, &key, 5, Kind::Data, 9, 4, &[&payload]);
                let field = u32::from_le_bytes(out[12..16].try_into().unwrap());
                let rest = out[..12].iter().chain(&out[16..]).copied();
                assert_eq!(field, crc32c_reference(rest), "payload of {len} bytes");
            }
        }
    }

    #[test]
    fn frame_roundtrips() {
        let r = roundtrip(Kind::Data, b"hello");
        let Received::Frame(h, p) = r else {
            panic!("{r:?}")
        };
        assert_eq!(
            (h.kind, h.seq, h.received, h.counter, p.as_slice()),
            (Kind::Data, 7, 3, 1, &b"hello"[..])
        );
    }

    #[test]
    fn every_single_bit_flip_after_the_length_is_caught() {
        let k = keys().to_hub;
        let mut out = Vec::new();
        encode(&mut out, &k, 1, Kind::Data, 1, 0, &[b"payload bytes"]);
        for i in 12..out.len() {
            for bit in 0..8 {
                let mut f = out.clone();
                f[i] ^= 1 << bit;
                let mut d = Decoder::new(Some(k.clone()));
                d.push(&f);
                let r = d.next_frame();
                // A flipped kind byte may become another valid kind or an unknown one.
                assert!(
                    matches!(r, Ok(Some(Received::Corrupt)))
                        || (i == 6 && r.is_err())
                        || (i == 6 && matches!(r, Ok(Some(Received::Refused(_))))),
                    "flip at byte {i} bit {bit}: {r:?}"
                );
            }
        }
    }

    /// Someone without the key who flips a bit and fixes the CRC: every bit the MAC
    /// covers (flags, seq, ack, counter, payload, the MAC itself) is `BadMac`, on a
    /// short frame (AEGIS-128L) and a long one (AEGIS-128X4).
    #[test]
    fn a_flipped_bit_with_its_crc_fixed_is_bad_mac() {
        let k = keys().to_hub;
        let long: Vec<u8> = (0..SHORT_FRAME).map(|i| i as u8).collect();
        for payload in [&b"payload bytes"[..], &long] {
            let mut out = Vec::new();
            encode(&mut out, &k, 3, Kind::Data, 1, 0, &[payload]);
            assert_eq!(out.len() > SHORT_FRAME, payload.len() == SHORT_FRAME);
            let covered = (7..8).chain(16..out.len());
            for i in covered {
                for bit in 0..8 {
                    let mut f = out.clone();
                    f[i] ^= 1 << bit;
                    let c = crc(&f);
                    f[12..16].copy_from_slice(&c.to_le_bytes());
                    let mut d = Decoder::new(Some(k.clone()));
                    d.push(&f);
                    let what = format!("{}-byte frame, byte {i} bit {bit}", out.len());
                    assert_eq!(d.next_frame(), Err(WireError::BadMac), "{what}");
                }
            }
        }
    }

    #[test]
    fn a_replayed_frame_or_a_reused_counter_is_replayed_and_the_stream_goes_on() {
        let k = keys().to_hub;
        let mut a = Vec::new();
        encode(&mut a, &k, 1, Kind::Data, 1, 0, &[b"first"]);
        let mut reused = Vec::new();
        // A new frame under a counter already used (a sender that reused one).
        encode(&mut reused, &k, 1, Kind::Data, 2, 0, &[b"other"]);
        let mut lower = Vec::new();
        encode(&mut lower, &k, 5, Kind::Release, 0, 0, &[b"x"]);
        let mut d = Decoder::new(Some(k.clone()));
        d.push(&a);
        d.push(&a);
        d.push(&reused);
        d.push(&lower);
        d.push(&lower);
        assert!(matches!(d.next_frame(), Ok(Some(Received::Frame(h, _))) if h.counter == 1));
        let replayed = Err(WireError::Replayed {
            counter: 1,
            last: 1,
        });
        assert_eq!(d.next_frame(), replayed);
        assert_eq!(d.next_frame(), replayed);
        assert!(matches!(d.next_frame(), Ok(Some(Received::Frame(h, _))) if h.counter == 5));
        assert_eq!(
            d.next_frame(),
            Err(WireError::Replayed {
                counter: 5,
                last: 5
            })
        );
        assert_eq!(d.last_counter(), 5);
        assert_eq!(d.next_frame(), Ok(None));
        // Counter 0 is never accepted: counters start at 1.
        let mut zero = Vec::new();
        encode(&mut zero, &k, 0, Kind::Data, 1, 0, &[b"z"]);
        let mut d = Decoder::new(Some(k));
        d.push(&zero);
        assert_eq!(
            d.next_frame(),
            Err(WireError::Replayed {
                counter: 0,
                last: 0
            })
        );
    }

    /// Open clusters carry no MAC, but counters are still checked: a duplicate is
    /// refused the same way whatever the key.
    #[test]
    fn open_frames_have_a_zero_mac_and_checked_counters() {
        let k = FrameKey::open();
        let mut f = Vec::new();
        encode(&mut f, &k, 9, Kind::Data, 1, 0, &[b"open"]);
        assert_eq!(&f[f.len() - MAC..], &[0; MAC]);
        let mut d = Decoder::new(Some(k));
        d.push(&f);
        d.push(&f);
        assert!(matches!(d.next_frame(), Ok(Some(Received::Frame(..)))));
        assert_eq!(
            d.next_frame(),
            Err(WireError::Replayed {
                counter: 9,
                last: 9
            })
        );
    }

    /// A frame reflected into the other direction, or replayed into another connection
    /// (other nonces) or a cluster with another key, does not verify there.
    #[test]
    fn frames_verify_only_in_their_own_direction_and_connection() {
        let cluster = Key::from_secret(b"k");
        let here = cluster.link(&[1; 16], &[2; 16]);
        let other_conn = [
            cluster.link(&[1; 16], &[3; 16]),
            cluster.link(&[4; 16], &[2; 16]),
            Key::from_secret(b"other").link(&[1; 16], &[2; 16]),
        ];
        let mut f = Vec::new();
        encode(&mut f, &here.to_hub, 1, Kind::Data, 1, 0, &[b"up"]);
        let mut wrong = vec![here.to_node.clone(), cluster.join(&[1; 16])];
        for k in &other_conn {
            wrong.push(k.to_hub.clone());
            wrong.push(k.to_node.clone());
        }
        for k in wrong {
            assert_ne!(k, here.to_hub);
            let mut d = Decoder::new(Some(k.clone()));
            d.push(&f);
            assert_eq!(d.next_frame(), Err(WireError::BadMac), "{k:?}");
        }
        let mut d = Decoder::new(Some(here.to_hub.clone()));
        d.push(&f);
        assert!(matches!(d.next_frame(), Ok(Some(Received::Frame(..)))));
        // The open key derives only open keys; a real key never an open one.
        let open = Key::open().link(&[1; 16], &[2; 16]);
        assert!(open.to_hub.is_open() && open.to_node.is_open());
        assert!(!here.to_hub.is_open() && !cluster.join(&[0; 16]).is_open());
    }

    #[test]
    fn stamping_again_gives_a_frame_that_verifies_under_its_new_counter() {
        let k = keys().to_node;
        let mut f = Vec::new();
        encode_unstamped(&mut f, Kind::Deliver, 4, 2, &[b"again"]);
        stamp(&mut f, &k, 7);
        let first = f.clone();
        stamp(&mut f, &k, 8);
        assert_eq!(counter_of(&f), 8);
        assert_ne!(first, f);
        let mut d = Decoder::new(Some(k));
        d.push(&first);
        d.push(&f);
        for want in [7, 8] {
            let r = d.next_frame();
            assert!(
                matches!(&r, Ok(Some(Received::Frame(h, p))) if h.counter == want && h.seq == 4 && p == b"again"),
                "{r:?}"
            );
        }
    }

    #[test]
    fn wrong_key_is_bad_mac_and_garbage_and_version_are_named() {
        let mut out = Vec::new();
        let a = Key::from_secret(b"a").join(&[0; 16]);
        encode(&mut out, &a, 1, Kind::Join, 0, 0, &[b"x"]);
        let mut d = Decoder::new(Some(Key::from_secret(b"b").join(&[0; 16])));
        d.push(&out);
        assert_eq!(d.next_frame(), Err(WireError::BadMac));
        let mut d = Decoder::new(None);
        d.push(b"GET / HTTP/1.1\r\n");
        assert!(matches!(d.next_frame(), Err(WireError::Garbage(_))));
        out[4..6].copy_from_slice(&(VERSION + 1).to_le_bytes());
        let mut d = Decoder::new(None);
        d.push(&out);
        assert_eq!(
            d.next_frame(),
            Err(WireError::Version {
                theirs: VERSION + 1
            })
        );
    }
}
