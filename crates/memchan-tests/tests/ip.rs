//! `memchan ip` end to end (root): two network namespaces, each running `memchan ip`
//! as a node of one cluster (sharing /dev/shm: the one-host transport; or through a
//! hub in a third namespace), and unmodified programs between them: ping (unicast
//! and to the subnet's broadcast address), iperf3, a TCP transfer whose bytes
//! are compared, and UDP multicast (three namespaces) to a group's members only.
//! Each test asserts from the nodes' own counters that the traffic went through
//! memchan. Without root the tests say so and pass; without ping or
//! iperf3 they fail naming scripts/setup.sh.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use memchan_testkit::netns::Topology;

/// Bounds every wait (a hang guard, not a speed claim).
const WAIT: Duration = Duration::from_secs(30);

fn root_with_tun() -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("memchan ip tests skipped: they need root (network namespaces, TUN)");
    } else if !std::path::Path::new("/dev/net/tun").exists() {
        eprintln!("memchan ip tests skipped: no /dev/net/tun");
        return false;
    }
    root
}

fn need(tool: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(found, "{tool} is not installed: run scripts/setup.sh");
}

/// `memchan ip` in a namespace: stdout lines on a channel, stderr collected to a
/// file-like string by a thread. Killed and reaped on drop.
struct IpProc {
    child: Child,
    lines: Receiver<String>,
    /// Its log lines as they come (the whole log is also kept in `stderr`).
    log: Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl IpProc {
    fn spawn(
        topo: &Topology,
        ns: &str,
        cluster: &str,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> (IpProc, String) {
        let bin = memchan_tests::memchan_exe();
        let mut argv = vec!["ip", "--cluster", cluster];
        argv.extend_from_slice(args);
        let mut cmd = topo.command(ns, bin, &argv);
        cmd.env_remove("MEMCHAN_HUB").env_remove("MEMCHAN_KEY_FILE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn memchan ip");
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let err = child.stderr.take().unwrap();
        let (etx, log) = mpsc::channel();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = etx.send(line.clone());
                s.push_str(&line);
                s.push('\n');
            }
            s
        });
        let mut p = IpProc {
            child,
            lines,
            log,
            stderr,
        };
        let up = p.line("up");
        // "node=N addr=A/P dev=IF"
        let addr = up
            .split_whitespace()
            .find_map(|f| f.strip_prefix("addr="))
            .and_then(|a| a.split('/').next())
            .unwrap_or_else(|| panic!("no addr= in `up {up}`"))
            .to_string();
        (p, addr)
    }

    /// The next stdout line starting with `prefix `, its rest.
    fn line(&mut self, prefix: &str) -> String {
        loop {
            match self.lines.recv_timeout(WAIT) {
                Ok(l) => {
                    if let Some(rest) = l.strip_prefix(&format!("{prefix} ")) {
                        return rest.to_string();
                    }
                }
                Err(e) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!("no `{prefix}` line from memchan ip ({e})");
                }
            }
        }
    }

    /// SIGTERM; the final counters, as (name, value) pairs, after a clean exit.
    fn stop(mut self) -> Vec<(String, u64)> {
        // SAFETY: kill(2) on our own child's pid (`ip netns exec` execs memchan).
        let rc = unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        assert_eq!(rc, 0);
        let counters = self.line("counters");
        let status = self.child.wait().expect("wait memchan ip");
        let stderr = std::mem::replace(&mut self.stderr, std::thread::spawn(String::new));
        let stderr = stderr.join().unwrap_or_default();
        assert!(status.success(), "memchan ip exited {status}:\n{stderr}");
        counters
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.parse().expect("counter value")))
            .collect()
    }
}

impl Drop for IpProc {
    /// After a failed assert too: SIGTERM first, so the node leaves its cluster and the
    /// last one removes the cluster's objects in /dev/shm (a SIGKILL left them behind
    /// once); SIGKILL if it has not exited within 5 s.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            // SAFETY: kill(2) on our own child's pid, not yet reaped.
            unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(5);
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn counter(c: &[(String, u64)], name: &str) -> u64 {
    c.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("no counter {name} in {c:?}"))
}

