# SPDX-License-Identifier: Apache-2.0
# tests/interop/smb_cifs_cases.sh - group smb-cifs of run.sh (sourced by it):
# Linux cifs in the guest mounts ndk-smbd on the host over SMB Direct
# (mount -t cifs -o rdma). cifs always dials 10.0.2.100:5445; the group's VM
# forwards that port to 127.0.0.1:$HT_SMB (vm.sh). Each case starts its own
# ndk-smbd (a fresh share in the case dir, counters as JSON at exit), mounts,
# works, unmounts and stops the server with SIGTERM.
#
# SMB Direct and the RDMA channel really used: DebugData must list the
# connection with its "SMBDirect" block and "RDMA", and the server's counters
# must show RDMA Reads (WRITE data) and RDMA Writes (READ data).

NDK_SMBD=${INTEROP_NDK_SMBD:-}
SMB_USER=smbtest
SMB_PASS=ndk-smbd-Pw1
# cache=none: every read and write goes to the server (section h of the
# interop README mounts ksmbd the same way); r/wsize: README problem 7.
SMB_OPTS="rdma,vers=3.02,cache=none,username=$SMB_USER,password=$SMB_PASS,rsize=1044480,wsize=1044480"

smbd_start() {
  if [ -z "$NDK_SMBD" ] || [ ! -x "$NDK_SMBD" ]; then
    check "ndk-smbd built (INTEROP_NDK_SMBD)" false
    return 1
  fi
  mkdir -p "$CDIR/export"
  echo "$SMB_USER:$SMB_PASS" >"$CDIR/users"
  # --duration: past the longest case bound (600 s), so that a slow case
  # is ended by its own checks, never by the server quitting under a mount.
  "$NDK_SMBD" --share "$CDIR/export" --users "$CDIR/users" -a 127.0.0.1 -p "$HT_SMB" \
    --duration 660 --json "$CDIR/smbd.json" >"$CDIR/smbd.out" 2>"$CDIR/smbd.err" &
  SMBD_PID=$!
  HOST_PIDS+=("$SMBD_PID")
  # Its start-up line, waited for up to 60 s (a server starting on a host
  # at load 70-100 gets a few percent of a core; ends as soon as it is up).
  local end=$((SECONDS + 60))
  until grep -q 'ndk-smbd:' "$CDIR/smbd.out" 2>/dev/null || [ $SECONDS -ge $end ]; do sleep 0.1; done
  sed 's/^/  smbd| /' "$CDIR/smbd.out"
  check "ndk-smbd listening" grep -q "127.0.0.1:$HT_SMB" "$CDIR/smbd.out"
}

smbd_stop() {
  kill -TERM "$SMBD_PID" 2>/dev/null || true
  local rc=0
  wait "$SMBD_PID" || rc=$?
  sed 's/^/  smbd| /' "$CDIR/smbd.err" | tail -n 10
  check "ndk-smbd exited 0 at SIGTERM" test "$rc" -eq 0
  [ -s "$CDIR/smbd.json" ] && jq -c . "$CDIR/smbd.json" | sed 's/^/  smbd-stats| /'
  return 0
}

# The mount, twice if need be: the first rdma_resolve_addr() to the
# --to-host address after boot can time out (README section e). A mount
# that an earlier case left behind (killed at its ctest timeout before its
# umount, its server gone: "Stale file handle", then EBUSY for the new
# mount) is detached first, so that each case starts from a clean /mnt/s.
SMB_MOUNT="umount -l /mnt/s 2>/dev/null && echo 'detached a leftover mount of /mnt/s'; mkdir -p /mnt/s; modprobe cifs; ping -c 1 -W 2 $TO_HOST_IP >/dev/null 2>&1;
for i in 1 2; do timeout 60 mount -t cifs //$TO_HOST_IP/share /mnt/s -o $SMB_OPTS && break; sleep 1; done
mountpoint -q /mnt/s || exit 3
grep -A3 -E '^[0-9]+\) ' /proc/fs/cifs/DebugData | head -n 4
grep -E 'SMBDirect|^RDMA|Dialect' /proc/fs/cifs/DebugData"

