#!/usr/bin/env python3
"""A law for how what the ops before our unsplit 16 x 4096 attention wrote and read into L2 slows it (docs/step.md
§4), fitted to the grid probe (scripts/l2_carry_probe.py --set grid) and checked on the other probes.

Each op is cut into 40 chunks in time order, each reading and writing its share of the op's bytes. A chunk's
written MB cost h0 * exp(A / rho) us per MB, where A is what was touched after it: the MB read after it, plus gamma
times the MB written after it. A chunk with more than `cap` MB touched after it was evicted, and written back,
before the attention started: it costs nothing. The sum saturates at S us.

  scripts/l2_grid_law.py GRID_CSV [GRID_CSV ...] [--fit-also CSV ...] [--check CSV ...] [--follower ATTN]
                         [--base gemm] [--no-stack]

prints the fit (least squares over h0, rho, gamma, S, cap on a grid of values; to the grid's rows with writes, and
those of each --fit-also file against its own base), each grid row against it, each
row of the --check files (fills, reads and copies; composites of them) against it, and the step stack's layers
(docs/step.md §4) from their ops' bytes: the q prep as five kernels or fused, the 16 MiB copy.
"""
import argparse
import itertools
import math

from l2_neighbours_table import load as probe_times
from step_op_bytes import layer_ops

CHUNKS = 40
# The step stack's layer at 16 requests x 4096 tokens with its 16 MiB copy, its ops' bytes from their shapes
# (scripts/step_op_bytes.py, the file mlasim step --op-bytes reads).
STACK = {"workload": {"heads": 128, "batch": {"context": 4096}, "page_size": 64}, "copy_mb": 16}
LAYERS = {"before": (False, True), "fused": (True, True), "nocopy": (False, False)}


def load(paths, follower, base):
    """Producer -> the attention's extra time after it over after `base` (us), the mean over the files."""
    t = {p: us for (p, f), us in probe_times(paths).items() if f == follower}
    return {k: v - t[base] for k, v in t.items() if k not in ("none", base)}


def ops_of(producer):
    """A probe producer (fill:MB, read:MB, copy:MB joined by +) as (MB read, MB written) ops; None if it runs
    anything else."""
    ops = []
    for part in producer.split("+"):
        kind, _, mb = part.partition(":")
        if kind not in ("fill", "read", "copy"):
            return None
        mb = float(mb)
        ops.append({"fill": (0.0, mb), "read": (mb, 0.0), "copy": (mb, mb)}[kind])
    return ops


def cost(ops, h0, rho, gamma, s, cap):
    chunks = [(r / CHUNKS, w / CHUNKS) for r, w in ops for _ in range(CHUNKS)]
    total, after, touched = 0.0, 0.0, 0.0
    for r, w in reversed(chunks):
        if w and touched + w <= cap:
            total += w * h0 * math.exp(after / rho)
        after += r + gamma * w
        touched += r + w
    return min(s, total)


def fit(rows):
    best = None
    for rho, gamma, s, cap in itertools.product((6, 8, 10, 12, 16, 20, 30), (0, 0.25, 0.5, 0.75, 1.0),
                                                (0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4), (35, 40, 45, 50, 55)):
        unit = [cost(ops, 1.0, rho, gamma, 1e9, cap) for ops, _ in rows]
        for h0 in (x / 1000 for x in range(1, 101)):
            err = sum((min(s, h0 * u) - y) ** 2 for u, (_, y) in zip(unit, rows))
            if best is None or err < best[0]:
                best = (err, (h0, rho, gamma, s, cap))
    return math.sqrt(best[0] / len(rows)), best[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("grid", nargs="+")
    ap.add_argument("--check", nargs="*", default=[])
    ap.add_argument("--fit-also", nargs="*", default=[], help="more probe CSVs (fills, reads, copies) to fit to, "
                    "each against its own base: other leases and designs")
    ap.add_argument("--follower", default="attn:16:4096:aiter-v1")
    ap.add_argument("--base", default="none", help="the producer the extra time is counted from (gemm for a plan "
                    "with partials: after none it follows its own)")
    ap.add_argument("--no-stack", action="store_true", help="leave out the step stack's layers")
    a = ap.parse_args()
    grid = load(a.grid, a.follower, a.base)
    rows = []
    for d in [grid] + [load([path], a.follower, a.base) for path in a.fit_also]:
        rows += [(ops_of(p), y) for p, y in d.items() if ops_of(p) and any(w for _, w in ops_of(p))]
    rms, law = fit(rows)
    print("fit on {} rows: h0 {} us/MB, rho {} MB, gamma {}, S {} us, cap {} MB; rms {:.3f} us".format(len(rows), *law,
                                                                                                      rms))
    for path in [a.grid] + [[c] for c in a.check]:
        d = load(path, a.follower, a.base)
        errs = []
        for p, y in d.items():
            ops = ops_of(p)
            if ops is None:
                continue
            errs.append(cost(ops, *law) - y)
            print(f"  {p:28s} measured {y:+.2f}  law {cost(ops, *law):+.2f}")
        print(f"{' '.join(path)}: rms {math.sqrt(sum(e * e for e in errs) / len(errs)):.3f} us over {len(errs)} rows")
    if a.no_stack:
        return
    layer = {name: cost(layer_ops(STACK, 16, fused, copy), *law) for name, (fused, copy) in LAYERS.items()}
    print("the step stack's layer before the attention (after the GEMM of the layer before): " +
          ", ".join(f"{k} {v:+.2f} us" for k, v in layer.items()))
    print(f"  fuse the q prep {layer['fused'] - layer['before']:+.2f} us, "
          f"remove the copy {layer['nocopy'] - layer['before']:+.2f} us per layer")


if __name__ == "__main__":
    main()
