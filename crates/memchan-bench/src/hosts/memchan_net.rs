//! memchan's side of the host figures: two nodes of one cluster, one in each
//! namespace of nodes, joined through a hub. The target series connect both sides to
//! the `memchan hub` the coordinator started on host H (`--hub`): every write
//! crosses the network twice, A -> H -> B, as the relay does between two hosts today.
//! The `memchan_hub_a*` series (information) have side A (ping) host the hub in its
//! own process (the virtual hub of a two-node cluster, `Hub::Host`) and side B
//! connect to it: one crossing.
//!
//! | kind            | ping (timing side, ns A)                                   | pong (ns B)                    |
//! |-----------------|------------------------------------------------------------|--------------------------------|
//! | `memchan`       | `write_u64(0, seq)`, `rx.wait` until `load_u64(0) == seq`   | same, answers with `write_u64` |
//! | `memchan_spin`  | the same with `rx.wait_spin` (busy-polls the link)          | same                           |
//! | bandwidth       | per window: N × `write(0, 1 MiB)`, then the flag; `rx.wait` for the answer | `rx.wait` for the flag, answer |
//!
//! Each runs twice per round: on an open cluster (links with CRC32C, no MAC) and on
//! a keyed one (`--key-file`, the same file for both sides: every frame MACed).
//!
//! Both sides map the segment rx with notify on receive and tx towards the
//! other. Before anything timed, a handshake on a word of the segment makes
//! sure both rx mappings exist (a write to a node without one is dropped).
//! The coordinator checks afterwards that the traffic crossed the veth.
//!
//! The hub shares the ping side's core either way: as threads of side A's
//! process, or as H's `memchan hub`, pinned there ([`super::hub`]).

use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use memchan::{Cluster, Dest, NodeId, RxAttrs, RxMapping, TxAttrs, TxMapping};

use super::super::pingpong::Fns;
use super::super::refs::{PageBuf, PEER_TIMEOUT};
use super::super::session::{join_cluster, leave, other_node};
use super::super::timer::{ticks, Clock};
use super::super::worker::{self, Kind, WorkerArgs, WorkerOutput};
use super::model::MIB;

/// Offsets in the ping-pong segment "pp": the counter, the handshake word.
const PP_SEQ: usize = 0;
const PP_HELLO: usize = 64;
/// Offsets after the 1 MiB of data in the bandwidth segment "bw".
const BW_FLAG: usize = MIB;
const BW_ANSWER: usize = MIB + 64;
const BW_HELLO: usize = MIB + 128;

struct Side {
    c: Cluster,
    peer: NodeId,
    ping: bool,
}

fn join(a: &WorkerArgs, ping: bool) -> Result<Side> {
    let c = join_cluster(a, ping)?;
    let peer = other_node(&c)?;
    Ok(Side { c, peer, ping })
}

impl Side {
    /// Maps `name` rx (notify on receive) and tx towards the peer, then
    /// runs the handshake on the word at `hello`.
    fn channel(&self, name: &str, size: usize, hello: usize) -> Result<(RxMapping, TxMapping)> {
        let seg = self
            .c
            .segment(name, size, 0o600)
            .with_context(|| format!("segment {name}"))?;
        let rx = seg
            .map_rx_with(RxAttrs {
                receive_enable: true,
                notify: true,
                remote_read: false,
            })
            .context("map_rx_with")?;
        let tx = seg
            .map_tx(Dest::Node(self.peer), TxAttrs::default())
            .context("map_tx")?;
        handshake(&rx, &tx, hello)?;
        Ok((rx, tx))
    }

    /// Leaves cleanly: the pong side makes sure its last answer has
    /// arrived (ack) before it leaves; the ping side, which may host the hub,
    /// stays until the pong side has left (at most a second).
    fn finish(self) {
        leave(&self.c, self.ping);
    }
}

/// Both rx mappings exist before anything timed is sent. Each side writes
/// its state into the peer's word `off` until it has seen the peer's:
/// state 1 = my rx exists; 2 = I have seen the peer's 1 (so the peer's rx
/// exists and my 2 lands). A side is done once it has sent 2 and seen 2.
pub(super) fn handshake(rx: &RxMapping, tx: &TxMapping, off: usize) -> Result<()> {
    let deadline = Instant::now() + PEER_TIMEOUT;
    let mut state = 1u64;
    loop {
        tx.write_u64(off, state).context("handshake write")?;
        let peer = rx.load_u64(off)?;
        if state == 2 && peer >= 2 {
            return Ok(());
        }
        if peer >= 1 && state == 1 {
            state = 2;
            continue;
        }
        rx.wait(Some(Duration::from_millis(10)))?;
        if Instant::now() > deadline {
            bail!("handshake with the other node timed out after {PEER_TIMEOUT:?}");
        }
    }
}

