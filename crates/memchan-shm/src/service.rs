//! A node's two service threads, in every node's process (no daemon), never on the
//! data path:
//!
//! - the **heartbeat** thread (`memchan-hb-<id>`) stamps this node's heartbeat once
//!   per period and watches its [`WATCHED`] successors on the ring of slots: a member
//!   whose process is gone (pidfd readable), whose slot no member stands behind (see
//!   [`Behind`]), or that is silent is handed to the service thread. Between periods it
//!   sleeps in `epoll_wait` on the watched members' pidfds, so an exit wakes it at once
//!   and a period costs a few words read, whatever the cluster's size. It never waits
//!   for a lock, a process or another node, so nothing a cleanup does can delay the
//!   stamp and get this node declared failed in turn;
//! - the **service** thread (`memchan-svc-<id>`) does everything that may wait: it
//!   finds out what stands behind each member's pid (reading `/proc`), isolates
//!   failed members (`Inner::declare_failed`: a kill confirmed for up to 10 s, the
//!   `flock`, the order point), and takes over slots left half cleaned up
//!   (`Inner::reap_stuck`).
//!
//! **Silent** means a heartbeat word older than the failure timeout (or ahead of the
//! clock: not a stamp), and, for a process whose heartbeat thread the kernel shows
//! ([`pulse`]), that thread stopped or without a single context switch for a whole
//! failure timeout. The word alone is any member's to write: a stale word over a
//! heartbeat thread that runs is forged (or the thread is starved, runnable), and
//! isolating that node, or killing it as a hung order-point holder, would hurt a
//! healthy process.

use crate::clock::now_ns;
use crate::control::node_state;
use crate::node::{pid_of, Inner};
use crate::order::{exited, process_cpu, pulse, Behind};
use memchan_core::sync::Ordering;
use memchan_core::{NodeId, MAX_NODES};
use rustix::event::epoll;
use rustix::fd::{AsRawFd, OwnedFd};
use std::collections::{HashMap, HashSet};
use std::num::NonZeroU64;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A node's running service threads.
pub(crate) struct Service {
    heartbeat: JoinHandle<()>,
    service: JoinHandle<()>,
    /// Closed when the service thread ends (in a mutex: `Node` is `Sync`).
    ended: std::sync::Mutex<Receiver<()>>,
    /// Written to wake the heartbeat thread out of its `epoll_wait` at `stop`.
    wake: OwnedFd,
}

/// Work the heartbeat thread hands to the service thread.
enum Job {
    /// Find out what stands behind `pid`, the pid of slot `slot` at incarnation `inc`.
    Look { slot: usize, inc: u64, pid: u32 },
    /// Declare the member failed and isolate it.
    Fail { slot: usize, inc: u64 },
    /// Take over the cleanup of a slot stuck in `state`.
    Reap { slot: usize, state: u32, inc: u64 },
}

/// The control block's identity, as a member's `/proc/<pid>/maps` shows it.
#[derive(Clone)]
struct CtlId {
    ino: u64,
    /// `/memchan.<cluster>.ctl`
    name: String,
}

