"""Shared helpers of the memchan Python tests: unique cluster names, peer processes
(tests/peer.py, each a real process joining a real cluster), and cleanup of this
test's shared-memory objects."""

import gc
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

PEER = Path(__file__).with_name("peer.py")
# A safety net against a hung peer, never a speed bound: a healthy run takes a
# fraction of it, and a test that hits it fails naming the peer.
PEER_DEADLINE = 300
_count = itertools.count()


@pytest.fixture
def cluster_name():
    """A cluster name of this test alone; its /dev/shm objects go afterwards."""
    name = f"py{os.getpid()}-{next(_count)}"
    yield name
    # A failed `pytest.raises` keeps a test's frame (and its nodes) in a reference
    # cycle; collecting it drops them, so their own cleanup runs first.
    gc.collect()
    for f in Path("/dev/shm").glob(f"memchan.{name}.*"):
        f.unlink(missing_ok=True)


class Peer:
    """A peer process running one role of tests/peer.py; reads its lines on demand."""

    def __init__(self, role, *args, env=None):
        self.role = role
        self.proc = subprocess.Popen(
            [sys.executable, str(PEER), role, *map(str, args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )

    def line(self):
        """The peer's next line of output (blocks until it prints one)."""
        got = self.proc.stdout.readline()
        if not got:
            self.finish()  # raises with the peer's stderr
        return got.strip()

    def send(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def finish(self):
        """Waits for the peer; fails the test with its stderr unless it exited 0."""
        try:
            out, err = self.proc.communicate(timeout=PEER_DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            pytest.fail(f"peer {self.role} did not finish: {err}")
        assert self.proc.returncode == 0, f"peer {self.role} exited {self.proc.returncode}: {err}"
        return out

    def kill(self):
        self.proc.kill()
        self.proc.communicate()


@pytest.fixture
def peers():
    """Starts peers (`peers(role, *args)`); any left running are killed at the end."""
    started = []

    def start(role, *args, env=None):
        p = Peer(role, *args, env=env)
        started.append(p)
        return p

    yield start
    for p in started:
        if p.proc.poll() is None:
            p.kill()
