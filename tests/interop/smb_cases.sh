# SPDX-License-Identifier: Apache-2.0
# tests/interop/smb_cases.sh - group smb: softndk's SMB client ndk-smb
# (smb/client) -> Linux's ksmbd in the guest over SMB Direct on siw (issue
# 29 item 6, client direction; sourced by run.sh). ksmbd serves //10.0.2.15/
# share (user smbtest, NTLMv2) and /pub (guest) from /srv; the VM forwards
# host port $HP_SMB to its RDMA listener on 5445. Every transfer is checked
# by checksum in the guest, and every case proves that the RDMA channel
# carried the data: ndk-smb's own counters (--stats: READs answered by RDMA
# Write, WRITEs pulled by RDMA Read, the tokens ksmbd invalidated), ksmbd's
# debug lines (`ksmbd.control -d rdma`) and, for the small cases, the
# capture (RDMA Read Request, RDMA Write, Send with Invalidate).

SMB_USER=smbtest
SMB_PASS=siw-peer-Pw1

need_ndk_smb() {
  if [ -z "${NDK_SMB:-}" ] || [ ! -x "$NDK_SMB" ]; then
    check "ndk-smb built (INTEROP_NDK_SMB)" false
    return 1
  fi
}

# ksmbd with the two shares, once per VM (idempotent); waits until its RDMA
# listener is up (rdma res, inside the guest: never a TCP probe of a siw
# listener, interop README section l).
smb_ksmbd_up() {
  local out rc=0
  out=$(g_run 90 "
set -e
if ! id $SMB_USER >/dev/null 2>&1; then
  useradd -M -s /usr/sbin/nologin $SMB_USER
  mkdir -p /srv/share /srv/pub
  chmod 777 /srv/share /srv/pub
  printf '[global]\n\tmap to guest = bad user\n\tguest account = nobody\n[share]\n\tpath = /srv/share\n\twriteable = yes\n[pub]\n\tpath = /srv/pub\n\twriteable = yes\n\tguest ok = yes\n' >/etc/ksmbd/ksmbd.conf
  ksmbd.adduser -a $SMB_USER -p $SMB_PASS >/dev/null
fi
if ! rdma res show cm_id 2>/dev/null | grep -q 'ksmbd.*:5445'; then
  modprobe ksmbd
  ksmbd.control -d rdma >/dev/null 2>&1 || true
  pgrep -x ksmbd.mountd >/dev/null || ksmbd.mountd
  for i in \$(seq 1 100); do
    rdma res show cm_id 2>/dev/null | grep -q 'ksmbd.*:5445' && break
    sleep 0.2
  done
fi
rdma res show cm_id | grep 5445
") || rc=$?
  echo "$out" | sed 's/^/  guest| /'
  check "ksmbd listening on 5445 over siw0 in the guest" test $rc -eq 0
  [ $rc -eq 0 ]
}

# ksmbd 6.1.192 deadlocks its RDMA CM handler when a connection arrives
# while the previous one's memory caches are being destroyed: its receive
# cache (smb_direct_resp_%p, 1472-byte objects) is a cache of its own,
# whose sysfs entry is the SLUB unique id :0001472; a new connection that
# creates its cache before the old one's sysfs directory is gone fails with
# EEXIST ("sysfs: cannot create duplicate filename"), and the error path
# destroys the cm_id from inside its own event handler (hung iw_cm_wq; no
# SMB Direct connection works again until reboot; docs/smb-direct.md,
# quirks). So a new connection waits until that cache is gone: no
# /sys/kernel/slab/smb_direct_resp_* alias link still resolves (a link
# dangles once its cache's sysfs directory is removed; seen in the guest:
# resolving while a mount was up, dangling ~1 s after its umount). The
# request pool's links (smb_direct_rqst_pool_*) are not checked: that cache
# merges into a shared 256-byte one that lives for good. At most 60 checks,
# ~3 s. (It used to wait until /sys/kernel/slab had no smb_direct_* name at
# all, which never happens after the first connection: SLUB leaves alias
# links behind; so it always ran all 60 checks, ~20-30 s per connection at
# host load 16-20. /proc/slabinfo would say the same, but one read of it
# took ~1.2 s in the TCG guest.) Guest shell code, bash builtins only (a
# process per check is slow in a loaded TCG guest): the function settle,
# 0 when settled.
SMB_SETTLE_FN='settle() {
  local i f rest
  for i in $(seq 1 60); do
    rest=0
    for f in /sys/kernel/slab/smb_direct_resp_*; do [ -e "$f" ] && rest=1; done
    [ $rest = 0 ] && return 0
    sleep 0.05
  done
  return 1
}'
smb_settle() {
  g_run 30 "$SMB_SETTLE_FN
settle" >/dev/null 2>&1 || true
}

# ndk-smb against the forwarded port. SMB OUTFILE ARGS...: stdout in
# OUTFILE, stderr in OUTFILE.err, exit code in OUTFILE.rc, its run time
# (seconds, the last run's) in OUTFILE.secs.
smb() {
  local out=$1 rc=0 t0
  shift
  smb_settle
  t0=$(now)
  timeout 300 "$NDK_SMB" --stats "$@" >"$out" 2>"$out.err" || rc=$?
  sed -n '1,20s/^/  ndk-smb| /p' "$out" "$out.err"
  # ksmbd 6.1 sometimes closes a new SMB Direct connection before answering
  # the MS-SMBD negotiate request when it follows the previous connection
  # closely (seen once in 12 connections of a group run, the connections
  # after it were served): reported KNOWN and retried once after a pause.
  if [ $rc -eq 3 ] && grep -q "disconnected before its negotiate response" "$out.err"; then
    known "ksmbd closed a new connection before its SMB Direct negotiate response (retried)"
    sleep 3
    smb_settle
    rc=0
    t0=$(now)
    timeout 300 "$NDK_SMB" --stats "$@" >"$out" 2>"$out.err" || rc=$?
    sed -n '1,20s/^/  ndk-smb| /p' "$out" "$out.err"
  fi
  since "$t0" >"$out.secs"
  echo "$rc" >"$out.rc"
}
smb_rc() { cat "$1.rc"; }
# The --stats counter NAME of OUTFILE's run.
stat_of() { grep -o "$2=[^ ]*" "$1.err" | tail -n 1 | cut -d= -f2; }
user_url() { echo "//127.0.0.1:$HP_SMB/share"; }
guest_url() { echo "//127.0.0.1:$HP_SMB/pub"; }
uargs() { echo "-U $SMB_USER -P $SMB_PASS"; }

