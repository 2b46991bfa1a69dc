//! How a node joins: one [`Config`] for every transport, built from
//! [`Config::default`] with its `with_*` methods and checked once by
//! [`Config::validate`] before any transport sees it; and where the hub is
//! ([`HubSpec`]), parsed from the form users type by [`HubSpec::parse_rails`].

use crate::error::{Error, Result};
use crate::names::PageSize;
use std::path::PathBuf;
use std::time::Duration;

/// Where a node's hub is (see [`Config::hub`]).
///
/// ```
/// use memchan_core::HubSpec;
/// assert_eq!(HubSpec::connect("10.0.0.1:7400"), HubSpec::parse_rails("10.0.0.1:7400")?);
/// assert_eq!(
///     HubSpec::parse_rails("10.0.0.1:7400, 10.1.0.1:7400")?,
///     HubSpec::Connect { active: "10.0.0.1:7400".into(), standby: Some("10.1.0.1:7400".into()) },
/// );
/// assert!(HubSpec::parse_rails("a:1,b:1,c:1").is_err());
/// let two = HubSpec::dual_rail("a:1", "b:1");
/// assert_eq!(two.addrs().collect::<Vec<_>>(), ["a:1", "b:1"]);
/// # Ok::<(), memchan_core::config::HubListError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubSpec {
    /// Join through the hub listening at `active` (`HOST:PORT`, `memchan hub
    /// --listen`). With a `standby` (dual rail: `memchan hub --standby-of ACTIVE` runs
    /// it), every node moves to the standby when the active hub is lost.
    Connect {
        /// The active hub's `HOST:PORT`.
        active: String,
        /// The standby hub's `HOST:PORT`, on the second rail.
        standby: Option<String>,
    },
    /// Host the hub in this process, listening at `HOST:PORT`: the virtual hub of a
    /// two-node cluster, whose other node connects here. The cluster ends with this node.
    Host(String),
}

/// Why a hub list (`HOST:PORT` or `ACTIVE,STANDBY`) does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HubListError {
    /// Nothing but blanks.
    #[error("no hub address: use HOST:PORT, or ACTIVE,STANDBY for two rails")]
    Empty,
    /// One of the two rails is blank (`ACTIVE,` or `,STANDBY`).
    #[error("`{0}`: a rail without an address; two rails are ACTIVE,STANDBY")]
    BlankRail(String),
    /// More than two addresses.
    #[error(
        "`{list}`: {count} hub addresses, but a cluster has at most two rails (ACTIVE,STANDBY)"
    )]
    TooManyRails {
        /// The list as given.
        list: String,
        /// How many addresses it names.
        count: usize,
    },
}

impl HubSpec {
    /// Join through the one hub at `addr` (`HOST:PORT`).
    pub fn connect(addr: impl Into<String>) -> HubSpec {
        HubSpec::Connect {
            active: addr.into(),
            standby: None,
        }
    }

    /// Join through the hub at `active`, with `standby` on the second rail.
    pub fn dual_rail(active: impl Into<String>, standby: impl Into<String>) -> HubSpec {
        HubSpec::Connect {
            active: active.into(),
            standby: Some(standby.into()),
        }
    }

    /// The form users type (`MEMCHAN_HUB`, the CLI's `--hub`, Python's `hub=`):
    /// `HOST:PORT`, or `ACTIVE,STANDBY` for two rails; blanks around each address
    /// are ignored.
    ///
    /// # Errors
    /// [`HubListError`]: a blank list, a blank rail, or more than two addresses.
    pub fn parse_rails(list: &str) -> std::result::Result<HubSpec, HubListError> {
        let rails: Vec<&str> = list.split(',').map(str::trim).collect();
        match rails[..] {
            [""] => Err(HubListError::Empty),
            [active] => Ok(HubSpec::connect(active)),
            [active, standby] if active.is_empty() || standby.is_empty() => {
                Err(HubListError::BlankRail(list.to_string()))
            }
            [active, standby] => Ok(HubSpec::dual_rail(active, standby)),
            _ => Err(HubListError::TooManyRails {
                list: list.to_string(),
                count: rails.len(),
            }),
        }
    }

