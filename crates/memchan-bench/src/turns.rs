//! Turns: two programs compared with each other are started together and run
//! their timed iterations in [`WINDOWS`] windows that the bench alternates, the
//! side whose turn it is not sleeping in `read()`. Both then meet the same states
//! of the machine: on this VM the core-to-core latency moves between levels from
//! one second to the next, and two runs one after the other can each meet another.
//!
//! Each rank R of a side has two FIFOs in the side's directory: it writes a byte
//! to `done.R` when it is ready and after each window, and reads one from `go.R`
//! before each window. The bench makes and holds both open (read-write) before it
//! starts the program, so the program's opens do not block, and closes them if
//! anything fails: a rank waiting for its turn then reads end of file and exits.
//! The C programs' end is `peer_turns_*` in `peers/peer_common.h`
//! (`PEER_TURNS=DIR`, `PEER_TURN_WINDOWS`); a Rust worker's is [`Window`].

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};

/// Windows per run (`PEER_TURN_WINDOWS` in `peer_common.h`).
pub const WINDOWS: usize = 10;

/// Ranks per side.
const RANKS: usize = 2;

/// A running side, as the bench watches it while it waits for the side's window.
pub trait Side {
    /// The side's name in messages.
    fn name(&self) -> &str;
    /// `Some` once the side (one of its processes) has ended.
    fn ended(&mut self) -> Result<Option<ExitStatus>>;
}

/// One side's turn FIFOs, made and held open by the bench.
pub struct Turns {
    dir: PathBuf,
    go: [File; RANKS],
    done: [File; RANKS],
}

impl Turns {
    /// Makes the FIFOs in `dir` (emptied first).
    ///
    /// # Errors
    /// When the directory or a FIFO cannot be made or opened.
    pub fn new(dir: &Path) -> Result<Turns> {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let fifo = |name: String| -> Result<File> {
            let path = dir.join(name);
            rustix::fs::mkfifoat(rustix::fs::CWD, &path, rustix::fs::Mode::from(0o600))
                .with_context(|| format!("making the FIFO {}", path.display()))?;
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .with_context(|| format!("opening {}", path.display()))
        };
        Ok(Turns {
            dir: dir.to_path_buf(),
            go: [fifo("go.0".into())?, fifo("go.1".into())?],
            done: [fifo("done.0".into())?, fifo("done.1".into())?],
        })
    }

    /// The directory the side's program is given.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Waits for a byte from each rank's `done`, while the side lives.
    fn collect(&self, side: &mut dyn Side, deadline: Instant) -> Result<()> {
        use rustix::event::{poll, PollFd, PollFlags};
        for done in &self.done {
            loop {
                // Whether it ended is asked before the FIFO is: a side that wrote its
                // last byte and exited at once has its byte read, not taken for a failure.
                let ended = side.ended()?;
                let mut fds = [PollFd::new(done, PollFlags::IN)];
                let slice = rustix::time::Timespec {
                    tv_sec: 0,
                    tv_nsec: if ended.is_some() { 0 } else { 100_000_000 },
                };
                if poll(&mut fds, Some(&slice)).unwrap_or(0) > 0 {
                    let mut b = [0u8; 1];
                    (&*done).read_exact(&mut b).context("reading a turn FIFO")?;
                    break;
                }
                if let Some(status) = ended {
                    bail!(
                        "{} ended ({status}) while the bench waited for its turn",
                        side.name()
                    );
                }
                ensure!(
                    Instant::now() < deadline,
                    "{} did not finish its window in time",
                    side.name()
                );
            }
        }
        Ok(())
    }

    /// Lets every rank run one window.
    fn go(&self) -> Result<()> {
        for g in &self.go {
            (&*g).write_all(b"g").context("writing a turn FIFO")?;
        }
        Ok(())
    }
}

/// Both sides ready, then their windows in turn, `first` first in the even ones,
/// all within `timeout`; on failure, the index of the side that failed.
///
/// # Errors
/// The failed side's index and why: it ended, or missed the deadline.
pub fn drive(
    turns: &[Turns; 2],
    mut sides: [&mut dyn Side; 2],
    first: usize,
    timeout: Duration,
) -> std::result::Result<(), (usize, anyhow::Error)> {
    let deadline = Instant::now() + timeout;
    for (i, side) in sides.iter_mut().enumerate() {
        turns[i].collect(*side, deadline).map_err(|e| (i, e))?;
    }
    for w in 0..WINDOWS {
        let a = if w % 2 == 0 { first } else { 1 - first };
        for i in [a, 1 - a] {
            turns[i]
                .go()
                .and_then(|()| turns[i].collect(sides[i], deadline))
                .map_err(|e| (i, e))?;
        }
    }
    Ok(())
}

/// [`drive`] against a peer that cannot wait for a turn (`ucx_perftest`): `other(w)`
/// runs that peer's window `w` whole, as a short run of its own, while `side` waits
/// for its next go. `side`'s windows come first in the even ones when `first` is 0.
///
/// # Errors
/// The failed side's index (0: `side`, 1: `other`) and why.
pub fn drive_with(
    turns: &Turns,
    side: &mut dyn Side,
    other: &mut dyn FnMut(usize) -> Result<()>,
    first: usize,
    timeout: Duration,
) -> std::result::Result<(), (usize, anyhow::Error)> {
    let deadline = Instant::now() + timeout;
    turns.collect(side, deadline).map_err(|e| (0, e))?;
    for w in 0..WINDOWS {
        let a = if w % 2 == 0 { first } else { 1 - first };
        for i in [a, 1 - a] {
            if i == 0 {
                turns
                    .go()
                    .and_then(|()| turns.collect(side, deadline))
                    .map_err(|e| (0, e))?;
            } else {
                other(w).map_err(|e| (1, e))?;
            }
        }
    }
    Ok(())
}

