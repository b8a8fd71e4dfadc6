#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs softndk-wdk-run on a driver and checks its exit status and stderr.
#   run_driver_case.sh <launcher> <expected-exit> <stderr-regexes|-> [launcher args...]
# <stderr-regexes>: one or more extended regexes separated by ' &&& ', each
# of which must match somewhere in stderr.
set -uo pipefail
launcher=$1 expected=$2 patterns=$3
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
if [ "$patterns" != "-" ]; then
  rest=$patterns
  while [ -n "$rest" ]; do
    pattern=${rest%% &&& *}
    if [ "$pattern" = "$rest" ]; then rest=""; else rest=${rest#* &&& }; fi
    if ! grep -Eq -- "$pattern" "$err"; then
      echo "stderr does not match /$pattern/:"
      cat "$err"
      exit 1
    fi
  done
fi
echo "exit $code as expected"
