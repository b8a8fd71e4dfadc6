#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs softndk from build dir $1 into a throw-away prefix and builds the
# consumer in $2 against it: with find_package(softndk) and with pkg-config.
# Runs both programs (they open "lo").
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libsoftndk.so' | head -1)")

# 1. CMake package config.
cmake -S "$src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" -j2 >/dev/null
LD_LIBRARY_PATH=$libdir "$work/cmake/consumer_cmake"
LD_LIBRARY_PATH=$libdir "$work/cmake/consumer_cpp"

# 2. pkg-config. softndk.pc finds its prefix from its own location, so a
# relocated install (cmake --install --prefix) works as is.
export PKG_CONFIG_PATH=$libdir/pkgconfig
pc="pkg-config"
[ "$($pc --variable=prefix softndk)" -ef "$prefix" ] || { echo "softndk.pc prefix is not $prefix"; exit 1; }
cc -std=c11 -Wall -Werror $($pc --cflags softndk) "$src/consumer.c" \
  -o "$work/consumer_pc" $($pc --libs softndk)
LD_LIBRARY_PATH=$libdir "$work/consumer_pc"
echo "install consumer: OK"
