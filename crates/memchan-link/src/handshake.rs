//! Joining: the hub says Hello (its nonce, no MAC), the node answers Join (echoing the
//! nonce, with its own, MACed under [`Key::join`]: the cluster key bound to this
//! connection's hub nonce), the hub answers Welcome (the first frame of the link's
//! hub-to-node direction, under its [`Key::link`] key) or Refuse (a coded
//! [`JoinRefusal`], readable without the key). After that the socket belongs to a
//! [`Link`](crate::link::Link). A failure is a [`HandshakeError`], in the words of the
//! side that joins.
//!
//! Proof of the key: only a holder of the cluster key can make a Join that verifies
//! under a fresh hub nonce, and only one can make the Welcome that verifies under the
//! link key. A peer without it learns the hub's nonce and the refusal's reason, nothing
//! that helps it make either.

use crate::proto::reply::{JoinRefusal, ReplyError};
use crate::proto::{Join, Welcome, ROLE_NODE};
use crate::wire::{self, Decoder, FrameKey, Key, Kind, Received, WireError};
use memchan_core::Error;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// How long each handshake step may take.
pub const STEP: Duration = Duration::from_secs(5);
/// A join whose handshake timed out is tried again, on a new connection, this many
/// times: on a lossy network two lost segments in one step (TCP's first
/// retransmission waits 1 s, the next 2 s) can outlast a step with the hub fine.
const JOIN_TRIES: u32 = 3;

