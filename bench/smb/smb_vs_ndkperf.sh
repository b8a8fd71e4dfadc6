#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# smb_vs_ndkperf.sh - the SMB layer's overhead on this host (issue 29 item 7):
# `ndk-smb bench` against ndk-smbd beside ndkperf's RDMA bandwidth and
# latency, interleaved in one run, as ratios (docs/smb-direct-performance.md,
# "Performance on one host").
#
#   bench/smb/smb_vs_ndkperf.sh [BUILD_DIR] [-r REPS] [-D SECS] [-B BASE_BUILD_DIR]
#
# Like with like: the same transfer size (1 MiB) and the same depth (4
# I/Os outstanding: ndk-smb --iodepth 4, ndkperf -t 4 on both of its
# sides) on both sides of each bandwidth ratio, 4 KiB messages one at a time
# for the latency; the script prints these parameters with its figures.
# Each repetition runs, one after the other (two processes each, on
# 127.0.0.1, the library's defaults, so the same-host path):
#   ndk-smb bench --rw read  --bs 1M --iodepth 4  (server RDMA-Writes)  beside  ndkperf write_bw -s 1M -t 4
#     and the same READs from a second ndk-smbd with --staging-buffers 1
#     --no-map-reads (each READ pread() into one staging buffer and waits
#     for its Writes before its response: the earlier copy path), the A/B
#     of the default's Writes straight out of the file's mapped window
#   ndk-smb bench --rw write --bs 1M --iodepth 4  (server RDMA-Reads)   beside  ndkperf read_bw  -s 1M -t 4
#     and the same WRITEs to a third ndk-smbd started with --map-writes
#     (each WRITE RDMA-Read straight into the file's page cache through a
#     mapped window the process keeps per file; off by default), the A/B
#     of the mapped WRITEs (the first job's windows start cold, every
#     page's first store a page fault; the later jobs' are warm), on a file
#     of its own (bench3.bin),
#     and the same WRITEs to a fifth ndk-smbd started with --map-rewrites
#     16 (a page's first 16 WRITEs copied, the later ones mapped through
#     windows the process keeps across connections), the A/B of that policy
#     against the copy, on a file of its own (bench4.bin),
#     and the same WRITEs to the second ndk-smbd, also started with
#     --write-chunk 131072 (each WRITE RDMA-Read in 128 KiB pieces, each
#     pwrite()n while the next ones arrive; off by default), the A/B of
#     the pieced Reads
#   dd bs=1M of 64 MiB rewritten in place (conv=notrunc) in the share's file
#     system: the page cache's own write rate, the most any WRITE path
#     that ends in pwrite() can reach (docs/smb-direct-performance.md, ninth round)
#   ndk-smb bench --rw randread --bs 4k --iodepth 1 (inline, p50 clat)  beside  ndkperf send_lat -s 4096 (median)
# With -B, BASE_BUILD_DIR's ndk-smbd and ndk-smb (an earlier build, e.g. of
# main) run the same READ, WRITE and 4 KiB jobs in each repetition too, and the
# ratios are printed for both builds.
# and prints every pair, then the medians and the ratios: SMB bandwidth /
# RDMA bandwidth (goal >= 0.8) and SMB 4 KiB QD1 latency / send_lat (goal
# <= 3; also against send_lat's whole round trip, since ndkperf reports half
# a ping-pong and an SMB READ is a request and its answer). Every process
# runs under `timeout`; the whole run is bounded by
# REPS x (12 x SECS + ~20 s).
set -euo pipefail
BUILD=build/plain
REPS=3
DUR=2
if [[ $# -gt 0 && $1 != -* ]]; then BUILD=$1; shift; fi
BASE=""
while [[ $# -gt 0 ]]; do
  case $1 in
    -r) REPS=$2; shift 2 ;;
    -D) DUR=$2; shift 2 ;;
    -B) BASE=$2; shift 2 ;;
    *) echo "usage: $0 [BUILD_DIR] [-r REPS] [-D SECS] [-B BASE_BUILD_DIR]" >&2; exit 2 ;;
  esac
