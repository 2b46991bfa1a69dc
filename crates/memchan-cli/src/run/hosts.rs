//! `memchan run` across hosts: when `--hosts` / `--hostfile` name a host other than
//! this one, the launcher
//!
//! 1. places the ranks in blocks over the hosts' slots (`plan`);
//! 2. joins the hub `--hub` / `MEMCHAN_HUB` names (with `MEMCHAN_KEY_FILE`'s key), or
//!    starts one in this process with a fresh random key;
//! 3. starts one launcher per host, `memchan run --host-job`: through the remote shell
//!    (`--launch-agent`, else `MEMCHAN_RSH`, else `ssh`) as `AGENT HOST memchan run
//!    --host-job` (or with `{host}` in AGENT replaced), or directly for this host. Its
//!    stdin carries the job as one JSON line (`HostJob`: ranks, hub, key, program,
//!    variables: nothing to quote for a remote shell, no key on a command line), then
//!    the launcher's `signal N` lines; its end (the launcher or the connection gone)
//!    kills the host's PEs;
//! 4. stands for the host launchers as the one-host launcher stands for PEs
//!    (`supervise`): forwards signals as `signal N`, ends every host on the first
//!    abnormal end or the timeout, and returns the first non-zero exit code, which a
//!    host launcher takes from its first failing PE.
//!
//! A host launcher runs its block as the one-host launcher does (binding, process
//! groups, tags with the job's ranks), with `MEMCHAN_HUB` and `MEMCHAN_KEY_FILE` in
//! every PE: `/proc/self/fd/N`, a memfd holding the key that the PE inherits, so no
//! copy of the key is left on any file system, whatever kills whom.

use std::io::{BufRead, BufReader, Read, Stdin, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Sender};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use signal_hook::consts::SIGKILL;
use tracing::{debug, error, warn};

use super::args::{Bind, HostSlots, RunArgs};
use super::{
    cluster_name, exit_code, signal_group, spawn_waiter, supervise, Event, Members, SignalThread,
};

/// The default remote shell, as Open MPI's `plm_rsh_agent`.
const DEFAULT_AGENT: &str = "ssh";
/// The variable that names the remote shell when `--launch-agent` does not.
const AGENT_VAR: &str = "MEMCHAN_RSH";

/// How long the hub the launcher starts lets a node be silent before isolating it.
/// Longer than a hub's default (800 ms): the launcher sees a PE that dies and ends the
/// job itself, so the hub's detector would mostly mistake a busy host's scheduling
/// stall (PEs sharing cores, a loaded CI machine) for a failure.
const RUN_HUB_FAILURE_TIMEOUT: Duration = Duration::from_secs(5);

/// One host's block of ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HostBlock {
    pub host: String,
    /// This host: its launcher is started without the remote shell.
    pub here: bool,
    pub first: usize,
    pub count: usize,
}

/// The blocks of a run across hosts, or `None` when every host named is this one
/// (the one-host launcher, which ignores slots).
pub(super) fn plan_across_hosts(a: &RunArgs) -> Result<Option<Vec<HostBlock>>> {
    let me = this_host();
    if a.hosts.iter().all(|h| is_here(&h.name, &me)) {
        return Ok(None);
    }
    let blocks = plan(&a.hosts, a.np as usize, a.oversubscribe)?;
    Ok(Some(
        blocks
            .into_iter()
            .map(|(host, first, count)| HostBlock {
                here: is_here(&host, &me),
                host,
                first,
                count,
            })
            .collect(),
    ))
}

/// This host's name, in full and up to the first dot.
fn this_host() -> (String, String) {
    let uname = rustix::system::uname();
    let me = uname.nodename().to_string_lossy().into_owned();
    let short = me.split('.').next().unwrap_or(&me).to_string();
    (me, short)
}

fn is_here(h: &str, (me, short): &(String, String)) -> bool {
    ["localhost", "127.0.0.1", "::1", me.as_str(), short.as_str()].contains(&h)
}

