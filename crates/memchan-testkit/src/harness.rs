//! The conformance harness: a conformance test is a function of a [`Transport`];
//! `on_every_transport!(f)` makes one `#[test]` of it per line of
//! [`every_transport!`](crate::every_transport). Its worker processes are
//! `memchan-worker`'s ([`Worker`], re-exported with [`args`]): the test binary run
//! again in a role, on the transport's cluster ([`Transport::spawn`]).

pub use memchan_worker::{args, role, Spawn, Worker};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A cluster name no other test (or test run) uses.
pub fn unique_cluster(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "t-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The transport a conformance test runs on: the suite is written once against the
/// public API (the transport contract's one face) and every test runs on every
/// transport listed in [`every_transport!`](crate::every_transport).
pub enum Transport {
    /// One host, shared memory.
    Shm,
    /// Through a hub (run by the test process; the nodes are separate processes
    /// joined over TCP, workers find it through `MEMCHAN_HUB`), every node outside
    /// any host domain: every write crosses the network.
    Hub(memchan_hub::Hub),
    /// Through a hub, the nodes split between two host domains of this host
    /// (`MEMCHAN_DOMAIN` `a` and `b`, in turn as they join): a point-to-point write
    /// within a domain is a store, the rest goes through the hub, so a test sees
    /// both paths and their mix.
    Domains(memchan_hub::Hub, std::sync::atomic::AtomicUsize),
}

/// The liveness timing a test's cluster runs with (the hub's, for a hub).
#[derive(Clone, Copy)]
pub struct Timing {
    pub heartbeat: Duration,
    pub failure_timeout: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            heartbeat: Duration::from_millis(100),
            failure_timeout: Duration::from_millis(800),
        }
    }
}

/// Lists every transport the suite runs on, one line each: the name of its test
/// variant and how the test process sets it up for a [`Timing`]. A new transport is
/// one line here; every `on_every_transport!` test then runs on it too.
///
/// `every_transport!(m!(args))` expands to `m!(args; name => setup, ...)`; `m` may be
/// a path (`$crate::instantiate_per_transport`), so the macro needs no import at the
/// caller.
#[macro_export]
macro_rules! every_transport {
    ($($then:ident)::+ ! ($($args:tt)*)) => {
        $($then)::+!($($args)*;
            shm => |_t: $crate::harness::Timing| $crate::harness::Transport::Shm,
            hub => $crate::harness::Transport::hub_timed,
            domains => $crate::harness::Transport::domains_timed,
        );
    };
}

/// Runs the test function `$f(&Transport)` once per transport of [`every_transport!`]
/// (as `$f::shm`, `$f::hub`, ...), with the default timing or `$timing`. Invoke it at
/// the level of `$f` (the generated module calls `super::$f`).
#[macro_export]
macro_rules! on_every_transport {
    ($f:ident) => {
        $crate::on_every_transport!($f, $crate::harness::Timing::default());
    };
    ($f:ident, $timing:expr) => {
        $crate::every_transport!($crate::instantiate_per_transport!($f, $timing));
    };
}

/// One `#[test]` per transport line (used by `on_every_transport!`).
#[macro_export]
macro_rules! instantiate_per_transport {
    ($f:ident, $timing:expr; $($name:ident => $setup:expr),* $(,)?) => {
        mod $f {
            $(
                #[test]
                fn $name() {
                    let setup = $setup;
                    super::$f(&setup($timing));
                }
            )*
        }
    };
}

impl Transport {
    /// A fresh hub with the given heartbeat and failure timeout.
    pub fn hub_timed(t: Timing) -> Transport {
        Transport::Hub(start_hub(t))
    }

    /// A fresh hub with the given timing, its nodes in two host domains in turn.
    pub fn domains_timed(t: Timing) -> Transport {
        Transport::Domains(start_hub(t), Default::default())
    }

