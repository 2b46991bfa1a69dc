//! `memchan status` on both transports: the same cluster (two members, a segment
//! mapped rx by one, a group, a held lock) reads the same through `--cluster` on one
//! host and through `--hub`, as JSON, as text and as Prometheus metrics.

use memchan::{Cluster, Config, Dest, HubSpec, TxAttrs};
use memchan_core::status::ClusterStatus;
use std::process::Command;

fn memchan(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(memchan_tests::memchan_exe())
        .env_remove("MEMCHAN_HUB")
        .env_remove("MEMCHAN_KEY_FILE")
        .args(args)
        .output()
        .expect("run memchan");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// Builds the scenario on `cfg`'s transport, then asks `status` with `how`.
fn scenario(name: &str, cfg: Config, how: &[&str]) -> (ClusterStatus, String) {
    let a = Cluster::join_with(name, cfg.clone()).unwrap();
    let b = Cluster::join_with(name, cfg).unwrap();
    let seg = b.segment("inbox", 4096, 0o640).unwrap();
    let _rx = seg.map_rx().unwrap();
    let tx = a
        .segment("inbox", 4096, 0o640)
        .unwrap()
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    tx.write_u64(0, 1).unwrap();
    a.create_group("pair", &[a.node_id(), b.node_id()]).unwrap();
    let lock = a.lock("counter").unwrap();
    let held = lock.acquire().unwrap();
    a.ack().unwrap();
    let mut args = vec!["status", "--json"];
    args.extend_from_slice(how);
    let (ok, out, err) = memchan(&args);
    assert!(ok, "status --json failed: {err}");
    let st: ClusterStatus = serde_json::from_str(&out).unwrap();
    let mut args = vec!["status"];
    args.extend_from_slice(how);
    let (ok, text, err) = memchan(&args);
    assert!(ok, "status failed: {err}");
    held.release().unwrap();
    (st, text)
}

fn check(st: &ClusterStatus, text: &str, transport: &str, name: &str) {
    assert_eq!(
        (st.cluster.as_str(), st.transport.as_str()),
        (name, transport)
    );
    assert_eq!(st.members.len(), 2, "{st:?}");
    assert!(st.members.iter().all(|m| m.pid == std::process::id()));
    assert_eq!(
        st.segments.len(),
        1,
        "lock pages are listed as locks: {st:?}"
    );
    let s = &st.segments[0];
    assert_eq!((s.name.as_str(), s.size, s.mode), ("inbox", 4096, 0o640));
    assert_eq!(s.rx, vec![st.members[1].node]);
    assert_eq!(st.groups.len(), 1);
    assert_eq!(st.groups[0].name, "pair");
    assert_eq!(st.groups[0].members.len(), 2);
    assert_eq!(st.locks.len(), 1);
    assert_eq!(st.locks[0].name, "counter");
    assert_eq!(st.locks[0].bidders, vec![st.members[0].node], "the holder");
    assert!(st.joins >= 2);
    for section in [
        "members: 2",
        "segments: 1",
        "groups: 1",
        "locks: 1",
        "inbox",
        "counter",
    ] {
        assert!(text.contains(section), "{section}: {text}");
    }
}

#[test]
fn status_reads_the_same_on_one_host_and_through_a_hub() {
    let name = format!("status-both-{}", std::process::id());
    let local = Config::default().without_hub();
    let (st, text) = scenario(&name, local, &["--cluster", &name]);
    check(&st, &text, "shm", &name);
    assert!(text.contains("links: none"), "{text}");

    let hub = memchan_hub::Hub::start(Default::default()).unwrap();
    let addr = hub.local_addr().to_string();
    let via_hub = Config::default().with_hub(HubSpec::connect(addr.clone()));
    let (st, text) = scenario(&name, via_hub, &["--hub", &addr]);
    check(&st, &text, "hub", &name);
    assert!(text.contains("links (hub side"), "{text}");
}

#[test]
fn status_of_a_cluster_that_is_not_here_says_so() {
    let (ok, _, err) = memchan(&["status", "--cluster", "no-such-cluster-here"]);
    assert!(!ok);
    assert!(
        err.contains("no cluster `no-such-cluster-here` on this host"),
        "{err}"
    );
    let (ok, _, err) = memchan(&["status", "--cluster", "../etc"]);
    assert!(!ok);
    assert!(err.contains("invalid cluster name"), "{err}");
    let (ok, _, err) = memchan(&["status"]);
    assert!(!ok);
    assert!(err.contains("--cluster NAME"), "{err}");
}

#[test]
fn a_one_host_cluster_is_served_as_prometheus_metrics_too() {
    use std::io::{BufRead, BufReader, Read, Write};
    let name = format!("status-metrics-{}", std::process::id());
    let cfg = Config::default().without_hub();
    let a = Cluster::join_with(&name, cfg.clone()).unwrap();
    let _b = Cluster::join_with(&name, cfg).unwrap();
    let _seg = a.segment("m", 4096, 0o600).unwrap();
    let mut child = Command::new(memchan_tests::memchan_exe())
        .args(["status", "--cluster", &name, "--metrics", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .trim()
        .strip_prefix("metrics ")
        .expect("metrics ADDR line");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    for line in ["memchan_members 2", "memchan_segments 1", "memchan_locks 0"] {
        assert!(body.lines().any(|l| l == line), "no `{line}` in {body}");
    }
}
