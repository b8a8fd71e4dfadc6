#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The generated compile test: every identifier the kit provides for a
documented DDI, referenced from one translation unit (coverage.py
--emit-test), compiled with COMPILER as LANG with warnings as errors and the
flags softndk::wdk gives drivers, and linked into a shared object against
libsoftndk_wdk with --no-undefined (a declared function without an
implementation fails here).

  compile_test.py --cc gcc|clang|g++|clang++ --lang c|c++ --lib LIBSOFTNDK_WDK
                  --include DIR [--include DIR ...] --work DIR
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import coverage  # noqa: E402

# softndk::wdk's INTERFACE compile options (wdk/CMakeLists.txt).
KIT_FLAGS = ["-Wno-multichar", "-Wno-unknown-pragmas"]
KIT_C_FLAGS = ["-Werror=implicit-function-declaration"]


# Drivers that must NOT build, and what the error has to say: a DDI the kit
# leaves out is named (with the reason when it is declared unavailable),
# structured exception handling is refused by name, an unknown __declspec
# names itself. (C++ compilers word "not declared" differently: the name is
# what is checked.)
REFUSALS = [
    ("c", "void f(void) { IoConnectInterruptEx(0); }",
     "IoConnectInterruptEx is not provided: interrupts need hardware"),
    ("c++", "void f(void) { IoConnectInterruptEx(0); }",
     "IoConnectInterruptEx is not provided: interrupts need hardware"),
    ("c", "void f(void) { NdisMRegisterMiniportDriver(0, 0, 0, 0, 0); }",
     "NdisMRegisterMiniportDriver is not provided: NDIS miniport"),
    ("c", "int f(void) { __try { return 1; } __except (1) { return 0; } }",
     "__try (structured exception handling) is not supported"),
    ("c++", "int f(void) { __try { return 1; } __except (1) { return 0; } }",
     "(structured exception handling) is not supported"),
    ("c", "void f(void) { ExQueueWorkItem(0, 0); }", "ExQueueWorkItem"),
    ("c++", "void f(void) { ExQueueWorkItem(0, 0); }", "ExQueueWorkItem"),
    ("c", "__declspec(frobnicate) int x;", "frobnicate"),
]


def refusals(args):
    failed = 0
    for i, (lang, body, expect) in enumerate(REFUSALS):
        if lang != args.lang:
            continue
        src = os.path.join(args.work, "refusal_%d.%s" % (i, "c" if lang == "c" else "cc"))
        with open(src, "w") as f:
            f.write("#include <ntddk.h>\n#include <ndis.h>\n%s\n" % body)
        std = ["-std=c11"] if lang == "c" else ["-std=c++20"]
        flags = KIT_FLAGS + (KIT_C_FLAGS if lang == "c" else [])
        cmd = [args.cc] + std + flags + ["-fsyntax-only"] + ["-I" + d for d in args.include] + [src]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode == 0:
            print("REFUSAL %d built but must not: %s" % (i, body))
            failed += 1
        elif expect not in r.stderr:
            print("REFUSAL %d failed without saying '%s':\n%s" % (i, expect, r.stderr[-3000:]))
            failed += 1
        else:
            print("refused as expected: %s -> %s" % (body, expect))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--lang", required=True, choices=["c", "c++"])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--work", required=True)
    ap.add_argument("--refusals", action="store_true",
                    help="check that drivers using what the kit leaves out fail to build")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if args.refusals:
        return refusals(args)
    src = os.path.join(args.work, "coverage_refs." + ("c" if args.lang == "c" else "cc"))
    result = coverage.classify(os.path.join(coverage.ROOT, "wdk", "include"), args.lang)
    coverage.emit_test(result, src, args.lang)
    refs = sum(1 for _, rows in result for r in rows if r[2] == "provided")
    std = ["-std=c11"] if args.lang == "c" else ["-std=c++20"]
    flags = KIT_FLAGS + (KIT_C_FLAGS if args.lang == "c" else [])
    out = os.path.join(args.work, "coverage_refs.so")
    cmd = ([args.cc] + std + ["-Wall", "-Wextra", "-Werror", "-Wno-unused-variable",
                              "-Wno-unused-function", "-Wno-unused-const-variable",
                              "-Wno-unused-but-set-variable", "-fPIC", "-shared"] + flags +
           ["-I" + d for d in args.include] + [src, "-o", out, args.lib, "-Wl,--no-undefined"])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(" ".join(cmd) + "\n" + r.stdout + r.stderr[-20000:])
        return 1
    print("%s %s: %d provided identifiers referenced, compiled and linked" %
          (args.cc, args.lang, refs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
