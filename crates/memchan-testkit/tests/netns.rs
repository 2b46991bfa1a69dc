//! The network-namespace harness itself (`memchan_testkit::netns`), as root: topologies
//! connect and the faults cut them off, loss shows up as TCP retransmissions, processes
//! run inside and die with the topology, namespaces left by a dead run are deleted.
//! The multi-host conformance tests that use it are in
//! `crates/memchan/tests/conformance/multihost.rs`.

use std::io::Write;
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use memchan_testkit::harness::{args, field, unique_cluster};
use memchan_testkit::netns::{netns_list, Topology};

/// Worker entry (see `memchan_testkit::harness`): [`Topology::worker`] re-executes this
/// binary with `MEMCHAN_ROLE` set. Ignored so it never runs as a test of its own.
#[test]
#[ignore = "entry point for worker processes"]
fn worker() {
    // A worker whose test died must not outlive it for long.
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(300));
        eprintln!("worker watchdog: still running after 300 s, exiting");
        std::process::exit(3);
    });
    let role = std::env::var("MEMCHAN_ROLE").expect("MEMCHAN_ROLE");
    let a = args();
    match role.as_str() {
        // `cluster`: joins it (one host, shared memory), prints JOINED and idles.
        "member" => {
            let c = memchan::Cluster::join(&a[0]).unwrap();
            println!("JOINED node={}", c.node_id().0);
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        other => panic!("unknown role {other}"),
    }
}

fn port_of(l: &TcpListener) -> u16 {
    l.local_addr().unwrap().port()
}

const PROBE: Duration = Duration::from_millis(1500);

