//! Asking a hub for its status (what `memchan status` shows): a client of the hub,
//! as a node is, over an observer's handshake (`memchan_link::handshake`).

use memchan_core::status::ClusterStatus;
use memchan_link::handshake::{self, read_frame, HandshakeError, STEP};
use memchan_link::proto::{Join, ROLE_OBSERVER};
use memchan_link::wire::{Key, Kind};
use std::time::Instant;

/// Why a status query failed.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The observer's handshake failed (the hub could not be reached, or refused).
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    /// The report does not parse.
    #[error("bad status report: {0}")]
    Report(#[source] serde_json::Error),
}

/// Asks the hub at `addr` for its status (what `memchan status` shows).
///
/// # Errors
/// The [`QueryError`] that says what went wrong.
pub fn query_status(addr: &str, key: &Key) -> Result<ClusterStatus, QueryError> {
    let join = Join::service(ROLE_OBSERVER);
    let (mut sock, _key, mut dec) = handshake::connect(addr, key, join)?;
    let (h, p) = read_frame(&mut sock, &mut dec, Instant::now() + STEP)?;
    if h.kind != Kind::Response {
        return Err(HandshakeError::Unexpected {
            want: "a status report",
            got: h.kind,
        }
        .into());
    }
    serde_json::from_slice(&p).map_err(QueryError::Report)
}
