//! The C API end to end: the programs of memchan-capi's `tests/c` (hello_shmem,
//! rma_families, generics, atomics, collectives, reductions, statics, global_exit, bad_calls) compiled by the
//! system `cc` (through `memchan oshcc`) against the built `libmemchan.so`, started
//! as real PEs by `memchan run`.

#[allow(dead_code)]
mod common;
use common::{bin, CProgram, Proc};

/// The compiler flags of these programs.
const FLAGS: &[&str] = &["-Wall", "-Werror", "-pthread"];

use std::process::{Command, Output, Stdio};

fn run(args: &[&str], prog: &CProgram, env: &[(&str, &str)]) -> Output {
    bin()
        .arg("run")
        .args(args)
        .args(["--timeout", "120"]) // a hang guard, not a speed claim
        .arg(&prog.0)
        // Every PE's heap is populated and locked memory (the shm transport's rx
        // mappings are resident), so the default 256 MiB times several PEs of several
        // tests at once is heavy for a shared CI host; `default_heap_is_256_mib`
        // checks the default on its own.
        .env("SHMEM_SYMMETRIC_SIZE", "32M")
        .env_remove("MEMCHAN_LOG")
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
    let prog = CProgram::build("hello_shmem", FLAGS);
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

/// The library's own reports reach a C program's stderr through `MEMCHAN_LOG`: each PE
/// logs its join at debug level when asked, and nothing below a warning when not.
#[test]
fn memchan_log_shows_the_library_s_reports_in_a_c_program() {
    let prog = CProgram::build("hello_shmem", FLAGS);
    let joined = |stderr: &str| {
        stderr
            .lines()
            .filter(|l| l.contains("memchan_shm") && l.contains("joined"))
            .count()
    };
    let out = run(
        &["-n", "2", "--oversubscribe"],
        &prog,
        &[("MEMCHAN_LOG", "memchan_shm=debug")],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{:?}\nstderr:\n{stderr}", out.status);
    assert_eq!(joined(&stderr), 2, "one join line per PE:\n{stderr}");
    let out = run(&["-n", "2", "--oversubscribe"], &prog, &[]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{:?}\nstderr:\n{stderr}", out.status);
    assert_eq!(
        joined(&stderr),
        0,
        "debug lines without MEMCHAN_LOG:\n{stderr}"
    );
}

/// `tests/c/NAME.c` under `memchan run -n N` (plus `env`): every PE exits 0 and
/// prints `PE r of N: WHAT ok`.
fn all_pes_ok(prog: &CProgram, n: usize, what: &str, env: &[(&str, &str)]) {
    let out = run(&["-n", &n.to_string(), "--oversubscribe"], prog, env);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{what} -n {n}: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    for r in 0..n {
        assert!(
            stdout.contains(&format!("PE {r} of {n}: {what} ok")),
            "{what} -n {n}: PE {r} missing:\n{stdout}"
        );
    }
}

/// Typed and sized put/get/p/g, `_nbi`, iput/iget, ctx forms and put_signal: each
/// PE checks what its neighbours deposited and reads back remotely.
#[test]
fn typed_and_sized_rma_families_move_the_right_bytes() {
    let prog = CProgram::build("rma_families", FLAGS);
    for n in [2, 3] {
        all_pes_ok(&prog, n, "rma", &[]);
    }
}

/// The C11 generic interfaces (`shmem_put(dest, ...)`, `shmem_atomic_add`,
/// `shmem_wait_until`, `shmem_sum_reduce`, ...) select the typed functions, on several
/// element types, built as C11.
#[test]
fn c11_generic_calls_select_the_typed_functions() {
    let prog = CProgram::build("generics", &["-std=c11", "-Wall", "-Wextra", "-Werror"]);
    for n in [2, 3] {
        all_pes_ok(&prog, n, "generics", &[]);
    }
}

/// Contended atomics (new and 1.0-era names) add up exactly, one cswap wins, a lock
/// guards a non-atomic update, wait_until/test see remote increments.
#[test]
fn atomics_locks_and_waits_agree_across_pes() {
    let prog = CProgram::build("atomics", FLAGS);
    for n in [2, 3] {
        all_pes_ok(&prog, n, "atomics", &[]);
    }
}

/// Active-set and team collectives give the expected values (a reduction longer
/// than the library's inbox included), teams and queries answer as documented.
#[test]
fn collectives_teams_and_queries_give_the_expected_values() {
    let prog = CProgram::build("collectives", FLAGS);
    for n in [2, 3] {
        all_pes_ok(&prog, n, "collectives", &[]);
    }
}

/// Every `*_to_all` and team `*_reduce` family and type, counts 1, 5 and many
/// steps long, in place and not, over 2 and 3 PEs (unequal shares), active sets
/// that leave PEs out and SHMEM_TEAM_SHARED: every element as each PE computes it.
#[test]
fn every_reduction_family_combines_every_element() {
    let prog = CProgram::build("reductions", FLAGS);
    for n in [2, 3] {
        all_pes_ok(&prog, n, "reductions", &[]);
    }
}

/// Globals and file-local statics (`.data` and `.bss`) are symmetric on one host:
/// puts, gets, atomics, a wait and a static pSync reach them, no heap involved.
#[test]
fn static_and_global_data_are_symmetric_on_one_host() {
    let prog = CProgram::build("statics", FLAGS);
    for n in [2, 3] {
        all_pes_ok(&prog, n, "statics", &[]);
    }
}

/// The same programs with every operation crossing a hub (`MEMCHAN_DOMAIN=off`),
/// and, where load/store access changes what they check (`shmem_ptr`,
/// `SHMEM_TEAM_SHARED`), in this host's domain too (the default: PEs of one host
/// share memory through a hub as well).
#[test]
fn the_families_run_through_a_hub_too() {
    for (name, what, domains) in [
        ("rma_families", "rma", &["off"][..]),
        ("atomics", "atomics", &["off"]),
        ("collectives", "collectives", &["off", ""]),
        ("reductions", "reductions", &["off"]),
        ("statics", "statics", &["off", ""]),
    ] {
        let prog = CProgram::build(name, FLAGS);
        for domain in domains {
            // A hub serves one cluster, and each run is a new one.
            let mut hub = Proc::spawn(&["hub", "--listen", "127.0.0.1:0"]);
            let addr = hub.expect_line("listening");
            let mut env = vec![("MEMCHAN_HUB", addr.as_str())];
            if !domain.is_empty() {
                env.push(("MEMCHAN_DOMAIN", domain));
            }
            all_pes_ok(&prog, 2, what, &env);
            hub.terminate();
        }
    }
}

/// Without `SHMEM_SYMMETRIC_SIZE` the heap holds 256 MiB: a larger request is
/// refused naming that size and the variable (one PE, to map the default once).
#[test]
fn default_heap_is_256_mib() {
    let prog = CProgram::build("bad_calls", FLAGS);
    let out = bin()
        .args(["run", "-n", "1", "--timeout", "120"])
        .arg(&prog.0)
        .arg("overrun-default")
        .env_remove("SHMEM_SYMMETRIC_SIZE")
        .stdin(Stdio::null())
        .output()
        .expect("spawn memchan run");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("shmem_malloc: 268435457 bytes do not fit in the symmetric heap of 268435456 bytes: raise SHMEM_SYMMETRIC_SIZE"),
        "{stderr}"
    );
}

/// The standard's environment variables: `SHMEM_VERSION` and `SHMEM_INFO` print on
/// PE 0 only, `SHMEM_DEBUG` shows the library's debug messages, and
/// `SHMEM_SYMMETRIC_SIZE` takes a fraction with a suffix.
#[test]
fn the_standard_s_environment_variables_take_effect() {
    let hello = CProgram::build("hello_shmem", FLAGS);
    let out = run(
        &["-n", "2", "--oversubscribe"],
        &hello,
        &[("SHMEM_VERSION", "1"), ("SHMEM_DEBUG", "1")],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let version = format!(
        "memchan {} (libmemchan): OpenSHMEM 1.5",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(stdout.matches(&version).count(), 1, "{stdout}");
    assert!(
        stderr.contains(" DEBUG "),
        "SHMEM_DEBUG showed nothing:\n{stderr}"
    );

    let out = run(
        &["-n", "2", "--oversubscribe"],
        &hello,
        &[("SHMEM_INFO", "")],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(
        stdout.matches("SHMEM_SYMMETRIC_SIZE ").count(),
        1,
        "{stdout}"
    );
    assert!(
        stdout.contains("[\"32M\"]"),
        "the heap size's value:\n{stdout}"
    );

    let bad = CProgram::build("bad_calls", FLAGS);
    let out = bin()
        .args(["run", "-n", "1", "--timeout", "120"])
        .arg(&bad.0)
        .arg("overrun-default")
        .env("SHMEM_SYMMETRIC_SIZE", "0.03125G")
        .stdin(Stdio::null())
        .output()
        .expect("spawn memchan run");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("do not fit in the symmetric heap of 33554432 bytes"),
        "{stderr}"
    );
}

/// `shmem_global_exit(7)` on one PE ends the job, the others stuck in a barrier,
/// with exit code 7.
#[test]
fn global_exit_status_reaches_the_shell() {
    let prog = CProgram::build("global_exit", FLAGS);
    let out = run(&["-n", "3", "--oversubscribe"], &prog, &[]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(7),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("PE 2: global_exit(7)"), "{stdout}");
    assert!(!stdout.contains("passed a barrier"), "{stdout}");
}

/// `oshrun ... 2>&1 | head -1`: the launcher's own output (and its PEs') goes to a
/// pipe closed after one line. The PEs die of SIGPIPE, and the launcher neither
/// panics on its now-closed stderr (it did: exit 101, cleanup skipped) nor leaves
/// the run's shared-memory objects: it exits 128 + SIGPIPE as a shell reports it.
#[test]
fn a_closed_output_pipe_keeps_the_exit_code_and_cleans_up() {
    let prog = CProgram::build("chatty", FLAGS);
    let (reader, writer) = std::io::pipe().expect("pipe");
    let mut child = bin()
        .args(["run", "-n", "2", "--oversubscribe", "--timeout", "120"])
        .arg(&prog.0)
        .env("SHMEM_SYMMETRIC_SIZE", "32M")
        .env_remove("MEMCHAN_LOG")
        .stdin(Stdio::null())
        .stdout(writer.try_clone().expect("dup"))
        .stderr(writer)
        .spawn()
        .expect("spawn memchan run");
    let launcher = child.id();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(reader), &mut first)
        .expect("read a line");
    assert!(first.starts_with("PE "), "first line: {first:?}");
    // The reader is gone: every later write to the pipe fails.
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(128 + libc::SIGPIPE), "{status:?}");
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .expect("read /dev/shm")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&format!("memchan.run-{launcher}-")))
        .collect();
    assert!(left.is_empty(), "the run left {left:?}");
}