fn unique(tag: &str) -> String {
    format!("ip-{tag}-{}", std::process::id())
}

/// Pings `addr` from `ns` once a second until one answer comes (the two nodes
/// finding each other), at most [`WAIT`].
fn wait_reachable(topo: &Topology, ns: &str, addr: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        let ok = topo
            .command(ns, "ping", &["-c", "1", "-W", "1", addr])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run ping")
            .success();
        if ok {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{addr} never answered a ping from {ns}"
        );
    }
}

/// `ping ARGS` in `ns`: how many answers came.
fn ping_received(topo: &Topology, ns: &str, args: &[&str]) -> (u64, String) {
    let out = topo.command(ns, "ping", args).output().expect("run ping");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // "5 packets transmitted, 5 received, ..."
    let got = text
        .lines()
        .find_map(|l| {
            let (_, rest) = l.split_once("transmitted, ")?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .unwrap_or(0);
    (got, text)
}

/// FNV-1a over `data`, continuing from `h`.
fn fnv(mut h: u64, data: &[u8]) -> u64 {
    for &b in data {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

const FNV0: u64 = 0xcbf2_9ce4_8422_2325;

/// Two nodes in two namespaces of a fresh topology; `hub`: through a hub in the hub
/// namespace instead of shared memory.
fn two_nodes(tag: &str, hub: bool) -> (Topology, Option<Child>, IpProc, String, IpProc, String) {
    two_nodes_with(tag, hub, &[], &[])
}

/// [`two_nodes`] with more environment and arguments for both nodes.
fn two_nodes_with(
    tag: &str,
    hub: bool,
    extra: &[(&str, &str)],
    args: &[&str],
) -> (Topology, Option<Child>, IpProc, String, IpProc, String) {
    let topo = Topology::one_machine(tag, 2);
    let cluster = unique(tag);
    let mut hub_child = None;
    let mut env: Vec<(&str, String)> = extra.iter().map(|(k, v)| (*k, v.to_string())).collect();
    if hub {
        let (c, listen) = start_hub(&topo);
        hub_child = Some(c);
        env.push(("MEMCHAN_HUB", listen));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (a, addr_a) = IpProc::spawn(&topo, &topo.hosts[0].ns, &cluster, &env, args);
    let (b, addr_b) = IpProc::spawn(&topo, &topo.hosts[1].ns, &cluster, &env, args);
    assert_ne!(addr_a, addr_b);
    (topo, hub_child, a, addr_a, b, addr_b)
}

/// A `memchan hub` in the topology's hub namespace, once it listens; its address.
fn start_hub(topo: &Topology) -> (Child, String) {
    let listen = format!("{}:7451", topo.hosts[0].hub_addr);
    let mut c = topo
        .command(
            &topo.hub_ns,
            memchan_tests::memchan_exe(),
            &["hub", "--listen", &listen],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn memchan hub");
    let mut first = String::new();
    BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut first)
        .expect("hub stdout");
    assert!(first.starts_with("listening "), "hub said `{first}`");
    (c, listen)
}

#[test]
fn ping_and_iperf3_run_unmodified_over_memchan_ip() {
    if !root_with_tun() {
        return;
    }
    need("ping");
    need("iperf3");
    let (topo, _hub, a, addr_a, b, addr_b) = two_nodes("ipp", false);
    let (ns_a, ns_b) = (topo.hosts[0].ns.clone(), topo.hosts[1].ns.clone());
    wait_reachable(&topo, &ns_a, &addr_b);

    let (got, text) = ping_received(&topo, &ns_a, &["-c", "5", "-i", "0.2", "-W", "5", &addr_b]);
    assert_eq!(got, 5, "ping {addr_b} from {ns_a}:\n{text}");

    // Broadcast: an echo to the subnet's broadcast address travels through the
    // broadcast ring; B answers (its namespace is told to) with a unicast reply.
    let sysctl = ["-q", "-w", "net.ipv4.icmp_echo_ignore_broadcasts=0"];
    assert!(topo
        .command(&ns_b, "sysctl", &sysctl)
        .status()
        .unwrap()
        .success());
    let (got, text) = ping_received(
        &topo,
        &ns_a,
        &["-b", "-c", "3", "-i", "0.2", "-W", "5", "10.77.0.255"],
    );
    assert!(
        got >= 1,
        "broadcast ping from {ns_a} answered by nobody:\n{text}"
    );
    assert!(
        text.contains(&addr_b),
        "the answer is not from {addr_b}:\n{text}"
    );

    // iperf3, unmodified, server in B, client in A for 2 seconds.
    let mut server = topo
        .command(&ns_b, "iperf3", &["-s", "-p", "5399", "-B", &addr_b])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3 server");
    let deadline = Instant::now() + WAIT;
    let out = loop {
        let out = topo
            .command(
                &ns_a,
                "iperf3",
                &["-c", &addr_b, "-p", "5399", "-t", "2", "-J"],
            )
            .output()
            .expect("iperf3 client");
        // The server may not listen yet, or an early attempt may end without a
        // test (no `end.sum_received` in its report; seen once in CI): try again.
        let measured = out.status.success()
            && serde_json::from_slice::<serde_json::Value>(&out.stdout)
                .is_ok_and(|v| v["end"]["sum_received"]["bytes"].is_u64());
        if measured || Instant::now() > deadline {
            break out;
        }
    };
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        out.status.success(),
        "iperf3 client failed:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("iperf3 -J output");
    let received = v["end"]["sum_received"]["bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("no end.sum_received.bytes in iperf3's report: {v}"));
    assert!(received > 0, "iperf3 moved nothing: {}", v["end"]);

    let ca = a.stop();
    let cb = b.stop();
    // Everything iperf3 received came through B's rings (plus headers and pings).
    assert!(
        counter(&cb, "rx_bytes") >= received,
        "B's counters {cb:?} vs iperf3 {received}"
    );
    assert!(counter(&ca, "tx_bytes") >= received, "A's counters {ca:?}");
    assert!(counter(&cb, "rx_packets") >= 5);
    assert_eq!(counter(&cb, "bad_records"), 0);
    assert_eq!(counter(&ca, "bad_records"), 0);
    let _ = addr_a;
}

/// A node's counters from its stop line, in order.
type Counters = Vec<(String, u64)>;

/// A TCP stream of 8 MiB from A to B through memchan ip, compared byte for byte
/// (FNV-1a of each side, and the length); both nodes' counters.
fn tcp_transfer_is_intact(tag: &str, hub: bool, args: &[&str]) -> (Counters, Counters) {
    if !root_with_tun() {
        return Default::default();
    }
    need("ping");
    let (topo, _hub, a, _addr_a, b, addr_b) = two_nodes_with(tag, hub, &[], args);
    let (ns_a, ns_b) = (topo.hosts[0].ns.clone(), topo.hosts[1].ns.clone());
    wait_reachable(&topo, &ns_a, &addr_b);

    const LEN: usize = 8 << 20;
    let listener = topo.listen(&ns_b, &format!("{addr_b}:5400"));
    let reader = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        s.set_read_timeout(Some(WAIT)).unwrap();
        let (mut h, mut n, mut buf) = (FNV0, 0usize, vec![0u8; 1 << 16]);
        loop {
            let k = s.read(&mut buf).expect("read the stream");
            if k == 0 {
                break;
            }
            h = fnv(h, &buf[..k]);
            n += k;
        }
        (h, n)
    });
    let to: SocketAddr = format!("{addr_b}:5400").parse().unwrap();
    let mut s: TcpStream = topo
        .connect(&ns_a, to, WAIT)
        .expect("connect through memchan ip");
    s.set_write_timeout(Some(WAIT)).unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..LEN)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    s.write_all(&data).expect("write the stream");
    drop(s);
    let (h, n) = reader.join().expect("reader thread");
    assert_eq!(n, LEN, "bytes received");
    assert_eq!(h, fnv(FNV0, &data), "checksum of the received stream");

    let cb = b.stop();
    let ca = a.stop();
    assert!(
        counter(&cb, "rx_bytes") >= LEN as u64,
        "B's counters {cb:?}"
    );
    assert!(
        counter(&ca, "tx_bytes") >= LEN as u64,
        "A's counters {ca:?}"
    );
    (ca, cb)
}

#[test]
fn tcp_transfer_over_memchan_ip_on_one_host_is_intact() {
    tcp_transfer_is_intact("ipt", false, &[]);
}

/// A receive thread that spins after every packet (`--spin-us`) sends what the TUN
/// device holds meanwhile, but never waits for credits: only that thread takes
/// them, so each such wait ran out (200 ms) and dropped its packet. With a ring of
/// four largest packets through a hub the stream fills the ring all the time.
#[test]
fn a_spinning_receiver_never_waits_for_credits() {
    let args = ["--spin-us", "1000", "--ring-kib", "260"];
    let (ca, cb) = tcp_transfer_is_intact("ipw", true, &args);
    for (who, c) in [("A", &ca), ("B", &cb)] {
        assert_eq!(counter(c, "drop_ring_full"), 0, "{who}'s counters {c:?}");
    }
}

/// A ping-pong opens the interactive spin window: a node's first short spin
/// misses the exchange's next packet, which comes within the longest window, so the
/// window opens to it. With `--spin-us` longer than the first window too (the
/// window once stayed shut then). The longest window is 20 ms, so that a slow
/// machine's round trips fall within it; `--spin-us 12` is below any round trip
/// through two TUN devices and the rings.
#[test]
fn an_exchange_opens_the_interactive_spin_window() {
    if !root_with_tun() {
        return;
    }
    need("ping");
    let args = ["--spin-us", "12", "--interactive-spin-us", "20000"];
    let (topo, _hub, a, _addr_a, b, addr_b) = two_nodes_with("ipo", false, &[], &args);
    let ns_a = topo.hosts[0].ns.clone();
    wait_reachable(&topo, &ns_a, &addr_b);
    // A flood ping: each request leaves as soon as the answer came.
    let (got, text) = ping_received(&topo, &ns_a, &["-f", "-c", "200", "-W", "5", &addr_b]);
    assert!(got >= 190, "ping -f {addr_b}:\n{text}");
    let (ca, cb) = (a.stop(), b.stop());
    for (who, c) in [("A", &ca), ("B", &cb)] {
        assert!(
            counter(c, "spin_window_opens") >= 1,
            "{who}'s counters {c:?}"
        );
    }
}

#[test]
fn tcp_transfer_over_memchan_ip_through_a_hub_is_intact() {
    tcp_transfer_is_intact("iph", true, &[]);
}

/// This test process as a node of a `memchan ip` node's cluster, writing the
/// protocol's words itself (a peer of another build, or a hostile one).
struct FakePeer {
    c: memchan::Cluster,
    lay: memchan_ip::ring::Layout,
    rx: memchan::RxMapping,
    tx: memchan::TxMapping,
    node: memchan::NodeId,
}

impl FakePeer {
    /// One `memchan ip` node (with `args`) in a namespace of its own (named after
    /// `tag`), its address, and this process joined to its cluster.
    fn beside_a_node(tag: &str, args: &[&str]) -> (Topology, IpProc, String, FakePeer) {
        let topo = Topology::one_machine(&format!("ip{tag}"), 1);
        let cluster = unique(tag);
        let (node, addr) = IpProc::spawn(&topo, &topo.hosts[0].ns, &cluster, &[], args);
        let f = FakePeer::join(&cluster);
        (topo, node, addr, f)
    }

    /// Joins `cluster` (where one `memchan ip` node with the default sizes runs) and
    /// waits for the node's first hello.
    fn join(cluster: &str) -> FakePeer {
        let c = memchan::Cluster::join(cluster).expect("join the node's cluster");
        let cfg = memchan_ip::IpConfig::default();
        let lay = memchan_ip::ring::Layout {
            page: c.page_size(),
            ring: cfg.ring_bytes,
            bring: cfg.bcast_ring_bytes,
            slots: cfg.max_nodes,
        };
        let seg = c
            .segment(&cfg.segment, lay.segment_size(), 0o600)
            .expect("the node's segment");
        let rx = seg.map_rx_with(memchan::RxAttrs::default()).unwrap();
        let node = c
            .members()
            .into_iter()
            .find(|&n| n != c.node_id())
            .expect("the node is a member");
        let tx = seg
            .map_tx(memchan::Dest::Node(node), memchan::TxAttrs::default())
            .unwrap();
        let f = FakePeer {
            c,
            lay,
            rx,
            tx,
            node,
        };
        f.wait_theirs(memchan_ip::ring::INC, |v| v != 0, "no hello from the node");
        f
    }

    /// The word at `off` of the node's hello to us (its slot of our copy).
    fn theirs(&self, off: usize) -> u64 {
        self.rx
            .load_u64(self.lay.hdr(self.node.index()) + off)
            .unwrap()
    }

    fn wait_theirs(&self, off: usize, ok: impl Fn(u64) -> bool, what: &str) -> u64 {
        let end = Instant::now() + WAIT;
        loop {
            let v = self.theirs(off);
            if ok(v) {
                return v;
            }
            assert!(Instant::now() < end, "{what}");
            std::thread::yield_now();
        }
    }

    /// Our hello into the node's copy, PEER last (as `memchan ip` writes it).
    fn hello(&self, starts: u64, format: u64, inc: u64, peer: u64) {
        use memchan_ip::ring;
        let h = self.lay.hdr(self.c.node_id().index());
        for (off, v) in [
            (ring::START, starts),
            (ring::BSTART, 0),
            (ring::FORMAT, format),
            (ring::INC, inc),
            (ring::PEER, peer),
        ] {
            self.tx.write_u64(h + off, v).unwrap();
        }
    }
}

/// A peer of another record format (an older build: it never wrote the hello's
/// FORMAT word) is named in the node's log and no session is started for it; the
/// same peer as a new incarnation of this build's format gets one.
#[test]
fn a_peer_of_another_record_format_is_not_exchanged_with() {
    use memchan_ip::ring;
    if !root_with_tun() {
        return;
    }
    let (_topo, node, _, f) = FakePeer::beside_a_node("fmt", &[]);
    f.hello(0, 0, 7, 0);
    loop {
        let line = node
            .log
            .recv_timeout(WAIT)
            .expect("no log line naming the other record format");
        if line.contains("another record format") {
            break;
        }
    }
    assert_ne!(
        f.theirs(ring::PEER),
        7,
        "the node started a session for a peer of another format"
    );
    f.hello(0, ring::FORMAT_VERSION, 8, 0);
    f.wait_theirs(
        ring::PEER,
        |v| v == 8,
        "no session for a peer of this format",
    );
    drop(f);
    assert_eq!(counter(&node.stop(), "bad_records"), 0);
}

/// A frame whose virtio_net_hdr asks for segmentation (no honest sender's kernel
/// writes one: the TUN devices offer checksum offload only) is dropped and counted
/// (`bad_frames`), and the peer's ring is kept: the good frame behind it reaches the
/// kernel. The peer is this test process with a session of its own.
#[test]
fn a_frame_with_a_header_no_honest_sender_writes_is_dropped_and_the_ring_kept() {
    use memchan_ip::ring::{self, Writer};
    if !root_with_tun() {
        return;
    }
    let (_topo, mut node, addr, f) = FakePeer::beside_a_node("vnet", &["--stats-secs", "1"]);
    let node_inc = f.theirs(ring::INC);
    let (us, bs) = (0x1234_5678u32, 0x9abc_def0u32);
    f.hello(
        u64::from(us) | (u64::from(bs) << 32),
        ring::FORMAT_VERSION,
        9,
        node_inc,
    );
    // An IPv4 packet from us to the node (protocol 253, for experiments: the kernel
    // takes it and drops it, the TUN write succeeds).
    let me = memchan_ip::Subnet::DEFAULT
        .addr_of(f.c.node_id().0)
        .expect("our address");
    let to: Ipv4Addr = addr.parse().unwrap();
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&20u16.to_be_bytes());
    ip[8] = 64;
    ip[9] = 253;
    ip[12..16].copy_from_slice(&me.octets());
    ip[16..20].copy_from_slice(&to.octets());
    let sum = ip
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum::<u32>();
    let sum = (sum & 0xffff) + (sum >> 16);
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    let frame = |gso_type: u8| {
        let mut v = vec![0u8, gso_type, 0, 0, 0, 0, 0, 0, 0, 0];
        v.extend_from_slice(&ip);
        v
    };
    let mut w = Writer { head: 0, seq: us };
    let (base, size) = (f.lay.uni(f.c.node_id().index()), f.lay.ring);
    w.push(&f.tx, base, size, &frame(1)).unwrap();
    w.push(&f.tx, base, size, &frame(0)).unwrap();
    let stats = |rest: &str| -> Vec<(String, u64)> {
        rest.split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
            .collect()
    };
    let seen = loop {
        let s = stats(&node.line("stats"));
        if counter(&s, "rx_packets") > 0 {
            break s;
        }
    };
    assert_eq!(counter(&seen, "rx_packets"), 1, "{seen:?}");
    assert_eq!(counter(&seen, "bad_frames"), 1, "{seen:?}");
    assert_eq!(counter(&seen, "bad_records"), 0, "{seen:?}");
    drop(f);
    node.stop();
}

#[test]
fn without_root_memchan_ip_names_the_problem() {
    if !root_with_tun() {
        return;
    }
    // As nobody: /dev/net/tun (mode 0600, root's) refuses the open.
    use std::os::unix::process::CommandExt;
    let cluster = unique("noroot");
    let out = Command::new(memchan_tests::memchan_exe())
        .args(["ip", "--cluster", &cluster])
        .env_remove("MEMCHAN_HUB")
        .uid(65534)
        .gid(65534)
        .stdin(Stdio::null())
        .output()
        .expect("run memchan ip as uid 65534");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not permitted") && err.contains("needs root (CAP_NET_ADMIN)"),
        "stderr:\n{err}"
    );
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|n| n.contains(&cluster))
        .collect();
    assert!(left.is_empty(), "left in /dev/shm: {left:?}");
}

