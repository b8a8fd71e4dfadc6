#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ndkperf checks its output paths before running (issue 28 item 9).

1. --plot /nonexistent/x.svg: exit 1 at once, "cannot write --plot
   /nonexistent/x.svg", no test run (it ran everything, then lost it).
2. --demo outside a source tree (no build/ directory) plots to
   ./ndkperf-demo.svg; here that name is a directory, so it fails at once
   naming that path instead of build/ndkperf-demo.svg after the whole demo.
3. -I 300 is refused as its --help range (0-256) says, exit 2.

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


def main():
    ndkperf = os.path.abspath(sys.argv[1])
    expect([ndkperf, "send_bw", "-D", "3", "--plot", "/nonexistent/x.svg"], 1,
           "cannot write --plot /nonexistent/x.svg")
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "ndkperf-demo.svg"))
        expect([ndkperf, "--demo", "--quiet"], 1, "cannot write --plot ndkperf-demo.svg", cwd=d)
    expect([ndkperf, "send_lat", "-I", "300"], 2, "inline")
    print("ndkperf output paths and -I range checked up front")
    return 0


if __name__ == "__main__":
    sys.exit(main())
