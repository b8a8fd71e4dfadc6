#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Starts softndk-wdk-run, sends it signals on a schedule, and checks its exit
# status, its stderr and how long it took.
#   run_signal_case.sh <launcher> <expected-exit> <stderr-regex> <ready-regex|->
#                      <schedule> <max-seconds> [launcher args...]
# <ready-regex>: the schedule starts when stderr matches it (a loaded machine
# may take a while to start the launcher); "-": at once.
# <schedule>: "SECONDS:SIGNAL,..." (e.g. "0.5:INT,0.8:INT"), times from ready;
# "none" sends nothing.
set -uo pipefail
launcher=$1 expected=$2 pattern=$3 ready=$4 schedule=$5 max=$6
shift 6
err=$(mktemp)
trap 'rm -f "$err"' EXIT
start=$(date +%s.%N)
timeout 60 "$launcher" "$@" 2>"$err" &
pid=$!
# The launcher itself (timeout execs nothing: signal its child).
for _ in $(seq 300); do
  child=$(pgrep -P "$pid" | head -1)
  if [ -n "$child" ] && { [ "$ready" = - ] || grep -Eq -- "$ready" "$err"; }; then break; fi
  sleep 0.05
done
target=${child:-$pid}
elapsed=0
steps=()
[ "$schedule" = none ] || IFS=, read -ra steps <<<"$schedule"
for step in "${steps[@]}"; do
  at=${step%%:*} sig=${step##*:}
  wait_s=$(awk -v a="$at" -v e="$elapsed" 'BEGIN { d = a - e; print (d > 0 ? d : 0) }')
  sleep "$wait_s"
  elapsed=$at
  kill -s "$sig" "$target" 2>/dev/null || true
done
wait "$pid"
code=$?
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
if [ "$code" -ne "$expected" ]; then
  echo "exit status $code, expected $expected (after ${took} s); stderr:"
  cat "$err"
  exit 1
fi
if awk -v t="$took" -v m="$max" 'BEGIN { exit !(t > m) }'; then
  echo "took ${took} s, more than ${max} s; stderr:"
  cat "$err"
  exit 1
fi
if [ "$pattern" != "-" ] && ! grep -Eq -- "$pattern" "$err"; then
  echo "stderr does not match /$pattern/:"
  cat "$err"
  exit 1
fi
echo "exit $code after ${took} s as expected"
