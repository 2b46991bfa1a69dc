//! The hub's status as Prometheus metrics (`memchan hub --metrics`, `memchan status
//! --metrics`): a `prometheus-client` collector over one [`ClusterStatus`], and a tiny
//! blocking HTTP/1.1 server for `GET /metrics` that asks for a fresh status on every
//! scrape.
//!
//! The exposition is the OpenMetrics text format, written by `prometheus-client`. Per
//! member and per end of its link, every [`LinkCounters::fields`] entry becomes the
//! counter `memchan_link_<name>_total{node,incarnation,host,side="hub"|"node"}`; the
//! hub-wide figures are the gauges `memchan_epoch`, `memchan_members`,
//! `memchan_segments`, `memchan_groups`, `memchan_locks`, `memchan_uptime_seconds` and the counters
//! `memchan_isolations_total`, `memchan_joins_total`, `memchan_refused_total`.
//!
//! The server uses `std::net` only. It serves one connection at a time and bounds
//! what a client can cost it: at most [`MAX_REQUEST`] bytes of request, read within
//! [`REQUEST_TIMEOUT`] in total (not per read, so a client trickling one byte at a
//! time cannot hold it either), and the same timeout on writing the answer.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use memchan_core::status::{ClusterStatus, LinkCounters};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::TypedMetric;
use prometheus_client::registry::Registry;

/// The most request bytes (request line and headers) the server reads.
pub const MAX_REQUEST: usize = 8 * 1024;
/// How long a client has to send its whole request, and to take the answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// The `Content-Type` of the OpenMetrics text format that `prometheus-client` writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The labels of one end of one member's link.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct LinkEnd {
    node: u16,
    incarnation: u64,
    host: String,
    side: &'static str,
}

/// A [`Collector`] over one status snapshot: each scrape builds a registry holding
/// one of these with the hub's answer of that moment.
#[derive(Debug)]
struct StatusCollector(ClusterStatus);

impl Collector for StatusCollector {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let s = &self.0;
        let gauges: [(&str, &str, u64); 6] = [
            ("memchan_epoch", "current membership epoch", s.epoch),
            ("memchan_members", "live members", s.members.len() as u64),
            (
                "memchan_segments",
                "segments allocated",
                s.segments.len() as u64,
            ),
            ("memchan_groups", "multicast groups", s.groups.len() as u64),
            ("memchan_locks", "cluster locks", s.locks.len() as u64),
            (
                "memchan_uptime_seconds",
                "seconds since the hub started",
                s.uptime_s,
            ),
        ];
        for (name, help, v) in gauges {
            let g = ConstGauge::new(v);
            g.encode(enc.encode_descriptor(name, help, None, g.metric_type())?)?;
        }
        // Counter families are named without `_total`; their samples get it.
        let counters: [(&str, &str, u64); 3] = [
            (
                "memchan_isolations",
                "nodes isolated (declared failed) since the hub started",
                s.isolations,
            ),
            ("memchan_joins", "joins accepted", s.joins),
            (
                "memchan_refused",
                "connections that ended without a join (refused, over a cap, timed out, closed)",
                s.refused,
            ),
        ];
        for (name, help, v) in counters {
            let c = ConstCounter::new(v);
            c.encode(enc.encode_descriptor(name, help, None, c.metric_type())?)?;
        }
        let ends: Vec<(LinkEnd, [u64; 14])> = s
            .members
            .iter()
            .flat_map(|m| {
                [("hub", &m.hub_side), ("node", &m.node_side)].map(|(side, c)| {
                    let labels = LinkEnd {
                        node: m.node,
                        incarnation: m.incarnation,
                        host: m.host.clone(),
                        side,
                    };
                    (labels, c.fields().map(|(_, _, v)| v))
                })
            })
            .collect();
        for (i, (field, help, _)) in LinkCounters::default().fields().into_iter().enumerate() {
            let name = format!("memchan_link_{field}");
            let help = format!("{help} (per member and end of its link)");
            let mut family = enc.encode_descriptor(
                &name,
                &help,
                None,
                <ConstCounter<u64> as TypedMetric>::TYPE,
            )?;
            for (labels, values) in &ends {
                ConstCounter::new(values[i]).encode(family.encode_family(labels)?)?;
            }
        }
        Ok(())
    }
}