/// A program that exits without `shmem_finalize` (OpenSHMEM 1.0's `start_pes`, as the
/// OSU benchmarks) leaves the cluster at exit: the hub sees each PE leave, and counts
/// no isolation (before: "isolated ... its link closed" for every PE).
#[test]
fn a_pe_that_exits_without_finalize_leaves_the_cluster() {
    let prog = CProgram::build("no_finalize", FLAGS);
    let mut hub = Proc::spawn(&["hub", "--listen", "127.0.0.1:0"]);
    let addr = hub.expect_line("listening");
    let out = run(&["-n", "2"], &prog, &[("MEMCHAN_HUB", &addr)]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success()
            && stdout.contains("PE 0 of 2: ok")
            && stdout.contains("PE 1 of 2: ok"),
        "{:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    // Once the hub has removed both (a leave, or a closed link seen later)...
    let t0 = std::time::Instant::now();
    let json = loop {
        let status = bin()
            .args(["status", "--hub", &addr, "--json"])
            .output()
            .expect("memchan status");
        let json: String = text(&status.stdout).split_whitespace().collect();
        if json.contains("\"members\":[]") {
            break json;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "hang guard: {json}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // ...it counted no isolation.
    assert!(json.contains("\"isolations\":0,"), "{json}");
    hub.terminate();
}

#[test]
fn hello_shmem_runs_through_a_hub_too() {
    let prog = CProgram::build("hello_shmem", FLAGS);
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
    let prog = CProgram::build("hello_shmem", FLAGS);
    let out = run(&["-n", "2"], &prog, &[("SHMEM_SYMMETRIC_SIZE", "12Q")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("shmem_init: SHMEM_SYMMETRIC_SIZE=\"12Q\" is not a size"),
        "{stderr}"
    );
}

/// `bad_calls MODE` under `memchan run -n 2` (4 KiB heap): exit 1 and `want` on stderr.
/// `memchan run -n 2 PROG MODE` with a 4 KiB heap.
fn run_mode(prog: &CProgram, mode: &str) -> Output {
    bin()
        .args(["run", "-n", "2", "--timeout", "120"])
        .arg(&prog.0)
        .arg(mode)
        .env("SHMEM_SYMMETRIC_SIZE", "4K")
        .stdin(Stdio::null())
        .output()
        .expect("spawn memchan run")
}

fn refused(prog: &CProgram, mode: &str, want: &str) {
    let out = run_mode(prog, mode);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{mode}: {stderr}");
    assert!(stderr.contains(want), "{mode}: want {want:?} in:\n{stderr}");
}

#[test]
fn bad_calls_name_the_call_and_the_problem() {
    let prog = CProgram::build("bad_calls", FLAGS);
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
    for (mode, want) in [
        ("put-before-init", "shmem_long_p: called before shmem_init"),
        ("after-finalize", "shmem_barrier_all: called after shmem_finalize"),
        ("negative-pe", "shmem_int_get: PE -1 is not a PE of this job (0..2)"),
        ("stack-atomic", "shmem_long_atomic_fetch_add: 0x"),
        ("stack-atomic", "is not in the symmetric heap"),
        (
            "null-fetch",
            "shmem_long_atomic_fetch_add_nbi: fetch address 0x0 is null or misaligned",
        ),
        (
            "zero-stride-alltoalls",
            "shmem_alltoallsmem: strides must be positive (dst 0, sst 1)",
        ),
        ("unaligned-atomic", "shmem_int_atomic_inc: 0x"),
        ("unaligned-atomic", "is not 4-byte aligned"),
        ("bad-cmp", "shmem_int_wait_until: 42 is not a SHMEM_CMP_* comparison"),
        ("stack-wait", "shmem_int_wait_until: 0x"),
        ("zero-stride", "shmem_int_iput: strides must be at least 1 (dst 0, sst 1)"),
        // Memory of libc's malloc is in no symmetric range.
        ("libc-heap", "shmem_barrier: 0x"),
        ("libc-heap", "is not in the symmetric heap (0x"),
        ("bad-active-set", "shmem_barrier: active set (PE_start 1, logPE_stride 0, PE_size 2): reaches past the last PE (1)"),
        ("bad-team", "shmem_team_sync: 0x4d is not a team"),
        ("unheld-lock", "shmem_clear_lock: this PE does not hold the lock"),
        ("bad-free", "shmem_free: 0x"),
        ("bad-free", "is not a block shmem_malloc returned"),
        ("overlap-reduce", "shmem_long_sum_to_all: source 0x"),
        ("overlap-reduce", "(16 bytes) overlap without being the same array"),
        ("bad-signal-op", "shmem_putmem_signal: sig_op 9 is neither SHMEM_SIGNAL_SET (0) nor SHMEM_SIGNAL_ADD (1)"),
    ] {
        refused(&prog, mode, want);
    }
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

/// shmem.h (thousands of generated lines) is clean C99 under `-pedantic -Wextra`.
#[test]
fn the_header_is_clean_pedantic_c99() {
    let dir = std::env::temp_dir().join(format!("memchan-hdr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("h.c");
    std::fs::write(
        &src,
        "#include <shmem.h>\nint main(void) { return SHMEM_MAJOR_VERSION - 1; }\n",
    )
    .unwrap();
    let out = bin()
        .args([
            "oshcc",
            "-std=c99",
            "-pedantic",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
        ])
        .arg(&src)
        .arg("-o")
        .arg(dir.join("h.o"))
        .env_remove("OSHMEM_CC")
        .env_remove("SHMEM_CC")
        .output()
        .expect("run memchan oshcc");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn threads_of_a_pe_put_and_get_at_once_and_calls_after_finalize_are_refused() {
    let prog = CProgram::build("threads_shmem", FLAGS);
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
    // The thread that called shmem_init (whose handles live outside the thread-local
    // cache) exits first; the main thread's calls go on.
    let out = run_mode(&prog, "init-in-thread");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success()
            && stdout.contains("PE 0 of 2: ok")
            && stdout.contains("PE 1 of 2: ok"),
        "{:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
}

/// The profiling interface: a library linked in front of libmemchan defines
/// `shmem_X`, counts and calls `pshmem_X`. The data moves as without it, each PE's
/// profile counts exactly the program's own calls (libmemchan's internal barriers
/// and quiets do not come back through the library), and `shmem_pcontrol`'s level
/// reaches it.
#[test]
fn a_profiling_library_sees_every_call_and_reaches_libmemchan_through_pshmem() {
    const CAPI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../memchan-capi");
    let dir = std::env::temp_dir().join(format!("memchan-prof-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // `memchan oshcc ARGS` with the system compiler; fails the test if it fails.
    let oshcc = |args: Vec<String>| {
        let built = bin()
            .arg("oshcc")
            .args(args)
            .env_remove("OSHMEM_CC")
            .env_remove("SHMEM_CC")
            .output()
            .expect("run memchan oshcc");
        assert!(built.status.success(), "{}", text(&built.stderr));
    };
    let shim = dir.join("libmemchanprof.so");
    oshcc(vec![
        "-shared".into(),
        "-fPIC".into(),
        "-Wall".into(),
        "-Werror".into(),
        format!("{CAPI}/tests/c/profiler.c"),
        "-o".into(),
        shim.display().to_string(),
    ]);
    let exe = dir.join("profiled");
    oshcc(vec![
        "-Wall".into(),
        "-Werror".into(),
        format!("-I{CAPI}/tests/c"),
        format!("{CAPI}/tests/c/profiled.c"),
        "-o".into(),
        exe.display().to_string(),
        format!("-L{}", dir.display()),
        format!("-Wl,-rpath,{}", dir.display()),
        "-Wl,--no-as-needed".into(),
        "-lmemchanprof".into(),
    ]);
    let prog = CProgram(exe);
    let out = run(&["-n", "2", "--oversubscribe"], &prog, &[]);
    let _ = std::fs::remove_file(&shim);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{:?}\n{stdout}\n{stderr}", out.status);
    for pe in 0..2 {
        assert!(
            stdout.contains(&format!("PE {pe} of 2: profiled ok")),
            "{stdout}"
        );
        let want =
            format!("PE {pe} profile: putmem 3 quiet 1 barrier_all 2 fadd 1 pcontrol 1 level 2");
        assert!(stdout.contains(&want), "want {want:?}:\n{stdout}");
    }
    drop(prog);
    let _ = std::fs::remove_dir_all(&dir);
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
    std::os::unix::fs::symlink(memchan_tests::memchan_exe(), &link).unwrap();
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
