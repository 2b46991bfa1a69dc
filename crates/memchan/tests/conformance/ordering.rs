//! Ordering rules 1 and 2 among concurrent senders in separate processes: every node
//! sends a seeded random mix of point-to-point, multicast and broadcast writes (some
//! with local copy) while every node reads its rx mapping round-robin and logs what
//! it sees; the checker in `memchan_testkit::check` then proves both rules and that no
//! write was lost, duplicated, corrupted or misdelivered.

use memchan::{Cluster, Dest, GroupId, TxAttrs};
use memchan_core::NodeId;
use memchan_testkit::check::{
    check, Layout, Observation, ReadRecorder, ReceiverLog, Schedule, ScheduleConfig,
};
use memchan_testkit::harness::{field, unique_cluster, Transport, Worker};
use memchan_testkit::on_every_transport;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const OWNED_WORDS: u32 = 6;
const SHARED_WORDS: u32 = 6;

/// The file whose creation releases workers started with `hold` (see [`worker`]).
pub const GO_FILE: &str = "go";

fn config(nodes: u16, writes: u64, seed: u64) -> ScheduleConfig {
    let senders = (0..nodes).map(NodeId).collect();
    ScheduleConfig::new(
        seed,
        Layout::new(nodes, senders, OWNED_WORDS, SHARED_WORDS),
        writes,
    )
}