/// `s` in the OpenMetrics text format (ending in `# EOF`).
pub fn exposition(s: &ClusterStatus) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(StatusCollector(s.clone())));
    let mut out = String::with_capacity(1024 + s.members.len() * 24 * 128);
    prometheus_client::encoding::text::encode(&mut out, &registry)
        .expect("writing into a String does not fail");
    out
}

/// A running metrics server (see [`serve_metrics`]); dropping it stops its thread.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// The address the server listens on (with the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Unblock accept() by connecting to ourselves.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake.ip() {
                IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            });
        }
        let woke = TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok();
        if let Some(t) = self.thread.take() {
            // If we could not reach our own socket, do not wait on it: the thread
            // sees the flag at its next connection and exits then.
            if woke {
                let _ = t.join();
            }
        }
    }
}

/// Serves `GET /metrics` on `listen` (e.g. `"0.0.0.0:9464"`, port 0 for any) from a
/// thread of its own: `200` with `report()`'s text in the Prometheus text format, or
/// `503` with the error it returns; `404` for any other path, `405` for another
/// method, `400` for a malformed request, `408` when the request is not complete
/// within [`REQUEST_TIMEOUT`]. `HEAD` is answered like `GET`, without the body.
pub fn serve_metrics(
    listen: &str,
    report: impl Fn() -> Result<String, String> + Send + Sync + 'static,
) -> io::Result<MetricsServer> {
    let listener = TcpListener::bind(listen)?;
    let addr = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = thread::Builder::new()
        .name("memchan-metrics".into())
        .spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                match conn {
                    Ok(stream) => {
                        let _ = handle(stream, &report);
                    }
                    // Out of descriptors and the like: do not spin.
                    Err(_) => thread::sleep(Duration::from_millis(50)),
                }
            }
        })?;
    Ok(MetricsServer {
        addr,
        stop,
        thread: Some(thread),
    })
}

/// What reading a request came to.
enum Request {
    /// Method and path (query stripped) of a well-formed request.
    Ok {
        head: bool,
        method_ok: bool,
        path: String,
    },
    Malformed,
    TimedOut,
}

fn handle(mut stream: TcpStream, report: &dyn Fn() -> Result<String, String>) -> io::Result<()> {
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    let (status, body, content_type, head) = match read_request(&mut stream)? {
        Request::Malformed => ("400 Bad Request", "bad request\n".into(), None, false),
        Request::TimedOut => (
            "408 Request Timeout",
            "request timeout\n".into(),
            None,
            false,
        ),
        Request::Ok {
            method_ok: false,
            head,
            ..
        } => (
            "405 Method Not Allowed",
            "only GET and HEAD\n".into(),
            None,
            head,
        ),
        Request::Ok { path, head, .. } if path == "/metrics" => {
            match panic::catch_unwind(AssertUnwindSafe(report)) {
                Ok(Ok(text)) => ("200 OK", text, Some(CONTENT_TYPE), head),
                Ok(Err(e)) => ("503 Service Unavailable", format!("{e}\n"), None, head),
                Err(_) => (
                    "500 Internal Server Error",
                    "report panicked\n".into(),
                    None,
                    head,
                ),
            }
        }
        Request::Ok { head, .. } => (
            "404 Not Found",
            "not found; try /metrics\n".into(),
            None,
            head,
        ),
    };
    let mut resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
        content_type.unwrap_or("text/plain; charset=utf-8"),
        body.len()
    );
    if status.starts_with("405") {
        resp.push_str("Allow: GET, HEAD\r\n");
    }
    resp.push_str("Connection: close\r\n\r\n");
    let mut resp = resp.into_bytes();
    if !head {
        resp.extend_from_slice(body.as_bytes());
    }
    stream.write_all(&resp)?;
    stream.flush()?;
    linger(stream);
    Ok(())
}

