#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/interop/run.sh - softndk against Linux's kernel SoftiWARP (siw) in a
# siw-peer VM (../shared/interop/siw-peer). Called by ctest (label interop):
#
#   run.sh list               "GROUP CASE TIMEOUT" per case (ctest registration)
#   run.sh up GROUP           fixture setup: siw-peer build, boot the group's VM
#   run.sh case GROUP CASE    one case against that VM
#   run.sh down GROUP         fixture cleanup: stop the VM, print the results
#   run.sh all [GROUP...]     up, every case, down (by hand)
#
# Environment (set by tests/interop/CMakeLists.txt): INTEROP_SIW_PEER,
# INTEROP_STATE (state dir), INTEROP_MPA_PEER, INTEROP_NDK_PEER,
# INTEROP_VERBS_PEER, INTEROP_NDKPING, INTEROP_NDK_NVMET, INTEROP_NDK_NVME, INTEROP_NDK_SMB,
# INTEROP_NDK_SMBD, INTEROP_CIFS_PROBE, INTEROP_WDK_RUN, INTEROP_NDKSOCK_SO, INTEROP_VERBS_PROBE,
# INTEROP_VERBS_EXERCISE, INTEROP_VERBS_NDK_EXERCISE, INTEROP_VERBS_PLUGIN, INTEROP_SOFTNDK_SO,
# INTEROP_NDKPERF, INTEROP_NDKINFO, INTEROP_NDK_CONFORMANCE, INTEROP_CONNECTOR_TESTS (the verbs
# backend, the tools and the conformance suites that run on it in the guest; vm.sh)
# (empty if not built).
#
# One VM per group, driven through a small guest agent: the VM's command is
# agent.sh on the --share folder, which runs the scripts the host drops into
# share/req/ (ID.sh -> ID.out, ID.rc) so that cases can start guest programs,
# switch siw-tunable parameters in sysfs, and read dmesg without a reboot.
# Exit codes: 0 pass, 1 fail, 77 skipped (qemu cannot run on this machine).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SIW_PEER=${INTEROP_SIW_PEER:-$HERE/../../../shared/interop/siw-peer}
STATE=${INTEROP_STATE:-${TMPDIR:-/tmp}/softndk-interop}
MPA_PEER=${INTEROP_MPA_PEER:-}
NDK_PEER=${INTEROP_NDK_PEER:-}
VERBS_PEER=${INTEROP_VERBS_PEER:-}
NDKPING=${INTEROP_NDKPING:-}
NDK_NVME=${INTEROP_NDK_NVME:-}
NDK_SMB=${INTEROP_NDK_SMB:-}
# siw-peer kills a group's VM after its lifetime even if `down` never runs.
# The lifetime is the sum of the group's case timeouts plus VM_MARGIN (boot,
# teardown), at least VM_LIFETIME, so that this safety net cannot cut a case
# that is still within its own ctest timeout: with a fixed 1500 s the smb
# group (27 min at host load 10-16) lost its guest agent in its last case.
# (vm_lifetime in vm.sh.)
VM_LIFETIME=1500 # s
VM_MARGIN=600    # s

# Guest ports. 7174: persistent `rping -s -P` (started by the agent); 7175:
# per-case guest servers; 7180/7181: guest connections to 10.0.2.100 that
# --to-host forwards to host listeners.
G_RPING=7174
G_SRV=7175
G_TOHOST_A=7180
G_TOHOST_B=7181
TO_HOST_IP=10.0.2.100

