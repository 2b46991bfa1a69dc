//! `memchan run` across hosts, the hosts being network namespaces (memchan-testkit's
//! `Topology`: a hub namespace routing between host namespaces, each host with a
//! `/dev/shm` of its own) and the remote shell `Topology::agent` (`nsenter` into the
//! host's namespaces). The launcher runs in the hub namespace, so the hub it
//! starts listens on an address every host reaches. Real processes throughout; every
//! wait polls an event (a line, an exit, a /proc entry) under a hang guard. Root only
//! (namespaces): skipped otherwise.

#[allow(dead_code)]
mod common;
use common::{assert_gone, output, text, CProgram, Proc, TempFile, WAIT};

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;

use memchan_testkit::netns::Topology;

/// Runs `cmd` to its end, SIGKILLed if it outlives WAIT several times over (a job of
/// 4 PEs across namespaces on a shared 2-core machine).
fn output_guarded(cmd: Command) -> Output {
    output(cmd, WAIT * 8)
}

/// One job at a time: each is 4 PEs and their launchers on a shared 2-core machine.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|p| p.into_inner())
}

fn root() -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("memchan run across hosts: skipped, network namespaces need root");
    }
    root
}

/// `memchan run -n 4 --launch-agent AGENT --hosts H0:2,H1:2 ARGS` started in the hub
/// namespace (`ip netns exec` execs it: the pid is the launcher's).
fn launcher(topo: &Topology, args: &[&str]) -> Command {
    let hosts = format!("{}:2,{}:2", topo.hosts[0].ns, topo.hosts[1].ns);
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", &topo.hub_ns, memchan_tests::memchan_exe()])
        .args([
            "run",
            "-n",
            "4",
            "--launch-agent",
            &topo.agent(),
            "--hosts",
            &hosts,
        ])
        .args(["--timeout", "120"]) // a hang guard, not a speed claim
        .args(args)
        // The tests say everything explicitly.
        .env_remove("MEMCHAN_HUB")
        .env_remove("MEMCHAN_KEY_FILE")
        .env_remove("MEMCHAN_RSH")
        .env_remove("MEMCHAN_CLUSTER")
        // Each PE's heap is resident memory: small, for a shared CI host.
        .env("SHMEM_SYMMETRIC_SIZE", "32M")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A PE that prints its pid and hangs (exec: the pid is the hanging process's).
const HANG: &str = "echo pid $MEMCHAN_RANK $$; exec sleep 1000";

/// Ranks 0-1 run in the first namespace and 2-3 in the second, each with its rank,
/// the job's size, its rank on its host, one cluster, the hub the launcher started
/// (in the hub namespace), the run's key in a memfd it inherited (on no file
/// system), and the `-x` variables.
#[test]
fn ranks_run_in_blocks_on_each_host_with_the_hub_and_key() {
    if !root() {
        return;
    }
    let _one = serial();
    let topo = Topology::new("rhplace", 2);
    let script = "echo rank $MEMCHAN_RANK $MEMCHAN_SIZE $MEMCHAN_LOCAL_RANK $MEMCHAN_LOCAL_SIZE \
                  $OMPI_COMM_WORLD_LOCAL_RANK $(ip netns identify) $MEMCHAN_CLUSTER $MEMCHAN_HUB \
                  $MEMCHAN_KEY_FILE $(readlink $MEMCHAN_KEY_FILE | cut -d' ' -f1) \
                  $(wc -c < $MEMCHAN_KEY_FILE) $(cksum < $MEMCHAN_KEY_FILE | cut -d' ' -f1) \
                  $RUN_HOSTS_X";
    let out = output_guarded(launcher(
        &topo,
        &["-x", "RUN_HOSTS_X=sent", "sh", "-c", script],
    ));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{:?}\n{stdout}\n{stderr}", out.status);
    let mut seen = BTreeMap::new();
    let mut shared = Vec::new();
    for l in stdout.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(w.len(), 14, "{l}");
        let rank: usize = w[1].parse().unwrap();
        let host = &topo.hosts[rank / 2].ns;
        let local = (rank % 2).to_string();
        assert_eq!(
            [w[2], w[3], w[4], w[5], w[6]],
            ["4", &local, "2", &local, host.as_str()],
            "{l}"
        );
        // The key: an inherited memfd, not empty.
        assert!(w[9].starts_with("/proc/self/fd/"), "{l}");
        assert_eq!(w[10], "/memfd:memchan-run-key", "{l}");
        assert!(w[11].parse::<usize>().unwrap() >= 32, "{l}");
        // A `-x` variable travels with the job (the launcher itself has not got it).
        assert_eq!(w[13], "sent", "{l}");
        assert!(seen.insert(rank, ()).is_none(), "{l}");
        shared.push((w[7].to_string(), w[8].to_string(), w[12].to_string()));
    }
    assert_eq!(seen.keys().copied().collect::<Vec<_>>(), [0, 1, 2, 3]);
    shared.dedup();
    assert_eq!(shared.len(), 1, "one cluster, hub and key: {shared:?}");
    // The hub listens in the hub namespace, on its first address.
    assert!(
        shared[0]
            .1
            .starts_with(&format!("{}:", topo.hosts[0].hub_addr)),
        "{shared:?}"
    );
}

/// `memchan run -n N` over the two namespaces under `--tag-output`: every PE exits 0
/// and prints `PE r of 4: WHAT ok` tagged with its own rank `[r]`.
fn c_program_ok(topo: &Topology, prog: &CProgram, what: &str) {
    let out = output_guarded(launcher(topo, &["--tag-output", prog.0.to_str().unwrap()]));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{what}: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    for r in 0..4 {
        assert!(
            stdout.contains(&format!("[{r}] PE {r} of 4: {what}ok")),
            "{what}: PE {r} missing:\n{stdout}"
        );
    }
}

/// C OpenSHMEM programs run unchanged across the namespaces: each PE's my_pe/n_pes is
/// its launcher rank and the size; puts, gets, fetch-adds, the typed families,
/// barriers and the collectives cross hosts through the hub.
#[test]
fn c_shmem_programs_run_across_namespaces() {
    if !root() {
        return;
    }
    let _one = serial();
    let topo = Topology::new("rhshmem", 2);
    let flags = &["-Wall", "-Werror", "-pthread"];
    c_program_ok(&topo, &CProgram::build("hello_shmem", flags), "");
    c_program_ok(&topo, &CProgram::build("rma_families", flags), "rma ");
    c_program_ok(
        &topo,
        &CProgram::build("collectives", flags),
        "collectives ",
    );
}

/// The OpenSHMEM 1.5 conformance set (memchan-capi's `tests/c/spec`, every program
/// in it; `shmem_spec.rs` runs them on one host) passes across the namespaces too:
/// teams, contexts, the C11 generics, collectives and synchronization through a hub.
#[test]
fn the_conformance_set_passes_across_namespaces() {
    if !root() {
        return;
    }
    let _one = serial();
    let topo = Topology::new("rhspec", 2);
    let flags = &["-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread"];
    for name in common::spec_programs() {
        let prog = CProgram::build(&format!("spec/{name}"), flags);
        let out = output_guarded(launcher(&topo, &["--tag-output", prog.0.to_str().unwrap()]));
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(
            out.status.success(),
            "{name}: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            out.status
        );
        for r in 0..4 {
            assert!(
                stdout.contains(&format!("[{r}] PE {r}: ok")),
                "{name}: PE {r} missing:\n{stdout}"
            );
        }
    }
}

/// A rank that exits 3 on the second host ends the job: the launcher returns 3 and
/// every PE on both hosts is gone.
#[test]
fn a_failing_rank_ends_every_host_with_its_code() {
    if !root() {
        return;
    }
    let _one = serial();
    let topo = Topology::new("rhfail", 2);
    let fifo = std::env::temp_dir().join(format!("memchan-run-hosts-{}-go", std::process::id()));
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let _rm = TempFile(fifo.clone());
    // Rank 3 fails once the test has seen the others hang.
    let script = format!(
        "if [ $MEMCHAN_RANK = 3 ]; then read x < {}; exit 3; fi; {HANG}",
        fifo.display()
    );
    let mut r = Proc::spawn_command(launcher(&topo, &["sh", "-c", &script]));
    let pids = r.pids(3);
    assert_eq!(pids.keys().copied().collect::<Vec<_>>(), [0, 1, 2]);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .unwrap()
        .write_all(b"go\n")
        .unwrap();
    let (status, err) = r.wait();
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(
        err.contains("rank=3"),
        "the log names the failing PE: {err}"
    );
    assert!(
        err.contains(&format!("host={}", topo.hosts[1].ns)),
        "the log names its host: {err}"
    );
    for pid in pids.values() {
        assert_gone(*pid);
    }
}

/// SIGTERM to the launcher reaches every PE on every host (143); SIGKILL to the
/// launcher, which cannot forward it, still ends them (their host launchers see the
/// launcher's end); `--timeout` ends every host's PEs (124).
#[test]
fn signals_and_the_timeout_reach_every_pe_on_every_host() {
    if !root() {
        return;
    }
    let _one = serial();
    let topo = Topology::new("rhsig", 2);
    for (sig, code) in [(libc::SIGTERM, Some(143)), (libc::SIGKILL, None)] {
        let mut r = Proc::spawn_command(launcher(&topo, &["sh", "-c", HANG]));
        let pids = r.pids(4);
        r.signal(sig);
        let (status, err) = r.wait();
        assert_eq!(status.code(), code, "signal {sig}: {err}");
        for pid in pids.values() {
            assert_gone(*pid);
        }
    }
    // The later --timeout wins over the hang guard's. The PEs that started by then
    // (all, unless the host is very slow) are gone: their output's end is reached.
    let mut r = Proc::spawn_command(launcher(&topo, &["--timeout", "1", "sh", "-c", HANG]));
    let (status, err) = r.wait();
    assert_eq!(status.code(), Some(124), "{err}");
    loop {
        match r.lines.recv_timeout(WAIT) {
            Ok(l) => {
                if let ["pid", _, pid] = l.split_whitespace().collect::<Vec<_>>()[..] {
                    assert_gone(pid.parse().unwrap());
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(e) => panic!("a PE still holds the output open: {e}"),
        }
    }
}

/// With `--hub`, the run joins a hub that is already there (with the key of
/// `MEMCHAN_KEY_FILE`) instead of starting one.
#[test]
fn a_given_hub_is_joined() {
    if !root() {
        return;
    }
    let _one = serial();
    let topo = Topology::new("rhjoin", 2);
    let key = TempFile::new("rhjoin-key", "a shared secret for the run's hub\n");
    let listen = format!("{}:0", topo.hosts[0].hub_addr);
    let mut hub = {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &topo.hub_ns, memchan_tests::memchan_exe()])
            // As tolerant of a busy machine as the hub the launcher starts.
            .args(["hub", "--failure-timeout-ms", "5000", "--listen", &listen])
            .arg("--key-file")
            .arg(&key.0)
            .env_remove("MEMCHAN_LOG");
        Proc::spawn_command(c)
    };
    let addr = hub.expect_line("listening");
    let prog = CProgram::build("hello_shmem", &["-Wall", "-Werror"]);
    let mut cmd = launcher(&topo, &["--hub", &addr, "--tag-output"]);
    cmd.arg(&prog.0).env("MEMCHAN_KEY_FILE", &key.0);
    let out = output_guarded(cmd);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for r in 0..4 {
        assert!(
            stdout.contains(&format!("[{r}] PE {r} of 4: ok")),
            "{stdout}"
        );
    }
    // The hub that served them is the given one: it saw four joins.
    let log = hub.terminate();
    assert_eq!(log.matches("joined node=").count(), 4, "{log}");
}