/// Reads the request line and headers: at most [`MAX_REQUEST`] bytes, all within
/// [`REQUEST_TIMEOUT`].
fn read_request(stream: &mut TcpStream) -> io::Result<Request> {
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let mut buf = vec![0u8; MAX_REQUEST];
    let mut n = 0;
    let end = loop {
        if let Some(end) = header_end(&buf[..n]) {
            break end;
        }
        if n == MAX_REQUEST {
            return Ok(Request::Malformed);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Request::TimedOut);
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf[n..]) {
            // The client stopped sending before the end of its headers.
            Ok(0) => return Ok(Request::Malformed),
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::TimedOut =>
            {
                return Ok(Request::TimedOut)
            }
            Err(e) => return Err(e),
        }
    };
    Ok(parse_request(&buf[..end]))
}

/// The length of the head up to its blank line ("\r\n\r\n", or a lenient "\n\n").
fn header_end(b: &[u8]) -> Option<usize> {
    let crlf = b.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    let lf = b.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn parse_request(head: &[u8]) -> Request {
    let Ok(head) = std::str::from_utf8(head) else {
        return Request::Malformed;
    };
    let mut lines = head
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .take_while(|l| !l.is_empty());
    let Some(line) = lines.next() else {
        return Request::Malformed;
    };
    let parts: Vec<&str> = line.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return Request::Malformed;
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
    };
    if !token(method)
        || !target.starts_with('/')
        || target.bytes().any(|c| c <= b' ' || c == 0x7f)
        || !matches!(version, "HTTP/1.0" | "HTTP/1.1")
    {
        return Request::Malformed;
    }
    for h in lines {
        match h.split_once(':') {
            Some((name, _)) if token(name) => {}
            _ => return Request::Malformed,
        }
    }
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    Request::Ok {
        head: method == "HEAD",
        method_ok: matches!(method, "GET" | "HEAD"),
        path: path.to_string(),
    }
}

