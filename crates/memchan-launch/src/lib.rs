//! How a memchan process (a PE) learns its rank and the job's size.
//!
//! `memchan run` (also installed as `oshrun`) starts every PE with the variables named
//! here. A PE started by another launcher finds its rank in that launcher's variables
//! instead: `srun` sets `SLURM_PROCID` / `SLURM_NTASKS`, PMI launchers (Hydra, MPICH's
//! `mpiexec`) `PMI_RANK` / `PMI_SIZE`, Open MPI's `mpirun` `OMPI_COMM_WORLD_RANK` /
//! `OMPI_COMM_WORLD_SIZE`. [`rank_from_env`] reads them in that order of preference.
//!
//! A pure function of a lookup, so that it is tested without touching the process's
//! environment (which is not thread-safe to change).

/// The cluster every PE of one launch joins (a name unique to the launch).
pub const CLUSTER: &str = "MEMCHAN_CLUSTER";
/// This PE's rank, 0..size.
pub const RANK: &str = "MEMCHAN_RANK";
/// The number of PEs in the launch.
pub const SIZE: &str = "MEMCHAN_SIZE";
/// This PE's rank among the PEs of its host.
pub const LOCAL_RANK: &str = "MEMCHAN_LOCAL_RANK";
/// The number of PEs on this PE's host.
pub const LOCAL_SIZE: &str = "MEMCHAN_LOCAL_SIZE";

/// The (rank, size) pairs [`rank_from_env`] consults, most specific first: memchan's
/// own, then Slurm's, PMI's and Open MPI's.
pub const RANK_SOURCES: [(&str, &str); 4] = [
    (RANK, SIZE),
    ("SLURM_PROCID", "SLURM_NTASKS"),
    ("PMI_RANK", "PMI_SIZE"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
];

/// Where a PE stands in its launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rank {
    /// 0..size.
    pub rank: u32,
    /// The number of PEs, at least 1.
    pub size: u32,
}

/// Why the rank variables cannot be used: each names the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RankEnvError {
    /// The rank is set and its size variable is not (or the other way round).
    #[error("{present} is set but {missing} is not")]
    Unpaired {
        present: &'static str,
        missing: &'static str,
    },
    /// A value is not a decimal number that fits in 32 bits.
    #[error("{var}={value:?} is not a number")]
    NotANumber { var: &'static str, value: String },
    /// The size is 0, or the rank is not below it.
    #[error("{rank_var}={rank} is not a rank of {size_var}={size}")]
    OutOfRange {
        rank_var: &'static str,
        rank: u32,
        size_var: &'static str,
        size: u32,
    },
}

/// This PE's rank, from the first pair of [`RANK_SOURCES`] that `lookup` finds set
/// (an empty value counts as unset); `Ok(None)` when no launcher set any. A pair that
/// is set but unusable is an error, not a reason to look further: a PE must not guess
/// a rank that another PE may also have taken.
///
/// ```
/// let env = |k: &str| match k {
///     "SLURM_PROCID" => Some("3".to_string()),
///     "SLURM_NTASKS" => Some("4".to_string()),
///     _ => None,
/// };
/// let r = memchan_launch::rank_from_env(env).unwrap().unwrap();
/// assert_eq!((r.rank, r.size), (3, 4));
/// ```
pub fn rank_from_env(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Option<Rank>, RankEnvError> {
    let get = |k: &str| lookup(k).filter(|v| !v.is_empty());
    for (rank_var, size_var) in RANK_SOURCES {
        let (rank, size) = match (get(rank_var), get(size_var)) {
            (None, None) => continue,
            (Some(r), Some(s)) => (r, s),
            (Some(_), None) => {
                return Err(RankEnvError::Unpaired {
                    present: rank_var,
                    missing: size_var,
                })
            }
            (None, Some(_)) => {
                return Err(RankEnvError::Unpaired {
                    present: size_var,
                    missing: rank_var,
                })
            }
        };
        let rank = number(rank_var, &rank)?;
        let size = number(size_var, &size)?;
        if rank >= size {
            return Err(RankEnvError::OutOfRange {
                rank_var,
                rank,
                size_var,
                size,
            });
        }
        return Ok(Some(Rank { rank, size }));
    }
    Ok(None)
}

fn number(var: &'static str, value: &str) -> Result<u32, RankEnvError> {
    // Digits only: `parse` would take a leading `+`, which no launcher writes.
    if value.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = value.parse() {
            return Ok(n);
        }
    }
    Err(RankEnvError::NotANumber {
        var,
        value: value.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn nothing_set_is_none() {
        assert_eq!(rank_from_env(env(&[("PATH", "/bin")])), Ok(None));
    }

    #[test]
    fn each_launcher_is_read() {
        for (r, s) in RANK_SOURCES {
            let got = rank_from_env(env(&[(r, "2"), (s, "5")])).unwrap();
            assert_eq!(got, Some(Rank { rank: 2, size: 5 }), "{r}/{s}");
        }
    }

    #[test]
    fn memchan_first_then_slurm_then_pmi() {
        let all = [
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "8"),
            ("PMI_RANK", "2"),
            ("PMI_SIZE", "8"),
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "8"),
            ("MEMCHAN_RANK", "0"),
            ("MEMCHAN_SIZE", "8"),
        ];
        for skip in 0..4 {
            // Drop the most specific pairs one by one: the next one decides.
            let got = rank_from_env(env(&all[..8 - 2 * skip])).unwrap().unwrap();
            assert_eq!(got.rank, skip as u32);
        }
    }

    #[test]
    fn empty_counts_as_unset() {
        let got = rank_from_env(env(&[
            ("MEMCHAN_RANK", ""),
            ("MEMCHAN_SIZE", ""),
            ("PMI_RANK", "1"),
            ("PMI_SIZE", "2"),
        ]));
        assert_eq!(got, Ok(Some(Rank { rank: 1, size: 2 })));
    }

    #[test]
    fn bad_values_name_the_variable() {
        assert_eq!(
            rank_from_env(env(&[("SLURM_PROCID", "1")])),
            Err(RankEnvError::Unpaired {
                present: "SLURM_PROCID",
                missing: "SLURM_NTASKS"
            })
        );
        assert_eq!(
            rank_from_env(env(&[("PMI_SIZE", "4")])),
            Err(RankEnvError::Unpaired {
                present: "PMI_SIZE",
                missing: "PMI_RANK"
            })
        );
        for bad in ["x", "-1", "+1", " 1", "4294967296"] {
            let e =
                rank_from_env(env(&[("MEMCHAN_RANK", bad), ("MEMCHAN_SIZE", "4")])).unwrap_err();
            assert_eq!(
                e,
                RankEnvError::NotANumber {
                    var: "MEMCHAN_RANK",
                    value: bad.to_string()
                }
            );
            assert!(e.to_string().contains("MEMCHAN_RANK"), "{e}");
        }
        assert!(matches!(
            rank_from_env(env(&[("MEMCHAN_RANK", "4"), ("MEMCHAN_SIZE", "4")])),
            Err(RankEnvError::OutOfRange {
                rank: 4,
                size: 4,
                ..
            })
        ));
        assert!(matches!(
            rank_from_env(env(&[("MEMCHAN_RANK", "0"), ("MEMCHAN_SIZE", "0")])),
            Err(RankEnvError::OutOfRange { size: 0, .. })
        ));
        // A broken pair is not skipped for a later one.
        assert!(rank_from_env(env(&[
            ("SLURM_PROCID", "9"),
            ("SLURM_NTASKS", "2"),
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "2")
        ]))
        .is_err());
    }
}
