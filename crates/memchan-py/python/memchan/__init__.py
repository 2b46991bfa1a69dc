"""memchan: a software cluster interconnect (cluster-wide virtual shared memory by
address-space mapping, in the line of DEC MEMORY CHANNEL), from Python.

A process joins a named cluster and becomes a node; segments are named ranges of
the cluster's address space. A node maps a segment rx (local memory that receives
every write addressed to it: here a read-only buffer numpy views without a copy)
and tx towards a node, a multicast group or "broadcast". On one host the transport
is shared memory; across hosts, a hub (``hub="HOST:PORT"``).

>>> import memchan, os, numpy as np
>>> name = f"doc-pkg-{os.getpid()}"
>>> a, b = memchan.Cluster.join(name), memchan.Cluster.join(name)
>>> rx = b.segment("inbox", 4096).map_rx()
>>> tx = a.segment("inbox", 4096).map_tx(b.node_id)
>>> tx.write(0, np.array([1.5, 2.5]))
>>> a.ack()                          # applied at every destination
>>> np.frombuffer(rx, dtype=np.float64, count=2).tolist()
[1.5, 2.5]

Every call that waits (ack, barrier, lock, wait, recv, next_event, ...) releases
the GIL. Every failure raises a subclass of :class:`memchan.Error` with the Rust
error's stable ``code`` and its ``message``.
"""

from ._memchan import (
    ANY_SOURCE,
    ANY_TAG,
    BROADCAST,
    MAX_NODES,
    AckIncompleteError,
    BadShapeError,
    ClockNotSynchronisedError,
    Cluster,
    Comm,
    Error,
    Event,
    GlobalTime,
    Group,
    HubLostError,
    HubRefusedError,
    InvalidError,
    IsolatedError,
    Lock,
    NotMappedError,
    OsError,
    OutOfBoundsError,
    PageSizeMismatchError,
    PeerGoneError,
    Pending,
    PermissionDeniedError,
    ProtocolError,
    RemoteReadOffError,
    Request,
    Rma,
    RxMapping,
    Segment,
    SegmentFreedError,
    SegmentSizeMismatchError,
    StalledError,
    Status,
    TableFullError,
    TimeoutError,
    TransmitDisabledError,
    TruncatedError,
    TxMapping,
    UnalignedError,
    UnknownGroupError,
    UnknownNodeError,
    UnknownRequestError,
    UnknownSegmentError,
    UnsupportedError,
    VersionMismatchError,
)

__all__ = [
    "ANY_SOURCE",
    "ANY_TAG",
    "BROADCAST",
    "MAX_NODES",
    "AckIncompleteError",
    "BadShapeError",
    "ClockNotSynchronisedError",
    "Cluster",
    "Comm",
    "Error",
    "Event",
    "GlobalTime",
    "Group",
    "HubLostError",
    "HubRefusedError",
    "InvalidError",
    "IsolatedError",
    "Lock",
    "NotMappedError",
    "OsError",
    "OutOfBoundsError",
    "PageSizeMismatchError",
    "PeerGoneError",
    "Pending",
    "PermissionDeniedError",
    "ProtocolError",
    "RemoteReadOffError",
    "Request",
    "Rma",
    "RxMapping",
    "Segment",
    "SegmentFreedError",
    "SegmentSizeMismatchError",
    "StalledError",
    "Status",
    "TableFullError",
    "TimeoutError",
    "TransmitDisabledError",
    "TruncatedError",
    "TxMapping",
    "UnalignedError",
    "UnknownGroupError",
    "UnknownNodeError",
    "UnknownRequestError",
    "UnknownSegmentError",
    "UnsupportedError",
    "VersionMismatchError",
]
