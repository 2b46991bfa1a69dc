#!/usr/bin/env python3
"""Plots for `memchan bench --plot DIR`.

Reads DIR/bench_data.json (written by the bench) and writes
  DIR/bandwidth.png    bandwidth vs transfer size (memcpy, memchan, MPI 1 MiB)
  DIR/latency_hist.png 8-byte one-way latency histogram per series
  DIR/latency_cdf.png  8-byte one-way latency CDF per series
  DIR/levels.png       bandwidth vs size per level: raw memchan writes, message
                       passing (full postal, zero-copy), TCP/IP over memchan

The bench embeds this file and runs it with python3; it can also be re-run by
hand: python3 crates/memchan-bench/plot.py DIR
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "cacheline_limit": dict(color="black", label="cache-line limit"),
    "memchan": dict(color="tab:red", label="memchan"),
    "memcpy": dict(color="black", label="memcpy (1 core)"),
    "tcp_loopback": dict(color="tab:blue", label="TCP loopback"),
    "mpi": dict(color="tab:green", label="Open MPI"),
    "oshmem": dict(color="tab:purple", label="OpenSHMEM"),
    "memchan_postal": dict(color="tab:red", label="memchan, full postal (isend)"),
    "memchan_zero_copy": dict(color="tab:orange", label="memchan, zero-copy (issend)"),
    "memchan_ip": dict(color="tab:red", label="TCP over memchan ip"),
    "tcp_veth": dict(color="tab:blue", label="TCP over a veth"),
}

LEVELS = [
    ("raw", "raw memchan writes (windows of 64)", "transfer size"),
    ("message_passing", "message passing (windows of 64 sends)", "message size"),
    ("ip", "TCP/IP (a stream of writes)", "write size"),
]


def style(name):
    return STYLE.get(name, dict(label=name))


def human(n):
    if n >= 1 << 20:
        return f"{n >> 20} MiB"
    if n >= 1 << 10:
        return f"{n >> 10} KiB"
    return f"{n} B"


def bandwidth(data, out):
    sw = data["sweep"]
    sizes = sw["sizes"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, ys in sw["median_gbps"].items():
        pts = [(s, y) for s, y in zip(sizes, ys) if y is not None]
        if not pts:
            continue
        xs, vs = zip(*pts)
        st = style(name)
        if len(pts) == 1:
            ax.plot(xs, vs, "o", markersize=8, **st)
        else:
            ax.plot(xs, vs, "o-", **st)
            lo = [p for p, y in zip(sw["p99_gbps"][name], ys) if y is not None]
            ax.fill_between(xs, lo, vs, alpha=0.15, color=st.get("color"))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([human(s) for s in sizes], rotation=30)
    ax.set_xlabel("transfer size")
    ax.set_ylabel("GB/s (median; band down to the p99-slow window)")
    ax.set_title(data.get("title", "memchan bench") + "\nbandwidth, windows of 64 transfers")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def latency(data, out_hist, out_cdf):
    lat = {k: v for k, v in data["latency_samples_ns"].items() if v}
    if not lat:
        lat = {"(none)": [1.0]}
    lo = max(1e-3, min(min(v) for v in lat.values()))
    hi = max(max(v) for v in lat.values())
    nb = 120
    edges = [lo * (hi / lo) ** (i / nb) for i in range(nb + 1)] if hi > lo else [lo * 0.9, lo * 1.1]

    # Left: the shared-memory series (< 2 us) on a linear axis, one bin per
    # counter step so quantised samples do not alias. Right: everything, log x.
    step = data.get("half_step_ns") or 0.0
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw=dict(width_ratios=[3, 2]))
    near = {k: [x for x in v if x < 2000.0] for k, v in lat.items()}
    near = {k: v for k, v in near.items() if len(v) > 0.5 * len(lat[k])}
    if near:
        nlo = min(min(v) for v in near.values())
        nhi = max(sorted(v)[int(0.995 * (len(v) - 1))] for v in near.values())
        w = step if step > 0.5 else max(1.0, (nhi - nlo) / 150)
        k0, k1 = int(nlo // w) - 1, int(nhi // w) + 2
        bins = [(k + 0.5) * w for k in range(k0, k1)]
        for name, v in near.items():
            vv = [x for x in v if x <= bins[-1]]
            ax1.hist(vv, bins=bins, histtype="step", linewidth=1.5,
                     weights=[1.0 / len(lat[name])] * len(vv), **style(name))
        ax1.set_xlabel("one-way latency (ns), up to the 99.5th percentile")
        ax1.set_ylabel("fraction of round trips per bin")
        ax1.set_title("shared-memory ping-pongs")
        ax1.grid(True, alpha=0.3)
        ax1.legend()
    for name, v in lat.items():
        ax2.hist(v, bins=edges, histtype="step", linewidth=1.5,
                 weights=[1.0 / len(v)] * len(v), **style(name))
    ax2.set_xscale("log")
    ax2.set_xlabel("one-way latency (ns)")
    ax2.set_ylabel("fraction of round trips per bin")
    ax2.set_title("all series (log scale)")
    ax2.grid(True, which="both", alpha=0.3)
    fig.suptitle(data.get("title", "memchan bench") + " - 8-byte one-way latency, distribution")
    fig.tight_layout()
    fig.savefig(out_hist, dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, v in lat.items():
        s = sorted(v)
        n = len(s)
        ax.step(s, [(i + 1) / n for i in range(n)], where="post", **style(name))
    ax.set_xscale("log")
    ax.set_ylim(0, 1.0)
    ax.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
    ax.axhline(0.99, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("one-way latency (ns)")
    ax.set_ylabel("fraction of round trips")
    ax.set_title(data.get("title", "memchan bench") + "\n8-byte one-way latency, CDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out_cdf, dpi=110)
    plt.close(fig)


def levels(data, out):
    lv = data.get("levels") or {}
    sizes = lv.get("sizes") or data["sweep"]["sizes"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8), sharey=True)
    for ax, (key, title, xlabel) in zip(axes, LEVELS):
        drawn = False
        for name, ys in (lv.get(key) or {}).items():
            pts = [(s, y) for s, y in zip(sizes, ys) if y is not None]
            if not pts:
                continue
            xs, vs = zip(*pts)
            ax.plot(xs, vs, "o-", **style(name))
            drawn = True
        if not drawn:
            ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([human(s) for s in sizes], rotation=30)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        if drawn:
            ax.legend(fontsize=8)
    axes[0].set_ylabel("GB/s (median)")
    fig.suptitle(data.get("title", "memchan bench") + " - bandwidth vs size, per level")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py DIR (containing bench_data.json)")
    d = sys.argv[1]
    with open(os.path.join(d, "bench_data.json")) as f:
        data = json.load(f)
    bandwidth(data, os.path.join(d, "bandwidth.png"))
    latency(data, os.path.join(d, "latency_hist.png"), os.path.join(d, "latency_cdf.png"))
    levels(data, os.path.join(d, "levels.png"))


if __name__ == "__main__":
    main()
