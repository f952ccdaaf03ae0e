#!/usr/bin/env python3
"""Whether the prior-writes law's form (docs/step.md §3, scripts/l2_grid_law.py) can give what the fused q prep gives
the attention after it, if fitted to that too (docs/step.md §7). The neighbours probe (scripts/l2_carry_probe.py
--set neighbours) ran the step stack's own layer before each plan's attention: the GEMM of the layer before, the q
prep as five kernels (qsep) or fused (qfused), RoPE, and the copy or not. This script

  1. prints each plan's gain from the fused q prep in the probe (the attention after the layer with the separate q
     prep and the copy, less after the layer with the fused one; the mean of the probe runs given);
  2. fits the law as the profiles' was fitted (scripts/l2_grid_law.py: the unsplit 16 x 4096 attention after fills,
     reads and copies) with the probe's own layer rows of that attention added, each `--weight` times over, and
     prints what it gives the stack's layer;
  3. with `--soft WIDTHS`, fits instead a law whose window is soft: a write with T MB touched after it counts
     1 / (1 + exp((T - cap) / width)) of its cost, in place of all of it up to `cap` and nothing past it.

  scripts/l2_law_form_check.py h100 --weight 0 10 30 --soft 4      (from the repository's root; about a minute)
  scripts/l2_law_form_check.py h200 --weight 0 10

The files are the profiles' fit's (data/gpus/<gpu>.json, l2_prior_writes_*: source).
"""
import argparse
import itertools
import math

from l2_grid_law import CHUNKS, LAYERS, STACK, fit, load, ops_of
from l2_neighbours_table import load as probe_times
from step_op_bytes import layer_ops, ops_mb

D = "data/measurements/"
FILES = {
    "h100": ([D + "h100/l2_grid/run1/l2_carry.csv", D + "h100/l2_grid/run2/l2_carry.csv"],
             [D + "h100/l2_grid/lease2/attn_16_4096_aiter-v1/run1/l2_carry.csv",
              D + "h100/l2_grid/lease2/attn_16_4096_aiter-v1/run2/l2_carry.csv",
              D + "h100/l2_order/run1/l2_carry.csv", D + "h100/l2_order/run2/l2_carry.csv",
              D + "h100/l2_neighbours/run1/l2_carry.csv", D + "h100/l2_neighbours/run2/l2_carry.csv"]),
    "h200": ([D + "h200/l2_grid/attn_16_4096_aiter-v1/l2_carry.csv"],
             [D + "h200/l2_neighbours/run1/l2_carry.csv", D + "h200/l2_neighbours/run2/l2_carry.csv"]),
}
ATTENTION = "attn:16:4096:aiter-v1"
SEPARATE, FUSED = "gemm+qsep+rope+copy:16.777216", "gemm+qfused+rope+copy:16.777216"


def layer_ops_of(producer, gemm):
    """A neighbours-probe producer that runs the stack's layer as (MB read, MB written) ops; None for any other."""
    parts = producer.split("+")
    if parts[0] != "gemm" or not ({"qsep", "qfused"} & set(parts)):
        return None
    return gemm + layer_ops(STACK, 16, "qfused" in parts, any(p.startswith("copy") for p in parts))


def soft_cost(ops, h0, rho, gamma, s, cap, width):
    chunks = [(r / CHUNKS, w / CHUNKS) for r, w in ops for _ in range(CHUNKS)]
    total, after, touched = 0.0, 0.0, 0.0
    for r, w in reversed(chunks):
        if w:
            total += w * h0 * math.exp(after / rho) / (1.0 + math.exp((touched - cap) / width))
        after += r + gamma * w
        touched += r + w
    return min(s, total)


def fit_soft(rows, width):
    best = None
    for rho, gamma, s, cap in itertools.product((6, 8, 10, 12, 16, 20), (0, 0.25, 0.5, 1.0), (1.0, 1.2, 1.4, 1.6, 2.0),
                                                (30, 35, 40, 45, 50, 55)):
        unit = [soft_cost(ops, 1.0, rho, gamma, 1e9, cap, width) for ops, _ in rows]
        for h0 in (x / 1000 for x in range(1, 61)):
            err = sum((min(s, h0 * u) - y) ** 2 for u, (_, y) in zip(unit, rows))
            if best is None or err < best[0]:
                best = (err, (h0, rho, gamma, s, cap, width))
    return best[1]


def rms(rows, cost):
    return math.sqrt(sum((cost(ops) - y) ** 2 for ops, y in rows) / len(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gpu", choices=sorted(FILES))
    ap.add_argument("--weight", type=int, nargs="*", default=[0, 10])
    ap.add_argument("--soft", type=float, nargs="*", default=[])
    a = ap.parse_args()
    grid, also = FILES[a.gpu]
    neighbours = [p for p in also if "l2_neighbours" in p]

    t = probe_times(neighbours)
    print("the fused q prep's gain in the probe (the attention after the layer, separate less fused, us):")
    for follower in sorted({f for _, f in t}):
        if (SEPARATE, follower) in t and (FUSED, follower) in t:
            print(f"  {follower:34s} {t[(SEPARATE, follower)] - t[(FUSED, follower)]:+.2f}")

    from l2_grid_law import cost as hard_cost
    probe_rows = []
    for d in [load(grid, ATTENTION, "none")] + [load([p], ATTENTION, "none") for p in also]:
        probe_rows += [(ops_of(p), y) for p, y in d.items() if ops_of(p) and any(w for _, w in ops_of(p))]
    gemm = ops_mb(STACK, 16, ["re:^nvjet|gemm", "re:splitKreduce"])
    layer_rows = []
    for p in neighbours:
        layer_rows += [(layer_ops_of(k, gemm), y) for k, y in load([p], ATTENTION, "none").items()
                       if layer_ops_of(k, gemm)]

    def report(name, cost):
        layer = {n: cost(gemm + layer_ops(STACK, 16, fused, copy)) for n, (fused, copy) in LAYERS.items()}
        print(f"{name}: rms {rms(probe_rows, cost):.3f} us over the {len(probe_rows)} probe rows, "
              f"{rms(layer_rows, cost):.3f} us over the {len(layer_rows)} layer rows; the stack's layer: "
              f"fuse {layer['fused'] - layer['before']:+.2f}, remove the copy {layer['nocopy'] - layer['before']:+.2f} us")

    for weight in a.weight:
        law = fit(probe_rows + layer_rows * weight)[1]
        report(f"layer rows x{weight}, law (h0, rho, gamma, S, cap) {law}", lambda ops, law=law: hard_cost(ops, *law))
    for width in a.soft:
        law = fit_soft(probe_rows, width)
        report(f"soft window, law (h0, rho, gamma, S, cap, width) {law}", lambda ops, law=law: soft_cost(ops, *law))


if __name__ == "__main__":
    main()
