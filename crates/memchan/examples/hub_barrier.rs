//! Times barriers and acks: run two copies with `MEMCHAN_HUB` naming a `memchan hub`
//! (`hub_barrier CLUSTER [N]`); each prints the median and spread of N calls.

use std::time::Instant;

fn main() -> memchan::Result<()> {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "hub-barrier".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let c = memchan::Cluster::join(&name)?;
    c.wait_for_members(2, std::time::Duration::from_secs(30))?;
    c.barrier()?;
    for what in ["barrier", "ack"] {
        let mut t = Vec::with_capacity(n);
        for _ in 0..n {
            let s = Instant::now();
            match what {
                "barrier" => c.barrier()?,
                _ => c.ack()?,
            }
            t.push(s.elapsed().as_nanos() as u64);
        }
        t.sort_unstable();
        let us = |q: usize| t[(t.len() - 1) * q / 100] as f64 / 1e3;
        println!(
            "node {} {what}: p10 {:.1} us, median {:.1} us, p90 {:.1} us, max {:.1} us",
            c.node_id().0,
            us(10),
            us(50),
            us(90),
            us(100)
        );
        c.barrier()?;
    }
    Ok(())
}
