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
use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Starts the service thread of `inner`.
pub(crate) fn start(inner: &Arc<Inner>) -> memchan_core::Result<JoinHandle<()>> {
    let weak = Arc::downgrade(inner);
    let (period, _) = inner.timing();
    std::thread::Builder::new()
        .name(format!("memchan-svc-{}", inner.local.me.0))
        .spawn(move || {
            let mut pidfds: HashMap<(usize, u64), Option<OwnedFd>> = HashMap::new();
            loop {
                let Some(inner) = weak.upgrade() else { return };
                if inner.stop.load(Ordering::Acquire) {
                    return;
                }
                tick(&inner, &mut pidfds);
                drop(inner);
                std::thread::park_timeout(period);
            }
        })
        .map_err(|e| memchan_core::Error::os("start the memchan service thread", e))
}

fn process_gone(fd: &Option<OwnedFd>, pid: u32) -> bool {
    match fd {
        // A pidfd turns readable when the process exits, zombie or not.
        Some(fd) => {
            let mut p = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
            let now = rustix::time::Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            matches!(rustix::event::poll(&mut p, Some(&now)), Ok(n) if n > 0)
        }
        None => !crate::node::pid_alive(pid),
    }
}

fn tick(inner: &Inner, pidfds: &mut HashMap<(usize, u64), Option<OwnedFd>>) {
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
        let fd = pidfds.entry((n, inc)).or_insert_with(|| {
            rustix::process::Pid::from_raw(pid as i32).and_then(|p| {
                rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok()
            })
        });
        let hb = s.heartbeat_ns.load(Ordering::Acquire);
        let silent = now.saturating_sub(hb) > timeout.as_nanos() as u64;
        if process_gone(fd, pid) || silent {
            inner.declare_failed(NodeId(n as u16), inc);
        }
    }
    pidfds.retain(|(n, inc), _| {
        c.nodes[*n].state.load(Ordering::Acquire) == node_state::ALIVE
            && c.nodes[*n].incarnation.load(Ordering::Acquire) == *inc
    });
}
