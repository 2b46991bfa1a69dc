//! `memchan bench --hosts`: the figures between two hosts, measured on one
//! machine. The coordinator creates three network namespaces, two hosts of nodes
//! (A, B) and the hub's host H, each of A and B joined by a veth pair to a bridge in
//! H ([`netns`]), and runs, in rounds and side by side:
//!
//! | series                      | what                                                        |
//! |-----------------------------|-------------------------------------------------------------|
//! | `tcp_raw`                   | 8-byte TCP ping-pong, blocking receive, TCP_NODELAY ([`tcp`]) |
//! | `tcp_raw_spin`              | the same, busy-polling `recv(MSG_DONTWAIT)` on both sides   |
//! | `tcp_raw` bandwidth         | a stream of 1 MiB writes, 1-byte answer per window          |
//! | `tcp_raw_64k` bandwidth     | the same stream and receiver, each 1 MiB buffer written as 16 × 64 KiB (information, no target) |
//! | `mpi_tcp`                   | Open MPI ob1 + TCP BTL ping-pong, rank 1 in namespace B ([`mpi`]) |
//! | `memchan`, `memchan_spin`, bandwidth | memchan joined through a `memchan hub` on host H ([`hub`], [`memchan_net`]), open cluster; point-to-point writes on the nodes' direct link |
//! | `memchan_hub_a`, `memchan_hub_a_spin` | the same with the hub in side A's process (the two-host topology), for information |
//! | `memchan_keyed`, `memchan_keyed_spin`, bandwidth | the same on a keyed cluster (a key file written for the run): every frame MACed |
//! | `memchan_rma`               | one get and one fetch-add of a word of side B's copy, each a round trip on the nodes' direct link (`rma.rs`), beside `tcp_raw` |
//!
//! Every pair runs as two worker processes (`memchan bench-worker`, as in the
//! local bench) pinned to the two cores; a worker enters its namespace with
//! `setns` first: the timing ("ping") side in namespace A on the first core,
//! the answering side in namespace B on the second. Each reference and its
//! memchan twin run next to each other, the order flipping every other round;
//! samples of all rounds are pooled (a target is judged on the rounds' ratios, see
//! `table::Verdict`); the keyed twin runs right after the open
//! one (right before it in the reversed rounds), so open and keyed see the same
//! machine. `tcp_raw_64k` runs next to the bandwidth group, after memchan in the
//! rounds where `tcp_raw` leads and before it in the others. After every measurement the coordinator checks that the veth's
//! byte counters grew by at least the payload, so a figure is only kept if its
//! traffic really crossed the veth.
//!
//! Then the twins of the message-passing and IP levels ([`levels`]:
//! `net_mp_latency_8b_us`, `net_mp_bandwidth_1mib_gbps`, `net_ip_latency_8b_us`,
//! `net_ip_bandwidth_gbps`), and the ordering point's throughput with many nodes
//! broadcasting ([`flood`]: `net_ordering_deliveries_per_s`), and the barrier of 64
//! nodes on four hosts beside Open MPI's ([`barrier`]: `net_barrier_us`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use super::model::{check_failures, write_json, BenchArgs, Config, SampleSet, ScratchDir};
use super::report;
use super::timer::Clock;
use super::worker::{self, take, Kind, Launcher, Role, WorkerArgs, WorkerOutput};

pub mod barrier;
pub mod domain;
pub mod flood;
pub mod hub;
pub mod levels;
pub mod memchan_net;
pub mod model;
pub mod mpi;
pub mod netns;
pub mod tables;
pub mod tcp;

pub use memchan_net::memchan_side_hosts;
use model::{HostInfo, Params, CHUNK_64K, FIG_BANDWIDTH, FIG_LATENCY, MIB};

