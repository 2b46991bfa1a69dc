#!/usr/bin/env python3
"""Discrete-event simulation of memchan across many hosts, fed by the bench.

What it predicts: the figures of issue 35 (points 5 and 6) at cluster sizes this
machine cannot hold, for the design of docs/design/2026-12-02-hosts-as-domains.md
(a host agent per host, one link per host, direct host-to-host paths for
point-to-point writes, a sequencer that orders numbers, not bytes, and rack
sequencers above 64 hosts), from the per-hop costs `memchan bench` measured:

    scripts/simulate_hosts.py --hosts-json HOSTS.json --local-json LOCAL.json

HOSTS.json is `memchan bench --hosts --json HOSTS.json`, LOCAL.json the main run's
(`memchan bench --json`, or docs/results/latest.json). The inputs it takes, and
the one it cannot measure yet (the agent's cost per packet, taken as the hub's
per delivery today, which does the same work), are printed with the results.

The model. Every party that works is a FIFO server with a service time: a host
agent (per packet and per batch), a sequencer, a link's sending side (bytes over
bandwidth, then the one-way latency). Work moves as events on one clock. A
point-to-point write between hosts goes sender store -> its agent -> the link
-> the destination's agent -> a store; a broadcast sends its bytes once per
destination host (through the rack sequencers' fan-out above one rack) and its
header to the sequencer, which sends each destination host the packet's number;
a destination agent applies a packet when it has both, then stores it into each
of its host's nodes. A barrier is the host's nodes meeting in shared memory, a
dissemination barrier between the agents (ceil(log2 hosts) rounds), and the
local release. Throughput: every node broadcasts 8-byte writes as fast as its
agent takes them; deliveries per second at the destinations over the simulated
interval.

Python's standard library only; a run takes seconds.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import sys
from dataclasses import dataclass, field
from typing import Callable

US = 1e-6
NS = 1e-9


@dataclass
class Costs:
    """Per-hop costs, in seconds and bytes per second."""

    link_one_way: float  # 8-byte one-way over the link, busy-polling (TCP over the veth)
    link_bandwidth: float  # bytes/s of one link (a raw TCP stream)
    per_packet: float  # an agent's or sequencer's work per packet or record
    store: float  # a one-host write, one way (store to seen by another core)
    write_overhead: float  # the sender's CPU per write (the agent's per local copy)
    local_barrier: Callable[[int], float]  # a one-host barrier of n nodes
    sources: dict = field(default_factory=dict)  # where each came from


def figure(doc: dict, key: str, series: str) -> float:
    try:
        v = doc["figures"][key][series]
    except KeyError as e:
        raise SystemExit(f"simulate_hosts: {key}.{series} missing from the bench JSON ({e})")
    if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise SystemExit(f"simulate_hosts: {key}.{series} is {v!r}, not a positive number")
    return float(v)


def costs_from(hosts: dict, local: dict) -> Costs:
    lat = figure(hosts, "net_latency_8b_one_way_us", "tcp_raw_spin") * US
    bw = figure(hosts, "net_bandwidth_1mib_gbps", "tcp_raw") * 1e9
    rate = figure(hosts, "net_ordering_deliveries_per_s", "memchan")
    store = figure(local, "latency_8b_one_way_ns", "memchan") * NS
    over = figure(local, "overhead_32b_ns", "memchan") * NS
    b8 = figure(local, "barrier_8_nodes_ns", "memchan") * NS
    b64 = figure(local, "barrier_64_nodes_ns", "memchan") * NS

    def local_barrier(n: int) -> float:
        # Between the two measured sizes, log-linear (the one-host barrier is a
        # dissemination over a line per node); outside them, the nearest scaled.
        if n <= 1:
            return 0.0
        x = (math.log2(n) - 3) / 3
        return b8 * (b64 / b8) ** x

    return Costs(
        link_one_way=lat,
        link_bandwidth=bw,
        per_packet=1 / rate,
        store=store,
        write_overhead=over,
        local_barrier=local_barrier,
        sources={
            "link one-way (tcp_raw_spin)": f"{lat / US:.2f} us",
            "link bandwidth (tcp_raw)": f"{bw / 1e9:.2f} GB/s",
            "per packet (1 / hub deliveries per s; assumed for agents and sequencers)": f"{1e9 / rate:.0f} ns",
            "one-host write one way": f"{store / NS:.0f} ns",
            "write overhead (32 B)": f"{over / NS:.0f} ns",
            "one-host barrier, 8 / 64 nodes": f"{b8 / US:.2f} / {b64 / US:.2f} us",
        },
    )


class Sim:
    """The event queue and its clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self.q: list = []
        self.n = 0

    def at(self, t: float, fn: Callable[[], None]) -> None:
        self.n += 1
        heapq.heappush(self.q, (t, self.n, fn))

    def run(self, until: float = math.inf) -> None:
        while self.q and self.q[0][0] <= until:
            self.now, _, fn = heapq.heappop(self.q)
            fn()


