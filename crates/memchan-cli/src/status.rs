//! `memchan status`: the cluster's members, segments, groups, locks and counters, the
//! same report for both transports: asked of a hub (with the counters of both ends of
//! every link), or read from a one-host cluster's control block. Printed as tables or
//! JSON, or served as Prometheus metrics. The tables and the JSON (`"ip"`) also show
//! the counters of the cluster's `memchan ip` interfaces on this host
//! ([`crate::ip_status`]).

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::metrics::{exposition, serve_metrics};
use anyhow::{anyhow, Context, Result};
use clap::Args;
use memchan_core::status::{ClusterStatus, LinkCounters};
use memchan_core::HubSpec;
use memchan_link::handshake::HandshakeError;
use memchan_link::wire::Key;
use memchan_net::{query_status, QueryError};

use crate::hub::{announce, catch_signals, key_file, load_key, wait_for_signal};
use crate::ip_status;

/// Options of `memchan status`.
#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    /// The hub to ask (default: `MEMCHAN_HUB`); `ACTIVE,STANDBY` asks both rails of a
    /// dual-rail cluster, shows both, and reports the cluster as the serving one has it.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "cluster")]
    pub hub: Option<String>,

    /// A cluster on this host (shared memory): read its control block, without
    /// joining it.
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,

    /// File holding the cluster key (default: the file `MEMCHAN_KEY_FILE` names).
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,

    /// Print the hub's report as JSON.
    #[arg(long, conflicts_with = "metrics")]
    pub json: bool,

    /// Instead of printing, serve Prometheus metrics (`GET /metrics`) on this address,
    /// asking the hub on every scrape (503 when it cannot be asked). The bound address
    /// is printed on stdout as `metrics ADDR`; runs until SIGTERM or SIGINT.
    #[arg(long, value_name = "LISTEN")]
    pub metrics: Option<String>,
}

/// Runs `memchan status`; errors exit 1 with one line on stderr.
pub fn run(args: StatusArgs) -> Result<()> {
    if let Err(e) = status(args) {
        eprintln!("memchan status: {e:#}");
        std::process::exit(1);
    }
    Ok(())
}

/// Where the report comes from.
#[derive(Clone)]
enum Source {
    /// The hubs as typed (`HOST:PORT` or `ACTIVE,STANDBY`), and each rail's hub.
    Hub {
        typed: String,
        rails: Vec<String>,
        key: Key,
    },
    Local(String),
}

/// One rail of a dual-rail cluster, as its hub reports it.
#[derive(Debug, Clone, serde::Serialize)]
struct Rail {
    hub: String,
    /// `active`, `standby`, `gathering`, `took over`, `failed: …`, or `unreachable`.
    role: String,
    /// What the role rests on: the order's last place, the copy's age, or the error.
    state: String,
}

/// Asks every hub of `hubs` (the rails, active first): each rail's row, and the report
/// of the one serving the cluster (a standby that took over, else the active).
fn ask_rails(
    hubs: &[String],
    key: &Key,
) -> (std::result::Result<ClusterStatus, String>, Vec<Rail>) {
    let mut rails = Vec::new();
    let mut serving: Option<(u8, ClusterStatus)> = None;
    let mut first_err = None;
    for hub in hubs {
        match ask(hub, key) {
            Ok(st) => {
                let (role, state) = match &st.rail {
                    None => ("single rail".to_string(), String::new()),
                    Some(r) => {
                        let state = match r.role.as_str() {
                            "active" => format!("ordering, last place #{}", r.gseq),
                            "standby" if r.mirror_error.is_empty() => format!(
                                "tables copied from {} {} ms ago",
                                r.active,
                                r.mirrored_ms_ago.map_or("never".into(), |m| m.to_string())
                            ),
                            "standby" => {
                                format!("cannot copy from {}: {}", r.active, r.mirror_error)
                            }
                            _ => format!(
                                "nodes resumed {:?}, {} packets ordered again, last place #{}",
                                r.resumed, r.replanned, r.gseq
                            ),
                        };
                        (r.role.clone(), state)
                    }
                };
                // The one that serves: a standby that took over, else the active.
                let rank = match role.as_str() {
                    "took over" => 3,
                    "active" | "single rail" => 2,
                    "standby" => 0,
                    _ => 1,
                };
                if serving.as_ref().is_none_or(|(r, _)| rank > *r) {
                    serving = Some((rank, st));
                }
                rails.push(Rail {
                    hub: hub.to_string(),
                    role,
                    state,
                });
            }
            Err(e) => {
                rails.push(Rail {
                    hub: hub.to_string(),
                    role: "unreachable".into(),
                    state: e.clone(),
                });
                first_err.get_or_insert(e);
            }
        }
    }
    let st = serving
        .map(|(_, st)| st)
        .ok_or_else(|| first_err.unwrap_or_else(|| "no rail serves the cluster".into()));
    (st, rails)
}