/// Starts the service threads of `inner`.
pub(crate) fn start(inner: &Arc<Inner>) -> memchan_core::Result<Service> {
    let ino = rustix::fs::fstat(inner.local.ctl_map().fd())
        .map_err(|e| memchan_core::Error::os("fstat control block", e))?
        .st_ino;
    let ctl = CtlId {
        ino,
        name: format!("/{}", crate::local::ctl_name(&inner.local.cluster)),
    };
    let os = |what| move |e| memchan_core::Error::os(what, e);
    let epoll = epoll::create(epoll::CreateFlags::CLOEXEC).map_err(os("epoll_create"))?;
    let wake = rustix::event::eventfd(
        0,
        rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
    )
    .map_err(os("eventfd"))?;
    epoll::add(
        &epoll,
        &wake,
        epoll::EventData::new_u64(STOP),
        epoll::EventFlags::IN,
    )
    .map_err(os("epoll_ctl"))?;
    let (jobs, queue) = channel();
    let (end, ended) = channel();
    let weak = Arc::downgrade(inner);
    let me = inner.local.me.0;
    let service = std::thread::Builder::new()
        .name(format!("memchan-svc-{me}"))
        .spawn(move || serve(weak, queue, ctl, end))
        .map_err(|e| memchan_core::Error::os("start the memchan service thread", e))?;
    let weak = Arc::downgrade(inner);
    let heartbeat = std::thread::Builder::new()
        .name(format!("memchan-hb-{me}"))
        .spawn(move || beat(weak, jobs, epoll))
        .map_err(|e| memchan_core::Error::os("start the memchan heartbeat thread", e))?;
    Ok(Service {
        heartbeat,
        service,
        ended: std::sync::Mutex::new(ended),
        wake,
    })
}

impl Service {
    /// Stops both threads (the node's `stop` flag is set): joins the heartbeat thread,
    /// which never waits long, and waits up to `bound` for the service thread to end
    /// its current job; one still busy then is left to finish on its own (it holds the
    /// node only until its job, itself bounded, is done).
    pub(crate) fn stop(self, bound: Duration) {
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
        let _ = self.heartbeat.join();
        let ended = self.ended.into_inner().unwrap_or_else(|p| p.into_inner());
        match ended.recv_timeout(bound) {
            Err(RecvTimeoutError::Timeout) => tracing::warn!(
                "the memchan service thread is still cleaning up after {bound:?}; left to finish"
            ),
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                let _ = self.service.join();
            }
        }
    }
}

/// How many members each node watches: its next live members in slot order, round
/// the table (its successors on the ring), so each member is watched by as many
/// predecessors. Two, so a member is still watched when one of its watchers dies with
/// it; a chain of failures converges because a watcher whose successor turns FAILED
/// or FREE moves on to the next live slot at its next period.
const WATCHED: usize = 2;

/// What the heartbeat thread remembers between periods.
struct Watch {
    /// (slot, incarnation) handed over to be declared failed.
    failing: HashSet<(usize, u64)>,
    /// (slot, state, incarnation) of slots neither FREE nor ALIVE, since when.
    stuck: HashMap<(usize, u32, u64), Instant>,
    /// (slot, incarnation) of members with a stale heartbeat word: their progress
    /// (heartbeat thread's context switches plus the process's CPU time) when first
    /// seen so, and since when it held.
    quiet: HashMap<(usize, u64), (u64, Instant)>,
    /// When the whole table was last scanned for stuck slots.
    scanned: Option<Instant>,
    /// The epoll set the thread sleeps on between periods: the stop eventfd and the
    /// pidfds of the watched members (one-shot: an exit wakes the thread once).
    epoll: OwnedFd,
    /// The pidfds in `epoll`, by descriptor number, and whether each has fired (its
    /// process exited).
    armed: HashMap<i32, (Arc<OwnedFd>, bool)>,
}

/// The `epoll` data word of the stop eventfd (pidfds carry their descriptor number).
const STOP: u64 = u64::MAX;

