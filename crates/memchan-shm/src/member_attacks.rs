//! Attacks by a member of another uid. A root cluster is shared with every local user
//! (`shm_mode` 0o666), so a process of uid 65534 can join it and write any word of its
//! control block; each test runs that attacker as a real process of uid 65534 (this
//! test binary, re-executed, which drops root before it does anything) against root's
//! nodes in the test process, and checks that segment permissions hold: the attacker
//! never maps, receives or reads a root 0600 segment, and never gets bytes into it.

use crate::control::{node_state, seg_state, Control, SegEntry};
use crate::local::{journal_name, rx_name};
use crate::record::JournalObject;
use crate::rx::RxObject;
use crate::Node;
use memchan_core::journal;
use memchan_core::sync::{AtomicU32, Ordering};
use memchan_core::transport::{SegmentOps, Transport};
use memchan_core::{Config, Dest, Error, NodeId, NodeSet, RxAttrs, TxAttrs};
use memchan_worker::{Spawn, Worker};
use std::process::Command;
use std::time::{Duration, Instant};

/// The attacker's uid and gid.
const ATTACKER: u32 = 65534;
/// How long any one step may take before the test fails instead of hanging.
const HANG_GUARD: Duration = Duration::from_secs(60);
/// What root's nodes write; no name in the control block contains it.
const SECRET: &[u8] = b"TOPSECRET";

fn cluster(tag: &str) -> String {
    format!("attack-{tag}-{}", std::process::id())
}

/// A cluster every local user may join, with a fast failure detector.
fn shared() -> Config {
    Config::default()
        .with_shm_mode(0o666)
        .with_heartbeat(Duration::from_millis(20))
        .with_failure_timeout(Duration::from_millis(200))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The value of `key=` in a worker's line.
fn field(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in `{line}`"))
}

/// Files of `cluster` left in /dev/shm.
fn left_in_shm(cluster: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("memchan.{cluster}.")))
        .collect()
}

/// The index and generation of the live segment `name`.
fn find_seg(node: &Node, name: &str) -> (usize, u32) {
    let c = node.inner.local.ctl();
    let i = c
        .segs
        .iter()
        .position(|e| {
            e.state.load(Ordering::Acquire) == seg_state::LIVE
                && crate::control::load_name(&e.name) == name
        })
        .unwrap_or_else(|| panic!("no segment `{name}`"));
    (i, c.segs[i].generation.load(Ordering::Acquire))
}

/// Polls `done` until it holds; fails the test after [`HANG_GUARD`].
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < HANG_GUARD, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The worker `role` in `cluster` with `args` (one word): this test binary, running
/// [`worker`].
fn spawn(role: &str, cluster: &str, args: &str) -> Worker {
    let args = [cluster.to_string(), args.to_string()];
    Spawn::new(role, &args)
        .entry("member_attacks::worker")
        .spawn()
}

/// The worker's side: waits for `line` on stdin.
fn wait_for(line: &str) {
    let mut l = String::new();
    loop {
        l.clear();
        assert!(
            std::io::stdin().read_line(&mut l).unwrap() > 0,
            "test gone before `{line}`"
        );
        if l.trim() == line {
            return;
        }
    }
}

/// Becomes uid and gid 65534 with no supplementary groups, for good.
fn drop_root() {
    // SAFETY: plain setgroups/setgid/setuid calls before the worker does anything
    // else; glibc applies them to every thread of the process.
    unsafe {
        assert_eq!(libc::setgroups(0, std::ptr::null()), 0);
        assert_eq!(libc::setgid(ATTACKER), 0);
        assert_eq!(libc::setuid(ATTACKER), 0);
    }
    assert_eq!(rustix::process::geteuid().as_raw(), ATTACKER);
}