smb_mounted_checks() { # OUT: the guest output of SMB_MOUNT
  check "cifs mounted the share" test "$1" -eq 0
  check "DebugData: an SMB Direct connection (SMBDirect block)" has "$CDIR/mount.txt" 'SMBDirect'
  check "DebugData: transport RDMA" has "$CDIR/mount.txt" '^RDMA'
}

smb_counters_checks() {
  check "server: WRITE data pulled by RDMA Read" jtrue "$CDIR/smbd.json" '.[0].rdma_reads > 0'
  check "server: READ data pushed by RDMA Write" jtrue "$CDIR/smbd.json" '.[0].rdma_writes > 0'
  check "server: replies by Send with Invalidate (3.0.2 asks for it)" \
    jtrue "$CDIR/smbd.json" '.[0].send_invalidates > 0'
  check "server: no logon failure" jtrue "$CDIR/smbd.json" '.[0].logon_failures == 0'
}

# The guest script's output OUT, which wrote a file NAME to the share with
# dd oflag=direct (its md5 on a "src=" line) and read it back with iflag=direct
# ("read-back-equal"): DD_CHECKS OUT NAME RC LABEL.
dd_checks() {
  local out=$1 name=$2 rc=$3 label=$4 src host
  sed 's/^/  guest| /' "$out"
  src=$(sed -n 's/^src=//p' "$out")
  host=$(md5sum <"$CDIR/export/$name" 2>/dev/null | cut -d' ' -f1)
  check "guest script rc 0" test "$rc" -eq 0
  check "$label O_DIRECT write: the server's file equals the source" test -n "$src" -a "$src" = "$host"
  check "$label O_DIRECT read back equal" has "$out" '^read-back-equal'
}

case_cifs_dd() {
  smbd_start || return 0
  local rc=0 t0
  t0=$(now)
  g_run 150 "$SMB_MOUNT" >"$CDIR/mount.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/mount.txt"
  smb_mounted_checks $rc
  rc=0
  # Bounded for a loaded host: at load 20 the 64 MiB write alone ran at
  # ~0.5 MB/s (the ctest timeout is 600 s).
  g_run 480 "set -e
dd if=/dev/urandom of=/tmp/src.bin bs=1M count=64 status=none
dd if=/tmp/src.bin of=/mnt/s/big.bin bs=1M oflag=direct 2>&1 | tail -n 1
dd if=/mnt/s/big.bin of=/tmp/back.bin bs=1M iflag=direct 2>&1 | tail -n 1
echo src=\$(md5sum </tmp/src.bin | cut -d' ' -f1)
echo back=\$(md5sum </tmp/back.bin | cut -d' ' -f1)
ls -l /mnt/s
grep -E 'SMBDirect|MR mr_ready' /proc/fs/cifs/DebugData
umount /mnt/s && echo umounted" >"$CDIR/dd.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/dd.txt"
  local src back host
  src=$(sed -n 's/^src=//p' "$CDIR/dd.txt")
  back=$(sed -n 's/^back=//p' "$CDIR/dd.txt")
  host=$(md5sum <"$CDIR/export/big.bin" 2>/dev/null | cut -d' ' -f1)
  check "guest script rc 0" test "$rc" -eq 0
  check "64 MiB O_DIRECT write: the server's file equals the source ($host)" test -n "$src" -a "$src" = "$host"
  check "64 MiB O_DIRECT read back equals the source ($back)" test -n "$src" -a "$src" = "$back"
  check "server file is 64 MiB" test "$(stat -c %s "$CDIR/export/big.bin" 2>/dev/null)" = 67108864
  check "umount" has "$CDIR/dd.txt" '^umounted'
  smbd_stop
  smb_counters_checks
  echo "  case wall time $(since "$t0") s"
  guest_no_oops
}