class Server:
    """A FIFO server: each job waits for the ones before it, then takes its time."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.free_at = 0.0
        self.busy = 0.0

    def serve(self, work: float, then: Callable[[], None]) -> None:
        start = max(self.sim.now, self.free_at)
        self.free_at = start + work
        self.busy += work
        self.sim.at(self.free_at, then)


class Link:
    """A link's sending side: bytes over bandwidth (queued), then the latency."""

    def __init__(self, sim: Sim, c: Costs) -> None:
        self.sim, self.c = sim, c
        self.out = Server(sim)

    def send(self, nbytes: int, then: Callable[[], None]) -> None:
        def flown() -> None:
            self.sim.at(self.sim.now + self.c.link_one_way, then)

        self.out.serve(nbytes / self.c.link_bandwidth, flown)


@dataclass
class Topology:
    hosts: int
    per_host: int
    rack: int = 64  # hosts per rack sequencer; one rack: no rack level

    @property
    def nodes(self) -> int:
        return self.hosts * self.per_host

    @property
    def racks(self) -> int:
        return math.ceil(self.hosts / self.rack)


FRAME = 64  # bytes of a batch's frame header and MAC
WINDOW = 4  # batches a host may have in flight: sent, not applied everywhere
RECORD = 16  # bytes a sequencer's number takes (sender host, sender seq -> global seq)
PACKET = 8 + 24  # an 8-byte write and its packet header


def p2p_latency(t: Topology, c: Costs) -> float:
    """One 8-byte write to a node of another host, on an idle cluster."""
    sim = Sim()
    sender_agent, dest_agent = Server(sim), Server(sim)
    link = Link(sim, c)
    done: list[float] = []
    sim.at(
        c.store,  # into the sender's out ring
        lambda: sender_agent.serve(
            c.per_packet,
            lambda: link.send(
                FRAME + PACKET,
                lambda: dest_agent.serve(
                    c.per_packet, lambda: sim.at(sim.now + c.store, lambda: done.append(sim.now))
                ),
            ),
        ),
    )
    sim.run()
    return done[0]


def broadcast_latency(t: Topology, c: Costs) -> float:
    """One 8-byte broadcast on an idle cluster, until the last node has it."""
    sim = Sim()
    last = [0.0]
    agents = [Server(sim) for _ in range(t.hosts)]
    host_link = Link(sim, c)  # the sender host's one link
    seq, seq_link = Server(sim), Link(sim, c)
    rack_hubs = [Server(sim) for _ in range(t.racks)]
    rack_links = [Link(sim, c) for _ in range(t.racks)]
    have: dict[tuple[str, int], int] = {}

    def both(key: tuple[str, int]) -> bool:
        have[key] = have.get(key, 0) + 1
        return have[key] == 2

    def apply(h: int) -> None:
        # Its agent applies it under the host's order point, one store per node
        # (the sender's own host too: the local copy comes in the one order).
        agents[h].serve(
            c.per_packet + t.per_host * c.write_overhead,
            lambda: last.__setitem__(0, max(last[0], sim.now + c.store)),
        )

    def at_host(h: int) -> None:
        if both(("host", h)):
            apply(h)

    def at_rack(r: int) -> None:
        # A rack sequencer holds the bytes until the number comes, then sends its
        # hosts both at once.
        if both(("rack", r)):
            def fan() -> None:
                for h in range(r * t.rack, min(t.hosts, (r + 1) * t.rack)):
                    rack_links[r].send(FRAME + PACKET + RECORD, lambda h=h: apply(h))

            rack_hubs[r].serve(c.per_packet, fan)

    def sent() -> None:
        if t.racks == 1:
            have[("host", 0)] = 1  # the bytes are on the sender's host already
            for h in range(1, t.hosts):
                host_link.send(FRAME + PACKET, lambda h=h: at_host(h))

            def numbers() -> None:
                for h in range(t.hosts):
                    seq_link.send(FRAME + RECORD, lambda h=h: at_host(h))
        else:
            for r in range(t.racks):
                host_link.send(FRAME + PACKET, lambda r=r: at_rack(r))

            def numbers() -> None:
                for r in range(t.racks):
                    seq_link.send(FRAME + RECORD, lambda r=r: at_rack(r))

        host_link.send(FRAME + RECORD, lambda: seq.serve(c.per_packet, numbers))

    sim.at(c.store, lambda: agents[0].serve(c.per_packet, sent))  # via the out ring
    sim.run()
    return last[0]


