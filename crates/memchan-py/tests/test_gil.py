"""Calls that wait release the GIL: a thread blocked in one of them must let the
main thread run the Python code that ends its wait. Were the GIL held, the main
thread could not run and each wait would end only by its timeout (then the
assertion fails) or never."""

import threading

import numpy as np

import memchan


def in_thread(f):
    """Runs `f` in a thread; returns a function that joins it and returns f's result
    (or raises its exception)."""
    out = {}

    def run():
        try:
            out["value"] = f()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()

    def join():
        t.join()
        if "error" in out:
            raise out["error"]
        return out["value"]

    return join


def test_wait_until_releases_the_gil(cluster_name):
    a = memchan.Cluster.join(cluster_name)
    b = memchan.Cluster.join(cluster_name)
    rx = b.segment("s", 4096).map_rx()
    tx = a.segment("s", 4096).map_tx(b.node_id)
    waiting = threading.Event()

    def wait():
        waiting.set()
        return rx.wait_until_u64(0, "eq", 5, timeout=120)

    done = in_thread(wait)
    waiting.wait()  # the thread is about to block
    tx.put_signal(8, b"payload", 0, 5)  # Python code in the main thread
    assert done() == 5
    assert rx.read(8, 7) == b"payload"


def test_barrier_and_notify_wait_release_the_gil(cluster_name):
    a = memchan.Cluster.join(cluster_name)
    b = memchan.Cluster.join(cluster_name)
    done = in_thread(b.barrier)
    a.barrier()  # the main thread enters while b waits in its barrier
    done()
    rx = b.segment("bell", 4096).map_rx(notify=True)
    tx = a.segment("bell", 4096).map_tx(b.node_id)
    waiting = threading.Event()

    def wait():
        waiting.set()
        return rx.wait(timeout=120)

    rang = in_thread(wait)
    waiting.wait()  # the thread is about to block
    tx.write_u32(0, 1)
    assert rang() is True


def test_lock_acquire_releases_the_gil(cluster_name):
    a = memchan.Cluster.join(cluster_name)
    b = memchan.Cluster.join(cluster_name)
    la, lb = a.lock("l"), b.lock("l")
    la.acquire()
    waiting = threading.Event()

    def take():
        waiting.set()
        lb.acquire()
        return lb.held

    got = in_thread(take)
    waiting.wait()  # the thread is about to block
    la.release()  # from the main thread, while the other waits for the lock
    assert got() is True
    lb.release()


def test_next_event_releases_the_gil(cluster_name):
    a = memchan.Cluster.join(cluster_name)
    waiting = threading.Event()

    def wait():
        waiting.set()
        return a.next_event(timeout=120)

    ev = in_thread(wait)
    waiting.wait()  # the thread is about to block
    b = memchan.Cluster.join(cluster_name)  # the main thread joins a node
    e = ev()
    assert e is not None and (e.kind, e.node) == ("joined", b.node_id)


def test_recv_releases_the_gil(cluster_name):
    a = memchan.Cluster.join(cluster_name)
    b = memchan.Cluster.join(cluster_name)
    made = in_thread(lambda: memchan.Comm(b, "c"))  # collective: both in a barrier
    ca = memchan.Comm(a, "c")
    cb = made()
    got = in_thread(lambda: cb.recv(source=a.node_id))
    ca.send(b.node_id, np.arange(3, dtype=np.int32), tag=1)
    m = got()
    assert (m.source, m.tag) == (a.node_id, 1)
    assert np.frombuffer(m.data, dtype=np.int32).tolist() == [0, 1, 2]