/// Closes after the answer is sent without resetting it away: a close with unread
/// request bytes makes the kernel send RST, which can destroy the answer before the
/// client reads it. So read (and drop) what is left, briefly and boundedly.
fn linger(mut stream: TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let deadline = Instant::now() + Duration::from_millis(200);
    let mut sink = [0u8; 4096];
    let mut total = 0;
    while total < 64 * 1024 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(k) => total += k,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memchan_core::status::{GroupStatus, LockStatus, MemberStatus, SegmentStatus};

    fn counters(base: u64) -> LinkCounters {
        LinkCounters {
            frames_tx: base + 1,
            frames_rx: base + 2,
            bytes_tx: base + 3,
            bytes_rx: base + 4,
            crc_failures: base + 5,
            retransmits: base + 6,
            discards: base + 7,
            duplicates: base + 8,
            replays: base + 13,
            naks: base + 9,
            backpressure_waits: base + 10,
            mac_failures: base + 11,
            tcp_retransmits: base + 12,
            reader_wakeups: base + 14,
        }
    }

    fn status() -> ClusterStatus {
        ClusterStatus {
            cluster: "c".into(),
            listen: "0.0.0.0:7000".into(),
            protocol: 1,
            epoch: 42,
            page_size: 4096,
            keyed: true,
            members: vec![
                MemberStatus {
                    node: 3,
                    incarnation: 7,
                    host: "h1".into(),
                    pid: 100,
                    uid: 0,
                    addr: "10.0.0.1:5000".into(),
                    joined_epoch: 1,
                    last_heard_ms: 5,
                    barriers: 0,
                    hub_side: counters(100),
                    node_side: counters(200),
                    clock_bound_ns: None,
                },
                MemberStatus {
                    node: 9,
                    incarnation: 1,
                    host: "we\"ird\\host\nname".into(),
                    pid: 200,
                    uid: 1000,
                    addr: "local".into(),
                    joined_epoch: 2,
                    last_heard_ms: 0,
                    barriers: 0,
                    hub_side: counters(300),
                    node_side: counters(400),
                    clock_bound_ns: None,
                },
            ],
            segments: vec![SegmentStatus::default(); 5],
            groups: vec![GroupStatus::default(); 2],
            locks: vec![LockStatus::default(); 3],
            transport: "hub".into(),
            isolations: 1,
            joins: 11,
            refused: 4,
            uptime_s: 3600,
            rail: None,
        }
    }

    /// The sample lines (not comments) of an exposition.
    fn samples(text: &str) -> Vec<&str> {
        text.lines().filter(|l| !l.starts_with('#')).collect()
    }

    #[test]
    fn renders_every_family_and_counter() {
        let st = status();
        let text = exposition(&st);
        let lines = samples(&text);
        for line in [
            "memchan_epoch 42",
            "memchan_members 2",
            "memchan_segments 5",
            "memchan_groups 2",
            "memchan_locks 3",
            "memchan_uptime_seconds 3600",
            "memchan_isolations_total 1",
            "memchan_joins_total 11",
            "memchan_refused_total 4",
        ] {
            assert!(lines.contains(&line), "no `{line}` in\n{text}");
        }
        for kind in ["memchan_epoch", "memchan_members", "memchan_uptime_seconds"] {
            assert!(text.contains(&format!("# TYPE {kind} gauge\n")), "{text}");
        }
        assert!(text.contains("# TYPE memchan_joins counter\n"), "{text}");
        for m in &st.members[..1] {
            for (side, c) in [("hub", &m.hub_side), ("node", &m.node_side)] {
                for (field, _, v) in c.fields() {
                    assert!(text.contains(&format!("# TYPE memchan_link_{field} counter\n")));
                    let line = format!(
                        "memchan_link_{field}_total{{node=\"{}\",incarnation=\"{}\",host=\"{}\",side=\"{side}\"}} {v}",
                        m.node, m.incarnation, m.host
                    );
                    assert!(lines.contains(&line.as_str()), "no `{line}` in\n{text}");
                }
            }
        }
        // Every sample: 8 hub-wide, one per counter per end of each member's link.
        let per_end = LinkCounters::default().fields().len();
        assert_eq!(lines.len(), 9 + 2 * 2 * per_end, "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn label_values_are_escaped() {
        let text = exposition(&status());
        assert!(
            text.contains(
                "memchan_link_naks_total{node=\"9\",incarnation=\"1\",host=\"we\\\"ird\\\\host\\nname\",side=\"hub\"} 309\n"
            ),
            "{text}"
        );
        // The raw newline never reaches the output inside a label.
        assert!(!text.contains("host\nname"));
    }

    #[test]
    fn an_empty_status_has_the_hub_wide_samples_only() {
        let text = exposition(&ClusterStatus::default());
        let lines = samples(&text);
        assert_eq!(lines.len(), 9, "{text}");
        assert!(lines.iter().all(|l| l.ends_with(" 0")), "{text}");
    }

    /// Sends `req` and returns (status code, headers, body).
    fn http(addr: SocketAddr, req: &[u8]) -> (u16, String, String) {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(req).unwrap();
        let mut resp = Vec::new();
        s.read_to_end(&mut resp).unwrap();
        let resp = String::from_utf8(resp).unwrap();
        let (head, body) = resp.split_once("\r\n\r\n").expect("response head");
        let code = head
            .strip_prefix("HTTP/1.1 ")
            .and_then(|r| r.get(..3))
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("status line: {head}"));
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .expect("content-length")
            .parse()
            .unwrap();
        if !req.starts_with(b"HEAD ") {
            assert_eq!(len, body.len());
        }
        (code, head.to_string(), body.to_string())
    }

    #[test]
    fn serves_metrics_over_http() {
        let st = status();
        let want = exposition(&st);
        let srv = serve_metrics("127.0.0.1:0", move || Ok(exposition(&st))).unwrap();
        let addr = srv.local_addr();
        assert_ne!(addr.port(), 0);

        let (code, head, body) = http(
            addr,
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
        );
        assert_eq!(code, 200);
        assert!(
            head.contains("Content-Type: application/openmetrics-text; version=1.0.0"),
            "{head}"
        );
        assert_eq!(body, want);

        let (code, _, body) = http(addr, b"GET /metrics?x=1 HTTP/1.0\r\n\r\n");
        assert_eq!((code, body.as_str()), (200, want.as_str()));

        let (code, _, body) = http(addr, b"HEAD /metrics HTTP/1.1\r\n\r\n");
        assert_eq!((code, body.as_str()), (200, ""));

        let (code, _, _) = http(addr, b"GET /other HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(code, 404);

        let (code, head, _) = http(addr, b"POST /metrics HTTP/1.1\r\n\r\n");
        assert_eq!(code, 405);
        assert!(head.contains("Allow: GET, HEAD"));

        for garbage in [
            &b"garbage\r\n\r\n"[..],
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n\n",
            b"GET /metrics\r\n\r\n",
            b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n",
            b"GET  /metrics HTTP/1.1\r\n\r\n",
            b"GET metrics HTTP/1.1\r\n\r\n",
            b"\r\n\r\n",
        ] {
            let (code, _, _) = http(addr, garbage);
            assert_eq!(code, 400, "{:?}", String::from_utf8_lossy(garbage));
        }
        // More than MAX_REQUEST bytes without a blank line.
        let (code, _, _) = http(addr, &vec![b'A'; MAX_REQUEST + 100]);
        assert_eq!(code, 400);
        // Half a request, then EOF.
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"GET /metr").unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        assert!(resp.starts_with("HTTP/1.1 400 "), "{resp}");

        // Still serving after all that.
        assert_eq!(http(addr, b"GET /metrics HTTP/1.1\r\n\r\n").0, 200);

        drop(srv);
        // The thread is gone and the listener with it.
        assert!(TcpStream::connect(addr).is_err());
    }

    #[test]
    fn report_errors_are_503_and_panics_500() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let c = calls.clone();
        let srv = serve_metrics("127.0.0.1:0", move || {
            match c.fetch_add(1, Ordering::SeqCst) {
                0 => Err("hub unreachable".to_string()),
                1 => panic!("report bug"),
                _ => Ok("up 1\n".to_string()),
            }
        })
        .unwrap();
        let addr = srv.local_addr();
        let (code, _, body) = http(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert_eq!((code, body.as_str()), (503, "hub unreachable\n"));
        let (code, _, _) = http(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert_eq!(code, 500);
        let (code, _, body) = http(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert_eq!((code, body.as_str()), (200, "up 1\n"));
    }

    #[test]
    fn a_silent_client_cannot_hang_the_server() {
        let srv = serve_metrics("127.0.0.1:0", || Ok("up 1\n".to_string())).unwrap();
        let addr = srv.local_addr();
        // Connects, sends a few bytes, then nothing: the server gives up on it (408)
        // and serves the next client.
        let mut idle = TcpStream::connect(addr).unwrap();
        idle.write_all(b"GET /").unwrap();
        let (code, _, _) = http(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert_eq!(code, 200);
        let mut resp = String::new();
        idle.set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        idle.read_to_string(&mut resp).unwrap();
        assert!(resp.starts_with("HTTP/1.1 408 "), "{resp}");
    }
}
