#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smb_ab_qd1.sh - A/B of two builds' ndk-smbd + ndk-smb on the 4 KiB QD1
# random-read latency (p50 and p99), interleaved pair by pair on 127.0.0.1,
# then the medians and the B/A ratios
# (docs/smb-direct-performance.md, "Performance on one host").
#
#   bench/smb/smb_ab_qd1.sh A_DIR B_DIR [-r PAIRS] [-D SECS]
#
# A_DIR and B_DIR each hold ndk-smbd and ndk-smb (copy a build's
# tools/ndk-smbd/ndk-smbd and smb/client/ndk-smb there, or give a build
# directory). Every process runs under `timeout`.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 A_DIR B_DIR [-r PAIRS] [-D SECS]" >&2; exit 2; }
A=$1 B=$2
shift 2
PAIRS=5 DUR=2
while [[ $# -gt 0 ]]; do
  case $1 in
    -r) PAIRS=$2; shift 2 ;;
    -D) DUR=$2; shift 2 ;;
    *) echo "usage: $0 A_DIR B_DIR [-r PAIRS] [-D SECS]" >&2; exit 2 ;;
  esac
done
bin() {  # DIR NAME -> the binary (flat copy or build directory)
  if [[ -x $1/$2 ]]; then echo "$1/$2"; elif [[ $2 == ndk-smbd ]]; then echo "$1/tools/ndk-smbd/ndk-smbd"
  else echo "$1/smb/client/ndk-smb"; fi
}
for d in "$A" "$B"; do
  for n in ndk-smbd ndk-smb; do
    [[ -x $(bin "$d" $n) ]] || { echo "$0: no $n in $d" >&2; exit 2; }
  done
done
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/share"
echo "bench:Bench-pw-1" >"$TMP/users"
PORT=$((20000 + RANDOM % 20000))
for i in 0 1; do
  d=$([[ $i == 0 ]] && echo "$A" || echo "$B")
  timeout $((PAIRS * (2 * DUR + 20) + 60)) "$(bin "$d" ndk-smbd)" --share "$TMP/share" \
    --users "$TMP/users" -p $((PORT + i)) -q &
  PIDS+=($!)
done
for i in 0 1; do
  for ((k = 0; k < 200; k++)); do
    [[ -n $(ss -Hltn "sport = :$((PORT + i))" 2>/dev/null) ]] && break
    sleep 0.05
  done
done
timeout 120 "$(bin "$B" ndk-smb)" -U bench -P Bench-pw-1 --bs 1M "//127.0.0.1:$((PORT + 1))/share" \
  bench b.bin --rw write --size 16M --runtime 0 >/dev/null
lat() {  # DIR PORT -> "P50 P99"
  timeout $((DUR + 60)) "$(bin "$1" ndk-smb)" -U bench -P Bench-pw-1 --bs 4k --iodepth 1 \
    "//127.0.0.1:$2/share" bench b.bin --rw randread --size 16M --runtime "$DUR" |
    sed -n 's/.*p50=\([0-9.]*\), p99=\([0-9.]*\).*/\1 \2/p'
}
echo "pair A_p50_us A_p99_us B_p50_us B_p99_us load"
ROWS=()
for ((i = 1; i <= PAIRS; i++)); do
  a=$(lat "$A" "$PORT")
  b=$(lat "$B" $((PORT + 1)))
  echo "$i $a $b $(cut -d' ' -f1 /proc/loadavg)"
  ROWS+=("$a $b")
done
printf '%s\n' "${ROWS[@]}" | python3 -c '
import statistics as st, sys
r = [[float(x) for x in l.split()] for l in sys.stdin if l.strip()]
m = [st.median(c) for c in zip(*r)]
print(f"medians: A p50 {m[0]:.0f} us, p99 {m[1]:.0f} us; B p50 {m[2]:.0f} us, p99 {m[3]:.0f} us")
print(f"ratio B/A: p50 {m[2] / m[0]:.2f}x (pairs " + ", ".join(f"{x[2] / x[0]:.2f}" for x in r) +
      f"), p99 {m[3] / m[1]:.2f}x (pairs " + ", ".join(f"{x[3] / x[1]:.2f}" for x in r) + ")")'

