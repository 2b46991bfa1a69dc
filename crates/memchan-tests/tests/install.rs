//! `scripts/install.sh` into a temporary prefix, from this test build's own target
//! directory (`--no-build`: the workspace is not built twice), then a C program
//! compiled by the installed `oshcc` and by `cc $(pkg-config --cflags --libs memchan)`,
//! run by the installed `oshrun`, with no LD_LIBRARY_PATH anywhere (the rpath finds
//! the library).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const PROGRAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../memchan-capi/tests/c/native_pair.c"
);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(what: &str, out: &Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// A command without the library path cargo gives test processes.
fn cmd(prog: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new(prog);
    c.env_remove("LD_LIBRARY_PATH")
        .env_remove("OSHMEM_CC")
        .env_remove("SHMEM_CC")
        .stdin(Stdio::null());
    c
}

/// A temporary prefix, removed on drop.
struct Prefix(PathBuf);

impl Drop for Prefix {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Installs this build (the profile directory holding the `memchan` under test).
fn install() -> Prefix {
    let exe = Path::new(memchan_tests::memchan_exe());
    let profile_dir = exe.parent().expect("profile dir");
    let target = profile_dir.parent().expect("target dir");
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(p) => p,
        None => panic!("no profile in {}", exe.display()),
    };
    let prefix =
        Prefix(std::env::temp_dir().join(format!("memchan-install-{}", std::process::id())));
    let out = cmd("bash")
        .arg(Path::new(REPO).join("scripts/install.sh"))
        .args(["--no-build", "--target-dir"])
        .arg(target)
        .args(["--profile", profile])
        .arg(&prefix.0)
        .output()
        .expect("run install.sh");
    let said = ok("install.sh", &out);
    assert!(said.contains("installed memchan"), "{said}");
    prefix
}

fn run_pair(p: &Prefix, exe: &Path) {
    let out = cmd(p.0.join("bin/oshrun"))
        .args(["-n", "2", "--timeout", "120"]) // a hang guard, not a speed claim
        .arg(exe)
        .env_remove("MEMCHAN_HUB")
        .output()
        .expect("run the installed oshrun");
    let stdout = ok(&format!("oshrun {}", exe.display()), &out);
    for r in 0..2 {
        assert!(
            stdout.contains(&format!("native rank {r}: ok")),
            "rank {r} missing:\n{stdout}"
        );
    }
}

#[test]
fn installed_oshcc_pkg_config_and_oshrun_build_and_run_a_program() {
    let p = install();
    let prefix = &p.0;
    for f in [
        "bin/memchan",
        "bin/oshcc",
        "bin/oshrun",
        "lib/libmemchan.so",
        "include/shmem.h",
        "include/pshmem.h",
        "include/memchan.h",
        "lib/pkgconfig/memchan.pc",
    ] {
        assert!(prefix.join(f).exists(), "{f} not installed");
    }

    // The installed wrapper points at the installed headers and library.
    let show = ok(
        "oshcc -showme",
        &cmd(prefix.join("bin/oshcc"))
            .args(["-showme", "x.c"])
            .output()
            .unwrap(),
    );
    let inc = format!("-I {}", prefix.join("include").display());
    let rpath = format!("-Wl,-rpath,{}", prefix.join("lib").display());
    assert!(show.contains(&inc) && show.contains(&rpath), "{show}");

    let by_oshcc = prefix.join("pair-oshcc");
    ok(
        "oshcc",
        &cmd(prefix.join("bin/oshcc"))
            .args(["-Wall", "-Werror", PROGRAM, "-o"])
            .arg(&by_oshcc)
            .output()
            .unwrap(),
    );

    let flags = ok(
        "pkg-config",
        &cmd("pkg-config")
            .args(["--cflags", "--libs", "memchan"])
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
            .output()
            .expect("run pkg-config"),
    );
    assert!(flags.contains(&rpath), "{flags}");
    let by_cc = prefix.join("pair-cc");
    ok(
        "cc with pkg-config's flags",
        &cmd("cc")
            .args(["-Wall", "-Werror", PROGRAM, "-o"])
            .arg(&by_cc)
            .args(flags.split_whitespace())
            .output()
            .expect("run cc"),
    );

    // ldd finds the installed library through the rpath alone.
    let lib = prefix.join("lib/libmemchan.so");
    for exe in [&by_oshcc, &by_cc] {
        let deps = ok("ldd", &cmd("ldd").arg(exe).output().expect("run ldd"));
        let line = deps
            .lines()
            .find(|l| l.contains("libmemchan.so"))
            .unwrap_or_else(|| panic!("no libmemchan in ldd {}:\n{deps}", exe.display()));
        assert!(
            line.contains(&format!("=> {}", lib.display())),
            "ldd {}: {line}",
            exe.display()
        );
    }

    run_pair(&p, &by_oshcc);
    run_pair(&p, &by_cc);
}
