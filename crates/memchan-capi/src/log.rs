//! The library's logs in a C program. memchan's crates report through `tracing`
//! (a peer declared failed, a node isolated, a lost hub, a retried handshake); a Rust
//! binary installs the subscriber, but a C program has none, so without this those
//! reports vanish and a PE that dies in `shmem_init` says only its last error.
//!
//! The first `shmem_init` / `start_pes` or `memchan_join` installs one: lines to stderr,
//! as `memchan hub` writes them, filtered by `MEMCHAN_LOG` (the same variable and
//! syntax as the `memchan` binary: `debug`, `warn,memchan_shm=debug`, ...); when it is
//! unset, warnings and errors only (so a healthy job prints nothing), or everything
//! from debug up with OpenSHMEM's `SHMEM_DEBUG` set. `memchan run
//! --tag-output` prefixes each line with its rank.

use std::io::IsTerminal;
use std::sync::Once;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::EnvFilter;

/// Installs the subscriber, once per process. A program that already installed one
/// (a Rust host linking the library) keeps its own.
pub(crate) fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let quiet = if crate::env::set(crate::env::DEBUG_VAR) {
            LevelFilter::DEBUG
        } else {
            LevelFilter::WARN
        };
        let filter = EnvFilter::builder()
            .with_default_directive(quiet.into())
            .with_env_var(crate::env::LOG_ENV)
            .from_env_lossy();
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            // A closed stderr (`... 2>&1 | head -1`) loses the lines, not the process:
            // the subscriber would report its failed write with a panicking eprintln.
            .log_internal_errors(false)
            .try_init();
    });
}
