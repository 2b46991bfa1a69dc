//! The generic ping-pong driver. Every one-way latency in the bench (the raw
//! cache line, TCP loopback, memchan polling and memchan notify) runs through
//! these two functions, so each is timed identically: one time-stamp read per
//! round trip, one-way = round trip / 2, after a warm-up.

use anyhow::{ensure, Result};

use super::clock::{ticks, Clock};

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
    let total = warmup + iters;
    let mut prev = ticks();
    for seq in 1..=total {
        ep.send(seq)?;
        ep.wait(seq)?;
        let now = ticks();
        if seq > warmup {
            out.push(clock.ns(now.wrapping_sub(prev)) / 2.0);
        }
        prev = now;
    }
    Ok(out)
}

/// The answering side: waits for each `seq` and sends it back.
pub fn pong(ep: &mut impl Endpoint, warmup: u64, iters: u64) -> Result<()> {
    for seq in 1..=warmup + iters {
        ep.wait(seq)?;
        ep.send(seq)?;
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
}
