//! Dual rail, the active hub's side of the copy (synchronous replication of the
//! control plane). A standby keeps its [`ROLE_MIRROR`](memchan_link::proto::ROLE_MIRROR)
//! connection open; the active sends it the whole tables (they are small) when it
//! connects, every heartbeat, and whenever a member, segment, rx set or group changes,
//! and then waits for the standby's `MirrorReceipt` before it answers the node whose
//! request made the change ([`Shared::replicate`], called under the hub lock). So
//! whatever a node was told of is known to every standby in the mirror set, and a
//! switch loses no segment made or mapped in the last heartbeat before it.
//!
//! Bounded: a standby that does not confirm within a quarter of the failure timeout
//! (the hub lock is held meanwhile, and the nodes' links must not go silent) is
//! dropped from the mirror set and logged, so a dead standby never blocks the
//! cluster. It is stale from then on, until its mirror thread connects again (every
//! heartbeat) and gets the whole tables; a takeover by a stale standby refuses the
//! writes to segments it does not know (the writer's next `ack` fails) rather than
//! lose them silently.

use crate::standby::Tables;
use crate::{Shared, State};
use memchan_link::handshake::{read_frame, HandshakeError};
use memchan_link::wire::{self, Decoder, FrameKey, Kind};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Instant;

/// Why a standby left the mirror set.
#[derive(Debug, thiserror::Error)]
enum MirrorError {
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
pub(super) struct Mirror {
    sock: TcpStream,
    peer: SocketAddr,
    key: FrameKey,
    dec: Decoder,
    /// The counter of the next frame sent to it.
    counter: u64,
}

/// The standbys the tables go to (in the hub's `State`).
#[derive(Default)]
pub(super) struct Mirrors {
    list: Vec<Mirror>,
    /// The version of the last tables sent (a standby confirms a version).
    version: u64,
}

impl Mirror {
    fn send(&mut self, json: &[u8], deadline: Instant) -> Result<(), MirrorError> {
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
    fn receipt(&mut self, version: u64, deadline: Instant) -> Result<(), MirrorError> {
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

impl Shared {
    /// A standby's mirror connection whose join the gate verified: it joins the
    /// mirror set and gets the tables at once (in a thread of its own, not to hold the
    /// gate up for its receipt).
    pub(super) fn add_mirror(
        self: &Arc<Self>,
        sock: TcpStream,
        key: FrameKey,
        dec: Decoder,
        peer: SocketAddr,
    ) {
        let sh = self.clone();
        let spawned = std::thread::Builder::new()
            .name("memchan-hub-mirror".into())
            .spawn(move || {
                if let Err(e) = sock.set_nonblocking(false) {
                    tracing::warn!(%peer, error = %e, "standby's mirror connection dropped");
                    return;
                }
                let _ = sock.set_nodelay(true);
                let mut st = sh.lock();
                st.mirrors.list.push(Mirror {
                    sock,
                    peer,
                    key,
                    dec,
                    counter: 1,
                });
                tracing::info!(%peer, "a standby mirrors the tables");
                sh.replicate(&mut st);
            });
        if let Err(e) = spawned {
            tracing::warn!(%peer, error = %e, "no thread to take a standby's mirror connection");
        }
    }

    /// Sends the tables to every standby and waits for their receipts, dropping a
    /// standby that does not confirm in time (see the module doc).
    pub(super) fn replicate(&self, st: &mut State) {
        // A hub being stopped isolates its nodes as their links close: those are not
        // the cluster's changes, and the standby must still know them.
        if st.mirrors.list.is_empty() || self.stop.load(Relaxed) {
            return;
        }
        st.mirrors.version += 1;
        let mut tables = Tables::of(st, self.cfg.rail);
        tables.version = st.mirrors.version;
        let json = serde_json::to_vec(&tables).unwrap_or_default();
        if json.len() > wire::MAX_PAYLOAD {
            tracing::error!(
                bytes = json.len(),
                "the tables exceed a frame: the standbys' copies are not updated"
            );
            return;
        }
        let deadline = Instant::now() + self.cfg.failure_timeout / 4;
        let version = tables.version;
        let mut list = std::mem::take(&mut st.mirrors.list);
        // Sent to all first, so the standbys' round trips overlap.
        list.retain_mut(|m| {
            m.send(&json, deadline)
                .map_err(|e| drop_mirror(m, &e))
                .is_ok()
        });
        list.retain_mut(|m| {
            m.receipt(version, deadline)
                .map_err(|e| drop_mirror(m, &e))
                .is_ok()
        });
        st.mirrors.list = list;
    }
}

fn drop_mirror(m: &Mirror, why: &MirrorError) {
    tracing::warn!(
        standby = %m.peer,
        reason = %why,
        "standby dropped from the mirror set: its copy of the tables is stale until it connects again"
    );
    let _ = m.sock.shutdown(std::net::Shutdown::Both);
}