/// Worker entry; ignored so it never runs as a test of its own.
#[test]
#[ignore = "entry point of the worker processes of the member attack tests"]
fn worker() {
    let role = memchan_worker::role();
    let mut a = memchan_worker::args().into_iter();
    let name = a.next().expect("cluster");
    let args = a.next().unwrap_or_default();
    if role != "victim" {
        drop_root();
    }
    if role == "forge-kill" {
        return forge_kill(&name, &args);
    }
    let node = Node::join(&name, &shared()).unwrap();
    println!("JOINED {}", node.node_id().0);
    match role.as_str() {
        "forge-perm" => forge_perm(&node),
        "scan" => scan(&name),
        "forge-journal" => forge_journal(&node, &args),
        "forge-rx" => forge_rx(&node, &args),
        "regen" => regen(&node),
        "victim" => victim(&node),
        "forge-lock" => forge_lock(&node),
        "forge-slot" => forge_slot(&node, &args),
        other => panic!("unknown role {other}"),
    }
}

/// The highest FREE node slot of the control block `c`.
fn last_free_slot(c: &Control) -> usize {
    (0..c.nodes.len())
        .rev()
        .find(|&n| c.nodes[n].state.load(Ordering::Acquire) == node_state::FREE)
        .unwrap()
}

/// A pid that names no process (a child that has exited and been reaped).
fn dead_pid() -> u32 {
    let mut ch = Command::new("true").spawn().unwrap();
    let pid = ch.id();
    ch.wait().unwrap();
    pid
}

/// Fills slot `f` as a fake node: pid word `pid`, incarnation `inc`, stale heartbeat.
fn fake_slot(c: &Control, f: usize, pid: u32, inc: u64) {
    let s = &c.nodes[f];
    s.pid.store(pid, Ordering::Relaxed);
    s.incarnation.store(inc, Ordering::Relaxed);
    s.heartbeat_ns.store(0, Ordering::Relaxed);
}

/// Takes the order point as the fake node in slot `f` once it is free, then marks the
/// slot ALIVE.
fn hold_order_point(c: &Control, f: usize) {
    let word = &c.order.word;
    loop {
        let w = word.load(Ordering::Acquire);
        if w & 0xFFFF == 0
            && word
                .compare_exchange(w, w | (f as u64 + 1), Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            break;
        }
        std::thread::yield_now();
    }
    c.nodes[f].state.store(node_state::ALIVE, Ordering::Release);
}

/// Attack c2: rewrite the segment entry's words where owner, group and mode could be
/// kept (everything between `flags` and `size`, the flags included) to 0o666, then map
/// the segment; try to change the permission object itself; report what was read.
fn forge_perm(node: &Node) {
    let (i, gen) = find_seg(node, "secret");
    let e: &SegEntry = &node.inner.local.ctl().segs[i];
    let base = e as *const SegEntry as *const u8;
    for off in
        (std::mem::offset_of!(SegEntry, flags)..std::mem::offset_of!(SegEntry, size)).step_by(4)
    {
        // SAFETY: inside the mapped entry, 4-aligned (repr(C) u32 fields and padding
        // before a u64); shared memory is written atomically.
        unsafe { (*(base.add(off) as *const AtomicU32)).store(0o666, Ordering::Relaxed) };
    }
    let seg = node.open_segment("secret").unwrap();
    let rx = seg.map_rx_with(RxAttrs::default());
    let rx_denied = matches!(rx, Err(Error::PermissionDenied { .. }));
    let tx_denied = matches!(
        seg.map_tx(Dest::Broadcast, TxAttrs::default()),
        Err(Error::PermissionDenied { .. })
    );
    let perm = crate::local::perm_name(&node.inner.local.cluster, i as u32, gen);
    let perm = format!("/dev/shm/{perm}");
    use std::os::unix::fs::PermissionsExt;
    let chmod_denied = std::fs::set_permissions(&perm, std::fs::Permissions::from_mode(0o666))
        .is_err()
        && std::fs::OpenOptions::new().read(true).open(&perm).is_err();
    println!(
        "MAP rx_denied={} tx_denied={} chmod_denied={}",
        rx_denied as u8, tx_denied as u8, chmod_denied as u8
    );
    println!("READY 1");
    wait_for("CHECK");
    let mut leak = false;
    if let Ok(rx) = &rx {
        let mut buf = vec![0u8; rx.len()];
        rx.read(0, &mut buf).unwrap();
        leak = contains(&buf, SECRET);
    }
    println!("LEAK found={}", leak as u8);
}

