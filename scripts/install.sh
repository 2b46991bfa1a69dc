#!/usr/bin/env bash
# Builds memchan (release) and installs it for C programs under PREFIX
# (default: ~/.local, which needs no root; e.g. /usr/local for every user):
#
#   PREFIX/bin/memchan                       the command (bench, hub, status, run, oshcc, ...)
#   PREFIX/bin/oshcc -> memchan              the C compiler wrapper (`memchan oshcc`)
#   PREFIX/bin/oshrun -> memchan             the launcher (`memchan run`)
#   PREFIX/lib/libmemchan.so                 the library
#   PREFIX/include/{shmem.h,memchan.h,...}   OpenSHMEM and the native API
#   PREFIX/lib/pkgconfig/memchan.pc          for `cc $(pkg-config --cflags --libs memchan)`
#
# Programs built by the installed oshcc, or with the pkg-config flags, carry an rpath
# to PREFIX/lib: they run without LD_LIBRARY_PATH.
#
# Usage: scripts/install.sh [--no-build] [--target-dir DIR] [--profile NAME] [PREFIX]
#   --no-build        install what DIR/NAME already holds (after a `cargo build`)
#   --target-dir DIR  cargo's target directory (default: CARGO_TARGET_DIR, else ./target)
#   --profile NAME    cargo profile to build and take from (default: release; `dev`
#                     builds land in DIR/debug)
set -euo pipefail

usage() {
  sed -n '/^# Usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit "${1:-0}"
}

repo="$(cd "$(dirname "$0")/.." && pwd)"
build=1
target="${CARGO_TARGET_DIR:-$repo/target}"
profile=release
prefix=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --target-dir) [ $# -ge 2 ] || usage 2; target="$2"; shift ;;
    --profile) [ $# -ge 2 ] || usage 2; profile="$2"; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "install.sh: unknown option $1" >&2; usage 2 ;;
    *) [ -z "$prefix" ] || usage 2; prefix="$1" ;;
  esac
  shift
done
prefix="${prefix:-$HOME/.local}"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"   # absolute: it goes into rpaths and memchan.pc

if [ "$build" = 1 ]; then
  cargo build --manifest-path "$repo/Cargo.toml" --target-dir "$target" \
    --profile "$profile" -p memchan-cli -p memchan-capi
fi
out="$target/$([ "$profile" = dev ] && echo debug || echo "$profile")"
lib="$out/libmemchan.so"
# Built only as another package's dependency (`cargo test -p memchan-tests`), the
# library is in deps/ and the copy beside it, if any, may be older.
if [ "$out/deps/libmemchan.so" -nt "$lib" ]; then lib="$out/deps/libmemchan.so"; fi
for f in "$out/memchan" "$lib"; do
  [ -f "$f" ] || { echo "install.sh: $f is missing (build first, or drop --no-build)" >&2; exit 1; }
done

install -d "$prefix/bin" "$prefix/lib/pkgconfig" "$prefix/include"
install -m 755 "$out/memchan" "$prefix/bin/memchan"
install -m 755 "$lib" "$prefix/lib/libmemchan.so"
install -m 644 "$repo"/crates/memchan-capi/include/*.h "$prefix/include/"
# The binary is the wrapper or the launcher by the name it is started under.
ln -sfn memchan "$prefix/bin/oshcc"
ln -sfn memchan "$prefix/bin/oshrun"

version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -n 1)"
cat > "$prefix/lib/pkgconfig/memchan.pc" <<EOF
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: memchan
Description: cluster-wide virtual shared memory: OpenSHMEM (shmem.h) and the native API (memchan.h)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lmemchan
EOF

echo "installed memchan $version in $prefix"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH" ;;
esac
case ":${PKG_CONFIG_PATH:-}:" in
  *":$prefix/lib/pkgconfig:"*) ;;
  *) echo "note: for pkg-config, PKG_CONFIG_PATH=$prefix/lib/pkgconfig" ;;
esac