/// Worker: `cluster nodes writes_per_sender seed out_dir [hold] [ft=MS] [replay=BYTES]`.
/// With `hold` it stays a member after printing DONE until `out_dir/go` exists, so the
/// test can read the hub's counters before anyone leaves; `ft=MS` sets its failure
/// timeout (how long the hub may stay silent), `replay=BYTES` its replay memory.
pub fn worker(a: &[String]) {
    let (name, nodes, writes, seed, out) = (
        &a[0],
        a[1].parse::<u16>().unwrap(),
        a[2].parse::<u64>().unwrap(),
        a[3].parse::<u64>().unwrap(),
        &a[4],
    );
    let hold = a[5..].iter().any(|o| o == "hold");
    let mut cfg = memchan::Config::default();
    if let Some(ms) = a[5..].iter().find_map(|o| o.strip_prefix("ft=")) {
        cfg.failure_timeout = Duration::from_millis(ms.parse().unwrap());
    }
    if let Some(bytes) = a[5..].iter().find_map(|o| o.strip_prefix("replay=")) {
        cfg.replay_limit = bytes.parse().unwrap();
    }
    let c = Cluster::join_with(name, cfg).unwrap();
    c.wait_for_members(usize::from(nodes), Duration::from_secs(30))
        .unwrap();
    let me = c.node_id();
    let cfg = config(nodes, writes, seed);
    let layout = &cfg.layout;
    if me == NodeId(0) {
        for (g, set) in cfg.groups.iter().enumerate() {
            c.create_group(&format!("g{g}"), &set.iter().collect::<Vec<_>>())
                .unwrap();
        }
    }
    let seg = c
        .segment("ord", layout.total_words() as usize * 8, 0o600)
        .unwrap();
    let rx = seg.map_rx().unwrap();
    c.barrier().unwrap(); // groups exist and every node maps rx before any write
    let gids: Vec<GroupId> = (0..cfg.groups.len())
        .map(|g| c.group(&format!("g{g}")).unwrap())
        .collect();
    let done = AtomicBool::new(false);
    let mut rec = ReadRecorder::new(me, layout);
    /// Ends the readers' loop however the writer ends: a writer that panics must
    /// make the worker exit (and fail), not leave it reading forever.
    struct SetOnDrop<'a>(&'a AtomicBool);
    impl Drop for SetOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            let _done = SetOnDrop(&done);
            let mut maps = HashMap::new();
            for (i, w) in Schedule::generate(&cfg, me).into_iter().enumerate() {
                if i % 16 == 0 {
                    // Two cores, ten threads: let the readers run while writes are in
                    // flight, or there is little interleaving left to check.
                    std::thread::yield_now();
                }
                let to = match w.to {
                    Dest::Group(g) => Dest::Group(gids[g.index()]),
                    other => other,
                };
                let tx = maps.entry((to, w.local_copy)).or_insert_with(|| {
                    let attrs = TxAttrs {
                        local_copy: w.local_copy,
                        ..TxAttrs::default()
                    };
                    seg.map_tx(to, attrs).unwrap()
                });
                tx.write_u64(8 * w.word as usize, w.value(me)).unwrap();
            }
            c.ack().unwrap();
            c.barrier().unwrap(); // every sender's writes are applied everywhere
        });
        while !done.load(Ordering::Acquire) {
            for _ in 0..64 {
                let word = rec.next_word();
                rec.record(rx.load_u64(8 * word as usize).unwrap());
            }
        }
    });
    let finals = (0..layout.total_words())
        .map(|w| rx.load_u64(8 * w as usize).unwrap())
        .collect();
    let log = rec.finish(finals);
    let path = format!("{out}/node{}.log", me.0);
    std::fs::write(&path, encode_log(&log)).unwrap();
    println!(
        "DONE node={} observations={} reads={}",
        me.0,
        log.observations.len(),
        log.reads_done
    );
    if hold {
        let go = std::path::Path::new(out).join(GO_FILE);
        let deadline = std::time::Instant::now() + Duration::from_secs(240);
        while !go.exists() {
            assert!(std::time::Instant::now() < deadline, "never released");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    c.barrier().unwrap();
}

/// Arguments of an ordering worker (see [`worker`]); `opts` as `["hold", "ft=3000"]`.
pub fn worker_args(
    name: &str,
    nodes: u16,
    writes: u64,
    seed: u64,
    dir: &std::path::Path,
    opts: &[&str],
) -> Vec<String> {
    let mut a = vec![
        name.to_string(),
        nodes.to_string(),
        writes.to_string(),
        seed.to_string(),
        dir.display().to_string(),
    ];
    a.extend(opts.iter().map(|o| o.to_string()));
    a
}

/// Reads the logs the workers of a run wrote to `dir` and checks them against the
/// schedules: the randomized checker's report.
pub fn check_run(
    nodes: u16,
    writes: u64,
    seed: u64,
    dir: &std::path::Path,
) -> memchan_testkit::check::Report {
    let logs: Vec<ReceiverLog> = (0..nodes)
        .map(|n| decode_log(&std::fs::read_to_string(dir.join(format!("node{n}.log"))).unwrap()))
        .collect();
    let cfg = config(nodes, writes, seed);
    let sent = Schedule::generate_all(&cfg);
    check(&cfg.layout, &sent, &logs)
}

fn encode_log(log: &ReceiverLog) -> String {
    let mut s = format!("{} {}\n", log.node.0, log.reads_done);
    for v in &log.final_values {
        write!(s, "{v} ").unwrap();
    }
    s.push('\n');
    for o in &log.observations {
        writeln!(s, "{} {} {}", o.read_index, o.word, o.value).unwrap();
    }
    s
}

fn decode_log(text: &str) -> ReceiverLog {
    let mut lines = text.lines();
    let head: Vec<u64> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let final_values = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let observations = lines
        .map(|l| {
            let v: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            Observation {
                read_index: v[0],
                word: v[1] as u32,
                value: v[2],
            }
        })
        .collect();
    ReceiverLog {
        node: NodeId(head[0] as u16),
        observations,
        final_values,
        reads_done: head[1],
    }
}

fn ordering_rules_hold_among_concurrent_sender_processes(t: &Transport) {
    // 5 processes, all sending and all receiving: 5 x 20,000 = 100,000 writes.
    let (nodes, writes, seed) = (5u16, 20_000u64, 0x5EED_0001);
    let name = unique_cluster("order");
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let args = worker_args(&name, nodes, writes, seed, &dir, &[]);
    let mut ws: Vec<Worker> = (0..nodes).map(|_| t.spawn("order", &args)).collect();
    let mut seen = Vec::new();
    for w in &mut ws {
        let line = w.expect_line("DONE", Duration::from_secs(300));
        seen.push(field(&line, "observations"));
    }
    for w in &mut ws {
        w.finish(Duration::from_secs(30));
    }
    let report = check_run(nodes, writes, seed, &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    println!("{report}");
    assert_eq!(report.writes_checked, 100_000);
    assert_eq!(report.receivers_checked, usize::from(nodes));
    report.assert_ok();
    // Receivers really read while writes were in flight (a changed value is logged
    // once per change seen, so these count interleavings actually checked).
    assert!(
        seen.iter().all(|&n| n > 1000),
        "observations per receiver: {seen:?}"
    );
}
on_every_transport!(ordering_rules_hold_among_concurrent_sender_processes);
