#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs/tools.md's exit-code table matches the code (issue 28).

For every tool in the table, the codes listed must be exactly the values of
the exit-code constants in the file the table names: `kExit... = N` and the
enumerators of an `enum ExitCode` (ndkinfo); softndk-demo has no constants
(its main returns 0 or 1), so its `return ... ? 0 : 1` is read instead.
usage: exit_codes_doc.py SOURCE_DIR
"""
import collections
import os
import re
import sys


def fail(msg):
    sys.stderr.write("exit_codes_doc: " + msg + "\n")
    sys.exit(1)


def code_values(path):
    text = open(path).read()
    vals = set(int(v) for v in re.findall(r"\bkExit\w*\s*=\s*(\d+)", text))
    m = re.search(r"enum\s+ExitCode\s*\{([^}]*)\}", text)
    if m:
        vals |= set(int(v) for v in re.findall(r"=\s*(\d+)", m.group(1)))
    if not vals:
        m = re.search(r"return\s+[^;]*\?\s*(\d+)\s*:\s*(\d+)\s*;\s*\n\}\s*$", text)
        if m:
            vals = {int(m.group(1)), int(m.group(2))}
    return vals


def main():
    root = sys.argv[1]
    rows = collections.defaultdict(set)
    where = {}
    for line in open(os.path.join(root, "docs", "tools.md")):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[1].isdigit():
            continue
        tool, code, _meaning, src = cells
        if int(code) in rows[tool]:
            fail("%s: code %s listed twice" % (tool, code))
        rows[tool].add(int(code))
        if where.setdefault(tool, src) != src:
            fail("%s: rows name two files" % tool)
    if len(rows) < 5:
        fail("only %d tools in the table" % len(rows))
    bad = []
    for tool, codes in sorted(rows.items()):
        have = code_values(os.path.join(root, where[tool]))
        if have != codes:
            bad.append("%s: docs/tools.md lists %s, %s defines %s" %
                       (tool, sorted(codes), where[tool], sorted(have)))
    if bad:
        fail("\n".join(bad))
    print("exit codes of %d tools match the code" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