/// Attack a3: read every file of the cluster this uid can open, the control block
/// first, and look for root's payload.
fn scan(name: &str) {
    let (mut opened, mut refused, mut found) = (0, 0, 0);
    for e in std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok())
    {
        let f = e.file_name().to_string_lossy().into_owned();
        if !f.starts_with(&format!("memchan.{name}.")) {
            continue;
        }
        match std::fs::read(e.path()) {
            Ok(bytes) => {
                opened += 1;
                if contains(&bytes, SECRET) {
                    println!("FOUND {f}");
                    found += 1;
                }
            }
            Err(_) => refused += 1,
        }
    }
    println!("SCAN found={found} opened={opened} refused={refused}");
}

/// Attack c3: a fake node in a free slot, whose pid names no process, holding the
/// order point, with a journal record (in a journal object of this uid) that writes
/// `INJECTED` at offset 128 of the segment named in `args`, for every node that maps
/// it. Done once per segment named on stdin (`NEXT <segment>`), after the first.
fn forge_journal(node: &Node, first: &str) {
    let mut target = first.to_string();
    for round in 0.. {
        let (i, gen) = find_seg(node, &target);
        let c = node.inner.local.ctl();
        let f = last_free_slot(c);
        let inc = 9_000_000 + round;
        fake_slot(c, f, dead_pid(), inc);
        let j = JournalObject::create(&journal_name(
            &node.inner.local.cluster,
            NodeId(f as u16),
            inc,
        ))
        .unwrap();
        let r = j.record();
        r.seg.store(i as u32, Ordering::Relaxed);
        r.seg_gen.store(gen, Ordering::Relaxed);
        r.offset.store(128, Ordering::Relaxed);
        r.len.store(8, Ordering::Relaxed);
        crate::control::store_set(&r.dests, &crate::control::load_set(&c.segs[i].rx_set));
        r.store_payload(b"INJECTED");
        r.progress.store(0, Ordering::Relaxed);
        r.state.store(journal::APPLYING, Ordering::Release);
        hold_order_point(c, f);
        println!("FORGED {f}");
        // This node is a survivor too, and may be the one that takes the fake holder
        // over: the test asks for its count of discarded records.
        loop {
            let mut l = String::new();
            std::io::stdin().read_line(&mut l).unwrap();
            let l = l.trim();
            if l == "COUNT" {
                let n = node
                    .inner
                    .local
                    .discarded
                    .load(std::sync::atomic::Ordering::Relaxed);
                println!("DISCARDED {n}");
                continue;
            }
            match l.strip_prefix("NEXT ") {
                Some(next) => {
                    target = next.to_string();
                    break;
                }
                None => return,
            }
        }
    }
}

/// Makes this node a destination of each segment named in `args` (comma-separated)
/// without the right to read it: its own receive memory under the name senders use,
/// and its bit in the rx set. Then reports which of them received root's payload.
fn forge_rx(node: &Node, args: &str) {
    let l = &node.inner.local;
    let mut objs = Vec::new();
    for name in args.split(',') {
        let (i, gen) = find_seg(node, name);
        let e = &l.ctl().segs[i];
        let size = e.size.load(Ordering::Acquire) as usize;
        let rxn = rx_name(&l.cluster, i as u32, gen, l.me, l.incarnation);
        let obj =
            RxObject::create(&rxn, l.page, size, 0o666, ATTACKER, RxAttrs::default()).unwrap();
        let mut set = crate::control::load_set(&e.rx_set);
        set.insert(l.me);
        crate::control::store_set(&e.rx_set, &set);
        e.rx_gen.fetch_add(1, Ordering::AcqRel);
        objs.push((name.to_string(), size, obj));
    }
    println!("READY 1");
    wait_for("CHECK");
    let mut report = String::from("GOT");
    for (name, size, obj) in &objs {
        // SAFETY: `size` bytes of data pages in the object just created (RxObject's
        // layout); read after the senders are done (the test says CHECK).
        let data = unsafe { std::slice::from_raw_parts(obj.data(), *size) };
        report += &format!(" {name}={}", data.iter().any(|&b| b != 0) as u8);
    }
    println!("{report}");
}

