# SPDX-License-Identifier: Apache-2.0
# tests/interop/nvmf_cases.sh - group nvmf of run.sh (sourced by it): the
# Linux kernel's NVMe over Fabrics host (nvme-rdma over siw, nvme-cli, fio)
# in the guest against ndk-nvmet on the host. The guest reaches the target
# through --to-host: 10.0.2.100:$G_TOHOST_A -> 127.0.0.1:$HT_A.
#
# Each case starts its own ndk-nvmet (a sparse file namespace in the case
# dir, counters as JSON at exit) and stops it with SIGTERM.

NDK_NVMET=${INTEROP_NDK_NVMET:-}
NVMF_NQN=nqn.2026-11.io.softndk:interop
NVMF_HOST=nqn.2026-11.io.softndk:guest
NVMF_HOST2=nqn.2026-11.io.softndk:guest2
NVMF_GUEST_SETUP="modprobe nvme-rdma 2>/dev/null; modprobe nvme-fabrics 2>/dev/null; true"

jq_ok() { jq -e "$2" "$1" >/dev/null 2>&1; } # FILE EXPR

need_nvmet() {
  if [ -z "$NDK_NVMET" ] || [ ! -x "$NDK_NVMET" ]; then
    check "ndk-nvmet built (INTEROP_NDK_NVMET)" false
    return 1
  fi
}

# nvmet_start [ARGS...]: ndk-nvmet on 127.0.0.1:$HT_A, advertising the
# guest's view of it; waits for its start-up line.
nvmet_start() {
  truncate -s 64M "$CDIR/ns1.img"
  "$NDK_NVMET" -a 127.0.0.1 -p "$HT_A" -n "$NVMF_NQN" --ns "file:$CDIR/ns1.img" \
    --host "$NVMF_HOST" --host "$NVMF_HOST2" --queues 4 --kato 30000 \
    --advertise-addr "$TO_HOST_IP" --advertise-port "$G_TOHOST_A" \
    --duration 280 --json "$CDIR/nvmet.json" "$@" >"$CDIR/nvmet.out" 2>"$CDIR/nvmet.err" &
  NVMET_PID=$!
  HOST_PIDS+=("$NVMET_PID")
  # Its start-up line, waited for up to 60 s (a server starting on a host
  # at load 70-100 gets a few percent of a core; ends as soon as it is up).
  local end=$((SECONDS + 60))
  until grep -q 'ndk-nvmet:' "$CDIR/nvmet.out" 2>/dev/null || [ $SECONDS -ge $end ]; do sleep 0.1; done
  sed 's/^/  nvmet| /' "$CDIR/nvmet.out"
  check "ndk-nvmet listening" grep -q "on 127.0.0.1:$HT_A" "$CDIR/nvmet.out"
}

# nvmet_stop: SIGTERM, wait for its exit (JSON counters written).
nvmet_stop() {
  kill -TERM "$NVMET_PID" 2>/dev/null || true
  local rc=0
  wait "$NVMET_PID" || rc=$?
  sed 's/^/  nvmet| /' "$CDIR/nvmet.err" | tail -n 20
  check "ndk-nvmet exited 0 at SIGTERM" test "$rc" -eq 0
  [ -s "$CDIR/nvmet.json" ] && jq -c . "$CDIR/nvmet.json" | sed 's/^/  nvmet-stats| /'
  return 0
}

# The guest's block device of our namespace (model "softndk ndk-nvmet").
# find_dev NQN: a guest shell snippet setting $dev to the block device of
# that subsystem's namespace (the multipath head when there is one).
# The namespace's block device, never a multipath path device (nvmeXcYnZ:
# hidden, no O_DIRECT; it can appear before the head nvmeXnY does).
find_dev() {
  echo 'dev=""; for i in $(seq 1 50); do for b in /sys/block/nvme*n*; do [ -e "$b" ] || continue; case ${b##*/} in nvme*c*n*) continue ;; esac; if [ "$(cat $b/device/subsysnqn 2>/dev/null)" = "'"$1"'" ]; then dev=/dev/$(basename $b); fi; done; [ -n "$dev" ] && break; sleep 0.2; done'
}
NVMF_FIND_DEV=$(find_dev "$NVMF_NQN")

nvmf_connect() { # EXTRA_ARGS: nvme connect in the guest; sets NVMF_DEV
  local out="$CDIR/connect-$(date +%s%N).txt" rc=0
  g_run 60 "$NVMF_GUEST_SETUP; nvme connect -t rdma -a $TO_HOST_IP -s $G_TOHOST_A -n $NVMF_NQN ${NVMF_CONNECT_HOST:---hostnqn $NVMF_HOST} $*; rc=\$?; $NVMF_FIND_DEV; echo \"dev=\$dev\"; lsblk -o NAME,SIZE,MODEL 2>/dev/null | grep -i nvme; exit \$rc" >"$out" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$out"
  NVMF_DEV=$(sed -n 's/^dev=//p' "$out" | tail -n 1)
  check "nvme connect: rc 0" test "$rc" -eq 0
  check "namespace block device appeared ($NVMF_DEV)" test -n "$NVMF_DEV"
}

