#!/usr/bin/env bash
# Configures and builds one flavour of softndk.
#   scripts/build.sh [plain|asan|tsan|fuzz]   -> build/<flavour>
set -euo pipefail
flavour=${1:-plain}
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/build/$flavour"
args=(-S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo)
case "$flavour" in
  plain) ;;
  asan) args+=(-DSOFTNDK_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug) ;;
  tsan) args+=(-DSOFTNDK_SANITIZE=thread) ;;
  fuzz) args+=(-DSOFTNDK_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++) ;;
  *) echo "unknown flavour $flavour" >&2; exit 2 ;;
esac
cmake "${args[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
