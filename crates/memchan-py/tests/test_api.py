"""The Python API over the Rust one, two nodes in one process for brevity: rx
mappings as zero-copy read-only buffers, writes of any buffer, deposits, the
conditional write, remote reads and atomics, groups, events, lock and clock."""

import ctypes
import threading

import numpy as np
import pytest

import memchan


@pytest.fixture
def pair(cluster_name):
    a = memchan.Cluster.join(cluster_name)
    b = memchan.Cluster.join(cluster_name)
    yield a, b
    b.leave()
    a.leave()


def test_rx_mapping_is_a_read_only_zero_copy_buffer(pair):
    a, b = pair
    rx = b.segment("m", 8192).map_rx()
    tx = a.segment("m", 8192).map_tx(b.node_id)
    mv = memoryview(rx)
    assert mv.readonly and mv.nbytes == len(rx) == 8192
    view = np.frombuffer(rx, dtype=np.uint64)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 1  # read-only: the memory belongs to the cluster's writers
    with pytest.raises(ValueError):
        np.frombuffer(rx, dtype=np.uint8).setflags(write=True)
    with pytest.raises(TypeError, match="not writable"):
        (ctypes.c_char * 8).from_buffer(rx)  # asks the exporter for a writable buffer
    tx.write_u64(16, 0xDEADBEEF)
    a.ack()
    # The view made before the write shows it: no copy was taken.
    assert view[2] == 0xDEADBEEF and mv[16] == 0xEF
    del mv, view


def test_write_takes_any_buffer(pair):
    a, b = pair
    rx = b.segment("m", 4096).map_rx()
    tx = a.segment("m", 4096).map_tx(b.node_id)
    tx.write(0, b"bytes")
    tx.write(8, bytearray(b"array"))
    tx.write(16, memoryview(b"..view..")[2:6])
    tx.write(32, np.array([1.25, -2.5]))
    a.ack()
    assert rx.read(0, 5) == b"bytes" and rx.read(8, 5) == b"array" and rx.read(16, 4) == b"view"
    assert np.frombuffer(rx, np.float64, count=2, offset=32).tolist() == [1.25, -2.5]
    with pytest.raises(ValueError, match="contiguous"):
        tx.write(0, np.arange(8.0)[::2])  # not contiguous: refused, not silently copied


def test_words_loads_and_transmit_enable(pair):
    a, b = pair
    rx = b.segment("w", 4096).map_rx()
    tx = a.segment("w", 4096).map_tx(b.node_id)
    tx.write_u8(1, 0xAB)
    tx.write_u16(2, 0xBEEF)
    tx.write_u32(4, 0xCAFEF00D)
    tx.write_u64(8, 2**64 - 1)
    a.ack()
    assert (rx.load_u8(1), rx.load_u16(2), rx.load_u32(4), rx.load_u64(8)) == (
        0xAB,
        0xBEEF,
        0xCAFEF00D,
        2**64 - 1,
    )
    tx.transmit_enable = False
    with pytest.raises(memchan.TransmitDisabledError):
        tx.write_u64(8, 0)
    tx.transmit_enable = True
    tx.write_u64(8, 0)
    a.ack()
    assert rx.load_u64(8) == 0


def test_strided_indexed_and_conditional_writes(pair):
    a, b = pair
    rx = b.segment("d", 4096).map_rx()
    tx = a.segment("d", 4096).map_tx(b.node_id)
    col = np.array([1, 2, 3, 4], dtype=np.uint64)
    tx.put_strided(col, elem=8, count=4, src_stride=8, dst_stride=32, offset=8)
    tx.put_indexed(4, [400, 1500, 2000], np.array([7, 8, 9], dtype=np.uint32))
    a.ack()
    assert [rx.load_u64(8 + 32 * i) for i in range(4)] == [1, 2, 3, 4]
    assert (rx.load_u32(400), rx.load_u32(1500), rx.load_u32(2000)) == (7, 8, 9)
    assert tx.write_if_u64(1024, 0, 11) == [(b.node_id, "applied")]
    assert tx.write_if_u64(1024, 0, 12) == [(b.node_id, ("held", 11))]
    assert rx.load_u64(1024) == 11


def test_broadcast_group_and_group_barrier(pair):
    a, b = pair
    ra = a.segment("g", 4096).map_rx()
    rb = b.segment("g", 4096).map_rx()
    g = a.create_group("both", [a.node_id, b.node_id])
    assert b.group("both") == g
    to_group = a.segment("g", 4096).map_tx(g)
    to_all = a.segment("g", 4096).map_tx(memchan.BROADCAST, local_copy=True)
    to_group.write_u64(0, 3)  # without local copy: the sender's own memory is not a destination
    to_all.write_u64(8, 4)
    a.ack()
    assert (ra.load_u64(0), rb.load_u64(0), ra.load_u64(8), rb.load_u64(8)) == (0, 3, 4, 4)
    done = []
    t = threading.Thread(target=lambda: done.append(b.barrier(group=g)))
    t.start()
    a.barrier(group=g)
    t.join()
    assert done == [None]


