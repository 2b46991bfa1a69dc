//! End-to-end tests of `memchan hub` and `memchan status`: the real binary runs the
//! hub, two nodes of this test process join it with a cluster key and write, and
//! `memchan status` (JSON, text, Prometheus) must show them and their links.

#[allow(dead_code)]
mod common;
use common::{bin, join, text, Proc, TempFile, WAIT};

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output};

use memchan::{Dest, TxAttrs};
use memchan_core::status::{ClusterStatus, LinkCounters};

/// Runs a short `memchan` command to completion (bounded by WAIT).
fn run(args: &[&str]) -> Output {
    let mut cmd = bin();
    cmd.args(args);
    run_cmd(cmd)
}

/// Runs `cmd` to completion, killing it if it outlives WAIT.
fn run_cmd(cmd: Command) -> Output {
    common::output(cmd, WAIT)
}

/// `GET /metrics` with a plain socket: (status code, body).
fn get_metrics(addr: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect to metrics");
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").expect("HTTP response");
    let code = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("status line: {head}"));
    (code, body.to_string())
}

fn status_json(hub: &str, key: &Path) -> ClusterStatus {
    let out = run(&[
        "status",
        "--hub",
        hub,
        "--key-file",
        key.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "status --json failed: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("status JSON: {e}\n{}", text(&out.stdout)))
}

#[test]
fn hub_and_status_end_to_end() {
    let key = TempFile::new("key", "the cluster secret\n");
    let wrong = TempFile::new("wrong-key", "another secret\n");
    let keyp = key.0.to_str().unwrap();
    let mut hub = Proc::spawn(&[
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        keyp,
        "--metrics",
        "127.0.0.1:0",
    ]);
    let addr = hub.expect_line("listening");
    let metrics = hub.expect_line("metrics");
    assert!(!addr.ends_with(":0") && !metrics.ends_with(":0"));

    let cluster = format!("hubcli-{}", std::process::id());
    let a = join(&cluster, &addr, &key.0);
    let b = join(&cluster, &addr, &key.0);
    a.wait_for_members(2, WAIT).unwrap();
    let rx = b.segment("inbox", 4096, 0o600).unwrap().map_rx().unwrap();
    let tx = a
        .segment("inbox", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    for i in 0..64u64 {
        tx.write_u64(8 * i as usize, i + 1).unwrap();
    }
    a.ack().unwrap();
    assert_eq!(rx.load_u64(8 * 63).unwrap(), 64);

    // JSON: both members, traffic on the hub's end of each link.
    let st = status_json(&addr, &key.0);
    assert_eq!(st.cluster, cluster);
    assert_eq!(st.listen, addr);
    assert!(st.keyed);
    assert_eq!(st.page_size, 4096);
    assert_eq!(st.members.len(), 2, "{st:?}");
    assert_eq!(st.joins, 2);
    for m in &st.members {
        assert!(m.hub_side.frames_rx > 0, "{m:?}");
        assert!(m.hub_side.bytes_tx > 0, "{m:?}");
        assert_eq!(m.pid, std::process::id());
    }
    let mut ids: Vec<u16> = st.members.iter().map(|m| m.node).collect();
    ids.sort();
    let mut want = vec![a.node_id().0, b.node_id().0];
    want.sort();
    assert_eq!(ids, want);

    // Text: the header, the members and every counter name of the links table.
    let out = run(&["status", "--hub", &addr, "--key-file", keyp]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    for want in [
        &format!("cluster:   {cluster}")[..],
        "keyed:     yes",
        "members: 2",
        "incarnation",
        "last_heard_ms",
        "clock_bound_ns",
    ] {
        assert!(t.contains(want), "no `{want}` in:\n{t}");
    }
    for (name, _, _) in LinkCounters::default().fields() {
        assert!(t.contains(name), "no `{name}` in:\n{t}");
    }
    for side in ["hub", "node"] {
        let rows = t
            .lines()
            .filter(|l| l.split_whitespace().nth(1) == Some(side))
            .count();
        assert_eq!(rows, 2, "{side} rows in:\n{t}");
    }

    // The hub's own Prometheus endpoint.
    let (code, body) = get_metrics(&metrics);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\nmemchan_members 2\n"), "{body}");
    assert!(
        body.lines()
            .any(|l| l.starts_with("memchan_link_crc_failures_total{")),
        "{body}"
    );

    // `memchan status --metrics`: the same, asking the hub on each scrape.
    let mut scraper = Proc::spawn(&[
        "status",
        "--hub",
        &addr,
        "--key-file",
        keyp,
        "--metrics",
        "127.0.0.1:0",
    ]);
    let scrape = scraper.expect_line("metrics");
    let (code, body) = get_metrics(&scrape);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\nmemchan_members 2\n"), "{body}");
    assert!(body.contains("memchan_link_frames_rx_total{"), "{body}");
    scraper.terminate();

    // A wrong key is refused, and the message says so.
    let out = run(&[
        "status",
        "--hub",
        &addr,
        "--key-file",
        wrong.0.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("key"), "{err}");
    assert!(err.starts_with("memchan status: "), "{err}");
    assert!(out.stdout.is_empty());

    drop(rx);
    drop(tx);
    a.leave();
    b.leave();
    let err = hub.terminate();
    assert!(err.contains("joined"), "{err}");
    assert!(err.contains("refused"), "{err}");
    assert!(!err.contains("no cluster key"), "{err}");
}

#[test]
fn status_of_an_unreachable_hub_fails_clearly() {
    let out = run(&["status", "--hub", "127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("memchan status: cannot reach hub 127.0.0.1:1: "),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    // With no hub named at all.
    let out = run(&["status", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("MEMCHAN_HUB") && err.contains("--hub"),
        "{err}"
    );

    // A scraper whose hub is gone answers 503, and still stops cleanly.
    let mut scraper = Proc::spawn(&["status", "--hub", "127.0.0.1:1", "--metrics", "127.0.0.1:0"]);
    let scrape = scraper.expect_line("metrics");
    let (code, body) = get_metrics(&scrape);
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("cannot reach hub 127.0.0.1:1"), "{body}");
    scraper.terminate();
}

#[test]
fn an_open_hub_warns_and_reads_the_environment() {
    // No key: a warning. MEMCHAN_HUB names the hub for status.
    let mut hub = Proc::spawn(&[
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--cluster",
        "open-one",
        "--page-size",
        "8192",
    ]);
    let addr = hub.expect_line("listening");
    let mut cmd = bin();
    cmd.args(["status", "--json"]).env("MEMCHAN_HUB", &addr);
    let out = run_cmd(cmd);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let st: ClusterStatus = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            st.cluster.as_str(),
            st.page_size,
            st.keyed,
            st.members.len()
        ),
        ("open-one", 8192, false, 0)
    );
    let err = hub.terminate();
    let warning = format!("no cluster key: any process that reaches {addr} may join");
    assert!(err.contains(&warning), "{err}");
}

#[test]
fn hub_options_are_checked() {
    let out = run(&["hub", "--listen", "127.0.0.1:0", "--page-size", "1000"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("page size"),
        "{}",
        text(&out.stderr)
    );

    let out = run(&[
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--heartbeat-ms",
        "500",
        "--failure-timeout-ms",
        "100",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--failure-timeout-ms"));

    let out = run(&[
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        "/nonexistent/key",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("/nonexistent/key"),
        "{}",
        text(&out.stderr)
    );
}

/// Dual rail with the real binary: `memchan hub --rail` and `memchan hub --standby-of`,
/// two nodes joined with `ACTIVE,STANDBY`. `memchan status --hub ACTIVE,STANDBY` shows
/// both rails (active ordering, standby copying); once the active hub is killed the
/// nodes go on through the standby, and status shows the active unreachable and the
/// standby serving the cluster with both members.
#[test]
fn status_shows_both_rails_before_and_after_a_switch() {
    let key = TempFile::new("rail-key", "the rail secret\n");
    let keyp = key.0.to_str().unwrap();
    let mut active = Proc::spawn(&[
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        keyp,
        "--rail",
    ]);
    let a_addr = active.expect_line("listening");
    let mut standby = Proc::spawn(&[
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        keyp,
        "--standby-of",
        &a_addr,
    ]);
    let b_addr = standby.expect_line("listening");
    let rails = format!("{a_addr},{b_addr}");
    let cluster = format!("railcli-{}", std::process::id());
    let a = join(&cluster, &rails, &key.0);
    let b = join(&cluster, &rails, &key.0);
    a.wait_for_members(2, WAIT).unwrap();
    let rx = b.segment("inbox", 4096, 0o600).unwrap().map_rx().unwrap();
    let tx = a
        .segment("inbox", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    tx.write_u64(0, 1).unwrap();
    a.ack().unwrap();
    let show = || {
        let out = run(&["status", "--hub", &rails, "--key-file", keyp]);
        assert!(out.status.success(), "status failed: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let row = |out: &str, addr: &str| -> String {
        out.lines()
            .find(|l| l.contains(addr) && !l.starts_with("hub:"))
            .unwrap_or_else(|| panic!("no rail row for {addr}:\n{out}"))
            .to_string()
    };
    // A copy of the tables taken after the set-up (the active sends one every
    // heartbeat, and on every table change before it answers it).
    let set_up = std::time::Instant::now();
    let deadline = set_up + WAIT;
    loop {
        let r = status_json(&b_addr, &key.0)
            .rail
            .expect("the standby's rail status");
        assert_eq!(r.role, "standby", "{r:?}");
        if r.mirrored_ms_ago
            .is_some_and(|ms| u128::from(ms) < set_up.elapsed().as_millis())
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the standby never copied: {r:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let before = show();
    println!("{before}");
    assert!(before.starts_with("rails: 2"), "{before}");
    assert!(row(&before, &a_addr).contains("active"), "{before}");
    assert!(row(&before, &b_addr).contains("standby"), "{before}");
    assert!(before.contains("members: 2"), "{before}");

    drop(active); // SIGKILL
    tx.write_u64(0, 2).unwrap();
    a.ack().unwrap();
    assert_eq!(rx.load_u64(0).unwrap(), 2);
    let after = show();
    println!("{after}");
    assert!(row(&after, &a_addr).contains("unreachable"), "{after}");
    assert!(row(&after, &b_addr).contains("took over"), "{after}");
    assert!(after.contains("members: 2"), "{after}");
    let out = run(&["status", "--hub", &rails, "--key-file", keyp, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rails"][1]["role"], "took over", "{v}");
    assert_eq!(v["rail"]["resumed"], serde_json::json!([0, 1]), "{v}");
    drop((a, b));
    standby.terminate();
}

/// Dual rail: the tables reach the standby before the active answers the node that
/// changed them. With a heartbeat of seconds (a copy taken by polling would be that
/// old), a node makes a segment, maps it rx, and the other writes it; the active hub
/// is SIGKILLed at once, and the writes after the switch arrive at the standby.
#[test]
fn a_segment_made_right_before_a_switch_keeps_its_writes() {
    let key = TempFile::new("rail-late-key", "the rail secret\n");
    let keyp = key.0.to_str().unwrap();
    let slow = ["--heartbeat-ms", "3000", "--failure-timeout-ms", "12000"];
    let mut args = vec![
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        keyp,
        "--rail",
    ];
    args.extend(slow);
    let mut active = Proc::spawn(&args);
    let a_addr = active.expect_line("listening");
    let mut args = vec!["hub", "--listen", "127.0.0.1:0", "--key-file", keyp];
    args.extend(["--standby-of", &a_addr]);
    args.extend(slow);
    let mut standby = Proc::spawn(&args);
    let b_addr = standby.expect_line("listening");
    let rails = format!("{a_addr},{b_addr}");
    let cluster = format!("raillate-{}", std::process::id());
    let a = join(&cluster, &rails, &key.0);
    let b = join(&cluster, &rails, &key.0);
    a.wait_for_members(2, WAIT).unwrap();
    // The standby knows both members (a node it does not know is refused at the switch).
    let joined = std::time::Instant::now();
    let deadline = joined + WAIT;
    // Until a copy taken after both joins (the milliseconds are whole: one more).
    while status_json(&b_addr, &key.0)
        .rail
        .and_then(|r| r.mirrored_ms_ago)
        .is_none_or(|ms| u128::from(ms) + 1 >= joined.elapsed().as_millis())
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the standby never copied"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Made, mapped and written within one heartbeat, right before the active dies.
    let rx = b.segment("late", 4096, 0o600).unwrap().map_rx().unwrap();
    let tx = a
        .segment("late", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    tx.write_u64(0, 1).unwrap();
    a.ack().unwrap();
    assert_eq!(rx.load_u64(0).unwrap(), 1);
    drop(active); // SIGKILL
    for v in 2..=50u64 {
        tx.write_u64(8 * (v as usize % 8), v).unwrap();
    }
    a.ack().unwrap();
    for v in 43..=50u64 {
        assert_eq!(
            rx.load_u64(8 * (v as usize % 8)).unwrap(),
            v,
            "write {v} lost"
        );
    }
    let r = status_json(&b_addr, &key.0).rail.expect("rail status");
    assert_eq!(r.role, "took over", "{r:?}");
    drop((tx, rx, a, b));
    standby.terminate();
}

/// Dual rail: a standby that stops confirming is dropped from the mirror set (the
/// cluster goes on), and if it takes over anyway with its stale copy, a write to a
/// segment made after the drop fails the writer's `ack` by name instead of vanishing.
#[test]
fn a_stale_standby_refuses_writes_to_a_segment_it_never_learnt() {
    let key = TempFile::new("rail-stale-key", "the rail secret\n");
    let keyp = key.0.to_str().unwrap();
    // The default timing, the nodes' too: the active waits for a receipt a quarter of
    // the failure timeout, so the nodes' links never go silent meanwhile.
    let args = [
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        keyp,
        "--rail",
    ];
    let mut active = Proc::spawn(&args);
    let a_addr = active.expect_line("listening");
    let mut standby = Proc::spawn(&[
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        keyp,
        "--standby-of",
        &a_addr,
    ]);
    let b_addr = standby.expect_line("listening");
    let rails = format!("{a_addr},{b_addr}");
    let cluster = format!("railstale-{}", std::process::id());
    // Joins are answered only once the standby confirmed them: it knows both.
    let a = join(&cluster, &rails, &key.0);
    let b = join(&cluster, &rails, &key.0);
    a.wait_for_members(2, WAIT).unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    while status_json(&b_addr, &key.0)
        .rail
        .and_then(|r| r.mirrored_ms_ago)
        .is_none()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the standby never copied"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let standby_pid = standby.child.id() as libc::pid_t;
    // SAFETY: kill(2) on our own child's pid (not reaped: `standby` holds it).
    assert_eq!(unsafe { libc::kill(standby_pid, libc::SIGSTOP) }, 0);
    let deadline = std::time::Instant::now() + WAIT;
    while !active
        .stderr()
        .contains("standby dropped from the mirror set")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the stopped standby was never dropped:\n{}",
            active.stderr()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The cluster goes on without it.
    let rx = b.segment("unseen", 4096, 0o600).unwrap().map_rx().unwrap();
    let tx = a
        .segment("unseen", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    tx.write_u64(0, 1).unwrap();
    a.ack().unwrap();
    assert_eq!(rx.load_u64(0).unwrap(), 1);
    let active_log = active.stderr();
    drop(active); // SIGKILL
                  // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(standby_pid, libc::SIGCONT) }, 0);
    tx.write_u64(0, 2).unwrap();
    match a.ack() {
        Err(memchan::Error::UnknownSegment(what)) => {
            assert!(what.contains("never learnt"), "{what}")
        }
        other => panic!(
            "a write to a segment the standby never learnt: {other:?}\nactive:\n{active_log}\nstandby:\n{}\n{:?}",
            standby.stderr(), status_json(&b_addr, &key.0).segments
        ),
    }
    assert_eq!(rx.load_u64(0).unwrap(), 1);
    let r = status_json(&b_addr, &key.0).rail.expect("rail status");
    assert_eq!(r.role, "took over", "{r:?}");
    drop((tx, rx, a, b));
    standby.terminate();
}