impl Source {
    fn ask(&self) -> std::result::Result<ClusterStatus, String> {
        match self {
            Source::Hub { rails, key, .. } if rails.len() > 1 => ask_rails(rails, key).0,
            Source::Hub { rails, key, .. } => ask(&rails[0], key),
            Source::Local(c) => memchan_shm::status::query(c).map_err(|e| match e {
                memchan_core::Error::Os { .. } => {
                    format!("no cluster `{c}` on this host ({e})")
                }
                e => format!("cluster `{c}`: {e}"),
            }),
        }
    }

    fn name(&self) -> &str {
        match self {
            Source::Hub { typed: h, .. } | Source::Local(h) => h,
        }
    }
}

fn status(args: StatusArgs) -> Result<()> {
    let hub = args
        .hub
        .or_else(|| std::env::var("MEMCHAN_HUB").ok().filter(|v| !v.is_empty()));
    let source = match (args.cluster, hub) {
        (Some(c), _) => Source::Local(c),
        (None, Some(typed)) => {
            let rails = HubSpec::parse_rails(&typed)
                .context("--hub (or MEMCHAN_HUB)")?
                .addrs()
                .map(String::from)
                .collect();
            let (key, _) = load_key(key_file(args.key_file).as_deref())?;
            Source::Hub { typed, rails, key }
        }
        (None, None) => {
            return Err(anyhow!(
                "no cluster given: use --cluster NAME (this host) or --hub HOST:PORT (or set MEMCHAN_HUB)"
            ))
        }
    };
    if let Some(listen) = &args.metrics {
        let signals = catch_signals()?;
        let src = source.clone();
        let srv = serve_metrics(listen, move || src.ask().map(|s| exposition(&s)))
            .with_context(|| format!("cannot serve metrics on {listen}"))?;
        announce(&format!("metrics {}", srv.local_addr()))?;
        wait_for_signal(signals);
        drop(srv);
        return Ok(());
    }
    let (st, rails) = match &source {
        Source::Hub { rails, key, .. } if rails.len() > 1 => ask_rails(rails, key),
        _ => (source.ask(), Vec::new()),
    };
    if !args.json && !rails.is_empty() {
        print!("{}", render_rails(&rails));
    }
    let st = st.map_err(anyhow::Error::msg)?;
    let cluster = match &source {
        Source::Local(c) => c.as_str(),
        Source::Hub { .. } => st.cluster.as_str(),
    };
    let ip = ip_status::read(&ip_status::dir(), cluster);
    if args.json {
        let mut v = serde_json::to_value(&st).context("encoding the report")?;
        if let Some(m) = v.as_object_mut() {
            m.insert("ip".into(), serde_json::to_value(&ip)?);
            if !rails.is_empty() {
                m.insert("rails".into(), serde_json::to_value(&rails)?);
            }
        }
        let text = serde_json::to_string_pretty(&v).context("encoding the report")?;
        println!("{text}");
    } else {
        print!("{}", render(source.name(), &st));
        print!("{}", render_ip(&ip));
    }
    Ok(())
}

/// Queries the hub, with an error that says which hub and what went wrong.
fn ask(hub: &str, key: &Key) -> std::result::Result<ClusterStatus, String> {
    query_status(hub, key).map_err(|e| match e {
        QueryError::Handshake(
            HandshakeError::Connect(_) | HandshakeError::Resolve(_) | HandshakeError::NoAddress,
        ) => format!("cannot reach hub {hub}: {e}"),
        QueryError::Handshake(HandshakeError::Refused(why)) => {
            format!("hub {hub} refused the query: {why}")
        }
        e => format!("hub {hub}: {e}"),
    })
}

/// The rails of a dual-rail cluster, one row each.
fn render_rails(rails: &[Rail]) -> String {
    let mut out = format!("rails: {}\n", rails.len());
    let rows: Vec<Vec<String>> = rails
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                i.to_string(),
                r.hub.clone(),
                r.role.clone(),
                r.state.clone(),
            ]
        })
        .collect();
    table(&mut out, &["rail", "hub", "role", "state"], &rows, 4);
    out.push('\n');
    out
}

/// `3723` seconds as `1h 2m 3s`.
fn duration(s: u64) -> String {
    let (d, h, m, s) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m {s}s"),
        _ => format!("{d}d {h}h {m}m {s}s"),
    }
}

