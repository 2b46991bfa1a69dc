//! Who watches whom: each node watches only its next live members on the ring of
//! slots (`service.rs`), so a process holds pidfds for the few processes its nodes
//! watch, whatever the cluster's size, and a kill -9 is still seen when it takes out
//! a member's watchers with it. Real processes (this test binary run again,
//! [`worker`]); waits poll `/proc` or the membership events, under a hang guard that
//! is not a bound under test.

use crate::Node;
use memchan_core::transport::Transport;
use memchan_core::{Config, EventKind, NodeId};
use memchan_worker::{Spawn, Worker};
use std::collections::BTreeSet;
use std::io::Write;
use std::time::{Duration, Instant};

const GUARD: Duration = Duration::from_secs(120);

fn cfg() -> Config {
    Config::default()
        .without_hub()
        .with_heartbeat(Duration::from_millis(20))
        .with_failure_timeout(Duration::from_millis(200))
}

/// The pidfds process `pid` holds.
fn pidfds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("read the worker's fds")
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy() == "anon_inode:[pidfd]")
        })
        .count()
}

/// Polls `cond` until it holds, under the hang guard.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < GUARD, "{what}: not within {GUARD:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A worker holding `k` nodes of `cluster` until told to leave (this test binary,
/// running [`worker`]), and their ids.
fn spawn(cluster: &str, k: usize) -> (Worker, Vec<u16>) {
    let args = [cluster.to_string(), k.to_string()];
    let mut w = Spawn::new("holder", &args)
        .entry("watchers::worker")
        .spawn();
    let ids = w
        .expect_line("JOINED", GUARD)
        .split_whitespace()
        .map(|i| i.parse().expect("node id"))
        .collect();
    (w, ids)
}

#[test]
#[ignore = "entry point of the worker processes of the watcher tests"]
fn worker() {
    let a = memchan_worker::args();
    let (cluster, k) = (&a[0], &a[1]);
    let nodes: Vec<Node> = (0..k.parse::<usize>().expect("k"))
        .map(|_| Node::join(cluster, &cfg()).expect("join"))
        .collect();
    let ids: Vec<String> = nodes.iter().map(|n| n.node_id().0.to_string()).collect();
    println!("JOINED {}", ids.join(" "));
    std::io::stdout().flush().expect("flush");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    for n in nodes {
        n.leave();
    }
}

#[test]
fn a_member_holds_pidfds_of_its_watched_members_only_and_a_chain_of_kills_is_seen() {
    let cluster = format!("watchers-chain-{}", std::process::id());
    let me = Node::join(&cluster, &cfg()).expect("join");
    let mut workers: Vec<(Worker, Vec<u16>)> = (0..11).map(|_| spawn(&cluster, 1)).collect();
    me.wait_for_members(12, GUARD).expect("12 members");
    // Each worker's node watches two members, in two other processes: two pidfds,
    // never one per member (11).
    for (w, _) in &workers {
        wait_until("a worker's pidfds of its watched members", || {
            let n = pidfds(w.pid());
            assert!(n <= 2, "a worker holds {n} pidfds in a 12-node cluster");
            n == 2
        });
    }
    // Three members consecutive in slot order: the last one's two watchers die with
    // it, so only a watcher that moves on past them sees it.
    let mut by_id: Vec<usize> = (0..workers.len()).collect();
    by_id.sort_by_key(|&i| workers[i].1[0]);
    let victims: Vec<usize> = by_id[3..6].to_vec();
    let mut dead: BTreeSet<NodeId> = victims.iter().map(|&i| NodeId(workers[i].1[0])).collect();
    for &i in &victims {
        workers[i].0.kill9();
    }
    let start = Instant::now();
    while !dead.is_empty() {
        assert!(start.elapsed() < GUARD, "never saw {dead:?} fail");
        if let Some(e) = me.next_event(Some(Duration::from_millis(100))) {
            if e.kind == EventKind::Failed {
                dead.remove(&e.node);
            }
        }
    }
    assert_eq!(me.members().len(), 9);
    let mut victims = victims;
    victims.sort_unstable_by(|a, b| b.cmp(a));
    for i in victims {
        drop(workers.remove(i));
    }
    for (mut w, _) in workers {
        w.finish(GUARD);
    }
    me.leave();
}

#[test]
fn k_nodes_in_one_process_share_one_pidfd_per_watched_process() {
    let cluster = format!("watchers-share-{}", std::process::id());
    let (mut a, _) = spawn(&cluster, 6);
    let (mut b, _) = spawn(&cluster, 6);
    // A's nodes watch nodes of A and of B, B's of B and of A: one pidfd per process,
    // shared by the six nodes (each node alone would hold two, one per member
    // watched).
    for w in [&a, &b] {
        wait_until("a process's shared pidfds", || {
            let n = pidfds(w.pid());
            assert!(n <= 2, "six nodes in one process hold {n} pidfds");
            n == 2
        });
    }
    a.finish(GUARD);
    b.finish(GUARD);
}
