#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/<target>/: python3 fuzz/gen_corpus.py (deterministic; rewrites them).

The seeds are well-formed inputs that reach deep states at once (meshes that the tools touch, trackers in
contact, CCD pairs that collide), which random bytes reach only slowly; libFuzzer mutates and crosses them.
The encoders below mirror the readers of api_sequence.c and ccd_symmetry.c byte for byte: change both together.
"""

import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def coord(v):
    """rd_coord: a multiple of 1/16 in [-8, 8)."""
    return bytes([0, int(round(v * 16)) & 0xFF])


def special(i):
    """rd_coord: entry i of the special table (5 = NaN, 6 = +Inf, 12 = 2e6)."""
    return bytes([208, i])


def tool(entry, tip, radius_32nds=16):
    """rd_tool: entry, tip, radius = radius_32nds / 32, up = 0."""
    return b"".join(map(coord, entry)) + b"".join(map(coord, tip)) + bytes([radius_32nds - 1, 0])


OP = {name: i for i, name in enumerate([
    "create", "create2", "update", "set_triangles", "destroy", "read", "static", "dynamic", "batch", "views",
    "tracker_create", "tracker_update", "tracker_update2", "strip", "reseed", "tracker_destroy",
    "context_cycle", "results_cycle", "ccd_primitive", "query_ccd"])}


def octahedron(ctx, extra=0, reversed_=False, scale_mode=0, off=(0, 0, 0), more_vertices=0, extra_idx=()):
    """op_mesh_create with the octahedron layout (6 vertices, plus isolated or random ones)."""
    nv = 6 + more_vertices
    b = bytes([OP["create"], ctx, nv, scale_mode]) + bytes(o & 0xFF for o in off)
    for _ in range(more_vertices * 3):
        b += coord(random.uniform(-2, 2))
    kind = 1 | (0x10 if reversed_ else 0) | (extra << 5)
    b += bytes([kind])
    for i in range(extra * 3):
        b += bytes([extra_idx[i] if i < len(extra_idx) else random.randrange(nv)])
    return b + bytes([0])


def random_mesh(ctx, nv, nt):
    b = bytes([OP["create"], ctx, nv, 0x80, 0, 0, 0])
    for _ in range(nv * 3):
        b += coord(random.uniform(-1.5, 1.5))
    b += bytes([0, nt]) + bytes(random.randrange(nv) for _ in range(3 * nt))
    return b + bytes([0])


def near_tool():
    tip = [random.uniform(-1.2, 1.2) for _ in range(3)]
    entry = [t * 3 + random.uniform(-0.5, 0.5) for t in tip]
    return tool(entry, tip, random.choice([4, 8, 16, 32]))


def static_query(ctx, mesh, res, volume=0):
    return bytes([OP["static"], ctx, mesh, res]) + near_tool() + coord(0) * 3 + bytes([volume, 0])


def dynamic_query(ctx, mesh, res, volume=0):
    new_tip = b"".join(coord(random.uniform(-1.5, 1.5)) for _ in range(3))
    return bytes([OP["dynamic"], ctx, mesh, res]) + near_tool() + new_tip + bytes([volume, 0])


def refused_query(ctx, mesh, res):
    """A static capsule query with radius 0 (radius byte 169 picks 0 from the table)."""
    return bytes([OP["static"], ctx, mesh, res]) + b"".join(map(coord, (3, 3, 3, 0.5, 0.5, 0.5))) + \
        bytes([169, 0]) + coord(0) * 3 + bytes([0, 0])


def batch(ctx, res, meshes, submit=False):
    b = bytes([OP["batch"], ctx, res, len(meshes) | (0x80 if submit else 0)])
    for m in meshes:
        b += bytes([m]) + near_tool() + bytes([random.choice([0, 200])])
        b += b"".join(coord(random.uniform(-1.5, 1.5)) for _ in range(3)) + bytes([random.randrange(2)])
    return b


def tracker_create(ctx, mesh, slot, segments=4, strip=32):
    return bytes([OP["tracker_create"], ctx, mesh, slot, segments, strip, 0])


def tracker_update(slot):
    return bytes([OP["tracker_update"], slot]) + near_tool() + bytes([0])


def strip(slot, segment):
    return bytes([OP["strip"], slot, segment])


def reseed(slot, res, q=0):
    return bytes([OP["reseed"], slot, res, q])


def update(ctx, mesh, first, values):
    b = bytes([OP["update"], ctx, mesh, 3, first, len(values)])
    for v in values:
        b += b"".join(map(coord, v))
    return b


def remove_triangles(ctx, mesh, count):
    return bytes([OP["set_triangles"], ctx, mesh, count - 1]) + bytes(random.randrange(8) for _ in range(count))


def query_ccd(ctx, a, b, ccd_res, sep_index=0, edge_edge=True, culling=0):
    return bytes([OP["query_ccd"], ctx, a, b, ccd_res, sep_index | (8 if edge_edge else 0), culling])


def ccd_primitive(points, edge_edge, sep_index=0):
    b = bytes([OP["ccd_primitive"], (sep_index << 1) | edge_edge])
    for v in points:
        b += bytes([0, int(v * 8) & 0xFF])
    return b


def api_sequence_seeds():
    seeds = []
    for i in range(24):
        random.seed(1000 + i)
        s = octahedron(0, extra=i % 3, reversed_=i % 4 == 1, more_vertices=i % 5)
        if i % 3 == 0:
            s += random_mesh(0, 8, 10)
        if i % 4 == 2:
            s += octahedron(1)
        for _ in range(6 + i % 5):
            r = random.random()
            if r < 0.2:
                s += static_query(0, 0, random.randrange(3), random.randrange(2))
            elif r < 0.3:
                s += dynamic_query(0, 0, random.randrange(3), random.randrange(2))
            elif r < 0.4:
                s += batch(0, random.randrange(3), [0, 0, 1][: random.randint(1, 3)], submit=random.random() < 0.5)
            elif r < 0.55:
                s += tracker_create(0, 0, random.randrange(3), random.randint(1, 8), random.randint(0, 12))
            elif r < 0.7:
                s += tracker_update(random.randrange(3))
            elif r < 0.75:
                s += strip(random.randrange(3), random.randrange(4))
            elif r < 0.8:
                s += reseed(random.randrange(3), random.randrange(3))
            elif r < 0.87:
                s += update(0, 0, random.randrange(6), [[random.uniform(-1, 1) for _ in range(3)]])
            elif r < 0.92:
                s += remove_triangles(0, 0, random.randint(1, 3))
            elif r < 0.96:
                s += octahedron(0, off=(4, 0, 0)) + update(0, 1, 0, [[0.6, 0.1, 0.05]]) + query_ccd(0, 0, 1, 0)
            else:
                s += refused_query(0, 0, random.randrange(3))
        seeds.append(s)
    # one of each odd call on its own mesh
    random.seed(7)
    seeds.append(octahedron(0) + bytes([OP["read"], 0, 0, 0, 1, 5]))  # read_positions of a range
    seeds.append(octahedron(0) + bytes([OP["context_cycle"], 0]) + static_query(0, 0, 0))
    seeds.append(octahedron(0) + octahedron(1) + static_query(1, 0, 1) + batch(0, 0, [0, 1]))
    seeds.append(octahedron(0) + bytes([OP["destroy"], 0, 0]) + static_query(0, 0, 0) + update(0, 0, 0, [[0, 0, 0]]))
    seeds.append(octahedron(0) + bytes([OP["results_cycle"], 3]) + bytes([OP["views"], 1, 200, 1, 2, 3, 4, 0]))
    seeds.append(ccd_primitive([0, 0, 1, -1, -1, 0, 1, -1, 0, 0, 1, 0, 0, 0, -1, -1, -1, 0, 1, -1, 0, 0, 1, 0], 0))
    seeds.append(ccd_primitive([-1, 0, 0, 1, 0, 0, 0, -1, 1, 0, 1, 1, -1, 0, 0, 1, 0, 0, 0, -1, -1, 0, 1, -1], 1))
    seeds.append(octahedron(0) + octahedron(0, off=(64, 0, 0)) + update(0, 1, 0, [[1, 0, 0]]) +
                 query_ccd(0, 0, 1, 0, culling=1) + query_ccd(0, 0, 1, 0, sep_index=2, culling=2))
    return seeds


def ccd_symmetry_seeds():
    """Primitive pairs: crossings, touchings, near misses, coplanar and parallel motion, 2 transforms each."""
    seeds = []
    for i in range(32):
        random.seed(2000 + i)
        edge_edge = i % 2
        sep_index = [0, 0, 0, 4, 5][i % 5]
        pts = [random.randint(-16, 16) / 8 for _ in range(24)]
        if i % 4 == 1:  # everything in the plane z = 0.5
            for p in range(8):
                pts[3 * p + 2] = 0.5
        if i % 4 == 2:  # a standing face or edge
            pts[15:24] = pts[3:12] if edge_edge == 0 else pts[15:24]
        b = bytes([(sep_index << 1) | edge_edge])
        for v in pts:
            b += bytes([0, int(v * 8) & 0xFF])
        for _ in range(3):
            b += bytes([random.randrange(48), random.randrange(256), random.randrange(256)])
        seeds.append(b)
    return seeds


def write(target, seeds):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    for i, s in enumerate(seeds):
        with open(os.path.join(d, f"seed-{i:02d}"), "wb") as f:
            f.write(s)


if __name__ == "__main__":
    write("api_sequence", api_sequence_seeds())
    write("ccd_symmetry", ccd_symmetry_seeds())
