#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ndkperf -a keeps what finished when the server dies (issue 28 item 7).

For each output form (table, --csv, --json) a server and a client run
write_bw over all sizes (-a). Once the client has reported three sizes
(table and CSV rows on stdout as they finish; with --json a "done" line per
size on stderr), the server is killed (SIGKILL, by PID). The client must
exit 1 within a bound, and its output must hold the finished sizes plus the
failure: a "failed:" row, a CSV row with the error column, or a JSON
document that parses, with an "error" field and the finished results.

usage: ndkperf_server_dies.py NDKPERF
Exit 0 on success; 1 with the reason on stderr.
"""
import json
import re
import socket
import subprocess
import sys
import threading
import time

from tooltest import fail, free_port, wait_connectable

ROWS_BEFORE_KILL = 3
BOUND_S = 60


class Lines:
    """Collects a stream's lines on a thread; wait() for a count of matches."""

    def __init__(self, stream, pattern):
        self.lines, self.pattern, self.cv = [], re.compile(pattern), threading.Condition()
        self.th = threading.Thread(target=self.run, args=(stream,), daemon=True)
        self.th.start()

    def run(self, stream):
        for line in stream:
            with self.cv:
                self.lines.append(line)
                self.cv.notify_all()
        with self.cv:
            self.lines.append(None)  # end of stream
            self.cv.notify_all()

    def matches(self):
        return [l for l in self.lines if l is not None and self.pattern.search(l)]

    def wait(self, n, bound_s):
        deadline = time.monotonic() + bound_s
        with self.cv:
            while len(self.matches()) < n and None not in self.lines:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cv.wait(left)
            return len(self.matches()) >= n

    def text(self):
        self.th.join(timeout=BOUND_S)
        return "".join(l for l in self.lines if l is not None)


def run(ndkperf, form):
    port = str(free_port())
    common = ["write_bw", "-a", "-n", "1000", "--timeout", "5", "-p", port]
    server = subprocess.Popen([ndkperf] + common + ["--server", "-d", "127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_connectable(int(port), server, 20.0)
        extra = {"table": [], "csv": ["--csv"], "json": ["--json"]}[form]
        client = subprocess.Popen([ndkperf] + common + ["127.0.0.1"] + extra,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        row = {"table": r"^\s+\d+\s+\d+\s", "csv": r"^write_bw,\d+,",
               "json": r"^ndkperf: write_bw \d+ B done"}[form]
        watched = client.stderr if form == "json" else client.stdout
        other = client.stdout if form == "json" else client.stderr
        lines = Lines(watched, row)
        other_lines = Lines(other, r"$^")
        if not lines.wait(ROWS_BEFORE_KILL, BOUND_S):
            client.kill()
            fail("%s: the client showed no %d sizes as they finished:\n%s" %
                 (form, ROWS_BEFORE_KILL, lines.text()))
        server.kill()  # by PID: the server dies mid-run
        server.wait()
        try:
            client.wait(timeout=BOUND_S)
        except subprocess.TimeoutExpired:
            client.kill()
            fail("%s: the client did not end within %d s of the server's death" % (form, BOUND_S))
        watched_text, other_text = lines.text(), other_lines.text()
        out = other_text if form == "json" else watched_text
        err = watched_text if form == "json" else other_text
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    if client.returncode != 1:
        fail("%s: exit %d, want 1 (a failed run); stderr: %s" % (form, client.returncode, err))
    if form == "table":
        rows = re.findall(row, out, re.M)
        if len(rows) < ROWS_BEFORE_KILL or " failed: " not in out:
            fail("table: want >= %d rows and a failed row:\n%s" % (ROWS_BEFORE_KILL, out))
    elif form == "csv":
        body = out.strip().split("\n")
        if not body[0].startswith("test,size,") or len(body) < ROWS_BEFORE_KILL + 2:
            fail("csv: want a header, the finished rows and an error row:\n" + out)
        if not body[-1].endswith('"') or body[-1].endswith(',""'):
            fail("csv: the last row carries no error:\n" + out)
        if any(not r.endswith(',""') for r in body[1:-1]):
            fail("csv: a finished row carries an error:\n" + out)
    else:
        try:
            doc = json.loads(out)
        except ValueError as e:
            fail("json: stdout is not one JSON document (%s):\n%s" % (e, out))
        res = doc.get("results", [])
        done = [r for r in res if not r.get("error")]
        if not doc.get("error") or len(done) < ROWS_BEFORE_KILL or not res[-1].get("error"):
            fail("json: want an error field, >= %d finished results and the failed size:\n%s" %
                 (ROWS_BEFORE_KILL, out))
    print("%s: finished sizes kept, error reported, exit 1" % form)


def main():
    if len(sys.argv) != 2:
        fail(__doc__)
    for form in ("table", "csv", "json"):
        run(sys.argv[1], form)
    return 0


if __name__ == "__main__":
    sys.exit(main())
