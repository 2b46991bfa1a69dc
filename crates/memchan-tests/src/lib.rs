//! memchan's end-to-end tests across crates, in the way of tokio's
//! `tests-integration`: each file under `tests/` drives the `memchan` binary
//! together with another crate (the C API, the installer, `memchan ip`, the hub,
//! the relay, the launcher, `memchan status`). This library only finds the binary.
//!
//! Cargo gives a test the path of a binary of its own package only
//! (`CARGO_BIN_EXE_<name>`), and the binary is `memchan-cli`'s. So
//! [`memchan_exe`] builds it first, once per test process, with the cargo, the
//! target directory and the profile of the test executable itself
//! (`cargo build -p memchan-cli --bin memchan`, a no-op when it is fresh): a test
//! never runs a stale binary, and `cargo test -p memchan-tests` alone is enough.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace's manifest.
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");

/// The path of the `memchan` binary of this build: `target/<profile>/memchan`
/// beside the running test executable (`target/<profile>/deps/...`), built first.
///
/// # Panics
/// When the test executable's directory is not a cargo profile directory, or the
/// build fails (its output is in the message).
pub fn memchan_exe() -> &'static str {
    static EXE: OnceLock<String> = OnceLock::new();
    EXE.get_or_init(|| {
        let exe = build().unwrap_or_else(|e| panic!("the memchan binary: {e}"));
        exe.into_os_string()
            .into_string()
            .expect("a UTF-8 target directory")
    })
}

fn build() -> Result<PathBuf, String> {
    let test = std::env::current_exe().map_err(|e| format!("locating this test: {e}"))?;
    // target/<profile>/deps/<test>
    let profile_dir = test
        .parent()
        .filter(|d| d.ends_with("deps"))
        .and_then(Path::parent)
        .ok_or_else(|| format!("{} is not in a cargo deps directory", test.display()))?;
    let target = profile_dir
        .parent()
        .ok_or_else(|| format!("no target directory above {}", profile_dir.display()))?;
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(p) => p,
        None => return Err(format!("no profile in {}", profile_dir.display())),
    };
    let out = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "memchan-cli", "--bin", "memchan"])
        .args(["--profile", profile, "--manifest-path", WORKSPACE])
        .arg("--target-dir")
        .arg(target)
        .output()
        .map_err(|e| format!("running cargo build -p memchan-cli: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build -p memchan-cli --profile {profile} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let exe = profile_dir.join("memchan");
    if !exe.is_file() {
        return Err(format!("cargo built, but {} is missing", exe.display()));
    }
    Ok(exe)
}
