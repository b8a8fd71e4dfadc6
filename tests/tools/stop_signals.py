#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Ctrl-C ends every tool; a second one at once (issue 28, docs/tools.md).

  nvmet      ndk-nvmet with a host stalled in its handshake (an enhanced MPA
             Request for an admin queue, the Reply read, no RTR): its orderly
             stop waits for that accept, so the first SIGINT must say
             "stopping" and leave it running, the second end it with 130
             within a few seconds.
  nvme-load  ndk-nvme load against ndk-nvmet, SIGINT once it reports
             progress: exit 130, the report so far (marked interrupted) on
             stdout, and the controller shut down (ndk-nvmet's shutdowns
             counter).
  plain      ndkperf --server and ndkping -s waiting for a client: the first
             SIGINT ends them (the default action) within a few seconds.
  nvme-commands
             ndk-nvme discover/connect/identify/read/write blocked in their
             connect (a TCP server that accepts and never answers the MPA
             Request; --timeout 60): the first SIGINT ends each (the default
             action: only load installs a handler) within a few seconds.
usage: stop_signals.py CASE NDK_NVMET NDK_NVME NDKPERF NDKPING
"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

from tooltest import fail, free_port

NQN = "nqn.2014-08.org.softndk:stop-signals"
QUICK_S = 5.0  # a forced or default-action exit must come within this


def wait_listening(port, proc, bound_s=20.0):
    # /proc/net/tcp: a listening socket (state 0A) on the port, so no
    # connection disturbs the server.
    deadline = time.monotonic() + bound_s
    want = ":%04X" % port
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail("%s exited early with %d" % (proc.args[0], proc.returncode))
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if cols[1].endswith(want) and cols[3] == "0A":
                    return
        time.sleep(0.05)
    fail("nothing listens on %d after %.0f s" % (port, bound_s))


def wait_text(path, text, proc, bound_s):
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        with open(path, errors="replace") as f:
            if text in f.read():
                return True
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    with open(path, errors="replace") as f:
        return text in f.read()


def read_file(path):
    with open(path, errors="replace") as f:
        return f.read()


def exit_within(proc, bound_s):
    try:
        proc.wait(timeout=bound_s)
        return True
    except subprocess.TimeoutExpired:
        return False


def stalled_nvme_host(port):
    """An NVMe/RDMA host that sends an enhanced (revision 2, peer-to-peer)
    MPA Request for an admin queue, reads the Reply and never sends its RTR."""
    cm = struct.pack("<HHHHH22x", 0, 0, 32, 31, 0)
    # RFC 6581: IRD with the peer-to-peer bit (A), ORD with the zero-length
    # RDMA Write RTR bit (C); then the ULP's private data.
    pdata = struct.pack(">HH", 0x8000 | 16, 0x4000 | 16) + cm
    req = b"MPA ID Req Frame" + struct.pack(">BBH", 0x10, 2, len(pdata)) + pdata
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(req)
    head = b""
    while len(head) < 20:
        chunk = s.recv(20 - len(head))
        if not chunk:
            fail("the target closed before its MPA Reply")
        head += chunk
    if head[:16] != b"MPA ID Rep Frame":
        fail("not an MPA Reply: %r" % head[:16])
    if head[16] & 0x20:
        fail("the target rejected the stalled host's MPA Request")
    return s  # stalls: no RTR


def start(cmd, tmp, name):
    out = open(os.path.join(tmp, name + ".out"), "w")
    err = open(os.path.join(tmp, name + ".err"), "w")
    return subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL), \
        os.path.join(tmp, name + ".out"), os.path.join(tmp, name + ".err")


def case_nvmet(nvmet, tmp):
    port = free_port()
    p, _, err = start([nvmet, "-a", "127.0.0.1", "-p", str(port), "-n", NQN, "--ns", "ram:1M",
                       "--allow-any-host", "--timeout", "60"], tmp, "nvmet")
    host = None
    try:
        wait_listening(port, p)
        host = stalled_nvme_host(port)
        p.send_signal(signal.SIGINT)
        if not wait_text(err, "stopping (press Ctrl-C again to quit at once)", p, 10):
            fail("ndk-nvmet did not say it is stopping: " + read_file(err))
        # Its orderly stop waits for the stalled host's accept (--timeout 60).
        if exit_within(p, 1.0):
            fail("ndk-nvmet's orderly stop was not blocked (exit %d); the case tests nothing"
                 % p.returncode)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        if not exit_within(p, QUICK_S):
            fail("a second SIGINT did not end ndk-nvmet within %.0f s" % QUICK_S)
        if p.returncode != 130:
            fail("ndk-nvmet exited %d after a second SIGINT, want 130: %s" %
                 (p.returncode, read_file(err)))
        if "second signal, quitting at once" not in read_file(err):
            fail("ndk-nvmet did not say it quits at once: " + read_file(err))
        print("nvmet: second SIGINT ended it in %.2f s with 130" % (time.monotonic() - t0))
    finally:
        if host:
            host.close()
        if p.poll() is None:
            p.kill()
            p.wait()


