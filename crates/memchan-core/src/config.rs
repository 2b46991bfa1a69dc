//! How a node joins: one [`Config`] for every transport, checked once by
//! [`Config::validate`] before any transport sees it.

use crate::error::{Error, Result};
use crate::names::PageSize;
use std::time::Duration;

/// Where a node's hub is (see [`Config::hub`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubSpec {
    /// Join through the hub listening at `HOST:PORT` (`memchan hub --listen`); two
    /// rails as `ACTIVE,STANDBY` (`memchan hub --standby-of ACTIVE` runs the second):
    /// when the active hub is lost every node moves to the standby.
    Connect(String),
    /// Host the hub in this process, listening at `HOST:PORT`: the virtual hub of a
    /// two-node cluster, whose other node connects here. The cluster ends with this node.
    Host(String),
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

/// How a node joins. [`Config::default`] reads `MEMCHAN_HUB`, `MEMCHAN_HUB_HOST` and
/// `MEMCHAN_KEY_FILE` from the environment; everything else has a fixed default.
///
/// ```
/// use memchan_core::Config;
/// use std::time::Duration;
/// let cfg = Config { hub: None, ..Config::default() };
/// assert!(cfg.validate().is_ok());
/// let bad = Config { heartbeat: Duration::ZERO, ..cfg };
/// assert!(bad.validate().is_err());
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    /// Page size; `None` accepts the cluster's (4 KiB for a new cluster).
    pub page_size: Option<PageSize>,
    /// Heartbeat period (at least 1 ms).
    pub heartbeat: Duration,
    /// A node (or hub) silent this long is declared failed; at least twice the
    /// heartbeat. A dead process is seen sooner (within one heartbeat) on one host.
    pub failure_timeout: Duration,
    /// `None`: this host only, over shared memory. `Some`: through a hub.
    pub hub: Option<HubSpec>,
    /// File holding the cluster key (hub transport); `None`: an open cluster.
    pub key_file: Option<std::path::PathBuf>,
    /// Bytes of unreleased packets a node may hold before writes wait (hub transport).
    pub replay_limit: usize,
    /// One host: the permission bits of the cluster's control block when this node
    /// creates it, and the widest it accepts when joining an existing one. Default
    /// `0o600` (only the owner's uid, and root, can join), or `MEMCHAN_SHM_MODE`
    /// (octal). A cluster shared with other users needs e.g. `0o660` (group) or
    /// `0o666` on every node: any uid that can open the control block can rewrite
    /// the whole cluster state, so segment modes protect only within that circle.
    pub shm_mode: u32,
}

impl Default for Config {
    fn default() -> Self {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let hub = env("MEMCHAN_HUB")
            .map(HubSpec::Connect)
            .or_else(|| env("MEMCHAN_HUB_HOST").map(HubSpec::Host));
        Config {
            page_size: None,
            heartbeat: Duration::from_millis(100),
            failure_timeout: Duration::from_millis(800),
            hub,
            key_file: env("MEMCHAN_KEY_FILE").map(Into::into),
            replay_limit: DEFAULT_REPLAY_LIMIT,
            // An unreadable value becomes one `validate` refuses, naming the variable,
            // rather than a silent 0600.
            shm_mode: env("MEMCHAN_SHM_MODE").map_or(0o600, |m| {
                u32::from_str_radix(m.trim_start_matches("0o"), 8).unwrap_or(BAD_SHM_MODE)
            }),
        }
    }
}

impl Config {
    /// This config with the hub `hub`.
    pub fn with_hub(mut self, hub: HubSpec) -> Config {
        self.hub = Some(hub);
        self
    }

    /// Checks every value; the transports call it before they join.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the field: a heartbeat under 1 ms or over an hour, a
    /// failure timeout under twice the heartbeat or over an hour, a replay memory under
    /// 64 KiB, or an empty hub address.
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
        if let Some(HubSpec::Connect(a) | HubSpec::Host(a)) = &self.hub {
            if a.trim().is_empty() {
                return bad("hub address", "empty: use HOST:PORT".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Config {
        Config {
            hub: None,
            key_file: None,
            ..Config::default()
        }
    }

    #[test]
    fn shm_mode_must_be_owner_rw_plus_read_write_bits_only() {
        let unreadable = Config {
            shm_mode: BAD_SHM_MODE,
            ..base()
        };
        assert!(
            matches!(unreadable.validate(), Err(Error::Invalid { what: "shm mode", why }) if why.contains("MEMCHAN_SHM_MODE"))
        );
        assert_eq!(base().shm_mode & 0o777, base().shm_mode);
        for ok in [0o600, 0o660, 0o640, 0o666] {
            assert!(
                Config {
                    shm_mode: ok,
                    ..base()
                }
                .validate()
                .is_ok(),
                "{ok:o}"
            );
        }
        for bad in [0o400, 0o700, 0o4600, 0o611, 0o000] {
            assert!(
                matches!(
                    Config {
                        shm_mode: bad,
                        ..base()
                    }
                    .validate(),
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
        let zero_hb = Config {
            heartbeat: Duration::ZERO,
            ..base()
        };
        assert!(matches!(
            zero_hb.validate(),
            Err(Error::Invalid {
                what: "heartbeat",
                ..
            })
        ));
        let zero_to = Config {
            failure_timeout: Duration::from_nanos(1),
            ..base()
        };
        assert!(matches!(
            zero_to.validate(),
            Err(Error::Invalid {
                what: "failure timeout",
                ..
            })
        ));
        let small = Config {
            replay_limit: 1,
            ..base()
        };
        assert!(matches!(
            small.validate(),
            Err(Error::Invalid {
                what: "replay limit",
                ..
            })
        ));
        let empty = base().with_hub(HubSpec::Connect(" ".into()));
        assert!(matches!(
            empty.validate(),
            Err(Error::Invalid {
                what: "hub address",
                ..
            })
        ));
        assert!(base().validate().is_ok());
    }
}