# ---------------------------------------------------------------- case list
# GROUP CASE TIMEOUT(s). Groups run in this order, one VM each. CASE is
# NAME or NAME.DRIVER (engine = mpa_peer on the connection engine, ndk =
# ndk_peer on the public NDK ABI).
CASES=(
  # stock siw.ko (unmodified 6.1 source), softndk initiator -> rping -s -P
  "stock mpa_default.engine 60" "stock mpa_default.ndk 60" "stock mpa_no_p2p.ndk 60"
  "stock mpa_crc_softndk.engine 60" "stock mpa_crc_softndk.ndk 60"
  "stock mpa_p2p_write.engine 60" "stock mpa_p2p_write.ndk 60"
  "stock mpa_p2p_read.engine 60" "stock mpa_p2p_read.ndk 60" "stock mpa_p2p_read_delayed.engine 60"
  "stock mpa_rev1.engine 60" "stock mpa_rev1.ndk 60"
  "stock mpa_pd_max.engine 60" "stock mpa_pd_max.ndk 60"
  # siw rping -c -> softndk listener that rejects with private data
  "stock mpa_reject_pd.engine 90" "stock mpa_reject_pd.ndk 90"
  # data path: ndkping <-> rping, verbs_peer (libibverbs/librdmacm on siw)
  "stock ndkping_client 240" "stock ndkping_server 240" "stock ndkping_reconnect 300"
  "stock rdma_ndk_active 180" "stock rdma_siw_active 180" "stock limits_siw_active 180"
  "stock sendinv_ndk_to_siw 300" "stock sendinv_siw_to_ndk 120"
  "stock terminate_ndk_to_siw 300" "stock terminate_siw_to_ndk 120"
  "stock badpeer_reject 90" "stock badpeer_reset 120" "stock badpeer_terminate 120"
  # the WDK sample driver (ndksock.so) as client -> its server on siw (wdk_cases.sh)
  "stock wdk_ndksock_client 120"
  # 20 connections closed after only their RTR, then the guest kernel's log (mpa_cases.sh)
  "stock rtr_only_close 240"
  # siw-tunable.ko: the same siw with its constants as module parameters,
  # switched per case in /sys/module/siw/parameters
  "tunable siw_init_default.engine 90" "tunable siw_init_default.ndk 90"
  "tunable siw_crc_required.engine 90" "tunable siw_crc_required.ndk 90"
  "tunable siw_p2p_write.engine 90" "tunable siw_p2p_write.ndk 90"
  "tunable siw_p2p_read.engine 90" "tunable siw_p2p_read.ndk 90"
  "tunable siw_rev1.engine 90" "tunable siw_rev1.ndk 90"
  # NVMe over Fabrics (RDMA): Linux nvme-rdma host in the guest -> ndk-nvmet
  # (tests/interop/nvmf_cases.sh)
  "nvmf nvmet_discover 120" "nvmf nvmet_fio 600" "nvmf nvmet_crc 300" "nvmf nvmet_host_reset 400"
  "nvmf nvmet_two_hosts 400" "nvmf nvmet_kernel_baseline 600"
  # NVMe over Fabrics (issue 19): softndk's host ndk-nvme -> Linux nvmet-rdma
  # in the guest (nvmf_host_cases.sh)
  "nvmf host_discover 120" "nvmf host_identify 120" "nvmf host_rw 240" "nvmf host_rw_crc 240"
  "nvmf host_load 240" "nvmf host_load_crc 240"
  # the verbs backend (issue 30; verbs_cases.sh): the device probe and the
  # NDK -> verbs translation exercised on the guest's siw0 and rxe0
  "verbs probe_siw 60" "verbs probe_rxe 120" "verbs probe_none 120"
  "verbs exercise_siw 120" "verbs exercise_rxe 150"
  # softndk's own tools on the verbs backend (libsoftndk-verbs.so) in the
  # guest: over siw0 and rxe0, and over siw0 against the host's software iWARP
  "verbs ndk_siw 120" "verbs ndk_rxe 120" "verbs wire_siw 180" "verbs perf_rxe 420"
  # softndk's consumers on the verbs backend (verbs_apps_cases.sh): ndk-nvmet
  # attached by the guest kernel's nvme-rdma over siw0
  "verbs nvmet_siw 300"
  # ndk-nvme <-> ndk-nvmet on verbs: rxe0 (native fast register), siw0
  # (refused by default, --fr-register: SOFTNDK_OPEN_FLAG_FR_REGISTER)
  "verbs nvme_rxe 300" "verbs nvme_siw 300"
  # the NDK conformance suites on the verbs backend, less the exclusions of
  # verbs_conformance.exclude (docs/verbs.md)
  "verbs conformance_siw 600" "verbs conformance_rxe 600"
  # perftest beside ndkperf on rxe0: read bandwidth and send latency
  "verbs perf_rxe_read 420" "verbs perf_rxe_lat 480"
  # the same with -e on both tools (CQ notifications, not busy polling)
  "verbs perf_rxe_lat_event 420"
  # the same with both tools signaling one Send in 100 (-t 128 -Q 100)
  "verbs perf_rxe_lat_mod 420"
  # fast register, windows, invalidation, SRQs through the NDK API (issue 30)
  "verbs ndk_fr_rxe 180" "verbs ndk_fr_siw 240"
  # reconnect loops with the library's defaults (issue 32): siw's first-FPDU race
  "nvmf host_reconnect 420"
  # SMB Direct (issue 29): ndk-smb -> ksmbd in the guest (smb_cases.sh)
  # (smb_restart last: a ksmbd whose shutdown hung - documented peer
  # behaviour, docs/smb-direct.md "smb_restart" - serves nothing after it)
  "smb smb_guest 480" "smb smb_user 600" "smb smb_rdma_noinv 480" "smb smb_listing 480"
  "smb smb_bench 300" "smb smb_vs_cifs 600" "smb smb_restart 360"
  # SMB Direct (issue 29): Linux cifs in the guest mounts ndk-smbd on the host
  # (smb_cifs_cases.sh)
  # (Bounds for a loaded host: cifs_dd, 64 MiB each way through cifs
  # O_DIRECT, took 190-220 s at host load 10-16 and over 300 s at load 20;
  # cifs_v311 over 240 s at load 20, though it completed.)
  "smb-cifs cifs_dd 600" "smb-cifs cifs_tree 480" "smb-cifs cifs_v311 480"
  "smb-cifs cifs_signed_small 600"
  # what programs do to files beyond copies (cifs_probe.c), the server
  # stopped and restarted under the mount, a remount
  "smb-cifs cifs_posix 600"
)

