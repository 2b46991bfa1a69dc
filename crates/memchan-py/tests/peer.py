"""The other process of the memchan Python tests: `python peer.py ROLE CLUSTER ...`.
Each role joins the cluster as its own node, does its half of a test, prints what
the test reads, and exits 0 (an assertion or memchan error exits non-zero with the
traceback on stderr)."""

import sys

import numpy as np

import memchan


def say(*words):
    print(*words, flush=True)


def numpy_reader(name, n):
    """Receives a float64 array by direct deposit (put with signal), reads it through a
    zero-copy numpy view, and sends it back doubled by message passing."""
    n = int(n)
    c = memchan.Cluster.join(name)
    c.wait_for_members(2, 120)
    comm = memchan.Comm(c, "arrays")
    rx = c.segment("arrays", 64 + 8 * n).map_rx()
    view = np.frombuffer(rx, dtype=np.float64, count=n, offset=64)
    assert not view.flags.writeable and np.shares_memory(view, np.frombuffer(rx, np.uint8))
    c.barrier()  # the writer maps tx once this rx mapping exists
    # The signal word lands after the data: once it reads 1, the array is whole.
    assert rx.wait_until_u64(0, "ge", 1, timeout=120) == 1
    (writer,) = [m for m in c.members() if m != c.node_id]
    comm.send(writer, view * 2, tag=5)
    comm.finish()
    c.barrier()  # the writer changes the array in place now
    assert rx.wait_until_u64(0, "ge", 2, timeout=120) == 2
    # The same view, not re-read: it follows the receive memory.
    comm.send(writer, view.copy(), tag=6)
    comm.finish()
    c.barrier()
    say("ok")


def counter(name, rounds, owner, members):
    """Increments the owner's counters: word 0 with fetch-add, word 8 with a plain get
    and set under the cluster lock (lost updates there if the lock let two in)."""
    rounds, owner = int(rounds), int(owner)
    c = memchan.Cluster.join(name)
    # Every node is a member before the first barrier, so each barrier has them all.
    c.wait_for_members(int(members), 120)
    rma = c.segment("counter", 4096).rma()
    lock = c.lock("counter")
    c.barrier()  # start
    for _ in range(rounds):
        rma.fetch_add_u64(owner, 0, 1)
        with lock:
            v = rma.get_u64(owner, 8)
            rma.set_u64(owner, 8, v + 1)
    c.barrier()  # done
    say("ok")


def member(name):
    """Joins, says its node id, then leaves on a line of stdin (or dies if killed)."""
    c = memchan.Cluster.join(name, heartbeat=0.02, failure_timeout=0.2)
    say(c.node_id)
    sys.stdin.readline()
    c.leave()
    say("left")


def hub_node(name, addr):
    """Joins through the hub at `addr`, receives a word and serves a remote get."""
    c = memchan.Cluster.join(name, hub=addr)
    assert c.transport == "hub"
    rx = c.segment("board", 4096).map_rx(remote_read=True)
    c.barrier()  # the host maps tx
    assert rx.wait_until_u64(0, "eq", 77, timeout=120) == 77
    (host,) = [m for m in c.members() if m != c.node_id]
    tx = c.segment("board", 4096).map_tx(host)
    tx.write(16, b"from the hub node")
    c.ack()
    c.barrier()  # the host reads it, and gets from this node's copy
    c.barrier()
    say("ok")


if __name__ == "__main__":
    role, *args = sys.argv[1:]
    {"numpy_reader": numpy_reader, "counter": counter, "member": member, "hub_node": hub_node}[role](*args)
