//! The hub's status as Prometheus metrics: the text exposition format (0.0.4) and a
//! tiny blocking HTTP/1.1 server for `GET /metrics`.
//!
//! The server uses `std::net` only. It serves one connection at a time and bounds
//! what a client can cost it: at most [`MAX_REQUEST`] bytes of request, read within
//! [`REQUEST_TIMEOUT`] in total (not per read, so a client trickling one byte at a
//! time cannot hold it either), and the same timeout on writing the answer.

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::status::{HubStatus, LinkCounters};

/// The most request bytes (request line and headers) the server reads.
pub const MAX_REQUEST: usize = 8 * 1024;
/// How long a client has to send its whole request, and to take the answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// The `Content-Type` of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Renders `s` in the Prometheus text exposition format 0.0.4: one `# HELP` and one
/// `# TYPE` line per metric family, then its samples; families are not interleaved.
///
/// Per member and per end of its link, every [`LinkCounters::fields`] entry becomes
/// `memchan_link_<name>_total{node,incarnation,host,side="hub"|"node"}`.
pub fn prometheus(s: &HubStatus) -> String {
    let mut out = String::with_capacity(1024 + s.members.len() * 24 * 128);
    let gauges: [(&str, &str, u64); 5] = [
        ("memchan_epoch", "current membership epoch", s.epoch),
        ("memchan_members", "live members", s.members.len() as u64),
        ("memchan_segments", "segments allocated", s.segments as u64),
        ("memchan_groups", "multicast groups", s.groups as u64),
        (
            "memchan_uptime_seconds",
            "seconds since the hub started",
            s.uptime_s,
        ),
    ];
    for (name, help, v) in gauges {
        family(&mut out, name, help, "gauge");
        let _ = writeln!(out, "{name} {v}");
    }
    let counters: [(&str, &str, u64); 3] = [
        (
            "memchan_isolations_total",
            "nodes isolated (declared failed) since the hub started",
            s.isolations,
        ),
        ("memchan_joins_total", "joins accepted", s.joins),
        (
            "memchan_refused_total",
            "connections refused (wrong key, wrong version, garbage, bad join)",
            s.refused,
        ),
    ];
    for (name, help, v) in counters {
        family(&mut out, name, help, "counter");
        let _ = writeln!(out, "{name} {v}");
    }

    // The labels of every member's two link ends, escaped once.
    let ends: Vec<(String, [u64; 12])> = s
        .members
        .iter()
        .flat_map(|m| {
            let mut host = String::new();
            escape_label(&m.host, &mut host);
            [("hub", &m.hub_side), ("node", &m.node_side)].map(|(side, c)| {
                (
                    format!(
                        "node=\"{}\",incarnation=\"{}\",host=\"{host}\",side=\"{side}\"",
                        m.node, m.incarnation
                    ),
                    c.fields().map(|(_, _, v)| v),
                )
            })
        })
        .collect();
    for (i, (name, help, _)) in LinkCounters::default().fields().into_iter().enumerate() {
        let metric = format!("memchan_link_{name}_total");
        family(
            &mut out,
            &metric,
            &format!("{help} (per member and end of its link)"),
            "counter",
        );
        for (labels, values) in &ends {
            let _ = writeln!(out, "{metric}{{{labels}}} {}", values[i]);
        }
    }
    out
}

fn family(out: &mut String, name: &str, help: &str, kind: &str) {
    out.push_str("# HELP ");
    out.push_str(name);
    out.push(' ');
    // HELP text escapes backslash and newline only.
    for c in help.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    let _ = writeln!(out, "\n# TYPE {name} {kind}");
}

