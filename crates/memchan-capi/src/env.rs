//! The environment variables OpenSHMEM 1.5 defines (section 8), read at
//! `shmem_init`: `SHMEM_VERSION` and `SHMEM_INFO` print on PE 0, `SHMEM_DEBUG` turns
//! the library's debug messages on (the log module reads it, and memchan's own
//! `MEMCHAN_LOG`, named here too), `SHMEM_SYMMETRIC_SIZE` sizes the heap
//! (`heap::parse_size`). The standard's variables take effect when set, to any
//! value. A leaf beside `crate::shmem::VERSION`.

use std::io::Write;

/// The heap size variable.
pub(crate) const SIZE_VAR: &str = "SHMEM_SYMMETRIC_SIZE";
/// Print the library's version at start-up.
const VERSION_VAR: &str = "SHMEM_VERSION";
/// Print what every variable does at start-up.
const INFO_VAR: &str = "SHMEM_INFO";
/// Log the library's debug messages.
pub(crate) const DEBUG_VAR: &str = "SHMEM_DEBUG";
/// memchan's own log filter (the `memchan` binary's variable and syntax).
pub(crate) const LOG_ENV: &str = "MEMCHAN_LOG";

/// Whether `var` is set (to anything, empty included: the standard asks only that).
pub(crate) fn set(var: &str) -> bool {
    std::env::var_os(var).is_some()
}

/// The version line: the library and the standard it implements.
fn version() -> String {
    format!(
        "memchan {} (libmemchan): OpenSHMEM {}.{}",
        env!("CARGO_PKG_VERSION"),
        crate::shmem::VERSION.0,
        crate::shmem::VERSION.1
    )
}

/// What `SHMEM_INFO` prints: each variable, what it does and its value here.
fn info() -> String {
    let value =
        |v: &str| std::env::var(v).map_or_else(|_| "unset".to_string(), |x| format!("{x:?}"));
    let mut s = format!(
        "{}\nEnvironment variables (value here in brackets):\n",
        version()
    );
    for (var, what) in [
        (VERSION_VAR, "print the library's version at start-up (PE 0)"),
        (INFO_VAR, "print this text at start-up (PE 0)"),
        (
            SIZE_VAR,
            "bytes of symmetric heap per PE: a number, with an optional K, M, G or T suffix (powers of 1024); default 256M",
        ),
        (DEBUG_VAR, "log the library's debug messages to stderr (as MEMCHAN_LOG=debug)"),
        (
            LOG_ENV,
            "memchan's log filter (debug, warn,memchan_shm=debug, ...); default warn",
        ),
    ] {
        s.push_str(&format!("  {var:<20} {what} [{}]\n", value(var)));
    }
    s
}

/// At start-up on PE 0: the version and the variables' text, when asked for.
pub(crate) fn announce(rank: u32) {
    if rank != 0 {
        return;
    }
    let mut text = String::new();
    if set(INFO_VAR) {
        text = info();
    } else if set(VERSION_VAR) {
        text = version() + "\n";
    }
    if !text.is_empty() {
        let mut out = std::io::stdout().lock();
        // A closed stdout loses the text, not the program.
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_info_text_names_every_variable_and_the_version() {
        let text = super::info();
        for v in [
            "SHMEM_VERSION",
            "SHMEM_INFO",
            "SHMEM_SYMMETRIC_SIZE",
            "SHMEM_DEBUG",
            "MEMCHAN_LOG",
        ] {
            assert!(text.contains(v), "{v} missing:\n{text}");
        }
        assert!(
            text.starts_with("memchan ") && text.contains("OpenSHMEM 1.5"),
            "{text}"
        );
    }
}
