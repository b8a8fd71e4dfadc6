#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ndkperf checks its output paths before running (issue 28 item 9).

1. --plot /nonexistent/x.svg: exit 1 at once, "cannot write --plot
   /nonexistent/x.svg", no test run (it ran everything, then lost it).
2. --demo outside a source tree (no build/ directory) plots to
   ./ndkperf-demo.svg; here that name is a directory, so it fails at once
   naming that path instead of build/ndkperf-demo.svg after the whole demo.
3. -I 300 is refused as its --help range (0-256) says, exit 2.
4. The client's header shows what was negotiated (issue 28 item 10): a
   server that requires CRC and a client asking for MPA revision 1 give
   "CRC : on   MPA rev : 1" (it showed "CRC : default   MPA rev : 1" as asked).

usage: ndkperf_outputs.py NDKPERF
"""
import os
import subprocess
import sys
import tempfile
import time


def fail(msg):
    sys.stderr.write("ndkperf_outputs: " + msg + "\n")
    sys.exit(1)


def expect(argv, rc, text, cwd=None, bound_s=5.0):
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=cwd)
    except subprocess.TimeoutExpired:
        fail("%s ran for 30 s" % " ".join(argv[1:]))
    took = time.monotonic() - t0
    if r.returncode != rc or text not in r.stderr + r.stdout:
        fail("%s: exit %d (want %d), stderr %r (want %r)" %
             (" ".join(argv[1:]), r.returncode, rc, r.stderr, text))
    if took > bound_s:
        fail("%s took %.1f s to fail (it ran the test first?)" % (" ".join(argv[1:]), took))


def negotiated_header(ndkperf):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = str(s.getsockname()[1])
    s.close()
    common = ["read_bw", "-n", "50", "--timeout", "10", "-p", port]
    server = subprocess.Popen([ndkperf] + common + ["--server", "-d", "127.0.0.1", "--crc", "on"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        server.stderr.readline()  # "server waiting on ...": it listens
        r = subprocess.run([ndkperf] + common + ["127.0.0.1", "--mpa-rev", "1"],
                           capture_output=True, text=True, timeout=60)
    finally:
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    if r.returncode != 0 or "CRC : on   MPA rev : 1\n" not in r.stdout:
        fail("header not as negotiated (exit %d):\n%s%s" % (r.returncode, r.stdout, r.stderr))
    print("ndkperf's header shows the negotiated CRC and MPA revision")


def main():
    ndkperf = os.path.abspath(sys.argv[1])
    expect([ndkperf, "send_bw", "-D", "3", "--plot", "/nonexistent/x.svg"], 1,
           "cannot write --plot /nonexistent/x.svg")
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "ndkperf-demo.svg"))
        expect([ndkperf, "--demo", "--quiet"], 1, "cannot write --plot ndkperf-demo.svg", cwd=d)
    expect([ndkperf, "send_lat", "-I", "300"], 2, "inline")
    print("ndkperf output paths and -I range checked up front")
    negotiated_header(ndkperf)
    return 0


if __name__ == "__main__":
    sys.exit(main())