    /// The hub, if this transport has one.
    pub fn hub(&self) -> Option<&memchan_hub::Hub> {
        match self {
            Transport::Shm => None,
            Transport::Hub(h) | Transport::Domains(h, _) => Some(h),
        }
    }

    fn hub_addr(&self) -> Option<String> {
        self.hub().map(|h| h.local_addr().to_string())
    }

    /// The host domain of the next node to join (`None`: none; hub transports only).
    fn next_domain(&self) -> Option<&'static str> {
        match self {
            Transport::Domains(_, next) => {
                Some(["a", "b"][next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2])
            }
            _ => None,
        }
    }

    /// `cfg` pointed at this transport (for a node that joins: its host domain too).
    pub fn config(&self, cfg: memchan::Config) -> memchan::Config {
        match self.hub_addr() {
            Some(addr) => {
                let cfg = cfg.with_hub(memchan::HubSpec::connect(addr));
                match self.next_domain() {
                    Some(d) => cfg.with_host_domain(d),
                    None => cfg.without_host_domain(),
                }
            }
            None => cfg.without_hub(),
        }
    }

    /// Joins `name` in this process.
    pub fn join(&self, name: &str) -> memchan::Result<memchan::Cluster> {
        self.join_with(name, memchan::Config::default())
    }

    /// Joins `name` in this process with `cfg` (its hub replaced by this transport's).
    pub fn join_with(&self, name: &str, cfg: memchan::Config) -> memchan::Result<memchan::Cluster> {
        memchan::Cluster::join_with(name, self.config(cfg))
    }

    /// Starts a worker process on this transport.
    pub fn spawn(&self, role: &str, args: &[String]) -> Worker {
        let s = Spawn::new(role, args)
            .env_remove("MEMCHAN_HUB")
            .env_remove("MEMCHAN_HUB_HOST");
        match self.hub_addr() {
            Some(a) => s
                .env("MEMCHAN_HUB", a)
                .env("MEMCHAN_DOMAIN", self.next_domain().unwrap_or("off")),
            None => s,
        }
        .spawn()
    }

    /// Whether this is a hub transport (with or without host domains).
    pub fn is_hub(&self) -> bool {
        self.hub().is_some()
    }

    /// The status report of `cluster` on this transport, as `memchan status` shows it
    /// (one host: its control block; hub: the hub's view).
    ///
    /// # Panics
    /// If it cannot be read (a test failure).
    pub fn status(&self, cluster: &str) -> memchan_core::status::ClusterStatus {
        match self {
            Transport::Shm => memchan_shm::status::query(cluster).expect("one-host status"),
            Transport::Hub(h) | Transport::Domains(h, _) => h.status(),
        }
    }
}

/// A hub on loopback with the given heartbeat and failure timeout.
fn start_hub(t: Timing) -> memchan_hub::Hub {
    memchan_hub::Hub::start(memchan_hub::HubConfig {
        heartbeat: t.heartbeat,
        failure_timeout: t.failure_timeout,
        ..Default::default()
    })
    .expect("start a hub")
}

/// `key=value` pairs of a result line.
pub fn field(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no `{key}` in `{line}`"))
        .parse()
        .unwrap_or_else(|_| panic!("`{key}` not a number in `{line}`"))
}

/// Sends this worker's `tracing` events (the hub's joins and refusals, the relay's
/// errors) to stderr as `memchan hub` does: filtered by `MEMCHAN_LOG` (default
/// `info`), without colours, so [`Worker::expect_stderr`] can find them. Call it first
/// in the worker entry; a second call does nothing.
pub fn log_to_stderr() {
    let filter = tracing_subscriber::EnvFilter::builder()
        .with_default_directive(tracing_subscriber::filter::LevelFilter::INFO.into())
        .with_env_var("MEMCHAN_LOG")
        .from_env_lossy();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// CLOCK_MONOTONIC in ns, comparable across processes.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer for clock_gettime.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time the calling thread has used (to tell a waiter that slept from one that
/// spun, without reading the wall clock).
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
