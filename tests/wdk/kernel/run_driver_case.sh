#!/usr/bin/env bash
# Runs softndk-wdk-run on a driver and checks its exit status and stderr.
#   run_driver_case.sh <launcher> <expected-exit> <stderr-regex|-> [launcher args...]
set -uo pipefail
launcher=$1 expected=$2 pattern=$3
shift 3
err=$(mktemp)
trap 'rm -f "$err"' EXIT
timeout 60 "$launcher" "$@" 2>"$err"
code=$?
if [ "$code" -ne "$expected" ]; then
  echo "exit status $code, expected $expected; stderr:"
  cat "$err"
  exit 1
fi
if [ "$pattern" != "-" ] && ! grep -Eq -- "$pattern" "$err"; then
  echo "stderr does not match /$pattern/:"
  cat "$err"
  exit 1
fi
echo "exit $code as expected"
