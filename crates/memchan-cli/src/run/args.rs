//! The command line of `memchan run` / `oshrun`, in the spellings of Open MPI's
//! `mpirun`/`oshrun` (hand-parsed: `-np`, `-x VAR`, single-dash long options and
//! "everything after PROG is the program's" do not fit a derive parser).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

/// How ranks are bound to cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bind {
    /// Each rank to the one core of its block placement (the default).
    Core,
    /// No binding: the PEs keep the launcher's affinity.
    None,
}

/// One entry of `--hosts` or the hostfile: a host and its slots (`host:N`,
/// `slots=N`; `None`: not given, which counts as 1 across hosts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSlots {
    pub name: String,
    pub slots: Option<u32>,
}

/// What `memchan run` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct RunArgs {
    pub np: u32,
    /// `--hosts` / `-H` entries, then the hostfile's, in order; empty: this host.
    pub hosts: Vec<HostSlots>,
    /// `--launch-agent`: the remote shell that starts the launcher's side on another
    /// host (`None`: `MEMCHAN_RSH`, else `ssh`).
    pub launch_agent: Option<String>,
    /// `--hub`: the hub a run across hosts joins (`None`: `MEMCHAN_HUB`, else the
    /// launcher starts one).
    pub hub: Option<String>,
    /// `--hub-listen`: where the hub the launcher starts listens (`None`: port 0 on
    /// this host's first non-loopback IPv4 address).
    pub hub_listen: Option<String>,
    /// `-x` variables: `(name, Some(value))` sets it, `(name, None)` passes the
    /// launcher's own value (already inherited on this host).
    pub export: Vec<(String, Option<String>)>,
    pub tag_output: bool,
    pub timeout: Option<Duration>,
    pub bind: Bind,
    pub oversubscribe: bool,
    pub report_bindings: bool,
    pub program: OsString,
    pub program_args: Vec<OsString>,
}

/// What the command line asked for: a run, or the usage text.
#[derive(Debug)]
pub enum Parsed {
    Run(RunArgs),
    Help,
    /// `--host-job`: this process is a launcher's side on one host of a run across
    /// hosts; the job arrives on stdin (`hosts::host_job`).
    HostJob,
}

