# SPDX-License-Identifier: Apache-2.0
# tests/interop/vm.sh - one VM per group: the host's siw-peer build, the
# guest agent, and the fixture set-up (`run.sh up GROUP`) and clean-up
# (`run.sh down GROUP`). Sourced by run.sh.

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
  # The verbs backend's probe and exercise (group verbs, verbs_cases.sh).
  [ -n "${INTEROP_VERBS_PROBE:-}" ] && [ -x "$INTEROP_VERBS_PROBE" ] &&
    cp "$INTEROP_VERBS_PROBE" "$1/softndk-verbs-probe"
  [ -n "${INTEROP_VERBS_EXERCISE:-}" ] && [ -x "$INTEROP_VERBS_EXERCISE" ] &&
    cp "$INTEROP_VERBS_EXERCISE" "$1/softndk-verbs-exercise"
  # The verbs backend serving softndk's own tools (verbs_cases.sh, vkit/):
  # the tools, libsoftndk, its plugin and the libraries the guest lacks.
  if [ -n "${INTEROP_VERBS_PLUGIN:-}" ] && [ -e "$INTEROP_VERBS_PLUGIN" ] &&
    [ -n "${INTEROP_SOFTNDK_SO:-}" ] && [ -e "$INTEROP_SOFTNDK_SO" ]; then
    mkdir -p "$1/vkit"
    cp "$INTEROP_VERBS_PLUGIN" "$1/vkit/libsoftndk-verbs.so"
    cp -L "$INTEROP_SOFTNDK_SO" "$1/vkit/$(basename "$(readlink -f "$INTEROP_SOFTNDK_SO")")"
    local so lib
    so=$(basename "$(readlink -f "$INTEROP_SOFTNDK_SO")")
    ln -sf "$so" "$1/vkit/libsoftndk.so.0"
    for lib in $(ldd "$INTEROP_SOFTNDK_SO" | awk '/libisal|libmnl/ {print $3}'); do
      cp -L "$lib" "$1/vkit/$(basename "$lib")"
    done
    for t in "${NDKPING:-}" "${INTEROP_NDKPERF:-}" "${INTEROP_NDKINFO:-}" "${INTEROP_NDK_NVMET:-}" \
      "${INTEROP_NDK_NVME:-}" "${INTEROP_NDK_CONFORMANCE:-}" "${INTEROP_CONNECTOR_TESTS:-}" \
      "${INTEROP_VERBS_NDK_EXERCISE:-}" "${NDK_SMB:-}"; do
      [ -n "$t" ] && [ -x "$t" ] && cp "$t" "$1/vkit/"
    done
    # ndk-smb's crypto (nettle): not in the guest image.
    if [ -n "${NDK_SMB:-}" ] && [ -x "$NDK_SMB" ]; then
      for lib in $(ldd "$NDK_SMB" | awk '/libnettle/ {print $3}'); do
        cp -L "$lib" "$1/vkit/$(basename "$lib")"
      done
    fi
  fi
  return 0
}

# The VM lifetime of GROUP (run.sh: VM_LIFETIME, VM_MARGIN).
vm_lifetime() { # GROUP
  local c g t sum=0
  for c in "${CASES[@]}"; do
    read -r g _ t <<<"$c"
    [ "$g" = "$1" ] && sum=$((sum + t))
  done
  sum=$((sum + VM_MARGIN))
  echo $((sum > VM_LIFETIME ? sum : VM_LIFETIME))
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
  local name="${INTEROP_VM_PREFIX:-softndk-interop}-$GROUP-$$"
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
  # smb: host port HP_SMB -> the guest's SMB Direct port 5445 (ksmbd's RDMA
  # listener over siw; smb_cases.sh starts ksmbd).
  local hp_smb=""
  if [ "$GROUP" = smb ]; then
    hp_smb=$(free_port)
    extra+=(--fwd "$hp_smb:5445")
  fi
  # smb-cifs: cifs always dials 5445; the guest's 10.0.2.100:5445 -> HT_SMB
  # (ndk-smbd on the host).
  local ht_smb=""
  if [ "$GROUP" = smb-cifs ]; then
    ht_smb=$(free_port)
    extra+=(--to-host "5445:$ht_smb")
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
HP_SMB=$hp_smb
HT_SMB=$ht_smb
EOF
  echo "$name" >"$d/vm_name"
  local t0 rc=0 out
  t0=$(now)
  log "starting VM $name (group $GROUP): --fwd $hp_rping:$G_RPING --fwd $hp_srv:$G_SRV --to-host $G_TOHOST_A:$ht_a --to-host $G_TOHOST_B:$ht_b ${extra[*]}"
  # Readiness bound: a TCG guest boots in 24-100 s here (host load 1-14) but took
  # 101 s of kernel boot alone at host load 24-30, past the 150 s this was
  # (3 groups failed at once). 330 s keeps `up` inside its 480 s ctest
  # timeout with the 60 s agent wait below.
  out=$("$SIW_PEER" start --name "$name" --share "$SHARE" --pcap "$d/eth0.pcap" \
    --fwd "$hp_rping:$G_RPING" --fwd "$hp_srv:$G_SRV" \
    --to-host "$G_TOHOST_A:$ht_a" --to-host "$G_TOHOST_B:$ht_b" \
    --ready-port "$G_RPING" --ready-timeout 330 --timeout "$(vm_lifetime "$GROUP")" "${extra[@]}" \
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