/// Appends `v` escaped for a label value: backslash, double quote and newline.
fn escape_label(v: &str, out: &mut String) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
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
    use crate::status::MemberStatus;
    use std::collections::{HashMap, HashSet};

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
            naks: base + 9,
            backpressure_waits: base + 10,
            mac_failures: base + 11,
            tcp_retransmits: base + 12,
        }
    }

    fn status() -> HubStatus {
        HubStatus {
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
                    addr: "10.0.0.1:5000".into(),
                    joined_epoch: 1,
                    last_heard_ms: 5,
                    hub_side: counters(100),
                    node_side: counters(200),
                },
                MemberStatus {
                    node: 9,
                    incarnation: 1,
                    host: "we\"ird\\host\nname".into(),
                    pid: 200,
                    addr: "local".into(),
                    joined_epoch: 2,
                    last_heard_ms: 0,
                    hub_side: counters(300),
                    node_side: counters(400),
                },
            ],
            segments: 5,
            groups: 2,
            isolations: 1,
            joins: 11,
            refused: 4,
            uptime_s: 3600,
        }
    }

    /// One parsed sample line.
    #[derive(Debug)]
    struct Sample {
        name: String,
        labels: Vec<(String, String)>,
        value: f64,
    }

    fn metric_name(s: &str) -> bool {
        let mut b = s.bytes();
        matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_' || c == b':')
            && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
    }

    /// Parses `name{l="v",...} value` strictly (label values unescaped).
    fn parse_sample(line: &str) -> Result<Sample, String> {
        let name_end = line.find(['{', ' ']).ok_or("no value")?;
        let name = &line[..name_end];
        if !metric_name(name) {
            return Err(format!("bad name {name:?}"));
        }
        let mut rest = &line[name_end..];
        let mut labels = Vec::new();
        if let Some(r) = rest.strip_prefix('{') {
            rest = r;
            loop {
                if let Some(r) = rest.strip_prefix('}') {
                    rest = r;
                    break;
                }
                let eq = rest.find('=').ok_or("label without =")?;
                let lname = &rest[..eq];
                if !metric_name(lname) || lname.contains(':') {
                    return Err(format!("bad label name {lname:?}"));
                }
                rest = rest[eq + 1..].strip_prefix('"').ok_or("unquoted value")?;
                let mut v = String::new();
                let mut chars = rest.char_indices();
                let close = loop {
                    match chars.next().ok_or("unterminated value")? {
                        (i, '"') => break i,
                        (_, '\\') => match chars.next().ok_or("dangling escape")?.1 {
                            '\\' => v.push('\\'),
                            '"' => v.push('"'),
                            'n' => v.push('\n'),
                            c => return Err(format!("bad escape \\{c}")),
                        },
                        (_, '\n') => return Err("raw newline".into()),
                        (_, c) => v.push(c),
                    }
                };
                labels.push((lname.to_string(), v));
                rest = &rest[close + 1..];
                if let Some(r) = rest.strip_prefix(',') {
                    rest = r;
                } else if !rest.starts_with('}') {
                    return Err("expected , or }".into());
                }
            }
        }
        let value = rest.strip_prefix(' ').ok_or("no space before value")?;
        let value: f64 = value.parse().map_err(|_| format!("bad value {value:?}"))?;
        Ok(Sample {
            name: name.to_string(),
            labels,
            value,
        })
    }

    /// Checks the whole text's structure and returns its samples.
    fn parse(text: &str) -> Vec<Sample> {
        assert!(text.ends_with('\n'));
        let mut samples = Vec::new();
        let mut helped = HashSet::new();
        let mut typed = HashMap::new();
        let mut done = HashSet::new();
        let mut current: Option<String> = None;
        for line in text.lines() {
            if let Some(c) = line.strip_prefix("# ") {
                let (kw, rest) = c.split_once(' ').expect("comment keyword");
                let (name, arg) = rest.split_once(' ').expect("comment name and text");
                assert!(metric_name(name), "{line}");
                if current.as_deref() != Some(name) {
                    if let Some(prev) = current.replace(name.to_string()) {
                        done.insert(prev);
                    }
                }
                assert!(!done.contains(name), "family {name} interleaved");
                match kw {
                    "HELP" => assert!(helped.insert(name.to_string()), "two HELP for {name}"),
                    "TYPE" => {
                        assert!(matches!(arg, "gauge" | "counter"), "{line}");
                        assert!(
                            typed.insert(name.to_string(), arg.to_string()).is_none(),
                            "two TYPE for {name}"
                        );
                    }
                    _ => panic!("unknown comment {line}"),
                }
                continue;
            }
            let s = parse_sample(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
            assert_eq!(
                current.as_deref(),
                Some(s.name.as_str()),
                "sample outside family"
            );
            assert!(
                typed.contains_key(&s.name) && helped.contains(&s.name),
                "{line}"
            );
            if typed[&s.name] == "counter" {
                assert!(s.name.ends_with("_total"), "{line}");
            }
            samples.push(s);
        }
        samples
    }

    fn find<'a>(samples: &'a [Sample], name: &str, labels: &[(&str, &str)]) -> Vec<&'a Sample> {
        samples
            .iter()
            .filter(|s| {
                s.name == name
                    && s.labels.len() == labels.len()
                    && labels
                        .iter()
                        .zip(&s.labels)
                        .all(|((k, v), (lk, lv))| k == lk && v == lv)
            })
            .collect()
    }

    #[test]
    fn renders_every_family_and_counter() {
        let st = status();
        let text = prometheus(&st);
        let samples = parse(&text);
        for (name, v) in [
            ("memchan_epoch", 42),
            ("memchan_members", 2),
            ("memchan_segments", 5),
            ("memchan_groups", 2),
            ("memchan_uptime_seconds", 3600),
            ("memchan_isolations_total", 1),
            ("memchan_joins_total", 11),
            ("memchan_refused_total", 4),
        ] {
            let found = find(&samples, name, &[]);
            assert_eq!(found.len(), 1, "{name}");
            assert_eq!(found[0].value, v as f64, "{name}");
        }
        for kind in ["memchan_epoch", "memchan_members", "memchan_uptime_seconds"] {
            assert!(text.contains(&format!("# TYPE {kind} gauge\n")));
        }
        assert!(text.contains("# TYPE memchan_joins_total counter\n"));
        let mut link_samples = 0;
        for m in &st.members {
            let (node, inc) = (m.node.to_string(), m.incarnation.to_string());
            for (side, c) in [("hub", &m.hub_side), ("node", &m.node_side)] {
                for (field, _, v) in c.fields() {
                    let name = format!("memchan_link_{field}_total");
                    assert!(text.contains(&format!("# TYPE {name} counter\n")));
                    let found = find(
                        &samples,
                        &name,
                        &[
                            ("node", &node),
                            ("incarnation", &inc),
                            ("host", &m.host),
                            ("side", side),
                        ],
                    );
                    assert_eq!(found.len(), 1, "{name} {node} {side}");
                    assert_eq!(found[0].value, v as f64, "{name} {node} {side}");
                    link_samples += 1;
                }
            }
        }
        assert_eq!(link_samples, 2 * 2 * 12);
        assert_eq!(samples.len(), 8 + link_samples);
        // A literal line, exactly as a scraper sees it.
        assert!(text.contains(
            "memchan_link_crc_failures_total{node=\"3\",incarnation=\"7\",host=\"h1\",side=\"node\"} 205\n"
        ));
    }

    #[test]
    fn label_values_are_escaped() {
        let text = prometheus(&status());
        assert!(text.contains(
            "memchan_link_naks_total{node=\"9\",incarnation=\"1\",host=\"we\\\"ird\\\\host\\nname\",side=\"hub\"} 309\n"
        ));
        // The raw newline never reaches the output inside a label.
        assert!(!text.contains("host\nname"));
        let mut s = String::new();
        escape_label("a\\b\"c\nd\te", &mut s);
        assert_eq!(s, "a\\\\b\\\"c\\nd\te");
    }

    #[test]
    fn empty_status_still_parses() {
        let samples = parse(&prometheus(&HubStatus::default()));
        assert_eq!(samples.len(), 8);
        assert!(samples.iter().all(|s| s.value == 0.0));
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
        let want = prometheus(&st);
        let srv = serve_metrics("127.0.0.1:0", move || Ok(prometheus(&st))).unwrap();
        let addr = srv.local_addr();
        assert_ne!(addr.port(), 0);

        let (code, head, body) = http(
            addr,
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
        );
        assert_eq!(code, 200);
        assert!(
            head.contains("Content-Type: text/plain; version=0.0.4"),
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
        let t0 = Instant::now();
        // Connects, sends a few bytes, then nothing: the server gives up on it.
        let mut idle = TcpStream::connect(addr).unwrap();
        idle.write_all(b"GET /").unwrap();
        thread::sleep(Duration::from_millis(50));
        let (code, _, _) = http(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert_eq!(code, 200);
        let waited = t0.elapsed();
        assert!(
            waited >= REQUEST_TIMEOUT - Duration::from_millis(100),
            "{waited:?}"
        );
        assert!(
            waited < REQUEST_TIMEOUT + Duration::from_secs(2),
            "{waited:?}"
        );
        let mut resp = String::new();
        idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        idle.read_to_string(&mut resp).unwrap();
        assert!(resp.starts_with("HTTP/1.1 408 "), "{resp}");
    }
}
