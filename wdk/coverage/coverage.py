#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""softndk-wdk header and DDI coverage, measured against Microsoft's reference.

  coverage.py [--check] [--kit-include DIR ...] [--write-doc FILE]
              [--emit-test FILE --lang c|c++] [--report]

Inputs (all committed, no network):
  wdk/coverage/ddi/<header>.tsv      documented DDIs per header, extracted
                                     by extract_ddi.py from the DDI reference
  wdk/coverage/curated/<name>.tsv    hand-curated lists with their source
                                     (ntdef.h, netioapi.h, ip2string.h,
                                     wskndk.h, SAL, MSVC keywords)
  wdk/coverage/exclusions.tsv        what is deliberately absent, and why

For each header the kit's stand-in is compiled alone (clang -ast-dump for
declarations, `cc -E -dM` for macros): a documented name is *provided* when
the header declares it (function, type, tag, variable, enumerator, macro)
and it is not one of the kit's "unavailable" declarations; otherwise it is
*excluded* when exclusions.tsv has a matching pattern with a reason, and
*missing* otherwise.

--check fails (exit 1) when a DDI is missing, when docs/wdk-coverage.md or
the generated headers (sal.h, softndk_wdk/unavailable.h) are stale.
--emit-test writes a translation unit that references every provided
identifier (a macro use, a type, a function's address) for the compile tests.
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# Header -> (the kit's stand-in to include, data file, how the doc titles it)
HEADERS = [
    ("ntdef.h", "curated/ntdef.tsv"),
    ("wdm.h", "ddi/wdm.tsv"),
    ("ntddk.h", "ddi/ntddk.tsv"),
    ("ntifs.h", "ddi/ntifs.tsv"),
    ("wdmsec.h", "ddi/wdmsec.tsv"),
    ("ntstrsafe.h", "ddi/ntstrsafe.tsv"),
    ("ntintsafe.h", "ddi/ntintsafe.tsv"),
    ("ndis.h", "ddi/ndis.tsv"),
    ("ndis.h (NDK)", "curated/ndis-ndk.tsv"),
    ("wsk.h", "ddi/wsk.tsv"),
    ("wskndk.h", "curated/wskndk.tsv"),
    ("netioapi.h", "curated/netioapi.tsv"),
    ("ip2string.h", "curated/ip2string.tsv"),
    ("ndkpi.h", "ddi/ndkpi.tsv"),
    ("sal.h", "curated/sal.tsv"),
    ("msvc", "curated/msvc.tsv"),
]
# What a driver includes to get the header's names (msvc: the keywords
# every WDK header accepts, so ntdef.h).
INCLUDE = {"msvc": "ntdef.h", "ndis.h (NDK)": "ndis.h"}
KIT_EXTRA_INCLUDES = [os.path.join(ROOT, "include")]


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            rows.append(line.split("\t"))
    return rows


def load_ddis(rel):
    """[(name, kind, [other names], flags)] of one data file."""
    out = []
    for r in read_tsv(os.path.join(HERE, rel)):
        name, kind = r[0], r[1]
        if rel.endswith("sal.tsv"):
            # name, arity, family[, c = C only]
            out.append((name, "annotation" if r[1] == "0" else "annotation()", [],
                        r[3] if len(r) > 3 else "", ""))
            continue
        if rel.endswith("msvc.tsv"):
            # name, kind, a use of it, flags
            out.append((name, kind, [], r[3] if len(r) > 3 else "", r[2]))
            continue
        others = [n for n in (r[2].split(",") if len(r) > 2 and r[2] else []) if n]
        flags = r[3] if len(r) > 3 else ""
        out.append((name, kind, others, flags, ""))
    return out


def load_exclusions():
    """{header: [(pattern, reason)]}; header '*' applies everywhere."""
    ex = {}
    for r in read_tsv(os.path.join(HERE, "exclusions.tsv")):
        if len(r) < 3 or not r[2].strip():
            sys.exit("exclusions.tsv: every line needs header, pattern and a reason: %r" % (r,))
        ex.setdefault(r[0], []).append((r[1], r[2]))
    return ex


DECL_RE = re.compile(
    r"^[|`\- ]*(FunctionDecl|TypedefDecl|VarDecl|EnumConstantDecl|EnumDecl|RecordDecl|CXXRecordDecl)"
    r" 0x[0-9a-f]+ (?:parent 0x[0-9a-f]+ )?(?:prev 0x[0-9a-f]+ )?<.*?> "
    r"(?:(?:line|col):[\d:]+ |<invalid sloc> |<scratch space>:[\d:]+ |[^ <>]+\.h:[\d:]+ )?"
    r"(?:(?:implicit|used|referenced|invalid|imported|struct|union|class|definition) )*(\w+)")
UNAVAILABLE_RE = re.compile(r"UnavailableAttr")


def kit_symbols(include, kit_dir, lang):
    """({name: what}, set of macros) that `#include <include>` provides."""
    if not os.path.exists(os.path.join(kit_dir, include)):
        return {}, {}, set()  # the kit has no such header: nothing is provided
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe." + ("cc" if lang == "c++" else "c"))
        with open(src, "w") as f:
            f.write("#include <%s>\n" % include)
        incs = ["-I" + kit_dir] + ["-I" + d for d in KIT_EXTRA_INCLUDES]
        std = ["-std=c++20"] if lang == "c++" else ["-std=c11"]
        cc = "clang++" if lang == "c++" else "clang"
        ast = subprocess.run([cc, "-fsyntax-only", "-Xclang", "-ast-dump", "-fno-color-diagnostics",
                              "-w"] + std + incs + [src], capture_output=True, text=True)
        if ast.returncode != 0:
            sys.exit("coverage: %s does not compile alone:\n%s" % (include, ast.stderr[-4000:]))
        decls = {}
        unavailable = set()
        last = None
        for line in ast.stdout.splitlines():
            m = DECL_RE.match(line)
            if m:
                kind, name = m.group(1), m.group(2)
                if kind == "RecordDecl" or kind == "CXXRecordDecl":
                    k = "union" if " union " in line else "struct"
                    decls.setdefault(name, k)
                elif kind == "EnumDecl":
                    decls.setdefault(name, "enum")
                else:
                    decls.setdefault(name, {"FunctionDecl": "function", "TypedefDecl": "type",
                                            "VarDecl": "variable",
                                            "EnumConstantDecl": "enumerator"}[kind])
                last = name if kind == "FunctionDecl" else None
            elif last and UNAVAILABLE_RE.search(line):
                unavailable.add(last)
        dm = subprocess.run(["cc" if lang == "c" else "c++", "-E", "-dM"] + std + incs + [src],
                            capture_output=True, text=True)
        macros = {}
        for line in dm.stdout.splitlines():
            m = re.match(r"#define (\w+)(\()?", line)
            if m:
                macros[m.group(1)] = "macro()" if m.group(2) else "macro"
        return decls, macros, unavailable


def classify(kit_dir, lang="c"):
    ex = load_exclusions()
    result = []
    cache = {}
    for header, rel in HEADERS:
        inc = INCLUDE.get(header, header)
        if inc not in cache:
            cache[inc] = kit_symbols(inc, kit_dir, lang)
        decls, macros, unavailable = cache[inc]
        rows = []
        for name, kind, others, flags, snippet in load_ddis(rel):
            if "c" in flags.split(",") and lang != "c":
                continue
            cands = [name] if kind == "function" else [name] + others
            how = None
            if snippet:
                if "native" in flags.split(",") or name in macros:
                    rows.append((name, kind, "provided", (name, "snippet:" + snippet), ""))
                    continue
            for n in cands:
                if kind.startswith("annotation"):
                    # SAL: the arity must match the documented use
                    want = "macro()" if kind == "annotation()" else "macro"
                    if macros.get(n) == want:
                        how = (n, want)
                    break
                if n in macros:
                    how = (n, macros[n])
                    break
                if n in decls and n not in unavailable:
                    how = (n, decls[n])
                    break
            if how:
                rows.append((name, kind, "provided", how, ""))
                continue
            reason = None
            for pat, why in ex.get(header, []) + ex.get("*", []):
                if fnmatch.fnmatchcase(name, pat):
                    reason = why
                    break
            rows.append((name, kind, "excluded" if reason else "missing", None, reason or ""))
        result.append((header, rows))
    return result


def summary(result):
    lines = []
    tot = [0, 0, 0, 0, 0]
    for header, rows in result:
        p = sum(1 for r in rows if r[2] == "provided")
        e = sum(1 for r in rows if r[2] == "excluded" and not r[4].startswith("gap:"))
        g = sum(1 for r in rows if r[2] == "excluded" and r[4].startswith("gap:"))
        m = sum(1 for r in rows if r[2] == "missing")
        n = len(rows)
        tot = [tot[0] + n, tot[1] + p, tot[2] + e, tot[3] + g, tot[4] + m]
        lines.append((header, n, p, e, g, m))
    lines.append(("total", *tot))
    return lines


def pct(a, b):
    return "%.1f%%" % (100.0 * a / b) if b else "-"


def render_doc(result):
    out = []
    w = out.append
    w("# softndk-wdk: header and DDI coverage")
    w("")
    w("Generated by `wdk/coverage/coverage.py --write-doc docs/wdk-coverage.md`; the")
    w("ctest `wdk_coverage_doc` (label `wdk-coverage`) fails when this file is stale or")
    w("when a documented DDI is neither provided nor excluded with a reason. The")
    w("documented names come from Microsoft's DDI reference (MicrosoftDocs/")
    w("windows-driver-docs-ddi, extracted by `wdk/coverage/extract_ddi.py` into")
    w("`wdk/coverage/ddi/`) and from the curated lists in `wdk/coverage/curated/`")
    w("(each names its source). What is absent, and why, is `wdk/coverage/exclusions.tsv`;")
    w("*not yet* counts the exclusions whose reason starts with \"gap:\": things a network or")
    w("storage driver may need that the kit does not emulate yet (they fail to build: C")
    w("reports the implicit declaration as an error, C++ an undeclared name).")
    w("")
    w("*Provided*: the kit's header of that name declares it (a function, type,")
    w("structure tag, enumerator, variable or macro) and the compile tests")
    w("(`wdk_coverage_compile_*`: gcc and clang, C11 and C++20) take its address,")
    w("use the type or the macro, and link against libsoftndk_wdk. *Excluded*: not")
    w("provided on purpose; a driver that calls an excluded function fails to build")
    w("with an error naming it (`softndk_wdk/unavailable.h`), an excluded type or")
    w("macro is an unknown identifier. *Missing*: neither (the check fails).")
    w("")
    w("Before this work (the kit as issue 27 found it, measured with the same lists):")
    w("906 of 4925 documented names provided (18.4%); per header in docs/wdk.md.")
    w("")
    w("| header | documented | provided | excluded | not yet | missing | provided % |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for h, n, p, e, g, m in summary(result):
        w("| %s | %d | %d | %d | %d | %d | %s |" % (h, n, p, e, g, m, pct(p, n)))
    w("")
    for header, rows in result:
        w("## %s" % header)
        w("")
        reasons = {}
        for name, kind, st, how, reason in rows:
            if st == "excluded":
                reasons.setdefault(reason, []).append(name)
        prov = [r for r in rows if r[2] == "provided"]
        w("Provided (%d): %s" % (len(prov), ", ".join("`%s`" % r[0] for r in prov) or "none"))
        w("")
        if reasons:
            w("| excluded | reason |")
            w("|---:|---|")
            for reason, names in sorted(reasons.items(), key=lambda x: -len(x[1])):
                shown = ", ".join("`%s`" % n for n in names[:8])
                more = " and %d more" % (len(names) - 8) if len(names) > 8 else ""
                w("| %d | %s (%s%s) |" % (len(names), reason, shown, more))
            w("")
        miss = [r[0] for r in rows if r[2] == "missing"]
        if miss:
            w("Missing (%d): %s" % (len(miss), ", ".join("`%s`" % n for n in miss)))
            w("")
    return "\n".join(out) + "\n"


def emit_test(result, path, lang):
    """One translation unit referencing every provided identifier."""
    lines = ["/* Generated by wdk/coverage/coverage.py --emit-test: every identifier the",
             " * kit provides for a documented DDI, referenced once. */",
             "#include <ntifs.h>", "#include <ntddk.h>", "#include <wdm.h>", "#include <wdmsec.h>",
             "#include <ntstrsafe.h>", "#include <ntintsafe.h>", "#include <ndis.h>",
             "#include <wsk.h>", "#include <wskndk.h>", "#include <netioapi.h>",
             "#include <ip2string.h>", "#include <ndkpi.h>", "#include <sal.h>", ""]
    body = []
    pre = []
    seen = set()
    for header, rows in result:
        for name, kind, st, how, _ in rows:
            if st != "provided":
                continue
            n, what = how
            if (n, what) in seen:
                continue
            seen.add((n, what))
            if what.startswith("snippet:"):
                pre.append(what[len("snippet:"):].replace("\\n", "\n"))
            elif what.startswith("macro"):
                pre.append("#ifndef %s\n#error \"%s (%s) is not a macro\"\n#endif" % (n, n, header))
                if kind == "annotation":
                    body.append("  { int %s sal_%d = 0; (void)sal_%d; }" % (n, len(body), len(body)))
                elif kind == "annotation()":
                    body.append("  { int %s(x) sal_%d = 0; (void)sal_%d; }" % (n, len(body), len(body)))
            elif what in ("function", "variable"):
                body.append("  (void)&%s;" % n)
            elif what == "enumerator":
                body.append("  (void)%s;" % n)
            elif what == "type":
                body.append("  { %s* p = 0; (void)p; }" % n)
            elif what in ("struct", "union"):
                body.append("  { %s %s* p = 0; (void)p; }" % (what, n))
            elif what == "enum":
                body.append("  { enum %s* p = 0; (void)p; }" % n if lang == "c" else
                            "  { %s* p = 0; (void)p; }" % n)
    lines += pre
    lines += ["", "#ifdef __cplusplus", "extern \"C\"", "#endif",
              "void softndk_wdk_coverage_refs(void);", "void softndk_wdk_coverage_refs(void) {"]
    lines += body
    lines += ["}", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


SAL_H = os.path.join(ROOT, "wdk", "include", "sal.h")
UNAVAILABLE_H = os.path.join(ROOT, "wdk", "include", "softndk_wdk", "unavailable.h")


def render_sal_h():
    """sal.h: every documented SAL annotation (curated/sal.tsv), empty."""
    out = ["// SPDX-License-Identifier: Apache-2.0",
           "/*",
           " * sal.h - the source annotation language (SAL) of the WDK, as empty macros.",
           " * GENERATED by wdk/coverage/coverage.py --write-headers from",
           " * wdk/coverage/curated/sal.tsv (do not edit; add names there).",
           " *",
           " * Only Microsoft's static analysis reads SAL; gcc and clang never do, so",
           " * each documented annotation expands to nothing, with the arity the",
           " * documentation gives it (`_In_`, `_In_reads_(n)`,",
           " * `_Requires_exclusive_lock_held_(Socket->Lock)`). The IRQL rules the",
           " * annotations state are checked at run time instead (docs/wdk.md).",
           " *",
           " * The SAL 1 spellings __in, __out, __success and __null are defined for C",
           " * only: libstdc++ uses the first three for its own parameters and g++'s",
           " * NULL is __null, so in C++ they would break <string> and friends",
           " * (docs/wdk.md, \"SAL\").",
           " */",
           "#ifndef SOFTNDK_WDK_SAL_H_",
           "#define SOFTNDK_WDK_SAL_H_",
           "",
           "/* clang-format off */"]
    excluded = [pat for pat, _ in load_exclusions().get("sal.h", [])]
    for name, kind, _, flags, _ in load_ddis("curated/sal.tsv"):
        if any(fnmatch.fnmatchcase(name, pat) for pat in excluded):
            continue
        d = "#define %s%s" % (name, "(...)" if kind == "annotation()" else "")
        guard = "#if !defined(%s)%s" % (name, " && !defined(__cplusplus)" if flags == "c" else "")
        out += [guard, d, "#endif"]
    out += ["/* clang-format on */", "", "#endif /* SOFTNDK_WDK_SAL_H_ */", ""]
    return "\n".join(out)


def unavailable_functions():
    """[(name, header, reason)] of excluded documented functions: the kit
    declares each as unavailable so that a call names it at compile time."""
    out = []
    seen = set()
    for header, rows in classify_cached():
        for name, kind, st, how, reason in rows:
            # A gap may be filled by another branch: a declaration here would
            # then conflict with the real one (an undeclared name fails to
            # build anyway, -Werror=implicit-function-declaration).
            if reason.startswith("gap:"):
                continue
            if st == "excluded" and kind == "function" and name not in seen:
                seen.add(name)
                out.append((name, header, reason))
    return out


_CACHE = {}


def classify_cached(kit_dir=None, lang="c"):
    key = (kit_dir or os.path.join(ROOT, "wdk", "include"), lang)
    if key not in _CACHE:
        _CACHE[key] = classify(key[0], lang)
    return _CACHE[key]


# Names excluded but never declared as unavailable: they are macros or
# keywords elsewhere (glibc, the compilers), or the kit's headers use them
# as identifiers.
NOT_DECLARED = {"if_indextoname", "if_nametoindex"}


def render_unavailable_h():
    out = ["// SPDX-License-Identifier: Apache-2.0",
           "/*",
           " * softndk_wdk/unavailable.h - the documented WDK functions the kit does",
           " * not provide, declared so that a driver calling one fails to build with",
           " * an error naming it and saying why, instead of an implicit declaration",
           " * or a link error. GENERATED by wdk/coverage/coverage.py --write-headers",
           " * from wdk/coverage/exclusions.tsv (do not edit). Included by ntdef.h.",
           " *",
           " * The declarations have no prototype (C) or take anything (C++): only the",
           " * name matters, any use of it is an error.",
           " */",
           "#ifndef SOFTNDK_WDK_UNAVAILABLE_H_",
           "#define SOFTNDK_WDK_UNAVAILABLE_H_",
           "",
           "/* clang-format off */",
           "#ifdef __cplusplus",
           "#define SOFTNDK_WDK_ANY_ARGS ...",
           "extern \"C\" {",
           "#else",
           "#define SOFTNDK_WDK_ANY_ARGS",
           "#endif",
           "#define SOFTNDK_WDK_UNAVAILABLE(name, why) \\",
           "  int name(SOFTNDK_WDK_ANY_ARGS) __attribute__((unavailable(\"softndk-wdk: \" #name \" is not provided: \" why)))",
           ""]
    reasons = {}
    for name, header, reason in unavailable_functions():
        if name in NOT_DECLARED:
            continue
        key = reasons.setdefault(reason, "SOFTNDK_WDK_WHY_%d" % len(reasons))
    for reason, key in reasons.items():
        out.append("#define %s \"%s\"" % (key, reason.replace("\\", "\\\\").replace('"', '\\"')))
    for name, header, reason in unavailable_functions():
        if name in NOT_DECLARED:
            continue
        out.append("#ifndef %s" % name)
        out.append("SOFTNDK_WDK_UNAVAILABLE(%s, %s); /* %s */" % (name, reasons[reason], header))
        out.append("#endif")
    out += ["/* clang-format on */", "", "#ifdef __cplusplus", "}", "#endif", "",
            "#endif /* SOFTNDK_WDK_UNAVAILABLE_H_ */", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kit-include", default=os.path.join(ROOT, "wdk", "include"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--write-doc")
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "wdk-coverage.md"))
    ap.add_argument("--emit-test")
    ap.add_argument("--lang", default="c", choices=["c", "c++"])
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--write-headers", action="store_true",
                    help="regenerate wdk/include/sal.h and softndk_wdk/unavailable.h")
    args = ap.parse_args()
    if args.write_headers:
        with open(SAL_H, "w") as f:
            f.write(render_sal_h())
        # unavailable.h depends on what the rest provides: generate it from a
        # classification without it
        with open(UNAVAILABLE_H, "w") as f:
            f.write("#ifndef SOFTNDK_WDK_UNAVAILABLE_H_\n#define SOFTNDK_WDK_UNAVAILABLE_H_\n#endif\n")
        text = render_unavailable_h()
        with open(UNAVAILABLE_H, "w") as f:
            f.write(text)
        _CACHE.clear()
    result = classify_cached(args.kit_include, args.lang)
    rc = 0
    if args.report or not (args.check or args.write_doc or args.emit_test):
        for h, n, p, e, g, m in summary(result):
            print("%-12s documented %5d provided %5d (%6s) excluded %5d not-yet %5d missing %5d" %
                  (h, n, p, pct(p, n), e, g, m))
    if args.emit_test:
        emit_test(result, args.emit_test, args.lang)
    doc = render_doc(result)
    if args.write_doc:
        with open(args.write_doc, "w") as f:
            f.write(doc)
    if args.check:
        missing = [(h, r[0]) for h, rows in result for r in rows if r[2] == "missing"]
        for h, n in missing:
            print("coverage: %s: %s is documented but neither provided nor excluded with a reason"
                  " (wdk/coverage/exclusions.tsv)" % (h, n), file=sys.stderr)
        if missing:
            rc = 1
        try:
            with open(args.doc) as f:
                current = f.read()
        except OSError:
            current = ""
        for path, want in ((SAL_H, render_sal_h()), (UNAVAILABLE_H, None)):
            try:
                with open(path) as f:
                    have = f.read()
            except OSError:
                have = ""
            if want is None:
                # what unavailable.h would be, given what the kit provides
                # without it: the names it declares are excluded ones
                want = render_unavailable_h()
            if have != want:
                print("coverage: %s is stale: run wdk/coverage/coverage.py --write-headers" %
                      os.path.relpath(path, ROOT), file=sys.stderr)
                rc = 1
        if current != doc:
            print("coverage: %s is stale: run wdk/coverage/coverage.py --write-doc %s" %
                  (args.doc, os.path.relpath(args.doc, ROOT)), file=sys.stderr)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
