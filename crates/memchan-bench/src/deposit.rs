//! Deposit figures (issue 12): strided deposit per stride against a local strided
//! copy of the same shape in the same run (seed 002's T3D measurement: contiguous
//! loads, strided stores of 8-byte words, strides 1..64), and put with signal, a
//! ping-pong of `put_signal` + `wait_until`. Both on one host, in this process: two
//! nodes, the measuring threads pinned to the bench's two cores.

use std::time::Instant;

use anyhow::{Context, Result};
use memchan::{Cluster, Cmp, Dest, Shape, SignalOp, TxAttrs};
use serde_json::{json, Map, Value};

use super::model::Config;
use super::stats;
use super::table::{Cmp as Dir, Table, Target};
use super::worker::pin;

/// The strides measured (in 8-byte words).
pub const STRIDES: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Each stride's figure key.
const KEYS: [&str; 7] = [
    "strided_gbps_s1",
    "strided_gbps_s2",
    "strided_gbps_s4",
    "strided_gbps_s8",
    "strided_gbps_s16",
    "strided_gbps_s32",
    "strided_gbps_s64",
];
/// Words per strided transfer: 128 KiB of payload, up to 8 MiB of target span, so
/// the working set is well past the caches at the large strides.
const WORDS: usize = 16 * 1024;
/// Round trips per put-with-signal sample.
const PER_SAMPLE: u64 = 100;

/// The deposit tables, measured `cfg.rounds` times (alternating which side goes
/// first), or why not.
pub fn tables(cfg: &Config) -> Result<Vec<Table>> {
    let name = format!("bench-deposit-{}", std::process::id());
    let a = Cluster::join(&name).context("joining the bench cluster")?;
    let b = Cluster::join(&name).context("joining the bench cluster")?;
    let mut t = strided(cfg, &a, &b)?;
    t.push(put_signal(cfg, &a, &b)?);
    Ok(t)
}

