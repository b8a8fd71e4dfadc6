#!/usr/bin/env bash
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
# INTEROP_VERBS_PEER, INTEROP_NDKPING, INTEROP_NDK_NVMET, INTEROP_NDK_NVME,
# INTEROP_WDK_RUN, INTEROP_NDKSOCK_SO, INTEROP_VERBS_PROBE,
# INTEROP_VERBS_EXERCISE (empty if not built).
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
VM_LIFETIME=1500 # s; siw-peer kills the VM after this even if `down` never runs

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
  "stock ndkping_client 240" "stock ndkping_server 240"
  "stock rdma_ndk_active 180" "stock rdma_siw_active 180" "stock limits_siw_active 180"
  "stock sendinv_ndk_to_siw 120" "stock sendinv_siw_to_ndk 120"
  "stock terminate_ndk_to_siw 120" "stock terminate_siw_to_ndk 120"
  "stock badpeer_reject 90" "stock badpeer_reset 120" "stock badpeer_terminate 120"
  # the WDK sample driver (ndksock.so) as client -> its server on siw (wdk_cases.sh)
  "stock wdk_ndksock_client 120"
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
  # the verbs backend's device probe on the guest's siw0 and rxe0 (issue 30;
  # verbs_cases.sh)
  "verbs probe_siw 60" "verbs probe_rxe 90" "verbs probe_none 60"
  "verbs exercise_siw 120" "verbs exercise_rxe 120"
)

# ---------------------------------------------------------------- helpers
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
log() { echo "[$(date +%H:%M:%S)] $*"; }
die() {
  echo "interop: error: $*" >&2
  exit 1
}
skip() {
  echo "skipped: $*"
  exit 77
}

gdir() { echo "$STATE/$1"; }

check_skip() {
  if [ -s "$STATE/skip" ]; then skip "$(cat "$STATE/skip")"; fi
}

