#!/usr/bin/env bash
# Runs inside the clean chroot of scripts/ci-packaging.sh (source in /src).
# Each step prints "=== what (seconds)"; any failure ends the script non-zero.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
t0=$(date +%s)
step() { echo "=== $* ($(( $(date +%s) - t0 ))s)"; }
install() { apt-get install -y -q --no-install-recommends "$@" >/dev/null; }
b=/src/build/package  # the build directory scripts/package uses

step "ci-chroot: library only, with: $(dpkg-query -W -f='${Package} ' g++ cmake pkg-config libisal-dev libmnl-dev)"
cmake -S /src -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DBUILD_TESTING=OFF -DSOFTNDK_BUILD_TOOLS=OFF -DSOFTNDK_BUILD_BENCH=OFF >/dev/null
cmake --build "$b" -j"$(nproc)" >/dev/null
test -e "$b/src/libsoftndk.so.0" && test -e "$b/src/libsoftndk.a"

step "ci-chroot: + CLI11, nlohmann-json (tools), dpkg-dev, file (packaging): scripts/package"
install libcli11-dev nlohmann-json3-dev dpkg-dev file
/src/scripts/package /debs

step "ci-chroot: remove the build dependencies, apt-get install ./*.deb"
apt-get purge -y -q libisal-dev libmnl-dev pkg-config libcli11-dev nlohmann-json3-dev \
  dpkg-dev file >/dev/null
apt-get autoremove -y -q --purge >/dev/null
if dpkg-query -W -f='${Status}\n' libisal2 2>/dev/null | grep -q 'ok installed'; then
  echo "FAIL: libisal2 still installed; the dependency check would prove nothing"; exit 1
fi
(cd /debs && apt-get install -y -q --no-install-recommends ./*.deb >/dev/null)
dpkg-query -W -f='${Package} ${Version}\n' libsoftndk0 libsoftndk-dev softndk-tools \
  libisal2 libmnl0 libisal-dev libmnl-dev pkg-config
for p in libsoftndk0 libsoftndk-dev softndk-tools; do
  for f in copyright changelog.Debian.gz; do
    test -s "/usr/share/doc/$p/$f" || { echo "FAIL: $p has no /usr/share/doc/$p/$f"; exit 1; }
  done
done
# grep without -q: it reads all of readelf's output (no SIGPIPE under pipefail).
readelf -d "$(dpkg -L libsoftndk0 | grep 'libsoftndk\.so\.0$')" | grep 'SONAME.*\[libsoftndk\.so\.0\]' >/dev/null ||
  { echo "FAIL: SONAME is not libsoftndk.so.0"; exit 1; }

step "ci-chroot: consumer with pkg-config --cflags --libs softndk"
c=/src/tests/capi/consumer
echo "pkg-config: $(pkg-config --cflags --libs softndk)"
# shellcheck disable=SC2046  # pkg-config prints several words on purpose
cc -std=c11 -Wall -Werror $(pkg-config --cflags softndk) "$c/consumer.c" -o /tmp/consumer_pc \
  $(pkg-config --libs softndk)
/tmp/consumer_pc

step "ci-chroot: consumer with find_package(softndk)"
cmake -S "$c" -B /tmp/consumer_cmake >/dev/null
cmake --build /tmp/consumer_cmake -j"$(nproc)" >/dev/null
/tmp/consumer_cmake/consumer_cmake
/tmp/consumer_cmake/consumer_cpp

step "ci-chroot: the installed tools"
for t in ndkinfo ndkperf ndkping; do
  test "$(command -v $t)" = "/usr/bin/$t" || { echo "FAIL: $t is not /usr/bin/$t"; exit 1; }
  test -s "/usr/share/man/man1/$t.1.gz" || { echo "FAIL: no manual page for $t"; exit 1; }
  $t --version
done
timeout 60 ndkinfo -d lo >/dev/null
# The demo's loopback runs (send/write/read bw, send_lat, TCP baseline,
# plot), shortened to 0.2 s a point.
timeout 300 ndkperf --demo -D 0.2 --quiet --plot /tmp/ndkperf-demo.svg
test -s /tmp/ndkperf-demo.svg
port=$(( 20000 + $$ % 20000 ))
timeout 60 ndkping -s -a 127.0.0.1 -p $port -C 3 & srv=$!
sleep 1
timeout 60 ndkping -c -a 127.0.0.1 -p $port -C 3 -V
wait $srv
step "OK: packages install and work in a clean chroot"