/// Why a handshake failed.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// The hub's address does not resolve.
    #[error("cannot resolve: {0}")]
    Resolve(#[source] std::io::Error),
    /// It resolves to no address.
    #[error("no address")]
    NoAddress,
    /// The connection could not be made.
    #[error("cannot connect: {0}")]
    Connect(#[source] std::io::Error),
    /// The join could not be sent.
    #[error("cannot send join: {0}")]
    Send(#[source] std::io::Error),
    /// A socket call failed.
    #[error("link I/O error: {0}")]
    Io(#[source] std::io::Error),
    /// No random nonce (see [`nonce`]).
    #[error(transparent)]
    Nonce(Error),
    /// A step outlasted [`STEP`].
    #[error("handshake timed out")]
    TimedOut,
    /// A frame failed its CRC.
    #[error("handshake frame failed its CRC")]
    Corrupt,
    /// The peer closed the connection.
    #[error("the hub closed the connection during the handshake")]
    Closed,
    /// The hub refused, for this reason.
    #[error("refused: {0}")]
    Refused(JoinRefusal),
    /// A refusal whose payload does not decode.
    #[error("the hub's refusal does not decode: {0}")]
    BadRefusal(#[source] ReplyError),
    /// The hub's frame does not verify under the link key derived from ours.
    #[error("the hub's reply does not verify with our cluster key (wrong key?)")]
    WrongKey,
    /// The peer speaks another protocol version.
    #[error(
        "the hub speaks protocol version {theirs}, this build speaks {}",
        wire::VERSION
    )]
    Version {
        /// The peer's version.
        theirs: u16,
    },
    /// The peer's bytes are not memchan frames.
    #[error("the peer is not a memchan hub: {0}")]
    NotAHub(#[source] WireError),
    /// A frame of another kind than the step expects.
    #[error("expected {want}, got {got:?}")]
    Unexpected {
        /// What the step waits for.
        want: &'static str,
        /// What came.
        got: Kind,
    },
    /// A frame of the right kind that does not decode.
    #[error(transparent)]
    Malformed(WireError),
}

impl From<WireError> for HandshakeError {
    fn from(e: WireError) -> HandshakeError {
        match e {
            WireError::BadMac => HandshakeError::WrongKey,
            WireError::Version { theirs } => HandshakeError::Version { theirs },
            e => HandshakeError::NotAHub(e),
        }
    }
}

/// Reads one frame from a blocking socket before `deadline`.
pub fn read_frame(
    sock: &mut TcpStream,
    dec: &mut Decoder,
    deadline: Instant,
) -> Result<(wire::Header, Vec<u8>), HandshakeError> {
    loop {
        match dec.next_frame()? {
            Some(Received::Frame(h, p)) => return Ok((h, p)),
            Some(Received::Refused(why)) => {
                return Err(match JoinRefusal::get(&why) {
                    Ok(r) => HandshakeError::Refused(r),
                    Err(e) => HandshakeError::BadRefusal(e),
                })
            }
            Some(Received::Corrupt) => return Err(HandshakeError::Corrupt),
            None => {}
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(HandshakeError::TimedOut);
        }
        sock.set_read_timeout(Some(left))
            .map_err(HandshakeError::Io)?;
        let buf = dec.spare(4096);
        match sock.read(buf) {
            Ok(0) => return Err(HandshakeError::Closed),
            Ok(n) => dec.filled(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(HandshakeError::TimedOut)
            }
            Err(e) => return Err(HandshakeError::Io(e)),
        }
    }
}

/// Sends one control frame on a blocking socket: the first frame under `key` (counter
/// 1). Every handshake frame is the first under its key: Hello and Refuse are open,
/// a Join has a key of its own, and the observer's status report is the first of its
/// connection's hub-to-node direction.
pub fn write_frame(
    sock: &mut TcpStream,
    key: &FrameKey,
    kind: Kind,
    payload: &[u8],
) -> std::io::Result<()> {
    let mut out = Vec::new();
    wire::encode(&mut out, key, 1, kind, 0, 0, &[payload]);
    sock.write_all(&out)
}

/// A fresh random nonce from the operating system's generator (`getrandom`). There is
/// no fallback: a predictable nonce would weaken the link key derived from it, so a
/// failure is an [`Error::Os`] and the handshake does not happen.
pub fn nonce() -> Result<[u8; 16], Error> {
    let mut n = [0u8; 16];
    getrandom::fill(&mut n).map_err(|e| Error::os("getting a random nonce", e))?;
    Ok(n)
}

/// What the node side of a handshake yields.
pub struct Joined {
    /// The connected socket.
    pub sock: TcpStream,
    /// The key of the frames this node writes.
    pub key: FrameKey,
    /// The decoder of the hub's frames: it read the Welcome (so its counter goes on
    /// from there) and holds any bytes read past it.
    pub dec: Decoder,
    /// The hub's acceptance.
    pub welcome: Welcome,
}

/// Node side: connects to `addr`, reads the Hello and sends `join`. Returns the socket,
/// the key of the frames this node writes, and the decoder of the hub's (holding any
/// bytes read past the Hello). A hub too busy to take the connection (its gate's
/// caps) is tried again until the handshake deadline.
pub fn connect(
    addr: &str,
    cluster_key: &Key,
    join: Join,
) -> Result<(TcpStream, FrameKey, Decoder), HandshakeError> {
    let deadline = Instant::now() + STEP;
    retry_busy(deadline, || {
        connect_once(addr, cluster_key, join.clone(), deadline)
    })
}

/// Runs `attempt` again, after a growing random pause, while the hub answers that it
/// is busy and the deadline allows.
fn retry_busy<T>(
    deadline: Instant,
    mut attempt: impl FnMut() -> Result<T, HandshakeError>,
) -> Result<T, HandshakeError> {
    let mut cap_ms = 10u64;
    loop {
        match attempt() {
            Err(why @ HandshakeError::Refused(JoinRefusal::Busy(_))) => {
                let mut r = [0u8; 8];
                let jitter = getrandom::fill(&mut r).map_or(cap_ms / 2, |()| u64::from_le_bytes(r));
                let pause = Duration::from_millis(cap_ms / 2 + jitter % (cap_ms / 2 + 1));
                if Instant::now() + pause >= deadline {
                    return Err(why);
                }
                std::thread::sleep(pause);
                cap_ms = (cap_ms * 2).min(400);
            }
            r => return r,
        }
    }
}

fn connect_once(
    addr: &str,
    cluster_key: &Key,
    mut join: Join,
    deadline: Instant,
) -> Result<(TcpStream, FrameKey, Decoder), HandshakeError> {
    let sa = addr
        .to_socket_addrs()
        .map_err(HandshakeError::Resolve)?
        .next()
        .ok_or(HandshakeError::NoAddress)?;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    let mut sock = TcpStream::connect_timeout(&sa, left).map_err(HandshakeError::Connect)?;
    sock.set_nodelay(true).map_err(HandshakeError::Io)?;
    // The Hello is not checked here: with a wrong key we still send our Join, so the
    // hub can refuse it by name (and log it). The hub proves the key in its Welcome.
    let mut dec = Decoder::new(None);
    let (h, p) = read_frame(&mut sock, &mut dec, deadline)?;
    if h.kind != Kind::Hello || p.len() < 16 {
        return Err(HandshakeError::Unexpected {
            want: "the hub's hello",
            got: h.kind,
        });
    }
    join.hub_nonce.copy_from_slice(&p[..16]);
    join.node_nonce = nonce().map_err(HandshakeError::Nonce)?;
    let join_key = cluster_key.join(&join.hub_nonce);
    write_frame(&mut sock, &join_key, Kind::Join, &join.put()).map_err(HandshakeError::Send)?;
    let keys = cluster_key.link(&join.hub_nonce, &join.node_nonce);
    let mut next = Decoder::new(Some(keys.to_node));
    next.push(&dec.take_pending());
    Ok((sock, keys.to_hub, next))
}

/// Node side: a full join of a node (not an observer); a busy hub is tried again as
/// by [`connect`].
pub fn join(addr: &str, cluster_key: &Key, join: Join) -> Result<Joined, HandshakeError> {
    debug_assert_eq!(join.role, ROLE_NODE);
    let mut tries = 1;
    loop {
        match join_once(addr, cluster_key, join.clone()) {
            Err(HandshakeError::TimedOut) if tries < JOIN_TRIES => {
                tries += 1;
                tracing::warn!(
                    hub = addr,
                    try_ = tries,
                    "join handshake timed out; trying again"
                );
            }
            r => return r,
        }
    }
}

fn join_once(addr: &str, cluster_key: &Key, join: Join) -> Result<Joined, HandshakeError> {
    let deadline = Instant::now() + STEP;
    retry_busy(deadline, || {
        let (mut sock, key, mut dec) = connect_once(addr, cluster_key, join.clone(), deadline)?;
        let (h, p) = read_frame(&mut sock, &mut dec, Instant::now() + STEP)?;
        if h.kind != Kind::Welcome {
            return Err(HandshakeError::Unexpected {
                want: "a welcome",
                got: h.kind,
            });
        }
        let welcome = Welcome::get(&p).map_err(HandshakeError::Malformed)?;
        sock.set_read_timeout(None).map_err(HandshakeError::Io)?;
        Ok(Joined {
            sock,
            key,
            dec,
            welcome,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A "hub" that accepts and never answers: the join tries [`JOIN_TRIES`] times,
    /// each on a new connection, then says the handshake timed out.
    #[test]
    fn a_join_whose_handshake_times_out_tries_again_then_says_so() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for conn in listener.incoming() {
                let Ok(c) = conn else { return };
                held.push(c);
                if tx.send(()).is_err() {
                    return;
                }
            }
        });
        let mut join = Join::service(ROLE_NODE);
        join.cluster = "silent".into();
        let r = super::join(&addr, &Key::open(), join);
        match r {
            Err(e) => assert!(matches!(e, HandshakeError::TimedOut), "{e}"),
            Ok(_) => panic!("joined a hub that never answered"),
        }
        assert_eq!(
            rx.try_iter().count(),
            JOIN_TRIES as usize,
            "connections made"
        );
    }

    #[test]
    fn nonces_come_from_the_os_and_differ() {
        let (a, b) = (nonce().unwrap(), nonce().unwrap());
        assert_ne!(a, b);
        assert_ne!(a, [0u8; 16]);
    }
}
