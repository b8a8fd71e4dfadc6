#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# rxq-watch.sh PORT STOPFILE MAXSECS - runs in the guest (cwd /share).
# Prints "TIME REMOTE RXQ" for every ESTABLISHED TCP connection on local
# PORT whose receive queue holds unread bytes, sampled about every 0.5 s,
# until STOPFILE appears or MAXSECS pass.
#
# Why: siw consumes its sockets' data from the data_ready upcall, so a
# non-empty receive queue that stays the same over seconds means siw is not
# reading that connection at all - the signature of the race behind
# docs/compatibility.md notes 1 and 8 (an FPDU that arrives between siw's
# MPA Reply and the switch of the socket's upcall to the QP). One awk per
# sample (bash's read builtin would read /proc byte by byte).
port=$(printf '%04X' "$1")
stop=$2
end=$((SECONDS + $3))
while [ $SECONDS -lt "$end" ] && [ ! -e "$stop" ]; do
  awk -v t="$EPOCHREALTIME" -v p=":$port" \
    'substr($2, length($2) - 4) == p && $4 == "01" && substr($5, 10) != "00000000" { print t, $3, substr($5, 10) }' \
    /proc/net/tcp
  sleep 0.5
done
exit 0
