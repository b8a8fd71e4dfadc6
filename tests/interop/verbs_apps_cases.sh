# SPDX-License-Identifier: Apache-2.0
# tests/interop/verbs_apps_cases.sh - group verbs of run.sh, part 2 (sourced
# by it after verbs_cases.sh; issue 30 item 5): softndk's real consumers on
# the verbs backend in the guest, from the share's vkit/ with
# SOFTNDK_BACKEND=verbs (verbs_cases.sh, need_vkit):
#
#   nvmet_siw   ndk-nvmet on verbs over siw0, attached by the guest kernel's
#               nvme-rdma (nvme connect -t rdma), dd and fio with
#               verification, nvme disconnect, the target's counters.
#   nvme_rxe    ndk-nvme <-> ndk-nvmet, both on verbs over rxe0 (defaults)
#   nvme_siw    the same over siw0: refused by default (the device's limit)
#   conformance_siw, conformance_rxe: the NDK conformance suites

VNVMF_NQN=nqn.2026-11.io.softndk:verbs
VNVMF_PORT=4431

# vnvmet_start ADDRESS: ndk-nvmet (verbs backend) in the guest, a RAM
# namespace; waits (bounded) for its start-up line. Sets VNVMET_JOB.
vnvmet_start() {
  rm -f "$SHARE/nvmet-verbs.json" "$SHARE/nvmet.pid"
  g_bg VNVMET_JOB "echo \$\$ >nvmet.pid; exec $VKIT ./vkit/ndk-nvmet -a $1 -p $VNVMF_PORT \
    -n $VNVMF_NQN --ns ram:64M --allow-any-host --queues 2 --kato 30000 --duration 170 \
    --json nvmet-verbs.json"
  local end=$((SECONDS + 30))
  until g_out "$VNVMET_JOB" | grep -q 'ndk-nvmet:.* on ' || [ $SECONDS -ge $end ] ||
    [ -e "$SHARE/req/$VNVMET_JOB.rc" ]; do
    sleep 0.2
  done
  g_out "$VNVMET_JOB" | sed 's/^/  nvmet| /'
  check "ndk-nvmet (verbs) listening on $1:$VNVMF_PORT" bash -c "grep -q 'on $1:$VNVMF_PORT' '$SHARE/req/$VNVMET_JOB.out'"
}

# vnvmet_stop: SIGTERM, its exit status and counters.
vnvmet_stop() {
  g_run 10 "kill -TERM \$(cat nvmet.pid)" >/dev/null 2>&1 || true
  local rc=0
  g_wait "$VNVMET_JOB" 30 || rc=$?
  g_out "$VNVMET_JOB" >"$CDIR/nvmet.out"
  sed 's/^/  nvmet| /' "$CDIR/nvmet.out" | tail -n 12
  check "ndk-nvmet exited 0 at SIGTERM" test "$rc" -eq 0
  cp "$SHARE/nvmet-verbs.json" "$CDIR/nvmet.json" 2>/dev/null || true
  [ -s "$CDIR/nvmet.json" ] && jq -c . "$CDIR/nvmet.json" | cut -c1-400 | sed 's/^/  nvmet-stats| /'
  return 0
}