done
NDKPERF=$BUILD/tools/ndkperf/ndkperf
SMB=$BUILD/smb/client/ndk-smb
SMBD=$BUILD/tools/ndk-smbd/ndk-smbd
BSMB=$BASE/smb/client/ndk-smb
BSMBD=$BASE/tools/ndk-smbd/ndk-smbd
for b in "$NDKPERF" "$SMB" "$SMBD" ${BASE:+"$BSMB" "$BSMBD"}; do
  [[ -x $b ]] || { echo "$0: $b not built" >&2; exit 2; }
done
TMP=$(mktemp -d)
SRVS=()
cleanup() {
  local rc=$? p  # the run's own status, not the stopped servers'
  # A stopped server's status (timeout passes on the server's) is not the
  # run's: under `set -e` a failing `wait` here once made the script exit
  # 130 after printing its figures.
  for p in "${SRVS[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
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
    ((p >= ${SMB_PORT:-0} && p <= ${SMB_PORT:-0} + 4)) && continue
    [[ -z $(ss -Hltn "sport = :$p" 2>/dev/null) ]] && { echo "$p"; return 0; }
  done
  echo "$0: no free port found" >&2
  return 1
}

mkdir -p "$TMP/share"
echo "bench:Bench-pw-1" >"$TMP/users"
SMB_PORT=$(free_port)
SMB_PORT1=$((SMB_PORT + 1)) SMB_PORT2=$((SMB_PORT + 2)) SMB_PORT3=$((SMB_PORT + 3))
SMB_PORT4=$((SMB_PORT + 4))
LIFE=$((REPS * (12 * DUR + 60) + 60))
# --foreground: a stop reaches the server once (timeout otherwise signals
# it and then its whole process group: a second signal, which ndk-smbd
# takes as "quit at once", exit 130).
serve() {  # BINARY PORT ARGS...
  local bin=$1 port=$2
  shift 2
  timeout --foreground "$LIFE" "$bin" --share "$TMP/share" --users "$TMP/users" -p "$port" -q "$@" &
  SRVS+=($!)
  wait_listen "$port"
}
serve "$SMBD" "$SMB_PORT"
URL=//127.0.0.1:$SMB_PORT/share
serve "$SMBD" "$SMB_PORT1" --staging-buffers 1 --write-chunk 131072 --no-map-reads
URL1=//127.0.0.1:$SMB_PORT1/share
serve "$SMBD" "$SMB_PORT3" --map-writes
URL3=//127.0.0.1:$SMB_PORT3/share
serve "$SMBD" "$SMB_PORT4" --map-rewrites 16
URL4=//127.0.0.1:$SMB_PORT4/share
if [[ -n $BASE ]]; then
  serve "$BSMBD" "$SMB_PORT2"
  URL2=//127.0.0.1:$SMB_PORT2/share
fi

