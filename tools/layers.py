#!/usr/bin/env python3
"""Layer check for src/: no include cycles between units, no include from a layer above.

A unit is a .c file with its .h (same stem, same folder). Ranks: core 0 < event 1 < conf 2 < http 3 <
upstream 4 < handlers/filters/proto 5 < process 6; the rank-5 folders may not include one another.
Exit status 1 and one line per violation when the tree breaks a rule.
"""
import os, re, sys

RANK = {"core": 0, "event": 1, "conf": 2, "http": 3, "upstream": 4,
        "handlers": 5, "filters": 5, "proto": 5, "process": 6}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def units(src):
    edges = {}
    for folder in RANK:
        d = os.path.join(src, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            unit = folder + "/" + name.rsplit(".", 1)[0]
            with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                text = f.read()
            for inc in INC.findall(text):
                path = os.path.normpath(os.path.join(folder, inc)) if not inc.startswith(tuple(RANK)) else inc
                if "/" not in path:
                    path = folder + "/" + path
                target = path.rsplit(".", 1)[0]
                if target != unit and target.split("/")[0] in RANK:
                    edges.setdefault(unit, set()).add(target)
            edges.setdefault(unit, set())
    return edges


def sccs(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    edges = units(src)
    bad = []
    for comp in sccs(edges):
        bad.append("cycle: " + " -> ".join(comp))
    for u, targets in sorted(edges.items()):
        ru = RANK[u.split("/")[0]]
        for t in sorted(targets):
            ft = t.split("/")[0]
            rt = RANK[ft]
            if rt > ru or (rt == ru == 5 and ft != u.split("/")[0]):
                bad.append("upward include: %s includes %s" % (u, t))
    for line in bad:
        print(line)
    if not bad:
        print("layers: %d units, no cycle, no upward include" % len(edges))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