nvmf_disconnect() {
  local rc=0
  g_run 60 "nvme disconnect -n $NVMF_NQN" >"$CDIR/disconnect.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/disconnect.txt"
  check "nvme disconnect: rc 0, 1 controller" grep -q 'disconnected 1 controller' "$CDIR/disconnect.txt"
}

nvmf_dmesg() { # keep the guest's nvme/nvmet lines of this case
  g_run 20 "dmesg | grep -iE 'nvme|rdma|siw' | tail -n 40" >"$CDIR/dmesg.txt" 2>&1 || true
  sed 's/^/  dmesg| /' "$CDIR/dmesg.txt" | tail -n 25
}

# fio NAME ARGS: one verified fio job on the namespace; figures to fio.tsv.
nvmf_fio() {
  local name=$1 rc=0
  shift
  g_run 240 "fio --name=$name --filename=$NVMF_DEV --direct=1 --ioengine=libaio --verify=crc32c --verify_state_save=0 --output-format=json $* > /tmp/$name.json; rc=\$?; cat /tmp/$name.json; exit \$rc" >"$CDIR/fio-$name.json" 2>&1 || rc=$?
  local line
  line=$(jq -r '.jobs[0] | "\(.read.iops|floor) read IOPS \(.read.bw) KiB/s, \(.write.iops|floor) write IOPS \(.write.bw) KiB/s, read clat p50 \(.read.clat_ns.percentile["50.000000"] // 0 | ./1000|floor) us, p99 \(.read.clat_ns.percentile["99.000000"] // 0 | ./1000|floor) us, errors \(.error)"' "$CDIR/fio-$name.json" 2>/dev/null || echo "no fio JSON")
  echo "  fio $name: $line"
  printf '%s\t%s\t%s\n' "$CASE" "$name $*" "$line" >>"$STATE/fio.tsv"
  check "fio $name (verify crc32c): rc 0" test "$rc" -eq 0
  check "fio $name: no error" jq_ok "$CDIR/fio-$name.json" '.jobs[0].error == 0'
}

case_nvmet_discover() {
  need_nvmet || return 0
  nvmet_start
  local rc=0
  g_run 60 "$NVMF_GUEST_SETUP; nvme discover -t rdma -a $TO_HOST_IP -s $G_TOHOST_A --hostnqn $NVMF_HOST" >"$CDIR/discover.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/discover.txt"
  check "nvme discover: rc 0" test "$rc" -eq 0
  check "discovery log names the subsystem" grep -q "subnqn: *$NVMF_NQN" "$CDIR/discover.txt"
  check "trtype rdma" grep -q 'trtype: *rdma' "$CDIR/discover.txt"
  check "traddr $TO_HOST_IP, trsvcid $G_TOHOST_A" bash -c "grep -q 'traddr: *$TO_HOST_IP' '$CDIR/discover.txt' && grep -q 'trsvcid: *$G_TOHOST_A' '$CDIR/discover.txt'"
  check "rdma_prtype iwarp, rdma_cms rdma-cm" bash -c "grep -q 'rdma_prtype: *iwarp' '$CDIR/discover.txt' && grep -q 'rdma_cms: *rdma-cm' '$CDIR/discover.txt'"
  # A host NQN the target does not know is refused (Connect Invalid Host).
  rc=0
  g_run 60 "nvme connect -t rdma -a $TO_HOST_IP -s $G_TOHOST_A -n $NVMF_NQN --hostnqn nqn.2026-11.io.softndk:stranger" >"$CDIR/badhost.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/badhost.txt"
  check "unknown host refused" test "$rc" -ne 0
  nvmf_dmesg
  check "guest logged the refusal" grep -qiE 'is not allowed|invalid host|Connect command failed' "$CDIR/dmesg.txt"
  nvmet_stop
}