/// Is `k` one of the `--hosts` measurements?
pub fn is_host_kind(k: Kind) -> bool {
    matches!(
        k,
        Kind::HostTcp
            | Kind::HostTcpSpin
            | Kind::HostTcpBw
            | Kind::HostTcpBw64k
            | Kind::HostMemchan
            | Kind::HostMemchanSpin
            | Kind::HostMemchanBw
            | Kind::HostMemchanRma
            | Kind::HostFlood
            | Kind::HostDomain
            | Kind::HostBarrier
    )
}

/// One measurement of a round: a worker kind and, for memchan's, whether its
/// cluster is keyed and whether the ping side hosts the hub (the two-host
/// topology, for information) instead of the hub's own host H.
#[derive(Debug, Clone, Copy)]
struct Item {
    kind: Kind,
    keyed: bool,
    hub_in_a: bool,
}

const fn open(kind: Kind) -> Item {
    Item {
        kind,
        keyed: false,
        hub_in_a: false,
    }
}

const fn keyed(kind: Kind) -> Item {
    Item {
        kind,
        keyed: true,
        hub_in_a: false,
    }
}

const fn hub_in_a(kind: Kind) -> Item {
    Item {
        kind,
        keyed: false,
        hub_in_a: true,
    }
}

/// The series an item's samples belong to.
fn series(i: Item) -> &'static str {
    if i.hub_in_a {
        return match i.kind {
            Kind::HostMemchan => "memchan_hub_a",
            Kind::HostMemchanSpin => "memchan_hub_a_spin",
            _ => "?",
        };
    }
    match (i.kind, i.keyed) {
        (Kind::HostTcp | Kind::HostTcpBw, _) => "tcp_raw",
        (Kind::HostTcpSpin, _) => "tcp_raw_spin",
        (Kind::HostTcpBw64k, _) => "tcp_raw_64k",
        (Kind::HostMemchan | Kind::HostMemchanBw, false) => "memchan",
        (Kind::HostMemchan | Kind::HostMemchanBw, true) => "memchan_keyed",
        (Kind::HostMemchanSpin, false) => "memchan_spin",
        (Kind::HostMemchanSpin, true) => "memchan_keyed_spin",
        (Kind::HostMemchanRma, _) => "memchan_rma",
        _ => "?",
    }
}