/// The result of a side that failed in its turns: its own error (which says more)
/// in the context of `e`, or `e`.
pub fn failed_with<T>(own: Result<T>, e: anyhow::Error) -> Result<T> {
    match own {
        Err(own) => Err(own.context(e)),
        Ok(_) => Err(e),
    }
}

/// A Rust worker's end of the turns: rank `rank` of the side whose FIFOs are in
/// `dir`.
pub struct Window {
    go: File,
    done: File,
}

impl Window {
    /// Opens the rank's FIFOs and says it is ready.
    ///
    /// # Errors
    /// When a FIFO cannot be opened or written.
    pub fn open(dir: &Path, rank: usize) -> Result<Window> {
        let open = |name: String, write: bool| -> Result<File> {
            let path = dir.join(name);
            std::fs::OpenOptions::new()
                .read(!write)
                .write(write)
                .open(&path)
                .with_context(|| format!("opening the turn FIFO {}", path.display()))
        };
        let mut w = Window {
            go: open(format!("go.{rank}"), false)?,
            done: open(format!("done.{rank}"), true)?,
        };
        w.done.write_all(b"r").context("writing a turn FIFO")?;
        Ok(w)
    }

    /// Waits for the bench's go.
    ///
    /// # Errors
    /// When the bench closed the FIFOs (it gave up on the run).
    pub fn begin(&mut self) -> Result<()> {
        let mut b = [0u8; 1];
        self.go
            .read_exact(&mut b)
            .context("waiting for the bench's go (it ended the turns)")
    }

    /// Tells the bench this rank's window is over.
    ///
    /// # Errors
    /// When the bench closed the FIFOs.
    pub fn end(&mut self) -> Result<()> {
        self.done.write_all(b"d").context("writing a turn FIFO")
    }
}

/// The iterations `lo..hi` of window `w` of `windows` over `total`.
pub fn window_range(total: u64, w: usize, windows: usize) -> std::ops::Range<u64> {
    let (w, n) = (w as u64, windows as u64);
    total * w / n..total * (w + 1) / n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_every_iteration_once() {
        for total in [0u64, 1, 9, 10, 11, 1234] {
            let mut next = 0;
            for w in 0..WINDOWS {
                let r = window_range(total, w, WINDOWS);
                assert_eq!(r.start, next, "window {w} of {total}");
                next = r.end;
            }
            assert_eq!(next, total);
        }
    }

    /// A side that is a thread of this test, through the same FIFOs; it counts as
    /// ended (successfully) once the thread has returned.
    struct Thread(String, std::thread::JoinHandle<Result<()>>);

    impl Side for Thread {
        fn name(&self) -> &str {
            &self.0
        }
        fn ended(&mut self) -> Result<Option<ExitStatus>> {
            use std::os::unix::process::ExitStatusExt;
            Ok(self.1.is_finished().then(|| ExitStatus::from_raw(0)))
        }
    }

    #[test]
    fn the_two_sides_windows_alternate() {
        let tmp = std::env::temp_dir().join(format!("memchan-turns-{}", std::process::id()));
        let turns = [
            Turns::new(&tmp.join("a")).unwrap(),
            Turns::new(&tmp.join("b")).unwrap(),
        ];
        // Every window of each rank appends its side to a shared log.
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let spawn = |side: usize| {
            let dir = turns[side].dir().to_path_buf();
            let log = log.clone();
            std::thread::spawn(move || -> Result<()> {
                let mut w = [Window::open(&dir, 0)?, Window::open(&dir, 1)?];
                for _ in 0..WINDOWS {
                    for r in &mut w {
                        r.begin()?;
                    }
                    log.lock().unwrap().push(side);
                    for r in &mut w {
                        r.end()?;
                    }
                }
                Ok(())
            })
        };
        let mut a = Thread("a".into(), spawn(0));
        let mut b = Thread("b".into(), spawn(1));
        drive(&turns, [&mut a, &mut b], 1, Duration::from_secs(60)).unwrap();
        a.1.join().unwrap().unwrap();
        b.1.join().unwrap().unwrap();
        let log = log.lock().unwrap().clone();
        let want: Vec<usize> = (0..WINDOWS)
            .flat_map(|w| if w % 2 == 0 { [1, 0] } else { [0, 1] })
            .collect();
        assert_eq!(log, want);
        let _ = std::fs::remove_dir_all(&tmp);
    }

    /// A side that has exited.
    struct Gone;

    impl Side for Gone {
        fn name(&self) -> &str {
            "gone"
        }
        fn ended(&mut self) -> Result<Option<ExitStatus>> {
            use std::os::unix::process::ExitStatusExt;
            Ok(Some(ExitStatus::from_raw(0)))
        }
    }

    #[test]
    fn a_side_that_exits_right_after_its_last_byte_is_not_a_failure() {
        let tmp = std::env::temp_dir().join(format!("memchan-turns-gone-{}", std::process::id()));
        let turns = Turns::new(&tmp).unwrap();
        // Both ranks said ready, then the side ended.
        let w = [
            Window::open(&tmp, 0).unwrap(),
            Window::open(&tmp, 1).unwrap(),
        ];
        drop(w);
        let deadline = Instant::now() + Duration::from_secs(60);
        turns.collect(&mut Gone, deadline).unwrap();
        // Nothing more will come: now its end is the failure.
        let e = turns.collect(&mut Gone, deadline).unwrap_err();
        assert!(format!("{e:#}").contains("gone ended"), "{e:#}");
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