/// The heartbeat thread: stamps, watches and hands over, once per period, asleep in
/// `epoll_wait` in between (woken early by a watched member's exit or by `stop`).
fn beat(weak: Weak<Inner>, jobs: Sender<Job>, epoll: OwnedFd) {
    let mut watch = Watch {
        failing: HashSet::new(),
        stuck: HashMap::new(),
        quiet: HashMap::new(),
        scanned: None,
        epoll,
        armed: HashMap::new(),
    };
    let mut events = Vec::with_capacity(WATCHED + 1);
    if let Some(inner) = weak.upgrade() {
        // A timer slack of an eighth of the period (fixed at the join) lets the kernel
        // end the waits of a host's many idle nodes together, one wake-up of the core
        // for many (a stamp's age is judged against the failure timeout, several
        // periods).
        let slack = NonZeroU64::new((inner.local.heartbeat / 8).as_nanos() as u64);
        let _ = rustix::thread::set_current_timer_slack(slack);
    }
    loop {
        let Some(inner) = weak.upgrade() else { return };
        if inner.stop.load(Ordering::Acquire) {
            return;
        }
        let period = inner.local.heartbeat;
        tick(&inner, &jobs, &mut watch);
        drop(inner);
        let wait = rustix::time::Timespec {
            tv_sec: period.as_secs() as i64,
            tv_nsec: i64::from(period.subsec_nanos()),
        };
        events.clear();
        // EINTR or a failed wait just ends this period early.
        let _ = epoll::wait(
            &watch.epoll,
            rustix::buffer::spare_capacity(&mut events),
            Some(&wait),
        );
        for e in &events {
            let data = e.data.u64();
            if data != STOP {
                if let Some((_, fired)) = watch.armed.get_mut(&(data as i32)) {
                    *fired = true;
                }
            }
        }
    }
}

/// The slots this node watches: the next [`WATCHED`] ALIVE slots after its own, round
/// the table, with their incarnations. Reads state words from this node's slot on
/// until it has found them: a few words in a full table, at most the table in a
/// sparse one. A fixed array, not a `Vec`: this runs once per period in every node,
/// and idle nodes should cost their host next to nothing (`memchan bench --scale`).
fn successors(inner: &Inner) -> Ring {
    let c = inner.local.ctl();
    let me = inner.local.me.index();
    let mut ring = Ring {
        slots: [(0, 0); WATCHED],
        len: 0,
    };
    for n in (1..MAX_NODES).map(|d| (me + d) % MAX_NODES) {
        if ring.len == WATCHED {
            break;
        }
        if c.nodes[n].state.load(Ordering::Acquire) == node_state::ALIVE {
            ring.slots[ring.len] = (n, c.nodes[n].incarnation.load(Ordering::Acquire));
            ring.len += 1;
        }
    }
    ring
}

/// The (slot, incarnation) pairs a node watches this period.
struct Ring {
    slots: [(usize, u64); WATCHED],
    len: usize,
}

impl Ring {
    fn members(&self) -> &[(usize, u64)] {
        &self.slots[..self.len]
    }

    fn contains(&self, k: &(usize, u64)) -> bool {
        self.members().contains(k)
    }
}