/// Ranks in blocks over the hosts' slots, in the order the hosts are named (a host
/// named twice: its slots added up, at its first place). A host without a count has
/// one slot. More ranks than slots needs `oversubscribe`, and then spreads the ranks
/// over the slots in even blocks (as `place` spreads them over cores). Gives
/// `(host, first rank, count)` for each host that gets a rank.
pub(super) fn plan(
    hosts: &[HostSlots],
    np: usize,
    oversubscribe: bool,
) -> Result<Vec<(String, usize, usize)>> {
    let mut merged: Vec<(String, usize)> = Vec::new();
    for h in hosts {
        let slots = h.slots.unwrap_or(1) as usize;
        match merged.iter_mut().find(|(n, _)| *n == h.name) {
            Some((_, s)) => *s += slots,
            None => merged.push((h.name.clone(), slots)),
        }
    }
    let total: usize = merged.iter().map(|(_, s)| s).sum();
    if np > total && !oversubscribe {
        bail!(
            "{np} PEs but only {total} slots on the hosts ({}): give more slots (`host:N`, \
             `slots=N`) or pass --oversubscribe",
            merged
                .iter()
                .map(|(n, s)| format!("{n}:{s}"))
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    // The host of each slot, in order; rank r takes slot r (or r*total/np).
    let slot_host: Vec<usize> = merged
        .iter()
        .enumerate()
        .flat_map(|(i, (_, s))| std::iter::repeat_n(i, *s))
        .collect();
    let mut blocks: Vec<(String, usize, usize)> = Vec::new();
    for r in 0..np {
        let h = if np <= total {
            slot_host[r]
        } else {
            slot_host[r * total / np]
        };
        match blocks.last_mut() {
            Some((n, _, count)) if *n == merged[h].0 => *count += 1,
            _ => blocks.push((merged[h].0.clone(), r, 1)),
        }
    }
    Ok(blocks)
}

/// What a host launcher is told, as one JSON line on its stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct HostJob {
    pub cluster: String,
    /// The hub's `HOST:PORT`, as the PEs reach it.
    pub hub: String,
    /// The cluster key's bytes in hex; `None`: an open cluster.
    pub key_hex: Option<String>,
    pub first: usize,
    pub count: usize,
    pub size: usize,
    /// `-x` variables, with values (a remote shell passes no environment).
    pub env: Vec<(String, String)>,
    pub program: String,
    pub args: Vec<String>,
    /// The launcher's working directory: the PEs start there if this host has it.
    pub cwd: Option<String>,
    pub tag_output: bool,
    pub bind_core: bool,
    pub oversubscribe: bool,
    pub report_bindings: bool,
}

/// The hub of a run across hosts: started here (dropped at the end) or joined.
struct RunHub {
    addr: String,
    key: Option<Vec<u8>>,
    cluster: String,
    _hub: Option<memchan_hub::Hub>,
}

fn hub_for(a: &RunArgs) -> Result<RunHub> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if let Some(addr) = a.hub.clone().or_else(|| env("MEMCHAN_HUB")) {
        let key =
            memchan_net::node::read_key(env("MEMCHAN_KEY_FILE").map(PathBuf::from).as_deref())
                .context("reading the cluster key for the hub")?;
        // A hub serves one cluster: a job script that set MEMCHAN_CLUSTER for it
        // keeps that name.
        let cluster = env(memchan_launch::CLUSTER).unwrap_or_else(cluster_name);
        debug!(hub = %addr, %cluster, "joining the hub");
        return Ok(RunHub {
            addr,
            key,
            cluster,
            _hub: None,
        });
    }
    let cluster = cluster_name();
    let secret = fresh_key()?;
    let listen = a.hub_listen.clone().unwrap_or_else(|| "0.0.0.0:0".into());
    let hub = memchan_hub::Hub::start(memchan_hub::HubConfig {
        listen: listen.clone(),
        cluster: Some(cluster.clone()),
        key: memchan_link::wire::Key::from_secret(&secret),
        keyed: true,
        failure_timeout: RUN_HUB_FAILURE_TIMEOUT,
        ..memchan_hub::HubConfig::default()
    })
    .with_context(|| format!("starting the run's hub on {listen}"))?;
    let bound = hub.local_addr();
    let ip = match bound.ip() {
        ip if !ip.is_unspecified() => ip,
        _ => IpAddr::V4(first_ipv4().ok_or_else(|| {
            anyhow!(
                "this host has no non-loopback IPv4 address for the other hosts to reach the \
                 hub at: give --hub-listen HOST:PORT"
            )
        })?),
    };
    let addr = SocketAddr::new(ip, bound.port()).to_string();
    debug!(hub = %addr, %cluster, "started the run's hub");
    Ok(RunHub {
        addr,
        key: Some(secret),
        cluster,
        _hub: Some(hub),
    })
}

