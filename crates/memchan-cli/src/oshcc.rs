//! `memchan oshcc` (also the binary started as `oshcc`): the system C compiler with
//! the flags that build an OpenSHMEM program against libmemchan, like Open MPI's
//! `oshcc` wrapper.
//!
//! The compiler is `OSHMEM_CC`, else `SHMEM_CC`, else `cc` (not `CC`: a configure
//! run with `CC=oshcc` would make the wrapper call itself). Before the caller's
//! arguments go `-I INCLUDE`; after them, unless `-c`, `-S`, `-E` or `-M`/`-MM`
//! says there is no link step, `-L LIB -Wl,-rpath,LIB -lmemchan`, so the program
//! finds the library without `LD_LIBRARY_PATH`. `-showme` (or `--showme`) prints the
//! command instead of running it.
//!
//! Where INCLUDE and LIB are: beside this binary, in an installed layout
//! (`PREFIX/bin/memchan`, `PREFIX/include/shmem.h`, `PREFIX/lib/libmemchan.so`),
//! else in the build tree it was built in (`crates/memchan-capi/include`; the
//! `libmemchan.so` cargo put in this binary's target directory, `cargo build -p
//! memchan-capi`).

use clap::Args;
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `memchan oshcc`'s arguments: all the compiler's.
#[derive(Debug, Clone, Args)]
#[command(disable_help_flag = true)]
pub struct OshccCli {
    /// [-showme] compiler arguments (sources, -o, -O2, ...)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "ARGS")]
    pub args: Vec<OsString>,
}

/// The header directory of the build tree this binary came from.
const BUILD_INCLUDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../memchan-capi/include");

/// The first of `dirs` holding `file`.
fn find(dirs: &[PathBuf], file: &str) -> Option<PathBuf> {
    dirs.iter().find(|d| d.join(file).is_file()).cloned()
}

/// The one of `dirs` whose `file` is newest: in a build tree cargo leaves the library
/// both in the profile directory (`cargo build`) and in `deps/` (`cargo test`), and
/// either may be the stale one.
fn newest(dirs: &[PathBuf], file: &str) -> Option<PathBuf> {
    dirs.iter()
        .filter_map(|d| Some((d.join(file).metadata().ok()?.modified().ok()?, d)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, d)| d.clone())
}

/// Runs (or with `-showme` prints) the compiler; the exit code when it cannot.
pub fn main(name: &str, args: Vec<OsString>) -> i32 {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{name}: cannot find this program's path: {e}");
            return 1;
        }
    };
    let bin = exe.parent().unwrap_or(Path::new("/"));
    let prefix = bin.parent().unwrap_or(bin);
    let include = find(
        &[prefix.join("include"), PathBuf::from(BUILD_INCLUDE)],
        "shmem.h",
    );
    let lib = find(&[prefix.join("lib")], "libmemchan.so")
        .or_else(|| newest(&[bin.to_path_buf(), bin.join("deps")], "libmemchan.so"));
    let (Some(include), Some(lib)) = (include, lib) else {
        eprintln!(
            "{name}: shmem.h or libmemchan.so not found beside {} (looked in {}/include and /lib, and this build tree): build it with `cargo build -p memchan-capi`",
            exe.display(),
            prefix.display()
        );
        return 1;
    };
    let cc = ["OSHMEM_CC", "SHMEM_CC"]
        .iter()
        .find_map(|v| std::env::var_os(v).filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "cc".into());
    let showme = args.iter().any(|a| a == "-showme" || a == "--showme");
    let link = !args.iter().any(|a| {
        ["-c", "-S", "-E", "-M", "-MM"]
            .iter()
            .any(|f| a == OsStr::new(f))
    });
    let mut argv: Vec<OsString> = vec!["-I".into(), include.into_os_string()];
    argv.extend(
        args.into_iter()
            .filter(|a| a != "-showme" && a != "--showme"),
    );
    if link {
        let mut rpath = OsString::from("-Wl,-rpath,");
        rpath.push(&lib);
        let mut l = OsString::from("-L");
        l.push(&lib);
        argv.extend([l, rpath, "-lmemchan".into()]);
    }
    if showme {
        let words: Vec<_> = std::iter::once(&cc)
            .chain(&argv)
            .map(|a| a.to_string_lossy())
            .collect();
        println!("{}", words.join(" "));
        return 0;
    }
    let err = Command::new(&cc).args(&argv).exec();
    eprintln!(
        "{name}: cannot run the compiler {}: {err}",
        cc.to_string_lossy()
    );
    127
}