    /// Every address it names: the active hub, then the standby if there is one; or
    /// the address a hosted hub listens at.
    pub fn addrs(&self) -> impl Iterator<Item = &str> {
        let (first, second) = match self {
            HubSpec::Connect { active, standby } => (active, standby.as_ref()),
            HubSpec::Host(listen) => (listen, None),
        };
        std::iter::once(first.as_str()).chain(second.map(String::as_str))
    }
}

/// Bytes of unreleased packets a node may hold before its writes wait (hub transport).
pub const DEFAULT_REPLAY_LIMIT: usize = 16 << 20;
/// What an unreadable `MEMCHAN_SHM_MODE` becomes, so that `validate` names it.
const BAD_SHM_MODE: u32 = u32::MAX;
/// The shortest heartbeat period [`Config::validate`] accepts.
pub const MIN_HEARTBEAT: Duration = Duration::from_millis(1);
/// The longest heartbeat period or failure timeout [`Config::validate`] accepts.
pub const MAX_TIMING: Duration = Duration::from_secs(3600);
/// The smallest replay memory [`Config::validate`] accepts: one largest packet.
pub const MIN_REPLAY_LIMIT: usize = 64 << 10;

/// How a node joins. [`Config::default`] reads `MEMCHAN_HUB`, `MEMCHAN_HUB_HOST`,
/// `MEMCHAN_KEY_FILE`, `MEMCHAN_SHM_MODE` and `MEMCHAN_DOMAIN` from the environment; everything else has
/// a fixed default. Each `with_*` method changes one setting:
///
/// ```
/// use memchan_core::{Config, PageSize};
/// use std::time::Duration;
/// let cfg = Config::default()
///     .without_hub() // this host only, whatever MEMCHAN_HUB says
///     .with_page_size(PageSize::K8)
///     .with_heartbeat(Duration::from_millis(50))
///     .with_failure_timeout(Duration::from_millis(400));
/// assert!(cfg.validate().is_ok());
/// assert_eq!(cfg.heartbeat, Duration::from_millis(50));
/// let bad = cfg.with_heartbeat(Duration::ZERO);
/// assert!(bad.validate().is_err());
/// ```
///
/// The struct is `#[non_exhaustive]`, so that settings can be added without breaking
/// anyone: outside this crate it is built with these methods, not with a struct
/// literal. Its fields stay public for reading.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// Page size; `None` accepts the cluster's (4 KiB for a new cluster).
    pub page_size: Option<PageSize>,
    /// Heartbeat period (at least 1 ms). Default 150 ms: every period wakes each
    /// node's heartbeat thread, and a wake-up costs a core 10-30 µs on a virtual
    /// machine, so 256 idle nodes of one host at 100 ms took 5-8% of a core; 150 ms
    /// still sees a hung node within 1 s (failure timeout, one period and its
    /// timer slack of an eighth).
    pub heartbeat: Duration,
    /// A node (or hub) silent this long is declared failed; at least twice the
    /// heartbeat. A dead process is seen sooner (within one heartbeat) on one host.
    pub failure_timeout: Duration,
    /// `None`: this host only, over shared memory. `Some`: through a hub.
    pub hub: Option<HubSpec>,
    /// File holding the cluster key (hub transport); `None`: an open cluster.
    pub key_file: Option<PathBuf>,
    /// Bytes of unreleased packets a node may hold before writes wait (hub transport).
    pub replay_limit: usize,
    /// One host: the permission bits of the cluster's control block when this node
    /// creates it, and the widest it accepts when joining an existing one. Default
    /// `0o600` (only the owner's uid, and root, can join), or `MEMCHAN_SHM_MODE`
    /// (octal). A cluster shared with other users needs e.g. `0o660` (group) or
    /// `0o666` on every node: any uid that can open the control block can rewrite
    /// the whole cluster state, so segment modes protect only within that circle.
    pub shm_mode: u32,
    /// Hub transport: the host domain this node is in, `Some` (the default, named
    /// `""`): the cluster's nodes on this host that name the same domain share
    /// memory, so that a point-to-point write between them is a store into the
    /// destination's receive memory and never enters the network. `None` (or
    /// `MEMCHAN_DOMAIN=off`): every write goes through the hub. A name (`MEMCHAN_DOMAIN`,
    /// at most 64 letters, digits, `-` or `_`) splits one host into several domains,
    /// as tests of many hosts on one machine do.
    pub host_domain: Option<String>,
    /// Hub transport: a point-to-point write to a node of another host goes on a
    /// direct link between the two nodes, one network hop (the default), instead of
    /// through the hub; `MEMCHAN_DIRECT=off` sends everything through the hub.
    pub direct: bool,
    /// Why `MEMCHAN_HUB` did not parse, kept for `validate` to report while no hub
    /// was set since: a typo must not turn a join across hosts into a one-host one.
    env_hub: Option<HubListError>,
}