/// 32 bytes from the kernel's generator, in hex (a key file's text).
fn fresh_key() -> Result<Vec<u8>> {
    let mut raw = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut raw))
        .context("reading /dev/urandom for the run's key")?;
    Ok(hex(&raw).into_bytes())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("the job's key is not hex");
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).context("the job's key is not hex"))
        .collect()
}

/// The first IPv4 address of an interface that is up and not loopback.
fn first_ipv4() -> Option<Ipv4Addr> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a list that freeifaddrs releases below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut found = None;
    let mut p = list;
    while !p.is_null() {
        // SAFETY: `p` is a node of the list getifaddrs gave, not yet freed.
        let ifa = unsafe { &*p };
        let flags = ifa.ifa_flags as libc::c_int;
        if !ifa.ifa_addr.is_null()
            && flags & libc::IFF_UP != 0
            && flags & libc::IFF_LOOPBACK == 0
            // SAFETY: a non-null ifa_addr points at a sockaddr, whose family says its
            // type: read as sockaddr_in only for AF_INET.
            && i32::from(unsafe { (*ifa.ifa_addr).sa_family }) == libc::AF_INET
        {
            // SAFETY: as above, an AF_INET address is a sockaddr_in.
            let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
            found = Some(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)));
            break;
        }
        p = ifa.ifa_next;
    }
    // SAFETY: the list getifaddrs gave, freed once; no reference into it outlives this.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// The remote shell's words for `host`: `{host}` replaced, else the host appended.
pub(super) fn agent_words(agent: &str, host: &str) -> Vec<String> {
    let words: Vec<&str> = agent.split_whitespace().collect();
    if words.iter().any(|w| w.contains("{host}")) {
        words.iter().map(|w| w.replace("{host}", host)).collect()
    } else {
        words
            .iter()
            .map(|w| w.to_string())
            .chain([host.to_string()])
            .collect()
    }
}

/// The host launchers, as `supervise` sees them.
struct Hosts {
    blocks: Vec<HostBlock>,
    /// Each host launcher's process group (it leads one) and its control pipe.
    pids: Vec<i32>,
    control: Vec<Option<ChildStdin>>,
}

impl Members for Hosts {
    fn len(&self) -> usize {
        self.pids.len()
    }

    fn signal(&mut self, i: usize, sig: i32) {
        if let Some(c) = self.control[i].as_mut() {
            // A host launcher that has gone has closed its end: nothing to tell.
            if let Err(e) = writeln!(c, "signal {sig}").and_then(|_| c.flush()) {
                debug!(host = %self.blocks[i].host, err = %e, "telling a host launcher");
            }
        }
        if sig == SIGKILL {
            // Killed here: the remote shell's end closes the host launcher's stdin,
            // which kills its PEs; one on this host takes its PEs with it.
            self.control[i] = None;
            signal_group(self.pids[i], SIGKILL);
        }
    }

    fn log_failure(&self, i: usize, status: ExitStatus) {
        let b = &self.blocks[i];
        let (host, first, last) = (&b.host, b.first, b.first + b.count - 1);
        match status.signal() {
            Some(sig) => error!(
                %host, first, last, signal = sig,
                "the launcher of a host was killed by a signal: ending every PE"
            ),
            None => error!(
                %host, first, last, code = exit_code(status),
                "the PEs of a host ended with a non-zero code: ending every PE"
            ),
        }
    }
}

