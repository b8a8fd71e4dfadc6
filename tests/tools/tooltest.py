# SPDX-License-Identifier: Apache-2.0
"""What the tools' end-to-end scripts in this folder share: failing with the
script's name, a free loopback port, and waiting (bounded) until a server
accepts connections. Each script imports it from its own folder.
"""
import os
import socket
import sys
import time


def fail(msg):
    """Ends the test: the reason on stderr, prefixed with the script's name."""
    name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    sys.stderr.write(name + ": " + msg + "\n")
    sys.exit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_connectable(port, proc, bound_s):
    """Until a TCP connect to 127.0.0.1:port succeeds; fails if `proc` exits
    first or the bound passes. (A connect disturbs a server that counts its
    connections: stop_signals.py looks in /proc/net/tcp instead.)"""
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
