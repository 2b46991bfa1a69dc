//! The node service thread: heartbeats and failure detection, in every node's process
//! (no daemon), never on the data path. Each period it stamps its own heartbeat and
//! checks every other member: a process that is gone (pidfd readable) or whose
//! heartbeat is older than the failure timeout is declared failed and isolated by the
//! first survivor to notice.

use crate::control::node_state;
use crate::node::{now_ns, Inner};
use memchan_core::sync::Ordering;
use memchan_core::{NodeId, MAX_NODES};
use rustix::fd::OwnedFd;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Starts the service thread of `inner`.
pub(crate) fn start(inner: &Arc<Inner>) -> memchan_core::Result<JoinHandle<()>> {
    let weak = Arc::downgrade(inner);
    let (period, _) = inner.timing();
    let ctl_ino = rustix::fs::fstat(inner.local.ctl_map().fd())
        .map_err(|e| memchan_core::Error::os("fstat control block", e))?
        .st_ino;
    let ctl_name = format!("/{}", crate::local::ctl_name(&inner.local.cluster));
    std::thread::Builder::new()
        .name(format!("memchan-svc-{}", inner.local.me.0))
        .spawn(move || loop {
            let Some(inner) = weak.upgrade() else { return };
            if inner.stop.load(Ordering::Acquire) {
                return;
            }
            tick(&inner, ctl_ino, &ctl_name);
            drop(inner);
            std::thread::park_timeout(period);
        })
        .map_err(|e| memchan_core::Error::os("start the memchan service thread", e))
}

/// A pidfd for `pid`, if that process maps this cluster's control block (inode
/// `ctl_ino`, named `…ctl_name`): a pid read from the control block is only a claim,
/// and this is the one check that it names a memchan node of this cluster. The pidfd
/// is opened first and must still be open (not exited) after the check, so a pid
/// reused meanwhile is not taken for the node.
fn verified_pidfd(pid: u32, ctl_ino: u64, ctl_name: &str) -> Option<Arc<OwnedFd>> {
    let p = rustix::process::Pid::from_raw(pid as i32)?;
    let fd = rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok()?;
    // Another user's process (not ptrace-readable) cannot be verified, and could not
    // be signalled either.
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    let maps_ctl = maps.lines().any(|l| {
        let mut f = l.split_whitespace();
        let ino = f.nth(4).and_then(|i| i.parse::<u64>().ok());
        let path = f.next().unwrap_or("");
        ino == Some(ctl_ino) && path.ends_with(ctl_name)
    });
    let now = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    (maps_ctl && !crate::order::exited(&fd, Some(&now))).then(|| Arc::new(fd))
}

fn process_gone(fd: &Option<Arc<OwnedFd>>, pid: u32) -> bool {
    let now = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match fd {
        // A pidfd turns readable when the process exits, zombie or not.
        Some(fd) => crate::order::exited(fd, Some(&now)),
        None => !crate::node::pid_alive(pid),
    }
}

fn tick(inner: &Inner, ctl_ino: u64, ctl_name: &str) {
    let c = inner.local.ctl();
    let me = inner.local.me.index();
    c.nodes[me].heartbeat_ns.store(now_ns(), Ordering::Release);
    let (_, timeout) = inner.timing();
    let now = now_ns();
    for n in 0..MAX_NODES {
        if n == me {
            continue;
        }
        let s = &c.nodes[n];
        if s.state.load(Ordering::Acquire) != node_state::ALIVE {
            continue;
        }
        let inc = s.incarnation.load(Ordering::Acquire);
        let pid = s.pid.load(Ordering::Relaxed);
        let fd = inner
            .pidfds
            .lock()
            .entry((n, inc))
            .or_insert_with(|| verified_pidfd(pid, ctl_ino, ctl_name))
            .clone();
        let hb = s.heartbeat_ns.load(Ordering::Acquire);
        let silent = now.saturating_sub(hb) > timeout.as_nanos() as u64;
        if process_gone(&fd, pid) || silent {
            inner.declare_failed(NodeId(n as u16), inc);
        }
    }
    // Kept while the slot is not FREE: recovery of a FAILED holder still needs it.
    inner.pidfds.lock().retain(|(n, inc), _| {
        c.nodes[*n].state.load(Ordering::Acquire) != node_state::FREE
            && c.nodes[*n].incarnation.load(Ordering::Acquire) == *inc
    });
}
