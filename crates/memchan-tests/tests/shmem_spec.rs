//! The OpenSHMEM 1.5 conformance set: one C program per interface family of the
//! specification (memchan-capi's `tests/c/spec/`: memory, teams, contexts with the
//! C11 generics, collectives, point-to-point synchronization, sync, the profiling
//! interface), each checking
//! results, built as C11 by `memchan oshcc` and run at 2 and 4 PEs by `memchan run`.
//! `run_hosts.rs` runs the same programs between network namespaces through a hub.

#[allow(dead_code)]
mod common;
use common::{bin, CProgram};

use std::process::Stdio;

/// Builds `spec/NAME`, runs it at 2 and 4 PEs, and checks that every PE said ok.
fn conforms(name: &str) {
    let prog = CProgram::build(
        &format!("spec/{name}"),
        &["-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread"],
    );
    for n in [2, 4] {
        let out = bin()
            .args(["run", "-n", &n.to_string(), "--oversubscribe"])
            .args(["--timeout", "120"]) // a hang guard, not a speed claim
            .arg(&prog.0)
            .env("SHMEM_SYMMETRIC_SIZE", "32M")
            .env_remove("MEMCHAN_LOG")
            .stdin(Stdio::null())
            .output()
            .expect("spawn memchan run");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{name} -n {n}: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            out.status
        );
        for r in 0..n {
            assert!(
                stdout.contains(&format!("PE {r}: ok")),
                "{name} -n {n}: PE {r} did not finish:\n{stdout}\nstderr:\n{stderr}"
            );
        }
    }
}

/// A test per program of the set, and the list of them.
macro_rules! spec_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                conforms(stringify!($name));
            }
        )*
        const PROGRAMS: &[&str] = &[$(stringify!($name)),*];
    };
}

spec_tests!(memory, teams, contexts, collectives, p2p, sync, profiling);

#[test]
fn every_program_of_the_set_has_a_test() {
    let on_disk = common::spec_programs();
    let mut listed: Vec<String> = PROGRAMS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "tests/c/spec and PROGRAMS differ");
}
