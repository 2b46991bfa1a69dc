//! Sample statistics: median (interpolated inside a run of tied, quantised
//! samples), 99th percentile and mean.
//!
//! The time-stamp counter on some machines (this one: AMD EPYC under KVM)
//! advances in steps of 10 ns, so per-iteration samples are quantised: a
//! plain median would jump between grid points from run to run. When the
//! median falls inside a block of equal samples, the block is spread uniformly
//! over one grid step centred on its value (the grouped-data median); with
//! unquantised samples this is the plain median.

use serde::Serialize;

/// Summary of one series of samples.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Summary {
    pub median: f64,
    pub p99: f64,
    pub p1: f64,
    pub mean: f64,
    pub min: f64,
    pub n: usize,
}

/// Summarises `samples` (any order; must not be empty).
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(Summary {
        median: interpolated_median(&v),
        p99: percentile(&v, 0.99),
        p1: percentile(&v, 0.01),
        mean: v.iter().sum::<f64>() / n as f64,
        min: v[0],
        n,
    })
}

/// Nearest-rank percentile of sorted data, `q` in [0, 1].
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let idx = (q * (n - 1) as f64).round() as usize;
    sorted[idx.min(n - 1)]
}

/// Median of sorted data, interpolated within a block of ties.
pub fn interpolated_median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    let r = (n - 1) as f64 / 2.0;
    let m = sorted[n / 2];
    let plain = if n % 2 == 1 {
        m
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    // The tie block [lo, hi) holding the median value.
    let lo = sorted.partition_point(|&x| x < m);
    let hi = sorted.partition_point(|&x| x <= m);
    if hi - lo < 2 || (r as usize) < lo {
        return plain;
    }
    // Grid step: distance to the nearest distinct neighbour.
    let below = lo.checked_sub(1).map(|i| m - sorted[i]);
    let above = sorted.get(hi).map(|&x| x - m);
    let w = match (below, above) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => return plain,
    };
    if w.is_nan() || w <= 0.0 {
        return plain;
    }
    m - w / 2.0 + w * (r - lo as f64 + 0.5) / (hi - lo) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_median_without_ties() {
        let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.median, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.n, 5);
    }

    #[test]
    fn ties_are_spread_over_one_step() {
        // 10 samples at 80, 30 at 85, 10 at 90: the median is the centre of
        // the 85 block, (n-1)/2 = 24.5 -> rank 14.5 of 30 inside the block.
        let mut v = vec![80.0; 10];
        v.extend(vec![85.0; 30]);
        v.extend(vec![90.0; 10]);
        let m = summarize(&v).unwrap().median;
        assert!((m - 85.0).abs() < 0.01, "{m}");
        // Skewed towards the lower neighbour: median moves down.
        let mut v = vec![80.0; 24];
        v.extend(vec![85.0; 20]);
        v.extend(vec![90.0; 6]);
        let m = summarize(&v).unwrap().median;
        assert!(m < 85.0 && m > 82.5, "{m}");
    }

    #[test]
    fn p99_is_tail() {
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        let s = summarize(&v).unwrap();
        assert!((s.p99 - 990.0).abs() <= 1.0);
        assert!((s.p1 - 11.0).abs() <= 1.0);
    }
}