fn tick(inner: &Inner, jobs: &Sender<Job>, watch: &mut Watch) {
    let c = inner.local.ctl();
    let me = inner.local.me.index();
    // Stamps only while the slot is this node's: not once it left (the slot may be
    // another's by then) or was isolated. `check_alive` puts the incarnation word back
    // first if another member zeroed it (see `Local::not_alive`).
    if inner.local.check_alive().is_ok() {
        c.nodes[me].heartbeat_ns.store(now_ns(), Ordering::Release);
    }
    let (period, timeout) = inner.timing();
    let (period, timeout) = (period.as_nanos() as u64, timeout.as_nanos() as u64);
    let now_at = |n: usize| {
        (
            c.nodes[n].state.load(Ordering::Acquire),
            c.nodes[n].incarnation.load(Ordering::Acquire),
        )
    };
    // Slots left neither FREE nor ALIVE: looked for once per failure timeout (a scan of
    // the whole table's state words, no system call), which is soon enough for a
    // take-over that waits far longer than that anyway.
    if watch
        .scanned
        .is_none_or(|t| t.elapsed() >= inner.local.failure_timeout)
    {
        watch.scanned = Some(Instant::now());
        scan_stuck(inner, jobs, watch);
    }
    let ring = successors(inner);
    let mut seen = inner.pidfds.lock();
    for &(n, inc) in ring.members() {
        let s = &c.nodes[n];
        let pid = s.pid.load(Ordering::Relaxed);
        let hb = s.heartbeat_ns.load(Ordering::Acquire);
        let now = now_ns();
        // CLOCK_MONOTONIC is one clock for the host: a heartbeat ahead of it by more
        // than a period was written by someone other than the node.
        let stale = hb > now.saturating_add(period) || now.saturating_sub(hb) > timeout;
        let silent = stale && {
            let behind = seen.get(&(n, inc));
            let looked_at = match behind {
                Some(Behind::Verified { pid, .. } | Behind::Opaque { fd: Some(_), pid }) => {
                    Some(*pid)
                }
                _ => None,
            };
            match looked_at.and_then(|pid| Some((pulse(pid, n)?, process_cpu(pid)))) {
                // Judged once the service thread has looked behind the slot.
                None if matches!(behind, None | Some(Behind::Pending)) => false,
                // No heartbeat thread to judge (the pid word led elsewhere): a stale
                // word is silence only if the kernel says the node is gone.
                None => inner.local.vacant(NodeId(n as u16), inc),
                Some(((state, switches), cpu)) => {
                    // Progress: the heartbeat thread switched, or any thread of the
                    // process used CPU. A heartbeat thread blocked behind its own
                    // process's work (its memory map lock held while another thread
                    // populates a large mapping: state D, for seconds on a busy
                    // machine) is not a hung node.
                    let moved = switches.wrapping_add(cpu.unwrap_or(0));
                    let (count, since) = watch
                        .quiet
                        .entry((n, inc))
                        .or_insert((moved, Instant::now()));
                    if moved != *count {
                        (*count, *since) = (moved, Instant::now());
                    }
                    match state {
                        // Stopped or traced: a hung process, say SIGSTOPped.
                        'T' | 't' => true,
                        // Runnable: starved by a busy machine, not hung.
                        'R' => false,
                        _ => since.elapsed() > inner.local.failure_timeout,
                    }
                }
            }
        };
        if !stale {
            watch.quiet.remove(&(n, inc));
        }
        let gone = match seen.get(&(n, inc)) {
            None => {
                seen.insert((n, inc), Behind::Pending);
                let _ = jobs.send(Job::Look { slot: n, inc, pid });
                false
            }
            Some(Behind::Pending) => false,
            // A pidfd turns readable when the process exits, zombie or not: the epoll
            // set said so (no system call per member here).
            Some(Behind::Verified { fd, .. }) => watch
                .armed
                .get(&fd.as_raw_fd())
                .is_some_and(|(_, fired)| *fired),
            // A process this node may not inspect, perhaps not the node at all (a
            // phantom slot naming another user's process, its heartbeat kept fresh):
            // gone once it exits, or once the node's presence lock is vacant.
            Some(Behind::Opaque { fd: Some(fd), .. }) => {
                watch
                    .armed
                    .get(&fd.as_raw_fd())
                    .is_some_and(|(_, fired)| *fired)
                    || inner.local.vacant(NodeId(n as u16), inc)
            }
            Some(Behind::Opaque { fd: None, .. } | Behind::Unseen) => {
                inner.local.vacant(NodeId(n as u16), inc)
            }
            Some(Behind::Nobody) => true,
        };
        if (gone || silent) && watch.failing.insert((n, inc)) {
            tracing::warn!(
                cluster = %inner.local.cluster,
                node = n,
                incarnation = inc,
                heartbeat_age_ms = now.saturating_sub(hb) / 1_000_000,
                "declaring a node failed: {}",
                if gone {
                    "its process is gone"
                } else {
                    "its heartbeat is stale and its process made no progress"
                }
            );
            let _ = jobs.send(Job::Fail { slot: n, inc });
        }
    }
    // Kept while watched, and while FAILED: recovery of a failed holder needs it. A
    // member no longer watched (another joined in between) is forgotten, and its
    // pidfd closed unless another node of this process holds it.
    seen.retain(|&(n, inc), _| {
        let (state, now) = now_at(n);
        now == inc
            && (ring.contains(&(n, inc))
                || (state != node_state::FREE && state != node_state::ALIVE))
    });
    // The epoll set follows the watched members' pidfds (at most `WATCHED` of them).
    let mut want: [Option<Arc<OwnedFd>>; WATCHED] = Default::default();
    for (w, k) in want.iter_mut().zip(ring.members()) {
        if let Some(Behind::Verified { fd, .. } | Behind::Opaque { fd: Some(fd), .. }) = seen.get(k)
        {
            *w = Some(fd.clone());
        }
    }
    drop(seen);
    let wanted = |raw: i32| want.iter().flatten().any(|fd| fd.as_raw_fd() == raw);
    watch.armed.retain(|&raw, (fd, _)| {
        let keep = wanted(raw);
        if !keep {
            let _ = epoll::delete(&watch.epoll, &**fd);
        }
        keep
    });
    for fd in want.into_iter().flatten() {
        let raw = fd.as_raw_fd();
        if watch.armed.contains_key(&raw) {
            continue;
        }
        let flags = epoll::EventFlags::IN | epoll::EventFlags::ONESHOT;
        let data = epoll::EventData::new_u64(raw as u64);
        // Not in the set (out of memory): the member is still judged by its heartbeat.
        if epoll::add(&watch.epoll, &*fd, data, flags).is_ok() {
            watch.armed.insert(raw, (fd, false));
        }
    }
    watch
        .failing
        .retain(|(n, inc)| now_at(*n) == (node_state::ALIVE, *inc));
    watch.quiet.retain(|k, _| ring.contains(k));
}