case_cifs_tree() {
  smbd_start || return 0
  local rc=0
  g_run 150 "$SMB_MOUNT" >"$CDIR/mount.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/mount.txt"
  smb_mounted_checks $rc
  rc=0
  g_run 360 "set -e
rm -rf /tmp/tree; mkdir -p /tmp/tree/a/b /tmp/tree/c
printf x >/tmp/tree/one-byte; head -c 4095 /dev/urandom >/tmp/tree/a/odd-4095
head -c 1048577 /dev/urandom >/tmp/tree/a/b/mib-plus-1; head -c 70001 /dev/urandom >/tmp/tree/c/services
cp -r /tmp/tree /mnt/s/tree
diff -r /tmp/tree /mnt/s/tree && echo tree-equal
ls -l /mnt/s/tree /mnt/s/tree/a
mv /mnt/s/tree/c/services /mnt/s/tree/c/svc
mv /mnt/s/tree/a /mnt/s/tree/a2
test -f /mnt/s/tree/c/svc && test ! -e /mnt/s/tree/c/services && test -d /mnt/s/tree/a2/b && echo renamed
rm /mnt/s/tree/one-byte
test ! -e /mnt/s/tree/one-byte && echo removed
rm -r /mnt/s/tree/a2
ls -lR /mnt/s
umount /mnt/s && echo umounted" >"$CDIR/tree.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/tree.txt" | head -n 40
  check "guest script rc 0" test "$rc" -eq 0
  check "cp -r: diff -r equal" has "$CDIR/tree.txt" '^tree-equal'
  check "mv of a file and a directory" has "$CDIR/tree.txt" '^renamed'
  check "rm" has "$CDIR/tree.txt" '^removed'
  check "host: the tree as the guest left it" test -f "$CDIR/export/tree/c/svc" -a ! -e "$CDIR/export/tree/a2" -a ! -e "$CDIR/export/tree/one-byte"
  check "host: the renamed file has its content" test -s "$CDIR/export/tree/c/svc"
  check "umount" has "$CDIR/tree.txt" '^umounted'
  smbd_stop
  check "server: WRITE data pulled by RDMA Read" jtrue "$CDIR/smbd.json" '.[0].rdma_reads > 0'
  guest_no_oops
}

