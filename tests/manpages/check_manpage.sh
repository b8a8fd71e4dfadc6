#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Keeps a tool's manual page in step with its command line:
#   check_manpage.sh TOOL_BINARY PAGE.1 VERSION
# 1. every option --help lists is described in the page's OPTIONS section;
# 2. every option the OPTIONS section describes is one --help lists (no
#    stale entries);
# 3. --version exits 0 and prints "<tool> (softndk) VERSION".
set -euo pipefail
bin=$1 page=$2 version=$3
tool=$(basename "$bin")
fail=0

help=$("$bin" --help) || { echo "FAIL: $tool --help exited $?"; exit 1; }
# CLI11 lists an option as "  -s,--size UINT ...": the first field of lines
# that start with blanks and a dash, split at commas.
mapfile -t help_opts < <(printf '%s\n' "$help" | awk '/^  -/ {print $1}' | tr ',' '\n' |
  grep -E '^--?[A-Za-z]' | sort -u)
[ ${#help_opts[@]} -gt 0 ] || { echo "FAIL: no options found in $tool --help"; exit 1; }

# The OPTIONS section with roff's \- as plain dashes; its .TP tags are the
# lines right after each .TP.
options=$(sed 's/\\-/-/g' "$page" | awk '/^\.SH /{on = ($2 == "OPTIONS")} on')
tags=$(printf '%s\n' "$options" | awk 'tp {print; tp = 0} /^\.TP/ {tp = 1}')
mapfile -t page_opts < <(printf '%s\n' "$tags" | grep -oE '(^|[ "])--?[A-Za-z][A-Za-z0-9_-]*' |
  sed 's/^[ "]*//' | grep -vE '^\.' | sort -u)

# Membership without a pipe: `printf | grep -q` under pipefail fails when
# grep exits at the first match and printf then dies of SIGPIPE (it did).
declare -A in_help in_page
for o in "${help_opts[@]}"; do in_help[$o]=1; done
for o in "${page_opts[@]}"; do in_page[$o]=1; done
for o in "${help_opts[@]}"; do
  [ -n "${in_page[$o]:-}" ] ||
    { echo "FAIL: $tool: option $o of --help is not described in $(basename "$page")"; fail=1; }
done
for o in "${page_opts[@]}"; do
  [ -n "${in_help[$o]:-}" ] ||
    { echo "FAIL: $tool: $(basename "$page") describes $o, which --help does not list"; fail=1; }
done

out=$("$bin" --version) || { echo "FAIL: $tool --version exited $?"; fail=1; }
want="$tool (softndk) $version"
[ "$out" = "$want" ] || { echo "FAIL: $tool --version printed '$out', want '$want'"; fail=1; }

[ $fail = 0 ] && echo "$tool: ${#help_opts[@]} options in --help and $(basename "$page") agree; --version: $out"
exit $fail
