#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer harnesses and runs each for a bounded time.
#   scripts/fuzz.sh [seconds-per-harness]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-30}
"$root/scripts/build.sh" fuzz
shopt -s nullglob
for f in "$root"/build/fuzz/fuzz/*_fuzz; do
  name=$(basename "$f")
  corpus="$root/build/fuzz/corpus/$name"; mkdir -p "$corpus"
  seeds="$root/fuzz/seeds/${name%_fuzz}"
  echo "fuzz: $name for ${secs}s"
  "$f" -max_total_time="$secs" -print_final_stats=0 "$corpus" $( [ -d "$seeds" ] && echo "$seeds" ) 2>&1 | tail -3
done
