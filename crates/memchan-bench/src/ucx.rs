//! The UCX peer of the message-passing figures: `ucx_perftest` (Debian's `ucx-utils`)
//! over shared memory on the same two cores as everything else. Its latency, which a
//! target is judged against, takes turns with each message latency pair
//! ([`super::mp::latency_beside_ucx`]): `ucx_perftest` cannot wait for a turn, so each
//! of its windows is a short run of its own. Its bandwidth (information) runs once per
//! round next to the other peers.
//!
//! | series (figure)                | what                                                              |
//! |--------------------------------|-------------------------------------------------------------------|
//! | `ucx` (`mp_latency_8b_ns`)     | `tag_lat`, 8 bytes: UCP tag-matched ping-pong, its median one-way latency |
//! | `ucx` (`mp_bandwidth_1mib_gbps`) | `tag_bw`, 1 MiB: a stream of tag-matched sends, its overall rate  |
//!
//! The server (`ucx_perftest -c B -p PORT`) runs on the answering core, the client
//! (`ucx_perftest 127.0.0.1 -p PORT -t TEST -c A -f -v`) on the timing core; both with
//! `UCX_TLS=sm,self` (UCX's shared-memory transports: posix / sysv mappings, CMA for
//! large messages) so the data never takes TCP, which only carries the test set-up.
//! `ucx_perftest` reports a run's percentile and rates, not its samples: each run adds
//! one value (its median one-way latency, or its rate as the time of one 64 × 1 MiB
//! window), so the p99 column of a `ucx` row is over runs, not over round trips. Run
//! alone (when the turns cannot be set up), its latency is one run of the pairs'
//! round trips.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};

use super::model::{fig, Config, SampleSet};
use super::peers::{on_path, tail, wait_with_deadline};
use super::refs::WINDOW;
use super::worker::Launcher;

/// The series name in both figures.
pub const SERIES: &str = "ucx";
/// Longest one run may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the client retries while the server is not listening yet.
const CONNECT_RETRY: Duration = Duration::from_secs(10);

/// A found `ucx_perftest`.
#[derive(Debug)]
pub struct Ucx {
    exe: PathBuf,
    pub version: Option<String>,
}

/// Finds `ucx_perftest`, or says why the UCX peer is skipped.
pub fn prepare() -> std::result::Result<Ucx, String> {
    let exe = on_path("ucx_perftest").ok_or_else(|| {
        "UCX not installed (no ucx_perftest): the ucx peer is skipped (run scripts/setup.sh)"
            .to_string()
    })?;
    let version = Command::new("ucx_info")
        .arg("-v")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim_start_matches('#').trim().to_string())
        });
    Ok(Ucx { exe, version })
}

/// The client's CSV (`-f -v`): the header line, then one line of values.
/// Returns (median one-way latency µs, overall bandwidth MiB/s).
fn parse(out: &str) -> Result<(f64, f64)> {
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    let header = lines
        .find(|l| l.starts_with("iterations,"))
        .context("no CSV header in ucx_perftest's output")?;
    let values = lines.next().context("no values after the CSV header")?;
    let cols: Vec<&str> = header.split(',').collect();
    let vals: Vec<&str> = values.split(',').map(str::trim).collect();
    ensure!(
        cols.len() == vals.len(),
        "CSV header and values differ in length"
    );
    let get = |pred: &dyn Fn(&str) -> bool, what: &str| -> Result<f64> {
        let i = cols
            .iter()
            .position(|c| pred(c))
            .with_context(|| format!("no {what} column in `{header}`"))?;
        let v: f64 = vals[i]
            .parse()
            .with_context(|| format!("{what}: `{}` is not a number", vals[i]))?;
        ensure!(v.is_finite() && v > 0.0, "{what}: implausible {v}");
        Ok(v)
    };
    Ok((
        get(&|c| c.ends_with("_percentile_lat"), "percentile latency")?,
        get(&|c| c == "overall_bw", "overall_bw")?,
    ))
}