/// Hands over the cleanup of slots stuck neither FREE nor ALIVE for long (a survivor
/// that died or gave up half-way through a cleanup, or a word another member wrote).
fn scan_stuck(inner: &Inner, jobs: &Sender<Job>, watch: &mut Watch) {
    let c = inner.local.ctl();
    let me = inner.local.me.index();
    // A cleanup that neither finished nor failed over this long is taken over (a
    // survivor waits at most one bound for the plane, one per lock release and 10 s
    // for a kill).
    let stuck_after = inner.local.stall_bound() * 3 + Duration::from_secs(10);
    let mut now_stuck = HashSet::new();
    for n in (0..MAX_NODES).filter(|&n| n != me) {
        let s = &c.nodes[n];
        let state = s.state.load(Ordering::Acquire);
        if state == node_state::FREE || state == node_state::ALIVE {
            continue;
        }
        // FAILED, or a word memchan never writes.
        let inc = s.incarnation.load(Ordering::Acquire);
        now_stuck.insert((n, state, inc));
        let since = *watch
            .stuck
            .entry((n, state, inc))
            .or_insert_with(Instant::now);
        if since.elapsed() > stuck_after {
            watch.stuck.insert((n, state, inc), Instant::now());
            let _ = jobs.send(Job::Reap {
                slot: n,
                state,
                inc,
            });
        }
    }
    watch.stuck.retain(|k, _| now_stuck.contains(k));
}

const ZERO: rustix::time::Timespec = rustix::time::Timespec {
    tv_sec: 0,
    tv_nsec: 0,
};

/// The service thread: does the heartbeat thread's jobs, one at a time, until the
/// heartbeat thread ends (it drops the sender) or the node stops.
fn serve(weak: Weak<Inner>, queue: Receiver<Job>, ctl: CtlId, _end: Sender<()>) {
    for job in queue {
        let Some(inner) = weak.upgrade() else { return };
        if inner.stop.load(Ordering::Acquire) {
            return;
        }
        match job {
            Job::Look { slot, inc, pid } => {
                let mark = format!(
                    "/memfd:{}",
                    crate::local::presence_name(&inner.local.cluster, NodeId(slot as u16), inc)
                );
                // "Nobody" on the pid word's say-so only if the node's presence lock
                // agrees: the word may have been rewritten to lead elsewhere.
                let found = match behind(pid, &ctl, &mark) {
                    Behind::Nobody if !inner.local.vacant(NodeId(slot as u16), inc) => {
                        Behind::Unseen
                    }
                    b => b,
                };
                if let Some(e) = inner.pidfds.lock().get_mut(&(slot, inc)) {
                    *e = found;
                }
            }
            Job::Fail { slot, inc } => inner.declare_failed(NodeId(slot as u16), inc),
            Job::Reap { slot, state, inc } => inner.reap_stuck(NodeId(slot as u16), state, inc),
        }
    }
}