/// Waits (blocking in `rx.wait`, or busy-polling in `rx.wait_spin`)
/// until the word at `off` holds `v`.
fn wait_for(rx: &RxMapping, off: usize, v: u64, spin: bool, what: &str) -> Result<()> {
    while rx.load_u64(off)? != v {
        let woke = if spin {
            rx.wait_spin(Some(PEER_TIMEOUT))?
        } else {
            rx.wait(Some(PEER_TIMEOUT))?
        };
        ensure!(
            woke || rx.load_u64(off)? == v,
            "timed out after {PEER_TIMEOUT:?} waiting for {what}"
        );
    }
    Ok(())
}

/// Worker side of a memchan host measurement.
pub fn memchan_side_hosts(
    kind: Kind,
    a: &WorkerArgs,
    clock: &Clock,
    ping: bool,
) -> Result<WorkerOutput> {
    let s = join(a, ping)?;
    let out = match kind {
        Kind::HostMemchan | Kind::HostMemchanSpin => {
            let spin = kind == Kind::HostMemchanSpin;
            let (rx, tx) = s.channel("pp", 4096, PP_HELLO)?;
            let mut ep = Fns(
                |seq| tx.write_u64(PP_SEQ, seq).context("write_u64"),
                |seq| wait_for(&rx, PP_SEQ, seq, spin, "the memchan peer"),
            );
            worker::ping_or_pong(&mut ep, a, clock, ping)?
        }
        Kind::HostMemchanBw => bandwidth(&s, a, clock)?,
        Kind::HostMemchanRma => rma(&s, a, clock)?,
        k => bail!("{k:?} is not a memchan host measurement"),
    };
    s.finish();
    Ok(out)
}

/// Remote read and fetch-add of a word of side B's copy, each timed alone (one round
/// trip on the direct link each): side B only opens the page to remote access and waits
/// in `rx.wait` (its link side serves) until side A says it is done.
fn rma(s: &Side, a: &WorkerArgs, clock: &Clock) -> Result<WorkerOutput> {
    const DONE: usize = 128;
    let (rx, tx) = s.channel("rma", 4096, PP_HELLO)?;
    if !s.ping {
        let open = RxAttrs {
            remote_read: true,
            ..rx.attrs(0)?
        };
        rx.set_attrs(0, 4096, open)?;
        wait_for(&rx, DONE, 1, false, "the end of the remote accesses")?;
        return Ok(WorkerOutput::default());
    }
    let seg = s.c.open_segment("rma").context("segment rma")?;
    let rma = seg.rma().context("rma handle")?;
    // Side B opens its page after the handshake: wait for it.
    let deadline = Instant::now() + PEER_TIMEOUT;
    while let Err(e) = rma.get_u64(s.peer, 0) {
        ensure!(
            matches!(e, memchan::Error::RemoteReadOff { .. }) && Instant::now() < deadline,
            "remote read of side B: {e}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let timed = |op: &dyn Fn() -> memchan::Result<u64>| -> Result<Vec<f64>> {
        let mut v = Vec::with_capacity(a.iters as usize);
        for i in 0..a.warmup + a.iters {
            let t0 = ticks();
            std::hint::black_box(op()?);
            let t1 = ticks();
            if i >= a.warmup {
                v.push(clock.ns(t1.wrapping_sub(t0)));
            }
        }
        Ok(v)
    };
    let mut out = WorkerOutput::default();
    out.series
        .insert("get".into(), timed(&|| rma.get_u64(s.peer, 0))?);
    out.series
        .insert("fadd".into(), timed(&|| rma.fetch_add_u64(s.peer, 8, 1))?);
    ensure!(
        rma.get_u64(s.peer, 8)? == a.warmup + a.iters,
        "side B's word does not hold every fetch-add"
    );
    tx.write_u64(DONE, 1)?;
    s.c.ack()?;
    Ok(out)
}

/// Windows of N × 1 MiB `write`s into the data part of "bw", then the
/// window number into the flag; the receiver waits for the flag and
/// answers. Samples (ping side): ns per window.
fn bandwidth(s: &Side, a: &WorkerArgs, clock: &Clock) -> Result<WorkerOutput> {
    let n = a.hosts.window_mib;
    ensure!(n > 0, "--window-mib must be at least 1");
    let (rx, tx) = s.channel("bw", MIB + 4096, BW_HELLO)?;
    let src = PageBuf::new(MIB, 0x5a);
    let data = src.as_slice();
    let windows = a.warmup + a.iters;
    let mut v = Vec::with_capacity(a.iters as usize);
    for w in 1..=windows {
        if s.ping {
            let t0 = ticks();
            for _ in 0..n {
                tx.write(0, data).context("write 1 MiB")?;
            }
            tx.write_u64(BW_FLAG, w).context("write the flag")?;
            wait_for(&rx, BW_ANSWER, w, false, "the bandwidth receiver's answer")?;
            let t1 = ticks();
            if w > a.warmup {
                v.push(clock.ns(t1.wrapping_sub(t0)));
            }
        } else {
            wait_for(&rx, BW_FLAG, w, false, "the bandwidth sender's flag")?;
            tx.write_u64(BW_ANSWER, w).context("write the answer")?;
        }
    }
    Ok(if s.ping {
        WorkerOutput::one("window_ns", v)
    } else {
        WorkerOutput::default()
    })
}
