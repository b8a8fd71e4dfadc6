#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI: the build a user makes, `cmake -DCMAKE_BUILD_TYPE=Release`, with gcc and
# with clang: every component, warnings on (-Wall -Wextra) but not errors,
# so the whole build runs and every warning is seen. Builds only (the tests
# run on the flavours of scripts/test). Lists each warning and fails if
# there is any. gcc builds the installed components only (library, tools,
# NVMe-oF, SMB, the WDK kit): the tests and benchmarks are compiled by gcc
# with -Werror three times already (plain, asan, tsan), and leaving them out
# here keeps CI within its hour. clang builds everything: it is the only
# clang build of the tests.
#   scripts/ci-release-builds.sh [gcc|clang]...   (default: both)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
compilers=("$@")
[ ${#compilers[@]} -gt 0 ] || compilers=(gcc clang)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
status=0
for cc in "${compilers[@]}"; do
  case "$cc" in
    gcc) c=gcc cxx=g++ extra=(-DBUILD_TESTING=OFF -DSOFTNDK_BUILD_BENCH=OFF) ;;
    clang) c=clang cxx=clang++ extra=(-DBUILD_TESTING=ON -DSOFTNDK_BUILD_BENCH=ON) ;;
    *) echo "unknown compiler $cc" >&2; exit 2 ;;
  esac
  dir="$root/build/release-$cc"
  log="$dir.log"
  t0=$(date +%s)
  # A fresh build directory: warnings are only printed when a file compiles.
  rm -rf "$dir"
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=$c \
    -DCMAKE_CXX_COMPILER=$cxx -DSOFTNDK_BUILD_TOOLS=ON "${extra[@]}" \
    "${launcher[@]}" >"$log" 2>&1 ||
    { cat "$log"; echo "release-$cc: configure failed"; status=1; continue; }
  # ccache replays a cached compile's warnings, so a warm cache still reports them.
  if ! cmake --build "$dir" -j"$(nproc)" >>"$log" 2>&1; then
    grep -E 'error|warning' "$log" | head -50
    echo "release-$cc: build failed (log: $log)"; status=1; continue
  fi
  warnings=$(grep -E '(: |^)warning: ' "$log" | sort -u || true)
  n=$(printf '%s' "$warnings" | grep -c . || true)
  echo "release-$cc: built in $(( $(date +%s) - t0 )) s, $n warning(s) (log: $log)"
  if [ "$n" -gt 0 ]; then
    printf '%s\n' "$warnings"
    status=1
  else
    rm -rf "$dir"  # only the log is worth keeping
  fi
done
exit $status