/// Writes a fresh random cluster key (hex, mode 0600) for the keyed measurements.
fn write_key_file(dir: &Path) -> Result<PathBuf> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let path = dir.join("cluster.key");
    let mut secret = String::new();
    for _ in 0..2 {
        let n = ::memchan_link::handshake::nonce().context("random bytes for the bench's key")?;
        for b in n {
            secret.push_str(&format!("{b:02x}"));
        }
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    writeln!(f, "{secret}").with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

fn is_bandwidth(k: Kind) -> bool {
    matches!(
        k,
        Kind::HostTcpBw | Kind::HostTcpBw64k | Kind::HostMemchanBw
    )
}

fn is_memchan(k: Kind) -> bool {
    matches!(
        k,
        Kind::HostMemchan | Kind::HostMemchanSpin | Kind::HostMemchanBw | Kind::HostMemchanRma
    )
}

/// Worker side: enter this side's namespace, then measure.
pub fn worker(kind: Kind, a: &WorkerArgs, clock: &Clock) -> Result<WorkerOutput> {
    if kind == Kind::HostDomain {
        // Three nodes, two namespaces: it enters its own.
        return domain::worker(a, clock);
    }
    let ping = match a.role {
        Role::Ping => true,
        Role::Pong => false,
        Role::Solo => bail!("{kind:?} needs --role ping or pong"),
    };
    let ns = a
        .hosts
        .netns
        .get(usize::from(!ping))
        .context("--netns needs the two sides' namespaces")?;
    netns::enter(ns)?;
    match kind {
        Kind::HostTcp => tcp::latency(a, clock, ping, false),
        Kind::HostTcpSpin => tcp::latency(a, clock, ping, true),
        Kind::HostTcpBw => tcp::bandwidth(a, clock, ping, MIB),
        Kind::HostTcpBw64k => tcp::bandwidth(a, clock, ping, CHUNK_64K),
        Kind::HostMemchan | Kind::HostMemchanSpin | Kind::HostMemchanBw | Kind::HostMemchanRma => {
            memchan_side_hosts(kind, a, clock, ping)
        }
        Kind::HostFlood => flood::worker(a, ping),
        Kind::HostBarrier => barrier::worker(a, clock, ping),
        k => bail!("{k:?} is not a host measurement"),
    }
}

impl Params {
    fn new(cfg: &Config) -> Self {
        // A round trip over the veth costs microseconds, as over loopback:
        // the same cap as the TCP loopback reference.
        let iters = cfg.tcp_iters;
        Self {
            rounds: cfg.rounds,
            quick: cfg.quick,
            cpus: cfg.cpus,
            iters,
            warmup: cfg.warmup.min(iters).max(10),
            bw_windows: if cfg.quick { 5 } else { 30 },
            bw_warmup: if cfg.quick { 1 } else { 3 },
            window_mib: super::refs::WINDOW,
        }
    }

    /// Bytes of payload a measurement must at least move over the veth.
    fn min_payload(&self, k: Kind) -> u64 {
        if is_bandwidth(k) {
            (self.bw_windows + self.bw_warmup) * (self.window_mib * MIB) as u64
        } else {
            (self.iters + self.warmup) * 2 * 8
        }
    }
}

/// Entry point of `memchan bench --hosts`.
pub fn run(args: &BenchArgs) -> Result<()> {
    let started = Instant::now();
    let date = report::iso_date_now();
    if args.plot.is_some() {
        bail!("--plot does not apply to --hosts (the host figures are tables only)");
    }
    let cfg = Config::from_args(args)?;
    let p = Params::new(&cfg);

    let scratch = ScratchDir(
        std::env::temp_dir().join(format!("memchan-bench-hosts-{}", std::process::id())),
    );
    std::fs::create_dir_all(&scratch.0)
        .with_context(|| format!("creating {}", scratch.0.display()))?;
    let (clock, step_ns) = Clock::calibrate(Duration::from_millis(50));

    netns::remove_on_signal(&scratch.0);
    let ns = netns::Namespaces::with_hub_host()?;
    let hub_host = ns.hub_host()?.to_string();
    eprintln!(
        "hosts: network namespaces {} ({}) and {} ({}), the hub's {} ({}), one bridge in {}",
        ns.a,
        netns::ADDR_A,
        ns.b,
        netns::ADDR_B,
        hub_host,
        netns::ADDR_HUB,
        hub_host,
    );
    let mut info = HostInfo {
        tsc_ghz: clock.ghz,
        tsc_step_ns: step_ns,
        namespaces: [ns.a.clone(), ns.b.clone(), hub_host],
        memchan: Ok(()),
        mpi: Ok(()),
        mpi_version: None,
        veth_bytes: BTreeMap::new(),
        notes: Vec::new(),
        date,
        elapsed_s: 0.0,
    };
    let mpi = if args.no_peers {
        mpi::Prepared::Skipped("skipped (--no-peers)".into())
    } else {
        mpi::prepare(&scratch.0)?
    };
    let mpi = match mpi {
        mpi::Prepared::Ready(m) => {
            info.mpi_version = m.version.clone();
            Some(m)
        }
        mpi::Prepared::Skipped(why) => {
            eprintln!("mpi_tcp: {why}");
            info.mpi = Err(why);
            None
        }
    };

    let mut launcher = Launcher::new(&scratch.0, clock)?;
    let key_file = write_key_file(&scratch.0)?;
    let mut set = SampleSet::default();
    // Each reference next to its memchan twins (open, keyed), the order reversed
    // every other round; the informational tcp_raw_64k after the bandwidth group,
    // so that it too sits next to memchan on either side.
    let groups: [&[Item]; 3] = [
        &[
            open(Kind::HostTcp),
            open(Kind::HostMemchan),
            keyed(Kind::HostMemchan),
            hub_in_a(Kind::HostMemchan),
            // get and fetch-add against the same blocking round trip (`rma.rs`)
            open(Kind::HostMemchanRma),
        ],
        &[
            open(Kind::HostTcpSpin),
            open(Kind::HostMemchanSpin),
            keyed(Kind::HostMemchanSpin),
            hub_in_a(Kind::HostMemchanSpin),
        ],
        &[
            open(Kind::HostTcpBw),
            open(Kind::HostMemchanBw),
            keyed(Kind::HostMemchanBw),
            open(Kind::HostTcpBw64k),
        ],
    ];
    let mpi_rounds = if mpi.is_none() {
        0
    } else if args.peers_once {
        1
    } else {
        p.rounds
    };
    let per_round: usize =
        groups.iter().map(|g| g.len()).sum::<usize>() + levels::mp_items(mpi.is_some()) + 4;
    let pb = ProgressBar::new((per_round * p.rounds + mpi_rounds) as u64);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:32} {pos}/{len} {msg}")
            .expect("progress template"),
    );

    let mut failures: Vec<String> = Vec::new();
    let mut mpi_ok = 0usize;
    let mut memchan_ok = 0usize;
    let mut port: u16 = 20_000;
    for round in 0..p.rounds {
        set.round = round;
        let msg = |what: &str| format!("round {}/{}: {what}", round + 1, p.rounds);
        for group in groups {
            let reversed = round % 2 == 1;
            let order: Vec<Item> = if reversed {
                group.iter().rev().copied().collect()
            } else {
                group.to_vec()
            };
            for item in order {
                let kind = item.kind;
                pb.set_message(msg(&format!("{} ({kind:?})", series(item))));
                port = port.wrapping_add(1).max(20_000);
                let key = item.keyed.then_some(key_file.as_path());
                let r = measure(item, key, port, &mut launcher, &ns, &p, &mut set, &mut info);
                match r {
                    Ok(()) => memchan_ok += usize::from(is_memchan(kind)),
                    Err(e) if is_memchan(kind) => {
                        let note = format!(
                            "memchan measurement {} ({kind:?}) failed in round {}: {e:#}",
                            series(item),
                            round + 1
                        );
                        pb.println(&note);
                        failures.push(note);
                    }
                    Err(e) => {
                        return Err(e).with_context(|| {
                            format!("reference measurement {kind:?}, round {}", round + 1)
                        })
                    }
                }
                pb.inc(1);
            }
        }
        if let Some(m) = mpi.as_ref().filter(|_| round < mpi_rounds) {
            pb.set_message(msg("mpi_tcp"));
            match run_mpi(m, &ns, &p, &clock) {
                Ok(v) => {
                    set.add(FIG_LATENCY, "mpi_tcp", v.samples);
                    info.veth_bytes
                        .entry("mpi_tcp".into())
                        .or_default()
                        .push(v.veth_bytes);
                    mpi_ok += 1;
                }
                Err(e) => {
                    let note = format!("mpi_tcp not measured in round {}: {e:#}", round + 1);
                    pb.println(&note);
                    info.notes.push(note);
                }
            }
            pb.inc(1);
        }
    }
    // The message-passing twins, in rounds of their own, then the IP twins.
    for round in 0..p.rounds {
        levels::mp_round(
            round,
            &mut launcher,
            &ns,
            &p,
            mpi.as_ref(),
            &clock,
            &mut port,
            &mut set,
            &mut info,
            &mut failures,
            &pb,
        );
    }
    // The ordering point's flood, open and keyed, the order flipping every round.
    let (nodes, writes) = flood::size(&p);
    let mut flood_figures = flood::Figures {
        nodes,
        writes,
        ..flood::Figures::default()
    };
    for round in 0..p.rounds {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for keyed in order {
            let name = if keyed { "memchan_keyed" } else { "memchan" };
            pb.set_message(format!(
                "round {}/{}: {name} flood ({nodes} nodes)",
                round + 1,
                p.rounds
            ));
            port = port.wrapping_add(1).max(20_000);
            let key = keyed.then_some(key_file.as_path());
            match flood::measure(&mut launcher, &ns, &p, port, key) {
                Ok(v) if keyed => flood_figures.keyed.push(v),
                Ok(v) => flood_figures.open.push(v),
                Err(e) => {
                    let note = format!(
                        "memchan measurement {name} flood failed in round {}: {e:#}",
                        round + 1
                    );
                    pb.println(&note);
                    failures.push(note);
                }
            }
            pb.inc(1);
        }
    }
    // Two nodes of one host inside the cluster of two, beside one host's raw write.
    for round in 0..p.rounds {
        pb.set_message(format!(
            "round {}/{}: a same-host pair inside two hosts",
            round + 1,
            p.rounds
        ));
        port = port.wrapping_add(1).max(20_000);
        if let Err(e) = domain::measure(&mut launcher, &ns, &p, port, round % 2 == 0, &mut set) {
            let note = format!(
                "memchan measurement {} failed in round {}: {e:#}",
                domain::FIG,
                round + 1
            );
            pb.println(&note);
            failures.push(note);
        }
        pb.inc(1);
    }
    // The barrier over four hosts, memchan and Open MPI alternating which goes first.
    let (nodes, ..) = barrier::size(&p);
    for round in 0..p.rounds {
        pb.set_message(format!(
            "round {}/{}: barrier of {nodes} nodes on {} hosts",
            round + 1,
            p.rounds,
            netns::HOSTS
        ));
        let mpi_first = round % 2 == 1;
        for mpi_turn in [mpi_first, !mpi_first] {
            if mpi_turn {
                if let Some(m) = mpi.as_ref().filter(|_| round < mpi_rounds) {
                    if let Err(e) = barrier::measure_mpi(m, &ns, &p, &clock, &mut set) {
                        let note =
                            format!("mpi_tcp barrier not measured in round {}: {e:#}", round + 1);
                        pb.println(&note);
                        info.notes.push(note);
                    }
                }
                continue;
            }
            port = port.wrapping_add(1).max(20_000);
            if let Err(e) = barrier::measure_memchan(&mut launcher, &ns, &p, port, &mut set) {
                let note = format!(
                    "memchan measurement {} failed in round {}: {e:#}",
                    barrier::KEY,
                    round + 1
                );
                pb.println(&note);
                failures.push(note);
            }
        }
        pb.inc(1);
    }
    port = port.wrapping_add(1).max(20_000);
    let ip_figures = levels::ip_twins(&mut launcher, &ns, &cfg, &clock, port, &pb);
    if let Err(why) = &ip_figures {
        if !why.starts_with("skipped") {
            failures.push(why.clone());
        }
    }
    pb.finish_and_clear();
    // The global clock's bound across the veth (one measurement: a hub in A, a node
    // in B, both threads of this process; see `global_clock.rs`).
    let clock_port = port.wrapping_add(1).max(20_000);
    match super::global_clock::measure_hosts(&mut set, &ns.a, &ns.b, netns::ADDR_A, clock_port) {
        Ok(note) => info.notes.push(note),
        Err(e) => failures.push(format!("memchan measurement clock_bound_ns failed: {e:#}")),
    }
    if memchan_ok == 0 {
        info.memchan = Err("every memchan measurement failed (see the notes)".into());
    }
    if mpi.is_some() && mpi_ok == 0 {
        info.mpi = Err("every mpirun across the namespaces failed (see the notes)".into());
    }
    info.notes.extend(failures.iter().cloned());
    drop(ns);
    info.elapsed_s = started.elapsed().as_secs_f64();

    let mut rep = tables::HostReport::build(&p, &set, &info);
    rep.tables.extend(levels::mp_tables(&set, &info));
    rep.tables.push(domain::table(&set, &p));
    rep.tables.push(barrier::table(&set, &p, &info.mpi));
    print!("{}", rep.render_text());
    print!("{}", flood_figures.render());
    match &ip_figures {
        Ok(f) => {
            print!("{}", f.render());
            print!("{}", levels::ip_floor_note(&set, f).unwrap_or_default());
        }
        Err(why) => println!("TCP/IP over memchan through a hub: not measured ({why})"),
    }
    if let Some(path) = &args.json {
        let mut j = rep.to_json();
        levels::mp_units(&mut j);
        levels::ip_json(&mut j, &ip_figures);
        flood_figures.merge_json(&mut j);
        j["net_barrier"] = barrier::json(&p);
        j["units"][barrier::KEY] = serde_json::json!("us");
        write_json(path, &j)?;
    }
    check_failures(&failures)
}