/// Runs the job of `a` over `blocks`: hub, host launchers, supervision.
pub(super) fn launch(a: &RunArgs, blocks: &[HostBlock]) -> Result<i32> {
    let hub = hub_for(a)?;
    let agent = a
        .launch_agent
        .clone()
        .or_else(|| {
            std::env::var(AGENT_VAR)
                .ok()
                .filter(|v| !v.trim().is_empty())
        })
        .unwrap_or_else(|| DEFAULT_AGENT.into());
    let exe = std::env::current_exe().context("finding this program to start it on the hosts")?;
    let program = a.program.to_str().ok_or_else(|| {
        anyhow!(
            "{:?}: across hosts the program's name must be UTF-8",
            a.program
        )
    })?;
    let args = a
        .program_args
        .iter()
        .map(|s| {
            s.to_str()
                .map(String::from)
                .ok_or_else(|| anyhow!("{s:?}: across hosts the program's arguments must be UTF-8"))
        })
        .collect::<Result<Vec<_>>>()?;
    // A remote shell passes no environment: `-x VAR` carries the launcher's value.
    let mut env = Vec::new();
    for (k, v) in &a.export {
        match v.clone().or_else(|| std::env::var(k).ok()) {
            Some(v) => env.push((k.clone(), v)),
            None => warn!(var = %k, "-x names a variable that is not set"),
        }
    }
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|d| d.to_str().map(String::from));

    let (tx, rx) = mpsc::channel();
    let sig = SignalThread::start(&tx)?;

    let mut hosts = Hosts {
        blocks: blocks.to_vec(),
        pids: Vec::new(),
        control: Vec::new(),
    };
    for (i, b) in blocks.iter().enumerate() {
        let job = HostJob {
            cluster: hub.cluster.clone(),
            hub: hub.addr.clone(),
            key_hex: hub.key.as_deref().map(hex),
            first: b.first,
            count: b.count,
            size: a.np as usize,
            env: env.clone(),
            program: program.to_string(),
            args: args.clone(),
            cwd: cwd.clone(),
            tag_output: a.tag_output,
            bind_core: a.bind == Bind::Core,
            oversubscribe: a.oversubscribe,
            report_bindings: a.report_bindings,
        };
        let mut cmd = if b.here {
            Command::new(&exe)
        } else {
            let words = agent_words(&agent, &b.host);
            let mut c = Command::new(&words[0]);
            c.args(&words[1..]).arg(&exe);
            c
        };
        cmd.args(["run", "--host-job"])
            .stdin(Stdio::piped())
            .process_group(0);
        debug!(host = %b.host, first = b.first, count = b.count, ?cmd, "starting a host launcher");
        let started = cmd.spawn().and_then(|mut child| {
            let mut stdin = child.stdin.take().expect("piped stdin");
            let line = serde_json::to_string(&job).map_err(std::io::Error::other)?;
            // Written before the waiter starts: a launcher that died at once gives
            // EPIPE here, and its status below.
            if let Err(e) = writeln!(stdin, "{line}").and_then(|_| stdin.flush()) {
                debug!(host = %b.host, err = %e, "sending the job");
            }
            Ok((child, stdin))
        });
        let (child, stdin) = match started {
            Ok(c) => c,
            Err(e) => {
                for &pid in &hosts.pids {
                    signal_group(pid, SIGKILL);
                }
                drop(rx);
                sig.stop();
                let what = if b.here {
                    format!("{}", exe.display())
                } else {
                    format!("the launch agent `{agent}`")
                };
                return Err(
                    anyhow::Error::new(e).context(format!("starting {what} for host `{}`", b.host))
                );
            }
        };
        hosts.pids.push(child.id() as i32);
        hosts.control.push(Some(stdin));
        spawn_waiter(child, i, tx.clone());
    }
    drop(tx);

    let code = supervise(a.timeout, &mut hosts, &rx);
    sig.stop();
    debug!(code, "run across hosts ended");
    Ok(code)
}

/// `memchan run --host-job`: reads the job from stdin, runs its block, gives the exit
/// code of its first failing PE.
pub(super) fn host_job() -> Result<i32> {
    let mut input = BufReader::new(std::io::stdin());
    let mut line = String::new();
    input
        .read_line(&mut line)
        .context("reading the job from the launcher")?;
    let job: HostJob = serde_json::from_str(&line).context("reading the job from the launcher")?;
    if job.count == 0 || job.first + job.count > job.size {
        bail!(
            "the job's ranks {}..{} do not fit its size {}",
            job.first,
            job.first + job.count,
            job.size
        );
    }
    let key = match &job.key_hex {
        Some(h) => Some(key_memfd(&unhex(h)?)?),
        None => None,
    };
    let a = RunArgs {
        np: u32::try_from(job.count).context("the job's count")?,
        hosts: Vec::new(),
        launch_agent: None,
        hub: None,
        hub_listen: None,
        export: job
            .env
            .iter()
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect(),
        tag_output: job.tag_output,
        // The launcher keeps the time.
        timeout: None,
        bind: if job.bind_core {
            Bind::Core
        } else {
            Bind::None
        },
        oversubscribe: job.oversubscribe,
        report_bindings: job.report_bindings,
        program: job.program.clone().into(),
        program_args: job.args.iter().map(Into::into).collect(),
    };
    let cwd = job.cwd.as_ref().map(PathBuf::from).filter(|d| {
        let ok = d.is_dir();
        if !ok {
            warn!(dir = %d.display(), "this host has not the launcher's directory: the PEs start here");
        }
        ok
    });
    let block = super::Block {
        cluster: job.cluster.clone(),
        first: job.first,
        size: job.size,
        hub: Some((job.hub.clone(), key.as_ref().map(AsRawFd::as_raw_fd))),
        cwd,
        host_job: true,
    };
    let code = super::launch_block(&a, &block, Some(input));
    drop(key);
    code
}

