# SPDX-License-Identifier: Apache-2.0
# tests/interop/lib.sh - the helpers every case file uses: logging, the
# guest agent (scripts dropped into share/req), host background processes,
# assertions, siw's unread-first-FPDU watch and the capture checks.
# Sourced by run.sh.

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

# A host port for the group's lifetime, picked at random below the kernel's
# ephemeral range (tests/util/free_port.h does the same for the C++ tests):
# a bind(0) port is an ephemeral one, which any connect() on the host (the
# suite's loopback tests run beside the VM groups, ConnScale alone opens
# 1000 connections) may take as its local port before the case's listener
# binds it, up to an hour later for the --to-host ports.
free_port() {
  python3 -c '
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(500):
    p = random.randrange(20000, low) if low - 20000 >= 1000 else 0
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        print(s.getsockname()[1])
        break
    except OSError:
        pass
    finally:
        s.close()
'
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
# Otherwise up to 30 s: after an error verbs_peer waits (up to 20 s) for
# siw's close event before it reports, and a TCG guest on a loaded host runs
# that late; a partner killed before it printed fails the case's siw-side
# checks. The wait ends when the partner does.
partner_wait() {
  if jq -e -s 'map(select((.op == "connect" or .op == "setup" or .op == "listen") and .ok == false)) | length > 0' \
    "$CDIR/peer.json" >/dev/null 2>&1; then
    echo 2
  else
    echo 30
  fi
}
# A host process's TCP listener on 127.0.0.1:PORT, waited for (at most
# SECS): a fixed pause before the guest connects is too short for a
# program starting on a loaded host.
host_listening() { # PORT SECS
  local end=$((SECONDS + $2))
  until ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.1
  done
}
# A host listener must have come up before the guest connects to it
# (bounded by 60 s: a host peer starting at host load 70-100 gets a few
# percent of a core; the wait ends as soon as the listener is up).
listener_ready() {
  local end=$((SECONDS + 60))
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
# The guest kernel logged no BUG or oops (siw 6.1's iwcm.c BUG()
# after a stalled close, README section m of the interop harness). A guest
# that does not answer fails the check too: an empty answer is no evidence.
# A user process's fault is the kernel's "traps: NAME[PID] general
# protection fault ... in LIBRARY" line, not a kernel fault: not counted
# (perftest's ib_send_lat -R server faults in librdmacm at its exit in the
# guest; once it had, every later case of the group that checks dmesg
# failed here, 30 Nov).
guest_no_oops() {
  local rc=0
  g_run 60 "dmesg | grep -E 'BUG|Oops|invalid opcode|general protection' | grep -v ' traps: ' | tail -n 20" \
    >"$CDIR/oops.txt" 2>&1 || rc=$?
  sed 's/^/  dmesg| /' "$CDIR/oops.txt"
  check "guest kernel: no BUG or oops in dmesg (the guest answered: rc $rc)" test $rc -eq 0 -a ! -s "$CDIR/oops.txt"
}

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
# The library's default cures it (issue 32, rdmap/stream_wake.cc): an
# initiator whose peer has sent nothing since its Reply, although we sent
# FPDUs, sends a zero-length RDMA Write after twice the MPA round trip, which
# runs siw's new upcall. Cases run with the library's defaults (cmd_case
# unsets SOFTNDK_MPA_HOLDOFF_MS). Only mpa_peer, which drives the bare
# connection engine and writes its RTR itself (no NDK data path, so no
# wake-up), still holds its first FPDU back, with its own --holdoff-ms flag.
ENGINE_HOLDOFF_MS=300
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
