#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# guest-agent.sh - the command of every interop VM (run by siw-peer in the
# guest, cwd /share = the host's group share folder).
#
# 1. Starts the persistent rping server every group uses (port 7174; -S 65000
#    so that clients of any size up to 64 KB fit its buffers). siw-peer start
#    returns once that port listens.
# 2. Runs what the host drops into req/: ID.sh -> output in ID.out, exit code
#    in ID.rc (written last, atomically). ID.kill ends job ID (its session).
#    req/quit ends the agent and so powers the VM off.
# Each job runs in its own session so that a kill reaches its children.
cd /share
mkdir -p req
{
  echo "kernel $(uname -r)"
  cat /siw-peer-siw.txt 2>/dev/null
  dpkg-query -W -f='${Package} ${Version}\n' rdma-core rdmacm-utils perftest 2>/dev/null
  echo "siw module: $(modinfo -F filename siw 2>/dev/null; grep -l . /sys/module/siw/parameters/* 2>/dev/null | head -1 | sed 's|.*|(siw-tunable: has parameters)|')"
} >versions.txt 2>&1
rping -s -P -a 0.0.0.0 -p 7174 -S 65000 -d >rping-s.log 2>&1 &
touch agent.up
while [ ! -e req/quit ]; do
  for f in req/*.sh; do
    [ -e "$f" ] || continue
    id=$(basename "$f" .sh)
    mv "$f" "req/$id.run"
    setsid bash -c 'bash "req/$1.run" >"req/$1.out" 2>&1; echo $? >"req/$1.rc.tmp"; mv "req/$1.rc.tmp" "req/$1.rc"' _ "$id" &
    echo $! >"req/$id.pid"
  done
  for k in req/*.kill; do
    [ -e "$k" ] || continue
    id=$(basename "$k" .kill)
    pid=$(cat "req/$id.pid" 2>/dev/null) && kill -TERM -- "-$pid" 2>/dev/null
    rm -f "$k"
  done
  sleep 0.2
done
dmesg >dmesg.txt 2>&1
exit 0
