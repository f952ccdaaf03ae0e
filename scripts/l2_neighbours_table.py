#!/usr/bin/env python3
"""Tables of the neighbours probe (scripts/l2_carry_probe.py --set neighbours; docs/step.md §4): how much longer each
follower runs after each producer than after none, the mean of the runs given, in µs.

  scripts/l2_neighbours_table.py data/measurements/h100/l2_neighbours/run1/l2_carry.csv [run2/l2_carry.csv ...]

A producer that starts with the GEMM is compared with the follower after the GEMM alone where the probe has that
row (the step's layer starts after the GEMM of the layer before); every other one with the follower after none.
"""
import csv
import statistics
import sys


def load(paths):
    """(producer, follower) -> the follower's median time (us), the mean over the probe CSVs given."""
    times = {}
    for p in paths:
        with open(p) as fh:
            for r in csv.DictReader(fh):
                times.setdefault((r["producer"], r["follower"]), []).append(float(r["follower_us"]))
    return {k: statistics.mean(v) for k, v in times.items()}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().split("\n\n")[1].strip())
    t = load(sys.argv[1:])
    followers = list(dict.fromkeys(f for _, f in t))
    for f in followers:
        none = t[("none", f)]
        print(f"{f}: {none:.2f} us after none")
        for (p, ff), us in t.items():
            if ff != f or p == "none":
                continue
            base = t.get(("gemm", f), none) if p.startswith("gemm+") else none
            against = "gemm" if p.startswith("gemm+") and ("gemm", f) in t else "none"
            print(f"  {p:34s} {us:8.2f} us  {us - base:+6.2f} (against {against})")


if __name__ == "__main__":
    main()