# Is the VM of this group alive (recorded qemu PID, command line naming its
# run dir - the same check siw-peer itself makes)?
vm_alive() {
  local run pid
  run=$(cat "$(gdir "$1")/run_dir" 2>/dev/null) || return 1
  pid=$(cat "$run/qemu.pid" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/cmdline" ] &&
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$run/"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# ---- guest agent (scripts dropped into share/req) ----
SEQ=0
g_submit() { # ID SCRIPT
  local r="$SHARE/req"
  printf '%s\n' "$2" >"$r/.$1.tmp"
  mv "$r/.$1.tmp" "$r/$1.sh"
}
g_wait() { # ID TIMEOUT -> rc of the guest script (124: timed out, killed)
  local r="$SHARE/req" end=$((SECONDS + $2))
  while [ ! -e "$r/$1.rc" ]; do
    if [ $SECONDS -ge $end ] || ! vm_alive "$GROUP"; then
      g_kill "$1"
      return 124
    fi
    sleep 0.2
  done
  return "$(cat "$r/$1.rc")"
}
g_kill() { touch "$SHARE/req/$1.kill"; }
g_out() { cat "$SHARE/req/$1.out" 2>/dev/null || true; }
# Job ids must be unique even when g_run runs in a pipeline's subshell
# (a counter incremented there would be lost): use the clock.
g_run() { # TIMEOUT SCRIPT: run in the guest, print its output, return its rc
  local id
  id="${CASE_ID:-x}-$(date +%s%N)"
  g_submit "$id" "$2"
  local rc=0
  g_wait "$id" "$1" || rc=$?
  g_out "$id"
  return $rc
}
g_bg() { # VAR SCRIPT: start in the guest, store the job id in VAR
  local id="${CASE_ID:-x}-$(date +%s%N)"
  g_submit "$id" "$2"
  printf -v "$1" '%s' "$id"
  GUEST_JOBS+=("$id")
}

# ---- host background processes of a case (stopped by PID on exit) ----
HOST_PIDS=()
GUEST_JOBS=()
case_cleanup() {
  local p j
  for p in "${HOST_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for j in "${GUEST_JOBS[@]}"; do [ -e "$SHARE/req/$j.rc" ] || g_kill "$j"; done
}

# How long to let a guest partner finish: briefly if the host side already
# failed to set up or connect (then the guest side has nothing to wait for).
partner_wait() {
  if jq -e -s 'map(select((.op == "connect" or .op == "setup" or .op == "listen") and .ok == false)) | length > 0' \
    "$CDIR/peer.json" >/dev/null 2>&1; then
    echo 2
  else
    echo 15
  fi
}
# A host listener must have come up before the guest connects to it.
listener_ready() {
  local end=$((SECONDS + 10))
  until [ -e "$CDIR/ready" ] || [ $SECONDS -ge $end ]; do sleep 0.1; done
  if [ ! -e "$CDIR/ready" ]; then
    sleep 0.5
    sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err" 2>/dev/null
    check "softndk listener started" false
    return 1
  fi
}

# ---- assertions ----
FAILS=()
KNOWN=()
# A documented peer limitation that this run hit: reported, not failed.
known() {
  echo "  KNOWN $1"
  KNOWN+=("$1")
}
check() { # WHAT COMMAND...: record a failed check, keep going
  local what=$1
  shift
  if "$@"; then
    echo "  ok    $what"
  else
    echo "  FAIL  $what"
    FAILS+=("$what")
  fi
}
jtrue() { jq -e -s "$2" "$1" >/dev/null 2>&1; } # FILE JQ-EXPR over all objects
has() { grep -qE -- "$2" "$1"; }                 # FILE REGEX
hasnt() { ! grep -qE -- "$2" "$1"; }

# ---- siw leaving the initiator's first FPDU unread (notes 1 and 8) ----
# siw_accept() sends the MPA Reply and only afterwards points the socket's
# data_ready upcall at the QP (siw_qp_socket_assoc) or at the RTR handler
# (siw_sk_assign_rtr_upcalls); an FPDU that lands in between meets
# siw_cm_llp_data_ready, which ignores data in RDMA mode, and nothing reads
# it until more data or the FIN arrives (docs/compatibility.md). The guest
# shows this directly: that connection's receive queue stays at the FPDU's
# length. Cases that can hit it sample the queue (rxq-watch.sh) while they
# run, and retry once only if exactly that was seen.
#
# The mitigation: softndk's initiator hold-off (SOFTNDK_MPA_HOLDOFF_MS,
# tcp::ConnSettings::initiator_holdoff) keeps the first FPDU back this long
# after the Reply. Since NDK adapters offer P2P by default, every NDK
# initiator's first FPDU is its RTR, and stock siw reports ESTABLISHED to
# its application only once it has read it: an RTR (and the Send behind it)
# left unread leaves a siw application that speaks first waiting for
# ever (seen once in terminate_ndk_to_siw). So every case runs with the
# hold-off (cmd_case); the sampler stays as the proof in case the race
# still wins.
SIW_HOLDOFF_MS=300
RXQ_JOB=""
RXQ_STOP=""
rxq_watch_start() { # GUEST_PORT
  RXQ_STOP="rxq-$(date +%s%N).stop"
  g_bg RXQ_JOB "bash ./rxq-watch.sh $1 req/$RXQ_STOP 150"
}
rxq_watch_stop() { # OUTFILE
  touch "$SHARE/req/$RXQ_STOP"
  g_wait "$RXQ_JOB" 10 || true
  g_out "$RXQ_JOB" >"$1"
  rm -f "$SHARE/req/$RXQ_STOP"
}
# FILE BYTES: did one connection keep exactly BYTES unread in 3 or more
# samples spanning at least 1 s? Prints what it saw.
rxq_stalled() {
  awk -v want="$(printf '%08X' "$2")" -v bytes="$2" '
    $3 == want { if (!($2 in n)) t0[$2] = $1; n[$2]++; t1[$2] = $1 }
    END {
      for (k in n) if (n[k] >= 3 && t1[k] - t0[k] >= 1.0) {
        printf "guest socket to %s held %d B unread (%d samples over %.1f s)\n", k, bytes, n[k], t1[k] - t0[k]
        ok = 1
      }
      exit !ok
    }' "$1"
}

# Captures: qemu's filter-dump file is only complete once the VM is off
# (observed: frames of a case were missing from the file seconds later), so
# a case only records its time window and what its capture must show; `down`
# evaluates every case's capture after stopping the VM (capture_checks).
cap_window() { # START
  echo "$1" >"$CDIR/cap.start"
  [ "${ALLOW_TRUNCATED:-0}" = 1 ] && touch "$CDIR/cap.allow-truncated"
  return 0
}
cap_has() { # WHAT REGEX: the decode of this case's capture must match
  printf '%s\t%s\n' "$1" "$2" >>"$CDIR/cap.expect"
}

# WHAT FILTER: a tshark display filter that at least one frame of this
# case's connections must match (fields iwarp-decode.py does not print,
# e.g. the Invalidate STag of a Send with Invalidate).
cap_tshark() {
  printf '%s\t%s\n' "$1" "$2" >>"$CDIR/cap.tshark"
}

# For each case of the group (in run order): cut the capture to the case's
# window, decode it with iwarp-decode.py and tshark, and assert: something
# captured, an MPA exchange, no CRC error, no malformed / error-level frame,
# no truncated FPDU (unless allowed), plus the case's own expectations.
capture_checks() {
  local c cdir start end dec err cut what re bad=0
  for cdir in $(ls -dtr "$GDIR"/cases/*/ 2>/dev/null); do
    cdir=${cdir%/}
    c=$(basename "$cdir")
    [ -s "$cdir/cap.start" ] || continue
    start=$(cat "$cdir/cap.start")
    end=$(cat "$cdir/cap.end" 2>/dev/null || echo 9999999999)
    cut=$cdir/capture.pcap dec=$cdir/decode.txt err=$cdir/tshark-errors.txt
    # qemu stamps frames with whole-second start time + its virtual clock:
    # they run up to ~1 s behind the host clock, so widen the window, and
    # pick the case's connections by TCP port where the case knows them.
    start=$(awk -v a="$start" 'BEGIN{printf "%.3f", a - 1.5}')
    editcap -F pcap -A "$start" -B "$end" "$PCAP" "$cut" >/dev/null 2>&1 || true
    local pargs=() pf="" p
    for p in $(sort -u "$cdir/cap.ports" 2>/dev/null); do
      pargs+=(--port "$p")
      pf+="${pf:+ || }tcp.port == $p"
    done
    python3 "$DECODER" "$cut" "${pargs[@]}" >"$dec" 2>&1 || true
    # The window's end is host time and qemu stamps frames late (see the
    # truncation rule below): the window's last TCP conversation, when there
    # are several and it shows neither FIN nor RST, is the next case's
    # connection starting. Its frames are not this case's; the host may even
    # have reused the case's port numbers for it, and tshark then reads its
    # MPA exchange as malformed FPDUs of the case's conversation.
    local streams last sf=""
    streams=$(tshark -r "$cut" -n ${pf:+-Y "$pf"} -T fields -e tcp.stream 2>/dev/null | sort -un)
    last=$(tail -n 1 <<<"$streams")
    if [ "$(grep -c '' <<<"$streams")" -gt 1 ] &&
      [ -z "$(tshark -r "$cut" -n -Y "tcp.stream == $last && (tcp.flags.fin == 1 || tcp.flags.reset == 1)" 2>/dev/null)" ]; then
      sf=" && tcp.stream != $last"
    fi
    # RPC-over-RDMA's heuristic claims the drivers' 32-byte control Sends and
    # throws on them (siw's own Sends alike): not an iWARP finding, so off.
    tshark -r "$cut" -n --disable-protocol rpcordma \
      -Y "${pf:+($pf) && }(_ws.malformed || _ws.expert.severity >= error)$sf" >"$err" 2>/dev/null || true
    tshark -r "$cut" -n -Y "${pf:+($pf) && }(iwarp_mpa || iwarp_ddp_rdmap || tcp.flags.syn == 1 || tcp.flags.reset == 1)" \
      >"$cdir/tshark.txt" 2>/dev/null || true
    FAILS=()
    echo "capture of $GROUP/$c: $(grep -c '' "$cdir/tshark.txt") iWARP/TCP-control frames (decode: $dec)"
    check "an MPA exchange" has "$dec" 'MPA (REQUEST|REPLY)'
    check "no CRC error (iwarp-decode)" hasnt "$dec" 'BAD:'
    check "no malformed/error-level frame (tshark)" test ! -s "$err"
    # The window's end is host time and qemu stamps frames late, so it may
    # also hold the start of the next case's connection, cut mid-FPDU by the
    # window: a truncated FPDU counts unless it is in the window's last
    # connection and that connection shows no FIN (still open at the cut).
    awk '/^TCP connection/ { printf "%s", t; t = ""; fin = 0 }
         /truncated FPDU/ { t = t $0 "\n" }
         /TCP FIN/ { fin = 1 }
         END { if (fin) printf "%s", t }' "$dec" >"$cdir/truncated.txt"
    [ -e "$cdir/cap.allow-truncated" ] || check "no truncated FPDU" test ! -s "$cdir/truncated.txt"
    if [ -s "$cdir/cap.expect" ]; then
      while IFS=$'\t' read -r what re; do
        check "$what" has "$dec" "$re"
      done <"$cdir/cap.expect"
    fi
    if [ -s "$cdir/cap.tshark" ]; then
      local filt
      while IFS=$'\t' read -r what filt; do
        tshark -r "$cut" -n --disable-protocol rpcordma -Y "${pf:+($pf) && }($filt)" \
          >"$cdir/tshark-match.txt" 2>&1 || true
        check "$what [tshark: $filt]" test -s "$cdir/tshark-match.txt"
      done <"$cdir/cap.tshark"
    fi
    local r=PASS
    [ ${#FAILS[@]} -eq 0 ] || r=FAIL bad=1
    printf '%s\t%s\t%s\t%s\t%s\n' "$GROUP" "$c [capture]" "$r" "-" "${FAILS[*]:-}" >>"$STATE/results.tsv"
  done
  return $bad
}

# ---------------------------------------------------------------- setup
prepare_host() {
  [ -e "$SIW_PEER" ] || die "siw-peer not found at $SIW_PEER: CI must have the shared folder beside the checkout (../shared/interop), or set SIW_PEER"
  mkdir -p "$STATE"
  [ -s "$STATE/skip" ] && return 0
  local q=${SIW_PEER_QEMU:-qemu-system-x86_64}
  if ! command -v "$q" >/dev/null && [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null; then
    echo "$q is not installed and installing it needs root" >"$STATE/skip"
    return 0
  fi
  local t0 rc=0
  t0=$(now)
  log "siw-peer build (fresh machine: ~3 min)"
  "$SIW_PEER" build >"$STATE/build.log" 2>&1 || rc=$?
  sed 's/^/  build| /' "$STATE/build.log" | tail -n 5
  if [ $rc != 0 ]; then
    if ! command -v "$q" >/dev/null; then
      echo "$q is not installed and siw-peer could not install it: $(tail -n 1 "$STATE/build.log")" >"$STATE/skip"
      return 0
    fi
    die "siw-peer build failed (rc $rc), log: $STATE/build.log"
  fi
  log "build took $(since "$t0") s"
  # Can qemu run a guest at all here? -S creates the machine without running
  # it, so a working qemu sits there until timeout kills it (rc 124).
  rc=0
  timeout 5 "$q" -accel tcg -machine q35 -nodefaults -display none -m 64 -S \
    >"$STATE/qemu-probe.log" 2>&1 || rc=$?
  if [ $rc != 124 ]; then
    echo "$q cannot start a TCG guest (rc $rc): $(head -c 300 "$STATE/qemu-probe.log" | tr '\n' ' ')" >"$STATE/skip"
  fi
}

write_agent() { # SHARE
  mkdir -p "$1/req"
  cp "$HERE/guest-agent.sh" "$1/agent.sh"
  cp "$HERE/rxq-watch.sh" "$1/rxq-watch.sh"
  [ -n "$VERBS_PEER" ] && [ -x "$VERBS_PEER" ] && cp "$VERBS_PEER" "$1/verbs_peer"
  [ -n "${INTEROP_VERBS_PROBE:-}" ] && [ -x "$INTEROP_VERBS_PROBE" ] &&
    cp "$INTEROP_VERBS_PROBE" "$1/softndk-verbs-probe"
  [ -n "${INTEROP_VERBS_EXERCISE:-}" ] && [ -x "$INTEROP_VERBS_EXERCISE" ] &&
    cp "$INTEROP_VERBS_EXERCISE" "$1/softndk-verbs-exercise"
  return 0
}

cmd_up() {
  GROUP=$1
  prepare_host
  check_skip
  local d
  d=$(gdir "$GROUP")
  if vm_alive "$GROUP"; then
    log "a VM of group $GROUP is still running; stopping it first"
    "$SIW_PEER" stop --name "$(cat "$d/vm_name")" --quiet >/dev/null 2>&1 || true
  fi
  rm -rf "$d"
  mkdir -p "$d/share" "$d/cases"
  # A new session of the group: its rows of an earlier run would otherwise
  # be listed with this run's at `down`.
  if [ -f "$STATE/results.tsv" ]; then
    awk -F '\t' -v g="$GROUP" '$1 != g' "$STATE/results.tsv" >"$STATE/results.tsv.new" &&
      mv "$STATE/results.tsv.new" "$STATE/results.tsv"
  fi
  SHARE=$d/share
  write_agent "$SHARE"
  local name="softndk-interop-$GROUP-$$"
  local hp_rping hp_srv ht_a ht_b
  hp_rping=$(free_port)
  hp_srv=$(free_port)
  ht_a=$(free_port)
  ht_b=$(free_port)
  local extra=()
  # siw-tunable.ko with its defaults (mpa_crc_required=N is the stock value):
  # cases then switch parameters at run time through sysfs.
  [ "$GROUP" = tunable ] && extra+=(--siw-param mpa_crc_required=N)
  # nvmf: host port HP_NVME -> the guest's NVMe-oF port 4420 (its kernel
  # target); the guest's 10.0.2.100:4420 -> host port HT_NVME (a softndk target).
  local hp_nvme="" ht_nvme=""
  if [ "$GROUP" = nvmf ]; then
    hp_nvme=$(free_port)
    ht_nvme=$(free_port)
    extra+=(--fwd "$hp_nvme:4420" --to-host "4420:$ht_nvme")
  fi
  cat >"$d/env" <<EOF
VM_NAME=$name
HP_RPING=$hp_rping
HP_SRV=$hp_srv
HT_A=$ht_a
HT_B=$ht_b
PCAP=$d/eth0.pcap
HP_NVME=$hp_nvme
HT_NVME=$ht_nvme
EOF
  echo "$name" >"$d/vm_name"
  local t0 rc=0 out
  t0=$(now)
  log "starting VM $name (group $GROUP): --fwd $hp_rping:$G_RPING --fwd $hp_srv:$G_SRV --to-host $G_TOHOST_A:$ht_a --to-host $G_TOHOST_B:$ht_b ${extra[*]}"
  out=$("$SIW_PEER" start --name "$name" --share "$SHARE" --pcap "$d/eth0.pcap" \
    --fwd "$hp_rping:$G_RPING" --fwd "$hp_srv:$G_SRV" \
    --to-host "$G_TOHOST_A:$ht_a" --to-host "$G_TOHOST_B:$ht_b" \
    --ready-port "$G_RPING" --ready-timeout 150 --timeout "$VM_LIFETIME" "${extra[@]}" \
    -- 'exec bash /share/agent.sh' 2>"$d/start.log") || rc=$?
  sed 's/^/  siw-peer| /' "$d/start.log"
  if [ $rc != 0 ]; then
    "$SIW_PEER" stop --name "$name" --quiet >/dev/null 2>&1 || true
    die "siw-peer start failed (rc $rc)"
  fi
  echo "$out" | tail -n 1 >"$d/run_dir"
  local end=$((SECONDS + 60))
  until [ -e "$SHARE/agent.up" ]; do
    if [ $SECONDS -ge $end ]; then
      "$SIW_PEER" stop --name "$name" --quiet >/dev/null 2>&1 || true
      die "guest agent did not come up"
    fi
    sleep 0.2
  done
  log "VM up after $(since "$t0") s; guest: $(tr '\n' ' ' <"$SHARE/versions.txt")"
  printf '%s\t%s\t%s\n' "$GROUP" "(boot)" "$(since "$t0")" >>"$STATE/timings.tsv"
}

cmd_down() {
  GROUP=$1
  check_skip
  local d
  d=$(gdir "$GROUP")
  [ -s "$d/vm_name" ] || die "no VM recorded for group $GROUP"
  local name rc=0
  name=$(cat "$d/vm_name")
  SHARE=$d/share
  touch "$SHARE/req/quit"
  "$SIW_PEER" wait --name "$name" --timeout 30 --quiet >/dev/null 2>&1 || rc=$?
  if vm_alive "$GROUP"; then "$SIW_PEER" stop --name "$name" --quiet >/dev/null 2>&1 || true; fi
  vm_alive "$GROUP" && die "VM $name still running after stop"
  GDIR=$d
  PCAP=$d/eth0.pcap
  DECODER=$(dirname "$SIW_PEER")/iwarp-decode.py
  local capfail=0
  capture_checks || capfail=1
  echo "group $GROUP: results (case, result, seconds, failed checks):"
  grep -P "^$GROUP\t" "$STATE/results.tsv" 2>/dev/null | cut -f2- | sed 's/^/  /' || true
  [ $capfail = 0 ] || die "capture checks failed (see above)"
  return 0
}

# ---------------------------------------------------------------- cases
# Each case function runs with GROUP, CASE, DRIVER (engine|ndk), DRV (path),
# CDIR (its output dir), SHARE, PCAP and the ports of the group's env file.

drv_path() {
  case $1 in
    engine) echo "$MPA_PEER" ;;
    ndk) echo "$NDK_PEER" ;;
    *) echo "" ;;
  esac
}

# The ESTABLISHED events the persistent rping server logged so far.
rping_established() { grep -c 'ESTABLISHED' "$SHARE/rping-s.log" 2>/dev/null || true; }

# softndk initiator -> persistent rping -s -P of the guest; ARGS for the driver.
connect_to_rping() { # ARGS...
  local before
  before=$(rping_established)
  # Cases without a driver suffix (badpeer_*) connect through the public ABI.
  "${DRV:-$NDK_PEER}" connect "127.0.0.1:$HP_RPING" --timeout-ms 20000 "$@" >"$CDIR/peer.json" 2>"$CDIR/peer.err" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  # rping's log reaches the host over 9p: give it a few seconds
  local end=$((SECONDS + 5))
  until [ "$(rping_established)" -gt "$before" ] || [ $SECONDS -ge $end ]; do sleep 0.2; done
  RPING_NEW=$(($(rping_established) - before))
  jq -r 'select(.local_port != null) | .local_port' "$CDIR/peer.json" >>"$CDIR/cap.ports" 2>/dev/null || true
}

case_mpa_default() {
  local t0
  t0=$(now)
  connect_to_rping --pd-len 16
  check "connect succeeded" jtrue "$CDIR/peer.json" '.[0].status == "STATUS_SUCCESS"'
  if [ "$DRIVER" = ndk ]; then
    # An NDK adapter offers RFC 6581 P2P by default (NDK connection
    # semantics, docs/connections.md); stock siw as responder takes the
    # Write RTR.
    check "MPA rev 2, no CRC, no markers, P2P with the Write RTR" jtrue "$CDIR/peer.json" '.[0] | .mpa_rev == 2 and .crc == false and .markers == false and .p2p == true and .rtr == "write"'
  else
    check "MPA rev 2, no CRC, no markers, no P2P" jtrue "$CDIR/peer.json" '.[0] | .mpa_rev == 2 and .crc == false and .markers == false and .p2p == false'
  fi
  check "IRD/ORD 1/1 (siw answers our ORD/IRD)" jtrue "$CDIR/peer.json" '.[0] | .ird == 1 and .ord == 1'
  check "graceful disconnect" jtrue "$CDIR/peer.json" '.[0].disconnect == "STATUS_SUCCESS"'
  check "rping (siw) saw ESTABLISHED" test "$RPING_NEW" -ge 1
  cap_window "$t0"
  if [ "$DRIVER" = ndk ]; then
    cap_has "request rev 2 with 16 B ULP data after the IRD/ORD words" 'MPA REQUEST  rev=2  M=0 C=0 R=0 S/enhanced=1 res=0x0  pd_len=20  pd=........a0a1a2a3'
    cap_has "P2P offer" 'flags: P2P,RTR:'
  else
    cap_has "request rev 2 with 16 B ULP data after the IRD/ORD words" 'MPA REQUEST  rev=2  M=0 C=0 R=0 S/enhanced=1 res=0x0  pd_len=20  pd=00010001a0a1a2a3'
  fi
  cap_has "siw's reply rev 2, C=0" 'MPA REPLY  rev=2  M=0 C=0 R=0 S/enhanced=1'
}

# The NDK adapter with P2P switched off (SOFTNDK_MPA_NO_PEER_TO_PEER): the
# Request of softndk 0.1, no RTR.
case_mpa_no_p2p() {
  local t0
  t0=$(now)
  connect_to_rping --pd-len 16 --p2p none
  check "connect succeeded" jtrue "$CDIR/peer.json" '.[0].status == "STATUS_SUCCESS"'
  check "MPA rev 2, no P2P" jtrue "$CDIR/peer.json" '.[0] | .mpa_rev == 2 and .p2p == false'
  check "graceful disconnect" jtrue "$CDIR/peer.json" '.[0].disconnect == "STATUS_SUCCESS"'
  check "rping (siw) saw ESTABLISHED" test "$RPING_NEW" -ge 1
  cap_window "$t0"
  cap_has "request without the P2P bits" 'MPA REQUEST  rev=2  M=0 C=0 R=0 S/enhanced=1 res=0x0  pd_len=20  pd=00010001a0a1a2a3'
}

case_mpa_crc_softndk() {
  local t0
  t0=$(now)
  connect_to_rping --crc
  check "connect succeeded" jtrue "$CDIR/peer.json" '.[0].status == "STATUS_SUCCESS"'
  check "CRC negotiated" jtrue "$CDIR/peer.json" '.[0].crc == true'
  check "rping (siw) saw ESTABLISHED" test "$RPING_NEW" -ge 1
  cap_window "$t0"
  cap_has "request C=1" 'MPA REQUEST  rev=2  M=0 C=1'
  cap_has "siw echoes C=1" 'MPA REPLY  rev=2  M=0 C=1'
}

# Did siw answer this attempt's Read RTR with the zero-length Read Response?
# engine: mpa_peer compares the bytes; ndk: rping sends nothing of its own,
# so any FPDU the adapter received while the connection was held is it.
rtr_answered() {
  if [ "$DRIVER" = engine ]; then
    jtrue "$CDIR/peer.json" '.[0].rtr_response_ok == true'
  else
    jtrue "$CDIR/peer.json" '.[0].rdma_in_frames >= 1'
  fi
}
p2p_attempt() { # write|read
  local hold=()
  # ndk: hold the connection 3 s so that an unanswered RTR stays visible in
  # the guest's socket (mpa_peer itself waits up to 10 s for the response).
  [ "$DRIVER" = ndk ] && hold=(--hold-ms 3000)
  rxq_watch_start "$G_RPING"
  # The RTR goes out at once otherwise (note 1: the engine's Read RTR went
  # unread in 4 of 6 runs without the hold-off); the _delayed case instead
  # sleeps in the driver.
  if [ -n "${MPA_PEER_RTR_DELAY_MS:-}" ]; then
    connect_to_rping --p2p "$1" "${hold[@]}"
  else
    SOFTNDK_MPA_HOLDOFF_MS=$SIW_HOLDOFF_MS connect_to_rping --p2p "$1" "${hold[@]}"
  fi
  rxq_watch_stop "$CDIR/rxq.txt"
}
p2p_case() { # write|read
  local t0 want=$1 sig
  t0=$(now)
  p2p_attempt "$want"
  if [ "$want" = read ] && [ -z "${MPA_PEER_RTR_DELAY_MS:-}" ] && ! rtr_answered &&
    sig=$(rxq_stalled "$CDIR/rxq.txt" 52); then
    # siw's race (docs/compatibility.md, note 1): the Read RTR right behind
    # siw's Reply sat unread in siw's socket. Retried once; the retry must
    # get its response like any other run.
    known "siw left the Read RTR unread behind its MPA Reply ($sig); retried once (note 1)"
    local f
    for f in peer.json peer.err rxq.txt; do mv "$CDIR/$f" "$CDIR/try1.$f"; done
    p2p_attempt "$want"
  elif [ "$want" = write ] && sig=$(rxq_stalled "$CDIR/rxq.txt" 20); then
    # The Write RTR meets the same race; nothing here depends on siw reading
    # it early (the FIN releases it), so it is only reported.
    echo "  info  siw left the Write RTR unread behind its MPA Reply ($sig; note 1)"
  fi
  check "connect succeeded" jtrue "$CDIR/peer.json" '.[0].status == "STATUS_SUCCESS"'
  check "P2P with the $want RTR" jtrue "$CDIR/peer.json" ".[0] | .p2p == true and .rtr == \"$want\""
  if [ "$want" = read ]; then
    check "siw answered the Read RTR with the zero-length Read Response" rtr_answered
  fi
  # siw holds ESTABLISHED back until the RTR arrived: this proves siw took it.
  check "rping (siw) saw ESTABLISHED (RTR accepted)" test "$RPING_NEW" -ge 1
  cap_window "$t0"
  if [ "$want" = write ]; then
    cap_has "P2P offer with the Write RTR" 'flags: P2P,RTR:zero-length-RDMA-WRITE;'
    cap_has "zero-length RDMA Write RTR" 'I->R  FPDU    20 B .*RDMA Write .*STag=0x00000001 TO=0x0  payload 0 B'
  else
    cap_has "P2P offer with the Read RTR" 'flags: P2P,RTR:zero-length-RDMA-READ;'
    cap_has "zero-length Read Request RTR" 'I->R  FPDU    52 B .*RDMA Read Request .*size=0'
    cap_has "siw's zero-length Read Response" 'R->I  FPDU    20 B .*RDMA Read Response .*payload 0 B'
  fi
}
case_mpa_p2p_write() { p2p_case write; }
case_mpa_p2p_read() { p2p_case read; }
# The same with the RTR sent 300 ms after siw's Reply instead of at once.
case_mpa_p2p_read_delayed() {
  export MPA_PEER_RTR_DELAY_MS=300
  p2p_case read
}

case_mpa_rev1() {
  local t0
  t0=$(now)
  connect_to_rping --rev 1
  check "connect succeeded" jtrue "$CDIR/peer.json" '.[0].status == "STATUS_SUCCESS"'
  check "MPA rev 1" jtrue "$CDIR/peer.json" '.[0].mpa_rev == 1'
  check "rping (siw) saw ESTABLISHED" test "$RPING_NEW" -ge 1
  cap_window "$t0"
  cap_has "request rev 1 without private data" 'MPA REQUEST  rev=1  M=0 C=0 R=0 S/enhanced=0 res=0x0  pd_len=0'
  cap_has "siw replies rev 1" 'MPA REPLY  rev=1'
}

case_mpa_pd_max() {
  local t0
  t0=$(now)
  connect_to_rping --pd-len 252
  check "connect with 252 B private data succeeded" jtrue "$CDIR/peer.json" '.[0].status == "STATUS_SUCCESS"'
  check "rping (siw) saw ESTABLISHED" test "$RPING_NEW" -ge 1
  cap_window "$t0"
  cap_has "request pd_len=256 (4 B IRD/ORD + 252 B)" 'MPA REQUEST  rev=2 .* pd_len=256 .*a0a1a2'
  cap_has "last private data byte 0x9b (0xA0+251)" 'ULP private data: a0a1.*999a9b$'
  # One byte more does not fit siw's 256-byte limit: refused locally, nothing sent.
  "$DRV" connect "127.0.0.1:$HP_RPING" --timeout-ms 20000 --pd-len 253 >"$CDIR/peer253.json" 2>&1 || true
  sed 's/^/  peer253| /' "$CDIR/peer253.json"
  check "253 B private data refused locally" jtrue "$CDIR/peer253.json" '.[0].status != "STATUS_SUCCESS"'
}

# A host listener on HT_A that rejects with 32 bytes of private data; siw's
# rping -c connects to it through --to-host.
case_mpa_reject_pd() {
  local t0 rc=0 job
  t0=$(now)
  rm -f "$CDIR/ready"
  "$DRV" listen "127.0.0.1:$HT_A" --reject-len 32 --ready-file "$CDIR/ready" --timeout-ms 60000 \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" &
  local lp=$!
  HOST_PIDS+=("$lp")
  echo "$G_TOHOST_A" >>"$CDIR/cap.ports"
  listener_ready || return 0
  g_run 60 "rping -c -a $TO_HOST_IP -p $G_TOHOST_A -C 1 -v -d; echo rping-rc=\$?" >"$CDIR/rping.txt" 2>&1 || rc=$?
  sed 's/^/  rping| /' "$CDIR/rping.txt"
  wait "$lp" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  check "listener rejected" jtrue "$CDIR/peer.json" '.[0] | .action == "reject" and .status == "STATUS_SUCCESS"'
  check "siw's request: rev 2, IRD/ORD 1/1" jtrue "$CDIR/peer.json" '.[0] | .req_rev == 2 and .req_ird == 1 and .req_ord == 1'
  check "rping (siw) reports REJECTED" has "$CDIR/rping.txt" 'RDMA_CM_EVENT_REJECTED'
  cap_window "$t0"
  cap_has "reply R=1 with the IRD/ORD words and 32 B of ULP data" 'MPA REPLY  rev=2  M=0 C=0 R=1 S/enhanced=1 res=0x0  pd_len=36 .*a0a1a2a3'
}

# ---- siw as the initiator (tunable group): siw rping -c -> host listener ----
TUN=/sys/module/siw/parameters
siw_params() { # NAME=VALUE... (others back to the defaults)
  local s="echo N > $TUN/mpa_crc_required; echo N > $TUN/peer_to_peer; echo 3 > $TUN/rtr_type; echo 2 > $TUN/mpa_version" kv
  for kv in "$@"; do s+="; echo ${kv#*=} > $TUN/${kv%%=*}"; done
  g_run 20 "$s; grep -H . $TUN/mpa_crc_required $TUN/peer_to_peer $TUN/rtr_type $TUN/mpa_version" | sed 's/^/  siw| /'
}

# siw rping -c -> host listener that accepts (LISTEN_ARGS), then holds the
# connection for 2 s and disconnects. rping itself then fails (the engine
# driver has no rping data path): only the connection setup is asserted.
siw_initiates() { # LISTEN_ARGS...
  rm -f "$CDIR/ready"
  "$DRV" listen "127.0.0.1:$HT_A" --hold-ms 2000 --ready-file "$CDIR/ready" --timeout-ms 60000 "$@" \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" &
  local lp=$!
  HOST_PIDS+=("$lp")
  echo "$G_TOHOST_A" >>"$CDIR/cap.ports"
  listener_ready || return 0
  g_run 60 "timeout 30 rping -c -a $TO_HOST_IP -p $G_TOHOST_A -C 1 -v -d; echo rping-rc=\$?" >"$CDIR/rping.txt" 2>&1 || true
  sed 's/^/  rping| /' "$CDIR/rping.txt"
  wait "$lp" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  check "siw's rping reached ESTABLISHED" has "$CDIR/rping.txt" 'RDMA_CM_EVENT_ESTABLISHED'
  check "accepted" jtrue "$CDIR/peer.json" '.[0] | .action == "accept" and .status == "STATUS_SUCCESS"'
}

case_siw_init_default() {
  local t0
  t0=$(now)
  siw_params
  siw_initiates
  check "rev 2 request, IRD/ORD 1/1, no CRC" jtrue "$CDIR/peer.json" '.[0] | .req_rev == 2 and .req_ird == 1 and .req_ord == 1 and .crc == false and .p2p == false'
  cap_window "$t0"
  cap_has "siw's request pd 00010001" 'MPA REQUEST  rev=2  M=0 C=0 R=0 S/enhanced=1 res=0x0  pd_len=4  pd=00010001'
}

case_siw_crc_required() {
  local t0
  t0=$(now)
  siw_params mpa_crc_required=Y
  siw_initiates
  check "siw asks for CRC; CRC on" jtrue "$CDIR/peer.json" '.[0] | .req_crc == true and .crc == true'
  # softndk initiator without CRC -> siw responder with mpa_crc_required=Y:
  # siw (6.1) only enforces its policy as the initiator unless mpa_crc_strict
  # is also set; as responder it echoes C=0 and runs without CRC (observed
  # 2026-11-22, reply C=0). Asserted as such, so a change in siw shows up.
  local before
  before=$(rping_established)
  "$DRV" connect "127.0.0.1:$HP_RPING" --timeout-ms 20000 >"$CDIR/peer2.json" 2>&1 || true
  jq -r 'select(.local_port != null) | .local_port' "$CDIR/peer2.json" >>"$CDIR/cap.ports" 2>/dev/null || true
  local end=$((SECONDS + 5))
  until [ "$(rping_established)" -gt "$before" ] || [ $SECONDS -ge $end ]; do sleep 0.2; done
  sed 's/^/  peer2| /' "$CDIR/peer2.json"
  check "softndk C=0 -> siw responder (crc required, not strict): accepted without CRC" jtrue "$CDIR/peer2.json" '.[0] | .status == "STATUS_SUCCESS" and .crc == false'
  check "rping -s (siw) saw ESTABLISHED" test $(($(rping_established) - before)) -ge 1
  cap_window "$t0"
  cap_has "siw request C=1, softndk reply C=1" 'MPA REPLY  rev=2  M=0 C=1'
  cap_has "softndk request C=0, siw reply C=0" 'MPA REPLY  rev=2  M=0 C=0'
  siw_params
}

siw_p2p_case() { # write|read
  local t0 want=$1 type=2
  [ "$want" = read ] && type=1
  t0=$(now)
  siw_params peer_to_peer=Y rtr_type=$type
  siw_initiates
  check "P2P with the $want RTR" jtrue "$CDIR/peer.json" ".[0] | .req_p2p == true and .p2p == true and .rtr == \"$want\""
  if [ "$DRIVER" = engine ]; then
    check "siw's RTR FPDU byte-exact as encoded by softndk" jtrue "$CDIR/peer.json" '.[0].rtr_ok == true'
  fi
  cap_window "$t0"
  if [ "$want" = write ]; then
    cap_has "reply picks the Write RTR" 'REPLY.*|flags: P2P,RTR:zero-length-RDMA-WRITE;'
    cap_has "siw's zero-length Write RTR" 'I->R  FPDU    20 B .*RDMA Write .*payload 0 B'
  else
    cap_has "siw's zero-length Read Request RTR" 'I->R  FPDU    52 B .*RDMA Read Request'
    cap_has "softndk's zero-length Read Response" 'R->I  FPDU    20 B .*RDMA Read Response .*payload 0 B'
  fi
  siw_params
}
case_siw_p2p_write() { siw_p2p_case write; }
case_siw_p2p_read() { siw_p2p_case read; }

case_siw_rev1() {
  local t0
  t0=$(now)
  siw_params mpa_version=1
  siw_initiates
  check "rev 1 request, rev 1 connection" jtrue "$CDIR/peer.json" '.[0] | .req_rev == 1 and .mpa_rev == 1'
  cap_window "$t0"
  cap_has "siw request rev 1" 'MPA REQUEST  rev=1'
  cap_has "softndk reply rev 1" 'MPA REPLY  rev=1'
  siw_params
}

# ---- data path ----
need_ndkping() {
  if [ -z "$NDKPING" ] || [ ! -x "$NDKPING" ]; then
    check "ndkping is built (tools/ndkping has no target yet)" false
    return 1
  fi
}

# ndkping -c on the host against the persistent rping -s -P (-S 65000) of
# the guest: several sizes (4000 and 65000 span several 1448-byte FPDUs).
# ndkping sends its first Send (the 16-byte buffer advertisement, a 40-byte
# FPDU) as soon as it is connected, which right behind siw's MPA Reply meets
# siw's race (note 8; 2 of 3 connections in one run of 06:37 without the
# hold-off). So it runs with the initiator hold-off, and a run that still
# fails with exactly that signature - ndkping connected, timed
# out waiting for rping's first reply, and the guest socket held those 40
# bytes unread the whole time - is reported KNOWN and retried once; the
# retry must pass. Any other failure, or a second one, fails the case.
ndkping_attempt() { # SIZE COUNT OUTFILE -> RC
  rxq_watch_start "$G_RPING"
  RC=0
  SOFTNDK_MPA_HOLDOFF_MS=$SIW_HOLDOFF_MS timeout 120 "$NDKPING" -c -a 127.0.0.1 -p "$HP_RPING" \
    -C "$2" -S "$1" -V -v -d >"$3" 2>&1 || RC=$?
  rxq_watch_stop "$3.rxq"
}
note8_signature() { # OUTFILE: prints the evidence if the failed run matches
  has "$1" '^ESTABLISHED' && has "$1" 'timed out waiting for the peer' &&
    hasnt "$1" 'received go-ahead|ping data: rdma-ping-' && rxq_stalled "$1.rxq" 40
}
case_ndkping_client() {
  local t0 s c out sig
  t0=$(now)
  need_ndkping || return 0
  for sc in "64 10" "4000 5" "65000 2"; do
    s=${sc% *}
    c=${sc#* }
    out=$CDIR/ndkping-$s.txt
    ndkping_attempt "$s" "$c" "$out"
    if [ "$RC" -ne 0 ] && sig=$(note8_signature "$out"); then
      sed 's/^/  ndkping(1st)| /' "$out" | tail -n 3
      known "siw left ndkping's first Send unread behind its MPA Reply (-S $s; $sig); retried once (note 8)"
      mv "$out" "$CDIR/ndkping-$s.try1.txt"
      mv "$out.rxq" "$CDIR/ndkping-$s.try1.txt.rxq"
      ndkping_attempt "$s" "$c" "$out"
    fi
    sed 's/^/  ndkping| /' "$out" | tail -n 4
    check "ndkping -c -S $s -C $c -V: rc 0" test "$RC" -eq 0
    check "ndkping -S $s printed $c ping lines" test "$(grep -c 'ping data: rdma-ping-' "$out")" -ge "$c"
  done
  cap_window "$t0"
  # softndk's Read Responses: one FPDU per message by default (docs/datapath.md,
  # FPDU size; SOFTNDK_FPDU_PER_SEGMENT gives siw's MSS rule), reassembled by
  # siw; siw's Writes arrive as MSS-sized FPDUs (1456 B through slirp).
  cap_has "softndk's 65000 B Read Response as one FPDU" 'I->R: .*RDMA Read Response x[0-9]+ \(FPDU sizes [0-9,]*65020'
  cap_has "siw's multi-FPDU RDMA Writes (MSS-sized FPDUs)" 'R->I: .*RDMA Write x[0-9]+ \(FPDU sizes [0-9,]*14[45][0-9]'
}

# rping -c in the guest against ndkping -s on the host (via --to-host).
case_ndkping_server() {
  local t0 s c rc
  t0=$(now)
  need_ndkping || return 0
  timeout 200 "$NDKPING" -s -a 127.0.0.1 -p "$HT_B" -P -v >"$CDIR/ndkping-s.txt" 2>&1 &
  HOST_PIDS+=("$!")
  sleep 1
  for sc in "64 10" "4000 5" "65000 2"; do
    s=${sc% *}
    c=${sc#* }
    rc=0
    g_run 100 "rping -c -a $TO_HOST_IP -p $G_TOHOST_B -C $c -S $s -V -v" >"$CDIR/rping-$s.txt" 2>&1 || rc=$?
    sed 's/^/  rping| /' "$CDIR/rping-$s.txt" | tail -n 3
    # rping's own teardown race (rdma-core 44): after the DISCONNECT event
    # its main thread destroys the event channel while its cm thread still
    # waits in rdma_get_cm_event(), which fails with EBADF and exits non-zero.
    # Every ping was exchanged and verified by then (counted below).
    if [ $rc -ne 0 ] && tail -n 2 "$CDIR/rping-$s.txt" | head -n 1 | grep -q 'client DISCONNECT EVENT' &&
      tail -n 1 "$CDIR/rping-$s.txt" | grep -q '^rdma_get_cm_event: Bad file descriptor$'; then
      known "rping -S $s: rping's cm thread hit its torn-down event channel after DISCONNECT (rc $rc)"
      rc=0
    fi
    check "rping -c -S $s -C $c -V against ndkping -s: rc 0" test $rc -eq 0
    check "rping -S $s printed $c ping lines" test "$(grep -c 'ping data: rdma-ping-' "$CDIR/rping-$s.txt")" -ge "$c"
  done
  cap_window "$t0"
}

need_verbs_peer() {
  if [ ! -x "$SHARE/verbs_peer" ]; then
    check "verbs_peer built (needs libibverbs-dev, librdmacm-dev on the host)" false
    return 1
  fi
}

# softndk active: Write, Read, Send toward a verbs_peer server on siw; both
# sides verify the data. Send with Invalidate: case_sendinv_ndk_to_siw.
case_rdma_ndk_active() {
  local t0 job rc
  t0=$(now)
  need_verbs_peer || return 0
  g_bg job "./verbs_peer server -p $G_SRV -s 65536 -r passive"
  g_run 30 "wait-listen $G_SRV 25" >/dev/null || true
  rc=0
  timeout 120 "$NDK_PEER" rdma "127.0.0.1:$HP_SRV" --ops write,read,send --size 65536 \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" || rc=$?
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  g_wait "$job" "$(partner_wait)" || true
  g_out "$job" | sed 's/^/  verbs| /' | tee "$CDIR/verbs.txt" >/dev/null
  check "ndk_peer rc 0" test $rc -eq 0
  local op
  for op in write read send; do
    check "$op verified by both sides" jtrue "$CDIR/peer.json" "map(select(.op == \"$op\")) | length == 1 and .[0].ok == true"
    check "$op: siw side ok" has "$CDIR/verbs.txt" "\"op\": \"$op\".*\"ok\": true"
  done
  cap_window "$t0"
}

# siw active: verbs_peer connects from the guest to ndk_peer's server.
# Send with Invalidate needs a fast-registered MR on softndk's side (NDK):
# case_sendinv_siw_to_ndk.
case_rdma_siw_active() {
  local t0 rc=0
  t0=$(now)
  need_verbs_peer || return 0
  rm -f "$CDIR/ready"
  "$NDK_PEER" serve "127.0.0.1:$HT_A" --size 65536 --ready-file "$CDIR/ready" --timeout-ms 100000 \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" &
  local lp=$!
  HOST_PIDS+=("$lp")
  listener_ready || return 0
  g_run 120 "./verbs_peer client -a $TO_HOST_IP -p $G_TOHOST_A -s 65536 -r active -o write,read,send" >"$CDIR/verbs.txt" 2>&1 || rc=$?
  sed 's/^/  verbs| /' "$CDIR/verbs.txt"
  wait "$lp" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  check "verbs_peer rc 0" test $rc -eq 0
  local op
  for op in write read send; do
    check "$op verified (siw side)" has "$CDIR/verbs.txt" "\"op\": \"$op\".*\"ok\": true"
    check "$op verified (softndk side)" jtrue "$CDIR/peer.json" "map(select(.op == \"$op\")) | length == 1 and .[0].ok == true"
  done
  cap_window "$t0"
}

# Read limits are negotiated, never raised (issue 16 item 5): siw connects
# with IRD = ORD = 2 (rdma_conn_param depths) to an ndk_peer that accepts
# with 64/64. softndk's Reply carries IRD 2 / ORD 2 (it used to raise its
# IRD to 64, which siw then adopted as its ORD), both sides run the data
# exchange, and softndk's accept reports the effective 2/2. (siw as the
# responder raises its own IRD to the initiator's ORD - relaxed
# negotiation - so the ORD side is checked by the host suites.)
case_limits_siw_active() {
  local t0 rc=0
  t0=$(now)
  need_verbs_peer || return 0
  rm -f "$CDIR/ready"
  "$NDK_PEER" serve "127.0.0.1:$HT_A" --size 65536 --ird 64 --ord 64 --ready-file "$CDIR/ready" \
    --timeout-ms 100000 >"$CDIR/peer.json" 2>"$CDIR/peer.err" &
  local lp=$!
  HOST_PIDS+=("$lp")
  listener_ready || return 0
  g_run 120 "./verbs_peer client -a $TO_HOST_IP -p $G_TOHOST_A -s 65536 -d 2 -r active -o write,read,send" >"$CDIR/verbs.txt" 2>&1 || rc=$?
  sed 's/^/  verbs| /' "$CDIR/verbs.txt"
  wait "$lp" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  check "verbs_peer rc 0" test $rc -eq 0
  check "softndk's effective IRD/ORD are siw's 2/2" jtrue "$CDIR/peer.json" 'map(select(.op == "accept")) | length == 1 and .[0].ird == 2 and .[0].ord == 2'
  local op
  for op in write read send; do
    check "$op verified (siw side)" has "$CDIR/verbs.txt" "\"op\": \"$op\".*\"ok\": true"
    check "$op verified (softndk side)" jtrue "$CDIR/peer.json" "map(select(.op == \"$op\")) | length == 1 and .[0].ok == true"
  done
  cap_window "$t0"
}

# ---- Send with Invalidate ----
# softndk -> siw: NdkSendAndInvalidate naming the rkey of verbs_peer's
# ibv_reg_mr buffer. siw invalidates any MR of the QP's PD on a Send with
# Invalidate, but never says so to user space: siw_rqe_complete() fills the
# CQE's invalidate flag and STag only for kernel CQs, and rdma-core's siw
# provider (44.0 and upstream) sets wc_flags to 0 in copy_cqe(). So the
# invalidation is proven by its effect (docs/compatibility.md, note 7): the
# following softndk RDMA Read of that rkey is refused with siw's Terminate
# and completes with an error, and nothing lands in softndk's buffer.
case_sendinv_ndk_to_siw() {
  local t0 job rc=0
  t0=$(now)
  need_verbs_peer || return 0
  ALLOW_TRUNCATED=1
  g_bg job "./verbs_peer server -p $G_SRV -s 65536 -r passive"
  g_run 30 "wait-listen $G_SRV 25" >/dev/null || true
  timeout 120 "$NDK_PEER" rdma "127.0.0.1:$HP_SRV" --ops write,sendinv,invread --size 65536 \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" || rc=$?
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  g_wait "$job" "$(partner_wait)" || true
  g_out "$job" | sed 's/^/  verbs| /' | tee "$CDIR/verbs.txt" >/dev/null
  jq -r 'select(.local_port != null) | .local_port' "$CDIR/peer.json" >>"$CDIR/cap.ports" 2>/dev/null || true
  check "ndk_peer rc 0" test $rc -eq 0
  check "write verified by both sides" jtrue "$CDIR/peer.json" 'map(select(.op == "write")) | length == 1 and .[0].ok == true'
  check "sendinv: NdkSendAndInvalidate completed, siw verified the 64 B" jtrue "$CDIR/peer.json" 'map(select(.op == "sendinv")) | length == 1 and .[0].ok == true and .[0].sendinv == "STATUS_SUCCESS"'
  check "sendinv: siw's receive completion ok (verbs_peer)" has "$CDIR/verbs.txt" '"op": "sendinv", "ok": true, "wc": "success", "bytes": 64'
  local stag reported
  stag=$(jq -r 'select(.op == "sendinv") | .stag' "$CDIR/peer.json" 2>/dev/null | head -n 1)
  reported=$(jq -r 'select(.op == "sendinv") | .peer_wc_reported_invalidation' "$CDIR/peer.json" 2>/dev/null | head -n 1)
  echo "  info  siw's user-space WC reported the invalidation: ${reported:-?} (rdma-core's siw provider never does; note 7)"
  check "invread: the Read of the invalidated rkey failed with STATUS_ACCESS_VIOLATION" jtrue "$CDIR/peer.json" 'map(select(.op == "invread")) | length == 1 and .[0].ok == true and .[0].read == "STATUS_ACCESS_VIOLATION"'
  check "invread: nothing landed in softndk's buffer" jtrue "$CDIR/peer.json" 'map(select(.op == "invread")) | .[0].buffer_untouched == true'
  check "invread: softndk received siw's Terminate (RDMAP remote protection, invalid STag)" jtrue "$CDIR/peer.json" 'map(select(.op == "invread")) | .[0].terminate_received == "layer0/etype1/code0x00"'
  # siw does not flush the user-space RQ; it raises IBV_EVENT_QP_REQ_ERR
  # ("invalid request local work queue error") for the refused Read Request.
  check "siw's application got the QP error (async event)" has "$CDIR/verbs.txt" '"op": "serve", .*"async_event": "[^"]+'
  cap_window "$t0"
  cap_has "softndk's Send with Invalidate" 'I->R  FPDU .*Send with Invalidate'
  if [[ $stag =~ ^[0-9]+$ ]]; then
    cap_tshark "the Send with Invalidate names siw's rkey $(printf 0x%08x "$stag")" \
      "iwarp_rdma.opcode == 4 && iwarp_rdma.inval_stag == $(printf 0x%08x "$stag")"
    cap_has "softndk's Read Request of the invalidated rkey" "I->R  FPDU .*RDMA Read Request .*source STag=$(printf 0x%08x "$stag")"
  else
    check "ndk_peer reported siw's rkey" false
  fi
  cap_has "siw's Terminate" 'R->I .*Terminate'
}

# siw -> softndk: ndk_peer serves a fast-registered buffer (NDK lets a peer
# invalidate only fast-registered MRs and windows); verbs_peer RDMA-Writes
# it, sends a Send with Invalidate naming its token, then Writes to it again.
# softndk's receive completion must be NdkOperationTypeReceiveAndInvalidate
# with that token, and the second Write is refused with softndk's Terminate.
case_sendinv_siw_to_ndk() {
  local t0 rc=0
  t0=$(now)
  need_verbs_peer || return 0
  ALLOW_TRUNCATED=1
  rm -f "$CDIR/ready"
  "$NDK_PEER" serve "127.0.0.1:$HT_A" --size 65536 --fr --ready-file "$CDIR/ready" --timeout-ms 60000 \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" &
  local lp=$!
  HOST_PIDS+=("$lp")
  listener_ready || return 0
  g_run 90 "./verbs_peer client -a $TO_HOST_IP -p $G_TOHOST_A -s 65536 -r active -o write,sendinv,invwrite" >"$CDIR/verbs.txt" 2>&1 || rc=$?
  sed 's/^/  verbs| /' "$CDIR/verbs.txt"
  wait "$lp" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  echo "$G_TOHOST_A" >>"$CDIR/cap.ports"
  check "verbs_peer rc 0" test $rc -eq 0
  check "write into the fast-registered MR verified (both sides)" jtrue "$CDIR/peer.json" 'map(select(.op == "write")) | length == 1 and .[0].ok == true'
  check "write: siw side ok" has "$CDIR/verbs.txt" '"op": "write", "ok": true'
  check "sendinv: softndk's completion is ReceiveAndInvalidate (0x8001) naming the token; Write and Send data verified" jtrue "$CDIR/peer.json" 'map(select(.op == "sendinv")) | length == 1 and .[0].ok == true and .[0].invalidated == true and .[0].completion_type == 32769 and .[0].invalidated_token == .[0].token and .[0].written == 65536 and .[0].written_first_bad == -1'
  check "sendinv: siw side ok (softndk reported the invalidation)" has "$CDIR/verbs.txt" '"op": "sendinv", "ok": true.*"invalidated": true'
  check "invwrite: softndk refused the Write with a Terminate (DDP tagged, invalid STag)" jtrue "$CDIR/peer.json" 'map(select(.op == "serve")) | length == 1 and .[0].terminate_sent == "layer1/etype1/code0x00"'
  check "invwrite: the buffer kept the data of before the invalidation" jtrue "$CDIR/peer.json" 'map(select(.op == "serve")) | .[0].buffer_kept_after_invalidate == true'
  check "invwrite: siw reported the error to its application" has "$CDIR/verbs.txt" '"op": "invwrite".*"error": "[^"]+'
  local tok
  tok=$(jq -r 'select(.op == "sendinv") | .token' "$CDIR/peer.json" 2>/dev/null | head -n 1)
  cap_window "$t0"
  cap_has "siw's Send with Invalidate" 'I->R  FPDU .*Send with Invalidate'
  if [[ $tok =~ ^[0-9]+$ ]]; then
    cap_tshark "siw's Send with Invalidate names softndk's token $(printf 0x%08x "$tok")" \
      "iwarp_rdma.opcode == 4 && iwarp_rdma.inval_stag == $(printf 0x%08x "$tok")"
  else
    check "ndk_peer reported its token" false
  fi
  cap_has "softndk's Terminate" 'R->I .*Terminate'
}

# softndk writes to an STag siw does not have: siw answers with a Terminate
# (DDP tagged buffer error, invalid STag) and softndk reports it.
case_terminate_ndk_to_siw() {
  local t0 job rc=0
  t0=$(now)
  need_verbs_peer || return 0
  ALLOW_TRUNCATED=1
  g_bg job "./verbs_peer server -p $G_SRV -s 4096 -r passive"
  g_run 30 "wait-listen $G_SRV 25" >/dev/null || true
  timeout 60 "$NDK_PEER" rdma "127.0.0.1:$HP_SRV" --ops badwrite --size 4096 \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" || rc=$?
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  g_wait "$job" "$(partner_wait)" || true
  g_out "$job" | sed 's/^/  verbs| /' | tee "$CDIR/verbs.txt" >/dev/null
  check "softndk received a Terminate (DDP layer, tagged buffer error, invalid STag: 0x1x00)" jtrue "$CDIR/peer.json" 'map(select(.op == "badwrite")) | .[0].terminate_received != null and .[0].terminate_received != "none"'
  check "softndk flushed the QP (later work completed with an error)" jtrue "$CDIR/peer.json" 'map(select(.op == "badwrite")) | .[0].flushed == true'
  cap_window "$t0"
  cap_has "siw's Terminate" 'R->I .*Terminate'
}

case_terminate_siw_to_ndk() {
  local t0 rc=0
  t0=$(now)
  need_verbs_peer || return 0
  ALLOW_TRUNCATED=1
  rm -f "$CDIR/ready"
  "$NDK_PEER" serve "127.0.0.1:$HT_A" --size 4096 --ready-file "$CDIR/ready" --timeout-ms 60000 \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" &
  local lp=$!
  HOST_PIDS+=("$lp")
  listener_ready || return 0
  g_run 60 "./verbs_peer client -a $TO_HOST_IP -p $G_TOHOST_A -s 4096 -r active -o badwrite" >"$CDIR/verbs.txt" 2>&1 || rc=$?
  sed 's/^/  verbs| /' "$CDIR/verbs.txt"
  wait "$lp" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  check "softndk sent a Terminate" jtrue "$CDIR/peer.json" 'map(select(.terminate_sent != null and .terminate_sent != "none")) | length >= 1'
  check "siw reported the error to its application" has "$CDIR/verbs.txt" '"op": "badwrite".*"error": "[^"]+'
  cap_window "$t0"
  cap_has "softndk's Terminate" 'R->I .*Terminate'
}

# ---- bad peers: softndk reports, flushes, and keeps serving others ----
case_badpeer_reject() {
  local t0 job
  t0=$(now)
  need_verbs_peer || return 0
  g_bg job "./verbs_peer server -p $G_SRV -r reject"
  g_run 30 "wait-listen $G_SRV 25" >/dev/null || true
  timeout 60 "$NDK_PEER" connect "127.0.0.1:$HP_SRV" --pd-len 8 >"$CDIR/peer.json" 2>"$CDIR/peer.err" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  g_wait "$job" "$(partner_wait)" || true
  g_out "$job" | sed 's/^/  verbs| /'
  check "NdkConnect completes with STATUS_CONNECTION_REFUSED" jtrue "$CDIR/peer.json" '.[0].status == "STATUS_CONNECTION_REFUSED"'
  check "siw's reject private data delivered (verbs_peer sends 'siw says no')" jtrue "$CDIR/peer.json" '.[0].peer_pd | test("7369772073617973206e6f")'
  # the same adapter still connects elsewhere: the persistent rping server
  connect_to_rping
  check "a following connect succeeds" jtrue "$CDIR/peer.json" '.[0].status == "STATUS_SUCCESS"'
  cap_window "$t0"
}

case_badpeer_reset() {
  local t0 job
  t0=$(now)
  need_verbs_peer || return 0
  ALLOW_TRUNCATED=1
  # verbs_peer exits abruptly in the middle of a stream of Sends (-r die):
  # siw tears the connection down under softndk's posted work.
  g_bg job "./verbs_peer server -p $G_SRV -s 65536 -r die"
  g_run 30 "wait-listen $G_SRV 25" >/dev/null || true
  timeout 90 "$NDK_PEER" rdma "127.0.0.1:$HP_SRV" --ops stream --size 65536 \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  g_wait "$job" "$(partner_wait)" || true
  check "softndk reported the broken connection (disconnect event)" jtrue "$CDIR/peer.json" 'map(select(.op == "stream")) | .[0].disconnect_event != null'
  check "outstanding work flushed with an error status" jtrue "$CDIR/peer.json" 'map(select(.op == "stream")) | .[0].flushed == true'
  connect_to_rping
  check "a following connect succeeds" jtrue "$CDIR/peer.json" '.[0].status == "STATUS_SUCCESS"'
  cap_window "$t0"
}

case_badpeer_terminate() {
  # siw sends a Terminate (verbs_peer writes to a bad STag of softndk's) while
  # a second connection to the same softndk listener carries on.
  local t0 rc=0
  t0=$(now)
  need_verbs_peer || return 0
  ALLOW_TRUNCATED=1
  rm -f "$CDIR/ready"
  "$NDK_PEER" serve "127.0.0.1:$HT_A" --size 4096 --count 2 --ready-file "$CDIR/ready" --timeout-ms 90000 \
    >"$CDIR/peer.json" 2>"$CDIR/peer.err" &
  local lp=$!
  HOST_PIDS+=("$lp")
  listener_ready || return 0
  g_run 60 "./verbs_peer client -a $TO_HOST_IP -p $G_TOHOST_A -s 4096 -r active -o badwrite" >"$CDIR/verbs1.txt" 2>&1 || true
  g_run 60 "./verbs_peer client -a $TO_HOST_IP -p $G_TOHOST_A -s 4096 -r active -o write,send" >"$CDIR/verbs2.txt" 2>&1 || rc=$?
  sed 's/^/  verbs1| /' "$CDIR/verbs1.txt"
  sed 's/^/  verbs2| /' "$CDIR/verbs2.txt"
  wait "$lp" || true
  sed 's/^/  peer| /' "$CDIR/peer.json" "$CDIR/peer.err"
  check "second connection served after the Terminate" test $rc -eq 0
  check "second connection's Write and Send verified" has "$CDIR/verbs2.txt" '"op": "send".*"ok": true'
  cap_window "$t0"
}

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

# ---------------------------------------------------------------- driver
cmd_case() {
  GROUP=$1
  CASE=$2
  export SOFTNDK_MPA_HOLDOFF_MS=${SOFTNDK_MPA_HOLDOFF_MS:-$SIW_HOLDOFF_MS}
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
main "$@"
