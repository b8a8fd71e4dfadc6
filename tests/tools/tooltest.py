# SPDX-License-Identifier: Apache-2.0
"""What the tools' end-to-end scripts in this folder share: failing with the
script's name, a free loopback port, and waiting (bounded) until a server
accepts connections. Each script imports it from its own folder.
"""
import os
import random
import socket
import sys
import time


def fail(msg):
    """Ends the test: the reason on stderr, prefixed with the script's name."""
    name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    sys.stderr.write(name + ": " + msg + "\n")
    sys.exit(1)


def _bindable(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port():
    """A port nobody uses on 127.0.0.1 now, at random below the kernel's
    ephemeral range: a port from bind(0) is an ephemeral one, which any
    connect() on the host (a parallel test's clients) may take as its local
    port before the server meant to listen on it binds."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    first = 20000
    if low - first >= 1000:
        pick = random.SystemRandom()
        for _ in range(500):
            p = pick.randint(first, low - 1)
            if _bindable(p):
                return p
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