def test_remote_read_and_atomics(pair):
    a, b = pair
    rx = b.segment("c", 4096).map_rx(remote_read=True)
    rma = a.segment("c", 4096).rma()
    n = b.node_id
    assert rma.fetch_add_u64(n, 0, 5) == 0
    assert rma.compare_swap_u64(n, 0, 5, 9) == 5
    assert rma.swap_u64(n, 0, 1) == 9
    assert rma.fetch_or_u64(n, 0, 6) == 1 and rma.fetch_and_u64(n, 0, 3) == 7
    assert rma.fetch_xor_u64(n, 0, 1) == 3 and rma.fetch_u64(n, 0) == 2
    assert rma.set_u64(n, 0, 40) == 2 and rx.load_u64(0) == 40
    assert rma.fetch_add_u32(n, 8, 2) == 0 and rma.compare_swap_u32(n, 8, 2, 3) == 2
    assert rma.get_u32(n, 8) == 3 and rma.fetch_u32(n, 8) == 3
    assert rma.get(n, 0, 8) == (40).to_bytes(8, "little")
    pending = rma.get_nbi(n, 0, 8)
    a.ack()
    assert pending.take() == (40).to_bytes(8, "little")
    with pytest.raises(memchan.InvalidError):
        pending.take()


def test_remap_attrs_events_clock_lock(pair):
    a, b = pair
    page = b.page_size
    rx = b.segment("f", 3 * page).map_rx()
    tx = a.segment("f", 3 * page).map_tx(b.node_id)
    rx.remap_page(0, 2)
    tx.write_u64(8, 5)
    a.ack()
    assert (rx.load_u64(8), rx.load_u64(2 * page + 8)) == (0, 5)
    rx.set_attrs(page, page, notify=True)
    assert rx.attrs(page) == {"receive_enable": True, "notify": True, "remote_read": False}
    ev = a.next_event(timeout=120)
    assert (ev.kind, ev.node) == ("joined", b.node_id)
    assert a.next_event(timeout=0) is None
    t1, t2 = a.global_time(), a.global_time()
    assert t2.ns >= t1.ns and t1.bound_ns > 0
    la, lb = a.lock("x"), b.lock("x")
    with la:
        assert la.held and not lb.try_acquire()
    assert not la.held and lb.try_acquire()
    lb.release()
    seg = a.segment("f", 3 * page)
    assert seg.size == 3 * page and seg.name == "f" and seg.owner()[2] == 0o600


def test_message_passing_nonblocking_and_probe(pair):
    a, b = pair
    made = []
    t = threading.Thread(target=lambda: made.append(memchan.Comm(b, "mp")))
    t.start()
    ca = memchan.Comm(a, "mp")
    t.join()
    cb = made[0]
    assert (ca.rank, cb.ranks()) == (a.node_id, sorted([a.node_id, b.node_id]))
    reqs = [ca.isend(b.node_id, bytes([i]) * (i + 1), tag=i) for i in range(3)]
    assert [s.data for s in ca.wait_all(reqs)] == [None] * 3
    st = cb.probe(tag=2)
    assert (st.source, st.tag, st.len) == (a.node_id, 2, 3)
    assert cb.iprobe(tag=9) is None
    r = cb.irecv(16, tag=1)
    assert r.is_recv
    got = cb.wait(r)
    assert got.data == b"\x01\x01"
    assert cb.recv(tag=0).data == b"\x00" and cb.recv().data == b"\x02\x02\x02"
    # A long synchronous send straight into an rx mapping (zero-copy mode).
    rx = b.segment("landing", 1 << 16).map_rx()
    payload = np.arange(4096, dtype=np.uint64)
    send = threading.Thread(target=lambda: ca.ssend(b.node_id, payload, tag=4))
    send.start()
    st = cb.recv_rx(rx, 0, payload.nbytes, source=a.node_id, tag=4)
    send.join()
    assert st.len == payload.nbytes
    assert np.array_equal(np.frombuffer(rx, np.uint64, count=4096), payload)
    # A non-blocking synchronous send stays pending until a receive matches it;
    # wait_any returns whichever request completed, the other stays pending.
    s = ca.issend(b.node_id, b"sync", tag=5)
    assert ca.test(s) is None
    r6, r5 = cb.irecv(8, tag=6), cb.irecv(8, tag=5)
    i, st = cb.wait_any([r6, r5])
    assert (i, st.tag, st.data) == (1, 5, b"sync")
    assert ca.wait(s).tag == 5
    ca.send(b.node_id, b"six", tag=6)
    assert cb.wait_any([r6])[1].data == b"six"
    ca.finish()
    cb.finish()