/// Kills and reaps the server on every way out.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Ucx {
    fn command(&self) -> Command {
        let mut c = Command::new(&self.exe);
        c.env("UCX_TLS", "sm,self")
            .env("UCX_WARN_UNUSED_ENV_VARS", "n")
            .stdin(Stdio::null());
        c
    }

    /// One server and client pair running `test` with `args`: the client's output. A
    /// pair that fails is replaced up to twice: under load a pair has exited 255 with
    /// nothing on stderr, and the next one ran.
    fn run_one(
        &self,
        l: &Launcher,
        cpus: (usize, usize),
        test: &str,
        args: &[String],
    ) -> Result<String> {
        let mut tries = 0;
        loop {
            match self.run_pair(l, cpus, test, args) {
                Err(e) if tries < 2 && !e.to_string().contains("timed out") => tries += 1,
                r => return r,
            }
        }
    }

    fn run_pair(
        &self,
        l: &Launcher,
        cpus: (usize, usize),
        test: &str,
        args: &[String],
    ) -> Result<String> {
        let port = l.free_port()?.to_string();
        // The server's words go to a file: when the client cannot reach it they say why.
        let log_path = l.scratch_path(&format!("ucx-server-{port}.log"));
        let server_log = std::fs::File::create(&log_path)
            .with_context(|| format!("creating {}", log_path.display()))?;
        let server = Server(
            self.command()
                .args(["-c", &cpus.1.to_string(), "-p", &port])
                .stdout(server_log.try_clone()?)
                .stderr(server_log)
                .spawn()
                .context("starting the ucx_perftest server")?,
        );
        let deadline = Instant::now() + CONNECT_RETRY;
        let _server = server;
        loop {
            let mut client = self
                .command()
                .args([
                    "127.0.0.1",
                    "-p",
                    &port,
                    "-t",
                    test,
                    "-c",
                    &cpus.0.to_string(),
                ])
                .args(args)
                .args(["-f", "-v"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .context("starting the ucx_perftest client")?;
            let out_pipe = client.stdout.take();
            let err_pipe = client.stderr.take();
            let reader = std::thread::spawn(move || {
                use std::io::Read;
                let (mut o, mut e) = (String::new(), String::new());
                if let Some(mut p) = out_pipe {
                    let _ = p.read_to_string(&mut o);
                }
                if let Some(mut p) = err_pipe {
                    let _ = p.read_to_string(&mut e);
                }
                (o, e)
            });
            let status = wait_with_deadline(&mut client, RUN_TIMEOUT)?;
            let (out, err) = reader.join().unwrap_or_default();
            match status {
                None => bail!("ucx_perftest {test} timed out after {RUN_TIMEOUT:?}"),
                Some(s) if s.success() => return Ok(out),
                // The server may not listen yet (it takes some 20 ms to start). UCX
                // prints its errors on stdout.
                Some(_)
                    if (out.contains("Connection refused")
                        || err.contains("Connection refused"))
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Some(s) => bail!(
                    "ucx_perftest {test} exited with {s}: {} {} (server on port {port}: {})",
                    tail(&err, 800),
                    tail(&out, 400),
                    tail(&std::fs::read_to_string(&log_path).unwrap_or_default(), 600)
                ),
            }
        }
    }

    /// One `tag_lat` run of 8 bytes, `warmup` and then `iters` round trips: its median
    /// one-way latency in ns.
    pub fn latency_ns(
        &self,
        l: &Launcher,
        cpus: (usize, usize),
        warmup: u64,
        iters: u64,
    ) -> Result<f64> {
        let lat = self.run_one(
            l,
            cpus,
            "tag_lat",
            &[
                "-s".into(),
                "8".into(),
                "-n".into(),
                iters.to_string(),
                "-w".into(),
                warmup.to_string(),
            ],
        )?;
        let (lat_us, _) = parse(&lat).context("tag_lat")?;
        Ok(lat_us * 1e3)
    }

    /// One bandwidth run and, with `latency` (when it took no turns this round), one
    /// latency run; their values go to the message-passing figures as series `ucx`.
    pub fn measure(
        &self,
        l: &Launcher,
        cfg: &Config,
        set: &mut SampleSet,
        latency: bool,
    ) -> Result<()> {
        if latency {
            let ns = self.latency_ns(l, cfg.cpus, cfg.warmup, cfg.iters)?;
            set.add(fig::MP_LATENCY, SERIES, vec![ns]);
        }
        let msgs = cfg.peer_bw_windows * WINDOW as u64;
        let bw = self.run_one(
            l,
            cfg.cpus,
            "tag_bw",
            &[
                "-s".into(),
                (1usize << 20).to_string(),
                "-n".into(),
                msgs.to_string(),
                "-w".into(),
                WINDOW.to_string(),
            ],
        )?;
        let (_, mib_s) = parse(&bw).context("tag_bw")?;
        // As the time of one window of WINDOW x 1 MiB (what the bandwidth rows divide).
        set.add(fig::MP_BANDWIDTH, SERIES, vec![WINDOW as f64 / mib_s * 1e9]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_line_is_read_by_its_header() {
        let out = "junk\niterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr\n\
                   20000,0.091,0.094,0.094,81.23,81.23,10646793,10646793\n";
        assert_eq!(parse(out).unwrap(), (0.091, 81.23));
        assert!(parse("iterations,avg_lat\n1,2\n").is_err(), "no percentile");
        assert!(parse("nothing").is_err());
        let bad = "iterations,50.0_percentile_lat,overall_bw\n1,nan,3\n";
        assert!(parse(bad).is_err(), "a NaN latency is not a figure");
    }
}