#[test]
fn netns_topology_connects_hosts_and_faults_cut_them_off() {
    let topo = Topology::new("conn", 2);
    let h1 = topo.hosts[1].clone();
    let names = netns_list();
    for ns in [&topo.hub_ns, &topo.hosts[0].ns, &h1.ns] {
        assert!(names.contains(ns), "{ns} not in {names:?}");
    }

    // Host 1 reaches its hub-side address.
    let l = topo.listen(&topo.hub_ns, &format!("{}:0", h1.hub_addr));
    let port = port_of(&l);
    assert!(
        topo.tcp_probe(&h1.ns, &h1.hub_addr, port, PROBE),
        "no path h1 -> hub"
    );

    // 100% loss on its veth cuts it off; clearing restores it.
    topo.nft_drop(&h1.ns, &h1.veth_host, 100);
    assert!(
        !topo.tcp_probe(&h1.ns, &h1.hub_addr, port, PROBE),
        "nft 100% did not drop"
    );
    topo.nft_clear(&h1.ns);
    topo.nft_clear(&h1.ns); // idempotent
    assert!(
        topo.tcp_probe(&h1.ns, &h1.hub_addr, port, PROBE),
        "nft_clear did not restore"
    );

    // The same from the hub side of the link.
    topo.nft_drop(&topo.hub_ns, &h1.veth_hub, 100);
    assert!(!topo.tcp_probe(&h1.ns, &h1.hub_addr, port, PROBE));
    topo.nft_clear(&topo.hub_ns);
    assert!(topo.tcp_probe(&h1.ns, &h1.hub_addr, port, PROBE));

    // Link down / up.
    topo.link_down(1);
    assert!(
        !topo.tcp_probe(&h1.ns, &h1.hub_addr, port, PROBE),
        "link down still passes"
    );
    topo.link_up(1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !topo.tcp_probe(&h1.ns, &h1.hub_addr, port, PROBE) {
        assert!(
            Instant::now() < deadline,
            "link_up did not restore the path"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // Host 0 reaches host 1 through the hub (routing), and not host 1's loopback.
    let l1 = topo.listen(&h1.ns, &format!("{}:0", h1.addr));
    assert!(
        topo.tcp_probe(&topo.hosts[0].ns, &h1.addr, port_of(&l1), PROBE),
        "h0 -> h1"
    );

    let all: Vec<String> = topo.namespaces().to_vec();
    drop(topo);
    let names = netns_list();
    for ns in &all {
        assert!(!names.contains(ns), "{ns} left behind: {names:?}");
    }
}

#[test]
fn netns_loss_shows_up_as_tcp_retransmissions() {
    let topo = Topology::new("retr", 1);
    let h = topo.hosts[0].clone();
    let l = topo.listen(&topo.hub_ns, &format!("{}:0", h.hub_addr));
    let addr = l.local_addr().unwrap();
    let mut c = topo
        .connect(&h.ns, addr, Duration::from_secs(2))
        .expect("connect");
    let (mut s, _) = l.accept().unwrap();
    let before = topo.tcp_retrans_segs(&h.ns);
    // Lost on the way (dropped as it enters the hub), not refused at the sender: a
    // segment dropped by the sender's own output hook fails with EPERM and is not
    // counted as a retransmission.
    topo.nft_drop(&topo.hub_ns, &h.veth_hub, 100);
    c.write_all(&[7u8; 1000]).unwrap();
    // The first retransmission comes after the minimum RTO (200 ms).
    let deadline = Instant::now() + Duration::from_secs(10);
    while topo.tcp_retrans_segs(&h.ns) == before {
        assert!(
            Instant::now() < deadline,
            "no retransmission under 100% loss"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    topo.nft_clear(&topo.hub_ns);
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = [0u8; 1000];
    std::io::Read::read_exact(&mut s, &mut got).expect("data after the loss ends");
    assert_eq!(got, [7u8; 1000]);
}

#[test]
fn netns_spawned_processes_run_inside_and_die_with_the_topology() {
    let topo = Topology::new("proc", 1);
    let h = topo.hosts[0].clone();
    let ns_inode = |path: &str| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).map(|m| (m.dev(), m.ino()))
    };
    let want = ns_inode(&format!("/run/netns/{}", h.ns)).unwrap();

    // A worker (this test binary) in the host namespace, with an extra env var. Role
    // "member <cluster>" joins a one-host cluster in the host's /dev/shm, prints
    // JOINED and idles.
    let cluster = unique_cluster("netns");
    let mut w = topo.worker(
        &h.ns,
        "member",
        std::slice::from_ref(&cluster),
        &[("MEMCHAN_NETNS_TEST", "yes".into())],
    );
    let wpid = w.pid();
    let first = w.expect_line("JOINED", Duration::from_secs(30));
    assert_eq!(field(&first, "node"), 0, "{first}");
    // The host's /dev/shm is its own: the cluster is not in this process's, and a
    // second process of the host joins the same cluster.
    let ours = || -> Vec<String> {
        std::fs::read_dir("/dev/shm")
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!("memchan.{cluster}.")))
            .collect()
    };
    assert!(
        ours().is_empty(),
        "the host's cluster is in ours: {:?}",
        ours()
    );
    let mut w2 = topo.worker(&h.ns, "member", std::slice::from_ref(&cluster), &[]);
    let second = w2.expect_line("JOINED", Duration::from_secs(30));
    assert_eq!(field(&second, "node"), 1, "{second}");
    // The entry execs, so the child's PID is the worker itself.
    assert_eq!(
        std::fs::read_link(format!("/proc/{wpid}/exe")).unwrap(),
        std::env::current_exe().unwrap()
    );
    assert_eq!(ns_inode(&format!("/proc/{wpid}/ns/net")).unwrap(), want);
    let env = std::fs::read(format!("/proc/{wpid}/environ")).unwrap();
    assert!(
        env.split(|b| *b == 0)
            .any(|kv| kv == b"MEMCHAN_NETNS_TEST=yes"),
        "env not passed"
    );

    // A tracked plain process.
    let pid = topo.spawn(&h.ns, "sleep", &["600"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ns_inode(&format!("/proc/{pid}/ns/net")).ok() != Some(want) {
        assert!(Instant::now() < deadline, "sleep {pid} not in {}", h.ns);
        std::thread::sleep(Duration::from_millis(10));
    }

    drop(topo);
    // The tracked child was reaped: its PID is gone.
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "spawned process {pid} survived"
    );
    // The worker was SIGKILLed: a zombie until `w` reaps it.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{wpid}/stat")).unwrap_or_default();
        let state = stat.rsplit(") ").next().unwrap_or("").chars().next();
        if matches!(state, None | Some('Z') | Some('X')) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "worker {wpid} survived: {state:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop((w, w2));
    assert!(!netns_list().contains(&h.ns));
    // The host's /dev/shm went with its mount namespace, and nothing leaked here.
    assert!(!std::path::Path::new(&memchan_worker::mount_ns(&h.ns)).exists());
    assert!(ours().is_empty(), "left in /dev/shm: {:?}", ours());
}

#[test]
fn netns_stale_namespaces_are_deleted_by_the_next_topology() {
    // A namespace left by a dead process is deleted by the next topology. Names are
    // recognised by `our_pid` (unit-tested in `src/netns.rs`).
    // PIDs never exceed 2^22 (PID_MAX_LIMIT): this one is dead, and unique per run.
    let dead = 4_000_000_000u32 - std::process::id();
    let stale = format!("mc{dead}staleh0");
    let st = Command::new("ip")
        .args(["netns", "add", &stale])
        .status()
        .expect("run ip netns add");
    assert!(st.success(), "ip netns add {stale}: {st}");
    let topo = Topology::new("stale", 1);
    assert!(!netns_list().contains(&stale), "{stale} not deleted");
    assert!(netns_list().contains(&topo.hosts[0].ns));
}
