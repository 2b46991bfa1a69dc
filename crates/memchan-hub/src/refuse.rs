//! Refusing a connection before its join: the refusal goes out readable without the
//! key, what the peer sent is drained, and the socket closes (`say_and_close`), for
//! the gate and for a standby refusing a resume.

use memchan_link::proto::reply::JoinRefusal;
use memchan_link::wire::{self, FrameKey, Kind};
use std::io::{Read, Write};
use std::net::TcpStream;

/// Bytes of a refused connection's input read and dropped before closing it: a close
/// with unread input resets the connection, and the peer might lose the refusal.
const DRAIN: usize = 64 * 1024;

/// Sends a Refuse frame (readable without the key) if the socket takes it now, reads
/// and drops what the peer sent (a close with unread input resets the connection, and
/// the peer could lose the refusal), and closes.
pub(crate) fn say_and_close(mut sock: TcpStream, why: &JoinRefusal) {
    let mut frame = Vec::new();
    wire::encode(
        &mut frame,
        &FrameKey::open(),
        1,
        Kind::Refuse,
        0,
        0,
        &[&why.put()],
    );
    let _ = sock.write(&frame);
    let _ = sock.shutdown(std::net::Shutdown::Write);
    let mut sink = [0u8; 4096];
    let mut drained = 0;
    while drained < DRAIN {
        match sock.read(&mut sink) {
            Ok(n) if n > 0 => drained += n,
            _ => break,
        }
    }
}
