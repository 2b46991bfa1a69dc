//! Network-namespace topologies for multi-host tests (run as root): one "hub"
//! namespace and N "host" namespaces, each host joined to the hub by a veth pair,
//! plus the faults a test inflicts on them (nftables packet loss, link down) and what
//! it reads back (TCP retransmissions).
//!
//! ```text
//!   host ns  mc{pid}{tag}h{i}            hub ns  mc{pid}{tag}hub
//!   vh{i}  10.201.{i}.2/24  <--veth-->  vb{i}  10.201.{i}.1/24
//!   default route via 10.201.{i}.1      ip_forward on: hosts reach each other
//! ```
//!
//! A second rail ([`Topology::add_second_rail`], dual-rail tests) adds a second hub
//! namespace with its own veth pair to every host, and a veth pair between the two
//! hubs (the standby copies the active's tables over it):
//!
//! ```text
//!   host ns                              2nd hub ns  mc{pid}{tag}r2hub
//!   vr{i}  10.202.{i}.2/24  <--veth-->  vs{i}  10.202.{i}.1/24
//!   hub ns vm0 10.203.0.1/24  <--veth-->  2nd hub ns vm1 10.203.0.2/24
//! ```
//!
//! Each host namespace also has a mount namespace of its own with a fresh `/dev/shm`
//! (network namespaces alone share the machine's), so that a host's nodes share
//! memory with each other and not with another host's, as on real hosts: a process
//! in it holds it, and [`memchan_worker::enter`] (which [`Topology::command`], the
//! workers and [`Topology::agent`] use) enters both namespaces.
//! [`Topology::one_machine`] leaves that out: network namespaces of one host.
//!
//! Namespaces carry the creating process's PID, so a later run deletes the ones a
//! crashed run left behind (and only those: names of our form whose PID is gone).
//! Dropping a `Topology` kills every process in its namespaces and deletes them.

use std::fs::File;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use crate::harness::Worker;

/// Name of the nftables table the fault helpers install.
pub const NFT_TABLE: &str = "memchan_test";

/// One host namespace and its link to the hub.
#[derive(Debug, Clone)]
pub struct Host {
    /// The host's namespace.
    pub ns: String,
    /// The host-side address, 10.201.{i}.2.
    pub addr: String,
    /// The hub-side address of this host's veth, 10.201.{i}.1.
    pub hub_addr: String,
    /// The veth end inside the host namespace, `vh{i}`.
    pub veth_host: String,
    /// The veth end inside the hub namespace, `vb{i}`.
    pub veth_hub: String,
}

/// A hub namespace with `hosts` around it. Deleted (processes killed) on drop.
pub struct Topology {
    pub hub_ns: String,
    pub hosts: Vec<Host>,
    /// Namespaces this topology created, in creation order: what drop deletes.
    created: Vec<String>,
    /// Processes started by [`Topology::spawn`]: killed and reaped on drop.
    children: Mutex<Vec<Child>>,
    /// The second rail's hub namespace, once added.
    pub rail2_ns: Option<String>,
}