def barrier_latency(t: Topology, c: Costs) -> float:
    """The local meeting, a dissemination barrier between the agents, the release."""
    sim = Sim()
    local = c.local_barrier(t.per_host)
    rounds = math.ceil(math.log2(t.hosts)) if t.hosts > 1 else 0
    agents = [Server(sim) for _ in range(t.hosts)]
    links = [Link(sim, c) for _ in range(t.hosts)]
    got = [[0] * (rounds + 1) for _ in range(t.hosts)]
    done = [0.0]

    def enter(h: int, r: int) -> None:
        if r == rounds:
            done[0] = max(done[0], sim.now + local / 2)  # the local release
            return
        peer = (h + (1 << r)) % t.hosts
        agents[h].serve(c.per_packet, lambda: links[h].send(FRAME, lambda: recv(peer, r)))
        got[h][r] += 1
        check(h, r)

    def recv(h: int, r: int) -> None:
        got[h][r] += 1
        check(h, r)

    def check(h: int, r: int) -> None:
        if got[h][r] == 2:  # sent its own and heard from its round-r peer
            agents[h].serve(c.per_packet, lambda: enter(h, r + 1))

    for h in range(t.hosts):
        sim.at(local / 2, lambda h=h: enter(h, 0))
    sim.run()
    return done[0]