# The main data path: 2 I/O queues, fio verify (4 KiB random QD1/QD32,
# 128 KiB sequential), ext4, disconnect. MPA CRC off (nvmet_crc: on).
case_nvmet_fio() {
  need_nvmet || return 0
  nvmet_start --crc off
  nvmf_connect -i 2
  if [ -n "$NVMF_DEV" ]; then
    nvmf_fio rand4k_qd1 --rw=randrw --bs=4k --size=2M --iodepth=1
    nvmf_fio rand4k_qd32 --rw=randrw --bs=4k --size=4M --iodepth=32
    nvmf_fio seq128k --rw=write --bs=128k --size=16M --iodepth=4 --do_verify=1
    local rc=0
    g_run 200 "mkfs.ext4 -q -F $NVMF_DEV && fsck.ext4 -fn $NVMF_DEV" >"$CDIR/ext4.txt" 2>&1 || rc=$?
    sed 's/^/  ext4| /' "$CDIR/ext4.txt" | tail -n 6
    check "mkfs.ext4 + fsck.ext4 -fn clean" test "$rc" -eq 0
  fi
  nvmf_dmesg
  check "guest: 2 I/O queues" grep -qE 'creating 2 I/O queues' "$CDIR/dmesg.txt"
  check "guest: new ctrl with our NQN" grep -q "new ctrl: NQN \"$NVMF_NQN\"" "$CDIR/dmesg.txt"
  nvmf_disconnect
  nvmet_stop
  check "target used in-capsule data and remote invalidation" jq_ok "$CDIR/nvmet.json" '.in_capsule_writes > 0 and .remote_invalidations > 0'
  check "target counted no error completion" jq_ok "$CDIR/nvmet.json" '.error_completions == 0'
}

# The same with MPA CRC required by the target (siw then sends and checks
# CRC32c on every FPDU).
case_nvmet_crc() {
  need_nvmet || return 0
  local t0
  t0=$(now)
  nvmet_start --crc on
  nvmf_connect -i 2
  if [ -n "$NVMF_DEV" ]; then
    nvmf_fio crc_rand4k_qd8 --rw=randrw --bs=4k --size=1M --iodepth=8
    nvmf_fio crc_seq128k --rw=write --bs=128k --size=4M --iodepth=2 --do_verify=1
  fi
  nvmf_dmesg
  nvmf_disconnect
  nvmet_stop
  cap_window "$t0"
  cap_has "siw's request" 'MPA REQUEST  rev=[12]'
  cap_has "ndk-nvmet's reply with C=1" 'MPA REPLY  rev=[12]  M=0 C=1'
}

# The host goes away mid-I/O: the guest resets its controller while fio
# runs (the queues' QPs vanish with commands outstanding; the host then
# connects a new association). The target frees the old one and serves
# the new; fio finishes verified.
case_nvmet_host_reset() {
  need_nvmet || return 0
  nvmet_start
  nvmf_connect -i 2
  if [ -n "$NVMF_DEV" ]; then
    local job rc=0
    g_bg job "fio --name=bg --filename=$NVMF_DEV --direct=1 --ioengine=libaio --rw=randwrite --bs=4k --size=2M --iodepth=16 --verify=crc32c --verify_state_save=0 --output-format=json > /tmp/bg.json; rc=\$?; cat /tmp/bg.json; exit \$rc"
    sleep 4
    g_run 30 "for n in /sys/class/nvme/nvme*; do if [ \"\$(cat \$n/subsysnqn)\" = $NVMF_NQN ]; then echo reset \$n; echo 1 > \$n/reset_controller; fi; done" 2>&1 | sed 's/^/  guest| /'
    g_wait "$job" 200 || rc=$?
    g_out "$job" >"$CDIR/fio-bg.json"
    check "fio across the reset (verify crc32c): rc 0" test "$rc" -eq 0
    local line
    line=$(jq -r '.jobs[0] | "\(.write.iops|floor) write IOPS, errors \(.error)"' "$CDIR/fio-bg.json" 2>/dev/null || echo "no fio JSON")
    echo "  fio bg: $line"
    printf '%s\t%s\t%s\n' "$CASE" "bg randwrite 4k qd16 across a controller reset" "$line" >>"$STATE/fio.tsv"
  fi
  nvmf_dmesg
  check "guest: controller reset and reconnected" grep -qiE 'resetting controller|Successfully reconnected|creating 2 I/O queues' "$CDIR/dmesg.txt"
  nvmf_disconnect
  nvmet_stop
  check "target: two associations (the first freed)" jq_ok "$CDIR/nvmet.json" '.associations >= 2'
}