# SMB 3.1.1 (mount -o vers=3.1.1): ndk-smbd answers the negotiate contexts,
# both sides hash NEGOTIATE and SESSION_SETUP (preauth integrity) and derive
# the 3.1.1 signing key from that hash. cifs signs its 3.1.1 TREE_CONNECT
# whatever the mount options (MS-SMB2 3.2.4.1.1) and ndk-smbd verifies it
# (a wrong key: STATUS_ACCESS_DENIED, no mount), so the mount proves that
# the two hashes and keys agree; then the RDMA channel carries the I/O.
# (With `sign` cifs turns RDMA I/O off, and its large inline WRITEs then
# reach ndk-smbd with signatures that do not verify, at 3.0.2 as at 3.1.1:
# docs/smb-direct.md, "cifs inline I/O".)
case_cifs_v311() {
  smbd_start || return 0
  local rc=0 opts
  opts=${SMB_OPTS/vers=3.02/vers=3.1.1}
  g_run 150 "${SMB_MOUNT//$SMB_OPTS/$opts}" >"$CDIR/mount.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/mount.txt"
  smb_mounted_checks $rc
  check "DebugData: dialect 3.1.1" has "$CDIR/mount.txt" 'Dialect 0x311'
  rc=0
  g_run 360 "set -e
dd if=/dev/urandom of=/tmp/v311.bin bs=1M count=8 status=none
dd if=/tmp/v311.bin of=/mnt/s/v311.bin bs=1M oflag=direct 2>&1 | tail -n 1
dd if=/mnt/s/v311.bin of=/tmp/v311.back bs=1M iflag=direct 2>&1 | tail -n 1
cmp /tmp/v311.bin /tmp/v311.back && echo read-back-equal
echo src=\$(md5sum </tmp/v311.bin | cut -d' ' -f1)
head -c 1048579 /tmp/v311.bin >/tmp/one.bin
cp /tmp/one.bin /mnt/s/copy.bin && mv /mnt/s/copy.bin /mnt/s/moved.bin
cp /mnt/s/moved.bin /mnt/s/dup.bin && cmp /tmp/one.bin /mnt/s/dup.bin && echo same-share-copy-equal
ls -l /mnt/s
rm /mnt/s/moved.bin && test ! -e /mnt/s/moved.bin && echo removed
umount /mnt/s && echo umounted" >"$CDIR/v311.txt" 2>&1 || rc=$?
  dd_checks "$CDIR/v311.txt" v311.bin "$rc" "8 MiB"
  check "cp, mv, rm on the mount" has "$CDIR/v311.txt" '^removed'
  # cp within the share asks for a server-side copy (copy_file_range ->
  # FSCTL_SRV_REQUEST_RESUME_KEY), which ndk-smbd refuses with
  # STATUS_INVALID_DEVICE_REQUEST: the copy must still be right (1 MiB + 3:
  # the fallback copies in small pieces, 8 MiB took 100 s under TCG).
  check "cp within the share (server-side copy refused, done by the client)" \
    has "$CDIR/v311.txt" '^same-share-copy-equal'
  check "umount" has "$CDIR/v311.txt" '^umounted'
  smbd_stop
  check "server: a 3.1.1 session" jtrue "$CDIR/smbd.json" '.[0].sessions_311 >= 1'
  check "server: cifs's signed TREE_CONNECT verified (and answered signed)" \
    jtrue "$CDIR/smbd.json" '.[0].bad_signatures == 0 and .[0].signed_responses >= 1'
  smb_counters_checks
  guest_no_oops
}

# A signed mount (mount -o sign): cifs 6.1 then turns the RDMA channel off
# and sends every READ and WRITE inline in SMB Direct fragments; ndk-smbd
# verifies every request's signature and signs every response, LOGOFF's at
# umount included (cifs logs "sign fail cmd 0x2" for an unsigned one).
# wsize=4096: cifs 6.1.192's smbd_send() sizes each fragment of a WRITE's
# page array by what is left of the whole message, not of the page, so a
# fragment that reaches past a page's end carries bytes from beyond it and
# the WRITE arrives with data cifs did not sign (ndk-smbd refuses it,
# EACCES); a WRITE of at most one page from a page-aligned buffer (O_DIRECT,
# cp's buffers) never does (docs/smb-direct.md, "cifs inline I/O").
case_cifs_signed_small() {
  smbd_start || return 0
  local rc=0 opts
  opts="${SMB_OPTS/wsize=1044480/wsize=4096},sign"
  g_run 150 "${SMB_MOUNT//$SMB_OPTS/$opts}" >"$CDIR/mount.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/mount.txt"
  check "cifs mounted the share (sign, wsize=4096)" test "$rc" -eq 0
  check "DebugData: an SMB Direct connection (SMBDirect block)" has "$CDIR/mount.txt" 'SMBDirect'
  check "DebugData: the session is signed" has "$CDIR/mount.txt" 'Dialect 0x302 signed'
  rc=0
  local t0
  t0=$(now)
  g_run 480 "set -e
n=\$(dmesg | wc -l)
dd if=/dev/urandom of=/tmp/sig.bin bs=1M count=2 status=none
dd if=/tmp/sig.bin of=/mnt/s/sig.bin bs=1M oflag=direct 2>&1 | tail -n 1
dd if=/mnt/s/sig.bin of=/tmp/sig.back bs=1M iflag=direct 2>&1 | tail -n 1
cmp /tmp/sig.bin /tmp/sig.back && echo read-back-equal
echo src=\$(md5sum </tmp/sig.bin | cut -d' ' -f1)
head -c 70001 /dev/urandom >/tmp/odd.bin
cp /tmp/odd.bin /mnt/s/odd.bin && cmp /tmp/odd.bin /mnt/s/odd.bin && echo odd-equal
grep -E 'Writes:|Reads:|Bytes' /proc/fs/cifs/Stats
umount /mnt/s && echo umounted
dmesg | tail -n +\$((n + 1)) | grep -E 'CIFS' || true" >"$CDIR/io.txt" 2>&1 || rc=$?
  dd_checks "$CDIR/io.txt" sig.bin "$rc" "2 MiB signed"
  check "70001-byte cp equal" has "$CDIR/io.txt" '^odd-equal'
  check "umount" has "$CDIR/io.txt" '^umounted'
  check "cifs verified every response signature (no 'sign fail', LOGOFF included)" hasnt "$CDIR/io.txt" 'sign fail|signature verification returned error'
  smbd_stop
  echo "  I/O wall time $(since "$t0") s"
  check "server: every signature verified" jtrue "$CDIR/smbd.json" '.[0].bad_signatures == 0'
  check "server: signed responses" jtrue "$CDIR/smbd.json" '.[0].signed_responses > 500'
  check "server: WRITE data inline (cifs turns the RDMA channel off with sign)" \
    jtrue "$CDIR/smbd.json" '.[0].inline_writes >= 512 and .[0].rdma_reads == 0'
  guest_no_oops
}