pub const USAGE: &str = "\
usage: memchan run -n N [options] PROG [ARGS...]     (also: oshrun -np N ...)

  -n, -np, --np N          number of PEs (ranks 0..N-1)
  -H, --host, --hosts H[:N],..
                           hosts to run on, N slots each (default 1); ranks fill
                           them in blocks, in order
  --hostfile, --machinefile F
                           a file of hosts, one per line (`host [slots=N]`, # comments)
  --launch-agent CMD       the remote shell that starts PEs on another host
                           (default: MEMCHAN_RSH, else ssh); run as `CMD HOST memchan ...`,
                           or with `{host}` in CMD replaced
  --hub HOST:PORT          across hosts: join this hub (default: MEMCHAN_HUB, else the
                           launcher starts one, with a fresh key)
  --hub-listen HOST:PORT   where the hub the launcher starts listens (default: port 0
                           on this host's first non-loopback IPv4 address)
  -x VAR[=VALUE]           set VAR in every PE (VAR alone: pass the launcher's value)
  --tag-output             prefix every output line with `[RANK] `
  --timeout SECS           kill every PE after SECS seconds; exit code 124
                           (default: MPIEXEC_TIMEOUT, else none)
  --bind-to core|none      bind each PE to one core (default core)
  --map-by core|slot       place ranks in blocks of consecutive cores (the only placement)
  --oversubscribe          allow more PEs than cores (several PEs share a core)
  --report-bindings        log each PE's core
  --allow-run-as-root      accepted for mpirun compatibility
  --                       ends the options

Every PE gets MEMCHAN_CLUSTER (a name unique to the run), MEMCHAN_RANK, MEMCHAN_SIZE,
MEMCHAN_LOCAL_RANK, MEMCHAN_LOCAL_SIZE, PMI_RANK, PMI_SIZE, OMPI_COMM_WORLD_RANK,
OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK and OMPI_COMM_WORLD_LOCAL_SIZE.
Across hosts every PE also gets MEMCHAN_HUB and MEMCHAN_KEY_FILE (a copy of the key on
its host) and reads nothing on stdin.
Exit status: the first non-zero exit code of a PE (128+N for a PE killed by signal N),
124 on --timeout, 2 for a bad command line.";

/// Parses the arguments after `run` (or after `oshrun`). `env` reads the launcher's
/// environment (`MPIEXEC_TIMEOUT`), passed in so that tests need not set it.
pub fn parse(args: Vec<OsString>, env: impl Fn(&str) -> Option<String>) -> Result<Parsed> {
    let mut np = None;
    let mut hosts = Vec::new();
    let mut export = Vec::new();
    let mut tag_output = false;
    let mut timeout = None;
    let mut bind = Bind::Core;
    let mut oversubscribe = false;
    let mut report_bindings = false;
    let mut launch_agent = None;
    let mut hub = None;
    let mut hub_listen = None;

    if args.first().is_some_and(|a| a == "--host-job") {
        return Ok(Parsed::HostJob);
    }
    let mut it = args.into_iter();
    let program = loop {
        let Some(arg) = it.next() else {
            bail!("no program to run\n\n{USAGE}");
        };
        let Some(s) = arg.to_str() else {
            // Not UTF-8: not an option of ours, so it is the program.
            break arg;
        };
        if s == "--" {
            break it
                .next()
                .ok_or_else(|| anyhow!("no program after `--`\n\n{USAGE}"))?;
        }
        if !s.starts_with('-') || s == "-" {
            break arg;
        }
        // `--name=value` (and Open MPI's single-dash `-name`) for options with a value.
        let (name, inline) = match s.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (s.to_string(), None),
        };
        let mut value = |what: &str| -> Result<String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it
                    .next()
                    .and_then(|v| v.into_string().ok())
                    .ok_or_else(|| anyhow!("`{name}` needs {what}")),
            }
        };
        match long(&name).as_str() {
            "n" | "np" | "c" => {
                let v = value("a number of PEs")?;
                let n: u32 = v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                    anyhow!("`{name} {v}`: the number of PEs must be a whole number of at least 1")
                })?;
                np = Some(n);
            }
            "H" | "host" | "hosts" => {
                let v = value("a list of hosts")?;
                for h in v.split(',').filter(|h| !h.is_empty()) {
                    hosts.push(host_slots(h, None).with_context(|| format!("`{name} {v}`"))?);
                }
            }
            "hostfile" | "machinefile" | "default-hostfile" => {
                let f = PathBuf::from(value("a file name")?);
                let text = std::fs::read_to_string(&f)
                    .with_context(|| format!("reading the hostfile {}", f.display()))?;
                hosts.extend(hostfile(&text).with_context(|| format!("hostfile {}", f.display()))?);
            }
            "x" => {
                let v = value("VAR or VAR=VALUE")?;
                let (k, val) = match v.split_once('=') {
                    Some((k, val)) => (k, Some(val.to_string())),
                    None => (v.as_str(), None),
                };
                let ok = k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && k.bytes().next().is_some_and(|b| !b.is_ascii_digit());
                if !ok {
                    bail!("`-x {v}`: `{k}` is not a variable name");
                }
                export.push((k.to_string(), val));
            }
            "tag-output" => tag_output = true,
            "timeout" => timeout = Some(seconds(&name, &value("a number of seconds")?)?),
            "bind-to" => {
                bind = match value("core or none")?.as_str() {
                    // One logical CPU is what memchan binds a rank to either way.
                    "core" | "hwthread" | "cpu" => Bind::Core,
                    "none" => Bind::None,
                    other => bail!("`{name} {other}`: memchan run binds to `core` or `none`"),
                }
            }
            "map-by" => match value("a placement")?.as_str() {
                "core" | "slot" | "hwthread" => {}
                other => bail!(
                    "`{name} {other}`: memchan run places ranks in blocks of consecutive cores \
                     (`--map-by core` or `slot`)"
                ),
            },
            "launch-agent" => {
                let v = value("a command")?;
                if v.split_whitespace().next().is_none() {
                    bail!("`{name}` needs a command, not an empty one");
                }
                launch_agent = Some(v);
            }
            "hub" => {
                // Checked here, where the user typed it, rather than at every PE's join.
                let v = value("HOST:PORT")?;
                memchan::HubSpec::parse_rails(&v).map_err(|e| anyhow!("`{name}`: {e}"))?;
                hub = Some(v);
            }
            "hub-listen" => hub_listen = Some(value("HOST:PORT")?),
            "oversubscribe" => oversubscribe = true,
            "report-bindings" => report_bindings = true,
            // Open MPI refuses root without it; memchan has no such rule.
            "allow-run-as-root" => {}
            "h" | "help" => return Ok(Parsed::Help),
            _ => bail!(
                "unknown option `{s}` (memchan run does not support it; see `memchan run --help`)"
            ),
        }
    };

    if timeout.is_none() {
        if let Some(v) = env("MPIEXEC_TIMEOUT").filter(|v| !v.is_empty()) {
            timeout = Some(seconds("MPIEXEC_TIMEOUT", &v)?);
        }
    }
    let np = np.ok_or_else(|| anyhow!("the number of PEs is missing: give `-n N`\n\n{USAGE}"))?;
    Ok(Parsed::Run(RunArgs {
        np,
        hosts,
        launch_agent,
        hub,
        hub_listen,
        export,
        tag_output,
        timeout,
        bind,
        oversubscribe,
        report_bindings,
        program,
        program_args: it.collect(),
    }))
}

