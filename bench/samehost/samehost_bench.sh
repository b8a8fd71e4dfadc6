#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# samehost_bench.sh - the same-host fast path against loopback TCP and UCX,
# side by side in one run (docs/samehost.md, bench/README.md "Same host").
#
#   bench/samehost/samehost_bench.sh [NDKPERF] [-r REPS] [-D SECS]
#
# For each test (1 MiB RDMA Write and Read, 64 KiB Send, 8-byte Send
# latency, busy-polled and in event mode) it runs, REPS times and interleaved, ndkperf with
# SOFTNDK_SAMEHOST=on and buffers from SoftNdkAllocateSharedMemory
# (--shm-buffers: the peer maps them and copies with memcpy; Write and Read
# only), ndkperf with SOFTNDK_SAMEHOST=on and heap buffers (process_vm_readv),
# ndkperf with SOFTNDK_SAMEHOST=off (loopback TCP) and ucx_perftest
# (UCX_TLS=posix,cma,self; package ucx-utils; skipped if missing), then
# prints the medians and the ratios of the fastest same-host figure
# (mapped, else CMA) to TCP and UCX. Both ends of
# every run are on this machine (ndkperf and ucx_perftest each as a server
# and a client process on 127.0.0.1).
set -euo pipefail
NDKPERF=build/plain/tools/ndkperf/ndkperf
REPS=3
DUR=1
if [[ $# -gt 0 && $1 != -* ]]; then NDKPERF=$1; shift; fi
while [[ $# -gt 0 ]]; do
  case $1 in
    -r) REPS=$2; shift 2 ;;
    -D) DUR=$2; shift 2 ;;
    *) echo "usage: $0 [NDKPERF] [-r REPS] [-D SECS]" >&2; exit 2 ;;
  esac
done
[[ -x $NDKPERF ]] || { echo "$0: no ndkperf at $NDKPERF" >&2; exit 2; }
HAVE_UCX=0
command -v ucx_perftest >/dev/null && HAVE_UCX=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ndkperf TEST SIZE MODE [ARGS] -> "<figure> <path>" (GB/s for bw, median us for lat).
# Two processes, a server and a client on 127.0.0.1, as ucx_perftest runs:
# the fast path is for two softndk processes (one process would also pass
# its own memory, and its two busy pollers compete with its reactors).
ndk() {
  local test=$1 size=$2 mode=$3 out port=$((20000 + RANDOM % 20000))
  shift 3
  SOFTNDK_SAMEHOST=$mode timeout 120 "$NDKPERF" "$test" --server -d 127.0.0.1 -p "$port" \
    -s "$size" -D "$DUR" --quiet "$@" >/dev/null 2>&1 &
  local srv=$! i
  # Until the server listens (adapter open can take a while on a busy machine).
  for ((i = 0; i < 100; i++)); do
    [[ -n $(ss -Hltn "sport = :$port" 2>/dev/null) ]] && break
    sleep 0.05
  done
  out=$(SOFTNDK_SAMEHOST=$mode timeout 120 "$NDKPERF" "$test" 127.0.0.1 -p "$port" -s "$size" \
    -D "$DUR" --json --quiet "$@")
  wait "$srv" || true
  python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
lat = sys.argv[1].endswith("_lat")
print(r["latency_us"]["median"] if lat else r["mbps"] / 1e3, r.get("path", "?"))
' "$test" <<<"$out"
}

# ucx_perftest TEST SIZE -> figure (GB/s for bw, typical one-way us for lat)
ucx() {
  local test=$1 size=$2 extra=$3 port=$((20000 + RANDOM % 20000)) iters
  iters=$([[ $test == *lat ]] && echo 20000 || echo 5000)
  UCX_TLS=posix,cma,self timeout 60 ucx_perftest -p "$port" >/dev/null 2>&1 &
  local srv=$!
  sleep 0.3
  # shellcheck disable=SC2086 # $extra is a word list
  UCX_TLS=posix,cma,self timeout 60 ucx_perftest 127.0.0.1 -p "$port" -t "$test" -s "$size" \
    -n "$iters" $extra > "$TMP/ucx.txt" 2>&1 || true
  kill "$srv" 2>/dev/null || true
  wait "$srv" 2>/dev/null || true
  # The "Final:" line: iterations, latency typical/avg/overall (usec),
  # bandwidth average/overall (MB/s, 2^20), message rate.
  awk -v lat="$([[ $test == *lat ]] && echo 1 || echo 0)" '
    /Final:/ { if (lat) print $3; else printf "%.3f\n", $7 * 1048576 / 1e9 }' "$TMP/ucx.txt"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '%-22s %10s %10s %10s %10s %12s %12s  %s\n' test mapped cma tcp ucx best/tcp best/ucx path
row() {
  # ucx_perftest wants plain bytes; EXTRA: more ndkperf words (e.g. -e, event
  # mode) and UEXTRA more ucx_perftest words; UTEST "-": no UCX run
  local name=$1 test=$2 size=$3 utest=$4 unit=$5 usize=$6 shm=$7 extra=${8:-} uextra=${9:-}
  : > "$TMP/shm"; : > "$TMP/on"; : > "$TMP/off"; : > "$TMP/ucx"
  local path="?"
  for ((i = 0; i < REPS; i++)); do
    if [[ $shm == 1 ]]; then
      # shellcheck disable=SC2086
      read -r f path < <(ndk "$test" "$size" on --shm-buffers $extra)
      echo "$f" >> "$TMP/shm"
    fi
    # shellcheck disable=SC2086
    read -r f p2 < <(ndk "$test" "$size" on $extra)
    [[ $shm == 1 ]] || path=$p2
    echo "$f" >> "$TMP/on"
    # shellcheck disable=SC2086
    read -r f _ < <(ndk "$test" "$size" off $extra)
    echo "$f" >> "$TMP/off"
    if [[ $HAVE_UCX == 1 ]]; then [[ $utest == - ]] || ucx "$utest" "$usize" "$uextra" >> "$TMP/ucx"; fi
  done
  local sh on off u
  sh=$([[ -s $TMP/shm ]] && median < "$TMP/shm" || echo nan)
  on=$(median < "$TMP/on"); off=$(median < "$TMP/off")
  u=$([[ -s $TMP/ucx ]] && median < "$TMP/ucx" || echo nan)
  # Ratios say "how much better the best same-host figure is" (mapped if
  # measured, else CMA): bandwidth best/x, latency x/best, so above 1 is
  # better for both.
  python3 - "$name" "$unit" "$sh" "$on" "$off" "$u" "$path" <<'PY'
import math, sys
name, unit, sh, on, off, u, path = sys.argv[1:]
sh, on, off, u = float(sh), float(on), float(off), float(u)
lat = unit == "us"
best = on if math.isnan(sh) else sh
r1 = off / best if lat else best / off
r2 = (u / best if lat else best / u) if not math.isnan(u) else float("nan")
print(f"{name + ' [' + unit + ']':22s} {sh:10.3f} {on:10.3f} {off:10.3f} {u:10.3f} {r1:12.2f} {r2:12.2f}  {path}")
PY
}
row "write 1MiB" write_bw 1M ucp_put_bw GB/s 1048576 1
row "read 1MiB" read_bw 1M ucp_get GB/s 1048576 1
row "send 64KiB" send_bw 64K ucp_am_bw GB/s 65536 0
row "send_lat 8B" send_lat 8 ucp_am_lat us 8 0
# No UCX figure in event mode: ucx_perftest's am_lat does not sleep with
# "-E sleep" (it reported busy-poll latencies here).
row "send_lat 8B event" send_lat 8 - us 8 0 -e
echo "(ratios: above 1 means the fast path is better; median of $REPS interleaved runs," \
  "-D $DUR s each; mapped: --shm-buffers; ucx: UCX_TLS=posix,cma,self)"
