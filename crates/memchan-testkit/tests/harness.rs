//! The process harness itself (`memchan_testkit::harness`): a worker is this test binary
//! re-executed with its role and arguments, its lines are read with a hang guard, and
//! one that exits early is told apart from one that is slow.

use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use memchan_testkit::harness::{args, field, Worker};

/// Hang guard for every wait on a worker: only a broken harness comes near it.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// Worker entry (see `memchan_testkit::harness`). Ignored so it never runs as a test
/// of its own.
#[test]
#[ignore = "entry point for worker processes"]
fn worker() {
    let a = args();
    match std::env::var("MEMCHAN_ROLE")
        .expect("MEMCHAN_ROLE")
        .as_str()
    {
        // Echoes its arguments, then two result lines, then exits.
        "echo" => {
            println!("ARGS {}", a.join(" "));
            println!("SECOND b=2");
            println!("FIRST a=1");
        }
        // Exits without printing.
        "silent" => {}
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn a_worker_gets_its_role_and_arguments_and_its_lines_are_read() {
    let mut w = Worker::spawn("echo", &["x".into(), "y".into()]);
    assert_eq!(w.expect_line("ARGS", HANG_GUARD), "x y");
    // Either order; what follows each prefix, in the order asked for.
    let got = w.expect_lines(&["FIRST", "SECOND"], HANG_GUARD);
    assert_eq!(field(&got[0], "a"), 1);
    assert_eq!(field(&got[1], "b"), 2);
    w.finish(HANG_GUARD);
}

#[test]
fn a_worker_that_exits_first_is_disconnected_not_timed_out() {
    let mut w = Worker::spawn("silent", &[]);
    assert_eq!(
        w.poll_line("NEVER", HANG_GUARD),
        Err(RecvTimeoutError::Disconnected)
    );
    w.finish(HANG_GUARD);
}

#[test]
fn field_reads_key_value_pairs() {
    assert_eq!(field("node=3 epoch=12 at=99", "epoch"), 12);
    assert_eq!(field("x=1 xy=2", "xy"), 2);
}
