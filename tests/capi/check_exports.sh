#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shared library's exports are its C ABI (docs/abi.md): every SoftNdk*
# function declared in softndk/softndk.h is exported at version SOFTNDK_0,
# and nothing else is (src/libsoftndk.map).
#   check_exports.sh LIBSOFTNDK_SO SOFTNDK_H
set -euo pipefail
lib=$1 header=$2
mapfile -t declared < <(grep -oE '^[A-Za-z_ *]+[ *](SoftNdk[A-Za-z0-9]+)\(' "$header" |
  grep -oE 'SoftNdk[A-Za-z0-9]+' | sort -u)
mapfile -t exported < <(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^SOFTNDK_0$' | sort -u)
fail=0
# Membership without a pipe: `printf | grep -q` under pipefail fails when
# grep exits at the first match and printf dies of SIGPIPE.
declare -A is_declared is_exported
for f in "${declared[@]}"; do is_declared[$f]=1; done
for s in "${exported[@]}"; do is_exported[$s]=1; done
for f in "${declared[@]}"; do
  [ -n "${is_exported[$f@@SOFTNDK_0]:-}" ] ||
    { echo "FAIL: $f is declared in softndk.h but not exported as $f@@SOFTNDK_0"; fail=1; }
done
for s in "${exported[@]}"; do
  [ -n "${is_declared[${s%@@SOFTNDK_0}]:-}" ] ||
    { echo "FAIL: $s is exported but is not a function of softndk.h"; fail=1; }
done
[ ${#declared[@]} -gt 0 ] || { echo "FAIL: no declarations found in $header"; fail=1; }
[ $fail = 0 ] && echo "exports: the ${#declared[@]} functions of softndk.h, nothing else"
exit $fail