/// Turns the launcher's control lines into events: `signal N` a signal to forward,
/// the end of the stream (the launcher gone) SIGKILL. Other lines are refused.
pub(super) fn read_control(mut from: BufReader<Stdin>, tx: &Sender<Event>) {
    let mut line = String::new();
    loop {
        line.clear();
        match from.read_line(&mut line) {
            Ok(0) | Err(_) => {
                let _ = tx.send(Event::Signal(SIGKILL));
                return;
            }
            Ok(_) => {}
        }
        match line
            .trim()
            .strip_prefix("signal ")
            .and_then(|n| n.parse::<i32>().ok())
            .filter(|&n| (1..=64).contains(&n))
        {
            Some(sig) => {
                if tx.send(Event::Signal(sig)).is_err() {
                    return;
                }
            }
            None => warn!(line = %line.trim(), "not a control line from the launcher: ignored"),
        }
    }
}

/// The key of a host job in a memfd (close-on-exec: only the PEs are given it).
fn key_memfd(key: &[u8]) -> Result<OwnedFd> {
    let fd = rustix::fs::memfd_create("memchan-run-key", rustix::fs::MemfdFlags::CLOEXEC)
        .context("memfd_create for the run's key")?;
    let mut f = std::fs::File::from(fd);
    f.write_all(key).context("writing the run's key")?;
    Ok(f.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hs(v: &[(&str, Option<u32>)]) -> Vec<HostSlots> {
        v.iter()
            .map(|&(n, slots)| HostSlots {
                name: n.into(),
                slots,
            })
            .collect()
    }

    fn b(v: &[(&str, usize, usize)]) -> Vec<(String, usize, usize)> {
        v.iter().map(|&(h, f, c)| (h.to_string(), f, c)).collect()
    }

    #[test]
    fn ranks_fill_the_slots_in_blocks() {
        let h = hs(&[("a", Some(2)), ("b", Some(2))]);
        assert_eq!(plan(&h, 4, false).unwrap(), b(&[("a", 0, 2), ("b", 2, 2)]));
        assert_eq!(plan(&h, 3, false).unwrap(), b(&[("a", 0, 2), ("b", 2, 1)]));
        assert_eq!(plan(&h, 1, false).unwrap(), b(&[("a", 0, 1)]));
        // A host without a count has one slot; a host named twice adds up.
        let h = hs(&[("a", None), ("b", None), ("a", Some(2))]);
        assert_eq!(plan(&h, 4, false).unwrap(), b(&[("a", 0, 3), ("b", 3, 1)]));
        // More ranks than slots: refused, or spread in even blocks.
        let h = hs(&[("a", Some(1)), ("b", Some(1))]);
        let e = plan(&h, 3, false).unwrap_err().to_string();
        assert!(
            e.contains("3 PEs but only 2 slots") && e.contains("a:1,b:1"),
            "{e}"
        );
        assert_eq!(plan(&h, 4, true).unwrap(), b(&[("a", 0, 2), ("b", 2, 2)]));
        assert_eq!(plan(&h, 3, true).unwrap(), b(&[("a", 0, 2), ("b", 2, 1)]));
    }

    #[test]
    fn the_agent_takes_the_host_in_place_or_last() {
        assert_eq!(agent_words("ssh", "n1"), ["ssh", "n1"]);
        assert_eq!(
            agent_words("ssh -x -p 22", "n1"),
            ["ssh", "-x", "-p", "22", "n1"]
        );
        assert_eq!(
            agent_words("ip netns exec {host}", "ns0"),
            ["ip", "netns", "exec", "ns0"]
        );
    }

    #[test]
    fn keys_travel_as_hex() {
        let k = [0u8, 1, 0xab, 0xff];
        assert_eq!(hex(&k), "0001abff");
        assert_eq!(unhex("0001abff").unwrap(), k);
        assert!(unhex("0g").is_err() && unhex("abc").is_err());
    }

    #[test]
    fn this_host_by_its_names() {
        let me = ("node7.example.org".to_string(), "node7".to_string());
        for h in [
            "localhost",
            "127.0.0.1",
            "::1",
            "node7",
            "node7.example.org",
        ] {
            assert!(is_here(h, &me), "{h}");
        }
        assert!(!is_here("node8", &me));
    }
}
