"""Point 6 of issue 14 for Python: every Rust error reaches Python as a subclass of
memchan.Error that names the problem and carries the Rust error's stable code, and
a refused call changes nothing."""

import contextlib
import threading

import pytest

import memchan


@pytest.fixture
def pair(cluster_name):
    a = memchan.Cluster.join(cluster_name)
    b = memchan.Cluster.join(cluster_name)
    yield a, b
    b.leave()
    a.leave()


@contextlib.contextmanager
def raised(cls, code, *words):
    """Expects `cls` with `code`, its message naming each of `words`."""
    with pytest.raises(cls) as info:
        yield info
    e = info.value
    assert isinstance(e, memchan.Error)
    assert e.code == code, (e.code, e.message)
    assert e.message == str(e)
    for w in words:
        assert w in e.message, (w, e.message)


def test_out_of_bounds_write_names_segment_and_offset_and_deposits_nothing(pair):
    a, b = pair
    rx = b.segment("box", 4096).map_rx()
    tx = a.segment("box", 4096).map_tx(b.node_id)
    with raised(memchan.OutOfBoundsError, 1, "box", "4090", "4096 bytes"):
        tx.write(4090, b"0123456789")
    with raised(memchan.OutOfBoundsError, 1, "box"):
        tx.write_u64(4096, 1)
    with raised(memchan.OutOfBoundsError, 1, "box"):
        rx.load_u64(4096)
    with raised(memchan.OutOfBoundsError, 1, "4096"):
        tx.put_indexed(4, [0, 4096], b"\0" * 8)
    a.ack()
    assert bytes(memoryview(rx)) == bytes(4096)  # nothing landed, not even part


def test_unaligned_and_bad_shape(pair):
    a, b = pair
    b.segment("w", 4096).map_rx()
    tx = a.segment("w", 4096).map_tx(b.node_id)
    with raised(memchan.UnalignedError, 2, "offset 3", "`w`"):
        tx.write_u64(3, 1)
    with raised(memchan.BadShapeError, 26, "`w`"):
        tx.put_strided(b"", elem=0, count=1, src_stride=8, dst_stride=8, offset=0)


def test_unmapped_unknown_and_freed_segments(pair):
    a, b = pair
    seg = b.segment("only-tx", 4096)  # b maps it, but not rx
    with raised(memchan.NotMappedError, 23, "only-tx", f"node {b.node_id}"):
        a.segment("only-tx", 4096).rma().get_u64(b.node_id, 0)
    closed = b.segment("closed", 4096).map_rx()  # mapped, but remote_read is off
    with raised(memchan.RemoteReadOffError, 22, "closed", "remote_read"):
        a.segment("closed", 4096).rma().get_u64(b.node_id, 0)
    del closed
    with raised(memchan.UnknownSegmentError, 7, "never-made"):
        a.open_segment("never-made")
    with raised(memchan.SegmentSizeMismatchError, 8, "only-tx"):
        a.segment("only-tx", 8192)
    seg.free()
    with raised(memchan.SegmentFreedError, 5, "only-tx"):
        seg.map_rx()


def test_bad_node_ids(pair):
    a, b = pair
    seg = a.segment("s", 4096)
    with raised(memchan.UnknownNodeError, 9, "node 200"):
        seg.map_tx(200)
    for bad in (70000, -1):
        with raised(memchan.InvalidError, 11, "node id", str(bad)):
            seg.map_tx(bad)
    with raised(memchan.UnknownNodeError, 9, "node 77"):
        seg.rma().get_u64(77, 0)
    with raised(memchan.UnknownNodeError, 9):
        a.create_group("g", [a.node_id, 150])
    with raised(memchan.InvalidError, 11, "destination"):
        seg.map_tx("everyone")


def test_bad_arguments_the_binding_refuses(pair, cluster_name):
    a, b = pair
    rx = b.segment("s", 4096).map_rx()
    with raised(memchan.InvalidError, 11, "offset", "-8"):
        rx.load_u64(-8)
    with raised(memchan.InvalidError, 11, "comparison", "about"):
        rx.wait_until_u64(0, "about", 1, timeout=0)
    with raised(memchan.InvalidError, 11, "timeout"):
        rx.wait(timeout=-1)
    with raised(memchan.InvalidError, 11, "page size", "1000"):
        memchan.Cluster.join(cluster_name, page_size=1000)
    with raised(memchan.PageSizeMismatchError, 14, "4096", "8192"):
        memchan.Cluster.join(cluster_name, page_size=8192)
    with raised(memchan.InvalidError, 11, "segment name"):
        a.segment("_reserved", 4096)
    with raised(memchan.UnknownGroupError, 10, "nope"):
        a.group("nope")
    with raised(memchan.TimeoutError, 16):
        a.wait_for_members(5, 0.05)
    lock = a.lock("l")
    with raised(memchan.InvalidError, 11, "does not hold"):
        lock.release()
    with lock:
        with raised(memchan.InvalidError, 11, "holds the lock already"):
            lock.acquire()
    with raised(memchan.UnsupportedError, 19, "not offered"):
        a.hosted_hub_addr()
    with raised(memchan.InvalidError, 11, "hub address", "at most two rails"):
        memchan.Cluster.join(cluster_name, hub="a:1,b:1,c:1")
    with raised(memchan.InvalidError, 11, "hub address", "a rail without an address"):
        memchan.Cluster.join(cluster_name, hub="a:1,")


def test_message_passing_errors(pair):
    a, b = pair
    made = []
    t = threading.Thread(target=lambda: made.append(memchan.Comm(b, "e")))
    t.start()
    ca = memchan.Comm(a, "e")
    t.join()
    cb = made[0]
    ca.send(b.node_id, b"x" * 100, tag=3)
    with raised(memchan.TruncatedError, 101, "100 bytes", "10-byte"):
        cb.recv(max_len=10)
    assert cb.recv(max_len=100).data == b"x" * 100  # it stayed queued
    with raised(memchan.InvalidError, 103):
        ca.send(99, b"to nobody")
    r = ca.isend(b.node_id, b"once")
    ca.wait(r)
    with raised(memchan.UnknownRequestError, 105):
        ca.wait(r)
    cb.recv()
    ca.close()
    with raised(memchan.InvalidError, 11, "closed"):
        ca.send(b.node_id, b"late")


def test_a_left_cluster_handle(cluster_name):
    c = memchan.Cluster.join(cluster_name)
    c.leave()
    with raised(memchan.InvalidError, 11, "left the cluster"):
        c.members()


def test_every_exception_is_a_memchan_error():
    names = [n for n in memchan.__all__ if n.endswith("Error")]
    assert len(names) == 30
    for n in names:
        assert issubclass(getattr(memchan, n), memchan.Error), n
    assert issubclass(memchan.Error, Exception)
