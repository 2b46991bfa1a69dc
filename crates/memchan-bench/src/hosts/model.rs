//! The shared data of `memchan bench --hosts`: sizes, figure ids, and the run
//! parameters and facts the host report reads. A leaf: the
//! coordinator (`hosts/mod.rs`), the measurements and `tables.rs` use it, and it
//! imports none of them.

use std::collections::BTreeMap;

/// One mebibyte: the write size of the bandwidth figures.
pub const MIB: usize = 1 << 20;
/// The `write_all` size of `tcp_raw_64k` (the size of memchan's frames).
pub const CHUNK_64K: usize = 64 << 10;

/// Figure ids inside the bench (the JSON keys are built in [`tables`]).
pub const FIG_LATENCY: &str = "net_latency";
/// Samples: ns per window of `window_mib` MiB.
pub const FIG_BANDWIDTH: &str = "net_bandwidth";

/// Run parameters of the host figures.
#[derive(Debug, Clone)]
pub struct Params {
    pub rounds: usize,
    pub quick: bool,
    pub cpus: (usize, usize),
    /// Round trips per latency measurement, and untimed warm-up ones.
    pub iters: u64,
    pub warmup: u64,
    /// Timed bandwidth windows per measurement, and warm-up windows.
    pub bw_windows: u64,
    pub bw_warmup: u64,
    pub window_mib: usize,
}

/// What the report needs to know about the run besides the samples.
#[derive(Debug)]
pub struct HostInfo {
    pub tsc_ghz: f64,
    pub tsc_step_ns: f64,
    /// A, B and the hub's host H.
    pub namespaces: [String; 3],
    /// `Ok` or why memchan / mpi_tcp were not measured.
    pub memchan: Result<(), String>,
    pub mpi: Result<(), String>,
    pub mpi_version: Option<String>,
    /// Bytes that crossed the veth per series, one entry per measurement.
    pub veth_bytes: BTreeMap<String, Vec<u64>>,
    pub notes: Vec<String>,
    pub date: String,
    pub elapsed_s: f64,
}

#[cfg(test)]
impl Params {
    /// A small run's parameters for the tables' tests (two rounds, `quick` as given).
    pub fn for_tests(quick: bool) -> Params {
        Params {
            rounds: 2,
            quick,
            cpus: (0, 1),
            iters: 10,
            warmup: 10,
            bw_windows: 3,
            bw_warmup: 1,
            window_mib: 64,
        }
    }
}

#[cfg(test)]
impl HostInfo {
    /// A report's facts for the tables' tests: memchan not measured (the hub
    /// unreachable), Open MPI measured.
    pub fn for_tests() -> HostInfo {
        HostInfo {
            tsc_ghz: 1.0,
            tsc_step_ns: 1.0,
            namespaces: ["mcb1a".into(), "mcb1b".into(), "mcb1h".into()],
            memchan: Err("hub unreachable".into()),
            mpi: Ok(()),
            mpi_version: None,
            veth_bytes: BTreeMap::new(),
            notes: vec![],
            date: "2026-01-01T00:00:00Z".into(),
            elapsed_s: 1.0,
        }
    }
}
