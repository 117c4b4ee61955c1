"""Tight-Inclusion CCD (IPC Toolkit's `ipctk.TightInclusionCCD`) on the CCD benchmark sample queries.

Runs `point_triangle_ccd` on the `*--vertex-face.csv` files and `edge_edge_ccd` on the `*--edge-edge.csv` files
(data/README.md gives their format), with ipctk's default tolerance, iteration cap and conservative rescaling,
`min_distance` 0 and `tmax` 1, one call per query from Python on float64 numpy arrays, as its users call it.
Prints JSON Lines on stdout: first the settings (ipctk version, tolerance, max_iterations,
conservative_rescaling, and the time of a call that returns before any root finding: the binding's overhead),
then one line per file: queries, median seconds per query over the timed rounds, false negatives and false
positives against the file's ground truth. `cargo bench --bench ccd` runs it (benches/ccd.rs).

    python ccd_bench.py [--quick] DATA_DIR FILE...

`--quick`: the first 50 queries of each file, one round (a smoke test; timings meaningless).
"""

import importlib.metadata
import json
import sys
import time

import ipctk
import numpy as np

# A timed round repeats the file until it lasts this long; rounds stop at ROUNDS or once they add up to BUDGET s.
ROUND_SECONDS, ROUNDS, BUDGET = 0.05, 11, 5.0
QUICK_QUERIES = 50


def load(path, limit):
    """The file's queries: eight float64 points (numpy arrays) and the ground truth."""
    queries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            v = [float(x) for x in line.split(",")]
            if len(v) != 25:
                sys.exit(f"{path}: expected 25 numbers, got {len(v)}: {line.strip()}")
            queries.append(([np.array(v[3 * k : 3 * k + 3]) for k in range(8)], v[24] == 1.0))
    return queries[:limit]


def run(test, points):
    """Seconds for one pass over the queries, and each query's answer."""
    start = time.perf_counter()
    hits = [test(*p)[0] for p in points]
    return time.perf_counter() - start, hits


def measure(test, queries, quick):
    """Median seconds per query over the rounds, false negatives, false positives (from the first pass)."""
    points = [p for p, _ in queries]
    first, hits = run(test, points)
    fneg = sum(truth and not hit for (_, truth), hit in zip(queries, hits))
    fpos = sum(hit and not truth for (_, truth), hit in zip(queries, hits))
    rates, spent = [first / len(points)], first
    repeat = max(1, int(ROUND_SECONDS / max(first, 1e-9)))
    while not quick and len(rates) < ROUNDS and spent < BUDGET:
        elapsed = sum(run(test, points)[0] for _ in range(repeat))
        rates.append(elapsed / (repeat * len(points)))
        spent += elapsed
    return float(np.median(rates)), fneg, fpos


def call_overhead(ccd):
    """Median seconds of a no-motion vertex-face call, which returns after one distance: the binding's cost."""
    p = [np.array(x, dtype=float) for x in ([0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0])]
    args = p + p
    samples = []
    for _ in range(11):
        start = time.perf_counter()
        for _ in range(2000):
            ccd.point_triangle_ccd(*args)
        samples.append((time.perf_counter() - start) / 2000)
    return float(np.median(samples))


def main(argv):
    quick = "--quick" in argv
    args = [a for a in argv if a != "--quick"]
    if len(args) < 2:
        sys.exit(__doc__)
    data, files = args[0], args[1:]
    # Queries that start in contact log a warning each; the counts say what matters.
    ipctk.set_logger_level(ipctk.LoggerLevel.error)
    ccd = ipctk.TightInclusionCCD()
    settings = {
        "ipctk": importlib.metadata.version("ipctk"),
        "tolerance": ccd.tolerance,
        "max_iterations": ccd.max_iterations,
        "conservative_rescaling": ccd.conservative_rescaling,
        "call_overhead_seconds": call_overhead(ccd),
    }
    print(json.dumps(settings), flush=True)
    for name in files:
        tests = {"vertex-face.csv": ccd.point_triangle_ccd, "edge-edge.csv": ccd.edge_edge_ccd}
        test = tests.get(name.rsplit("--", 1)[-1])
        if test is None:
            sys.exit(f"{name}: not a *--vertex-face.csv or *--edge-edge.csv file")
        queries = load(f"{data}/{name}", QUICK_QUERIES if quick else None)
        seconds, fneg, fpos = measure(test, queries, quick)
        row = {"file": name, "queries": len(queries), "seconds_per_query": seconds,
               "false_negatives": fneg, "false_positives": fpos}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