/// The hub the environment names: `MEMCHAN_HUB` (join) before `MEMCHAN_HUB_HOST`
/// (host), and why `MEMCHAN_HUB` did not parse.
fn hub_from_env(
    connect: Option<String>,
    host: Option<String>,
) -> (Option<HubSpec>, Option<HubListError>) {
    match connect.map(|list| HubSpec::parse_rails(&list)) {
        Some(Ok(hub)) => (Some(hub), None),
        Some(Err(e)) => (None, Some(e)),
        None => (host.map(HubSpec::Host), None),
    }
}

impl Default for Config {
    fn default() -> Self {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let (hub, env_hub) = hub_from_env(env("MEMCHAN_HUB"), env("MEMCHAN_HUB_HOST"));
        Config {
            page_size: None,
            heartbeat: Duration::from_millis(150),
            failure_timeout: Duration::from_millis(800),
            hub,
            key_file: env("MEMCHAN_KEY_FILE").map(Into::into),
            replay_limit: DEFAULT_REPLAY_LIMIT,
            // An unreadable value becomes one `validate` refuses, naming the variable,
            // rather than a silent 0600.
            shm_mode: env("MEMCHAN_SHM_MODE").map_or(0o600, |m| {
                u32::from_str_radix(m.trim_start_matches("0o"), 8).unwrap_or(BAD_SHM_MODE)
            }),
            host_domain: match env("MEMCHAN_DOMAIN") {
                Some(d) if d == "off" => None,
                Some(d) => Some(d),
                None => Some(String::new()),
            },
            direct: env("MEMCHAN_DIRECT").is_none_or(|v| v != "off"),
            env_hub,
        }
    }
}

impl Config {
    /// This config with the page size `page` (a cluster's first node sets it; a node
    /// that asks for another one is refused).
    #[must_use]
    pub fn with_page_size(mut self, page: PageSize) -> Config {
        self.page_size = Some(page);
        self
    }

    /// This config with the heartbeat period `period`.
    #[must_use]
    pub fn with_heartbeat(mut self, period: Duration) -> Config {
        self.heartbeat = period;
        self
    }

    /// This config with the failure timeout `timeout`.
    #[must_use]
    pub fn with_failure_timeout(mut self, timeout: Duration) -> Config {
        self.failure_timeout = timeout;
        self
    }

    /// This config with the hub `hub` (whatever the environment named).
    #[must_use]
    pub fn with_hub(mut self, hub: HubSpec) -> Config {
        self.hub = Some(hub);
        self.env_hub = None;
        self
    }

    /// This config without a hub: this host only, over shared memory, whatever the
    /// environment named.
    #[must_use]
    pub fn without_hub(mut self) -> Config {
        self.hub = None;
        self.env_hub = None;
        self
    }

    /// This config with the cluster key read from `path` (hub transport).
    #[must_use]
    pub fn with_key_file(mut self, path: impl Into<PathBuf>) -> Config {
        self.key_file = Some(path.into());
        self
    }

    /// This config without a cluster key (an open cluster), whatever
    /// `MEMCHAN_KEY_FILE` named.
    #[must_use]
    pub fn without_key_file(mut self) -> Config {
        self.key_file = None;
        self
    }

    /// This config with `bytes` of replay memory (hub transport).
    #[must_use]
    pub fn with_replay_limit(mut self, bytes: usize) -> Config {
        self.replay_limit = bytes;
        self
    }

    /// This config with the control block's permission bits `mode` (one host; see
    /// [`Config::shm_mode`]).
    #[must_use]
    pub fn with_shm_mode(mut self, mode: u32) -> Config {
        self.shm_mode = mode;
        self
    }