/// Maps `public` (which it may read), then, once root freed it, rolls the entry's
/// generation back so that root's next segment at that index gets the freed one's
/// index and generation, and puts itself in that segment's rx set: a sender that took
/// its old receive memory for the new segment would deliver there.
fn regen(node: &Node) {
    let rx = node
        .open_segment("public")
        .unwrap()
        .map_rx_with(RxAttrs::default())
        .unwrap();
    let (i, gen) = find_seg(node, "public");
    println!("MAPPED {i} {gen}");
    wait_for("FREED");
    let e = &node.inner.local.ctl().segs[i];
    e.generation.store(gen - 1, Ordering::Release);
    println!("ROLLED 1");
    wait_for("CREATED");
    let mut set = crate::control::load_set(&e.rx_set);
    set.insert(node.node_id());
    crate::control::store_set(&e.rx_set, &set);
    e.rx_gen.fetch_add(1, Ordering::AcqRel);
    println!("READY 1");
    wait_for("CHECK");
    let mut buf = vec![0u8; rx.len()];
    rx.read(0, &mut buf).unwrap();
    println!("LEAK found={}", contains(&buf, SECRET) as u8);
}

/// Sets bytes of lock `L`'s page without bidding: in its own slot (a bid that is never
/// withdrawn) and in a FREE slot in the same word. Through the lock page's own tx
/// mapping, as any member may write it (the page has the cluster's mode).
fn forge_lock(node: &Node) {
    let seg = node
        .inner
        .segment(
            &memchan_core::validate::lock_segment("L").unwrap(),
            0,
            0,
            seg_state::FLAG_LOCK,
            false,
        )
        .unwrap();
    let tx =
        crate::tx::TxMapping::new(node.inner.clone(), seg, Dest::Broadcast, TxAttrs::default())
            .unwrap();
    let c = node.inner.local.ctl();
    let free = (0..8)
        .find(|&n| c.nodes[n].state.load(Ordering::Acquire) == node_state::FREE)
        .unwrap();
    tx.write_u8(node.node_id().index(), 1).unwrap();
    tx.write_u8(free, 1).unwrap();
    println!("FORGED {free}");
    wait_for("never");
}