# The Linux NVMe-oF host (nvme-rdma over siw0) in the guest against
# ndk-nvmet on the verbs backend over the same siw0: the kernel's RDMA
# stack on both ends of the wire, softndk's NDK object model in between.
case_nvmet_siw() {
  need_vkit || return 0
  if [ ! -x "$SHARE/vkit/ndk-nvmet" ]; then
    check "ndk-nvmet in the verbs kit (INTEROP_NDK_NVMET)" false
    return 0
  fi
  vnvmet_start 10.0.2.15
  local find rc=0
  find=$(find_dev "$VNVMF_NQN")
  g_run 90 "$NVMF_GUEST_SETUP; nvme connect -t rdma -a 10.0.2.15 -s $VNVMF_PORT -n $VNVMF_NQN; rc=\$?
    $find; echo \"dev=\$dev\"; lsblk -o NAME,SIZE,MODEL 2>/dev/null | grep -i nvme; exit \$rc" \
    >"$CDIR/connect.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/connect.txt"
  local dev
  dev=$(sed -n 's/^dev=//p' "$CDIR/connect.txt" | tail -n 1)
  check "nvme connect -t rdma (nvme-rdma over siw0): rc 0" test "$rc" -eq 0
  check "namespace block device appeared ($dev), 64 MiB" grep -qE 'nvme.* 64M ' "$CDIR/connect.txt"
  if [ -n "$dev" ]; then
    # 4 MiB of random data written with O_DIRECT, read back, compared.
    rc=0
    g_run 90 "set -e; head -c 4194304 /dev/urandom >/tmp/vpat
      dd if=/tmp/vpat of=$dev bs=1M count=4 oflag=direct conv=fsync status=none
      echo 3 >/proc/sys/vm/drop_caches
      dd if=$dev of=/tmp/vback bs=1M count=4 iflag=direct status=none
      cmp /tmp/vpat /tmp/vback && echo 'dd: 4 MiB written and read back identical'" \
      >"$CDIR/dd.txt" 2>&1 || rc=$?
    sed 's/^/  dd| /' "$CDIR/dd.txt"
    check "dd 4 MiB write + read back (O_DIRECT): identical" grep -q 'identical' "$CDIR/dd.txt"
    # fio: random 4 KiB writes at depth 8 over 8 MiB, each block verified.
    rc=0
    g_run 150 "fio --name=vverify --filename=$dev --direct=1 --ioengine=libaio --rw=randwrite \
      --bs=4k --iodepth=8 --size=8M --verify=crc32c --verify_state_save=0 \
      --output-format=json >/tmp/vfio.json; rc=\$?; cat /tmp/vfio.json; exit \$rc" \
      >"$CDIR/fio.json" 2>&1 || rc=$?
    jq -r '.jobs[0] | "  fio: \(.write.iops|floor) write IOPS, \(.read.iops|floor) read IOPS (verify), error \(.error)"' \
      "$CDIR/fio.json" 2>/dev/null || tail -n 5 "$CDIR/fio.json"
    check "fio randwrite 4k QD8 8 MiB --verify=crc32c: rc 0" test "$rc" -eq 0
    check "fio: no error, reads verified the writes" jq_ok "$CDIR/fio.json" \
      '.jobs[0].error == 0 and .jobs[0].read.io_bytes >= 8388608'
  fi
  rc=0
  g_run 60 "nvme disconnect -n $VNVMF_NQN" >"$CDIR/disconnect.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/disconnect.txt"
  check "nvme disconnect: 1 controller" grep -q 'disconnected 1 controller' "$CDIR/disconnect.txt"
  vnvmet_stop
  # Seen once (first run of a fresh guest, the host at load 8 on 2 cores):
  # no capsule on any queue for the host's KATO (5 s), both ends gave up,
  # nvme-rdma reconnected and fio finished verified. Reported, not failed.
  if jq_ok "$CDIR/nvmet.json" '.kato_expired > 0'; then
    g_run 20 "dmesg | grep -E 'nvme nvme[0-9]+: (long keepalive|I/O .* timeout|Reconnecting|Successfully reconnected)' | tail -n 8" \
      | sed 's/^/  dmesg| /'
    known "keep-alive timeout under load (TCG guest): nvme-rdma reconnected, data still verified"
  fi
  guest_no_oops
}