/// Runs one pair of workers and adds the samples, if their traffic crossed
/// the veth. `key_file`: the key of a keyed memchan measurement.
#[allow(clippy::too_many_arguments)]
fn measure(
    item: Item,
    key_file: Option<&Path>,
    port: u16,
    l: &mut Launcher,
    ns: &netns::Namespaces,
    p: &Params,
    set: &mut SampleSet,
    info: &mut HostInfo,
) -> Result<()> {
    let kind = item.kind;
    let (iters, warmup) = if is_bandwidth(kind) {
        (p.bw_windows, p.bw_warmup)
    } else {
        (p.iters, p.warmup)
    };
    let mut extra: Vec<String> = vec![
        "--iters".into(),
        iters.to_string(),
        "--warmup".into(),
        warmup.to_string(),
        "--port".into(),
        port.to_string(),
        "--netns".into(),
        format!("{},{}", ns.a, ns.b),
        "--addrs".into(),
        format!("{},{}", netns::ADDR_A, netns::ADDR_B),
        "--window-mib".into(),
        p.window_mib.to_string(),
    ];
    let mut hub = None;
    if is_memchan(kind) {
        let cluster = l.unique("memchan-bench-hosts");
        if !item.hub_in_a {
            let h = hub::HubProc::start(l, ns, port, &cluster, key_file, p.cpus.0)?;
            extra.extend(["--hub".to_string(), h.addr.clone()]);
            hub = Some(h);
        }
        extra.extend(["--cluster".to_string(), cluster]);
    }
    if let Some(k) = key_file {
        extra.extend(["--key-file".to_string(), k.display().to_string()]);
    }
    let before = ns.veth_bytes()?;
    let out = worker::pair(l, kind, p.cpus, &extra)?;
    drop(hub);
    let crossed = ns.veth_bytes()?.saturating_sub(before);
    let name = series(item);
    let key = if is_bandwidth(kind) {
        format!("{name}_bandwidth")
    } else {
        name.to_string()
    };
    info.veth_bytes.entry(key).or_default().push(crossed);
    let need = p.min_payload(kind);
    if crossed < need {
        bail!(
            "only {crossed} bytes crossed the veth, less than the payload ({need} bytes): \
             the traffic took another path, samples discarded"
        );
    }
    if kind == Kind::HostMemchanRma {
        return super::rma::add_host_samples(out, set);
    }
    let figure = if is_bandwidth(kind) {
        FIG_BANDWIDTH
    } else {
        FIG_LATENCY
    };
    let samples = take(
        out,
        if is_bandwidth(kind) {
            "window_ns"
        } else {
            "one_way"
        },
    )?;
    set.add(figure, name, samples);
    Ok(())
}

struct MpiRun {
    samples: Vec<f64>,
    veth_bytes: u64,
}

fn run_mpi(m: &mpi::Mpi, ns: &netns::Namespaces, p: &Params, clock: &Clock) -> Result<MpiRun> {
    let before = ns.veth_bytes()?;
    let samples = m.run(ns, p.cpus, p.iters, p.warmup, clock)?;
    let crossed = ns.veth_bytes()?.saturating_sub(before);
    let need = (p.iters + p.warmup) * 2 * 8;
    if crossed < need {
        bail!(
            "only {crossed} bytes crossed the veth during mpirun, less than the payload \
             ({need} bytes): rank 1 did not talk over the veth"
        );
    }
    Ok(MpiRun {
        samples,
        veth_bytes: crossed,
    })
}
