#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smb_vs_ndkperf.sh - the SMB layer's overhead on this host (issue 29 item 7):
# `ndk-smb bench` against ndk-smbd beside ndkperf's RDMA bandwidth and
# latency, interleaved in one run, as ratios (docs/smb-direct.md,
# "Performance").
#
#   bench/smb/smb_vs_ndkperf.sh [BUILD_DIR] [-r REPS] [-D SECS]
#
# Each repetition runs, one after the other (two processes each, on
# 127.0.0.1, the library's defaults, so the same-host path):
#   ndk-smb bench --rw read  --bs 1M --iodepth 4  (server RDMA-Writes)  beside  ndkperf write_bw -s 1M -t 4
#     and the same READs from a second ndk-smbd with --staging-buffers 1
#     (each READ waits for its Writes before its response: the earlier
#     server), the A/B of the server's posted Writes
#   ndk-smb bench --rw write --bs 1M --iodepth 4  (server RDMA-Reads)   beside  ndkperf read_bw  -s 1M -t 4
#   ndk-smb bench --rw randread --bs 4k --iodepth 1 (inline, p50 clat)  beside  ndkperf send_lat -s 4096 (median)
# and prints every pair, then the medians and the ratios: SMB bandwidth /
# RDMA bandwidth (goal >= 0.8) and SMB 4 KiB QD1 latency / send_lat (goal
# <= 3; also against send_lat's whole round trip, since ndkperf reports half
# a ping-pong and an SMB READ is a request and its answer). Every process
# runs under `timeout`; the whole run is bounded by
# REPS x (7 x SECS + ~10 s).
set -euo pipefail
BUILD=build/plain
REPS=3
DUR=2
if [[ $# -gt 0 && $1 != -* ]]; then BUILD=$1; shift; fi
while [[ $# -gt 0 ]]; do
  case $1 in
    -r) REPS=$2; shift 2 ;;
    -D) DUR=$2; shift 2 ;;
    *) echo "usage: $0 [BUILD_DIR] [-r REPS] [-D SECS]" >&2; exit 2 ;;
  esac
done
NDKPERF=$BUILD/tools/ndkperf/ndkperf
SMB=$BUILD/smb/client/ndk-smb
SMBD=$BUILD/tools/ndk-smbd/ndk-smbd
for b in "$NDKPERF" "$SMB" "$SMBD"; do
  [[ -x $b ]] || { echo "$0: $b not built" >&2; exit 2; }
done
TMP=$(mktemp -d)
SRV="" SRV1=""
cleanup() {
  local rc=$?  # the run's own status, not the stopped servers' (130/143)
  [[ -n $SRV ]] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
  [[ -n $SRV1 ]] && kill "$SRV1" 2>/dev/null && wait "$SRV1" 2>/dev/null
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT

# Waits (bounded) until something listens on TCP PORT of 127.0.0.1.
wait_listen() {
  local i
  for ((i = 0; i < 200; i++)); do
    [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]] && return 0
    sleep 0.05
  done
  echo "$0: nothing listens on port $1" >&2
  return 1
}

# A port below the ephemeral range (32768-) on which nothing listens and
# that is not one of this run's servers' (a random pick once landed on a
# port something else listened on: "not an ndkperf server").
free_port() {
  local p i
  for ((i = 0; i < 100; i++)); do
    p=$((20000 + RANDOM % 12000))
    [[ $p == "${SMB_PORT:-}" || $p == "${SMB_PORT1:-}" ]] && continue
    [[ -z $(ss -Hltn "sport = :$p" 2>/dev/null) ]] && { echo "$p"; return 0; }
  done
  echo "$0: no free port found" >&2
  return 1
}

mkdir -p "$TMP/share"
echo "bench:Bench-pw-1" >"$TMP/users"
SMB_PORT=$(free_port)
SMB_PORT1=$((SMB_PORT + 1))
timeout $((REPS * (6 * DUR + 30) + 60)) "$SMBD" --share "$TMP/share" --users "$TMP/users" \
  -p "$SMB_PORT" -q &
SRV=$!
wait_listen "$SMB_PORT"
URL=//127.0.0.1:$SMB_PORT/share
timeout $((REPS * (6 * DUR + 30) + 60)) "$SMBD" --share "$TMP/share" --users "$TMP/users" \
  -p "$SMB_PORT1" -q --staging-buffers 1 &
SRV1=$!
wait_listen "$SMB_PORT1"
URL1=//127.0.0.1:$SMB_PORT1/share

# ndk-smb bench ARGS... -> "BW_MBps P50_us"
smb_bench() {
  local out
  out=$(timeout $((DUR + 60)) "$SMB" -U bench -P Bench-pw-1 "$@")
  python3 -c '
import re, sys
t = sys.stdin.read()
bw = re.search(r"\(([0-9.]+)MB/s\)", t).group(1)
p50 = re.search(r"p50=([0-9.]+)", t).group(1)
print(bw, p50)' <<<"$out"
}

# ndkperf TEST SIZE ARGS... -> MB/s (bw) or median us (lat)
perf() {
  local test=$1 size=$2 port out
  port=$(free_port)
  shift 2
  timeout $((DUR + 60)) "$NDKPERF" "$test" --server -d 127.0.0.1 -p "$port" -s "$size" -D "$DUR" \
    --quiet "$@" >/dev/null 2>&1 &
  local s=$!
  wait_listen "$port"
  out=$(timeout $((DUR + 60)) "$NDKPERF" "$test" 127.0.0.1 -p "$port" -s "$size" -D "$DUR" \
    --json --quiet "$@")
  wait "$s" || true
  python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
print(r["latency_us"]["median"] if sys.argv[1].endswith("_lat") else r["mbps"])' "$test" <<<"$out"
}

# Lay the bench file out once (64 MiB, read back in every read run).
timeout 120 "$SMB" -U bench -P Bench-pw-1 --bs 1M --iodepth 4 "$URL" bench bench.bin --rw write \
  --size 64M --runtime 0 >/dev/null

printf '%-4s %14s %14s %14s %14s %14s %12s %12s\n' rep smb_read_MBps smb_read_1buf rdma_write_MBps \
  smb_write_MBps rdma_read_MBps smb_4k_p50_us send_lat_us
declare -a R R1 W RW RR L SL
for ((i = 1; i <= REPS; i++)); do
  read -r r _ < <(smb_bench --bs 1M --iodepth 4 "$URL" bench bench.bin --rw read --size 64M --runtime "$DUR")
  rw=$(perf write_bw 1M -t 4)
  read -r r1 _ < <(smb_bench --bs 1M --iodepth 4 "$URL1" bench bench.bin --rw read --size 64M --runtime "$DUR")
  read -r w _ < <(smb_bench --bs 1M --iodepth 4 "$URL" bench bench.bin --rw write --size 64M --runtime "$DUR")
  rr=$(perf read_bw 1M -t 4)
  read -r _ l < <(smb_bench --bs 4k --iodepth 1 "$URL" bench bench.bin --rw randread --size 64M --runtime "$DUR")
  sl=$(perf send_lat 4096)
  printf '%-4s %14.1f %14.1f %14.1f %14.1f %14.1f %12.1f %12.2f\n' "$i" "$r" "$r1" "$rw" "$w" "$rr" \
    "$l" "$sl"
  R+=("$r"); R1+=("$r1"); RW+=("$rw"); W+=("$w"); RR+=("$rr"); L+=("$l"); SL+=("$sl")
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${R[*]}" "${RW[*]}" "${W[*]}" "${RR[*]}" "${L[*]}" "${SL[*]}" "${R1[*]}" <<'PY'
import statistics as st, sys
r, rw, w, rr, l, sl, r1 = ([float(x) for x in a.split()] for a in sys.argv[1:8])
m = st.median
print(f"medians: SMB read {m(r):.1f} MB/s (1 staging buffer: {m(r1):.1f}), RDMA Write {m(rw):.1f} "
      f"MB/s; SMB write {m(w):.1f} MB/s, RDMA Read {m(rr):.1f} MB/s; SMB 4 KiB QD1 p50 {m(l):.1f} us, "
      f"send_lat {m(sl):.2f} us")
print(f"ratio SMB read / RDMA Write  (1 MiB, QD4): {m(r) / m(rw):.2f}x  (goal >= 0.8; per pair: "
      + ", ".join(f"{a / b:.2f}" for a, b in zip(r, rw)) + ")")
print(f"ratio SMB read, 1 staging buffer / RDMA Write: {m(r1) / m(rw):.2f}x  (per pair: "
      + ", ".join(f"{a / b:.2f}" for a, b in zip(r1, rw)) + ")")
print(f"ratio SMB read, posted Writes / 1 staging buffer: {m(r) / m(r1):.2f}x  (per pair: "
      + ", ".join(f"{a / b:.2f}" for a, b in zip(r, r1)) + ")")
print(f"ratio SMB write / RDMA Read  (1 MiB, QD4): {m(w) / m(rr):.2f}x  (goal >= 0.8; per pair: "
      + ", ".join(f"{a / b:.2f}" for a, b in zip(w, rr)) + ")")
print(f"ratio SMB 4 KiB QD1 p50 / send_lat median:  {m(l) / m(sl):.2f}x  (goal <= 3; per pair: "
      + ", ".join(f"{a / b:.2f}" for a, b in zip(l, sl)) + ")")
# send_lat is half a ping-pong (perftest's convention); an SMB READ's
# completion latency is a whole request/response round trip.
print(f"ratio SMB 4 KiB QD1 p50 / send_lat round trip (2 x median): {m(l) / (2 * m(sl)):.2f}x  "
      "(per pair: " + ", ".join(f"{a / (2 * b):.2f}" for a, b in zip(l, sl)) + ")")
PY
