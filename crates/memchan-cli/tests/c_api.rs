//! The C API end to end: `tests/c/hello_shmem.c` of memchan-capi compiled by the
//! system `cc` (through `memchan oshcc`) against the built `libmemchan.so`, started
//! as real PEs by `memchan run`.

#[allow(dead_code)]
mod common;
use common::{bin, Proc};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

const CAPI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../memchan-capi");

/// Compiles `tests/c/NAME.c` with `memchan oshcc` into a temporary executable,
/// removed on drop.
struct CProgram(PathBuf);

impl CProgram {
    fn build(name: &str) -> CProgram {
        // One file per build: the tests run in parallel and each removes its own.
        static BUILDS: AtomicUsize = AtomicUsize::new(0);
        let k = BUILDS.fetch_add(1, Ordering::Relaxed);
        let exe =
            std::env::temp_dir().join(format!("memchan-capi-{}-{k}-{name}", std::process::id()));
        let out = bin()
            .args(["oshcc", "-Wall", "-Werror", "-pthread"])
            .arg(Path::new(CAPI).join(format!("tests/c/{name}.c")))
            .arg("-o")
            .arg(&exe)
            .env_remove("OSHMEM_CC")
            .env_remove("SHMEM_CC")
            .output()
            .expect("run memchan oshcc");
        assert!(
            out.status.success(),
            "cc failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        CProgram(exe)
    }
}

impl Drop for CProgram {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn run(args: &[&str], prog: &CProgram, env: &[(&str, &str)]) -> Output {
    bin()
        .arg("run")
        .args(args)
        .args(["--timeout", "120"]) // a hang guard, not a speed claim
        .arg(&prog.0)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("spawn memchan run")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn hello_shmem_puts_gets_and_adds_across_pes() {
    let prog = CProgram::build("hello_shmem");
    for n in ["2", "3"] {
        let out = run(&["-n", n, "--oversubscribe"], &prog, &[]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(
            out.status.success(),
            "-n {n}: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            out.status
        );
        for r in 0..n.parse().unwrap() {
            assert!(
                stdout.contains(&format!("PE {r} of {n}: ok")),
                "-n {n}: PE {r} missing:\n{stdout}"
            );
        }
    }
}

#[test]
fn hello_shmem_runs_through_a_hub_too() {
    let prog = CProgram::build("hello_shmem");
    let mut hub = Proc::spawn(&["hub", "--listen", "127.0.0.1:0"]);
    let addr = hub.expect_line("listening");
    let out = run(&["-n", "2"], &prog, &[("MEMCHAN_HUB", &addr)]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("PE 0 of 2: ok") && stdout.contains("PE 1 of 2: ok"),
        "{stdout}"
    );
    hub.terminate();
}

#[test]
fn a_bad_heap_size_names_the_variable_and_fails_the_job() {
    let prog = CProgram::build("hello_shmem");
    let out = run(&["-n", "2"], &prog, &[("SHMEM_SYMMETRIC_SIZE", "12Q")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("shmem_init: SHMEM_SYMMETRIC_SIZE=\"12Q\" is not a size"),
        "{stderr}"
    );
}

/// `bad_calls MODE` under `memchan run -n 2` (4 KiB heap): exit 1 and `want` on stderr.
fn refused(prog: &CProgram, mode: &str, want: &str) {
    let out = bin()
        .args(["run", "-n", "2", "--timeout", "120"])
        .arg(&prog.0)
        .arg(mode)
        .env("SHMEM_SYMMETRIC_SIZE", "4K")
        .stdin(Stdio::null())
        .output()
        .expect("spawn memchan run");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{mode}: {stderr}");
    assert!(stderr.contains(want), "{mode}: want {want:?} in:\n{stderr}");
}

#[test]
fn bad_calls_name_the_call_and_the_problem() {
    let prog = CProgram::build("bad_calls");
    refused(&prog, "overrun", "shmem_malloc: 1048576 bytes do not fit in the symmetric heap of 4096 bytes: raise SHMEM_SYMMETRIC_SIZE");
    refused(&prog, "stack-put", "shmem_putmem: 0x");
    refused(&prog, "stack-put", "is not in the symmetric heap");
    refused(
        &prog,
        "bad-pe",
        "shmem_long_p: PE 2 is not a PE of this job (0..2)",
    );
    refused(
        &prog,
        "before-init",
        "shmem_my_pe: called before shmem_init",
    );
    // Without a launcher's rank the PE refuses to start, naming how to start it.
    let alone = Command::new(&prog.0)
        .arg("overrun")
        .env_remove("MEMCHAN_RANK")
        .env_remove("MEMCHAN_SIZE")
        .env_remove("SLURM_PROCID")
        .env_remove("PMI_RANK")
        .env_remove("OMPI_COMM_WORLD_RANK")
        .output()
        .unwrap();
    assert_eq!(alone.status.code(), Some(1));
    assert!(
        text(&alone.stderr).contains("shmem_init: no rank in the environment"),
        "{}",
        text(&alone.stderr)
    );
}

#[test]
fn threads_of_a_pe_put_and_get_at_once_and_calls_after_finalize_are_refused() {
    let prog = CProgram::build("threads_shmem");
    let out = run(&["-n", "2"], &prog, &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("PE 0 of 2: ok") && stdout.contains("PE 1 of 2: ok"),
        "{stdout}"
    );
    refused(
        &prog,
        "after-finalize",
        "shmem_my_pe: called after shmem_finalize",
    );
}

/// `memchan oshcc -showme ARGS` with `env`: the command it would run.
fn showme(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = bin()
        .arg("oshcc")
        .arg("-showme")
        .args(args)
        .env_remove("OSHMEM_CC")
        .env_remove("SHMEM_CC")
        .envs(env.iter().copied())
        .output()
        .expect("spawn memchan oshcc");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn oshcc_shows_its_command_and_honours_the_compiler_variables() {
    let link = showme(&["x.c", "-o", "x"], &[]);
    assert!(link.starts_with("cc -I "), "{link}");
    assert!(link.contains("memchan-capi/include x.c -o x -L"), "{link}");
    assert!(
        link.contains("-Wl,-rpath,") && link.trim_end().ends_with(" -lmemchan"),
        "{link}"
    );
    assert!(!link.contains("showme"), "{link}");
    let compile = showme(&["-c", "x.c"], &[("SHMEM_CC", "clang")]);
    assert!(compile.starts_with("clang -I "), "{compile}");
    assert!(
        !compile.contains("-lmemchan") && !compile.contains("rpath"),
        "{compile}"
    );
    let both = showme(&["x.c"], &[("SHMEM_CC", "clang"), ("OSHMEM_CC", "gcc")]);
    assert!(both.starts_with("gcc -I "), "{both}");
}

#[test]
fn the_binary_started_as_oshcc_is_the_wrapper() {
    let dir = std::env::temp_dir().join(format!("memchan-oshcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("oshcc");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_memchan"), &link).unwrap();
    let out = Command::new(&link)
        .args(["-showme", "a.c"])
        .env_remove("OSHMEM_CC")
        .env_remove("SHMEM_CC")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("a.c -L"),
        "{}",
        text(&out.stdout)
    );
}
