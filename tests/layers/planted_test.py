#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plants include violations into copies of a few real files of the tree and
checks that scripts/check-layers.py fails on each, naming the file, and
passes on the unmodified copy.

  planted_test.py SOURCE_ROOT
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1])
CHECK = os.path.join(ROOT, 'scripts', 'check-layers.py')
CONF = os.path.join(ROOT, 'scripts', 'layers.conf')

# Real files copied into the scratch tree (headers they include that are not
# copied simply do not resolve, and are not edges).
FILES = [
    'include/softndk/ndkpi.h',
    'src/util/bytes.h',
    'src/tcp/socket.h',
    'src/mpa/mpa_negotiator.h',
    'src/provider/provider.h',
    'src/provider/work_request.h',
    'src/transport/tcp/connection.h',
    'src/transport/samehost/shm_ring.h',
    'src/rdmap/stream.h',
    'src/engine/iwarp_provider.h',
    'src/ndk/adapter.h',
    'src/ndk/qp.h',
    'tests/datapath/dp_fixture.h',
]

# (what, file to append a line to, the line, text the complaint must hold)
PLANTS = [
    ('upward edge rdmap -> ndk', 'src/rdmap/stream.h', '#include "ndk/qp.h"',
     'layer rdmap includes "ndk/qp.h" from layer ndk above it'),
    ('upward edge tcp -> mpa', 'src/tcp/socket.h', '#include "mpa/mpa_negotiator.h"',
     'layer tcp includes "mpa/mpa_negotiator.h" from layer mpa above it'),
    ('ndk past the interface into rdmap', 'src/ndk/qp.h', '#include "rdmap/stream.h"',
     'layer ndk may include only'),
    ('provider reaching into a transport', 'src/provider/work_request.h',
     '#include "transport/tcp/connection.h"', 'layer provider may include only abi util'),
    ('one transport including the other', 'src/transport/samehost/shm_ring.h',
     '#include "transport/tcp/connection.h"', 'are apart'),
    ('consumer including a private header', 'tools/x/main.cc', '#include "ndk/adapter.h"',
     'consumer includes private "ndk/adapter.h"'),
    ('consumer including a test fixture', 'nvmf/x/main.cc', '#include "dp_fixture.h"',
     'consumer includes white-box "dp_fixture.h"'),
]


def scratch(tmp):
    for f in FILES:
        dst = os.path.join(tmp, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(os.path.join(ROOT, f), dst)
    os.makedirs(os.path.join(tmp, 'scripts'), exist_ok=True)
    shutil.copy(CONF, os.path.join(tmp, 'scripts', 'layers.conf'))


def run(tmp):
    p = subprocess.run([sys.executable, CHECK, '--root', tmp, '--conf',
                        os.path.join(tmp, 'scripts', 'layers.conf')],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        scratch(tmp)
        rc, out = run(tmp)
        if rc != 0:
            print(f'FAIL: the clean copy does not pass:\n{out}')
            failures += 1
    for what, rel, line, expect in PLANTS:
        with tempfile.TemporaryDirectory() as tmp:
            scratch(tmp)
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'a', encoding='utf-8') as f:
                f.write('\n' + line + '\n')
            rc, out = run(tmp)
            if rc != 1 or expect not in out or rel not in out:
                print(f'FAIL: {what}: exit {rc}, expected 1 and "{expect}" for {rel}:\n{out}')
                failures += 1
            else:
                print(f'ok: {what}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
