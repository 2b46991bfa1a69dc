//! The raw TCP references over the veth (`tcp_raw`, `tcp_raw_spin`, and the
//! `tcp_raw` and `tcp_raw_64k` bandwidths). The pong side (namespace B)
//! listens on its address, the ping side (namespace A) connects to it;
//! TCP_NODELAY on both.
//!
//! | kind          | ping (timing side, ns A)                      | pong (ns B)                      |
//! |---------------|-----------------------------------------------|----------------------------------|
//! | `tcp_raw`     | 8-byte send, blocking `read`                  | blocking `read`, 8-byte send     |
//! | `tcp_raw_spin`| 8-byte send, `recv(MSG_DONTWAIT)` in a spin   | same                             |
//! | bandwidth     | per window: N × 1 MiB `write_all`, then read the 1-byte answer | read N MiB, answer 1 byte |
//! | `tcp_raw_64k` bandwidth | the same, each 1 MiB buffer as 16 `write_all` of 64 KiB | same             |

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};

use super::super::pingpong::{self, Endpoint};
use super::super::refs::{PageBuf, Tcp, PEER_TIMEOUT};
use super::super::timer::{ticks, Clock};
use super::super::worker::{self, WorkerArgs, WorkerOutput};
use super::model::MIB;

/// Busy-polling TCP endpoint: blocking 8-byte send, and a receive that spins
/// on `recv(MSG_DONTWAIT)` (never sleeps in the kernel).
pub struct TcpSpin(TcpStream);

impl TcpSpin {
    pub fn new(s: TcpStream) -> Result<Self> {
        s.set_nodelay(true).context("TCP_NODELAY")?;
        Ok(Self(s))
    }
}

/// Fills `buf` from `s` with `recv(MSG_DONTWAIT)` in a spin loop.
fn recv_spin(s: &TcpStream, buf: &mut [u8]) -> Result<()> {
    let fd = s.as_raw_fd();
    let mut got = 0;
    let mut polls: u32 = 0;
    let mut deadline: Option<Instant> = None;
    while got < buf.len() {
        let rest = &mut buf[got..];
        // SAFETY: `rest` is valid for writes of `rest.len()` bytes for the
        // whole call, and `fd` is an open socket owned by `s`.
        let n = unsafe { libc::recv(fd, rest.as_mut_ptr().cast(), rest.len(), libc::MSG_DONTWAIT) };
        if n > 0 {
            got += n as usize;
            continue;
        }
        if n == 0 {
            bail!("tcp receive: the peer closed the connection");
        }
        let e = std::io::Error::last_os_error();
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => {}
            _ => return Err(e).context("tcp receive (MSG_DONTWAIT)"),
        }
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(4096) {
            let d = *deadline.get_or_insert_with(|| Instant::now() + PEER_TIMEOUT);
            if Instant::now() > d {
                bail!("timed out after {PEER_TIMEOUT:?} waiting for the tcp peer");
            }
        }
    }
    Ok(())
}

impl Endpoint for TcpSpin {
    fn send(&mut self, seq: u64) -> Result<()> {
        self.0.write_all(&seq.to_le_bytes()).context("tcp send")
    }
    fn wait(&mut self, seq: u64) -> Result<()> {
        let mut b = [0u8; 8];
        recv_spin(&self.0, &mut b)?;
        ensure!(
            u64::from_le_bytes(b) == seq,
            "tcp ping-pong out of sequence"
        );
        Ok(())
    }
}

/// The ping side connects to the pong side's address; the pong side listens.
fn connection(a: &WorkerArgs, ping: bool) -> Result<TcpStream> {
    let port = a.port.context("--port is required")?;
    let addr = a.hosts.addr(1)?;
    if ping {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match TcpStream::connect((addr, port)) {
                Ok(s) => return Ok(s),
                Err(e) if Instant::now() > deadline => {
                    return Err(e).with_context(|| format!("connecting to {addr}:{port}"))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    } else {
        let l =
            TcpListener::bind((addr, port)).with_context(|| format!("binding {addr}:{port}"))?;
        let (s, _) = l.accept().context("accepting the ping side")?;
        Ok(s)
    }
}

/// 8-byte ping-pong, blocking or busy-polling.
pub fn latency(a: &WorkerArgs, clock: &Clock, ping: bool, spin: bool) -> Result<WorkerOutput> {
    let s = connection(a, ping)?;
    if spin {
        let mut ep = TcpSpin::new(s)?;
        run_pingpong(&mut ep, a, clock, ping)
    } else {
        let mut ep = Tcp::new(s)?;
        run_pingpong(&mut ep, a, clock, ping)
    }
}

fn run_pingpong(
    ep: &mut impl Endpoint,
    a: &WorkerArgs,
    clock: &Clock,
    ping: bool,
) -> Result<WorkerOutput> {
    if ping {
        worker::ping_output(ep, a, clock)
    } else {
        pingpong::pong(ep, a.warmup, a.iters)?;
        Ok(WorkerOutput::default())
    }
}

/// Stream of 1 MiB buffers: `warmup + iters` windows of `window_mib` MiB
/// each; the receiver reads all of a window and answers one byte. The sender
/// hands each buffer to the kernel in `write_all` calls of `chunk` bytes
/// (`MIB`: one call per buffer). Samples (ping side): ns per window, first
/// write to answer.
pub fn bandwidth(a: &WorkerArgs, clock: &Clock, ping: bool, chunk: usize) -> Result<WorkerOutput> {
    ensure!(
        chunk > 0 && MIB.is_multiple_of(chunk),
        "write size {chunk} does not divide 1 MiB"
    );
    let mut s = connection(a, ping)?;
    s.set_nodelay(true).context("TCP_NODELAY")?;
    s.set_read_timeout(Some(PEER_TIMEOUT))
        .context("SO_RCVTIMEO")?;
    let n = a.hosts.window_mib;
    ensure!(n > 0, "--window-mib must be at least 1");
    let windows = a.warmup + a.iters;
    let mut buf = PageBuf::new(MIB, 0x5a);
    if ping {
        let mut v = Vec::with_capacity(a.iters as usize);
        let mut answer = [0u8; 1];
        for w in 0..windows {
            let t0 = ticks();
            for _ in 0..n {
                for c in buf.as_slice().chunks(chunk) {
                    s.write_all(c).context("tcp send")?;
                }
            }
            s.read_exact(&mut answer).context("tcp receive (answer)")?;
            let t1 = ticks();
            if w >= a.warmup {
                v.push(clock.ns(t1.wrapping_sub(t0)));
            }
        }
        Ok(WorkerOutput::one("window_ns", v))
    } else {
        let b = buf.as_mut_slice();
        for _ in 0..windows {
            let mut left = n * MIB;
            while left > 0 {
                let k = left.min(b.len());
                let got = s.read(&mut b[..k]).context("tcp receive")?;
                ensure!(got > 0, "tcp receive: the sender closed the connection");
                left -= got;
            }
            s.write_all(&[1]).context("tcp send (answer)")?;
        }
        Ok(WorkerOutput::default())
    }
}
