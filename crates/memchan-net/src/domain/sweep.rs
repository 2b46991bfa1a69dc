//! Leftovers of host-domain nodes that ended without cleaning up (a killed process,
//! or one that exited without dropping its node): their receive memory and wake-up
//! FIFO under `/dev/shm`, which nobody else would remove, since every run of a cluster
//! names them under a new instance.
//!
//! A node's FIFO has its owner as a reader for as long as the owner lives (it is
//! renamed into place only once opened, `Domain::make_wake`), and opening a FIFO to
//! write without blocking fails with `ENXIO` exactly when nobody reads it: a FIFO
//! under a domain name that opens so marks its node as gone, and its files as
//! leftovers. The sweep never reads or writes anything, and removes only what the
//! kernel lets this process remove (`/dev/shm` is sticky: another user's files stay).

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

const DIR: &str = "/dev/shm";

/// A domain node's wake-up FIFO name, split: its prefix (`memchan.<cluster>.h<instance>
/// [.<domain>]`) and its node id.
fn wake_parts(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_suffix(".wake")?;
    let (prefix, id) = rest.rsplit_once(".n")?;
    let domainish = prefix.starts_with("memchan.")
        && prefix.split('.').any(|p| {
            p.len() == 17 && p.starts_with('h') && p[1..].bytes().all(|b| b.is_ascii_hexdigit())
        });
    let numeric = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    (domainish && numeric).then_some((prefix, id))
}

/// Whether `name` is receive memory of node `id` under `prefix`
/// (`<prefix>.s<seg>.g<gen>.n<id>`).
fn is_rx_of(name: &str, prefix: &str, id: &str) -> bool {
    let Some(rest) = name
        .strip_prefix(prefix)
        .and_then(|r| r.strip_prefix(".s"))
        .and_then(|r| r.strip_suffix(id))
        .and_then(|r| r.strip_suffix(".n"))
    else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(rest.split_once(".g"), Some((seg, gen)) if digits(seg) && digits(gen))
}

/// Whether the FIFO `/dev/shm/<name>` exists and nobody reads it.
fn unread(name: &str) -> bool {
    let path = format!("{DIR}/{name}");
    match rustix::fs::open(
        path.as_str(),
        OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    ) {
        Err(Errno::NXIO) => true,
        // Read by its node, not ours to open, not a FIFO, gone: not a leftover.
        _ => false,
    }
}

/// Removes the files of every gone domain node whose FIFO name `keep` accepts (its
/// prefix and id); how many files went.
pub(crate) fn sweep(keep: impl Fn(&str, &str) -> bool) -> usize {
    let Ok(dir) = std::fs::read_dir(DIR) else {
        return 0;
    };
    let names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    let mut removed = 0;
    for wake in &names {
        let Some((prefix, id)) = wake_parts(wake).filter(|(p, i)| keep(p, i)) else {
            continue;
        };
        if !unread(wake) {
            continue;
        }
        for rx in names.iter().filter(|n| is_rx_of(n, prefix, id)) {
            // Looked at again before each removal: a node that joined since under the
            // same id has renamed its own FIFO into place before it made any memory.
            if !unread(wake) {
                break;
            }
            removed += usize::from(rustix::fs::unlink(format!("{DIR}/{rx}").as_str()).is_ok());
        }
        if unread(wake) {
            removed += usize::from(rustix::fs::unlink(format!("{DIR}/{wake}").as_str()).is_ok());
        }
    }
    if removed > 0 {
        tracing::info!(
            files = removed,
            "removed what gone host-domain nodes left in /dev/shm"
        );
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_domain_nodes_are_told_apart() {
        let p = "memchan.c.x.h0123456789abcdef.a";
        assert_eq!(wake_parts(&format!("{p}.n12.wake")), Some((p, "12")));
        assert_eq!(
            wake_parts("memchan.c.h0123456789abcdef.n3.wake"),
            Some(("memchan.c.h0123456789abcdef", "3"))
        );
        // No instance, no node number, another program's file.
        assert_eq!(wake_parts("memchan.c.n3.wake"), None);
        assert_eq!(wake_parts("memchan.c.h0123456789abcdef.nx.wake"), None);
        assert_eq!(wake_parts("other.h0123456789abcdef.n3.wake"), None);
        assert!(is_rx_of(&format!("{p}.s4.g2.n12"), p, "12"));
        assert!(!is_rx_of(&format!("{p}.s4.g2.n112"), p, "12"));
        assert!(!is_rx_of(&format!("{p}.s4.n12"), p, "12"));
        assert!(!is_rx_of(&format!("{p}x.s4.g2.n12"), p, "12"));
        assert!(!is_rx_of(&format!("{p}.s4.g2.n12.wake"), p, "12"));
    }
}
