#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Stalled handshakes do not starve a persistent server (issue 28 item 4).

200 raw TCP peers each send a valid MPA Request (RFC 5044 7.1, revision 1,
no private data), read the server's MPA Reply and then stall: they never
send the first FPDU that finishes the handshake. A real client started
meanwhile must be served within a bound, and the server must not refuse it.

usage: stalled_handshakes.py SERVER_KIND BINARY
  SERVER_KIND: ndkping (ndkping -s -P)
Exit 0 on success; 1 with the reason on stderr.
"""
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import time

PEERS = 200
SERVE_BOUND_S = 5.0
REQ_KEY = b"MPA ID Req Frame"
REP_KEY = b"MPA ID Rep Frame"


def fail(msg):
    sys.stderr.write("stalled_handshakes: " + msg + "\n")
    sys.exit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def mpa_request():
    # Key, then the M/C/R/Res byte (C: CRC wanted), revision, private data
    # length (0): 20 bytes, network order.
    return REQ_KEY + struct.pack(">BBH", 0x40, 1, 0)


def read_exact(s, n, deadline):
    buf = b""
    while len(buf) < n:
        s.settimeout(max(0.05, deadline - time.monotonic()))
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed after %d bytes" % len(buf))
        buf += chunk
    return buf


def wait_listening(port, proc, bound_s=10.0):
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail("server exited early with %d" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    fail("server not listening after %.0f s" % bound_s)


def stall_peers(port):
    peers = []
    deadline = time.monotonic() + 20
    for i in range(PEERS):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(mpa_request())
        peers.append(s)
    for i, s in enumerate(peers):
        try:
            head = read_exact(s, 20, deadline)
        except (OSError, ConnectionError) as e:
            fail("peer %d: no MPA Reply: %s" % (i, e))
        if head[:16] != REP_KEY:
            fail("peer %d: not an MPA Reply: %r" % (i, head[:16]))
        flags, _rev, pdlen = struct.unpack(">BBH", head[16:20])
        if flags & 0x20:
            fail("peer %d: the server rejected a valid MPA Request" % i)
        if pdlen:
            read_exact(s, pdlen, deadline)
    return peers  # they now stall: no first FPDU


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    kind, binary = sys.argv[1], sys.argv[2]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < PEERS + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    port = free_port()
    if kind != "ndkping":
        fail("unknown server kind " + kind)
    server_cmd = [binary, "-s", "-P", "-a", "127.0.0.1", "-p", str(port)]
    client_cmd = [binary, "-c", "-a", "127.0.0.1", "-p", str(port), "-C", "3"]
    server = subprocess.Popen(server_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    peers = []
    try:
        wait_listening(port, server)
        peers = stall_peers(port)
        t0 = time.monotonic()
        try:
            r = subprocess.run(client_cmd, capture_output=True, text=True,
                               timeout=SERVE_BOUND_S + 5)
        except subprocess.TimeoutExpired:
            fail("the real client was not served within %.0f s" % (SERVE_BOUND_S + 5))
        took = time.monotonic() - t0
        if r.returncode != 0:
            fail("real client exited %d with %d stalled peers: %s" %
                 (r.returncode, PEERS, r.stderr.strip()))
        if took > SERVE_BOUND_S:
            fail("real client took %.1f s (bound %.0f s)" % (took, SERVE_BOUND_S))
        print("served a real client in %.2f s beside %d stalled handshakes" % (took, PEERS))
    finally:
        for s in peers:
            s.close()
        server.send_signal(signal.SIGTERM)
        try:
            _, serr = server.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            _, serr = server.communicate()
    if "refused client 127.0.0.1" in (serr or "") and "already serving" in serr:
        fail("the server refused a client for lack of slots:\n" + serr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
