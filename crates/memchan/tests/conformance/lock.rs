//! The cluster lock of seed 000 under contention from separate processes, and with its
//! holder killed inside the critical section.

use memchan::{Cluster, Dest, EventKind, TxAttrs};
use memchan_testkit::harness::{field, unique_cluster, Transport, Worker};
use memchan_testkit::on_every_transport;
use std::time::Duration;

/// Worker: `cluster nodes iterations victim_at` (victim_at 0 = never).
pub fn worker(a: &[String]) {
    let (name, nodes, iters, victim_at): (&str, usize, u64, u64) = (
        &a[0],
        a[1].parse().unwrap(),
        a[2].parse().unwrap(),
        a[3].parse().unwrap(),
    );
    let c = Cluster::join(name).unwrap();
    c.wait_for_members(nodes, Duration::from_secs(20)).unwrap();
    let me = c.node_id().index();
    // word 0: the shared counter; word 1 + n: node n's completed increments.
    let seg = c.segment("counter", 4096, 0o600).unwrap();
    let rx = seg.map_rx().unwrap();
    let tx = seg
        .map_tx(
            Dest::Broadcast,
            TxAttrs {
                local_copy: true,
                ..TxAttrs::default()
            },
        )
        .unwrap();
    let lock = c.lock("L").unwrap();
    c.barrier().unwrap();
    println!("READY node={me}");
    for i in 0..iters {
        let g = lock.acquire().unwrap();
        if victim_at != 0 && i == victim_at {
            println!("INCS node={me} done={i}");
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        let v = rx.load_u64(0).unwrap();
        tx.write_u64(0, v + 1).unwrap();
        tx.write_u64(8 * (1 + me), i + 1).unwrap();
        g.release().unwrap();
    }
    c.barrier().unwrap();
    let total = rx.load_u64(0).unwrap();
    let mut sum = 0;
    for n in 0..nodes + 1 {
        sum += rx.load_u64(8 * (1 + n)).unwrap();
    }
    let failed_seen = std::iter::from_fn(|| c.next_event(Some(Duration::ZERO)))
        .filter(|e| e.kind == EventKind::Failed)
        .count();
    println!("DONE node={me} counter={total} sum={sum} failed_seen={failed_seen}");
    c.barrier().unwrap();
}

fn lock_never_loses_an_increment(t: &Transport) {
    // 4 processes x 25,000 acquisitions = 100,000, counter kept by broadcast writes.
    let name = unique_cluster("lock");
    let mut ws: Vec<Worker> = (0..4)
        .map(|_| {
            t.spawn(
                "lock",
                &[name.clone(), "4".into(), "25000".into(), "0".into()],
            )
        })
        .collect();
    for w in &mut ws {
        // Every process sees the shared counter at the total, and the per-node counts
        // (each written outside any other node's word) add up to it as well.
        let line = w.expect_line("DONE", Duration::from_secs(300));
        assert_eq!(field(&line, "counter"), 100_000, "{line}");
        assert_eq!(field(&line, "sum"), 100_000, "{line}");
    }
    for w in &mut ws {
        w.finish(Duration::from_secs(30));
    }
}
on_every_transport!(lock_never_loses_an_increment);

fn lock_holder_killed_in_critical_section_is_released(t: &Transport) {
    let name = unique_cluster("lockkill");
    let victim_at = 2000u64;
    let mut victim = t.spawn(
        "lock",
        &[
            name.clone(),
            "4".into(),
            "100000".into(),
            victim_at.to_string(),
        ],
    );
    let mut ws: Vec<Worker> = (0..3)
        .map(|_| {
            t.spawn(
                "lock",
                &[name.clone(), "4".into(), "10000".into(), "0".into()],
            )
        })
        .collect();
    let incs = victim.expect_line("INCS", Duration::from_secs(120));
    assert_eq!(field(&incs, "done"), victim_at);
    victim.kill9();
    for w in &mut ws {
        let line = w.expect_line("DONE", Duration::from_secs(300));
        // Every completed critical section counted once: the survivors' 30,000 plus the
        // victim's 2,000 before it died holding the lock.
        assert_eq!(field(&line, "counter"), 30_000 + victim_at, "{line}");
        assert_eq!(field(&line, "sum"), 30_000 + victim_at, "{line}");
        assert!(field(&line, "failed_seen") >= 1, "{line}");
    }
    for w in &mut ws {
        w.finish(Duration::from_secs(30));
    }
}
on_every_transport!(lock_holder_killed_in_critical_section_is_released);
