//! The generic ping-pong driver. Every one-way latency in the bench (the raw
//! cache line, TCP loopback, memchan polling and memchan notify) runs through
//! these two functions, so each is timed identically: one time-stamp read per
//! round trip, one-way = round trip / 2, after a warm-up.

use anyhow::{ensure, Result};

use super::timer::{ticks, Clock};
use super::turns::window_range;

/// One side of an 8-byte ping-pong.
pub trait Endpoint {
    /// Makes `seq` visible to the peer.
    fn send(&mut self, seq: u64) -> Result<()>;
    /// Returns once the peer's `seq` is visible here.
    fn wait(&mut self, seq: u64) -> Result<()>;
}

/// Closures as an endpoint: `Fns(|seq| send, |seq| wait)`.
pub struct Fns<S, W>(pub S, pub W);

impl<S, W> Endpoint for Fns<S, W>
where
    S: FnMut(u64) -> Result<()>,
    W: FnMut(u64) -> Result<()>,
{
    fn send(&mut self, seq: u64) -> Result<()> {
        (self.0)(seq)
    }
    fn wait(&mut self, seq: u64) -> Result<()> {
        (self.1)(seq)
    }
}

/// The initiating side: `warmup + iters` round trips with sequence numbers
/// 1, 2, …; returns `iters` one-way latencies in ns.
///
/// The counter is read once per round trip (the end of one is the start of the
/// next), so each sample carries exactly one read's cost.
pub fn ping(ep: &mut impl Endpoint, warmup: u64, iters: u64, clock: &Clock) -> Result<Vec<f64>> {
    ensure!(iters > 0, "ping-pong needs at least one iteration");
    let mut out = Vec::with_capacity(iters as usize);
    timed(ep, 1..=warmup + iters, warmup, &mut out, clock)?;
    Ok(out)
}

/// Round trips `seqs` on `ep`, pushing the one-way latency of those past `warmup`
/// to `out`: one counter read per round trip (the end of one starts the next).
/// Generic, so that every figure's endpoint calls are direct (no virtual call
/// inside the timed loop).
fn timed<E: Endpoint + ?Sized>(
    ep: &mut E,
    seqs: std::ops::RangeInclusive<u64>,
    warmup: u64,
    out: &mut Vec<f64>,
    clock: &Clock,
) -> Result<()> {
    let mut prev = ticks();
    for seq in seqs {
        ep.send(seq)?;
        ep.wait(seq)?;
        let now = ticks();
        if seq > warmup {
            out.push(clock.ns(now.wrapping_sub(prev)) / 2.0);
        }
        prev = now;
    }
    Ok(())
}

/// The answering side: waits for each `seq` and sends it back.
pub fn pong(ep: &mut impl Endpoint, warmup: u64, iters: u64) -> Result<()> {
    for seq in 1..=warmup + iters {
        ep.wait(seq)?;
        ep.send(seq)?;
    }
    Ok(())
}

/// Where a pair's windows begin (`true`) and end (`false`): the bench's turns
/// (`turns::Window`), which let a peer run between them.
pub type Turn<'a> = &'a mut dyn FnMut(bool) -> Result<()>;

/// Two ping-pongs over one pair of processes, `a` and `b`, in alternating blocks of
/// `block` round trips (a first): each runs `warmup + iters` round trips with its own
/// sequence numbers, and returns its `iters` one-way latencies. Interleaved so that
/// both see the same machine: on a VM the latency between two cores moves from one
/// second to the next (the host moves the virtual CPUs), so two ping-pongs run one
/// after the other compare different machines.
///
/// The round trips are split into `windows` windows (the warm-up in the first), each
/// inside `turn(true)` .. `turn(false)`; the sequence numbers run on across them, and
/// the time between windows is in no sample.
#[allow(clippy::too_many_arguments)]
pub fn ping_pair(
    a: &mut impl Endpoint,
    b: &mut impl Endpoint,
    block: u64,
    warmup: u64,
    iters: u64,
    clock: &Clock,
    windows: usize,
    turn: Turn<'_>,
) -> Result<(Vec<f64>, Vec<f64>)> {
    ensure!(
        iters > 0 && block > 0 && windows > 0,
        "ping-pong needs at least one iteration"
    );
    let total = warmup + iters;
    let mut out = (
        Vec::with_capacity(iters as usize),
        Vec::with_capacity(iters as usize),
    );
    for w in 0..windows {
        let seqs = window_range(total, w, windows);
        turn(true)?;
        let mut first = seqs.start + 1;
        while first <= seqs.end {
            let last = (first + block - 1).min(seqs.end);
            timed(a, first..=last, warmup, &mut out.0, clock)?;
            timed(b, first..=last, warmup, &mut out.1, clock)?;
            first = last + 1;
        }
        turn(false)?;
    }
    Ok(out)
}