# ---- ndk-nvme <-> ndk-nvmet, both on the verbs backend ----------------------
# The NVMe-oF host of softndk (keyed SGLs through NdkFastRegister) against
# ndk-nvmet in the same guest, both on the verbs backend over one device:
#   nvme_rxe  rxe0 (type-2 windows: fast register native): verified I/O
#             with the target's remote invalidation (rxe reports it with
#             the kernel's flag bit, which the backend reads: without that
#             the host invalidated the dead window again and Linux 6.1's
#             rxe panicked, docs/verbs.md), then the multi-queue verified
#             load, with remote and with the host's own invalidation
#   nvme_siw  siw0: without type-2 windows fast register is refused by
#             default (the host exits naming it); with the opt-in
#             --fr-register (SOFTNDK_OPEN_FLAG_FR_REGISTER, the documented
#             degraded mode: a new token every fast register) the same
#             verified I/O
# Data verified: 2 MiB written in 128 KiB commands and read back against
# the pattern; a wrong seed fails the check.
vnvme() { # OUTFILE ADDRESS ARGS...: ndk-nvme (verbs) in the guest; prints rc to OUTFILE.rc
  local out=$1 addr=$2 rc=0
  shift 2
  g_run 150 "$VKIT timeout 140 ./vkit/ndk-nvme -a $addr -s $VNVMF_PORT -n $VNVMF_NQN --json $*" \
    >"$out" 2>&1 || rc=$?
  echo "$rc" >"$out.rc"
  grep -v '^[[{ ]' "$out" | sed -n '1,12s/^/  ndk-nvme| /p'
}
vnvme_rc() { cat "$1.rc"; }
vnvme_jq() { # OUTFILE FILTER: the JSON document of ndk-nvme's output (none: false)
  local doc
  doc=$(sed -n '/^{/,$p' "$1")
  [ -n "$doc" ] && jq -e "$2" >/dev/null 2>&1 <<<"$doc"
}
vnvme_io() { # ADDRESS TAG INVALIDATIONS ARGS...: the verified I/O, checked
  # INVALIDATIONS: the report's counter the keys must show up in
  # (remote_invalidations: the target's Send with Invalidate;
  # local_invalidations: the host's own NdkInvalidate).
  local a=$1 t=$2 inv=$3
  shift 3
  vnvme "$CDIR/$t-w.json" "$a" "$@" write --lba 0 --blocks 4096 --bs 128k --iodepth 4 --seed 7
  check "$t: 2 MiB written in 128 KiB keyed commands (rc 0)" test "$(vnvme_rc "$CDIR/$t-w.json")" -eq 0
  check "$t: ... 16 commands, no error" vnvme_jq "$CDIR/$t-w.json" \
    '.jobs[0].write.io_bytes == 2097152 and .jobs[0].error == 0'
  vnvme "$CDIR/$t-r.json" "$a" "$@" read --lba 0 --blocks 4096 --bs 128k --iodepth 4 --seed 7
  check "$t: read back and verified (rc 0)" test "$(vnvme_rc "$CDIR/$t-r.json")" -eq 0
  check "$t: ... 2 MiB, no mismatch, keys invalidated ($inv)" vnvme_jq "$CDIR/$t-r.json" \
    ".jobs[0].read.io_bytes == 2097152 and .jobs[0].verify_errors == 0 and .jobs[0].$inv > 0"
  vnvme "$CDIR/$t-x.json" "$a" "$@" read --lba 0 --blocks 8 --seed 8
  check "$t: a read with the wrong seed fails verification (exit 5)" \
    test "$(vnvme_rc "$CDIR/$t-x.json")" -eq 5
}
vnvme_load() { # ADDRESS TAG INVALIDATIONS ARGS...: two queues, 8 deep, randrw 4k, verified
  local a=$1 t=$2 inv=$3
  shift 3
  vnvme "$CDIR/$t.json" "$a" "$@" load --rw randrw --bs 4k --iodepth 8 --queues 2 --verify \
    --size 2M --runtime 5
  check "$t: load randrw 4k, 2 queues x 8 deep, verified (rc 0)" test "$(vnvme_rc "$CDIR/$t.json")" -eq 0
  # jobs[0] is the prefill (writes of the pattern), jobs[1] the load.
  check "$t: ... reads and writes, no error, no mismatch, keys invalidated ($inv)" \
    vnvme_jq "$CDIR/$t.json" "(.jobs | length) == 2 and .jobs[1].read.io_bytes > 0 and
      .jobs[1].write.io_bytes > 0 and ([.jobs[].error] | add) == 0 and
      .jobs[1].verify_errors == 0 and .jobs[1].$inv > 0"
}
vnvme_kit() {
  need_vkit || return 1
  if [ ! -x "$SHARE/vkit/ndk-nvmet" ] || [ ! -x "$SHARE/vkit/ndk-nvme" ]; then
    check "ndk-nvmet and ndk-nvme in the verbs kit (INTEROP_NDK_NVMET, INTEROP_NDK_NVME)" false
    return 1
  fi
}

case_nvme_rxe() {
  vnvme_kit || return 0
  g_run 90 "$VERBS_RXE_SETUP" >/dev/null 2>&1 || true
  local a=$VERBS_RXE_NET.1
  vnvmet_start "$a"
  # Defaults: the target invalidates each key with Send with Invalidate.
  vnvme_io "$a" rxe0 remote_invalidations
  vnvme_load "$a" rxe0-load remote_invalidations
  # The host's own invalidation: NdkInvalidate after each command, then
  # the next NdkFastRegister re-binds the window.
  vnvme_load "$a" rxe0-load-local local_invalidations --no-invalidate
  vnvmet_stop
  guest_no_oops
}

case_nvme_siw() {
  vnvme_kit || return 0
  vnvmet_start 10.0.2.15
  vnvme "$CDIR/default.json" 10.0.2.15 write --lba 0 --blocks 256 --bs 128k --seed 7
  check "siw0, defaults: fast register refused, the host exits non-zero" \
    test "$(vnvme_rc "$CDIR/default.json")" -ne 0
  check "... naming NdkInitializeFastRegisterMr and STATUS_NOT_SUPPORTED" \
    grep -q 'NdkInitializeFastRegisterMr.*NOT_SUPPORTED' "$CDIR/default.json"
  # The opt-in: each fast register a new registration and key; siw does not
  # report the target's invalidation (libsiw), so the host deregisters too.
  vnvme_io 10.0.2.15 siw0-fr local_invalidations --fr-register
  vnvmet_stop
  guest_no_oops
}

