#!/usr/bin/env bash
# scripts/osu.sh OSU_SOURCE_DIR: the OSU micro-benchmarks' OpenSHMEM programs against
# memchan and against Open MPI's OSHMEM, side by side, on this host (issue 14, point 3).
#
# OSU_SOURCE_DIR is an unpacked osu-micro-benchmarks release with its generated
# `configure` (5.9 works; 6.x's OpenSHMEM-only build fails to link on both sides:
# osu_util.c calls omb_ddt_process_options, which only the MPI utilities define); the
# project does not ship it and CI cannot download it. The
# script configures it twice, out of tree in $OSU_BUILD (default: a fresh directory
# under /tmp), with CC = memchan's oshcc and with Open MPI's, builds every OpenSHMEM
# program it can (`make -k`), runs each built one with 2 PEs under `memchan run` and
# under Open MPI's `oshrun` (put, get and atomics in both `heap` and `global` modes),
# and prints one line per program and side: built or not (with the shmem.h names the
# compiler or linker missed), ran or not (exit code), and the output's last line.
# Logs and outputs stay in $OSU_BUILD.
#
# Environment: OSU_NP (PEs, default 2), OSU_TIMEOUT (seconds per run, default 300),
# OSU_BUILD, SHMEM_SYMMETRIC_SIZE (default 512M, for both sides). Exit status: 0 when
# every program that Open MPI builds also builds and runs on memchan (and Open MPI, or
# without it memchan, built at least one), else 1.
#
# OSU_HOSTS=netns (root): the memchan side runs across two network namespaces instead,
# as two hosts: `memchan run --hosts H0:K,H1:K --launch-agent 'ip netns exec {host}'
# --bind-to none` started in a third namespace that routes between them (where the
# launcher's hub listens), K = OSU_NP/2 rounded up, each host its own host domain
# (MEMCHAN_DOMAIN), so with 2 PEs every put crosses the PEs' direct link and every get
# and atomic the hub, and with 4 the measured pair (PEs 0 and 1) shares host H0's memory. Open MPI's side is not run then (its oshrun would need ssh between the
# namespaces). The namespaces (mc<PID>osuh0, mc<PID>osuh1, mc<PID>osuhub: the names
# memchan-testkit deletes once PID is gone) are removed at exit.
set -uo pipefail
export LC_ALL=C # ASCII quotes in compiler messages, which `missing` reads

src=${1:?usage: scripts/osu.sh OSU_SOURCE_DIR}
src=$(cd "$src" && pwd) || exit 2
[ -x "$src/configure" ] || { echo "osu.sh: $src/configure not found (an unpacked OSU release?)" >&2; exit 2; }
oshm_dir=c/openshmem # 6.0 and later; before, openshmem/ at the top
[ -d "$src/$oshm_dir" ] || oshm_dir=openshmem
[ -d "$src/$oshm_dir" ] || { echo "osu.sh: no OpenSHMEM directory in $src" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
np=${OSU_NP:-2}
timeout=${OSU_TIMEOUT:-300}
build=${OSU_BUILD:-$(mktemp -d /tmp/memchan-osu.XXXXXX)}
export SHMEM_SYMMETRIC_SIZE=${SHMEM_SYMMETRIC_SIZE:-512M}
mkdir -p "$build"

hosts_mode=${OSU_HOSTS:-}
case "$hosts_mode" in
    "" | netns) ;;
    *) echo "osu.sh: OSU_HOSTS=$hosts_mode: only \`netns' is known" >&2; exit 2 ;;
esac
if [ "$hosts_mode" = netns ]; then
    [ "$(id -u)" = 0 ] || { echo "osu.sh: OSU_HOSTS=netns needs root (network namespaces)" >&2; exit 2; }
    ns_hub=mc$$osuhub
    ns_hosts=(mc$$osuh0 mc$$osuh1)
    netns_down() {
        local ns pid
        for ns in "${ns_hosts[@]}" "$ns_hub"; do
            for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
            ip netns del "$ns" 2>/dev/null
        done
    }
    trap netns_down EXIT
    # The topology of memchan-testkit's netns.rs: host i at 10.201.i.2, routed by the
    # hub namespace at 10.201.i.1.
    netns_up() {
        ip netns add "$ns_hub" && ip -n "$ns_hub" link set lo up \
            && ip netns exec "$ns_hub" sysctl -q -w net.ipv4.ip_forward=1 || return 1
        local i h
        for i in 0 1; do
            h=${ns_hosts[$i]}
            ip netns add "$h" \
                && ip link add "vh$i" netns "$h" type veth peer name "vb$i" netns "$ns_hub" \
                && ip -n "$h" link set lo up \
                && ip -n "$h" addr add "10.201.$i.2/24" dev "vh$i" \
                && ip -n "$h" link set "vh$i" up \
                && ip -n "$h" route add default via "10.201.$i.1" \
                && ip -n "$ns_hub" addr add "10.201.$i.1/24" dev "vb$i" \
                && ip -n "$ns_hub" link set "vb$i" up || return 1
        done
    }
    netns_up || { echo "osu.sh: cannot set up the network namespaces" >&2; exit 1; }
    per_host=$(((np + 1) / 2))
    echo "== memchan side across namespaces ${ns_hosts[0]}:$per_host,${ns_hosts[1]}:$per_host (launcher and hub in $ns_hub)"
fi

echo "== building memchan (release) in $repo"
(cd "$repo" && cargo build --release -q -p memchan-cli -p memchan-capi) || exit 1
memchan=$repo/target/release/memchan
# memchan's oshcc is the memchan binary started under the name oshcc.
mkdir -p "$build/bin"
ln -sf "$memchan" "$build/bin/oshcc"