    /// This config with the host domain `name` (`""`: the host's; see
    /// [`Config::host_domain`]).
    #[must_use]
    pub fn with_host_domain(mut self, name: impl Into<String>) -> Config {
        self.host_domain = Some(name.into());
        self
    }

    /// This config outside any host domain: every write through the hub.
    #[must_use]
    pub fn without_host_domain(mut self) -> Config {
        self.host_domain = None;
        self
    }

    /// This config without direct links: every write to another host's node goes
    /// through the hub (see [`Config::direct`]).
    #[must_use]
    pub fn without_direct(mut self) -> Config {
        self.direct = false;
        self
    }

    /// Checks every value; the transports call it before they join.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the field: a heartbeat under 1 ms or over an hour, a
    /// failure timeout under twice the heartbeat or over an hour, a replay memory under
    /// 64 KiB, an empty hub address or one holding a comma (a list where one address
    /// belongs), or a `MEMCHAN_HUB` that does not parse (unless
    /// [`with_hub`](Self::with_hub) or [`without_hub`](Self::without_hub) chose since).
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &'static str, why: String| Err(Error::Invalid { what, why });
        if self.heartbeat < MIN_HEARTBEAT || self.heartbeat > MAX_TIMING {
            return bad(
                "heartbeat",
                format!("{:?}: must be 1 ms ..= 1 hour", self.heartbeat),
            );
        }
        if self.failure_timeout < 2 * self.heartbeat || self.failure_timeout > MAX_TIMING {
            return bad(
                "failure timeout",
                format!(
                    "{:?}: must be at least twice the heartbeat ({:?}) and at most 1 hour",
                    self.failure_timeout, self.heartbeat
                ),
            );
        }
        if self.shm_mode == BAD_SHM_MODE {
            return bad(
                "shm mode",
                "MEMCHAN_SHM_MODE is not an octal mode (e.g. 600, 660, 666)".into(),
            );
        }
        if self.shm_mode & !0o666 != 0 || self.shm_mode & 0o600 != 0o600 {
            return bad(
                "shm mode",
                format!(
                    "{:o}: must grant the owner read and write and carry only read and write bits",
                    self.shm_mode
                ),
            );
        }
        if self.replay_limit < MIN_REPLAY_LIMIT {
            return bad(
                "replay limit",
                format!(
                    "{} bytes: must be at least {MIN_REPLAY_LIMIT}",
                    self.replay_limit
                ),
            );
        }
        match (&self.hub, &self.env_hub) {
            (None, Some(e)) => return bad("hub address", format!("MEMCHAN_HUB: {e}")),
            (Some(hub), _) if hub.addrs().any(|a| a.trim().is_empty()) => {
                return bad("hub address", "empty: use HOST:PORT".into());
            }
            (Some(hub), _) => {
                if let Some(a) = hub.addrs().find(|a| a.contains(',')) {
                    return bad(
                        "hub address",
                        format!(
                            "`{a}` is a list: two rails are HubSpec::dual_rail (or parse_rails)"
                        ),
                    );
                }
            }
            _ => {}
        }
        if let Some(d) = &self.host_domain {
            let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
            if d.len() > 64 || !d.chars().all(ok) {
                return bad(
                    "host domain",
                    format!(
                        "`{d}` (MEMCHAN_DOMAIN): at most 64 letters, digits, `-` or `_`, or `off`"
                    ),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Config {
        Config::default().without_hub().without_key_file()
    }

    #[test]
    fn shm_mode_must_be_owner_rw_plus_read_write_bits_only() {
        let unreadable = base().with_shm_mode(BAD_SHM_MODE);
        assert!(
            matches!(unreadable.validate(), Err(Error::Invalid { what: "shm mode", why }) if why.contains("MEMCHAN_SHM_MODE"))
        );
        assert_eq!(base().shm_mode & 0o777, base().shm_mode);
        for ok in [0o600, 0o660, 0o640, 0o666] {
            assert!(base().with_shm_mode(ok).validate().is_ok(), "{ok:o}");
        }
        for bad in [0o400, 0o700, 0o4600, 0o611, 0o000] {
            assert!(
                matches!(
                    base().with_shm_mode(bad).validate(),
                    Err(Error::Invalid {
                        what: "shm mode",
                        ..
                    })
                ),
                "{bad:o}"
            );
        }
    }

    #[test]
    fn zero_or_inverted_timing_is_refused_by_name() {
        let refused = |cfg: Config, name: &str| matches!(cfg.validate(), Err(Error::Invalid { what, .. }) if what == name);
        assert!(refused(base().with_heartbeat(Duration::ZERO), "heartbeat"));
        assert!(refused(
            base().with_failure_timeout(Duration::from_nanos(1)),
            "failure timeout"
        ));
        assert!(refused(base().with_replay_limit(1), "replay limit"));
        assert!(refused(
            base().with_hub(HubSpec::connect(" ")),
            "hub address"
        ));
        assert!(refused(
            base().with_hub(HubSpec::dual_rail("a:1", "")),
            "hub address"
        ));
        assert!(refused(
            base().with_hub(HubSpec::Host(String::new())),
            "hub address"
        ));
        assert!(refused(
            base().with_hub(HubSpec::connect("a:1,b:1")),
            "hub address"
        ));
        assert!(base().validate().is_ok());
        assert!(base()
            .with_hub(HubSpec::dual_rail("a:1", "b:1"))
            .validate()
            .is_ok());
    }

    #[test]
    fn the_builder_sets_what_it_names() {
        let cfg = base()
            .with_page_size(PageSize::K8)
            .with_heartbeat(Duration::from_millis(7))
            .with_failure_timeout(Duration::from_millis(70))
            .with_key_file("/k")
            .with_replay_limit(1 << 20)
            .with_shm_mode(0o660)
            .with_hub(HubSpec::connect("h:1"));
        assert_eq!(cfg.page_size, Some(PageSize::K8));
        assert_eq!(cfg.heartbeat, Duration::from_millis(7));
        assert_eq!(cfg.failure_timeout, Duration::from_millis(70));
        assert_eq!(cfg.key_file.as_deref(), Some(std::path::Path::new("/k")));
        assert_eq!(cfg.replay_limit, 1 << 20);
        assert_eq!(cfg.shm_mode, 0o660);
        assert_eq!(cfg.hub, Some(HubSpec::connect("h:1")));
        assert_eq!(cfg.without_hub().hub, None);
    }

    #[test]
    fn a_hub_list_is_one_or_two_addresses() {
        assert_eq!(
            HubSpec::parse_rails(" a:1 "),
            Ok(HubSpec::Connect {
                active: "a:1".into(),
                standby: None
            })
        );
        assert_eq!(
            HubSpec::parse_rails("a:1 , b:2"),
            Ok(HubSpec::dual_rail("a:1", "b:2"))
        );
        assert_eq!(HubSpec::parse_rails(" "), Err(HubListError::Empty));
        for blank in ["a:1,", ",b:2", " , "] {
            assert_eq!(
                HubSpec::parse_rails(blank),
                Err(HubListError::BlankRail(blank.into()))
            );
        }
        assert_eq!(
            HubSpec::parse_rails("a:1,b:2,c:3"),
            Err(HubListError::TooManyRails {
                list: "a:1,b:2,c:3".into(),
                count: 3
            })
        );
    }

    #[test]
    fn the_environment_names_the_hub_and_a_bad_list_is_refused() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            hub_from_env(some("a:1,b:2"), some("h:3")),
            (Some(HubSpec::dual_rail("a:1", "b:2")), None)
        );
        assert_eq!(
            hub_from_env(None, some("h:3")),
            (Some(HubSpec::Host("h:3".into())), None)
        );
        assert_eq!(hub_from_env(None, None), (None, None));
        // A bad MEMCHAN_HUB wins over MEMCHAN_HUB_HOST, as a good one does.
        let (hub, env_hub) = hub_from_env(some("a:1,"), some("h:3"));
        assert_eq!(hub, None);
        let bad = Config {
            hub,
            env_hub,
            ..base()
        };
        assert!(matches!(
            bad.validate(),
            Err(Error::Invalid { what: "hub address", why }) if why.contains("MEMCHAN_HUB")
        ));
        // Choosing the hub in code overrides the environment.
        assert!(bad.clone().without_hub().validate().is_ok());
        assert!(bad.with_hub(HubSpec::connect("a:1")).validate().is_ok());
    }
}
