#!/usr/bin/env python3
"""Counts the import circles of agentsh's source tree.

Every `crate::` path in a file under src/ is an import of the longest module path it names.
Prints the number of modules, the largest circle of modules that import each other (a strongly
connected component), and the same for folders (stages). Usage:

    python3 eval/import_circles.py [SRC_DIR] [-v]
"""
import collections
import os
import re
import sys


def modules(root):
    found = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".rs"):
                path = os.path.join(dirpath, f)
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                if parts[-1] == "mod":
                    parts = parts[:-1]
                if parts in (["lib"], ["main"]):
                    continue
                found["::".join(parts)] = open(path, encoding="utf-8").read()
    return found


def imports(mods):
    graph = collections.defaultdict(set)
    for name, src in mods.items():
        for m in re.finditer(r"crate::(\{[^;]*?\}|[A-Za-z0-9_:]+)", src, re.S):
            text = m.group(1)
            paths = re.findall(r"[A-Za-z_][A-Za-z0-9_:]*", text) if text.startswith("{") else [text]
            for p in paths:
                segs = p.split("::")
                for i in range(len(segs), 0, -1):
                    target = "::".join(segs[:i])
                    if target in mods:
                        if target != name:
                            graph[name].add(target)
                        break
    return graph


def largest_circle(nodes, graph):
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    best = max(comps, key=len)
    return sorted(best) if len(best) > 1 else []


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "src")
    mods = modules(root)
    graph = imports(mods)
    circle = largest_circle(mods, graph)
    print(f"modules: {len(mods)}; largest import circle: {len(circle)} modules {circle}")
    folders = collections.defaultdict(set)
    for a, targets in graph.items():
        for b in targets:
            fa, fb = a.split("::")[0], b.split("::")[0]
            if fa != fb:
                folders[fa].add(fb)
    names = {m.split("::")[0] for m in mods}
    fcircle = largest_circle(names, folders)
    print(f"top-level folders and files: {len(names)}; largest import circle between them: {len(fcircle)} {fcircle}")
    if "-v" in sys.argv:
        for a in sorted(graph):
            print(a, "->", ", ".join(sorted(graph[a])))


if __name__ == "__main__":
    main()
