//! The standbys the active hub copies its tables to (`Mirrors`): each one's open
//! mirror connection, the copy sent on it and the receipt read back.

use memchan_link::handshake::{read_frame, HandshakeError};
use memchan_link::wire::{self, Decoder, FrameKey, Kind};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Instant;

/// Why a standby left the mirror set.
#[derive(Debug, thiserror::Error)]
pub(super) enum MirrorError {
    /// The tables could not be sent.
    #[error("cannot send the tables: {0}")]
    Send(#[source] std::io::Error),
    /// No receipt came.
    #[error("no receipt: {0}")]
    Receipt(#[source] HandshakeError),
    /// Something else than a receipt came.
    #[error("expected a receipt, got {0:?}")]
    Unexpected(Kind),
}

/// One standby's open mirror connection.
pub(crate) struct Mirror {
    pub(super) sock: TcpStream,
    pub(super) peer: SocketAddr,
    pub(super) key: FrameKey,
    pub(super) dec: Decoder,
    /// The counter of the next frame sent to it.
    pub(super) counter: u64,
}

/// The standbys the tables go to (in the hub's `State`).
#[derive(Default)]
pub(crate) struct Mirrors {
    pub(super) list: Vec<Mirror>,
    /// The version of the last tables sent (a standby confirms a version).
    pub(super) version: u64,
}

impl Mirror {
    pub(super) fn send(&mut self, json: &[u8], deadline: Instant) -> Result<(), MirrorError> {
        let mut out = Vec::new();
        wire::encode(
            &mut out,
            &self.key,
            self.counter,
            Kind::Response,
            0,
            0,
            &[json],
        );
        self.counter += 1;
        let left = deadline.saturating_duration_since(Instant::now());
        self.sock
            .set_write_timeout(Some(left.max(std::time::Duration::from_millis(1))))
            .and_then(|()| self.sock.write_all(&out))
            .map_err(MirrorError::Send)
    }

    /// Reads the standby's receipts until one confirms `version`.
    pub(super) fn receipt(&mut self, version: u64, deadline: Instant) -> Result<(), MirrorError> {
        loop {
            let (h, p) = read_frame(&mut self.sock, &mut self.dec, deadline)
                .map_err(MirrorError::Receipt)?;
            let got = match (h.kind, p.as_slice().try_into()) {
                (Kind::MirrorReceipt, Ok(b)) => u64::from_le_bytes(b),
                (k, _) => return Err(MirrorError::Unexpected(k)),
            };
            if got >= version {
                return Ok(());
            }
        }
    }
}
