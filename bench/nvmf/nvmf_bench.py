#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""nvmf_bench.py - softndk's NVMe-oF host (ndk-nvme) against softndk's
target (ndk-nvmet, RAM namespace) on loopback, beside ndkperf on the same
kind of adapter pair (two processes on 127.0.0.1) in the same run (issue 19,
item 4). Rounds alternate the NVMe-oF and the ndkperf measurements so that
the machine's swings hit both; the table shows medians and the ratios:

  (ratios are computed per round, then the median and range are shown)
  bw ratio  = NVMe-oF 128 KiB sequential MB/s / ndkperf write_bw 128 KiB MB/s
              (goal >= 0.9; a read is the target's RDMA Writes into the
              host, a write the target's RDMA Reads from it)
  lat ratio = NVMe-oF 4 KiB QD1 random read clat p50 / the 4 KiB send_lat
              round trip (2 x ndkperf's half round trip; goal <= 2)

Every process is bounded by a timeout and stopped by its PID.
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

NQN = "nqn.2026-11.org.softndk:bench"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def run_json(argv, timeout):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: rc {r.returncode}: {r.stderr.strip()[:400]}")
    return json.loads(r.stdout)


def nvme_load(a, port, rw, bs, qd, secs):
    doc = run_json([a.nvme, "-a", "127.0.0.1", "-s", str(port), "-n", NQN, "--json", "load",
                    "--rw", rw, "--bs", bs, "--iodepth", str(qd), "--runtime", str(secs),
                    "--size", "256M"], secs + 60)
    j = doc["jobs"][-1]
    d = j["read"] if j["read"]["total_ios"] else j["write"]
    return {"iops": d["iops"], "mbps": d["bw_bytes"] / 1e6,
            "p50_us": d["clat_ns"]["percentile"]["50.000000"] / 1e3,
            "p99_us": d["clat_ns"]["percentile"]["99.000000"] / 1e3,
            "avg_us": d["clat_ns"]["mean"] / 1e3}


def ndkperf(a, test, size, secs):
    port = free_port()
    srv = subprocess.Popen([a.ndkperf, test, "--server", "-d", "127.0.0.1", "-p", str(port),
                            "-s", size, "-D", str(secs), "--quiet"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        time.sleep(0.3)
        doc = None
        for _ in range(20):
            try:
                doc = run_json([a.ndkperf, test, "127.0.0.1", "-p", str(port), "-s", size,
                                "-D", str(secs), "--json", "--quiet"], secs + 60)
                break
            except RuntimeError as e:
                if "refused" not in str(e):
                    raise
                time.sleep(0.2)
        if doc is None:
            raise RuntimeError("ndkperf server never listened")
        r = doc["results"][0]
        return {"mbps": r["mbps"], "lat_med_us": (r.get("latency_us") or {}).get("median")}
    finally:
        if srv.poll() is None:
            os.kill(srv.pid, signal.SIGTERM)
        try:
            srv.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(srv.pid, signal.SIGKILL)
            srv.wait()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(root, "build", "plain"))
    ap.add_argument("--nvme")
    ap.add_argument("--nvmet")
    ap.add_argument("--ndkperf")
    ap.add_argument("-D", "--duration", type=float, default=3, help="seconds per point")
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("--no-poll", action="store_true", help="target waits for CQ events")
    ap.add_argument("--json", help="write the raw figures to FILE")
    a = ap.parse_args()
    a.nvme = a.nvme or os.path.join(a.build, "nvmf", "host", "ndk-nvme")
    a.nvmet = a.nvmet or os.path.join(a.build, "nvmf", "target", "ndk-nvmet")
    a.ndkperf = a.ndkperf or os.path.join(a.build, "tools", "ndkperf", "ndkperf")
    for p in (a.nvme, a.nvmet, a.ndkperf):
        if not os.access(p, os.X_OK):
            sys.exit(f"nvmf_bench: {p} not built")

    port = free_port()
    targv = [a.nvmet, "-a", "127.0.0.1", "-p", str(port), "-n", NQN, "--ns", "ram:256M",
             "--allow-any-host", "--queue-depth", "128", "-q"]
    if not a.no_poll:
        targv.append("--poll")
    target = subprocess.Popen(targv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    points = {
        "randread 4k qd1": ("randread", "4k", 1),
        "randread 4k qd32": ("randread", "4k", 32),
        "read 128k qd32": ("read", "128k", 32),
        "write 128k qd32": ("write", "128k", 32),
    }
    got = {k: [] for k in points}
    got["ndkperf write_bw 128k"] = []
    got["ndkperf send_lat 4k"] = []
    try:
        for _ in range(50):  # the target starts listening
            try:
                run_json([a.nvme, "-a", "127.0.0.1", "-s", str(port), "-n", NQN, "--json",
                          "identify"], 30)
                break
            except RuntimeError:
                time.sleep(0.2)
        # Fill the RAM namespace once so reads return written data.
        run_json([a.nvme, "-a", "127.0.0.1", "-s", str(port), "-n", NQN, "--json", "load",
                  "--rw", "write", "--bs", "128k", "--iodepth", "16", "--size", "256M",
                  "--number-ios", "2048"], 120)
        for rnd in range(a.rounds):
            for name, (rw, bs, qd) in points.items():
                got[name].append(nvme_load(a, port, rw, bs, qd, a.duration))
            got["ndkperf write_bw 128k"].append(ndkperf(a, "write_bw", "128K", a.duration))
            got["ndkperf send_lat 4k"].append(ndkperf(a, "send_lat", "4096", a.duration))
            print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    finally:
        if target.poll() is None:
            os.kill(target.pid, signal.SIGTERM)
        try:
            target.wait(15)
        except subprocess.TimeoutExpired:
            os.kill(target.pid, signal.SIGKILL)
            target.wait()

    med = lambda name, key: statistics.median(x[key] for x in got[name])
    wbw = med("ndkperf write_bw 128k", "mbps")
    slat = med("ndkperf send_lat 4k", "lat_med_us")
    rtt = 2 * slat
    print(f"NVMe-oF on softndk, loopback, RAM namespace; medians of {a.rounds} rounds of "
          f"{a.duration:g} s; target {'busy-polls' if not a.no_poll else 'event-driven'}")
    print(f"{'point':<22}{'IOPS':>10}{'MB/s':>10}{'clat p50 us':>13}{'p99 us':>9}   ratio")
    # Ratios per round (both sides measured within seconds of each other),
    # then their median and range: the machine's swings cancel better than
    # in a ratio of medians.
    def per_round(name, key, base, base_key, scale=1.0):
        rs = sorted(x[key] / (scale * y[base_key]) for x, y in zip(got[name], got[base]))
        return statistics.median(rs), rs[0], rs[-1]

    for name in points:
        iops, mbps = med(name, "iops"), med(name, "mbps")
        p50, p99 = med(name, "p50_us"), med(name, "p99_us")
        ratio = ""
        if name.endswith("128k qd32"):
            m, lo, hi = per_round(name, "mbps", "ndkperf write_bw 128k", "mbps")
            ratio = f"{m:.2f}x ndkperf write_bw ({lo:.2f}-{hi:.2f}; goal >= 0.9)"
        elif name == "randread 4k qd1":
            m, lo, hi = per_round(name, "p50_us", "ndkperf send_lat 4k", "lat_med_us", 2.0)
            ratio = f"{m:.2f}x send_lat round trip ({lo:.2f}-{hi:.2f}; goal <= 2)"
        print(f"{name:<22}{iops:>10.0f}{mbps:>10.1f}{p50:>13.1f}{p99:>9.1f}   {ratio}")
    print(f"{'ndkperf write_bw 128k':<22}{'':>10}{wbw:>10.1f}")
    print(f"{'ndkperf send_lat 4k':<22}{'':>10}{'':>10}{slat:>13.1f}   (half round trip; "
          f"round trip {rtt:.1f} us)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(got, f, indent=1)


if __name__ == "__main__":
    main()
