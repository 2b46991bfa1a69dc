#!/usr/bin/env bash
# Installs everything memchan needs on a fresh Debian machine: the Rust
# components, Open MPI with OSHMEM and UCX (the bench's peers), matplotlib (plots), and
# iproute2 + nftables (network namespaces and packet drops for multi-host tests),
# iperf3 + ping (programs run unmodified over `memchan ip`), gdb (a failing dual-rail
# test's stack dump), and a Python venv
# (target/py-venv: maturin, numpy, pytest) for the Python package's tests.
# Idempotent: safe to run again.
set -euo pipefail

need_apt=()
command -v mpicc >/dev/null 2>&1 || need_apt+=(openmpi-bin libopenmpi-dev)
command -v oshcc >/dev/null 2>&1 || need_apt+=(openmpi-bin libopenmpi-dev)
python3 -c 'import matplotlib' >/dev/null 2>&1 || need_apt+=(python3-matplotlib)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
# the install test builds a program with `pkg-config --cflags --libs memchan`
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
# multi-host tests and `memchan bench --hosts`: network namespaces, veth, nftables
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v nft >/dev/null 2>&1 || need_apt+=(nftables)
# `memchan ip` tests and bench: unmodified programs over the TUN interface
command -v iperf3 >/dev/null 2>&1 || need_apt+=(iperf3)
command -v ping >/dev/null 2>&1 || need_apt+=(iputils-ping)
# the UCX peer of the message-passing figures (`memchan bench`: ucx_perftest)
command -v ucx_perftest >/dev/null 2>&1 || need_apt+=(ucx-utils)
# a failing dual-rail test prints its stuck workers' thread stacks with gdb
command -v gdb >/dev/null 2>&1 || need_apt+=(gdb)
# the Python package (crates/memchan-py): a venv needs ensurepip (Debian's python3-venv)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# matplotlib for the python3 on PATH (may be a pyenv interpreter, not Debian's)
if ! python3 -c 'import matplotlib' >/dev/null 2>&1; then
  python3 -m pip install --quiet matplotlib
fi

rustup component add rustfmt clippy >/dev/null 2>&1 || true

# The venv the Python package is built into and tested in (scripts/test.sh).
venv="$(cd "$(dirname "$0")/.." && pwd)/target/py-venv"
if ! "$venv/bin/python" -c 'import maturin, numpy, pytest' >/dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check maturin numpy pytest
fi

# libmemchan and its headers, which `memchan bench` builds its OpenSHMEM-level C
# program against (memchan's `oshcc` looks beside the memchan binary of this build
# tree): without them the main job skips that level on a fresh clone.
repo="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$repo" && cargo build --release -q -p memchan-capi)