/// `memchan status --cluster C --json` as uid 65534 (the counters are for any reader):
/// node id → its interface's counters.
fn ip_status_as_nobody(
    cluster: &str,
    dir: &str,
) -> std::collections::BTreeMap<u64, serde_json::Value> {
    use std::os::unix::process::CommandExt;
    let out = Command::new(memchan_tests::memchan_exe())
        .args(["status", "--cluster", cluster, "--json"])
        .env("MEMCHAN_IP_STATUS_DIR", dir)
        .uid(65534)
        .gid(65534)
        .stdin(Stdio::null())
        .output()
        .expect("run memchan status as uid 65534");
    assert!(
        out.status.success(),
        "memchan status as nobody: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("status --json");
    v["ip"]
        .as_array()
        .unwrap_or_else(|| panic!("no \"ip\" in {v}"))
        .iter()
        .map(|e| (e["node"].as_u64().expect("node"), e["counters"].clone()))
        .collect()
}

#[test]
fn counters_show_in_memchan_status_after_a_ping() {
    if !root_with_tun() {
        return;
    }
    need("ping");
    use std::os::unix::fs::DirBuilderExt;
    let dir = std::env::temp_dir().join(format!("memchan-ipst-{}", std::process::id()));
    std::fs::DirBuilder::new().mode(0o755).create(&dir).unwrap();
    let dir_s = dir.display().to_string();
    // The control block readable by others, so that nobody may ask for the report.
    let env = [
        ("MEMCHAN_IP_STATUS_DIR", dir_s.as_str()),
        ("MEMCHAN_SHM_MODE", "0644"),
    ];
    let (topo, _hub, a, _addr_a, b, addr_b) = two_nodes_with("ips", false, &env, &[]);
    let cluster = unique("ips");
    let ns_a = topo.hosts[0].ns.clone();
    wait_reachable(&topo, &ns_a, &addr_b);

    let get = |c: &serde_json::Value, k: &str| c[k].as_u64().unwrap_or(0);
    // Both interfaces are listed (each publishes as soon as it serves).
    let deadline = Instant::now() + WAIT;
    let before = loop {
        let st = ip_status_as_nobody(&cluster, &dir_s);
        if st.len() == 2 {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "not both interfaces listed: {st:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let (id_a, id_b) = {
        let mut ids = before.keys().copied();
        (ids.next().unwrap(), ids.next().unwrap())
    };
    let (got, text) = ping_received(&topo, &ns_a, &["-c", "3", "-i", "0.2", "-W", "5", &addr_b]);
    assert_eq!(got, 3, "ping {addr_b}:\n{text}");
    // The three echoes and their answers: A sent and received at least 3 packets more,
    // B too (published within about 100 ms; polled, with WAIT as the hang guard).
    let deadline = Instant::now() + WAIT;
    loop {
        let now = ip_status_as_nobody(&cluster, &dir_s);
        let moved = |id: u64, k: &str| get(&now[&id], k) >= get(&before[&id], k) + 3;
        // On one host both receivers spin after the small packets of an exchange
        // (the interactive spin's default).
        let spun = |id: u64| get(&now[&id], "spins") > get(&before[&id], "spins");
        if now.len() == 2
            && ["tx_packets", "rx_packets"]
                .iter()
                .all(|k| moved(id_a, k) && moved(id_b, k))
            && spun(id_a)
            && spun(id_b)
        {
            assert!(get(&now[&id_b], "rx_bytes") > get(&before[&id_b], "rx_bytes"));
            assert_eq!(get(&now[&id_b], "bad_records"), 0);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "counters did not move: before {before:?}, now {now:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The text report shows them too.
    let out = Command::new(memchan_tests::memchan_exe())
        .args(["status", "--cluster", &cluster])
        .env("MEMCHAN_IP_STATUS_DIR", &dir_s)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ip interfaces on this host: 2") && text.contains("rx_packets"),
        "{text}"
    );
    a.stop();
    b.stop();
    // A node that stops takes its file with it.
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert!(left.is_empty(), "left in {dir_s}: {left:?}");
    std::fs::remove_dir(&dir).unwrap();
}

/// A UDP socket in `ns` bound to `0.0.0.0:port`, joined to `group` on the interface
/// that has `iface` if given; reads time out after 100 ms (each read is one poll).
fn mc_receiver(ns: &str, port: u16, join: Option<(Ipv4Addr, Ipv4Addr)>) -> UdpSocket {
    let s = memchan_testkit::netns::in_ns(ns, move || {
        UdpSocket::bind(("0.0.0.0", port)).expect("bind the multicast receiver")
    });
    if let Some((group, iface)) = join {
        s.join_multicast_v4(&group, &iface)
            .expect("IP_ADD_MEMBERSHIP");
    }
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    s
}

/// Reads datagrams until none comes within a read timeout: their texts.
fn mc_drain(s: &UdpSocket) -> Vec<String> {
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while let Ok(n) = s.recv(&mut buf) {
        got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    got
}

/// Sends `text-i` from `tx` to `to` until `rx` receives one (at most [`WAIT`]).
fn mc_until_received(tx: &UdpSocket, to: (Ipv4Addr, u16), rx: &UdpSocket, text: &str) {
    let deadline = Instant::now() + WAIT;
    let mut buf = [0u8; 256];
    for i in 0.. {
        tx.send_to(format!("{text}-{i}").as_bytes(), to)
            .expect("send a multicast datagram");
        if let Ok(n) = rx.recv(&mut buf) {
            assert!(buf[..n].starts_with(text.as_bytes()));
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no `{text}` datagram arrived through memchan ip"
        );
    }
}

#[test]
fn multicast_reaches_the_members_of_its_group_only() {
    multicast_reaches_members_only("ipm", false);
}

#[test]
fn multicast_through_a_hub_reaches_the_members_of_its_group_only() {
    multicast_reaches_members_only("ipmh", true);
}

/// UDP multicast from A to group 239.7.7.7: B joined it, C did not (then does).
fn multicast_reaches_members_only(tag: &str, hub: bool) {
    if !root_with_tun() {
        return;
    }
    need("ping");
    let topo = Topology::one_machine(tag, 3);
    let cluster = unique(tag);
    let (_hub, listen) = if hub {
        let (c, l) = start_hub(&topo);
        (Some(c), l)
    } else {
        (None, String::new())
    };
    let env: Vec<(&str, &str)> = if hub {
        vec![("MEMCHAN_HUB", listen.as_str())]
    } else {
        Vec::new()
    };
    let mut nodes = Vec::new();
    let mut addrs = Vec::new();
    for h in &topo.hosts {
        let (p, a) = IpProc::spawn(&topo, &h.ns, &cluster, &env, &[]);
        nodes.push(p);
        addrs.push(a.parse::<Ipv4Addr>().unwrap());
    }
    let ns: Vec<String> = topo.hosts.iter().map(|h| h.ns.clone()).collect();
    wait_reachable(&topo, &ns[0], &addrs[1].to_string());
    wait_reachable(&topo, &ns[0], &addrs[2].to_string());

    let (group, port) = (Ipv4Addr::new(239, 7, 7, 7), 5401);
    let b = mc_receiver(&ns[1], port, Some((group, addrs[1])));
    let c = mc_receiver(&ns[2], port, None);
    let a_addr = addrs[0];
    let tx = memchan_testkit::netns::in_ns(&ns[0], move || {
        UdpSocket::bind((a_addr, 0)).expect("bind the multicast sender")
    });
    tx.set_multicast_ttl_v4(1).unwrap();
    // IP_MULTICAST_IF: out through memchan ip (the namespace has other links).
    let ifaddr = libc::in_addr {
        s_addr: u32::from(a_addr).to_be(),
    };
    // SAFETY: setsockopt(2) on our socket with a valid `in_addr` for the call.
    let rc = unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(&tx),
            libc::IPPROTO_IP,
            libc::IP_MULTICAST_IF,
            (&ifaddr as *const libc::in_addr).cast(),
            std::mem::size_of::<libc::in_addr>() as libc::socklen_t,
        )
    };
    assert_eq!(
        rc,
        0,
        "IP_MULTICAST_IF: {}",
        std::io::Error::last_os_error()
    );

    // B's membership travels to A (the kernel's list, then the header): A sends
    // until B hears, then 20 more, every one of which B gets, in order.
    mc_until_received(&tx, (group, port), &b, "first");
    mc_drain(&b);
    for i in 0..20 {
        tx.send_to(format!("m-{i}").as_bytes(), (group, port))
            .unwrap();
    }
    let expect: Vec<String> = (0..20).map(|i| format!("m-{i}")).collect();
    let mut got = Vec::new();
    let deadline = Instant::now() + WAIT;
    while got.len() < expect.len() && Instant::now() < deadline {
        got.extend(mc_drain(&b));
    }
    assert_eq!(got, expect, "B (a member) received");
    assert!(mc_drain(&c).is_empty(), "C (not a member) received");

    // C joins: now it hears too (its memory was reachable; it was left out by choice).
    c.join_multicast_v4(&group, &addrs[2])
        .expect("IP_ADD_MEMBERSHIP on C");
    mc_until_received(&tx, (group, port), &c, "late");
    assert!(
        mc_drain(&b).iter().any(|m| m.starts_with("late")),
        "B still hears the group"
    );

    let mut counters: Vec<Vec<(String, u64)>> = nodes.into_iter().map(IpProc::stop).collect();
    let (cc, cb, ca) = (
        counters.pop().unwrap(),
        counters.pop().unwrap(),
        counters.pop().unwrap(),
    );
    // Through the group, not the broadcast ring: A's multicast packets were written
    // to memchan groups, B read at least the 21 it delivered, and C only those
    // after it joined (its counter stays below B's).
    assert!(counter(&ca, "tx_multicast") >= 22, "A {ca:?}");
    assert_eq!(counter(&ca, "mc_fallback"), 0, "A {ca:?}");
    assert!(counter(&cb, "rx_multicast") >= 22, "B {cb:?}");
    assert!(counter(&cc, "rx_multicast") >= 1, "C {cc:?}");
    assert!(
        counter(&cc, "rx_multicast") < counter(&cb, "rx_multicast"),
        "C got what was sent before it joined: C {cc:?} B {cb:?}"
    );
    for c in [&ca, &cb, &cc] {
        assert_eq!(counter(c, "bad_records"), 0, "{c:?}");
    }
}