# What programs do to files on a default cifs mount (cache=strict, no unix
# extensions), beyond copying them: tests/interop/cifs_probe.c checks each
# system call's outcome (data by content, failures by errno name): O_EXCL
# on an existing file (EEXIST), a missing file (ENOENT), truncate shrink and
# extend, a sparse write past EOF, O_APPEND, fsync, utimes, stat fields,
# chmod (the read-only attribute), mkdir/rmdir (ENOTEMPTY), rename over a
# file, of an open file and of a directory, unlink of an open file, hard
# and symbolic links, flock and fcntl locks (SMB2 LOCK) across processes,
# statfs, mmap read and write, two writers at once, long and non-ASCII
# names (UTF-16 surrogate pairs), and a directory of 1500 entries that the
# host made (QUERY_DIRECTORY continuation; ls and find agree with the host).
# Then the server is stopped under the mounted share: the next access fails
# within a bound (no hang, no oops), the restarted server is found again by
# cifs's reconnect, and a fresh mount after the restart reads the data.
CIFS_MANY=1500
case_cifs_posix() {
  local probe=${INTEROP_CIFS_PROBE:-}
  if [ -z "$probe" ] || [ ! -x "$probe" ]; then
    check "cifs_probe built (INTEROP_CIFS_PROBE)" false
    return 0
  fi
  cp "$probe" "$SHARE/cifs_probe"
  smbd_start || return 0
  local rc=0 t0 opts i
  t0=$(now)
  # The big directory, made on the host: names of ~40 characters, so that a
  # listing takes several 64 KiB QUERY_DIRECTORY responses.
  mkdir -p "$CDIR/export/work/many"
  for ((i = 0; i < CIFS_MANY; i++)); do
    : >"$CDIR/export/work/many/$(printf 'f%04d-a-name-of-forty-characters-or-so' "$i")"
  done
  local host_list
  host_list=$(cd "$CDIR/export/work" && find many -type f | LC_ALL=C sort | md5sum | cut -d' ' -f1)
  opts=${SMB_OPTS/cache=none,/}
  g_run 150 "${SMB_MOUNT//$SMB_OPTS/$opts}" >"$CDIR/mount.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/mount.txt"
  smb_mounted_checks $rc
  rc=0
  # The guest steps are timed ("time| STEP SECONDS" lines: bash's clock,
  # no extra process) to keep the case's cost visible.
  g_run 400 "cp /share/cifs_probe /tmp/cifs_probe; cd /mnt/s/work || exit 3
t0=\${EPOCHREALTIME/./}
lap() { local t=\${EPOCHREALTIME/./}; printf 'time| %s %d.%d\\n' \"\$1\" \$(((t - t0) / 1000000)) \$(((t - t0) / 100000 % 10)); t0=\$t; }
n=\$(dmesg | wc -l)
grep ' /mnt/s ' /proc/mounts | grep -o 'cache=[a-z]*' | sed 's/^/mount-/'
lap start
echo ls-count=\$(ls many | wc -l)
lap ls
echo find-sum=\$(find many -type f | LC_ALL=C sort | md5sum | cut -d' ' -f1)
lap find
timeout 300 /tmp/cifs_probe /mnt/s/work $CIFS_MANY | while IFS= read -r l; do echo \"\$l\"; w=\${l#* }; lap \"probe:\${w%% *}\"; done
echo probe-rc=\${PIPESTATUS[0]}
lap probe-total
truncate -s 3M t3 && echo truncate-size=\$(stat -c %s t3)
touch -d '2003-04-05 06:07:08 UTC' t3 && echo touch-mtime=\$(stat -c %Y t3)
df -P /mnt/s | tail -n 1 | awk '{print \"df-blocks=\" \$2 \" df-avail=\" \$4}'
timeout 20 ln -s t3 t3-link; echo ln-s-rc=\$?
echo sum-writer-0=\$(md5sum <writer-0 | cut -d' ' -f1)
lap shell-checks
dmesg | tail -n +\$((n + 1)) | grep -E 'CIFS' | head -n 20" >"$CDIR/posix.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/posix.txt"
  echo "  probe wall time $(since "$t0") s"
  check "guest script rc 0" test "$rc" -eq 0
  check "the default cache mode (strict)" has "$CDIR/posix.txt" '^mount-cache=strict$'
  check "ls of $CIFS_MANY entries: all listed" has "$CDIR/posix.txt" "^ls-count=$CIFS_MANY\$"
  check "find: the same names as on the host" has "$CDIR/posix.txt" "^find-sum=$host_list\$"
  local c
  for c in bigdir_readdir create o_excl_existing open_missing open_missing_dir stat_missing \
    truncate_shrink truncate_extend ftruncate sparse_write fsync append utimes stat_fields \
    stat_inode chmod mkdir mkdir_existing rmdir_nonempty unlink_dir rmdir rename_over \
    rename_open rename_dir unlink_open unlink_open_recreate hardlink symlink flock fcntl_lock \
    statfs mmap_read mmap_write two_writers names_create names_readdir names_rename; do
    check "probe: $c" has "$CDIR/posix.txt" "^ok $c( |\$)"
  done
  check "probe: no failed check" has "$CDIR/posix.txt" '^probe-rc=0$'
  check "truncate -s 3M" has "$CDIR/posix.txt" '^truncate-size=3145728$'
  check "touch -d: mtime on the mount" has "$CDIR/posix.txt" '^touch-mtime=1049522828$'
  check "touch -d: mtime on the server" test "$(stat -c %Y "$CDIR/export/work/t3" 2>/dev/null)" = 1049522828
  check "df: blocks and available space" grep -qE '^df-blocks=[1-9][0-9]* df-avail=[0-9]+' "$CDIR/posix.txt"
  check "ln -s: refused (no unix extensions, no mfsymlinks), not hung" has "$CDIR/posix.txt" '^ln-s-rc=1$'
  check "server: a hard link (nlink 2)" test "$(stat -c %h "$CDIR/export/work/linked" 2>/dev/null)" = 2
  # The probe renamed the emoji name over the U+1D11E one (6 bytes).
  check "server: the surrogate-pair names, byte for byte" \
    test "$(stat -c %s "$CDIR/export/work/names/$(printf '\xf0\x9d\x84\x9e clef')" 2>/dev/null)" = 6 \
    -a ! -e "$CDIR/export/work/names/$(printf 'emoji-\xf0\x9f\x98\x80-\xf0\x9f\x8e\xb5')"
  check "server: the accented name, byte for byte" \
    test -f "$CDIR/export/work/names/$(printf 'caf\xc3\xa9 na\xc3\xafve \xe2\x82\xac')"
  check "server: chmod 0444 cleared the file's write bits" \
    test "$(stat -c %a "$CDIR/export/work/ro" 2>/dev/null)" = 444
  check "server: utimes' mtime" test "$(stat -c %Y "$CDIR/export/work/times" 2>/dev/null)" = 981173106
  check "server: the writers' files" test "$(stat -c %s "$CDIR/export/work/writer-1" 2>/dev/null)" = 4194304
  # For the record (docs/smb-direct.md): the names as the server stores them.
  ls "$CDIR/export/work/names" 2>/dev/null | cut -c1-40 | cat -v | sed 's/^/  host names| /'
  local sum
  sum=$(sed -n 's/^sum-writer-0=//p' "$CDIR/posix.txt")

  # The server stopped under the mount: a read must end (an error) within
  # cifs's own bounds, not hang; the restarted server must be found again.
  smbd_stop
  check "server: locks taken and released (no STATUS_NOT_SUPPORTED for LOCK)" \
    jtrue "$CDIR/smbd.json" '.[0].locks_granted > 0'
  for f in smbd.json smbd.out smbd.err; do mv "$CDIR/$f" "$CDIR/first-$f" 2>/dev/null || true; done
  local t1
  t1=$(now)
  rc=0
  g_run 150 "t=\$(date +%s); timeout 120 cat /mnt/s/work/writer-0 >/dev/null 2>/tmp/down.err; echo down-rc=\$? down-secs=\$((\$(date +%s) - t)); cat /tmp/down.err" \
    >"$CDIR/down.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/down.txt"
  check "read with the server down: an error, not a hang (timeout 120 s)" \
    grep -qE '^down-rc=[1-9][0-9]* ' "$CDIR/down.txt"
  check "... not the timeout's 124" hasnt "$CDIR/down.txt" '^down-rc=124 '
  smbd_start || return 0
  g_run 150 "for i in \$(seq 1 100); do s=\$(timeout 30 md5sum </mnt/s/work/writer-0 2>/dev/null | cut -d' ' -f1); [ \"\$s\" = $sum ] && break; sleep 1; done
echo reconnect-sum=\$s after \$i
grep -E 'Reconnect|SMBDirect|^RDMA' /proc/fs/cifs/DebugData | head -n 4
umount /mnt/s && echo umounted" >"$CDIR/reconnect.txt" 2>&1 || true
  sed 's/^/  guest| /' "$CDIR/reconnect.txt"
  check "cifs reconnected to the restarted server: the file reads equal" \
    has "$CDIR/reconnect.txt" "^reconnect-sum=$sum "
  check "umount after the reconnect" has "$CDIR/reconnect.txt" '^umounted'
  rc=0
  g_run 150 "${SMB_MOUNT//$SMB_OPTS/$opts}
md5sum </mnt/s/work/writer-0 | cut -d' ' -f1 | sed 's/^/remount-sum=/'
ls /mnt/s/work/many | wc -l | sed 's/^/remount-ls=/'
umount /mnt/s && echo umounted" >"$CDIR/remount.txt" 2>&1 || rc=$?
  sed 's/^/  guest| /' "$CDIR/remount.txt"
  check "a fresh mount after the restart" test "$rc" -eq 0
  check "... reads the data" has "$CDIR/remount.txt" "^remount-sum=$sum\$"
  check "... lists the big directory" has "$CDIR/remount.txt" "^remount-ls=$CIFS_MANY\$"
  check "... umount" has "$CDIR/remount.txt" '^umounted'
  echo "  server down/up wall time $(since "$t1") s"
  smbd_stop
  echo "  case wall time $(since "$t0") s"
  guest_no_oops
}