/// Keeps rewriting node `args`'s pid word (to a pid that names no process) and its
/// heartbeat word (to 0: stale) until told `STOP`.
fn forge_slot(node: &Node, args: &str) {
    let s = &node.inner.local.ctl().nodes[args.parse::<usize>().unwrap()];
    let dead = dead_pid();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    std::thread::spawn(move || {
        wait_for("STOP");
        stop2.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    s.pid.store(dead, Ordering::Relaxed);
    println!("FORGING {dead}");
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        s.pid.store(dead, Ordering::Relaxed);
        s.heartbeat_ns.store(0, Ordering::Relaxed);
        std::thread::yield_now();
    }
    println!("STOPPED 1");
}

/// Attack c5: a fake node in a free slot, ALIVE with a stale heartbeat, holding the
/// order point, whose pid word names `args`, a root process that is no member. Done
/// through the control block alone, without joining: root's nodes are then the only
/// survivors, so it is theirs to act on the slot (and so the test is not vacuous).
fn forge_kill(name: &str, args: &str) {
    let map = crate::shm::ShmMap::open(&crate::local::ctl_name(name), crate::shm::Open::Existing)
        .unwrap();
    assert!(map.len() >= std::mem::size_of::<Control>());
    // SAFETY: the mapping holds a whole `Control` (checked above), lives until this
    // function returns, and is only accessed through atomics.
    let c = unsafe { &*(map.ptr() as *const Control) };
    let f = last_free_slot(c);
    fake_slot(c, f, args.parse().unwrap(), 8_000_000);
    hold_order_point(c, f);
    println!("FORGED {f}");
    wait_for("END");
}

/// A root node that dies mid-life: maps a segment, sends ordered packets (so it has a
/// journal object), says READY and waits to be killed.
fn victim(node: &Node) {
    let seg = node.segment("s", 4096, 0o600).unwrap();
    let _rx = seg.map_rx_with(RxAttrs::default()).unwrap();
    let tx = seg.map_tx(Dest::Broadcast, bcast()).unwrap();
    tx.write(0, SECRET).unwrap();
    let _lock = node.lock("L").unwrap();
    println!("READY 1");
    wait_for("never");
}

/// Ordered sends to every member, with a copy to the sender's own receive memory.
fn bcast() -> TxAttrs {
    TxAttrs {
        local_copy: true,
        ..TxAttrs::default()
    }
}

/// A fresh shared cluster for test `tag` and root's node in it; needs root.
fn root_cluster(tag: &str) -> (String, Node) {
    // Fails loudly rather than passing without having run.
    assert_eq!(
        rustix::process::geteuid().as_raw(),
        0,
        "needs root to run the attacker as uid 65534"
    );
    let name = cluster(tag);
    let a = Node::join(&name, &shared()).unwrap();
    (name, a)
}

/// Drops `a`, the last node of cluster `name`, and checks it left no file behind.
fn leaves_no_file(name: &str, a: Node) {
    drop(a);
    assert_eq!(left_in_shm(name), Vec::<String>::new());
}

#[test]
fn a_member_that_forges_the_segment_table_cannot_map_or_receive_a_0600_segment() {
    let (name, a) = root_cluster("c2");
    let seg = a.segment("secret", 4096, 0o600).unwrap();
    let rx = seg.map_rx_with(RxAttrs::default()).unwrap();
    let tx = seg.map_tx(Dest::Broadcast, bcast()).unwrap();
    let mut w = spawn("forge-perm", &name, "");
    let map = w.expect_line("MAP", HANG_GUARD);
    assert_eq!(field(&map, "rx_denied"), 1, "{map}");
    assert_eq!(field(&map, "tx_denied"), 1, "{map}");
    assert_eq!(field(&map, "chmod_denied"), 1, "{map}");
    w.expect_line("READY", HANG_GUARD);
    for i in 0..16u32 {
        tx.write(0, format!("TOPSECRET-{i:04}").as_bytes()).unwrap();
    }
    let mut back = [0u8; 14];
    rx.read(0, &mut back).unwrap();
    assert_eq!(&back, b"TOPSECRET-0015", "root's own copy");
    w.say("CHECK");
    let leak = w.expect_line("LEAK", HANG_GUARD);
    assert_eq!(field(&leak, "found"), 0, "{leak}");
    w.finish(HANG_GUARD);
    drop((tx, rx, seg));
    leaves_no_file(&name, a);
}

#[test]
fn a_member_finds_no_payload_of_a_finished_packet_in_any_file_it_can_read() {
    let (name, a) = root_cluster("a3");
    let b = Node::join(&name, &shared()).unwrap();
    let seg = a.segment("secret", 8192, 0o600).unwrap();
    let rx_a = seg.map_rx_with(RxAttrs::default()).unwrap();
    let rx_b = b
        .segment("secret", 8192, 0o600)
        .unwrap()
        .map_rx_with(RxAttrs::default())
        .unwrap();
    let tx = seg.map_tx(Dest::Broadcast, bcast()).unwrap();
    // Ordered packets of several lengths, the last one the shortest (on 4c63486 it
    // overwrote only the start of the one before).
    let long: Vec<u8> = SECRET.iter().copied().cycle().take(4096).collect();
    tx.write(4096, &long).unwrap();
    tx.write(0, b"TOPSECRET-0011").unwrap();
    tx.write_u8(0, b'X').unwrap();
    assert_eq!(rx_b.load_u8(0).unwrap(), b'X');
    assert_eq!(
        rx_a.load_u64(4096).unwrap(),
        u64::from_ne_bytes(*b"TOPSECRE")
    );
    // Root's own journal object, and the control block as root reads it.
    let own = a.inner.local.journal().unwrap().record();
    assert!(own.data.iter().all(|w| w.load(Ordering::Relaxed) == 0));
    let ctl = std::fs::read(format!("/dev/shm/memchan.{name}.ctl")).unwrap();
    assert!(!contains(&ctl, SECRET), "payload in the control block");

    let mut w = spawn("scan", &name, "");
    let scan = w.expect_line("SCAN", HANG_GUARD);
    assert_eq!(field(&scan, "found"), 0, "{scan}");
    assert!(
        field(&scan, "opened") >= 1,
        "the attacker read no file: {scan}"
    );
    w.finish(HANG_GUARD);
}

#[test]
fn a_journal_record_forged_by_a_member_is_not_applied_where_it_may_not_write() {
    let (name, a) = root_cluster("c3");
    let secret = a.segment("secret", 4096, 0o600).unwrap();
    let rx_secret = secret.map_rx_with(RxAttrs::default()).unwrap();
    let open = a.segment("open", 4096, 0o666).unwrap();
    let rx_open = open.map_rx_with(RxAttrs::default()).unwrap();
    let discarded = || {
        a.inner
            .local
            .discarded
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    let before = discarded();
    let mut w = spawn("forge-journal", &name, "secret");
    let reaped = |f: usize| {
        let c = a.inner.local.ctl();
        c.nodes[f].state.load(Ordering::Acquire) == node_state::FREE
            // Free, not just taken from `f`: a survivor takes it over before it
            // finishes (or discards) the record, and frees it after.
            && a.inner.order().holder().is_none()
    };
    // Records discarded by either survivor: root's node or the attacker's own, whose
    // service thread watches the fake slot too and may take it over first (counting
    // root's alone failed under load).
    let both = |w: &mut Worker| {
        w.say("COUNT");
        discarded()
            + w.expect_line("DISCARDED", HANG_GUARD)
                .parse::<u64>()
                .unwrap()
    };
    let f: usize = w.expect_line("FORGED", HANG_GUARD).parse().unwrap();
    // A survivor finds the fake node dead, takes the order point over and finds a
    // record whose writer (uid 65534) may not write `secret`.
    wait_until("the fake holder reaped", || reaped(f));
    assert_eq!(both(&mut w), before + 1);
    assert_eq!(rx_secret.load_u64(128).unwrap(), 0, "forged bytes applied");
    // The same forgery on a segment uid 65534 may write is finished (so it is the
    // writer's right, not the forgery, that decides).
    w.say("NEXT open");
    let f: usize = w.expect_line("FORGED", HANG_GUARD).parse().unwrap();
    wait_until("the second fake holder reaped", || reaped(f));
    assert_eq!(both(&mut w), before + 1);
    assert_eq!(
        rx_open.load_u64(128).unwrap(),
        u64::from_ne_bytes(*b"INJECTED")
    );
    w.say("END");
    w.finish(HANG_GUARD);
    // Root's ordered writes go on.
    let tx = secret.map_tx(Dest::Broadcast, bcast()).unwrap();
    tx.write_u64(0, 7).unwrap();
    assert_eq!(rx_secret.load_u64(0).unwrap(), 7);
    drop((tx, rx_secret, rx_open, secret, open));
    leaves_no_file(&name, a);
}

#[test]
fn a_destination_whose_receive_memory_may_not_read_gets_nothing() {
    let (name, a) = root_cluster("rx");
    let secret = a.segment("secret", 4096, 0o600).unwrap();
    let public = a.segment("public", 4096, 0o644).unwrap();
    let _rx_secret = secret.map_rx_with(RxAttrs::default()).unwrap();
    let _rx_public = public.map_rx_with(RxAttrs::default()).unwrap();
    let mut w = spawn("forge-rx", &name, "secret,public");
    let them = NodeId(w.expect_line("JOINED", HANG_GUARD).parse().unwrap());
    w.expect_line("READY", HANG_GUARD);
    let denied = || {
        a.inner
            .local
            .denied
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    for seg in [&secret, &public] {
        seg.map_tx(Dest::Node(them), TxAttrs::default())
            .unwrap()
            .write(0, SECRET)
            .unwrap();
        seg.map_tx(Dest::Broadcast, bcast())
            .unwrap()
            .write(64, SECRET)
            .unwrap();
    }
    // One refusal for the one destination (cached for every later mapping).
    assert_eq!(denied(), 1);
    w.say("CHECK");
    let got = w.expect_line("GOT", HANG_GUARD);
    assert_eq!(field(&got, "secret"), 0, "{got}");
    assert_eq!(field(&got, "public"), 1, "{got}");
    w.finish(HANG_GUARD);
    let mut members = NodeSet::EMPTY;
    members.insert(a.node_id());
    wait_until("the attacker gone", || a.members() == members);
    drop((secret, public, _rx_secret, _rx_public));
    leaves_no_file(&name, a);
}

#[test]
fn a_segment_made_again_under_a_forged_generation_is_not_sent_to_the_old_ones_readers() {
    let (name, a) = root_cluster("regen");
    let public = a.segment("public", 4096, 0o644).unwrap();
    let _rx_public = public.map_rx_with(RxAttrs::default()).unwrap();
    let mut w = spawn("regen", &name, "");
    let mapped = w.expect_line("MAPPED", HANG_GUARD);
    // Root sends to `public`, so this process holds a view of the attacker's receive
    // memory, admitted (0o644: it may read).
    let tx = public.map_tx(Dest::Broadcast, bcast()).unwrap();
    tx.write(0, b"public").unwrap();
    drop((tx, _rx_public));
    public.free().unwrap();
    w.say("FREED");
    w.expect_line("ROLLED", HANG_GUARD);
    let secret = a.segment("secret", 4096, 0o600).unwrap();
    let _rx_secret = secret.map_rx_with(RxAttrs::default()).unwrap();
    let (i, gen) = find_seg(&a, "secret");
    assert_eq!(
        format!("{i} {gen}"),
        mapped,
        "the attack did not reuse the index and generation"
    );
    w.say("CREATED");
    w.expect_line("READY", HANG_GUARD);
    secret
        .map_tx(Dest::Broadcast, bcast())
        .unwrap()
        .write(0, SECRET)
        .unwrap();
    w.say("CHECK");
    let leak = w.expect_line("LEAK", HANG_GUARD);
    assert_eq!(field(&leak, "found"), 0, "{leak}");
    w.finish(HANG_GUARD);
}

#[test]
fn a_dead_nodes_files_are_reaped_by_the_next_joiner_and_the_last_leaves_none() {
    let name = cluster("reap");
    let mut w = spawn("victim", &name, "");
    w.expect_line("READY", HANG_GUARD);
    let journal = journal_name(&name, NodeId(0), 1);
    assert!(
        left_in_shm(&name).contains(&journal)
            && left_in_shm(&name).iter().any(|f| f.ends_with(".perm")),
        "the victim made no journal or permission object: {:?}",
        left_in_shm(&name)
    );
    drop(w); // SIGKILL
    let a = Node::join(&name, &shared()).unwrap();
    assert!(!left_in_shm(&name).contains(&journal), "journal not reaped");
    leaves_no_file(&name, a);
}

#[test]
fn a_lock_byte_forged_by_a_member_ends_acquire_stalled_and_goes_with_it() {
    let (name, a) = root_cluster("lock");
    let lock = a.lock("L").unwrap();
    lock.acquire().unwrap().release().unwrap();
    let mut w = spawn("forge-lock", &name, "");
    let them = NodeId(w.expect_line("JOINED", HANG_GUARD).parse().unwrap());
    let free: usize = w.expect_line("FORGED", HANG_GUARD).parse().unwrap();
    // On 4c63486 this waited forever. The byte in the FREE slot counts for nobody;
    // the one in the attacker's slot holds the lock up until the stall bound.
    match lock.acquire() {
        Err(Error::Stalled { what, nodes, .. }) => {
            assert_eq!(what, "the cluster lock");
            assert_eq!(nodes, vec![them], "names the attacker's slot only");
        }
        other => panic!("expected Stalled at the lock, got {:?}", other.map(|_| ())),
    }
    assert!(lock.try_acquire().unwrap().is_none());
    // A dead bidder's byte is cleared by the survivor's cleanup; the FREE slot's byte
    // is still set and still holds up nobody.
    drop(w);
    wait_until("the attacker's slot freed", || {
        a.inner.local.ctl().nodes[them.index()]
            .state
            .load(Ordering::Acquire)
            == node_state::FREE
    });
    assert_eq!(
        a.inner.local.ctl().nodes[free]
            .state
            .load(Ordering::Acquire),
        node_state::FREE
    );
    lock.acquire().unwrap().release().unwrap();
    drop(lock);
    leaves_no_file(&name, a);
}

#[test]
fn a_member_that_rewrites_a_nodes_pid_and_heartbeat_words_does_not_get_it_isolated() {
    let (name, a) = root_cluster("slot");
    let b = Node::join(&name, &shared()).unwrap();
    let (bi, binc) = (b.node_id().index(), b.inner.local.incarnation);
    let mut w = spawn("forge-slot", &name, &bi.to_string());
    let dead: u32 = w.expect_line("FORGING", HANG_GUARD).parse().unwrap();
    // a looks again at what stands behind b (as after a change of the members it
    // watches), now that b's pid word leads nowhere.
    a.inner.pidfds.lock().remove(&(bi, binc));
    wait_until("a looked behind b again", || {
        !matches!(
            a.inner.pidfds.lock().get(&(bi, binc)),
            None | Some(crate::order::Behind::Pending)
        )
    });
    assert_eq!(
        a.inner.local.ctl().nodes[bi].pid.load(Ordering::Relaxed),
        dead
    );
    assert!(
        matches!(
            a.inner.pidfds.lock().get(&(bi, binc)),
            Some(crate::order::Behind::Unseen)
        ),
        "b's presence lock is held: not nobody"
    );
    // Three failure timeouts of a's heartbeat periods (each stamps a's word once).
    let c = a.inner.local.ctl();
    let periods = 3 * (shared().failure_timeout.as_millis() / shared().heartbeat.as_millis());
    let mut last = c.nodes[a.node_id().index()]
        .heartbeat_ns
        .load(Ordering::Acquire);
    for _ in 0..periods {
        wait_until("a's next heartbeat", || {
            c.nodes[a.node_id().index()]
                .heartbeat_ns
                .load(Ordering::Acquire)
                != last
        });
        last = c.nodes[a.node_id().index()]
            .heartbeat_ns
            .load(Ordering::Acquire);
    }
    assert_eq!(
        c.nodes[bi].state.load(Ordering::Acquire),
        node_state::ALIVE,
        "b isolated on words alone"
    );
    assert!(a.members().contains(b.node_id()));
    w.say("STOP");
    w.expect_line("STOPPED", HANG_GUARD);
    w.finish(HANG_GUARD);
    drop(b);
    leaves_no_file(&name, a);
}

#[test]
fn a_member_cannot_make_root_signal_a_process_through_a_forged_slot() {
    let (name, a) = root_cluster("c5");
    let seg = a.segment("s", 4096, 0o600).unwrap();
    let rx = seg.map_rx_with(RxAttrs::default()).unwrap();
    let tx = seg.map_tx(Dest::Broadcast, bcast()).unwrap();
    // A root process that is no member (on 4c63486 root's node SIGKILLed it).
    let mut victim = Command::new("sleep").arg("300").spawn().unwrap();
    let mut w = spawn("forge-kill", &name, &victim.id().to_string());
    let f: usize = w.expect_line("FORGED", HANG_GUARD).parse().unwrap();
    // No node stands behind the slot (no presence lock): root's service thread reaps
    // it and frees the point, signalling nothing.
    wait_until("the fake holder reaped", || {
        a.inner.local.ctl().nodes[f].state.load(Ordering::Acquire) == node_state::FREE
            && a.inner.order().holder().is_none()
    });
    assert!(
        victim.try_wait().unwrap().is_none(),
        "memchan signalled a process that is no member"
    );
    tx.write_u64(0, 3).unwrap();
    assert_eq!(rx.load_u64(0).unwrap(), 3);
    w.say("END");
    w.finish(HANG_GUARD);
    victim.kill().unwrap();
    victim.wait().unwrap();
    drop((tx, rx, seg));
    leaves_no_file(&name, a);
}
