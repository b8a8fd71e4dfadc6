#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks every #include of the tree against scripts/layers.conf.

  scripts/check-layers.py [--root DIR] [--conf FILE] [--graph] [--mermaid]

Fails (exit 1, one line per offence) on:
  - an include from a layer to a layer above it;
  - an include a layer's `only` line does not allow;
  - an include between two folders declared `apart`;
  - a consumer including a header of src/ (consumers use <softndk/...>).
--graph prints the include edges between layers (and from consumers) with
their counts; --mermaid the same as a Mermaid flowchart. Run it on another
checkout with --root to compare (an unknown folder of src/ is shown under
its own name). Python 3 standard library only.
"""
import argparse
import os
import re
import sys
from collections import Counter

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
SOURCE_EXT = ('.h', '.hpp', '.c', '.cc', '.cpp')


def read_conf(path):
    layers, only, apart, consumers, whitebox, search = [], {}, [], [], [], []
    with open(path, encoding='utf-8') as f:
        for n, raw in enumerate(f, 1):
            line = raw.split('#', 1)[0].split()
            if not line:
                continue
            kind, args = line[0], line[1:]
            if kind == 'layer' and len(args) >= 2:
                layers.append((args[0], [a.rstrip('/') for a in args[1:]]))
            elif kind == 'only' and len(args) >= 2:
                only[args[0]] = set(args[1:])
            elif kind == 'apart' and len(args) >= 2:
                apart.append([a.rstrip('/') for a in args])
            elif kind == 'consumer':
                consumers += [a.rstrip('/') for a in args]
            elif kind == 'whitebox':
                whitebox += [a.rstrip('/') for a in args]
            elif kind == 'search':
                search += [a.rstrip('/') for a in args]
            else:
                sys.exit(f'{path}:{n}: cannot read "{raw.strip()}"')
    return layers, only, apart, consumers, whitebox, search


def under(path, d):
    return path == d or path.startswith(d + '/')


class Tree:
    def __init__(self, root, conf):
        self.root = root
        (self.layers, self.only, self.apart, self.consumers, self.whitebox,
         self.search) = read_conf(conf)
        self.rank = {name: i for i, (name, _) in enumerate(self.layers)}

    def layer_of(self, rel):
        """The layer of a repository path, or None."""
        best = None
        for name, dirs in self.layers:
            for d in dirs:
                if under(rel, d) and (best is None or len(d) > len(best[1])):
                    best = (name, d)
        if best:
            return best[0]
        parts = rel.split('/')
        if parts[0] == 'src' and len(parts) > 2:
            return 'src/' + parts[1]  # a folder the conf does not know
        return None

    def group_of(self, rel, dirs):
        """The longest of `dirs` that holds rel, or None."""
        hits = [d for d in dirs if under(rel, d)]
        return max(hits, key=len) if hits else None

    def resolve(self, src_rel, quote, name):
        """Repository path an include names (own folder first for "..."), or None."""
        cands = []
        if quote == '"':
            cands.append(os.path.normpath(os.path.join(os.path.dirname(src_rel), name)))
        cands += ['src/' + name, 'include/' + name] + [d + '/' + name for d in self.search]
        for c in cands:
            if os.path.isfile(os.path.join(self.root, c)):
                return c
        if name.startswith('softndk/'):
            return 'include/' + name  # generated (softndk/version.h)
        return None

    def files(self):
        skip = {'build', '.git', 'third_party'}
        for top in sorted(os.listdir(self.root)):
            if top in skip or top.startswith('.') or top.startswith('build'):
                continue
            base = os.path.join(self.root, top)
            if not os.path.isdir(base):
                continue
            for d, subdirs, names in os.walk(base):
                subdirs[:] = sorted(s for s in subdirs if not s.startswith('.'))
                for n in sorted(names):
                    if n.endswith(SOURCE_EXT):
                        yield os.path.relpath(os.path.join(d, n), self.root)

    def edges(self):
        """(from_file, to_file, from_group, to_group) of every resolved include."""
        for rel in self.files():
            try:
                with open(os.path.join(self.root, rel), encoding='utf-8', errors='replace') as f:
                    text = f.read()
            except OSError:
                continue
            for quote, name in INCLUDE.findall(text):
                target = self.resolve(rel, quote, name)
                if target is None:
                    continue
                yield rel, target, name

    def check(self):
        errors, graph = [], Counter()
        for rel, target, name in self.edges():
            wb = self.group_of(rel, self.whitebox)
            cons = self.group_of(rel, self.consumers)
            # A whitebox folder inside a consumer folder (bench/wire) wins.
            if wb and (not cons or len(wb) >= len(cons)):
                continue
            to = self.layer_of(target)
            if cons:
                if target.startswith('src/'):
                    errors.append(f'{rel}: consumer includes private "{name}" ({to})')
                elif self.group_of(target, self.whitebox):
                    errors.append(f'{rel}: consumer includes white-box "{name}" ({target})')
                to_cons = self.group_of(target, self.consumers)
                to = to or (to_cons.split('/')[0] if to_cons else None)
                if to and to != cons.split('/')[0]:
                    graph[(cons.split('/')[0], to)] += 1
                continue
            frm = self.layer_of(rel)
            if frm is None or to is None:
                continue
            if frm != to:
                graph[(frm, to)] += 1
            if frm not in self.rank or to not in self.rank:
                errors.append(f'{rel}: include "{name}" outside the declared layers ({frm} -> {to})')
                continue
            if self.rank[to] > self.rank[frm]:
                errors.append(f'{rel}: layer {frm} includes "{name}" from layer {to} above it')
                continue
            allowed = self.only.get(frm)
            if allowed is not None and to != frm:
                inc = target[4:] if target.startswith('src/') else target
                if to not in allowed and inc not in allowed:
                    errors.append(f'{rel}: layer {frm} may include only '
                                  f'{" ".join(sorted(allowed))}; "{name}" is {to}')
            for group in self.apart:
                a, b = self.group_of(rel, group), self.group_of(target, group)
                if a and b and a != b:
                    errors.append(f'{rel}: "{name}": {a} and {b} are apart')
        return errors, graph


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=os.path.dirname(here))
    ap.add_argument('--conf', default=os.path.join(here, 'layers.conf'))
    ap.add_argument('--graph', action='store_true', help='print the edges between layers')
    ap.add_argument('--mermaid', action='store_true', help='the edges as a Mermaid flowchart')
    a = ap.parse_args()
    tree = Tree(os.path.abspath(a.root), a.conf)
    errors, graph = tree.check()
    order = {name: i for i, name in enumerate(tree.rank)}

    def key(e):
        return (order.get(e[0], -1 if '/' in e[0] else 99), e[0], order.get(e[1], 99), e[1])

    if a.graph:
        for (frm, to) in sorted(graph, key=key):
            arrow = '->' if frm not in order or to not in order or order[to] <= order[frm] else '=>'
            print(f'{frm:>14} {arrow} {to:<14} {graph[(frm, to)]:4d}')
        print('(-> downward or from a consumer, => upward: against the layers)')
    if a.mermaid:
        print('flowchart TD')
        for (frm, to) in sorted(graph, key=key):
            f, t = (x.replace('/', '_') for x in (frm, to))
            print(f'  {f}["{frm}"] -->|{graph[(frm, to)]}| {t}["{to}"]')
    for e in errors:
        print('layers: ' + e, file=sys.stderr)
    if errors:
        print(f'layers: {len(errors)} include(s) against {os.path.relpath(a.conf)}',
              file=sys.stderr)
        return 1
    if not a.graph and not a.mermaid:
        print(f'layers: ok ({sum(graph.values())} includes between layers)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