/// What stands behind `pid`, a pid read from a slot of the control block (only a
/// claim).
///
/// A pidfd is opened first and must still be open (not exited) after the check, so a
/// pid reused meanwhile is not taken for the node. The process is that slot's node if
/// its `/proc/<pid>/maps` shows this cluster's control block (inode and name) and the
/// node's presence mark `mark` (`/memfd:memchan.<cluster>.n<slot>.i<incarnation>`,
/// which only the node itself can have mapped): a slot forged with the pid of another
/// member, or of a process of another cluster, is nobody's. A process whose maps this
/// node may not read (another user's) is [`Behind::Opaque`]: it may be a member of a
/// shared cluster, and it cannot be signalled anyway.
fn behind(pid: u32, ctl: &CtlId, mark: &str) -> Behind {
    let Some(p) = pid_of(pid) else {
        return Behind::Nobody;
    };
    let fd = match process_pidfd(p) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::SRCH) => return Behind::Nobody,
        // Out of descriptors, say: nothing known either way.
        Err(_) => return Behind::Opaque { fd: None, pid },
    };
    let maps = match std::fs::read_to_string(format!("/proc/{pid}/maps")) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Behind::Opaque { fd: Some(fd), pid }
        }
        Err(_) if exited(&fd, Some(&ZERO)) => return Behind::Nobody,
        Err(_) => return Behind::Opaque { fd: Some(fd), pid },
    };
    let (mut maps_ctl, mut marked) = (false, false);
    for l in maps.lines() {
        let mut f = l.split_whitespace();
        let ino = f.nth(4).and_then(|i| i.parse::<u64>().ok());
        let path = f.next().unwrap_or("");
        maps_ctl |= ino == Some(ctl.ino) && path.ends_with(&ctl.name);
        marked |= path == mark;
    }
    if maps_ctl && marked && !exited(&fd, Some(&ZERO)) {
        Behind::Verified { fd, pid }
    } else {
        Behind::Nobody
    }
}

/// This process's pidfds of other processes, by pid, shared by all its nodes (of any
/// cluster): a process holding k nodes holds one pidfd per watched process, not one
/// per node and member. Held weakly: a pidfd closes once no node watches that process.
static PROCESS_PIDFDS: std::sync::Mutex<Option<HashMap<u32, Weak<OwnedFd>>>> =
    std::sync::Mutex::new(None);

/// A pidfd of process `pid`: a shared one while its process has not exited (until
/// then the pid names that very process, so the pidfd is the one `pidfd_open` would
/// give), else a new one.
fn process_pidfd(pid: rustix::process::Pid) -> rustix::io::Result<Arc<OwnedFd>> {
    let raw = pid.as_raw_nonzero().get() as u32;
    let mut table = PROCESS_PIDFDS.lock().unwrap_or_else(|p| p.into_inner());
    let table = table.get_or_insert_with(HashMap::new);
    if let Some(fd) = table.get(&raw).and_then(Weak::upgrade) {
        if !exited(&fd, Some(&ZERO)) {
            return Ok(fd);
        }
    }
    let fd = Arc::new(rustix::process::pidfd_open(
        pid,
        rustix::process::PidfdFlags::empty(),
    )?);
    table.retain(|_, w| w.strong_count() > 0);
    table.insert(raw, Arc::downgrade(&fd));
    Ok(fd)
}