fn strided(cfg: &Config, a: &Cluster, b: &Cluster) -> Result<Vec<Table>> {
    let span = WORDS * 8 * STRIDES[STRIDES.len() - 1];
    let _rx = b.segment("strided", span, 0o600)?.map_rx()?;
    let tx = a
        .segment("strided", span, 0o600)?
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    let reps = if cfg.quick { 10 } else { 100 };
    let cpu = cfg.cpus.0;
    // (local, memchan) GB/s samples per stride.
    let samples = std::thread::scope(|s| {
        s.spawn(move || -> Result<Vec<(Vec<f64>, Vec<f64>)>> {
            pin(cpu)?;
            let src: Vec<u64> = (0..WORDS as u64).collect();
            let bytes: Vec<u8> = src.iter().flat_map(|w| w.to_ne_bytes()).collect();
            let mut local = vec![0u64; span / 8];
            let mut out = vec![(Vec::new(), Vec::new()); STRIDES.len()];
            for round in 0..cfg.rounds {
                for (i, &stride) in STRIDES.iter().enumerate() {
                    let shape = Shape {
                        elem: 8,
                        count: WORDS,
                        src_stride: 8,
                        dst_stride: 8 * stride,
                        offset: 0,
                    };
                    // Warm: the pages are touched and the lines of the pattern seen.
                    tx.put_strided(&shape, &bytes)?;
                    local_copy(&mut local, &src, stride);
                    for side in [round % 2, 1 - round % 2] {
                        for _ in 0..reps {
                            let t0 = Instant::now();
                            if side == 0 {
                                local_copy(&mut local, &src, stride);
                            } else {
                                tx.put_strided(&shape, &bytes)?;
                            }
                            let gbps = (WORDS * 8) as f64 / t0.elapsed().as_nanos().max(1) as f64;
                            if side == 0 {
                                out[i].0.push(gbps);
                            } else {
                                out[i].1.push(gbps);
                            }
                        }
                    }
                }
            }
            std::hint::black_box(&local);
            Ok(out)
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the strided measurement thread panicked"))?
    })?;
    Ok(samples
        .into_iter()
        .enumerate()
        .map(|(i, (l, m))| {
            let row = |v: &[f64]| {
                stats::summarize(v)
                    .map(|s| (s.median, s.p1, s.n))
                    .ok_or_else(|| "no samples".to_string())
            };
            let mut t = Table::new(
                KEYS[i],
                format!(
                    "strided deposit, {WORDS} 8-byte words at stride {} (contiguous loads, strided stores), one host",
                    STRIDES[i]
                ),
                "GB/s",
                Some("local_copy"),
                Some(Target {
                    subject: "memchan",
                    cmp: Dir::AtLeast,
                    factor: 0.8,
                }),
                [("local_copy", row(&l)), ("memchan", row(&m))],
            );
            if i == 0 {
                t.notes.push(
                    "local_copy: the same shape copied into local memory by the same thread, same run; \
                     memchan: put_strided by direct deposit (each element one packet); p99 = 1st percentile of GB/s"
                        .into(),
                );
            }
            t
        })
        .collect())
}

/// `dst[i * stride] = src[i]`: the local copy of the strided shape.
#[inline(never)]
fn local_copy(dst: &mut [u64], src: &[u64], stride: usize) {
    for (i, &w) in src.iter().enumerate() {
        dst[i * stride] = w;
    }
    std::hint::black_box(&dst);
}

fn put_signal(cfg: &Config, a: &Cluster, b: &Cluster) -> Result<Table> {
    let seg = |c: &Cluster, to: &Cluster| -> Result<_> {
        let s = c.segment("signal", 4096, 0o600)?;
        Ok((
            s.map_rx()?,
            s.map_tx(Dest::Node(to.node_id()), TxAttrs::default()),
        ))
    };
    let (rx_a, tx_a) = seg(a, b)?;
    let (rx_b, tx_b) = seg(b, a)?;
    let (tx_a, tx_b) = (tx_a?, tx_b?);
    let iters = (cfg.iters / PER_SAMPLE).max(10) * PER_SAMPLE;
    let (p, q) = cfg.cpus;
    let data = [7u8; 8];
    let samples = std::thread::scope(|s| -> Result<Vec<f64>> {
        let pong = s.spawn(move || -> Result<()> {
            pin(q)?;
            for k in 1..=iters {
                rx_b.wait_until_u64(0, Cmp::Ge, k, None)?;
                tx_b.put_signal(64, &data, 0, SignalOp::Add, 1)?;
            }
            Ok(())
        });
        let ping = s.spawn(move || -> Result<Vec<f64>> {
            pin(p)?;
            let mut out = Vec::new();
            let mut t0 = Instant::now();
            for k in 1..=iters {
                tx_a.put_signal(64, &data, 0, SignalOp::Add, 1)?;
                rx_a.wait_until_u64(0, Cmp::Ge, k, None)?;
                if k % PER_SAMPLE == 0 {
                    let ns = t0.elapsed().as_nanos() as f64;
                    out.push(ns / PER_SAMPLE as f64 / 2.0);
                    t0 = Instant::now();
                }
            }
            Ok(out)
        });
        let out = ping
            .join()
            .map_err(|_| anyhow::anyhow!("ping thread panicked"))??;
        pong.join()
            .map_err(|_| anyhow::anyhow!("pong thread panicked"))??;
        Ok(out)
    })?;
    let s = stats::summarize(&samples).context("no put_signal samples")?;
    let mut t = Table::new(
        "put_signal_ns",
        format!("put with signal, 8 bytes + signal add -> the reader's wait_until returns (ping-pong, cpu {p} <-> cpu {q}, round trip / 2)"),
        "ns",
        None,
        None,
        [("memchan", Ok((s.median, s.p99, s.n)))],
    );
    t.notes.push(format!(
        "oshmem: no peer, Open MPI's OSHMEM here implements OpenSHMEM 1.4, whose shmem.h has no \
         shmem_put_signal / shmem_signal_wait_until; samples are means of {PER_SAMPLE} round trips"
    ));
    Ok(t)
}

/// Adds the per-stride figures gathered under one key to the report's JSON, as
/// `bandwidth_sweep_gbps` is: `figures.strided_gbps = {"1": {"local_copy": x,
/// "memchan": y}, ...}` (each stride's table is also under its own key).
pub fn add_sweep_json(report: &mut Value, tables: &[Table]) {
    let mut sweep = Map::new();
    for (key, stride) in KEYS.iter().zip(STRIDES) {
        let Some(t) = tables.iter().find(|t| t.key == *key) else {
            continue;
        };
        let mut row = Map::new();
        for r in &t.rows {
            if let Ok((m, _, _)) = r.value {
                row.insert(r.name.into(), json!(m));
            }
        }
        sweep.insert(stride.to_string(), Value::Object(row));
    }
    if sweep.is_empty() {
        return;
    }
    if let Some(f) = report["figures"].as_object_mut() {
        f.insert("strided_gbps".into(), Value::Object(sweep));
    }
    if let Some(u) = report["units"].as_object_mut() {
        u.insert("strided_gbps".into(), json!("GB/s"));
    }
}