def case_nvme_load(nvmet, nvme, tmp):
    port = free_port()
    stats = os.path.join(tmp, "nvmet.json")
    t, _, terr = start([nvmet, "-a", "127.0.0.1", "-p", str(port), "-n", NQN, "--ns", "ram:16M",
                        "--allow-any-host", "--json", stats], tmp, "nvmet")
    try:
        wait_listening(port, t)
        h, hout, herr = start([nvme, "-a", "127.0.0.1", "-s", str(port), "-n", NQN, "load",
                               "--rw", "randread", "--bs", "4k", "--runtime", "120"], tmp, "nvme")
        try:
            if not wait_text(herr, "ndk-nvme: load 1 s:", h, 30):
                fail("ndk-nvme load showed no progress: " + read_file(herr))
            h.send_signal(signal.SIGINT)
            if not exit_within(h, 30):
                fail("ndk-nvme load did not end within 30 s of SIGINT")
            out = read_file(hout)
            if h.returncode != 130:
                fail("ndk-nvme load exited %d after SIGINT, want 130: %s" %
                     (h.returncode, read_file(herr)))
            if "job: rw=randread" not in out or "interrupted" not in out:
                fail("no report of what ran: " + out)
        finally:
            if h.poll() is None:
                h.kill()
                h.wait()
        t.send_signal(signal.SIGINT)
        if not exit_within(t, 30) or t.returncode != 0:
            fail("ndk-nvmet did not stop with 0: %s" % read_file(terr))
        with open(stats) as f:
            j = json.load(f)
        if j.get("shutdowns", 0) < 1:
            fail("the controller was not shut down: %s" % j)
        print("nvme-load: SIGINT gave the report, a controller shutdown and 130")
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()


def case_plain(ndkperf, ndkping, tmp):
    for name, cmd in (("ndkperf", [ndkperf, "send_bw", "--server", "-d", "127.0.0.1", "-p"]),
                      ("ndkping", [ndkping, "-s", "-a", "127.0.0.1", "-p"])):
        port = free_port()
        p, _, err = start(cmd + [str(port)], tmp, name)
        try:
            wait_listening(port, p)
            p.send_signal(signal.SIGINT)
            if not exit_within(p, QUICK_S):
                fail("%s did not end within %.0f s of SIGINT" % (name, QUICK_S))
            if p.returncode not in (-signal.SIGINT, 130):
                fail("%s exited %d after SIGINT: %s" % (name, p.returncode, read_file(err)))
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    print("plain: ndkperf --server and ndkping -s end at the first SIGINT")


def case_nvme_commands(nvme, tmp):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(30)
    port = srv.getsockname()[1]
    held = []
    try:
        for cmd, args in (("discover", []), ("connect", []), ("identify", []),
                          ("read", ["--lba", "0"]), ("write", ["--lba", "0"])):
            p, _, err = start([nvme, "-a", "127.0.0.1", "-s", str(port), "-n", NQN, "--timeout",
                               "60", cmd] + args, tmp, "nvme-" + cmd)
            try:
                try:
                    c, _ = srv.accept()  # it is now waiting for our MPA Reply
                except socket.timeout:
                    fail("ndk-nvme %s never connected: %s" % (cmd, read_file(err)))
                held.append(c)
                if exit_within(p, 0.5):
                    fail("ndk-nvme %s did not wait for the silent server (exit %d): %s" %
                         (cmd, p.returncode, read_file(err)))
                t0 = time.monotonic()
                p.send_signal(signal.SIGINT)
                if not exit_within(p, QUICK_S):
                    fail("ndk-nvme %s did not end within %.0f s of SIGINT" % (cmd, QUICK_S))
                if p.returncode not in (-signal.SIGINT, 130):
                    fail("ndk-nvme %s exited %d after SIGINT: %s" %
                         (cmd, p.returncode, read_file(err)))
                print("nvme-commands: %s ended %.2f s after SIGINT" % (cmd, time.monotonic() - t0))
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    finally:
        for c in held:
            c.close()
        srv.close()


def main():
    if len(sys.argv) != 6:
        fail(__doc__)
    case, nvmet, nvme, ndkperf, ndkping = sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="stop_signals_") as tmp:
        if case == "nvmet":
            case_nvmet(nvmet, tmp)
        elif case == "nvme-load":
            case_nvme_load(nvmet, nvme, tmp)
        elif case == "plain":
            case_plain(ndkperf, ndkping, tmp)
        elif case == "nvme-commands":
            case_nvme_commands(nvme, tmp)
        else:
            fail("unknown case " + case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
