#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# clang-format check (default) or fix (--fix) over every C/C++ file we own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.h' '*.hpp' '*.cc' '*.c' '*.cpp')
[ ${#files[@]} -gt 0 ] || exit 0
if [ "${1:-}" = "--fix" ]; then clang-format -i "${files[@]}"; else clang-format --dry-run -Werror "${files[@]}"; fi