# sha256 of a guest file (empty if missing).
guest_sha() { g_run 60 "sha256sum '$1' | cut -d' ' -f1" 2>/dev/null | tail -n 1; }
host_sha() { sha256sum "$1" | cut -d' ' -f1; }

# ksmbd's RDMA debug lines logged after a marker: a count of the whole ring
# stays flat once earlier cases (64 MiB) have filled it.
ksmbd_rdma_mark() { g_run 20 "echo softndk-interop-mark-$1 >/dev/kmsg" >/dev/null || true; }
ksmbd_rdma_lines() { # MARK
  g_run 20 "dmesg | sed -n '/softndk-interop-mark-$1/,\$p' | grep -c 'smb_direct: RDMA \(read\|write\)' || true" | tail -n 1
}

# put then get of one file, checked in the guest and back on the host.
# ROUNDTRIP LABEL SIZE URL REMOTE_DIR ARGS...
roundtrip() {
  local label=$1 size=$2 url=$3 gdir=$4
  shift 4
  local src=$CDIR/$label.src back=$CDIR/$label.back
  head -c "$size" /dev/urandom >"$src"
  smb "$CDIR/$label.put" "$@" "$url" put "$src" "$label.bin"
  check "$label: put of $size B, exit 0" test "$(smb_rc "$CDIR/$label.put")" -eq 0
  check "$label: the guest's copy has the same sha256" \
    test "$(guest_sha "$gdir/$label.bin")" = "$(host_sha "$src")"
  smb "$CDIR/$label.get" "$@" "$url" get "$label.bin" "$back"
  check "$label: get, exit 0" test "$(smb_rc "$CDIR/$label.get")" -eq 0
  check "$label: the copy read back is identical" cmp -s "$src" "$back"
}

case_smb_guest() {
  need_ndk_smb || return 0
  smb_ksmbd_up || return 0
  cap_window "$(now)"
  ksmbd_rdma_mark guest
  roundtrip one 1 "$(guest_url)" /srv/pub --guest
  check "1 B went inline (below the 4 KiB threshold)" \
    test "$(stat_of "$CDIR/one.put" inline_writes)" -eq 1
  roundtrip odd 100003 "$(guest_url)" /srv/pub --guest --bs 64k
  check "a guest session" has "$CDIR/odd.put.err" 'guest=yes'
  check "odd size: WRITEs pulled by RDMA Read (2 x 64 KiB + 1 inline rest... at least 1)" \
    test "$(stat_of "$CDIR/odd.put" rdma_writes)" -ge 1
  check "odd size: READs answered by RDMA Write" test "$(stat_of "$CDIR/odd.get" rdma_reads)" -ge 1
  check "ksmbd invalidated our buffers (Send with Invalidate)" \
    test "$(stat_of "$CDIR/odd.get" remote_invalidations)" -ge 1
  check "ksmbd logged RDMA reads/writes" test "$(ksmbd_rdma_lines guest)" -gt 0
  cap_has "ksmbd's RDMA Read Request of our WRITE buffer" 'RDMA Read Request'
  cap_has "ksmbd's RDMA Write into our READ buffer" 'RDMA Write'
  cap_has "a Send with Invalidate" 'Send with Invalidate'
}

case_smb_user() {
  need_ndk_smb || return 0
  smb_ksmbd_up || return 0
  # shellcheck disable=SC2046
  roundtrip big $((64 << 20)) "$(user_url)" /srv/share $(uargs) --vers 3.1.1 --sign
  check "3.1.1, signed session" has "$CDIR/big.put.err" 'dialect=3.1.1 signing=yes guest=no'
  check "every response's signature verified" test "$(stat_of "$CDIR/big.get" signatures_verified)" -ge 64
  check "64 MiB pulled by ksmbd's RDMA Reads" \
    test "$(stat_of "$CDIR/big.put" rdma_write_bytes)" -eq $((64 << 20))
  check "64 MiB pushed by ksmbd's RDMA Writes" \
    test "$(stat_of "$CDIR/big.get" rdma_read_bytes)" -eq $((64 << 20))
  check "ksmbd invalidated every buffer remotely" \
    test "$(stat_of "$CDIR/big.get" local_invalidations)" -eq 0
  # shellcheck disable=SC2046
  roundtrip odd3 $((3 * 1048576 + 4097)) "$(user_url)" /srv/share $(uargs) --vers 3.0.2
  # shellcheck disable=SC2046
  smb "$CDIR/stat.txt" $(uargs) "$(user_url)" stat big.bin
  check "stat: 64 MiB file" has "$CDIR/stat.txt" "^size: $((64 << 20))$"
  smb "$CDIR/badpw.txt" -U "$SMB_USER" -P wrong-password "$(user_url)" ls
  check "a wrong password: exit 4 (auth refused)" test "$(smb_rc "$CDIR/badpw.txt")" -eq 4
  check "... saying so" has "$CDIR/badpw.txt.err" 'refused the session.*LOGON_FAILURE'
  # The teardown after a failure while connecting is bounded (3 s), not
  # --timeout (30 s by default) per object (issue 29).
  check "... within 10 s ($(cat "$CDIR/badpw.txt.secs") s)" \
    awk -v s="$(cat "$CDIR/badpw.txt.secs")" 'BEGIN { exit !(s < 10) }'
  # shellcheck disable=SC2046
  smb "$CDIR/noshare.txt" $(uargs) "//127.0.0.1:$HP_SMB/no-such-share" ls
  check "an unknown share: exit 5" test "$(smb_rc "$CDIR/noshare.txt")" -eq 5
  check "... saying so" has "$CDIR/noshare.txt.err" 'BAD_NETWORK_NAME'
  check "... within 10 s ($(cat "$CDIR/noshare.txt.secs") s)" \
    awk -v s="$(cat "$CDIR/noshare.txt.secs")" 'BEGIN { exit !(s < 10) }'
  # shellcheck disable=SC2046
  smb "$CDIR/nofile.txt" $(uargs) "$(user_url)" get no-such-file "$CDIR/x"
  check "a missing file: exit 6 with the status" test "$(smb_rc "$CDIR/nofile.txt")" -eq 6
  check "... named" has "$CDIR/nofile.txt.err" 'OBJECT_NAME_NOT_FOUND'
}