# Two hosts (two host NQNs, so two controllers and associations) on the
# subsystem; the guest's native multipath makes them two paths of one
# namespace. Host 1's controller is deleted while fio runs: the target
# frees that association and serves the I/O on host 2's; fio finishes
# verified, and host 2 goes on alone.
case_nvmet_two_hosts() {
  need_nvmet || return 0
  nvmet_start
  nvmf_connect -i 2
  # nvme-cli 2.3 refuses a second connection to the same address and
  # subsystem whatever the host NQN ("already connected"); the kernel does
  # not (another host NQN is another controller): ask it directly.
  local rc=0
  g_run 60 "echo transport=rdma,traddr=$TO_HOST_IP,trsvcid=$G_TOHOST_A,nqn=$NVMF_NQN,hostnqn=$NVMF_HOST2,nr_io_queues=1 > /dev/nvme-fabrics" >"$CDIR/connect2.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/connect2.txt"
  check "second host's controller created (/dev/nvme-fabrics)" test "$rc" -eq 0
  g_run 20 "cat /sys/module/nvme_core/parameters/multipath; ls /sys/class/nvme/; for n in /sys/class/nvme/nvme*; do echo \$n \$(cat \$n/hostnqn) \$(cat \$n/cntlid) \$(cat \$n/state); done; lsblk -o NAME,MODEL | grep nvme" 2>&1 | sed 's/^/  guest| /' | tee "$CDIR/paths.txt"
  check "two controllers of the subsystem" test "$(grep -cE 'softndk:guest2? [0-9]+ live' "$CDIR/paths.txt")" -eq 2
  if [ -n "$NVMF_DEV" ]; then
    local job rc=0
    g_bg job "fio --name=bg --filename=$NVMF_DEV --direct=1 --ioengine=libaio --rw=randwrite --bs=4k --size=2M --iodepth=16 --verify=crc32c --verify_state_save=0 --output-format=json > /tmp/bg2.json; rc=\$?; cat /tmp/bg2.json; exit \$rc"
    sleep 4
    g_run 60 "for n in /sys/class/nvme/nvme*; do if [ \"\$(cat \$n/hostnqn)\" = $NVMF_HOST ]; then echo delete \$n; echo 1 > \$n/delete_controller; fi; done" 2>&1 | sed 's/^/  guest| /'
    g_wait "$job" 200 || rc=$?
    g_out "$job" >"$CDIR/fio-bg.json"
    local line
    line=$(jq -r '.jobs[0] | "\(.write.iops|floor) write IOPS, errors \(.error)"' "$CDIR/fio-bg.json" 2>/dev/null || echo "no fio JSON")
    echo "  fio bg: $line"
    printf '%s\t%s\t%s\n' "$CASE" "bg randwrite 4k qd16, host 1 deleted mid-I/O" "$line" >>"$STATE/fio.tsv"
    check "fio across host 1's removal (verify crc32c): rc 0" test "$rc" -eq 0
    NVMF_DEV=$(g_run 20 "$(find_dev "$NVMF_NQN"); echo \$dev" | tail -n 1)
    nvmf_fio after_host2 --rw=randrw --bs=4k --size=1M --iodepth=8
  fi
  nvmf_dmesg
  nvmf_disconnect
  nvmet_stop
  check "target: two associations" jq_ok "$CDIR/nvmet.json" '.associations == 2'
}

# Baseline for the figures, same VM, same run: the guest's own kernel
# target (nvmet-rdma on siw0, a file namespace) under the same fio jobs.
# No slirp hop: the guest talks to itself, so this is an upper bound.
case_nvmet_kernel_baseline() {
  local kn=nqn.2026-11.io.softndk:kernel-baseline rc=0
  local d=/sys/kernel/config/nvmet
  g_run 60 "modprobe nvmet-rdma; modprobe nvme-rdma; mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
truncate -s 64M /root/kb.img
mkdir -p $d/subsystems/$kn/namespaces/1; echo 1 > $d/subsystems/$kn/attr_allow_any_host
echo -n /root/kb.img > $d/subsystems/$kn/namespaces/1/device_path; echo 1 > $d/subsystems/$kn/namespaces/1/enable
mkdir -p $d/ports/9; cd $d/ports/9; echo 10.0.2.15 > addr_traddr; echo rdma > addr_trtype; echo 4421 > addr_trsvcid; echo ipv4 > addr_adrfam
ln -s $d/subsystems/$kn subsystems/$kn
nvme connect -t rdma -a 10.0.2.15 -s 4421 -n $kn -i 2 --hostnqn $NVMF_HOST" >"$CDIR/kernel-setup.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/kernel-setup.txt"
  check "kernel target set up and connected" test "$rc" -eq 0
  NVMF_DEV=$(g_run 20 "$(find_dev "$kn"); echo \$dev" | tail -n 1)
  echo "  kernel target device: $NVMF_DEV"
  if [ -n "$NVMF_DEV" ]; then
    nvmf_fio kb_rand4k_qd1 --rw=randrw --bs=4k --size=2M --iodepth=1
    nvmf_fio kb_rand4k_qd32 --rw=randrw --bs=4k --size=4M --iodepth=32
    nvmf_fio kb_seq128k --rw=write --bs=128k --size=16M --iodepth=4 --do_verify=1
  fi
  g_run 60 "nvme disconnect -n $kn; rm -f $d/ports/9/subsystems/$kn; rmdir $d/ports/9; echo 0 > $d/subsystems/$kn/namespaces/1/enable; rmdir $d/subsystems/$kn/namespaces/1; rmdir $d/subsystems/$kn; rm -f /root/kb.img" 2>&1 | sed 's/^/  guest| /'
}
