//! The hub on the third host of `memchan bench --hosts`: one `memchan hub` process
//! per measurement, in namespace H on [`netns::ADDR_HUB`], serving that
//! measurement's cluster only (open, or with the measurement's key file).
//!
//! It runs pinned to the ping side's core, where the hub of the old two-namespace
//! topology ran as threads of the ping side's process: this machine has two cores
//! and the timing and answering sides hold one each. The pin is inherited: the
//! process is spawned from a short-lived thread pinned first.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{bail, Context, Result};

use super::super::worker::{pin, Launcher};
use super::netns::{Namespaces, ADDR_HUB};

/// A running hub; killed (and reaped) when dropped. Should the coordinator die
/// instead, the namespaces' cleanup kills it with everything else in H.
pub struct HubProc {
    child: Child,
    /// `HOST:PORT` the nodes connect to.
    pub addr: String,
}

impl HubProc {
    /// Starts `memchan hub --listen ADDR_HUB:port --cluster cluster [--key-file k]`
    /// in namespace H on `cpu`, and waits for its `listening` line.
    ///
    /// # Errors
    /// When it cannot be spawned or exits before listening (its stderr, kept in
    /// the scratch directory, is quoted).
    pub fn start(
        l: &Launcher,
        ns: &Namespaces,
        port: u16,
        cluster: &str,
        key_file: Option<&Path>,
        cpu: usize,
    ) -> Result<Self> {
        let err_path = l.scratch_path(&format!("{cluster}.hub.err"));
        let err = std::fs::File::create(&err_path)
            .with_context(|| format!("creating {}", err_path.display()))?;
        let host = ns.hub_host()?;
        let mut cmd = Command::new(ns.ip_path());
        cmd.args(["netns", "exec", host])
            .arg(l.exe())
            .args(["hub", "--listen", &format!("{ADDR_HUB}:{port}")])
            .args(["--cluster", cluster]);
        match key_file {
            Some(k) => cmd.arg("--key-file").arg(k),
            // An open cluster stays open whatever the environment names.
            None => cmd.env_remove("MEMCHAN_KEY_FILE"),
        };
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(err);
        let mut child = std::thread::scope(|s| {
            s.spawn(|| -> Result<Child> {
                pin(cpu)?;
                cmd.spawn()
                    .context("starting the hub (ip netns exec ... memchan hub)")
            })
            .join()
            .unwrap_or_else(|_| bail!("the thread starting the hub panicked"))
        })?;
        // Its first line, or end of file if it failed (its stderr says why).
        let mut first = String::new();
        let out = child.stdout.take().context("the hub's stdout")?;
        let _ = std::io::BufReader::new(out).read_line(&mut first);
        match first.trim().strip_prefix("listening ") {
            Some(addr) => Ok(HubProc {
                child,
                addr: addr.to_string(),
            }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                let why = std::fs::read_to_string(&err_path).unwrap_or_default();
                bail!(
                    "the hub in {host} did not start: {:?} {}",
                    first.trim(),
                    why.trim()
                )
            }
        }
    }
}

impl Drop for HubProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