# RDMA_V1 (no remote invalidation): the client invalidates its buffers.
# Dialect 3.0 has no RDMA_V1_INVALIDATE; ndk-smb says so and uses RDMA_V1.
case_smb_rdma_noinv() {
  need_ndk_smb || return 0
  smb_ksmbd_up || return 0
  cap_window "$(now)"
  # shellcheck disable=SC2046
  roundtrip noinv $((2 * 1048576 + 5)) "$(user_url)" /srv/share $(uargs) --vers 3.0.2 --channel rdma --bs 256k
  check "channel rdma" has "$CDIR/noinv.get.err" 'channel=rdma '
  check "no remote invalidation, buffers invalidated locally" \
    test "$(stat_of "$CDIR/noinv.get" remote_invalidations)" -eq 0 -a "$(stat_of "$CDIR/noinv.get" local_invalidations)" -ge 8
  check "READs by RDMA Write" test "$(stat_of "$CDIR/noinv.get" rdma_reads)" -ge 8
  # shellcheck disable=SC2046
  roundtrip v30 $((1048576 + 7)) "$(user_url)" /srv/share $(uargs) --vers 3.0
  check "3.0: the fallback to RDMA_V1 is said" has "$CDIR/v30.put.err" 'note: dialect 3.0 has no'
  check "3.0: WRITEs by RDMA Read" test "$(stat_of "$CDIR/v30.put" rdma_writes)" -ge 1
  # shellcheck disable=SC2046
  roundtrip inl $((1048576 + 3)) "$(user_url)" /srv/share $(uargs) --channel inline
  check "inline channel: no RDMA I/O" \
    test "$(stat_of "$CDIR/inl.get" rdma_reads)" -eq 0 -a "$(stat_of "$CDIR/inl.get" inline_reads)" -ge 1
  cap_has "RDMA Read Requests (ksmbd pulling WRITE data)" 'RDMA Read Request'
}

# A directory of 1500 files of 1..1500 bytes with ~40-character names
# (QUERY_DIRECTORY continuation: ~5 responses of 64 KiB), a subdirectory
# path with non-ASCII names (2-, 3- and 4-byte UTF-8: the last a UTF-16
# surrogate pair on the wire) listed, stat'ed and read through.
LISTING_MANY=1500
LISTING_DEEP='sub/caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac/emoji \xf0\x9f\x98\x80'
case_smb_listing() {
  need_ndk_smb || return 0
  smb_ksmbd_up || return 0
  # Made with shell builtins (a process per file is slow under TCG).
  local rc=0 deep
  deep=$(printf "$LISTING_DEEP")
  g_run 90 "rm -rf /srv/share/dir; mkdir -p /srv/share/dir/sub; cd /srv/share/dir; for i in \$(seq 1 $LISTING_MANY); do printf '%*s' \$i '' >file-\$i-a-name-of-forty-characters-or-so.bin; done
mkdir -p \"\$(printf '$LISTING_DEEP')\"; printf 'deep content\n' >\"\$(printf '$LISTING_DEEP/f \xf0\x9d\x84\x9e.txt')\"
chmod -R a+rwX /srv/share/dir" >/dev/null || rc=$?
  check "$LISTING_MANY files made in the guest" test $rc -eq 0
  # shellcheck disable=SC2046
  smb "$CDIR/ls.txt" $(uargs) "$(user_url)" ls dir
  check "ls: exit 0" test "$(smb_rc "$CDIR/ls.txt")" -eq 0
  check "ls: $((LISTING_MANY + 1)) entries ($LISTING_MANY files, 1 directory)" \
    test "$(grep -c '' "$CDIR/ls.txt")" -eq $((LISTING_MANY + 1))
  check "ls: each file once" test "$(grep -oE 'file-[0-9]+-' "$CDIR/ls.txt" | sort -u | wc -l)" -eq $LISTING_MANY
  check "ls: the directory marked" grep -qE '^d .* sub$' "$CDIR/ls.txt"
  check "ls: sizes right" grep -qE '^- +1257 .* file-1257-a-name-of-forty-characters-or-so.bin$' "$CDIR/ls.txt"
  # shellcheck disable=SC2046
  smb "$CDIR/stat.txt" $(uargs) "$(user_url)" stat dir/sub
  check "stat of a directory" has "$CDIR/stat.txt" '^type: directory$'
  check "all of it over SMB Direct" has "$CDIR/ls.txt.err" 'transport=smb-direct.*smbd_messages_received=[1-9]'
  # shellcheck disable=SC2046
  smb "$CDIR/deep-ls.txt" $(uargs) "$(user_url)" ls "dir/$deep"
  check "ls of a non-ASCII subdirectory path: exit 0" test "$(smb_rc "$CDIR/deep-ls.txt")" -eq 0
  check "... its file, name byte for byte" grep -qF "$(printf 'f \xf0\x9d\x84\x9e.txt')" "$CDIR/deep-ls.txt"
  # shellcheck disable=SC2046
  smb "$CDIR/deep-stat.txt" $(uargs) "$(user_url)" stat "dir/$deep"
  check "stat of that directory" has "$CDIR/deep-stat.txt" '^type: directory$'
  # shellcheck disable=SC2046
  smb "$CDIR/deep-get.txt" $(uargs) "$(user_url)" get "dir/$deep/$(printf 'f \xf0\x9d\x84\x9e.txt')" "$CDIR/deep.bin"
  check "get through that path: the content" test "$(cat "$CDIR/deep.bin" 2>/dev/null)" = "deep content"
  # One listed file through the RDMA channel even at 300 bytes (--threshold 0).
  # shellcheck disable=SC2046
  smb "$CDIR/f300.txt" $(uargs) --threshold 0 "$(user_url)" get dir/file-300-a-name-of-forty-characters-or-so.bin "$CDIR/f300.bin"
  check "a 300-byte file read by RDMA Write" test "$(stat_of "$CDIR/f300.txt" rdma_read_bytes)" -eq 300
  check "... its content" test "$(tr -d ' ' <"$CDIR/f300.bin" | wc -c)-$(wc -c <"$CDIR/f300.bin")" = 0-300
}

