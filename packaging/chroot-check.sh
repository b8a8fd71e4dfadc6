#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside the clean chroot of scripts/ci-packaging.sh (source in /src).
# Each step prints "=== what (seconds)"; any failure ends the script non-zero.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
t0=$(date +%s)
step() { echo "=== $* ($(( $(date +%s) - t0 ))s)"; }
install() { apt-get install -y -q --no-install-recommends "$@" >/dev/null; }
b=/src/build/package  # the build directory scripts/package uses
pkgs=(libsoftndk0 libsoftndk-wdk0 libsoftndk-dev softndk-tools libsoftndk-verbs)

step "ci-chroot: library only, with: $(dpkg-query -W -f='${Package} ' g++ cmake pkg-config libisal-dev libmnl-dev)"
cmake -S /src -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DBUILD_TESTING=OFF -DSOFTNDK_BUILD_TOOLS=OFF -DSOFTNDK_BUILD_BENCH=OFF >/dev/null
cmake --build "$b" -j"$(nproc)" >/dev/null
test -e "$b/src/libsoftndk.so.0" && test -e "$b/src/libsoftndk.a"

step "ci-chroot: + CLI11, nlohmann-json, nettle (tools; nettle: ndk-smb, ndk-smbd), libibverbs-dev, librdmacm-dev (verbs backend), dpkg-dev, file (packaging): scripts/package"
install libcli11-dev nlohmann-json3-dev nettle-dev libibverbs-dev librdmacm-dev dpkg-dev file
/src/scripts/package /debs

step "ci-chroot: remove the build dependencies, apt-get install ./*.deb"
apt-get purge -y -q libisal-dev libmnl-dev pkg-config libcli11-dev nlohmann-json3-dev nettle-dev \
  libibverbs-dev librdmacm-dev dpkg-dev file >/dev/null
apt-get autoremove -y -q --purge >/dev/null
for p in libisal2 libibverbs1 librdmacm1; do
  if dpkg-query -W -f='${Status}\n' $p 2>/dev/null | grep -q 'ok installed'; then
    echo "FAIL: $p still installed; the dependency check would prove nothing"; exit 1
  fi
