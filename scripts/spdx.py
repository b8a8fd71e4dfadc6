#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks (default) or adds (--fix) the SPDX licence line in every source file.

softndk is Apache-2.0 (LICENSE). Every tracked source file -- C/C++, CMake,
shell and Python scripts, linker and sanitizer files, manual pages -- names
its licence in its first lines, in that file's own comment syntax, so that a
file copied out of the tree still says under which terms. Data files (fuzz
seeds, golden vectors, extracted name lists) and prose (Markdown) carry none.

  scripts/spdx.py            list files without the line; exit 1 if any
  scripts/spdx.py --fix      add the line where it is missing
"""
import os
import subprocess
import sys

TAG = "SPDX-License-Identifier: Apache-2.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def comment_for(path, first_line):
    """The line to add for this file, or None if the file carries none."""
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1]
    if path.startswith(("fuzz/seeds/", "tests/golden/")) or "/golden/" in path:
        return None
    if ext in (".c", ".cc", ".h", ".hpp", ".cpp"):
        return "// " + TAG
    if name == "version.h.in":
        return "// " + TAG
    if name == "CMakeLists.txt" or ext in (".cmake", ".supp", ".pc") or name.endswith(
            (".cmake.in", ".pc.in")):
        return "# " + TAG
    if ext in (".sh", ".py") or first_line.startswith("#!"):
        return "# " + TAG
    if ext == ".map":
        return "/* " + TAG + " */"
    if ext == ".1":
        return '.\\" ' + TAG
    return None


def tracked_files():
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard"],
                         check=True, capture_output=True, text=True).stdout
    return [p for p in out.splitlines() if os.path.isfile(os.path.join(ROOT, p))]


def main(argv):
    fix = "--fix" in argv
    missing = []
    for rel in tracked_files():
        full = os.path.join(ROOT, rel)
        try:
            with open(full, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue  # binary data
        lines = text.split("\n")
        line = comment_for(rel, lines[0] if lines else "")
        if line is None or TAG in "\n".join(lines[:5]):
            continue
        missing.append(rel)
        if fix:
            at = 1 if lines and lines[0].startswith("#!") else 0
            lines.insert(at, line)
            with open(full, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
    if missing and not fix:
        for rel in missing:
            print(f"{rel}: no '{TAG}' line in its first lines", file=sys.stderr)
        print(f"spdx: {len(missing)} file(s) without a licence line; "
              "run scripts/spdx.py --fix", file=sys.stderr)
        return 1
    if fix:
        print(f"spdx: added the licence line to {len(missing)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
