"""memchan from Python across real processes on one host (shared memory) and through
a hub: a numpy array exchanged by deposit and message passing, atomics and the
cluster lock under contention, membership events of a process that leaves and of
one that is killed."""

import numpy as np

import memchan


def test_two_processes_exchange_a_numpy_array(cluster_name, peers):
    n = 1000
    c = memchan.Cluster.join(cluster_name)
    reader = peers("numpy_reader", cluster_name, n)
    c.wait_for_members(2, 120)
    (other,) = [m for m in c.members() if m != c.node_id]
    comm = memchan.Comm(c, "arrays")
    seg = c.segment("arrays", 64 + 8 * n)
    c.barrier()  # the reader's rx mapping exists
    tx = seg.map_tx(other)
    a = np.linspace(0.0, 1.0, n)
    tx.put_signal(64, a, 0, 1)  # data, then the signal word the reader waits on
    back = np.empty(n)
    st = comm.recv_into(back, source=other, tag=5)
    assert (st.source, st.tag, st.len) == (other, 5, 8 * n)
    assert np.array_equal(back, a * 2)
    c.barrier()
    b = -a
    tx.put_signal(64, b, 0, 2)
    st = comm.recv(source=other, tag=6)
    assert np.array_equal(np.frombuffer(st.data, dtype=np.float64), b)
    c.barrier()
    assert reader.finish().split() == ["ok"]
    comm.close()
    c.leave()


def test_atomics_and_lock_under_contention(cluster_name, peers):
    rounds = 200
    c = memchan.Cluster.join(cluster_name)
    rx = c.segment("counter", 4096).map_rx(remote_read=True)
    workers = [peers("counter", cluster_name, rounds, c.node_id, 3) for _ in range(2)]
    c.wait_for_members(3, 120)
    c.barrier()  # start
    c.barrier()  # both done
    assert rx.load_u64(0) == 2 * rounds  # fetch-add
    assert rx.load_u64(8) == 2 * rounds  # get + set under the lock: no lost update
    for w in workers:
        assert w.finish().split() == ["ok"]
    c.leave()


def next_event_of(c, node):
    """The next membership event about `node` (others skipped)."""
    while True:
        ev = c.next_event(timeout=120)
        assert ev is not None, f"no event about node {node}"
        if ev.node == node:
            return ev


def test_membership_events_of_a_leaving_and_a_killed_process(cluster_name, peers):
    c = memchan.Cluster.join(cluster_name, heartbeat=0.02, failure_timeout=0.2)
    first = peers("member", cluster_name)
    node = int(first.line())
    ev = next_event_of(c, node)
    assert ev.kind == "joined"
    first.send("leave")
    assert first.line() == "left"
    ev = next_event_of(c, node)
    assert ev.kind == "left"
    first.finish()

    second = peers("member", cluster_name)
    node = int(second.line())
    joined = next_event_of(c, node)
    assert joined.kind == "joined"
    second.kill()  # SIGKILL: no leave, the cluster must notice
    failed = next_event_of(c, node)
    assert failed.kind == "failed" and failed.epoch > joined.epoch
    assert node not in c.members()
    c.leave()


def test_through_a_hub(cluster_name, peers):
    c = memchan.Cluster.join(cluster_name, host_hub="127.0.0.1:0")
    assert c.transport == "hub"
    other = peers("hub_node", cluster_name, c.hosted_hub_addr())
    c.wait_for_members(2, 120)
    (node,) = [m for m in c.members() if m != c.node_id]
    seg = c.segment("board", 4096)
    rx = seg.map_rx()
    c.barrier()  # the other node's rx mapping exists
    tx = seg.map_tx(node)
    tx.write_u64(0, 77)
    c.ack()
    c.barrier()  # it wrote back
    assert rx.read(16, 17) == b"from the hub node"
    assert seg.rma().get_u64(node, 0) == 77  # its copy, served by its link side
    c.barrier()
    assert other.finish().split() == ["ok"]
    c.leave()
