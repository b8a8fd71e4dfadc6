#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs softndk from build dir $1 into a throw-away prefix, builds the
# porting driver in $2 against it as its own CMake project (the lines of
# docs/wdk.md), and runs it with the installed softndk-wdk-run, its
# parameters given by --registry and --reg. Checks the exit status and what
# the driver printed.
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
# The runtime libraries (libsoftndk, the kit), the development files and the
# host (softndk-wdk-run, in the tools component) are all a driver needs.
for component in lib wdk dev tools; do
  cmake --install "$build" --prefix "$prefix" --component "$component" >/dev/null
done
libdir=$(dirname "$(find "$prefix" -name 'libsoftndk_wdk.so' | head -1)")
cmake -S "$src" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/build" -j2
cat > "$work/params.reg" <<'REG'
Windows Registry Editor Version 5.00

[Parameters]
"Port"=dword:000012b7
"Endpoint"="127.0.0.1:4791"
REG
set +e
LD_LIBRARY_PATH=$libdir timeout 60 "$prefix/bin/softndk-wdk-run" "$work/build/porting_driver.so" \
  --name PortingDriver --timeout 30 --registry "$work/params.reg" \
  --reg 'Parameters\Greeting=sz:hello from the registry' >"$work/out.txt" 2>&1
rc=$?
set -e
cat "$work/out.txt"
[ "$rc" -eq 0 ] || { echo "porting_driver: softndk-wdk-run exited $rc, expected 0"; exit 1; }
for want in \
  "porting_driver: registry Port=4791 Endpoint=127.0.0.1:4791 Greeting=hello from the registry Flags=0x10" \
  "porting_driver: endpoint 127.0.0.1 port 4791" \
  "porting_driver: device created, NDK adapter max transfer" \
  "porting_driver: unloaded"; do
  grep -qF "$want" "$work/out.txt" || { echo "porting_driver: missing output: $want"; exit 1; }
done
echo "porting driver: OK"