have_ompi=0
if command -v oshcc >/dev/null && oshcc -showme 2>/dev/null | grep -q oshmem \
    && command -v oshrun >/dev/null; then
    have_ompi=1
else
    echo "osu.sh: Open MPI's oshcc/oshrun not found (scripts/setup.sh): memchan side only" >&2
fi

# configure_and_make SIDE CC
configure_and_make() {
    local side=$1 cc=$2 dir=$build/$1
    mkdir -p "$dir"
    echo "== configuring and building for $side (CC=$cc) in $dir"
    (cd "$dir" && "$src/configure" CC="$cc" CXX="${CXX:-g++}" >configure.log 2>&1) || {
        echo "   configure failed: see $dir/configure.log"
        tail -5 "$dir/configure.log"
        return 1
    }
    (cd "$dir/$oshm_dir" && make -k >make.log 2>&1)
    return 0
}

# The programs the OSU release lists, from its Makefile.am.
programs=$(sed -n '/_PROGRAMS *=/,/^$/p' "$src/$oshm_dir/Makefile.am" \
    | tr ' \t\\' '\n\n\n' | grep '^osu_oshm_' | sort -u)

configure_and_make memchan "$build/bin/oshcc"
[ $have_ompi = 1 ] && configure_and_make oshmem "$(command -v oshcc)"
# Across namespaces Open MPI's programs are built (the reference of what must build)
# but not run.
run_ompi=$have_ompi
[ "$hosts_mode" = netns ] && run_ompi=0

# missing NAME LOG: the OpenSHMEM names the compiler or linker missed building NAME.
missing() {
    grep -E "$1\.c|osu_util" "$2" 2>/dev/null \
        | sed -nE -e "s/.*implicit declaration of function '([A-Za-z0-9_]+)'.*/\1/p" \
            -e "s/.*undefined reference to \`([A-Za-z0-9_]+)'.*/\1/p" \
            -e "s/.*'([A-Za-z0-9_]+)' undeclared.*/\1/p" \
        | sort -u | tr '\n' ' '
}

# run SIDE PROG MODE: runs a built program, prints the result line.
run() {
    local side=$1 prog=$2 mode=$3 dir=$build/$1/$oshm_dir
    local out=$dir/$prog${mode:+.$mode}.out
    local -a cmd
    if [ "$side" = memchan ] && [ "$hosts_mode" = netns ]; then
        cmd=(ip netns exec "$ns_hub" "$memchan" run -n "$np" --timeout "$timeout"
            --hosts "${ns_hosts[0]}:$per_host,${ns_hosts[1]}:$per_host"
            --launch-agent "ip netns exec {host} env MEMCHAN_DOMAIN={host}" --bind-to none)
        # MEMCHAN_DOMAIN: the "hosts" share this machine's /dev/shm and host name, and
        # PEs of one domain share memory: without a domain each, every put and get
        # between them would be a store, not a trip through the hub. --bind-to none:
        # they share its cores too, and each host's launcher would bind its first rank
        # to the same first core.
        [ "$per_host" -gt "$(nproc)" ] && cmd+=(--oversubscribe)
    elif [ "$side" = memchan ]; then
        cmd=("$memchan" run -n "$np" --timeout "$timeout")
        [ "$np" -gt "$(nproc)" ] && cmd+=(--oversubscribe)
    else
        cmd=(timeout "$timeout" oshrun --allow-run-as-root -np "$np" --mca memory ^patcher)
        [ "$np" -gt "$(nproc)" ] && cmd+=(--oversubscribe)
    fi
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        "${cmd[@]}" "$dir/$prog" $mode >"$out" 2>&1 </dev/null
    local rc=$?
    local last
    last=$(grep -v '^\s*$' "$out" | tail -1 | cut -c1-70)
    if [ $rc = 0 ]; then
        printf '   %-8s %-24s ran      last line: %s\n' "$side" "$prog${mode:+ $mode}" "$last"
    else
        printf '   %-8s %-24s FAILED   exit %s: %s\n' "$side" "$prog${mode:+ $mode}" "$rc" "$last"
    fi
    return $rc
}

status=0
ref=oshmem
[ $have_ompi = 0 ] && ref=memchan
built=$(for p in $programs; do [ -x "$build/$ref/$oshm_dir/$p" ] && echo "$p"; done | wc -l)
if [ "$built" = 0 ]; then
    echo "osu.sh: $ref built none of the programs (see $build/$ref/$oshm_dir/make.log)"
    status=1
fi
echo "== results ($np PEs; outputs in $build/SIDE/$oshm_dir/PROG[.MODE].out)"
for prog in $programs; do
    modes=""
    grep -q '"heap"' "$src/$oshm_dir/$prog.c" 2>/dev/null && modes="heap global"
    for side in memchan oshmem; do
        [ $side = oshmem ] && [ $have_ompi = 0 ] && continue
        dir=$build/$side/$oshm_dir
        if [ $side = oshmem ] && [ $run_ompi = 0 ]; then
            [ -x "$dir/$prog" ] && printf '   %-8s %-24s built    (not run across namespaces)\n' "$side" "$prog"
            continue
        fi
        if [ ! -x "$dir/$prog" ]; then
            printf '   %-8s %-24s NOT BUILT missing: %s\n' "$side" "$prog" "$(missing "$prog" "$dir/make.log")"
            if [ $side = memchan ] && { [ $have_ompi = 0 ] || [ -x "$build/oshmem/$oshm_dir/$prog" ]; }; then
                status=1
            fi
            continue
        fi
        for mode in ${modes:--}; do
            [ "$mode" = - ] && mode=""
            run "$side" "$prog" "$mode" || { [ $side = memchan ] && status=1; }
        done
    done
done
exit $status