# ndk-smb bench ARGS... -> "BW_MBps P50_us"
smb_bench() {
  local out
  local bin=$SMB
  if [[ $1 == --base ]]; then bin=$BSMB; shift; fi
  out=$(timeout $((DUR + 60)) "$bin" -U bench -P Bench-pw-1 "$@")
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

# dd's rate (MB/s) rewriting a 64 MiB file of the share in place, 1 MiB
# at a time: what the page cache takes from one writer.
dd_rate() {
  timeout 60 dd if=/dev/zero of="$TMP/share/dd.bin" bs=1M count=64 conv=notrunc 2>&1 |
    python3 -c '
import re, sys
t = sys.stdin.read()
m = re.search(r"copied, ([0-9.e-]+) s", t)
print(f"{64 * 1048576 / float(m.group(1)) / 1e6:.1f}")'
}

# Lay the bench file out once (64 MiB, read back in every read run).
timeout 120 "$SMB" -U bench -P Bench-pw-1 --bs 1M --iodepth 4 "$URL" bench bench.bin --rw write \
  --size 64M --runtime 0 >/dev/null
dd_rate >/dev/null  # dd's file laid out too: each repetition rewrites it

echo "1 MiB bandwidth jobs: bs=1048576, 4 outstanding on both sides (ndk-smb --iodepth 4;" \
  "ndkperf -s 1M -t 4); latency: 4 KiB, one outstanding (ndk-smb --iodepth 1 randread p50;" \
  "ndkperf send_lat -s 4096 median); ${DUR} s per job, $REPS repetitions"
hdr=(rep smb_read smb_read_1buf rdma_write smb_write smb_write_mapped smb_write_rewr smb_write_128k
  rdma_read dd_write
  smb_4k_p50us send_lat_us)
[[ -n $BASE ]] && hdr+=(base_read base_write base_4k_p50us)
printf '%-4s' "${hdr[0]}"
printf ' %15s' "${hdr[@]:1}"
echo " (MB/s, us)"
declare -a R R1 W W1 W3 W4 RW RR DD L SL BR BW BL
for ((i = 1; i <= REPS; i++)); do
  read -r r _ < <(smb_bench --bs 1M --iodepth 4 "$URL" bench bench.bin --rw read --size 64M --runtime "$DUR")
  rw=$(perf write_bw 1M -t 4)
  read -r r1 _ < <(smb_bench --bs 1M --iodepth 4 "$URL1" bench bench.bin --rw read --size 64M --runtime "$DUR")
  read -r w _ < <(smb_bench --bs 1M --iodepth 4 "$URL" bench bench.bin --rw write --size 64M --runtime "$DUR")
  rr=$(perf read_bw 1M -t 4)
  dd=$(dd_rate)
  # Files of their own: two processes mapping the same file's pages made
  # the second one's stores ~50x slower on this host (sixth round).
  read -r w3 _ < <(smb_bench --bs 1M --iodepth 4 "$URL3" bench bench3.bin --rw write --size 64M --runtime "$DUR")
  read -r w4 _ < <(smb_bench --bs 1M --iodepth 4 "$URL4" bench bench4.bin --rw write --size 64M --runtime "$DUR")
  read -r w1 _ < <(smb_bench --bs 1M --iodepth 4 "$URL1" bench bench.bin --rw write --size 64M --runtime "$DUR")
  br=0 bw=0 bl=0
  if [[ -n $BASE ]]; then
    read -r br _ < <(smb_bench --base --bs 1M --iodepth 4 "$URL2" bench bench.bin --rw read --size 64M \
      --runtime "$DUR")
    read -r bw _ < <(smb_bench --base --bs 1M --iodepth 4 "$URL2" bench bench.bin --rw write --size 64M \
      --runtime "$DUR")
  fi
  read -r _ l < <(smb_bench --bs 4k --iodepth 1 "$URL" bench bench.bin --rw randread --size 64M --runtime "$DUR")
  sl=$(perf send_lat 4096)
  if [[ -n $BASE ]]; then
    read -r _ bl < <(smb_bench --base --bs 4k --iodepth 1 "$URL2" bench bench.bin --rw randread \
      --size 64M --runtime "$DUR")
  fi
  row=("$r" "$r1" "$rw" "$w" "$w3" "$w4" "$w1" "$rr" "$dd" "$l" "$sl")
  [[ -n $BASE ]] && row+=("$br" "$bw" "$bl")
  printf '%-4s' "$i"
  printf ' %15.1f' "${row[@]}"
  echo
  R+=("$r"); R1+=("$r1"); RW+=("$rw"); W+=("$w"); W1+=("$w1"); W3+=("$w3"); W4+=("$w4"); RR+=("$rr"); DD+=("$dd"); L+=("$l"); SL+=("$sl")
  BR+=("$br"); BW+=("$bw"); BL+=("$bl")
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${R[*]}" "${RW[*]}" "${W[*]}" "${RR[*]}" "${L[*]}" "${SL[*]}" "${R1[*]}" "${W1[*]}" \
  "${BW[*]}" "${BL[*]}" "${W3[*]}" "${W4[*]}" "${BR[*]}" "${DD[*]}" "$BASE" <<'PY'
import statistics as st, sys
r, rw, w, rr, l, sl, r1, w1, bw, bl, w3, w4, br, dd = ([float(x) for x in a.split()]
                                                       for a in sys.argv[1:15])
base = sys.argv[15]
m = st.median
def pairs(a, b, f=lambda x, y: x / y):
    return ", ".join(f"{f(x, y):.2f}" for x, y in zip(a, b))
print(f"medians: SMB read {m(r):.1f} MB/s (copied, 1 staging buffer: {m(r1):.1f}), RDMA Write {m(rw):.1f} "
      f"MB/s; SMB write {m(w):.1f} MB/s (in 128 KiB pieces: {m(w1):.1f}), RDMA Read "
      f"{m(rr):.1f} MB/s; SMB 4 KiB QD1 p50 {m(l):.1f} us, send_lat {m(sl):.2f} us")
print(f"ratio SMB read / RDMA Write  (1 MiB, QD4): {m(r) / m(rw):.2f}x  (goal >= 0.8; per pair: "
      f"{pairs(r, rw)})")
print(f"ratio SMB read, copied through 1 staging buffer / RDMA Write: {m(r1) / m(rw):.2f}x  "
      f"(per pair: {pairs(r1, rw)})")
print(f"ratio SMB read, mapped (default) / copied through 1 staging buffer: {m(r) / m(r1):.2f}x  "
      f"(per pair: {pairs(r, r1)})")
print(f"ratio SMB write / RDMA Read  (1 MiB, QD4): {m(w) / m(rr):.2f}x  (goal >= 0.8; per pair: "
      f"{pairs(w, rr)})")
print(f"ratio dd write (the page cache's own rate) / RDMA Read: {m(dd) / m(rr):.2f}x  (per pair: "
      f"{pairs(dd, rr)})")
print(f"ratio SMB write / min(RDMA Read, dd write): {m(w) / min(m(rr), m(dd)):.2f}x  (per pair: "
      f"{pairs(w, [min(x, y) for x, y in zip(rr, dd)])})")
print(f"ratio SMB write, --map-writes / RDMA Read: {m(w3) / m(rr):.2f}x  (per pair: "
      f"{pairs(w3, rr)})")
print(f"ratio SMB write, --map-writes / default: {m(w3) / m(w):.2f}x  (per pair: "
      f"{pairs(w3, w)})")
print(f"ratio SMB write, --map-rewrites 16 / RDMA Read: {m(w4) / m(rr):.2f}x  (per pair: "
      f"{pairs(w4, rr)})")
print(f"ratio SMB write, --map-rewrites 16 / default: {m(w4) / m(w):.2f}x  (per pair: "
      f"{pairs(w4, w)})")
print(f"ratio SMB write, 128 KiB pieces / RDMA Read: {m(w1) / m(rr):.2f}x  (per pair: "
      f"{pairs(w1, rr)})")
print(f"ratio SMB write, 128 KiB pieces / whole: {m(w1) / m(w):.2f}x  (per pair: {pairs(w1, w)})")
print(f"ratio SMB 4 KiB QD1 p50 / send_lat median:  {m(l) / m(sl):.2f}x  (goal <= 3; per pair: "
      f"{pairs(l, sl)})")
# send_lat is half a ping-pong (perftest's convention); an SMB READ's
# completion latency is a whole request/response round trip.
print(f"ratio SMB 4 KiB QD1 p50 / send_lat round trip (2 x median): {m(l) / (2 * m(sl)):.2f}x  "
      f"(per pair: {pairs(l, sl, lambda x, y: x / (2 * y))})")
if base:
    print(f"base build {base}: SMB read {m(br):.1f} MB/s, SMB write {m(bw):.1f} MB/s, "
          f"4 KiB QD1 p50 {m(bl):.1f} us")
    print(f"ratio base SMB read / RDMA Write (1 MiB, QD4): {m(br) / m(rw):.2f}x  (per pair: "
          f"{pairs(br, rw)})")
    print(f"ratio base SMB write / RDMA Read (1 MiB, QD4): {m(bw) / m(rr):.2f}x  (per pair: "
          f"{pairs(bw, rr)})")
    print(f"ratio base SMB 4 KiB QD1 p50 / send_lat median: {m(bl) / m(sl):.2f}x  (per pair: "
          f"{pairs(bl, sl)})")
    print(f"ratio SMB read, this build / base: {m(r) / m(br):.2f}x  (per pair: {pairs(r, br)})")
    print(f"ratio SMB write, this build / base: {m(w) / m(bw):.2f}x  (per pair: {pairs(w, bw)})")
    print(f"ratio SMB 4 KiB QD1 p50, this build / base: {m(l) / m(bl):.2f}x  (per pair: "
          f"{pairs(l, bl)})")
PY