# ---- the NDK conformance suites on the verbs backend -----------------------
# ndk_conformance_tests (tests/ndk: the object model) and connector_tests
# (tests/connector: connectors, listeners, data through the public C ABI),
# built on the host, run in the guest with SOFTNDK_BACKEND=verbs on the
# adapter and address SOFTNDK_TEST_ADAPTER / SOFTNDK_TEST_IP name (the suites'
# own defaults: "lo", 127.0.0.1). Every test runs except those listed in
# verbs_conformance.exclude (BINARY TEST DEVICES REASON), each explained in
# docs/verbs.md, "The conformance suites on the verbs backend"; the rest must
# pass.
VCONF_EXCLUDE=$HERE/verbs_conformance.exclude
vconf_filter() { # BINARY DEVICE: the gtest exclusions of that binary on that device
  awk -v b="$1" -v d="$2" '!/^#/ && NF >= 4 && $1 == b && ("," $3 ",") ~ ("," d ",") {
    printf "%s%s", sep, $2; sep = ":" }' "$VCONF_EXCLUDE"
}
vconf_count() { # EXE FILTER: how many tests of EXE the gtest filter selects (host, listing only)
  LD_LIBRARY_PATH=$SHARE/vkit "$SHARE/vkit/$1" --gtest_list_tests --gtest_filter="$2" 2>/dev/null |
    grep -c '^  ' || true
}
vconf_reasons() { # BINARY DEVICE EXE: "reason=N ..." and VCONF_EXCLUDED (tests excluded)
  local r f c
  VCONF_REASONS="" VCONF_EXCLUDED=0
  for r in $(awk -v b="$1" -v d="$2" '!/^#/ && NF >= 4 && $1 == b && ("," $3 ",") ~ ("," d ",") {
      print $4 }' "$VCONF_EXCLUDE" | sort -u); do
    f=$(awk -v b="$1" -v d="$2" -v r="$r" '!/^#/ && NF >= 4 && $1 == b && $4 == r &&
      ("," $3 ",") ~ ("," d ",") { printf "%s%s", sep, $2; sep = ":" }' "$VCONF_EXCLUDE")
    c=$(vconf_count "$3" "$f")
    VCONF_REASONS+="$r=$c "
    VCONF_EXCLUDED=$((VCONF_EXCLUDED + c))
  done
}
vconf() { # DEVICE ADDRESS
  local dev=$1 ip=$2 b exe filt rc n
  for b in ndk connector; do
    exe=ndk_conformance_tests
    [ $b = connector ] && exe=connector_tests
    if [ ! -x "$SHARE/vkit/$exe" ]; then
      check "$exe in the verbs kit" false
      continue
    fi
    filt=$(vconf_filter $b "$dev")
    n=$(awk -F: '{print NF}' <<<"$filt")
    rm -f "$SHARE/conf-$dev-$b.json"
    rc=0
    g_run 400 "cd /tmp; ulimit -c 0; env LD_LIBRARY_PATH=/share/vkit SOFTNDK_BACKEND=verbs \
      SOFTNDK_VERBS_PLUGIN=/share/vkit/libsoftndk-verbs.so SOFTNDK_TEST_ADAPTER=$ip \
      SOFTNDK_TEST_IP=$ip timeout 380 /share/vkit/$exe --gtest_filter=-$filt \
      --gtest_output=json:/share/conf-$dev-$b.json" >"$CDIR/$b.txt" 2>&1 || rc=$?
    cp "$SHARE/conf-$dev-$b.json" "$CDIR/$b.json" 2>/dev/null || true
    grep -E '^\[  (PASSED|FAILED) ' "$CDIR/$b.txt" | sed "s/^/  $b| /" | head -n 20
    echo "  $b| $(jq -r '"\(.tests) tests ran, \(.failures) failed, \(.time)"' "$CDIR/$b.json" 2>/dev/null) ($n exclude entries on $dev)"
    # The result table of docs/verbs.md: tests, ran, excluded by reason.
    local total ran
    total=$(vconf_count "$exe" '*')
    ran=$(jq -r '.tests' "$CDIR/$b.json" 2>/dev/null || echo 0)
    vconf_reasons "$b" "$dev" "$exe"
    echo "  $b| $dev: $total tests, $ran ran, $VCONF_EXCLUDED excluded: $VCONF_REASONS" |
      tee "$CDIR/$b-table.txt"
    check "$exe on verbs/$dev: exit 0" test "$rc" -eq 0
    check "$exe on verbs/$dev: every test not excluded passed" \
      jq_ok "$CDIR/$b.json" '.tests > 0 and .failures == 0 and .errors == 0'
    check "$exe on verbs/$dev: every test either ran or is excluded once ($total = $ran + $VCONF_EXCLUDED)" \
      test "$total" -gt 0 -a "$total" -eq $((ran + VCONF_EXCLUDED))
  done
}

case_conformance_siw() {
  need_vkit || return 0
  vconf siw 10.0.2.15
}

case_conformance_rxe() {
  need_vkit || return 0
  g_run 90 "$VERBS_RXE_SETUP" >/dev/null 2>&1 || true
  vconf rxe "$VERBS_RXE_NET.1"
}
