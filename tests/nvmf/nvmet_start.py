#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ndk-nvmet's start, as a user runs it (issue 28 items 6, 9 and the exit codes).

1. --ns foo:bar (not file:/blk:/ram:) exits 2, its man page's "bad command
   line", naming the spec.
2. --json /nonexistent/x.json fails at once (exit 1, "cannot write --json"),
   not after the run.
3. -p 0: the discovery log (`ndk-nvme --json discover`) advertises the port
   from the start-up line, not trsvcid 0.
4. ndk-nvme against an unknown NQN exits 3 naming "Connect data byte 256
   (SUBNQN)" (the Connect response's IATTR/IPO, decoded).
5. ndk-nvme's bad arguments (--bs 1000, load beyond the namespace,
   --runtime 0/-1, --number-ios 0, --rwmixread 150, --iodepth 0,
   --timeout -5/0) exit 2 with a message naming the option.

usage: nvmet_start.py NDK_NVMET NDK_NVME
"""
import json
import re
import signal
import subprocess
import sys
import time

NQN = "nqn.2014-08.org.softndk:ephemeral"


def fail(msg):
    sys.stderr.write("ephemeral_port_discovery: " + msg + "\n")
    sys.exit(1)


def expect_exit(argv, rc, text, bound_s=10):
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, timeout=bound_s)
    if r.returncode != rc or text not in r.stderr:
        fail("%s: exit %d (want %d), stderr %r (want %r)" %
             (" ".join(argv[1:]), r.returncode, rc, r.stderr, text))
    if time.monotonic() - t0 > 5:
        fail("%s took %.1f s to fail" % (" ".join(argv[1:]), time.monotonic() - t0))


def main():
    nvmet, nvme = sys.argv[1], sys.argv[2]
    base = [nvmet, "-a", "127.0.0.1", "-p", "0", "-n", NQN, "--allow-any-host", "--duration", "30"]
    expect_exit(base + ["--ns", "foo:bar"], 2, "namespace 'foo:bar': unknown kind 'foo'")
    expect_exit(base + ["--ns", "ram:12X"], 2, "bad size suffix in '12X'")
    expect_exit(base + ["--ns", "ram:1M", "--json", "/nonexistent/x.json"], 1,
                "cannot write --json /nonexistent/x.json")
    target = subprocess.Popen(
        [nvmet, "-a", "127.0.0.1", "-p", "0", "-n", NQN, "--ns", "ram:1M", "--allow-any-host",
         "--duration", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = target.stdout.readline()  # bounded: --duration 30, ctest TIMEOUT
        m = re.search(r" on 127\.0\.0\.1:(\d+),", line)
        if not m:
            fail("no start-up line with the port: %r" % line)
        port = m.group(1)
        if port == "0":
            fail("the start-up line says port 0")
        r = subprocess.run([nvme, "-a", "127.0.0.1", "-s", port, "--json", "discover"],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            fail("discover exited %d: %s" % (r.returncode, r.stderr.strip()))
        doc = json.loads(r.stdout)
        ports = [e.get("trsvcid") for e in doc.get("records", []) if e.get("subnqn") == NQN]
        if ports != [port]:
            fail("discovery log advertises trsvcid %s for %s, listening on %s" % (ports, NQN, port))
        print("discovery log advertises trsvcid %s" % port)
        # 4. An unknown NQN: the target names the SUBNQN field (IATTR bit
        # 16, IPO 256) and the host says so (it said "command byte 1").
        expect_exit([nvme, "-a", "127.0.0.1", "-s", port, "-n", NQN + "-unknown", "identify"], 3,
                    "Connect data byte 256 (SUBNQN)", 30)
        # 5. ndk-nvme's arguments: refused with exit 2 before any I/O
        # (issue 28 item 8); the namespace is 1 MiB of 512-byte blocks.
        host = [nvme, "-a", "127.0.0.1", "-s", port, "-n", NQN]
        for args, text in [
                (["write", "-l", "0", "-c", "8", "--bs", "1000"], "--bs 1000: not a multiple"),
                (["load", "--size", "2M"], "past the end of namespace 1"),
                (["load", "--offset", "1M"], "past the end of namespace 1"),
                (["load", "--runtime", "0"], "--runtime"),
                (["load", "--runtime", "-1"], "--runtime"),
                (["load", "--number-ios", "0"], "--number-ios"),
                (["load", "--rwmixread", "150"], "--rwmixread"),
                (["load", "--iodepth", "0"], "--iodepth"),
                (["--timeout", "-5", "identify"], "--timeout"),
                (["--timeout", "0", "identify"], "--timeout")]:
            expect_exit(host + args, 2, text, 30)
    finally:
        target.send_signal(signal.SIGTERM)
        try:
            target.wait(timeout=15)
        except subprocess.TimeoutExpired:
            target.kill()
            target.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
