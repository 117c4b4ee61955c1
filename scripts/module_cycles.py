#!/usr/bin/env python3
"""Lists import cycles between src/'s files and between its top-level modules, from `crate::` paths.

Every `crate::a::b::...` path in a file (a `use` line or an inline path, tests included) is an edge from that
file's module to the deepest module of the path that has a file; cycles are the strongly connected components
of more than one node. Prints them and exits 1 if there is one.
"""
import os, re, sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

def module_of(path):
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return "::".join(rel)

files = {}
for root, _, names in os.walk(SRC):
    for n in names:
        if n.endswith(".rs"):
            files[module_of(os.path.join(root, n))] = os.path.join(root, n)

def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(l.split("//")[0] for l in text.splitlines())

def targets(text):
    """The module paths named by `crate::` paths, group imports `crate::a::{b, c::d}` expanded."""
    out = set()
    for m in re.finditer(r"crate::([A-Za-z_][\w:]*)(\{[^;]*?\})?", text):
        base = [p for p in m.group(1).split("::") if p]
        if m.group(2):
            for item in re.split(r"[,{}\s]+", m.group(2)):
                if item and item != "self":
                    out.add(tuple(base + [p for p in item.split("::") if p]))
        out.add(tuple(base))
    return out

def resolve(parts):
    for k in range(len(parts), 0, -1):
        name = "::".join(parts[:k])
        if name in files:
            return name
    return None

edges = {m: set() for m in files}
for mod, path in files.items():
    for t in targets(strip_comments(open(path).read())):
        dst = resolve(list(t))
        if dst and dst != mod and not mod.startswith(dst + "::") and not dst.startswith(mod + "::"):
            # A path through a parent module (re-export) counts as an edge to that module.
            edges[mod].add(dst)

def sccs(graph):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(sorted(comp))
    for v in graph:
        if v not in index: visit(v)
    return out

def top(m):
    return m.split("::")[0] if m else "lib"

top_edges = {}
for a, bs in edges.items():
    for b in bs:
        ta, tb = top(a), top(b)
        top_edges.setdefault(ta, set()); top_edges.setdefault(tb, set())
        if ta != tb and ta != "lib":
            top_edges[ta].add(tb)

bad = 0
for label, graph in (("top-level modules", top_edges), ("files", edges)):
    cycles = sccs(graph)
    print(f"{label}: {len(cycles)} cycle(s)")
    for c in cycles:
        bad = 1
        inner = {a: sorted(b for b in graph[a] if b in c) for a in c}
        print("  " + "; ".join(f"{a} -> {', '.join(bs)}" for a, bs in inner.items()))
sys.exit(bad)
