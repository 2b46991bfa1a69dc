//! The conformance suite: the ordering, ack, lock, barrier, notify and membership
//! behaviour of docs/spec.md, written once against the public `Cluster` API and run with
//! real processes. Every transport runs this same suite; `multihost` runs the hub
//! transport across network namespaces (hosts, a hub, a fault-injecting relay).
//!
//! The tooling lives in `memchan-testkit`: `harness` (worker processes, the transport
//! list `every_transport!`, `on_every_transport!`) and `netns` (the topologies).

mod clock;
mod contract;
mod deposit;
mod lock;
mod membership;
mod multihost;
mod no_notify;
mod ordering;
mod peer_memory;
mod rail;
mod remap;
mod rma;
mod rx_remap;
mod sync_ops;

use memchan_testkit::harness::{args, log_to_stderr};

/// Worker entry: the suite re-executes this binary with `MEMCHAN_ROLE` set. Ignored so
/// it never runs as a test of its own.
#[test]
#[ignore = "entry point for worker processes"]
fn worker() {
    // The hub and relay roles log through `tracing`; the tests read their stderr.
    log_to_stderr();
    // A worker whose test died must not outlive it for long.
    std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_secs(300));
        eprintln!("worker watchdog: still running after 300 s, exiting");
        std::process::exit(3);
    });
    let role = std::env::var("MEMCHAN_ROLE").expect("MEMCHAN_ROLE");
    let a = args();
    match role.as_str() {
        "lock" => lock::worker(&a),
        "member" => membership::worker(&a),
        "order" => ordering::worker(&a),
        "notify" => sync_ops::notify_worker(&a),
        "barrier" => sync_ops::barrier_worker(&a),
        "barrier-loop" => sync_ops::barrier_loop_worker(&a),
        "barrier-late" => sync_ops::barrier_late_worker(&a),
        "tear" => sync_ops::tear_worker(&a),
        "uid" => sync_ops::uid_worker(&a),
        "dep-strided" => deposit::strided_worker(&a),
        "dep-signal" => deposit::signal_worker(&a),
        "dep-cond" => deposit::cond_worker(&a),
        "dep-idle" => deposit::idle_worker(&a),
        "rma-target" => rma::target_worker(&a),
        "rma-hammer" => rma::hammer_worker(&a),
        "rma-uid" => rma::uid_worker(&a),
        "rma-owner" => rma::owner_worker(&a),
        "rma-peer" => peer_memory::worker(&a),
        "hub" => multihost::hub_worker(&a),
        "railhub" => rail::hub_worker(&a),
        "railcount" => rail::count_worker(&a),
        "relay" => multihost::relay_worker(&a),
        "mh" => multihost::node_worker(&a),
        "clock" => clock::worker(&a),
        "rx-remap" => rx_remap::worker(&a),
        "no-notify" => no_notify::worker(&a),
        other => panic!("unknown role {other}"),
    }
}
