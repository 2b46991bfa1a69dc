"""The many-hosts simulation (scripts/simulate_hosts.py): it reads the bench's
JSON, and its predictions move the way the model says they must."""

import json
import math
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import simulate_hosts as sim  # noqa: E402

LOCAL = ROOT / "docs" / "results" / "latest.json"


def hosts_doc(one_way_us=4.0, gbps=2.0, deliveries=1e6):
    # The three figures of `memchan bench --hosts --json` the model takes.
    return {
        "figures": {
            "net_latency_8b_one_way_us": {"tcp_raw_spin": one_way_us},
            "net_bandwidth_1mib_gbps": {"tcp_raw": gbps},
            "net_ordering_deliveries_per_s": {"memchan": deliveries},
        }
    }


def costs(**kw):
    return sim.costs_from(hosts_doc(**kw), json.loads(LOCAL.read_text()))


def test_a_write_between_hosts_costs_at_least_the_link_and_two_stores():
    c = costs()
    for t in sim.SIZES:
        p2p = sim.p2p_latency(t, c)
        assert p2p >= c.link_one_way + 2 * c.store
        # ... and nothing on the way grows with the cluster: one hop, two agents.
        assert math.isclose(p2p, sim.p2p_latency(sim.SIZES[0], c))


def test_a_slower_link_shows_in_every_latency():
    fast, slow = costs(one_way_us=4.0), costs(one_way_us=40.0)
    t = sim.SIZES[1]
    assert sim.p2p_latency(t, slow) - sim.p2p_latency(t, fast) >= 35e-6
    assert sim.broadcast_latency(t, slow) > sim.broadcast_latency(t, fast)
    assert sim.barrier_latency(t, slow) > sim.barrier_latency(t, fast)


def test_the_barrier_grows_with_the_log_of_the_hosts_not_the_nodes():
    c = costs()
    few = sim.barrier_latency(sim.Topology(4, 16), c)
    many_nodes = sim.barrier_latency(sim.Topology(4, 256), c)
    many_hosts = sim.barrier_latency(sim.Topology(64, 16), c)
    # 16x the nodes per host: only the local part grows (shared memory).
    assert many_nodes - few < 2 * (c.local_barrier(256) - c.local_barrier(16)) + 1e-9
    # 16x the hosts: two rounds become six, each a link hop.
    rounds = math.log2(64) - math.log2(4)
    assert many_hosts - few >= rounds * c.link_one_way


def test_throughput_is_bounded_by_the_cost_per_packet():
    # Every delivery needs its packet's work at the receiving agent: a host applies
    # at most 1 / per_packet packets a second, each to its nodes.
    t = sim.Topology(4, 16)
    cheap, dear = costs(deliveries=4e6), costs(deliveries=4e5)
    r_cheap, _ = sim.broadcast_throughput(t, cheap, 5e-3, 64)
    r_dear, neck = sim.broadcast_throughput(t, dear, 5e-3, 64)
    assert 0 < r_dear < r_cheap
    assert r_dear <= t.hosts * t.per_host / dear.per_packet
    assert "busy" in neck


def test_the_command_prints_a_row_per_size_and_writes_its_json(tmp_path):
    hosts = tmp_path / "hosts.json"
    hosts.write_text(json.dumps(hosts_doc()))
    out_json = tmp_path / "pred.json"
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "simulate_hosts.py"),
            "--hosts-json",
            str(hosts),
            "--local-json",
            str(LOCAL),
            "--interval-ms",
            "2",
            "--json",
            str(out_json),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = json.loads(out_json.read_text())["rows"]
    assert [row["nodes"] for row in rows] == [t.nodes for t in sim.SIZES]
    for row in rows:
        assert row["broadcast_deliveries_per_s"] > 0, row
        assert str(row["nodes"]) in r.stdout


def test_a_missing_figure_is_named():
    bad = hosts_doc()
    del bad["figures"]["net_bandwidth_1mib_gbps"]
    try:
        sim.costs_from(bad, json.loads(LOCAL.read_text()))
    except SystemExit as e:
        assert "net_bandwidth_1mib_gbps" in str(e)
    else:
        raise AssertionError("a missing figure was accepted")