# ksmbd restarted while a 24 MiB get runs (64 KiB READs): ndk-smb must end with a clear
# transport error (exit 3) within 30 s of the stop (its --timeout is 20 s), never hang;
# the next run works. ndk-smb's end is timed where it happens: the guest's stop step
# may take far longer (ksmbd's documented shutdown hang, docs/smb-direct.md).
case_smb_restart() {
  need_ndk_smb || return 0
  smb_ksmbd_up || return 0
  local rc=0
  g_run 60 "head -c $((24 << 20)) /dev/urandom >/srv/share/restart.bin; chmod a+r /srv/share/restart.bin" >/dev/null || rc=$?
  check "a 24 MiB file made in the guest" test $rc -eq 0
  local pid t0
  t0=$(now)
  smb_settle
  rm -f "$CDIR/restart.rc" "$CDIR/restart.end"
  # shellcheck disable=SC2046
  (
    r=0
    timeout 120 "$NDK_SMB" --stats $(uargs) --bs 64k --iodepth 2 --timeout 20 "$(user_url)" get restart.bin "$CDIR/restart.back" \
      >"$CDIR/restart.txt" 2>"$CDIR/restart.txt.err" || r=$?
    now >"$CDIR/restart.end"
    echo "$r" >"$CDIR/restart.rc"
  ) &
  pid=$!
  HOST_PIDS+=("$pid")
  # Restart once the transfer is under way (the local file grows).
  local end=$((SECONDS + 60))
  until [ "$(stat -c %s "$CDIR/restart.back" 2>/dev/null || echo 0)" -gt 1048576 ] || [ $SECONDS -ge $end ]; do sleep 0.1; done
  # Stop the server, then its user-space daemon (by PID: a ksmbd.mountd that
  # outlives the module would never start the reloaded one, whose listener
  # waits for the daemon's start-up message), then unload the module, each
  # step waited for. In the background: ndk-smb's ending is timed on its own.
  local t_stop stop_job
  t_stop=$(now)
  g_bg stop_job "echo softndk-interop-mark-restart-stop >/dev/kmsg; t0=\$(date +%s)
timeout 40 ksmbd.control -s; echo \"control -s rc=\$? after \$((\$(date +%s)-t0)) s\"
for i in \$(seq 1 50); do pidof ksmbd.mountd >/dev/null || break; sleep 0.1; done
p=\$(pidof ksmbd.mountd) && { echo \"mountd still up: \$p\"; kill \$p; }
for i in \$(seq 1 50); do pidof ksmbd.mountd >/dev/null || break; sleep 0.1; done
for i in \$(seq 1 50); do rmmod ksmbd 2>/dev/null && break; sleep 0.2; done
lsmod | grep -q '^ksmbd ' && echo 'ksmbd still loaded'
echo \"stopped after \$((\$(date +%s)-t0)) s\"
ps -eo pid,stat,wchan:30,comm | grep -E 'ksmbd|D ' | head -20
dmesg | tail -n 15"
  end=$((SECONDS + 90))
  until [ -s "$CDIR/restart.rc" ] || [ $SECONDS -ge $end ]; do sleep 0.1; done
  rc=$(cat "$CDIR/restart.rc" 2>/dev/null || echo none)
  local after_stop="never"
  [ -s "$CDIR/restart.end" ] && after_stop=$(awk -v a="$t_stop" -v b="$(cat "$CDIR/restart.end")" 'BEGIN{printf "%.1f", b-a}')
  sed 's/^/  ndk-smb| /' "$CDIR/restart.txt.err"
  echo "  info  ndk-smb ended $after_stop s after the stop began ($(since "$t0") s into the case)"
  wait "$pid" 2>/dev/null || true
  # The guest's side of the stop (ndk-smb's end is asserted below whatever
  # it was: the stop step's own outcome is the peer's).
  local stop_rc=0
  g_wait "$stop_job" 100 || stop_rc=$?
  local stop_out fault=0
  stop_out=$(g_out "$stop_job")
  echo "$stop_out" | sed 's/^/  guest| /'
  ksmbd_stop_fault restart-stop "$CDIR/stop-fault.txt" && fault=1
  # Two clear endings, depending on how far ksmbd's shutdown got when the
  # next READ arrived: the SMB Direct connection gone (exit 3), or ksmbd
  # first tearing the session down and answering the READ with
  # STATUS_USER_SESSION_DELETED (exit 6, the status named). When ksmbd's
  # shutdown faulted (below) it may never have closed the connection:
  # then ndk-smb's --timeout ends the READ (exit 3, "no answer ... within").
  local ended='ndk-smb: SMB Direct: .*disconnected'
  [ $fault = 1 ] && ended="$ended|ndk-smb: .*no answer from the server within 20 s"
  if [ "$rc" = 6 ]; then
    echo "  info  ksmbd answered the READ in flight with the session deleted"
    check "the interrupted get: exit 6 naming the deleted session" \
      has "$CDIR/restart.txt.err" 'ndk-smb: READ: STATUS_(USER_SESSION|NETWORK_NAME)_DELETED'
  else
    echo "  info  ndk-smb exit code: $rc"
    check "the interrupted get: exit 3 (transport error)" test "$rc" = 3
    check "... naming the disconnect" has "$CDIR/restart.txt.err" "$ended"
  fi
  # --timeout 20 bounds every wait; the teardown after the error is bounded too.
  check "... within 30 s of the stop" awk -v s="$after_stop" 'BEGIN { exit !(s != "never" && s <= 30) }'
  check "... and not all of the file" test "$(stat -c %s "$CDIR/restart.back" 2>/dev/null || echo 0)" -lt $((24 << 20))
  if [ $fault = 1 ]; then
    # Documented peer bug (docs/smb-direct.md, "smb_restart"): Linux 6.1's
    # ksmbd faulted in its own shutdown (a general protection fault in
    # ksmbd_conn_transport_destroy, or kernel BUG at iwcm.c:346 in
    # iw_cm_disconnect, both under `ksmbd.control -s`). ndk-smb's ending
    # is checked above; ksmbd cannot be reloaded without a reboot, so the
    # after-restart get is skipped.
    sed 's/^/  guest dmesg| /' "$CDIR/stop-fault.txt" | head -n 12
    known "ksmbd 6.1 faulted in its own shutdown ($(grep -oE -m1 'kernel BUG at [^ ]+|general protection fault|BUG: unable to handle [a-z ]+|Oops' "$CDIR/stop-fault.txt"); the after-restart get is skipped)"
    return 0
  fi
  if [ "$stop_rc" = 124 ]; then
    # Documented peer behaviour (docs/smb-direct.md, "smb_restart"): after
    # a clean FIN exchange siw 6.1 may keep ksmbd's cm_id in CONNECT, and
    # ksmbd's shutdown then waits for its disconnect forever (D state).
    local cm
    cm=$(g_run 20 "rdma res show cm_id 2>/dev/null | grep -v LISTEN; ps -eo pid,stat,wchan:30,comm | awk '\$2 ~ /^D/'") || true
    echo "$cm" | sed 's/^/  guest| /'
    if echo "$cm" | grep -q 'state CONNECT .*comm \[ksmbd\]'; then
      known "ksmbd's shutdown hung with its cm_id in CONNECT (siw 6.1 never reported the close); the after-restart get is skipped"
      guest_no_oops
      return 0
    fi
    check "the guest's stop of ksmbd ended" false
  fi
  smb_ksmbd_up || return 0
  # shellcheck disable=SC2046
  smb "$CDIR/after.txt" $(uargs) "$(user_url)" get restart.bin "$CDIR/after.back"
  check "after the restart, a new get works" test "$(smb_rc "$CDIR/after.txt")" -eq 0
  local gsum
  gsum=$(guest_sha /srv/share/restart.bin)
  check "... and the file is the guest's (${gsum:-no answer})" test -n "$gsum" -a "$(host_sha "$CDIR/after.back" 2>/dev/null)" = "$gsum"
  guest_no_oops
}

# Did ksmbd's kernel side fault in its own shutdown since the dmesg marker
# MARK? Linux 6.1's stop_sessions() (inlined in ksmbd_conn_transport_destroy,
# run by `ksmbd.control -s` through kill_server_store) calls a connection's
# ->shutdown() with the list lock dropped while the connection's own thread
# may be freeing it (no reference is held; upstream made connections
# refcounted later): seen as a general protection fault on LIST_POISON in
# ksmbd_conn_transport_destroy, and as kernel BUG at iwcm.c:346 (the
# BUG() of iw_cm_disconnect: rdma_disconnect on a cm_id already being
# destroyed). The oops reports go to FILE. True only for a report whose
# call trace is that shutdown path: any other oops stays a failure
# (guest_no_oops). When the guest does not answer, its console log (on the
# host) is read instead.
ksmbd_stop_fault() { # MARK FILE
  local hdr='kernel BUG at|general protection fault|BUG: unable to handle|Oops:'
  g_run 20 "dmesg | sed -n '/softndk-interop-mark-$1/,\$p' | grep -E -A45 '$hdr' | head -n 120" >"$2" 2>&1 || {
    local con
    con="$(cat "$(gdir "$GROUP")/run_dir" 2>/dev/null)/console.log"
    echo "(the guest did not answer: its console log, $con)" >"$2"
    grep -E -A45 "$hdr" "$con" 2>/dev/null | tail -n 120 >>"$2" || true
  }
  grep -qE "$hdr" "$2" && grep -qE 'kill_server_store|ksmbd_conn_transport_destroy|server_ctrl_handle|stop_sessions' "$2"
}

case_smb_bench() {
  need_ndk_smb || return 0
  smb_ksmbd_up || return 0
  # shellcheck disable=SC2046
  smb "$CDIR/bw.txt" $(uargs) --bs 1M --iodepth 4 "$(user_url)" bench bench.bin --rw read --size 16M --runtime 3 --verify
  check "bench read 1M qd4 --verify: exit 0" test "$(smb_rc "$CDIR/bw.txt")" -eq 0
  check "... no verify error" has "$CDIR/bw.txt" 'verify_errors=0'
  # shellcheck disable=SC2046
  smb "$CDIR/wr.txt" $(uargs) --bs 1M --iodepth 4 "$(user_url)" bench bench.bin --rw write --size 16M --runtime 3
  check "bench write: exit 0" test "$(smb_rc "$CDIR/wr.txt")" -eq 0
  # shellcheck disable=SC2046
  smb "$CDIR/lat.txt" $(uargs) --bs 4k --iodepth 1 --threshold 0 "$(user_url)" bench bench.bin --rw randread --size 16M --runtime 2
  check "bench 4k QD1 over the RDMA channel: exit 0" test "$(smb_rc "$CDIR/lat.txt")" -eq 0
  grep -hE 'BW=|clat' "$CDIR/bw.txt" "$CDIR/wr.txt" "$CDIR/lat.txt" | sed 's/^/  info  /'
}

# Issue 29 item 7, in the VM: ndk-smb -> ksmbd beside kernel cifs -> ksmbd,
# the same transfer over the same path, bracketed in one guest boot.
# Interleaved: cifs, ndk-smb, cifs, ..., cifs (SMBVS_ROUNDS ndk-smb rounds,
# each between two cifs rounds); each round reads SMBVS_MIB MiB sequentially
# and then writes as much, 1 MiB per I/O, one I/O at a time, dialect 3.0.2,
# RDMA channel with remote invalidation asked for, no signing asked for:
#   cifs (kernel, mounted over siw0 on the guest's own address, README
#     section h): dd if=/mnt/vs/vs.bin of=/dev/null bs=1M iflag=direct, and
#     dd if=/dev/zero of=/mnt/vs/cw.bin bs=1M oflag=direct conv=notrunc
#   ndk-smb (user space, in the guest too: the share's vkit/ on softndk's
#     verbs backend over the same siw0, libsoftndk-verbs.so over rdma-core):
#     bench vs.bin --rw read --bs 1M --iodepth 1 --size N --runtime 0 (one
#     pass), and --rw write on nw.bin (both write files laid out beforehand:
#     overwrites in place). siw has no type-2 memory windows, so ndk-smb
#     runs with --fr-register (SOFTNDK_OPEN_FLAG_FR_REGISTER, docs/verbs.md:
#     each I/O's buffer registered anew and deregistered after it).
# Both clients connect to 10.0.2.15:5445 from 10.0.2.15: the guest's lo,
# kernel siw on both ends of the wire. (Until 29 Nov ndk-smb ran on the host
# through QEMU's user-mode network forward, a path cifs does not cross;
# docs/smb-direct-performance.md keeps those figures.)
# MiB/s of each run from its own clock: dd timed in the guest (date around
# it, after the mount), ndk-smb's bench BW (after connect and open). Pair i:
# ndk-smb run i / mean(the cifs runs before and after it); every pair and
# the median go to $CDIR/ratios.txt and state/smb-perf.txt. Recorded, not
# asserted: the gate is against a gross regression only (median ratio >=
# SMBVS_MIN per direction; a bracket whose median misses is measured once
# more before the case fails), as the verbs perf cases (docs/verbs.md).
SMBVS_MIB=${SMBVS_MIB:-8}
SMBVS_ROUNDS=${SMBVS_ROUNDS:-3}
SMBVS_MIN=${SMBVS_MIN:-0.02}

# One cifs round K: read then write, MiB/s to perf.txt as "cifs_read K V".
smbvs_cifs_round() {
  local k=$1 out
  out=$(g_run 120 "set -e
t0=\$(date +%s%N); dd if=/mnt/vs/vs.bin of=/dev/null bs=1M count=$SMBVS_MIB iflag=direct status=none; t1=\$(date +%s%N)
dd if=/dev/zero of=/mnt/vs/cw.bin bs=1M count=$SMBVS_MIB oflag=direct conv=notrunc status=none; t2=\$(date +%s%N)
echo \"cifs_read $k \$(awk -v n=$SMBVS_MIB -v a=\$t0 -v b=\$t1 'BEGIN{printf \"%.2f\", n / ((b - a) / 1e9)}')\"
echo \"cifs_write $k \$(awk -v n=$SMBVS_MIB -v a=\$t1 -v b=\$t2 'BEGIN{printf \"%.2f\", n / ((b - a) / 1e9)}')\"") || true
  echo "$out" | grep -E '^cifs_(read|write) ' >>"$CDIR/perf.txt" || echo "cifs round $k failed: $out" >>"$CDIR/perf.txt"
}

# ndk-smb in the guest, verbs backend over siw0: GUEST_SMB NAME ARGS...
# runs it with --stats --fr-register against //10.0.2.15/share after
# ksmbd's connection caches are gone (smb_settle, in the same guest script);
# stdout in $CDIR/NAME, stderr in NAME.err, exit code in NAME.rc. ksmbd's
# early close before the SMB Direct negotiate response (see smb()) is
# retried once in the guest and reported KNOWN here.
guest_smb() {
  local name=$1 rc=0
  shift
  rm -f "$SHARE/$name" "$SHARE/$name".*
  g_run 200 "cd /tmp
$SMB_SETTLE_FN
one() { settle; $VKIT timeout 150 /share/vkit/ndk-smb --stats --fr-register $(uargs) //10.0.2.15/share $* >/share/$name 2>/share/$name.err; }
one; rc=\$?
if [ \$rc = 3 ] && grep -q 'disconnected before its negotiate response' /share/$name.err; then
  echo retried-negotiate; sleep 3; one; rc=\$?
fi
echo \$rc >/share/$name.rc" >"$CDIR/$name.guest" 2>&1 || rc=$?
  cp "$SHARE/$name" "$SHARE/$name.err" "$CDIR/" 2>/dev/null || true
  if [ -s "$SHARE/$name.rc" ]; then cp "$SHARE/$name.rc" "$CDIR/"; else echo "guest-$rc" >"$CDIR/$name.rc"; fi
  grep -q '^retried-negotiate' "$CDIR/$name.guest" &&
    known "ksmbd closed a new connection before its SMB Direct negotiate response (retried)"
  sed -n '1,8s/^/  ndk-smb| /p' "$CDIR/$name" "$CDIR/$name.err"
}

# One ndk-smb round K: bench read, bench write; MiB/s from bench's BW.
smbvs_ndk_round() {
  local k=$1 rw f t0
  for rw in read write; do
    f=vs.bin
    [ $rw = write ] && f=nw.bin
    t0=$(now)
    guest_smb "ndk-$rw-$k.txt" --vers 3.0.2 --bs 1M --iodepth 1 bench "$f" --rw $rw \
      --size "${SMBVS_MIB}M" --runtime 0
    local bw bytes
    echo "  info  ndk-smb bench --rw $rw round $k (in the guest): $(since "$t0") s with the settle"
    # (|| true: a failed run has no such line, and that is recorded below.)
    bw=$(grep -o 'BW=[0-9.]*MiB/s' "$CDIR/ndk-$rw-$k.txt" | grep -o '[0-9.]*' | head -n 1) || true
    # The RDMA channel carried every byte (READ: ksmbd's RDMA Writes; WRITE: its RDMA Reads).
    if [ $rw = read ]; then bytes=$(stat_of "$CDIR/ndk-$rw-$k.txt" rdma_read_bytes) || true; else bytes=$(stat_of "$CDIR/ndk-$rw-$k.txt" rdma_write_bytes) || true; fi
    if [ "$(smb_rc "$CDIR/ndk-$rw-$k.txt")" = 0 ] && [ -n "$bw" ] && [ "${bytes:-0}" -eq $((SMBVS_MIB << 20)) ]; then
      echo "ndk_$rw $k $bw" >>"$CDIR/perf.txt"
    else
      echo "ndk-smb $rw round $k failed (rc $(smb_rc "$CDIR/ndk-$rw-$k.txt"), RDMA bytes ${bytes:-none}): $(tail -n 1 "$CDIR/ndk-$rw-$k.txt.err" 2>/dev/null)" >>"$CDIR/perf.txt"
    fi
  done
}

# One bracket into perf.txt, then the pairs and medians into ratios.txt.
smbvs_measure() {
  : >"$CDIR/perf.txt"
  local k t0
  t0=$(now)
  smbvs_cifs_round 0
  for k in $(seq 1 "$SMBVS_ROUNDS"); do
    smbvs_ndk_round "$k"
    echo "  info  ndk-smb round $k done at $(since "$t0") s"
    smbvs_cifs_round "$k"
    echo "  info  cifs round $k done at $(since "$t0") s"
  done
  sed 's/^/  perf| /' "$CDIR/perf.txt"
  awk -v n="$SMBVS_ROUNDS" '
    $1 ~ /^(cifs|ndk)_(read|write)$/ { v[$1, $2] = $3 }
    function median(a, m,   i, j, t) {
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    END {
      split("read write", dirs, " ")
      for (d = 1; d <= 2; d++) {
        dir = dirs[d]; m = 0
        for (i = 1; i <= n; i++) {
          x = v["ndk_" dir, i]; b = v["cifs_" dir, i - 1]; a = v["cifs_" dir, i]
          ok = x != "" && b != "" && a != "" && b + a > 0
          if (ok) { r[++m] = x / ((b + a) / 2) }
          printf "%s pair %d ndk-smb %s cifs %s %s ratio %s\n", dir, i, x == "" ? "none" : x, b == "" ? "none" : b, a == "" ? "none" : a, ok ? sprintf("%.3f", x / ((b + a) / 2)) : "none"
        }
        printf "%s median %s\n", dir, m == n ? sprintf("%.3f", median(r, m)) : "none"
        delete r
      }
    }' "$CDIR/perf.txt" >"$CDIR/ratios.txt"
  sed 's/^/  ratio| /' "$CDIR/ratios.txt"
}

smbvs_med() { awk -v d="$1" '$1 == d && $2 == "median" {print $3}' "$CDIR/ratios.txt"; }
smbvs_ok() { # DIR: the median pair is measured and not grossly regressed
  awk -v m="$(smbvs_med "$1")" -v min="$SMBVS_MIN" 'BEGIN { exit !(m != "none" && m != "" && m + 0 >= min) }'
}

case_smb_vs_cifs() {
  need_ndk_smb || return 0
  need_vkit || return 0
  if [ ! -x "$SHARE/vkit/ndk-smb" ]; then
    check "ndk-smb in the verbs kit (vkit/, vm.sh)" false
    return 0
  fi
  smb_ksmbd_up || return 0
  local t0 rc=0 n=$SMBVS_MIB
  t0=$(now)
  # The files (read source, the two write targets laid out), then the mount.
  g_run 120 "set -e
head -c $((n << 20)) /dev/urandom >/srv/share/vs.bin
head -c $((n << 20)) /dev/zero >/srv/share/cw.bin
head -c $((n << 20)) /dev/zero >/srv/share/nw.bin
chmod a+rw /srv/share/vs.bin /srv/share/cw.bin /srv/share/nw.bin
modprobe cifs; mkdir -p /mnt/vs
mountpoint -q /mnt/vs || timeout 60 mount -t cifs //10.0.2.15/share /mnt/vs -o rdma,vers=3.02,cache=none,username=$SMB_USER,password=$SMB_PASS,rsize=1044480,wsize=1044480
grep -E 'SMBDirect|^RDMA|Dialect' /proc/fs/cifs/DebugData" >"$CDIR/mount.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/mount.txt"
  echo "  info  files and mount took $(since "$t0") s"
  check "cifs mounted the guest's ksmbd share" test "$rc" -eq 0
  check "cifs: an SMB Direct connection (DebugData SMBDirect block)" has "$CDIR/mount.txt" 'SMBDirect'
  check "cifs: transport RDMA" has "$CDIR/mount.txt" '^RDMA'
  check "cifs: dialect 3.0.2" has "$CDIR/mount.txt" 'Dialect 0x302'
  smbvs_measure
  # A second bracket only for a low median of runs that all completed: a
  # failed run fails the case below anyway (and a second bracket would
  # only bring it nearer its ctest timeout).
  if { ! smbvs_ok read || ! smbvs_ok write; } && ! grep -q failed "$CDIR/perf.txt"; then
    echo "  perf| a median below $SMBVS_MIN: a second bracket"
    mv "$CDIR/perf.txt" "$CDIR/perf.first.txt"
    mv "$CDIR/ratios.txt" "$CDIR/ratios.first.txt"
    smbvs_measure
  fi
  # Data, outside the timed runs: ndk-smb writes its pattern (ksmbd's RDMA
  # Reads) and reads it back verified (RDMA Writes); cifs reads the random
  # source back and writes a random file, both compared with ksmbd's files.
  guest_smb vf.txt --vers 3.0.2 --bs 1M --iodepth 1 bench vf.bin --rw read --size 4M --runtime 0 --verify
  rc=0
  g_run 90 "set -e
dd if=/mnt/vs/vs.bin of=/tmp/vs.back bs=1M iflag=direct status=none
cmp /tmp/vs.back /srv/share/vs.bin && echo cifs-read-equal
head -c 4194304 /dev/urandom >/tmp/cv.src
dd if=/tmp/cv.src of=/mnt/vs/cv.bin bs=1M oflag=direct status=none
cmp /tmp/cv.src /srv/share/cv.bin && echo cifs-write-equal
rm -f /tmp/vs.back /tmp/cv.src /srv/share/cv.bin /srv/share/vf.bin
grep -E 'MR mr_ready|Dialect' /proc/fs/cifs/DebugData; timeout 40 umount /mnt/vs && echo umounted" >"$CDIR/umount.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/umount.txt"
  echo "  info  data checks and umount done at $(since "$t0") s"
  local d
  for d in read write; do
    echo "smb vs-cifs $d ${n} MiB bs 1M qd1 3.0.2 (ratio of MiB/s, ndk-smb / cifs, both in the guest over siw0; pairs): $(grep "^$d pair" "$CDIR/ratios.txt" | awk '{printf "%s%s", sep, $NF; sep=" "}') median $(smbvs_med $d)" >>"$STATE/smb-perf.txt"
    check "$d: every pair measured, median ndk-smb/cifs ratio $(smbvs_med $d) >= $SMBVS_MIN" smbvs_ok $d
  done
  # Any failed run fails the case, also one a second bracket made up for.
  check "every cifs and ndk-smb run completed (no error, RDMA carried every byte)" \
    bash -c "! cat '$CDIR'/perf*.txt | grep -q failed"
  local runs
  runs=$(compgen -G "$CDIR/ndk-*-*.txt.err" | wc -l) || true
  check "ndk-smb: $runs runs, each on the verbs backend over siw0 with the degraded fast register" \
    test "$runs" -ge $((2 * SMBVS_ROUNDS)) -a \
    "$(grep -l 'adapter: backend=verbs device=siw0 fast_register=register-per-fast-register' "$CDIR"/ndk-*-*.txt.err | wc -l)" -eq "$runs"
  check "ndk-smb: each run SMB Direct, dialect 3.0.2, RDMA channel with invalidation" \
    test "$(grep -l 'transport=smb-direct .*dialect=3.0.2 .*channel=rdma-invalidate io_size=1048576' "$CDIR"/ndk-*-*.txt.err | wc -l)" -eq "$runs"
  check "ndk-smb: 4 MiB pattern written and read back verified (exit 0)" test "$(smb_rc "$CDIR/vf.txt")" = 0
  check "ndk-smb: ... no verify error, by the RDMA channel" \
    bash -c "grep -q 'verify_errors=0' '$CDIR/vf.txt' && grep -q 'rdma_read_bytes=4194304 .*rdma_write_bytes=4194304' '$CDIR/vf.txt.err'"
  check "cifs: O_DIRECT read equals ksmbd's file" has "$CDIR/umount.txt" '^cifs-read-equal'
  check "cifs: O_DIRECT write equals the source" has "$CDIR/umount.txt" '^cifs-write-equal'
  check "umount" has "$CDIR/umount.txt" '^umounted'
  echo "  info  case took $(since "$t0") s"
  guest_no_oops
}