/// An option's name without its dashes: Open MPI takes `-np`, `--np`, `-tag-output`
/// and `--tag-output` alike; `-n`, `-c`, `-x`, `-H` and `-h` are single letters.
fn long(name: &str) -> String {
    name.trim_start_matches('-').to_string()
}

fn seconds(what: &str, v: &str) -> Result<Duration> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| anyhow!("`{what} {v}`: the timeout must be a positive number of seconds"))
}

/// `host` or `host:N` (Open MPI's `-H` form); `slots` is a hostfile's `slots=N`.
fn host_slots(h: &str, slots: Option<&str>) -> Result<HostSlots> {
    let (name, n) = match h.split_once(':') {
        Some((name, n)) => (name, Some(n)),
        None => (h, slots),
    };
    let slots = match n {
        Some(n) => Some(n.parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| {
            anyhow!("`{h}`: the slots of a host are a whole number of at least 1, not `{n}`")
        })?),
        None => None,
    };
    if name.is_empty() {
        bail!("`{h}`: no host name");
    }
    Ok(HostSlots {
        name: name.to_string(),
        slots,
    })
}

/// The hosts of a hostfile: the first word of each line with its `slots=N` (or
/// `host:N`), comments (`#`) and blank lines skipped; other words (`max_slots=`)
/// are not used.
fn hostfile(text: &str) -> Result<Vec<HostSlots>> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let host = words.next()?;
            let slots = words.find_map(|w| w.strip_prefix("slots="));
            Some(host_slots(host, slots))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &str) -> Result<RunArgs> {
        let args = args.split_whitespace().map(OsString::from).collect();
        match parse(args, |_| None)? {
            Parsed::Run(r) => Ok(r),
            Parsed::Help => bail!("help"),
            Parsed::HostJob => bail!("host job"),
        }
    }

    #[test]
    fn a_hub_list_is_checked_where_it_is_typed() {
        let r = p("-n 2 --hub 10.0.0.1:7000,10.0.0.2:7000 prog").expect("two rails");
        assert_eq!(r.hub.as_deref(), Some("10.0.0.1:7000,10.0.0.2:7000"));
        for (bad, says) in [
            ("a:1,b:2,c:3", "3 hub addresses"),
            ("a:1,", "without an address"),
            (",", "without an address"),
        ] {
            let e = p(&format!("-n 2 --hub {bad} prog"))
                .expect_err(bad)
                .to_string();
            assert!(
                e.contains("--hub") && e.contains(bad) && e.contains(says),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn mpirun_spellings() {
        for line in [
            "-n 4 prog",
            "-np 4 prog",
            "--np 4 prog",
            "--np=4 prog",
            "-c 4 prog",
            "--n 4 prog",
        ] {
            let r = p(line).unwrap();
            assert_eq!((r.np, r.program.to_str().unwrap()), (4, "prog"), "{line}");
        }
        let r = p("-np 2 -tag-output --oversubscribe --timeout 1.5 -x A=1 -x B --bind-to none --map-by core -- prog -n 9 --x")
            .unwrap();
        assert!(r.tag_output && r.oversubscribe);
        assert_eq!(r.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(
            r.export,
            vec![("A".into(), Some("1".into())), ("B".into(), None)]
        );
        assert_eq!(r.bind, Bind::None);
        // Everything after the program is the program's, options included.
        assert_eq!(r.program_args, ["-n", "9", "--x"].map(OsString::from));
        let r =
            p("-H a,b:2 --hosts c -n 1 --launch-agent rsh --hub h:1 --hub-listen 0.0.0.0:0 prog")
                .unwrap();
        let hs = |v: &[(&str, Option<u32>)]| {
            v.iter()
                .map(|&(n, slots)| HostSlots {
                    name: n.into(),
                    slots,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(r.hosts, hs(&[("a", None), ("b", Some(2)), ("c", None)]));
        assert_eq!(r.launch_agent.as_deref(), Some("rsh"));
        assert_eq!(r.hub.as_deref(), Some("h:1"));
        assert_eq!(r.hub_listen.as_deref(), Some("0.0.0.0:0"));
    }

    #[test]
    fn errors_name_the_option() {
        let e = p("-n 2 --mca btl self prog").unwrap_err().to_string();
        assert!(e.contains("`--mca`"), "{e}");
        let e = p("-n 2 -npernode 1 prog").unwrap_err().to_string();
        assert!(e.contains("`-npernode`"), "{e}");
        for (line, word) in [
            ("-n 0 prog", "-n 0"),
            ("-n x prog", "-n x"),
            ("prog", "-n N"),
            ("-n 2", "no program"),
            ("-n 2 --timeout -1 prog", "--timeout -1"),
            ("-n 2 --bind-to socket prog", "--bind-to socket"),
            ("-n 2 --map-by node prog", "--map-by node"),
            ("-n 2 -x 1=a prog", "-x 1=a"),
            ("-n", "`-n` needs"),
            ("-n 2 -H a:0 prog", "a:0"),
            ("-n 2 -H a:x prog", "a:x"),
            (
                "-n 2 --launch-agent= prog",
                "`--launch-agent` needs a command",
            ),
        ] {
            let e = p(line).unwrap_err().to_string();
            assert!(e.contains(word), "{line}: {e}");
        }
    }

    #[test]
    fn timeout_from_the_environment() {
        let args = || ["-n", "1", "prog"].map(OsString::from).to_vec();
        let Parsed::Run(r) = parse(args(), |k| {
            (k == "MPIEXEC_TIMEOUT").then(|| "7".to_string())
        })
        .unwrap() else {
            panic!("not a run")
        };
        assert_eq!(r.timeout, Some(Duration::from_secs(7)));
        assert!(parse(args(), |_| Some("soon".into())).is_err());
    }

    #[test]
    fn a_host_job_is_its_first_argument_only() {
        let host_job = parse(vec!["--host-job".into()], |_| None).unwrap();
        assert!(matches!(host_job, Parsed::HostJob));
        // After other options it is an unknown one, as any other.
        assert!(p("-n 1 --host-job prog").is_err());
    }

    #[test]
    fn hostfile_lines() {
        let hosts = hostfile("# nodes\nn1 slots=4\n\n  n2:2 max_slots=8 # big\nn3\n").unwrap();
        let got: Vec<_> = hosts.iter().map(|h| (h.name.as_str(), h.slots)).collect();
        assert_eq!(got, [("n1", Some(4)), ("n2", Some(2)), ("n3", None)]);
        assert!(hostfile("n1 slots=0\n").is_err());
    }
}