# ---------------------------------------------------------------- parts
# Helpers, VM set-up and the cases, one file per group of cases.
. "$HERE/lib.sh"
. "$HERE/vm.sh"
. "$HERE/mpa_cases.sh"
. "$HERE/datapath_cases.sh"
# NVMe over Fabrics cases (group nvmf): Linux host -> ndk-nvmet in
# nvmf_cases.sh, ndk-nvme -> Linux target in nvmf_host_cases.sh.
# shellcheck source=tests/interop/nvmf_cases.sh
. "$HERE/nvmf_cases.sh"
# shellcheck source=tests/interop/nvmf_host_cases.sh
. "$HERE/nvmf_host_cases.sh"
# shellcheck source=tests/interop/wdk_cases.sh
. "$HERE/wdk_cases.sh"
# shellcheck source=tests/interop/verbs_cases.sh
. "$HERE/verbs_cases.sh"
# shellcheck source=tests/interop/verbs_apps_cases.sh
. "$HERE/verbs_apps_cases.sh"
# shellcheck source=tests/interop/smb_cases.sh
. "$HERE/smb_cases.sh"
# shellcheck source=tests/interop/smb_cifs_cases.sh
. "$HERE/smb_cifs_cases.sh"

# ---------------------------------------------------------------- driver
cmd_case() {
  GROUP=$1
  CASE=$2
  # Library defaults only (issue 32): no SOFTNDK_* workaround reaches a case
  # unless the case itself says so.
  unset SOFTNDK_MPA_HOLDOFF_MS SOFTNDK_SILENT_PEER_WAKE_MS
  check_skip
  local d
  d=$(gdir "$GROUP")
  [ -s "$d/env" ] || die "group $GROUP has no VM (its fixture setup interop.$GROUP.up failed or did not run)"
  # shellcheck disable=SC1091
  . "$d/env"
  SHARE=$d/share
  vm_alive "$GROUP" || die "the VM of group $GROUP is not running"
  local base=${CASE%%.*}
  DRIVER=""
  [ "$base" != "$CASE" ] && DRIVER=${CASE#*.}
  DRV=$(drv_path "$DRIVER")
  CDIR=$d/cases/$CASE
  rm -rf "$CDIR"
  mkdir -p "$CDIR"
  CAP_DEC=$CDIR/decode.txt
  CASE_ID=$(echo "$CASE" | tr '.' '_')
  DECODER=$(dirname "$SIW_PEER")/iwarp-decode.py
  trap case_cleanup EXIT
  declare -F "case_$base" >/dev/null || die "no such case: $base"
  log "case $GROUP/$CASE${DRIVER:+ (driver: $DRIVER)}"
  local t0
  t0=$(now)
  "case_$base"
  local secs result=PASS
  secs=$(since "$t0")
  sleep 0.5
  now >"$CDIR/cap.end"
  [ ${#KNOWN[@]} -eq 0 ] || result="PASS (known: ${KNOWN[*]})"
  [ ${#FAILS[@]} -eq 0 ] || result=FAIL
  printf '%s\t%s\t%s\t%s\t%s\n' "$GROUP" "$CASE" "$result" "$secs" "${FAILS[*]:-}" >>"$STATE/results.tsv"
  log "case $GROUP/$CASE: $result in $secs s (outputs: $CDIR)"
  if [ "$result" = FAIL ]; then
    printf '  failed: %s\n' "${FAILS[@]}"
    # Did the guest kernel die (siw 6.1's iwcm.c BUG(), an oops)? Every later
    # case of the group would only time out; say it here, where CI shows it.
    # (User processes' faults, "traps:" lines, are not the kernel's.)
    (g_run 20 "dmesg | grep -v ' traps: ' | grep -E -A4 'BUG|Oops|invalid opcode|general protection' | head -n 15" 2>&1 ||
      echo "(the guest did not answer within 20 s)") | sed 's/^/  guest dmesg| /'
    exit 1
  fi
}

cmd_list() {
  local c
  for c in "${CASES[@]}"; do echo "$c"; done
}

cmd_all() {
  local groups=("$@") c g last="" rc=0
  [ ${#groups[@]} -gt 0 ] || groups=(stock tunable)
  for g in "${groups[@]}"; do
    (cmd_up "$g") || {
      rc=$?
      [ $rc = 77 ] && exit 77
      return 1
    }
    for c in "${CASES[@]}"; do
      read -r cg cn _ <<<"$c"
      [ "$cg" = "$g" ] || continue
      ("$0" case "$g" "$cn") || rc=1
    done
    ("$0" down "$g") || rc=1
  done
  return $rc
}

main() {
  local sub=${1:-}
  [ $# -gt 0 ] && shift
  case $sub in
    list) cmd_list ;;
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    case) cmd_case "$@" ;;
    all) cmd_all "$@" ;;
    *)
      sed -n '2,12p' "$0" >&2
      exit 2
      ;;
  esac
}
main "$@"; exit $? # one line: bash reads no further (an edited script stays safe to run)
