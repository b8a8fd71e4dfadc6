#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The exit status table of docs/wdk.md ("| code | meaning |" rows after the
# "softndk-wdk-run exit status" marker) lists exactly the statuses
# softndk-wdk-run --help prints (its kExitCodes table).
#   check_exit_codes.sh <softndk-wdk-run> <docs/wdk.md>
set -euo pipefail
launcher=$1 doc=$2
from_code=$("$launcher" --help | awk '/^exit status:/ { on = 1; next } on && $1 ~ /^[0-9]+$/ { print $1 }' | sort -n | tr '\n' ' ')
from_doc=$(awk '/<!-- softndk-wdk-run exit status -->/ { on = 1; next }
  on && /^\| *[0-9]+ *\|/ { split($0, f, "|"); gsub(/ /, "", f[2]); print f[2]; next }
  on && /^$/ && seen { exit } on && /^\|/ { seen = 1 }' "$doc" | sort -n | tr '\n' ' ')
if [ -z "$from_doc" ]; then
  echo "no exit status table after '<!-- softndk-wdk-run exit status -->' in $doc"
  exit 1
fi
if [ "$from_code" != "$from_doc" ]; then
  echo "softndk-wdk-run --help lists: $from_code"
  echo "$doc lists:            $from_doc"
  exit 1
fi
echo "exit statuses documented: $from_code"
