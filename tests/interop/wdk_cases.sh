# SPDX-License-Identifier: Apache-2.0
# tests/interop/wdk_cases.sh - group stock, the WDK sample NDK consumer
# driver (wdk/sample, ndksock.so under softndk-wdk-run) against Linux siw
# (sourced by run.sh; issue 20). The guest runs `verbs_peer ndksock-server`
# (ndksock_server.c), the sample's server in libibverbs + librdmacm; the
# unchanged driver is the client on the host, over the forwarded port.

WDK_RUN=${INTEROP_WDK_RUN:-}
NDKSOCK_SO=${INTEROP_NDKSOCK_SO:-}

case_wdk_ndksock_client() {
  local t0 job rc=0 grc=0
  t0=$(now)
  need_verbs_peer || return 0
  if [ -z "$WDK_RUN" ] || [ ! -x "$WDK_RUN" ] || [ -z "$NDKSOCK_SO" ] || [ ! -e "$NDKSOCK_SO" ]; then
    check "softndk-wdk-run and ndksock.so built (INTEROP_WDK_RUN, INTEROP_NDKSOCK_SO)" false
    return 0
  fi
  g_bg job "./verbs_peer ndksock-server $G_SRV"
  g_run 50 "wait-listen $G_SRV 45" >/dev/null || true
  # The driver's client: host interface lo, local 127.0.0.1, the server
  # behind the VM's forwarded port (library defaults).
  timeout 120 "$WDK_RUN" "$NDKSOCK_SO" --timeout 90 -- client lo 127.0.0.1 127.0.0.1 "$HP_SRV" \
    >"$CDIR/driver.log" 2>&1 || rc=$?
  sed 's/^/  driver| /' "$CDIR/driver.log"
  g_wait "$job" 40 || grc=$?
  g_out "$job" | tee "$CDIR/server.json" | sed 's/^/  siw| /'
  check "softndk-wdk-run exit 0 (driver done, no checker report)" test $rc -eq 0
  check "guest ndksock-server exit 0" test $grc -eq 0
  check "client verified the RDMA read" has "$CDIR/driver.log" 'client: RDMA read of 32768 bytes verified'
  check "client done" has "$CDIR/driver.log" 'client done, data verified'
  check "siw side: 4 echoes" jtrue "$CDIR/server.json" 'map(select(.op == "echo" and .ok)) | length == 4'
  check "siw side: written half verified" jtrue "$CDIR/server.json" 'map(select(.op == "written")) | .[0].ok == true'
  check "siw side: saw the disconnect" jtrue "$CDIR/server.json" 'map(select(.op == "disconnect")) | .[0].ok == true'
  cap_has "the client's 32 KiB Read Request" 'I->R .*RDMA Read Request .*size=32768'
  cap_has "the client's RDMA Write" 'I->R .*RDMA Write '
  cap_window "$t0"
}
