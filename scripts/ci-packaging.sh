#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI: the library-only build and the Debian packages, checked in a clean
# Debian 12 chroot made from the Debian archive with mmdebstrap (root mode,
# like ../shared/interop/siw-peer). Inside it packaging/chroot-check.sh
#   1. configures and builds the library alone with only a compiler, CMake,
#      pkg-config, ISA-L and libmnl installed;
#   2. adds CLI11 and nlohmann-json and makes the packages (scripts/package);
#   3. removes every build dependency but the compiler and CMake, installs
#      the packages with `apt-get install ./*.deb` (apt must bring what they
#      depend on), builds and runs a pkg-config consumer and a
#      find_package(softndk) consumer, and runs the installed tools.
# The chroot lives in build/ci-packaging (TMPDIR) and is removed at the end;
# nothing is cached. The packages are kept in build/ci-packaging/deb.
#   SOFTNDK_CI_MIRROR / SOFTNDK_CI_SECURITY_MIRROR override the archive.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/build/ci-packaging"
mirror=${SOFTNDK_CI_MIRROR:-http://deb.debian.org/debian}
security=${SOFTNDK_CI_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
[ "$(id -u)" = 0 ] || { echo "ci-packaging: needs root (mmdebstrap, chroot)" >&2; exit 2; }
if ! command -v mmdebstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null
fi
rm -rf "$work" && mkdir -p "$work/tmp" "$work/deb"
t0=$(date +%s)
# The source as a clean clone has it (tracked files plus new, not ignored).
git -C "$root" ls-files -z -co --exclude-standard |
  tar -C "$root" --null -T - -cf "$work/src.tar"

# What the library-only build may need, nothing more (see CMakeLists.txt).
pkgs=g++,make,cmake,pkg-config,libisal-dev,libmnl-dev
log="$work/mmdebstrap.log"
if ! TMPDIR="$work/tmp" mmdebstrap --variant=minbase --include="$pkgs" \
    --aptopt='Apt::Install-Recommends "false"' \
    --customize-hook="mkdir \"\$1/src\" && tar -C \"\$1/src\" -xf '$work/src.tar'" \
    --customize-hook="chroot \"\$1\" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 bash /src/packaging/chroot-check.sh" \
    --customize-hook="cp \"\$1\"/debs/*.deb '$work/deb/'" \
    bookworm /dev/null \
    "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
    "deb $security bookworm-security main" >"$log" 2>&1; then
  # The check's own lines first, then mmdebstrap's tail.
  grep -E '^(===|ci-|FAIL|OK|lintian: )' "$log" || true
  tail -40 "$log"
  echo "ci-packaging: FAILED after $(( $(date +%s) - t0 )) s (log: $log)"
  exit 1
fi
grep -E '^(===|ci-|OK|lintian: )' "$log" || true
rm -rf "$work/tmp" "$work/src.tar"
echo "ci-packaging: passed in $(( $(date +%s) - t0 )) s; packages in $work/deb (log: $log)"