def broadcast_throughput(t: Topology, c: Costs, interval: float, batch: int) -> tuple[float, str]:
    """Every node broadcasting 8-byte writes flat out: deliveries per second (to
    every node but the sender, as the bench counts them) over the second half of
    `interval` (the first fills the queues), and which party was busiest (the
    bottleneck). A batch carries `batch` packets of one host's nodes and takes one
    number (a range) at the sequencer; a host has at most WINDOW batches that not
    every destination host has applied (its out ring's release).

    Every host sends and receives alike, so the receiving side is simulated at a
    few observed hosts, spread over the racks, and scaled (and so are the racks:
    only the observed hosts' are simulated); a link's copies of one
    batch are one piece of work (copies x bytes over bandwidth). That keeps a run
    of 65,536 nodes to seconds."""
    sim = Sim()
    agents_out = [Server(sim) for _ in range(t.hosts)]
    links = [Link(sim, c) for _ in range(t.hosts)]
    seq, seq_link = Server(sim), Link(sim, c)
    rack_hubs = [Server(sim) for _ in range(t.racks)]
    rack_links = [Link(sim, c) for _ in range(t.racks)]
    observed = sorted({(i * t.hosts) // min(8, t.hosts) for i in range(min(8, t.hosts))})
    agents_in = {h: Server(sim) for h in observed}
    # Only the racks of observed hosts: the others' work reaches no observed host
    # (the sending link's copies to them are in its one piece of work).
    racks_seen = sorted({h // t.rack for h in observed})
    delivered = [0]
    have: dict[tuple, int] = {}
    nbytes = FRAME + batch * PACKET
    outstanding = [0] * t.hosts
    next_k = [0] * t.hosts

    def both(key: tuple) -> bool:
        have[key] = have.get(key, 0) + 1
        if have[key] == 2:
            del have[key]
            return True
        return False

    unapplied: dict[tuple[int, int], int] = {}

    def apply(src: int, k: int, h: int) -> None:
        # Per packet its work, and one store per node of the host but the sender.
        nodes = t.per_host - 1 if h == src else t.per_host

        def applied() -> None:
            if interval / 2 <= sim.now <= interval:
                delivered[0] += batch * nodes
            # Released by every (observed) destination host: the sender's credit
            # comes back (its out ring frees the batch).
            unapplied[(src, k)] -= 1
            if unapplied[(src, k)] == 0:
                del unapplied[(src, k)]
                credit(src)

        agents_in[h].serve(batch * (c.per_packet + nodes * c.write_overhead), applied)

    def rack_of(r: int) -> tuple[int, list[int]]:
        hosts_r = min(t.hosts, (r + 1) * t.rack) - r * t.rack
        return hosts_r, [h for h in observed if h // t.rack == r]

    def at_rack(src: int, k: int, r: int) -> None:
        if both(("rack", src, k, r)):
            hosts_r, seen = rack_of(r)
            rack_hubs[r].serve(
                c.per_packet,
                lambda: rack_links[r].send(
                    hosts_r * (nbytes + RECORD), lambda: [apply(src, k, h) for h in seen]
                ),
            )

    def credit(src: int) -> None:
        outstanding[src] -= 1
        if sim.now < interval:
            produce(src)

    def send_batch(src: int, k: int) -> None:
        unapplied[(src, k)] = len(observed)
        if t.racks == 1:
            def at_host(h: int) -> None:
                if both(("host", src, k, h)):
                    apply(src, k, h)

            if src in agents_in:
                have[("host", src, k, src)] = 1  # the bytes are on its host already
            links[src].send(
                (t.hosts - 1) * nbytes, lambda: [at_host(h) for h in observed if h != src]
            )

            def numbers() -> None:
                def out() -> None:
                    for h in observed:
                        at_host(h)

                seq_link.send(t.hosts * (FRAME + RECORD), out)
        else:
            links[src].send(
                t.racks * nbytes, lambda: [at_rack(src, k, r) for r in racks_seen]
            )

            def numbers() -> None:
                def out() -> None:
                    for r in racks_seen:
                        at_rack(src, k, r)

                seq_link.send(t.racks * (FRAME + RECORD), out)

        links[src].send(FRAME + RECORD, lambda: seq.serve(c.per_packet, numbers))

    def produce(src: int) -> None:
        # The agent takes a batch from its nodes' out rings (one per-packet cost
        # each) and sends it, while its window has room.
        if outstanding[src] >= WINDOW:
            return
        outstanding[src] += 1
        k = next_k[src]
        next_k[src] += 1

        def taken() -> None:
            send_batch(src, k)
            if sim.now < interval:
                produce(src)

        agents_out[src].serve(batch * c.per_packet, taken)

    for h in range(t.hosts):
        produce(h)
    sim.run(until=interval)
    rate = delivered[0] / (interval / 2) * t.hosts / len(observed)
    parties = {
        "sending agents": max(a.busy for a in agents_out),
        "receiving agents": max(a.busy for a in agents_in.values()),
        "sending links": max(link.out.busy for link in links),
        "sequencer": seq.busy,
        "sequencer link": seq_link.out.busy,
    }
    if t.racks > 1:
        parties["rack sequencers"] = max(rack_hubs[r].busy for r in racks_seen)
        parties["rack links"] = max(rack_links[r].out.busy for r in racks_seen)
    busiest = max(parties, key=parties.get)
    return rate, f"{busiest} ({min(1.0, parties[busiest] / interval):.0%} busy)"


SIZES = [Topology(4, 16), Topology(64, 16), Topology(2048, 32, rack=64)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts-json", required=True, help="memchan bench --hosts --json output")
    ap.add_argument("--local-json", required=True, help="memchan bench --json output (one host)")
    ap.add_argument("--interval-ms", type=float, default=100.0, help="simulated time of the throughput runs")
    ap.add_argument("--batch", type=int, default=64, help="packets per batch on a link")
    ap.add_argument(
        "--agent-ns",
        type=float,
        help="an agent's and sequencer's work per packet, in ns, instead of the hub's "
        "measured per delivery (the agent does not run yet: what cost meets a target)",
    )
    ap.add_argument("--json", help="also write the predictions here")
    a = ap.parse_args(argv)
    with open(a.hosts_json) as f:
        hosts = json.load(f)
    with open(a.local_json) as f:
        local = json.load(f)
    c = costs_from(hosts, local)
    if a.agent_ns is not None:
        if not a.agent_ns > 0:
            ap.error(f"--agent-ns {a.agent_ns}: not a positive number of ns")
        c.per_packet = a.agent_ns * NS
        c.sources = {
            k: v for k, v in c.sources.items() if not k.startswith("per packet")
        } | {"per packet (--agent-ns)": f"{a.agent_ns:.0f} ns"}
    print("memchan across many hosts: predictions of a discrete-event simulation")
    print("inputs (from the bench JSON):")
    for k, v in c.sources.items():
        print(f"   {k}: {v}")
    print(f"   batch: {a.batch} packets; throughput over {a.interval_ms:g} ms simulated")
    rows = []
    print(
        f"   {'nodes':>6} {'hosts':>6} {'racks':>5} {'p2p same host':>14} {'p2p hosts':>10} "
        f"{'bcast':>9} {'barrier':>9} {'bcast deliveries/s':>19}  bottleneck"
    )
    for t in SIZES:
        p2p = p2p_latency(t, c)
        bc = broadcast_latency(t, c)
        bar = barrier_latency(t, c)
        rate, neck = broadcast_throughput(t, c, a.interval_ms * 1e-3, a.batch)
        rows.append(
            {
                "nodes": t.nodes,
                "hosts": t.hosts,
                "racks": t.racks,
                "p2p_same_host_us": c.store / US,
                "p2p_cross_host_us": p2p / US,
                "broadcast_us": bc / US,
                "barrier_us": bar / US,
                "broadcast_deliveries_per_s": rate,
                "bottleneck": neck,
            }
        )
        print(
            f"   {t.nodes:>6} {t.hosts:>6} {t.racks:>5} {c.store / US:>11.2f} us {p2p / US:>7.1f} us "
            f"{bc / US:>6.1f} us {bar / US:>6.1f} us {rate:>19.3g}  {neck}"
        )
    if a.agent_ns is None:
        print(
            "   the agent's and sequencers' cost per packet is today's hub's per delivery "
            "(bytes relayed, system calls included): an upper bound until the agent runs; "
            "--agent-ns tries others"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"inputs": c.sources, "batch": a.batch, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