/// A table with a header row; the first `left` columns are left-aligned, the rest
/// (numbers) right-aligned.
fn table(out: &mut String, header: &[&str], rows: &[Vec<String>], left: usize) {
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::from("  ");
        for (i, (c, w)) in cells.zip(&width).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            if i < left {
                let _ = write!(l, "{c:<w$}");
            } else {
                let _ = write!(l, "{c:>w$}");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for r in rows {
        line(&mut r.iter().map(String::as_str));
    }
}

/// The report as text: a header, the members, segments, groups and locks, and both
/// ends of every link (a hub cluster's).
fn render(hub: &str, st: &ClusterStatus) -> String {
    let mut out = String::new();
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let local = st.transport == "shm";
    let fields: [(&str, String); 8] = [
        (
            "cluster",
            if st.cluster.is_empty() {
                "(not named yet)".into()
            } else {
                st.cluster.clone()
            },
        ),
        if local {
            ("transport", "shm (shared memory on this host)".into())
        } else {
            (
                "hub",
                if st.listen == hub {
                    hub.to_string()
                } else {
                    format!("{hub} (listening on {})", st.listen)
                },
            )
        },
        ("protocol", st.protocol.to_string()),
        ("epoch", st.epoch.to_string()),
        (
            "page size",
            match st.page_size {
                0 => "(not chosen yet)".into(),
                p => format!("{p} bytes"),
            },
        ),
        ("keyed", yes_no(st.keyed).to_string()),
        ("uptime", duration(st.uptime_s)),
        (
            "history",
            format!(
                "{} joins, {} refused, {} isolations; {} segments, {} groups, {} locks",
                st.joins,
                st.refused,
                st.isolations,
                st.segments.len(),
                st.groups.len(),
                st.locks.len()
            ),
        ),
    ];
    for (k, v) in fields {
        let _ = writeln!(out, "{:<10} {v}", format!("{k}:"));
    }

    let _ = writeln!(out, "\nmembers: {}", st.members.len());
    if !st.members.is_empty() {
        let rows: Vec<Vec<String>> = st
            .members
            .iter()
            .map(|m| {
                vec![
                    m.node.to_string(),
                    m.host.clone(),
                    m.addr.clone(),
                    m.incarnation.to_string(),
                    m.pid.to_string(),
                    m.uid.to_string(),
                    m.joined_epoch.to_string(),
                    m.last_heard_ms.to_string(),
                    m.clock_bound_ns.map_or("-".into(), |b| b.to_string()),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                "node",
                "host",
                "addr",
                "incarnation",
                "pid",
                "uid",
                "joined_epoch",
                "last_heard_ms",
                "clock_bound_ns",
            ],
            &rows,
            3,
        );
    }
    render_tables(&mut out, st);
    if local {
        out.push_str("\nlinks: none (shared memory: a write is a store, no link to count)\n");
    } else if !st.members.is_empty() {
        out.push_str("\nlinks (hub side: the hub's end; node side: as the node last reported)\n");
        let names = LinkCounters::default().fields().map(|(n, _, _)| n);
        let mut header = vec!["node", "side"];
        // The error counters first, then traffic.
        let order: Vec<usize> = (4..names.len()).chain(0..4).collect();
        header.extend(order.iter().map(|&i| names[i]));
        let mut rows = Vec::new();
        for m in &st.members {
            for (side, c) in [("hub", &m.hub_side), ("node", &m.node_side)] {
                let v = c.fields();
                let mut r = vec![m.node.to_string(), side.to_string()];
                r.extend(order.iter().map(|&i| v[i].2.to_string()));
                rows.push(r);
            }
        }
        table(&mut out, &header, &rows, 2);
    }
    out
}

/// The `memchan ip` interfaces on this host: one row per node, every counter.
fn render_ip(ip: &[ip_status::IpEntry]) -> String {
    let mut out = format!("\nip interfaces on this host: {}\n", ip.len());
    let Some(first) = ip.first() else {
        return out;
    };
    let names: Vec<&str> = first.counters.keys().map(String::as_str).collect();
    let mut header = vec!["node", "dev", "addr", "pid"];
    header.extend(&names);
    let rows: Vec<Vec<String>> = ip
        .iter()
        .map(|e| {
            let mut r = vec![
                e.node.to_string(),
                e.dev.clone(),
                e.addr.clone(),
                e.pid.to_string(),
            ];
            r.extend(
                names
                    .iter()
                    .map(|n| e.counters.get(*n).map_or("-".into(), u64::to_string)),
            );
            r
        })
        .collect();
    table(&mut out, &header, &rows, 3);
    out
}

/// The segments, groups and locks.
fn render_tables(out: &mut String, st: &ClusterStatus) {
    let nodes = |v: &[u16]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter().map(u16::to_string).collect::<Vec<_>>().join(",")
        }
    };
    let _ = writeln!(out, "\nsegments: {}", st.segments.len());
    let rows: Vec<Vec<String>> = st
        .segments
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                format!("{}:{}", s.uid, s.gid),
                format!("{:o}", s.mode),
                nodes(&s.rx),
                s.size.to_string(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table(out, &["name", "owner", "mode", "rx", "size"], &rows, 4);
    }
    let _ = writeln!(out, "\ngroups: {}", st.groups.len());
    let rows: Vec<Vec<String>> = st
        .groups
        .iter()
        .map(|g| vec![g.id.to_string(), g.name.clone(), nodes(&g.members)])
        .collect();
    if !rows.is_empty() {
        table(out, &["id", "name", "members"], &rows, 3);
    }
    let _ = writeln!(out, "\nlocks: {}", st.locks.len());
    let rows: Vec<Vec<String>> = st
        .locks
        .iter()
        .map(|l| vec![l.name.clone(), nodes(&l.bidders)])
        .collect();
    if !rows.is_empty() {
        table(out, &["name", "held or bid by"], &rows, 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memchan_core::status::MemberStatus;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(59), "59s");
        assert_eq!(duration(61), "1m 1s");
        assert_eq!(duration(3723), "1h 2m 3s");
        assert_eq!(duration(90061), "1d 1h 1m 1s");
    }

    #[test]
    fn renders_members_and_both_link_ends() {
        let st = ClusterStatus {
            cluster: "c1".into(),
            listen: "0.0.0.0:7100".into(),
            protocol: 1,
            epoch: 3,
            page_size: 4096,
            keyed: true,
            members: vec![MemberStatus {
                node: 4,
                incarnation: 77,
                host: "h".into(),
                pid: 99,
                uid: 0,
                addr: "10.0.0.2:5000".into(),
                joined_epoch: 2,
                last_heard_ms: 12,
                barriers: 0,
                hub_side: LinkCounters {
                    crc_failures: 31337,
                    ..Default::default()
                },
                node_side: LinkCounters {
                    tcp_retransmits: 4242,
                    ..Default::default()
                },
                clock_bound_ns: Some(31_000),
            }],
            joins: 5,
            refused: 1,
            isolations: 2,
            uptime_s: 65,
            ..Default::default()
        };
        let text = render("hubhost:7100", &st);
        assert!(text.contains("cluster:   c1\n"), "{text}");
        assert!(text.contains("hubhost:7100 (listening on 0.0.0.0:7100)"));
        assert!(text.contains("keyed:     yes\n"));
        assert!(text.contains("uptime:    1m 5s\n"));
        assert!(text.contains("5 joins, 1 refused, 2 isolations"));
        for name in LinkCounters::default().fields().map(|f| f.0) {
            assert!(text.contains(name), "{name}: {text}");
        }
        let row = |side: &str| {
            let found = text
                .lines()
                .find(|l| l.split_whitespace().nth(1) == Some(side));
            found.unwrap_or_else(|| panic!("no {side} row: {text}"))
        };
        let hub_row = row("hub");
        assert!(
            hub_row.contains("31337") && !hub_row.contains("4242"),
            "{hub_row}"
        );
        let node_row = row("node");
        assert!(node_row.contains("4242") && !node_row.contains("31337"));
        assert!(text.contains("10.0.0.2:5000"));
        // The member's clock bound, under its column.
        let members = text.lines().find(|l| l.contains("clock_bound_ns")).unwrap();
        let member = text.lines().find(|l| l.contains("10.0.0.2:5000")).unwrap();
        assert!(member.ends_with("31000"), "{members}\n{member}");
        // The header and rows of a table line up.
        let header = text.lines().find(|l| l.contains("crc_failures")).unwrap();
        assert_eq!(header.len(), hub_row.len());
    }

    #[test]
    fn ip_interfaces_render_every_counter() {
        assert!(render_ip(&[]).contains("ip interfaces on this host: 0\n"));
        let e = ip_status::IpEntry {
            cluster: "c".into(),
            node: 1,
            pid: 77,
            dev: "mcip0".into(),
            addr: "10.77.0.2/24".into(),
            updated_unix_ms: 0,
            counters: ip_status::counters_of("tx_packets=5 rx_bytes=4242 drop_ring_full=3"),
        };
        let text = render_ip(&[e]);
        assert!(text.contains("ip interfaces on this host: 1\n"), "{text}");
        let header = text.lines().find(|l| l.contains("tx_packets")).unwrap();
        let row = text.lines().find(|l| l.contains("mcip0")).unwrap();
        assert!(header.contains("drop_ring_full") && header.contains("rx_bytes"));
        assert!(
            row.contains("10.77.0.2/24") && row.contains("4242"),
            "{row}"
        );
        assert_eq!(header.len(), row.len(), "{text}");
    }

    #[test]
    fn an_empty_hub_renders() {
        let text = render("h:1", &ClusterStatus::default());
        assert!(text.contains("members: 0\n"));
        assert!(text.contains("(not named yet)"));
    }
}