/// Runs `cmd`; panics with the command line, status and stderr if it fails.
fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{cmd:?}`: {e}"));
    if !out.status.success() {
        panic!(
            "`{cmd:?}` failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    out
}

/// `ip ARGS…`.
fn ip(args: &[&str]) -> Output {
    run(Command::new("ip").args(args))
}

/// Namespace names from `ip netns list` ("NAME" or "NAME (id: N)").
pub fn netns_list() -> Vec<String> {
    let out = ip(&["netns", "list"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

/// The PID embedded in a name of our form `mc{pid}{tag}h{i}` / `mc{pid}{tag}hub`.
fn our_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("mc")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (pid, tail) = rest.split_at(digits);
    // tail = {tag}hub or {tag}h{i}, with a non-empty tag that starts with a letter.
    let tag = match tail.strip_suffix("hub") {
        Some(tag) => tag,
        None => match tail.rsplit_once('h') {
            Some((tag, i)) if !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) => tag,
            _ => return None,
        },
    };
    let tail_ok = tag.starts_with(|c: char| c.is_ascii_alphabetic())
        && tag.bytes().all(|b| b.is_ascii_alphanumeric());
    if !tail_ok {
        return None;
    }
    pid.parse().ok()
}

/// Deletes namespaces of our form whose creating process no longer exists.
fn delete_stale() {
    for name in netns_list() {
        let Some(pid) = our_pid(&name) else { continue };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        kill_all_in(&name);
        let _ = std::fs::remove_file(memchan_worker::mount_ns(&name));
        let out = Command::new("ip").args(["netns", "del", &name]).output();
        match out {
            Ok(o) if o.status.success() => eprintln!("netns: deleted stale namespace {name}"),
            Ok(o) => eprintln!(
                "netns: cannot delete stale {name}: {}",
                String::from_utf8_lossy(&o.stderr).trim_end()
            ),
            Err(e) => eprintln!("netns: cannot run ip netns del {name}: {e}"),
        }
    }
}

/// SIGKILLs every process in namespace `ns` (`ip netns pids`). Non-children cannot be
/// reaped here; their own parents (or init) do.
fn kill_all_in(ns: &str) {
    let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() else {
        return;
    };
    for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        if let Ok(pid) = pid.parse::<libc::pid_t>() {
            if pid > 1 && pid as u32 != std::process::id() {
                // SAFETY: kill(2) with a PID read from the namespace we own.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// Runs `f` on a fresh thread that has entered namespace `ns`: sockets it creates
/// belong to `ns` for good, whichever thread uses them later.
pub fn in_ns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = format!("/run/netns/{ns}");
    let t = std::thread::spawn(move || {
        let file = File::open(&path).unwrap_or_else(|e| panic!("open {path}: {e}"));
        // SAFETY: a valid namespace fd; CLONE_NEWNET changes only this thread, which
        // exits when `f` returns.
        let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns {path}: {}", std::io::Error::last_os_error());
        f()
    });
    match t.join() {
        Ok(v) => v,
        Err(p) => std::panic::resume_unwind(p),
    }
}

impl Topology {
    /// Creates the hub namespace and `n_hosts` host namespaces (see the module docs
    /// for names and addresses), each host with a `/dev/shm` of its own. `tag`
    /// (letters then letters/digits, at most 8) keeps concurrent topologies of one
    /// process apart. Panics, naming the failing command and its stderr, if setup
    /// fails; what was created by then is deleted.
    pub fn new(tag: &str, n_hosts: usize) -> Topology {
        Topology::build(tag, n_hosts, true)
    }

    /// As [`new`](Self::new), with host namespaces that share this machine's
    /// `/dev/shm`: network namespaces of one host (one-host clusters whose nodes have
    /// network stacks of their own, as `memchan ip`'s tests need).
    pub fn one_machine(tag: &str, n_hosts: usize) -> Topology {
        Topology::build(tag, n_hosts, false)
    }

    fn build(tag: &str, n_hosts: usize, own_dev_shm: bool) -> Topology {
        assert!(
            tag.len() <= 8
                && tag.starts_with(|c: char| c.is_ascii_alphabetic())
                && tag.bytes().all(|b| b.is_ascii_alphanumeric()),
            "tag `{tag}`: letters then letters or digits, at most 8"
        );
        assert!(n_hosts <= 250, "at most 250 hosts (10.201.i.0/24)");
        delete_stale();
        let pid = std::process::id();
        let mut topo = Topology {
            hub_ns: format!("mc{pid}{tag}hub"),
            hosts: Vec::new(),
            created: Vec::new(),
            children: Mutex::new(Vec::new()),
            rail2_ns: None,
        };
        // From here on a panic drops `topo`, which deletes what was created.
        let hub = topo.hub_ns.clone();
        topo.add_ns(&hub);
        topo.ns_ip(&hub, &["link", "set", "lo", "up"]);
        run(Command::new("ip").args([
            "netns",
            "exec",
            &hub,
            "sysctl",
            "-q",
            "-w",
            "net.ipv4.ip_forward=1",
        ]));
        for i in 0..n_hosts {
            let h = Host {
                ns: format!("mc{pid}{tag}h{i}"),
                addr: format!("10.201.{i}.2"),
                hub_addr: format!("10.201.{i}.1"),
                veth_host: format!("vh{i}"),
                veth_hub: format!("vb{i}"),
            };
            topo.add_ns(&h.ns);
            ip(&[
                "link",
                "add",
                &h.veth_host,
                "netns",
                &h.ns,
                "type",
                "veth",
                "peer",
                "name",
                &h.veth_hub,
                "netns",
                &hub,
            ]);
            topo.ns_ip(&h.ns, &["link", "set", "lo", "up"]);
            topo.ns_ip(
                &h.ns,
                &[
                    "addr",
                    "add",
                    &format!("{}/24", h.addr),
                    "dev",
                    &h.veth_host,
                ],
            );
            topo.ns_ip(&h.ns, &["link", "set", &h.veth_host, "up"]);
            topo.ns_ip(&h.ns, &["route", "add", "default", "via", &h.hub_addr]);
            topo.ns_ip(
                &hub,
                &[
                    "addr",
                    "add",
                    &format!("{}/24", h.hub_addr),
                    "dev",
                    &h.veth_hub,
                ],
            );
            topo.ns_ip(&hub, &["link", "set", &h.veth_hub, "up"]);
            if own_dev_shm {
                topo.own_dev_shm(&h.ns);
            }
            topo.hosts.push(h);
        }
        topo
    }

    /// The namespaces this topology created (the hub's first), all deleted on drop.
    pub fn namespaces(&self) -> &[String] {
        &self.created
    }

    fn add_ns(&mut self, ns: &str) {
        ip(&["netns", "add", ns]);
        self.created.push(ns.to_string());
    }

    /// Gives host namespace `ns` a mount namespace of its own with a fresh
    /// `/dev/shm`: a process in it holds it (killed on drop), reached through
    /// `memchan_worker::mount_ns(ns)`.
    fn own_dev_shm(&mut self, ns: &str) {
        let link = memchan_worker::mount_ns(ns);
        std::fs::create_dir_all(memchan_worker::MOUNT_NS_DIR)
            .unwrap_or_else(|e| panic!("mkdir {}: {e}", memchan_worker::MOUNT_NS_DIR));
        let holder = Command::new("ip")
            .args([
                "netns",
                "exec",
                ns,
                "unshare",
                "--mount",
                "--propagation",
                "private",
            ])
            .args([
                "sh",
                "-c",
                "mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec sleep infinity",
            ])
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start the mount namespace holder of {ns}: {e}"));
        let pid = holder.id();
        self.children.lock().unwrap().push(holder);
        // Each step execs: the holder is ready once `sleep` runs, after the mount.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "sleep" {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline
                    && std::path::Path::new(&format!("/proc/{pid}")).exists(),
                "the mount namespace holder of {ns} did not start (its /dev/shm mount failed?)"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(format!("/proc/{pid}/ns/mnt"), &link)
            .unwrap_or_else(|e| panic!("link {link}: {e}"));
    }

    /// The `memchan run --launch-agent` template that starts a command on host
    /// `{host}` of this topology, in its network and mount namespaces.
    pub fn agent(&self) -> String {
        format!(
            "nsenter --net=/run/netns/{{host}} --mount={}/{{host}} --wd=. --",
            memchan_worker::MOUNT_NS_DIR
        )
    }

    /// `ip -n NS ARGS…`, panicking on failure.
    fn ns_ip(&self, ns: &str, args: &[&str]) -> Output {
        run(Command::new("ip").args(["-n", ns]).args(args))
    }

    /// A command running `program args` inside namespace `ns` (a host's: in its
    /// mount namespace too, [`memchan_worker::enter`]). The caller owns what it
    /// spawns; drop still kills whatever runs in the namespace.
    pub fn command(&self, ns: &str, program: &str, args: &[&str]) -> Command {
        let mut cmd = memchan_worker::enter(ns);
        cmd.arg(program).args(args);
        cmd
    }

    /// Spawns `program args` inside `ns` (stdin null, stdout/stderr inherited); it is
    /// SIGKILLed and reaped when the topology drops. Returns its PID.
    pub fn spawn(&self, ns: &str, program: &str, args: &[&str]) -> u32 {
        let child = self
            .command(ns, program, args)
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {program} in {ns}: {e}"));
        let pid = child.id();
        self.children.lock().unwrap().push(child);
        pid
    }

    /// A worker (the running test binary re-executed as `role`, see
    /// [`harness`](crate::harness)) inside `ns`.
    pub fn worker(&self, ns: &str, role: &str, args: &[String], env: &[(&str, String)]) -> Worker {
        Worker::spawn_in(ns, role, args, env)
    }

    /// A TCP listener bound to `addr` inside `ns` (created from a thread in `ns`).
    pub fn listen(&self, ns: &str, addr: &str) -> TcpListener {
        let (ns2, addr) = (ns.to_string(), addr.to_string());
        in_ns(ns, move || {
            TcpListener::bind(&addr).unwrap_or_else(|e| panic!("bind {addr} in {ns2}: {e}"))
        })
    }

    /// A TCP connection to `addr` made from inside `ns`, or the error.
    pub fn connect(
        &self,
        ns: &str,
        addr: SocketAddr,
        timeout: Duration,
    ) -> std::io::Result<TcpStream> {
        in_ns(ns, move || TcpStream::connect_timeout(&addr, timeout))
    }

    /// Whether a process in `from_ns` completes a TCP connect to `addr:port` within
    /// `timeout` (bash's /dev/tcp under `timeout`: the image has no ping or nc).
    pub fn tcp_probe(&self, from_ns: &str, addr: &str, port: u16, timeout: Duration) -> bool {
        let secs = format!("{:.3}", timeout.as_secs_f64());
        let script = format!("exec 3<>/dev/tcp/{addr}/{port}");
        self.command(
            from_ns,
            "timeout",
            &["-s", "KILL", &secs, "bash", "-c", &script],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("run tcp probe in {from_ns}: {e}"))
        .success()
    }

    /// Drops `percent`% of the packets that enter or leave interface `iface` of `ns`,
    /// at random: nftables table `memchan_test` with input, output (and, for routed
    /// traffic through the hub, forward) chains `meta iifname/oifname IFACE numgen
    /// random mod 100 < P drop` (plain `drop` at 100: nft refuses `< 100` on a
    /// 0..99 value), each with a counter ([`nft_dropped`](Self::nft_dropped)).
    /// Replaces an earlier rule set of this table.
    pub fn nft_drop(&self, ns: &str, iface: &str, percent: u32) {
        assert!(percent <= 100, "percent {percent} over 100");
        let chance = if percent >= 100 {
            String::new()
        } else {
            format!("numgen random mod 100 < {percent} ")
        };
        let script = format!(
            "table inet {NFT_TABLE}\n\
             delete table inet {NFT_TABLE}\n\
             table inet {NFT_TABLE} {{\n\
             \tchain input {{ type filter hook input priority 0; policy accept;\n\
             \t\tmeta iifname \"{iface}\" {chance}counter drop\n\t}}\n\
             \tchain output {{ type filter hook output priority 0; policy accept;\n\
             \t\tmeta oifname \"{iface}\" {chance}counter drop\n\t}}\n\
             \tchain forward {{ type filter hook forward priority 0; policy accept;\n\
             \t\tmeta iifname \"{iface}\" {chance}counter drop\n\
             \t\tmeta oifname \"{iface}\" {chance}counter drop\n\t}}\n\
             }}\n"
        );
        self.nft(ns, &script);
    }

    /// Packets the rules of [`nft_drop`](Self::nft_drop) dropped in `ns` so far.
    pub fn nft_dropped(&self, ns: &str) -> u64 {
        let out = run(&mut self.command(ns, "nft", &["list", "table", "inet", NFT_TABLE]));
        let text = String::from_utf8_lossy(&out.stdout);
        text.split("counter packets ")
            .skip(1)
            .filter_map(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
            .sum()
    }

    /// Removes the `memchan_test` table from `ns` (no error if there is none).
    pub fn nft_clear(&self, ns: &str) {
        self.nft(
            ns,
            &format!("table inet {NFT_TABLE}\ndelete table inet {NFT_TABLE}\n"),
        );
    }

    /// `nft -f -` in `ns` with `script` on stdin; panics with the script and stderr.
    fn nft(&self, ns: &str, script: &str) {
        let mut child = self
            .command(ns, "nft", &["-f", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run nft in {ns}: {e}"));
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .expect("nft stdin");
        let out = child.wait_with_output().expect("wait nft");
        assert!(
            out.status.success(),
            "`ip netns exec {ns} nft -f -` failed ({}):\n{}\nscript:\n{script}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }

    /// Adds a second rail (see the module docs): a second hub namespace, a veth pair
    /// from it to every host, and one to the first hub namespace. Returns its name.
    pub fn add_second_rail(&mut self) -> String {
        let stem = self.hub_ns.strip_suffix("hub").unwrap_or(&self.hub_ns);
        let ns = format!("{stem}r2hub");
        self.add_ns(&ns);
        self.ns_ip(&ns, &["link", "set", "lo", "up"]);
        for i in 0..self.hosts.len() {
            let (vr, vs) = (format!("vr{i}"), format!("vs{i}"));
            let host = self.hosts[i].ns.clone();
            ip(&[
                "link", "add", &vr, "netns", &host, "type", "veth", "peer", "name", &vs, "netns",
                &ns,
            ]);
            self.ns_ip(
                &host,
                &["addr", "add", &format!("10.202.{i}.2/24"), "dev", &vr],
            );
            self.ns_ip(&host, &["link", "set", &vr, "up"]);
            self.ns_ip(
                &ns,
                &["addr", "add", &format!("10.202.{i}.1/24"), "dev", &vs],
            );
            self.ns_ip(&ns, &["link", "set", &vs, "up"]);
        }
        let hub = self.hub_ns.clone();
        ip(&[
            "link", "add", "vm0", "netns", &hub, "type", "veth", "peer", "name", "vm1", "netns",
            &ns,
        ]);
        self.ns_ip(&hub, &["addr", "add", "10.203.0.1/24", "dev", "vm0"]);
        self.ns_ip(&hub, &["link", "set", "vm0", "up"]);
        self.ns_ip(&ns, &["addr", "add", "10.203.0.2/24", "dev", "vm1"]);
        self.ns_ip(&ns, &["link", "set", "vm1", "up"]);
        self.rail2_ns = Some(ns.clone());
        ns
    }

    /// The second rail's hub address as host `host` reaches it.
    pub fn rail2_addr(&self, host: usize, port: u16) -> String {
        format!("10.202.{host}.1:{port}")
    }

    /// Takes the first rail down: every link of the first hub namespace (to each
    /// host, and to the second hub) goes down, the hub process keeps running.
    pub fn first_rail_down(&self) {
        for h in &self.hosts {
            self.ns_ip(&self.hub_ns, &["link", "set", &h.veth_hub, "down"]);
        }
        if self.rail2_ns.is_some() {
            self.ns_ip(&self.hub_ns, &["link", "set", "vm0", "down"]);
        }
    }

    /// Takes host `host`'s link down (`ip link set vh{i} down` in its namespace).
    pub fn link_down(&self, host: usize) {
        let h = &self.hosts[host];
        self.ns_ip(&h.ns, &["link", "set", &h.veth_host, "down"]);
    }

    /// Brings host `host`'s link back up and restores its default route (the kernel
    /// deletes a route whose device went down).
    pub fn link_up(&self, host: usize) {
        let h = &self.hosts[host];
        self.ns_ip(&h.ns, &["link", "set", &h.veth_host, "up"]);
        self.ns_ip(&h.ns, &["route", "replace", "default", "via", &h.hub_addr]);
    }

    /// TCP segments retransmitted in `ns` so far (`RetransSegs` of /proc/net/snmp).
    /// Only segments that left the namespace count: one dropped by `ns`'s own
    /// [`nft_drop`](Self::nft_drop) output chain fails locally (EPERM) and is not.
    pub fn tcp_retrans_segs(&self, ns: &str) -> u64 {
        let out = run(&mut self.command(ns, "cat", &["/proc/net/snmp"]));
        let text = String::from_utf8_lossy(&out.stdout);
        let mut tcp = text.lines().filter(|l| l.starts_with("Tcp:"));
        let (names, values) = (tcp.next(), tcp.next());
        let (Some(names), Some(values)) = (names, values) else {
            panic!("no Tcp lines in /proc/net/snmp of {ns}:\n{text}")
        };
        names
            .split_whitespace()
            .zip(values.split_whitespace())
            .find(|(n, _)| *n == "RetransSegs")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or_else(|| panic!("no RetransSegs in /proc/net/snmp of {ns}:\n{text}"))
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        let children = match self.children.get_mut() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        for h in &self.hosts {
            let _ = std::fs::remove_file(memchan_worker::mount_ns(&h.ns));
        }
        for c in children.iter_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
        for ns in self.created.iter().rev() {
            kill_all_in(ns);
            match Command::new("ip").args(["netns", "del", ns]).output() {
                Ok(o) if o.status.success() => {}
                Ok(o) => eprintln!(
                    "netns: ip netns del {ns} failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim_end()
                ),
                Err(e) => eprintln!("netns: cannot run ip netns del {ns}: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::our_pid;

    // The tests that create namespaces (root only) are in `tests/netns.rs`.

    #[test]
    fn netns_stale_names_are_recognised() {
        assert_eq!(our_pid("mc123connh0"), Some(123));
        assert_eq!(our_pid("mc123connh12"), Some(123));
        assert_eq!(our_pid("mc123connhub"), Some(123));
        assert_eq!(our_pid("mc123connr2hub"), Some(123)); // a second rail's hub
        assert_eq!(our_pid("mc123h0"), None); // no tag
        assert_eq!(our_pid("mcfooh0"), None); // no pid
        assert_eq!(our_pid("mc123conn"), None);
        assert_eq!(our_pid("mc123connh"), None);
        assert_eq!(our_pid("other"), None);
    }
}