/// The answering side of [`ping_pair`], in the same windows.
pub fn pong_pair(
    a: &mut impl Endpoint,
    b: &mut impl Endpoint,
    block: u64,
    warmup: u64,
    iters: u64,
    windows: usize,
    turn: Turn<'_>,
) -> Result<()> {
    ensure!(
        block > 0 && windows > 0,
        "ping-pong blocks need at least one round trip"
    );
    let total = warmup + iters;
    for w in 0..windows {
        let seqs = window_range(total, w, windows);
        turn(true)?;
        let mut first = seqs.start + 1;
        while first <= seqs.end {
            let last = (first + block - 1).min(seqs.end);
            for ep in [&mut *a as &mut dyn Endpoint, &mut *b] {
                for seq in first..=last {
                    ep.wait(seq)?;
                    ep.send(seq)?;
                }
            }
            first = last + 1;
        }
        turn(false)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn driver_counts_and_orders() {
        let last = Cell::new(0u64);
        let mut ep = Fns(
            |s| {
                assert_eq!(s, last.get() + 1);
                last.set(s);
                Ok(())
            },
            |s| {
                assert_eq!(s, last.get());
                Ok(())
            },
        );
        let clock = Clock { ghz: 1.0 };
        let v = ping(&mut ep, 3, 10, &clock).unwrap();
        assert_eq!(v.len(), 10);
        assert_eq!(last.get(), 13);
    }

    #[test]
    fn pair_driver_alternates_blocks_and_counts_each_side() {
        // Each side's sequence numbers run 1, 2, ... in order; the log shows which
        // side ran each round trip.
        let cell = std::cell::RefCell::new(Vec::new());
        let log = &cell;
        let side = |name: char| {
            let last = Cell::new(0u64);
            Fns(
                move |s: u64| {
                    assert_eq!(s, last.get() + 1);
                    last.set(s);
                    Ok(())
                },
                move |s: u64| {
                    log.borrow_mut().push((name, s));
                    Ok(())
                },
            )
        };
        let (mut a, mut b) = (side('a'), side('b'));
        let clock = Clock { ghz: 1.0 };
        let (va, vb) = ping_pair(&mut a, &mut b, 4, 2, 7, &clock, 1, &mut |_| Ok(())).unwrap();
        assert_eq!((va.len(), vb.len()), (7, 7));
        let log = cell.into_inner();
        assert_eq!(log.len(), 18);
        let names: String = log.iter().map(|e| e.0).collect();
        assert_eq!(names, "aaaabbbbaaaabbbbab");
        assert_eq!(log.last(), Some(&('b', 9)));
    }

    #[test]
    fn a_pair_in_windows_runs_on_its_sequence_between_the_turns() {
        let log = std::cell::RefCell::new(Vec::new());
        let side = |name: char| {
            let log = &log;
            Fns(
                |_s: u64| Ok(()),
                move |s: u64| {
                    log.borrow_mut().push(format!("{name}{s}"));
                    Ok(())
                },
            )
        };
        let (mut a, mut b) = (side('a'), side('b'));
        let mut turn = |begin: bool| {
            log.borrow_mut()
                .push(if begin { "[" } else { "]" }.to_string());
            Ok(())
        };
        let clock = Clock { ghz: 1.0 };
        // 1 warm-up + 4 round trips each in 2 windows, blocks of 2.
        let (va, vb) = ping_pair(&mut a, &mut b, 2, 1, 4, &clock, 2, &mut turn).unwrap();
        assert_eq!((va.len(), vb.len()), (4, 4));
        assert_eq!(
            log.into_inner().join(" "),
            "[ a1 a2 b1 b2 ] [ a3 a4 b3 b4 a5 b5 ]"
        );
    }
}
