//! Where `memchan ip` publishes its interface counters for `memchan status`.
//!
//! A running `memchan ip` writes one small JSON file per node into a directory on its
//! host, `/run/memchan-ip` (or the directory `MEMCHAN_IP_STATUS_DIR` names), about
//! every 100 ms while its counters change, and removes it when it stops:
//!
//! ```text
//! /run/memchan-ip/                      0755, owned by the writer (root: TUN needs it)
//!   <cluster>.node<N>.json              0644, replaced whole (written aside, renamed)
//!     { "cluster": "c", "node": 1, "pid": 4242, "dev": "mcip0", "addr": "10.77.0.2/24",
//!       "updated_unix_ms": 1764000000000,
//!       "counters": { "tx_packets": 5, "tx_bytes": 420, "rx_packets": 5, ... } }
//! ```
//!
//! So `memchan status` reads them without joining and without privileges: any user
//! who can read the cluster's report sees its interfaces on this host. The counters
//! are not secret; what is trusted is who may write the directory: the reader ignores
//! a directory that group or others may write, and files not owned by the directory's
//! owner. A file is parsed as hostile input (bounded size, its own schema), and one
//! whose process is gone (a node killed before it could remove it) is skipped.
//! Nodes on other hosts of a hub cluster publish on their own hosts.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The directory's environment variable and default.
pub const DIR_ENV: &str = "MEMCHAN_IP_STATUS_DIR";
pub const DEFAULT_DIR: &str = "/run/memchan-ip";
/// Largest file the reader accepts.
const MAX_FILE: u64 = 16 << 10;

/// One interface's published state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpEntry {
    pub cluster: String,
    pub node: u16,
    pub pid: u32,
    pub dev: String,
    pub addr: String,
    pub updated_unix_ms: u64,
    /// Counter name → value (`memchan_ip::CounterSnapshot`'s names).
    pub counters: BTreeMap<String, u64>,
}

/// The directory in use.
pub fn dir() -> PathBuf {
    std::env::var_os(DIR_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_DIR), PathBuf::from)
}

/// The counters of `memchan_ip::CounterSnapshot`'s `key=value` line, as a map (one
/// list of names: the snapshot's own).
pub fn counters_of(line: &str) -> BTreeMap<String, u64> {
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

/// The writer side: one node's file, removed on drop.
pub struct Publisher {
    path: PathBuf,
    tmp: PathBuf,
    last: Option<BTreeMap<String, u64>>,
}

impl Publisher {
    /// Creates the directory if needed (0755) and refuses one that others may write.
    pub fn new(dir: &Path, cluster: &str, node: u16) -> Result<Publisher> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
        let md =
            std::fs::symlink_metadata(dir).with_context(|| format!("reading {}", dir.display()))?;
        // SAFETY: geteuid(2) has no preconditions.
        let me = unsafe { libc::geteuid() };
        if !md.is_dir() || md.uid() != me || md.mode() & 0o022 != 0 {
            bail!(
                "{} is not a directory owned by uid {me} and writable only by it",
                dir.display()
            );
        }
        Ok(Publisher {
            path: dir.join(format!("{cluster}.node{node}.json")),
            tmp: dir.join(format!(".{cluster}.node{node}.{}.tmp", std::process::id())),
            last: None,
        })
    }

    /// Writes `e` unless its counters are what was written last.
    pub fn publish(&mut self, e: &IpEntry) -> Result<()> {
        if self.last.as_ref() == Some(&e.counters) {
            return Ok(());
        }
        let text = serde_json::to_string(e)? + "\n";
        let _ = std::fs::remove_file(&self.tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.tmp)
            .with_context(|| format!("creating {}", self.tmp.display()))?;
        // The umask may have taken bits away: the file is for every reader.
        f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        f.write_all(text.as_bytes())?;
        drop(f);
        std::fs::rename(&self.tmp, &self.path)
            .with_context(|| format!("renaming into {}", self.path.display()))?;
        self.last = Some(e.counters.clone());
        Ok(())
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether process `pid` exists (EPERM: it does, another user's).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The live interfaces of `cluster` published in `dir`, by node. A missing or
/// untrusted directory reads as none; unreadable or malformed files are skipped.
pub fn read(dir: &Path, cluster: &str) -> Vec<IpEntry> {
    let Ok(md) = std::fs::symlink_metadata(dir) else {
        return vec![];
    };
    if !md.is_dir() || md.mode() & 0o022 != 0 {
        tracing::warn!(dir = %dir.display(), "ip status directory is writable by others: ignored");
        return vec![];
    }
    let owner = md.uid();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut out: Vec<IpEntry> = entries
        .flatten()
        .filter(|d| {
            let n = d.file_name();
            let n = n.to_string_lossy();
            !n.starts_with('.') && n.ends_with(".json")
        })
        .filter_map(|d| read_one(&d.path(), owner))
        .filter(|e| e.cluster == cluster && alive(e.pid))
        .collect();
    out.sort_by_key(|e| e.node);
    out
}

fn read_one(path: &Path, owner: u32) -> Option<IpEntry> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let md = f.metadata().ok()?;
    if !md.is_file() || md.uid() != owner || md.len() > MAX_FILE {
        return None;
    }
    let mut text = String::new();
    f.take(MAX_FILE).read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pid: u32, n: u64) -> IpEntry {
        IpEntry {
            cluster: "c1".into(),
            node: 2,
            pid,
            dev: "mcip0".into(),
            addr: "10.77.0.3/24".into(),
            updated_unix_ms: 1,
            counters: counters_of(&format!("tx_packets={n} rx_bytes=7 bad")),
        }
    }

    #[test]
    fn published_entries_read_back_and_go_with_the_publisher() {
        let dir = std::env::temp_dir().join(format!("ipst-{}", std::process::id()));
        let mut p = Publisher::new(&dir, "c1", 2).unwrap();
        let e = entry(std::process::id(), 5);
        assert_eq!(e.counters.len(), 2, "the malformed pair is left out");
        p.publish(&e).unwrap();
        assert_eq!(read(&dir, "c1"), vec![e.clone()]);
        assert!(read(&dir, "c2").is_empty(), "another cluster's view");
        // Garbage and a dead process's file are skipped, not fatal.
        std::fs::write(dir.join("junk.json"), "{not json").unwrap();
        let mut dead = entry(u32::MAX, 1);
        dead.node = 3;
        std::fs::write(
            dir.join("c1.node3.json"),
            serde_json::to_string(&dead).unwrap(),
        )
        .unwrap();
        assert_eq!(read(&dir, "c1"), vec![e]);
        drop(p);
        assert!(!dir.join("c1.node2.json").exists());
        // A directory others may write is not trusted.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(Publisher::new(&dir, "c1", 2).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
