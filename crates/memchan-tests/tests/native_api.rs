//! memchan.h end to end: the C programs `tests/c/native_*.c` of memchan-capi compiled
//! by the system C compiler (through `memchan oshcc`, which adds the include and
//! library directories) against the built `libmemchan.so`, run as real processes.

#[allow(dead_code)]
mod common;
use common::{bin, CProgram, Proc};

/// The compiler flags of these programs.
const FLAGS: &[&str] = &["-Wall", "-Wextra", "-Werror"];

use std::process::{Command, Output, Stdio};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `native_pair` as two nodes under `memchan run -n 2` with `env`.
fn run_pair(env: &[(&str, &str)]) -> Output {
    let prog = CProgram::build("native_pair", FLAGS);
    bin()
        .args(["run", "-n", "2", "--timeout", "120"]) // a hang guard, not a speed claim
        .arg(&prog.0)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("spawn memchan run")
}

fn assert_pair_ok(out: &Output) {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    for r in 0..2 {
        assert!(
            stdout.contains(&format!("native rank {r}: ok")),
            "rank {r} missing:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}

#[test]
fn native_pair_writes_gets_locks_and_messages_on_one_host() {
    assert_pair_ok(&run_pair(&[]));
}

#[test]
fn native_pair_runs_through_a_hub_too() {
    let mut hub = Proc::spawn(&["hub", "--listen", "127.0.0.1:0"]);
    let addr = hub.expect_line("listening");
    assert_pair_ok(&run_pair(&[("MEMCHAN_HUB", &addr)]));
    hub.terminate();
}

/// Removes the one-host cluster `name`'s objects from /dev/shm on drop: a check that
/// fails ends the C program without leaving the cluster.
struct ShmCleanup(String);

impl Drop for ShmCleanup {
    fn drop(&mut self) {
        let prefix = format!("memchan.{}.", self.0);
        for e in std::fs::read_dir("/dev/shm")
            .into_iter()
            .flatten()
            .flatten()
        {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

#[test]
fn native_bad_input_gets_codes_and_messages_never_a_crash() {
    let prog = CProgram::build("native_bad", FLAGS);
    let name = format!("native-bad-{}", std::process::id());
    let _cleanup = ShmCleanup(name.clone());
    let out = Command::new(&prog.0)
        .arg(&name)
        .env_remove("MEMCHAN_HUB")
        .env_remove("MEMCHAN_HUB_HOST")
        .output()
        .expect("run native_bad");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("native_bad: ok"),
        "{:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
}
