#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds one flavour of softndk.
#   scripts/build.sh [plain|asan|tsan|fuzz]   -> build/<flavour>
set -euo pipefail
flavour=${1:-plain}
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/build/$flavour"
# Our builds treat warnings as errors and build every component (a user's
# plain `cmake` build has no -Werror and no benchmarks: see CMakeLists.txt).
args=(-S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSOFTNDK_WERROR=ON
      -DBUILD_TESTING=ON -DSOFTNDK_BUILD_TOOLS=ON -DSOFTNDK_BUILD_BENCH=ON)
# ccache, where installed, makes rebuilds in other checkouts of the tree cheap
# (paths relative to the checkout: CCACHE_BASEDIR/NOHASHDIR below).
if command -v ccache >/dev/null; then
  args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
case "$flavour" in
  plain) ;;
  asan) args+=(-DSOFTNDK_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug) ;;
  tsan) args+=(-DSOFTNDK_SANITIZE=thread) ;;
  fuzz) args+=(-DSOFTNDK_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++) ;;
  *) echo "unknown flavour $flavour" >&2; exit 2 ;;
esac
cmake "${args[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