done
(cd /debs && apt-get install -y -q --no-install-recommends ./*.deb >/dev/null)
dpkg-query -W -f='${Package} ${Version}\n' "${pkgs[@]}" \
  libisal2 libmnl0 libibverbs1 librdmacm1 libisal-dev libmnl-dev pkg-config
for p in "${pkgs[@]}"; do
  for f in copyright changelog.Debian.gz; do
    test -s "/usr/share/doc/$p/$f" || { echo "FAIL: $p has no /usr/share/doc/$p/$f"; exit 1; }
  done
done
# grep without -q: it reads all of readelf's output (no SIGPIPE under pipefail).

step "ci-chroot: multiarch directories, SONAMEs, the runtime libraries resolve"
triplet=$(gcc -print-multiarch)
libdir=/usr/lib/$triplet
# Every file the packages put under /usr/lib is in the multiarch directory.
stray=$(dpkg -L "${pkgs[@]}" | grep '^/usr/lib/' | grep -v "^/usr/lib/$triplet\(/\|$\)" || true)
[ -z "$stray" ] || { echo "FAIL: outside $libdir: $stray"; exit 1; }
for so in libsoftndk.so.0:libsoftndk0 libsoftndk_wdk.so.0:libsoftndk-wdk0; do
  name=${so%%:*} pkg=${so##*:}
  dpkg -L "$pkg" | grep -x "$libdir/$name" >/dev/null || { echo "FAIL: $pkg has no $libdir/$name"; exit 1; }
  # grep without -q: it reads all of readelf's output (no SIGPIPE under pipefail).
  readelf -d "$libdir/$name" | grep "SONAME.*\[${name//./\\.}\]" >/dev/null ||
    { echo "FAIL: the SONAME of $libdir/$name is not $name"; exit 1; }
  test -L "$libdir/${name%.0}" || { echo "FAIL: no link ${name%.0} (libsoftndk-dev)"; exit 1; }
done
for bin in "$libdir/libsoftndk_wdk.so.0" /usr/bin/softndk-wdk-run /usr/bin/ndkperf \
  "$libdir/softndk/libsoftndk-verbs.so"; do
  deps=$(ldd "$bin")
  if grep 'not found' <<<"$deps"; then echo "FAIL: $bin: unresolved libraries"; exit 1; fi
done
# ldd may name /lib/<triplet> (merged /usr: the same directory).
loaded=$(ldd /usr/bin/softndk-wdk-run | awk '$1 == "libsoftndk_wdk.so.0" {print $3}')
[ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$libdir/libsoftndk_wdk.so.0")" ] ||
  { echo "FAIL: softndk-wdk-run loads '$loaded', not $libdir/libsoftndk_wdk.so.0"; exit 1; }
echo "softndk-wdk-run loads libsoftndk_wdk.so.0 from $loaded"

step "ci-chroot: consumer with pkg-config --cflags --libs softndk"
c=/src/tests/capi/consumer
echo "pkg-config: --cflags '$(pkg-config --cflags softndk)' --libs '$(pkg-config --libs softndk)'"
# /usr/include and the multiarch directory are the compiler's own: a clean
# softndk.pc names neither, and no relative or build-tree path either.
[ -z "$(pkg-config --cflags softndk | tr -d ' ')" ] ||
  { echo "FAIL: pkg-config --cflags softndk is not empty"; exit 1; }
[ "$(pkg-config --libs softndk | xargs)" = "-lsoftndk" ] ||
  { echo "FAIL: pkg-config --libs softndk is not -lsoftndk"; exit 1; }
[ "$(pkg-config --variable=libdir softndk)" = "$libdir" ] &&
  [ "$(pkg-config --variable=includedir softndk)" = /usr/include ] ||
  { echo "FAIL: softndk.pc: libdir/includedir are not $libdir, /usr/include"; exit 1; }
# shellcheck disable=SC2046  # pkg-config prints several words on purpose
cc -std=c11 -Wall -Werror $(pkg-config --cflags softndk) "$c/consumer.c" -o /tmp/consumer_pc \
  $(pkg-config --libs softndk)
/tmp/consumer_pc

step "ci-chroot: consumer with find_package(softndk)"
cmake -S "$c" -B /tmp/consumer_cmake >/dev/null
cmake --build /tmp/consumer_cmake -j"$(nproc)" >/dev/null
/tmp/consumer_cmake/consumer_cmake
/tmp/consumer_cmake/consumer_cpp

step "ci-chroot: a WDK driver (wdk/sample) with find_package(softndk) + softndk::wdk, run by softndk-wdk-run"
cmake -S /src/packaging/wdk-consumer -B /tmp/wdk_consumer -DSOFTNDK_WDK_SAMPLE_DIR=/src/wdk/sample >/dev/null
cmake --build /tmp/wdk_consumer -j"$(nproc)" >/dev/null
drv=/tmp/wdk_consumer/sample/ndksock.so
port=$(( 20000 + ($$ + 1) % 20000 ))
timeout 90 softndk-wdk-run "$drv" --timeout 60 --check fatal -- server lo 127.0.0.1 $port \
  >/tmp/wdk_server.log 2>&1 & srv=$!
for _ in $(seq 150); do
  grep 'server listening' /tmp/wdk_server.log >/dev/null && break
  kill -0 $srv 2>/dev/null || break
  sleep 0.1
done
grep 'server listening' /tmp/wdk_server.log >/dev/null ||
  { cat /tmp/wdk_server.log; echo "FAIL: the WDK sample server did not listen within 15 s"; exit 1; }
timeout 90 softndk-wdk-run "$drv" --timeout 60 --check fatal -- client lo 127.0.0.1 127.0.0.1 $port ||
  { echo "FAIL: the WDK sample client exited $?"; exit 1; }
wait $srv || { cat /tmp/wdk_server.log; echo "FAIL: the WDK sample server exited non-zero"; exit 1; }
grep 'server done, data verified' /tmp/wdk_server.log ||
  { cat /tmp/wdk_server.log; echo "FAIL: the WDK sample server did not verify the data"; exit 1; }

step "ci-chroot: the installed tools"
for t in ndkinfo ndkperf ndkping softndk-wdk-run ndk-smb ndk-smbd; do
  test "$(command -v $t)" = "/usr/bin/$t" || { echo "FAIL: $t is not /usr/bin/$t"; exit 1; }
  test -s "/usr/share/man/man1/$t.1.gz" || { echo "FAIL: no manual page for $t"; exit 1; }
  $t --version
done
timeout 60 ndkinfo -d lo >/dev/null
# The verbs backend: libsoftndk finds the plugin in <libdir>/softndk and
# loads it (libibverbs1 and librdmacm1 came with it), which then says that
# no RDMA device serves lo - not that the plugin is missing.
rc=0
SOFTNDK_BACKEND=verbs timeout 60 ndkinfo -d lo >/tmp/ndkinfo-verbs.txt 2>&1 || rc=$?
cat /tmp/ndkinfo-verbs.txt
grep 'no RDMA device serves lo' /tmp/ndkinfo-verbs.txt >/dev/null && [ $rc != 0 ] ||
  { echo "FAIL: SOFTNDK_BACKEND=verbs did not load $libdir/softndk/libsoftndk-verbs.so"; exit 1; }
# The demo's loopback runs (send/write/read bw, send_lat, TCP baseline,
# plot), shortened to 0.2 s a point.
timeout 300 ndkperf --demo -D 0.2 --quiet --plot /tmp/ndkperf-demo.svg
test -s /tmp/ndkperf-demo.svg
port=$(( 20000 + $$ % 20000 ))
timeout 60 ndkping -s -a 127.0.0.1 -p $port -C 3 & srv=$!
sleep 1
timeout 60 ndkping -c -a 127.0.0.1 -p $port -C 3 -V
wait $srv

# Last, so that lintian's dependencies cannot hide a missing one above.
step "ci-chroot: lintian on the packages (fails on errors)"
install lintian
lintian --version
rc=0
lintian --fail-on error --display-info --tag-display-limit 0 /debs/*.deb >/tmp/lintian.txt 2>&1 || rc=$?
grep -v 'running with root privileges' /tmp/lintian.txt | sed 's/^/lintian: /' || true
echo "lintian: $(grep -c '^E: ' /tmp/lintian.txt || true) errors, $(grep -c '^W: ' /tmp/lintian.txt || true) warnings, $(grep -c '^I: ' /tmp/lintian.txt || true) info"
[ $rc = 0 ] || { echo "FAIL: lintian exited $rc (errors above)"; exit 1; }
step "OK: packages install and work in a clean chroot"
