#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages softndk needs to build, test and benchmark
# (`scripts/deps.sh`), or only what scripts/package needs to build the
# library and the tools and package them (`scripts/deps.sh package`).
# Runs apt-get only when something is missing; needs root for that.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang clang-format libclang-rt-14-dev
      libgtest-dev libgmock-dev libbenchmark-dev libisal-dev libmnl-dev
      libcli11-dev nlohmann-json3-dev libpcap-dev libfabric-dev
      nettle-dev tshark gnuplot-nox iperf3 ucx-utils iproute2 python3 libibverbs-dev librdmacm-dev jq file)
if [ "${1:-}" = package ]; then
  pkgs=(g++ make cmake pkg-config dpkg-dev file libisal-dev libmnl-dev libcli11-dev
        nlohmann-json3-dev libibverbs-dev librdmacm-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
