#!/usr/bin/env python3
"""Fits the L2 carry-over parameters (docs/step.md §6) to a probe run of scripts/l2_carry_probe.py and writes them
into a GPU profile's params, with their provenance:

  l2_carry_us_per_mb     the extra time of an HBM-bound kernel per MB the kernel before it left dirty in L2
  l2_carry_cap_mb        the most MB a kernel leaves dirty
  l2_carry_reread_evict  dirty MB lost per MB that a read of the written data back (a reduce) misses in L2

Only the synthetic producers are fitted: fill:W (W MB written) and fillread:W (W MB written, then read back), each
before the two HBM-bound followers (the step stack's GEMM and a full-GPU read), against the same follower after no
producer. The real attention producers of the probe are left for the check (tests/sim/l2_carry_test.cpp).

  scripts/l2_carry_fit.py data/measurements/h100/l2_carry/l2_carry.csv data/gpus/h100.json 2026-11-26 COMMIT
"""
import csv
import sys

from profile_params import write_measured_params


def model(kind, w, s, cap, k):
    dirty = min(w, cap)
    if kind == "fillread":
        dirty = max(0.0, dirty - k * max(0.0, w - cap))
    return s * dirty


def main():
    probe, profile, date, commit = sys.argv[1:5]
    rows = list(csv.DictReader(open(probe)))
    base = {r["follower"]: float(r["follower_us"]) for r in rows if r["producer"] == "none"}
    points = []  # (kind, MB, measured extra us)
    for r in rows:
        kind, _, mb = r["producer"].partition(":")
        if kind in ("fill", "fillread") and r["follower"] in ("gemm", "full"):
            points.append((kind, float(mb), float(r["follower_us"]) - base[r["follower"]]))
    best = None
    # A grid over the cap and the re-read loss, least squares in closed form for the slope at each.
    for cap10 in range(100, 500):
        cap = cap10 / 10
        for k100 in range(0, 151):
            k = k100 / 100
            xs = [model(kind, w, 1.0, cap, k) for kind, w, _ in points]
            sxx = sum(x * x for x in xs)
            s = sum(x * y for x, (_, _, y) in zip(xs, points)) / sxx
            sse = sum((s * x - y) ** 2 for x, (_, _, y) in zip(xs, points))
            if best is None or sse < best[0]:
                best = (sse, s, cap, k)
    sse, s, cap, k = best
    rms = (sse / len(points)) ** 0.5
    worst = max(abs(model(kind, w, s, cap, k) - y) for kind, w, y in points)
    print(f"{len(points)} points: us_per_mb {s:.4f} ({1 / s:.2f} TB/s of write-back), cap {cap:.1f} MB, "
          f"reread_evict {k:.2f}; rms {rms:.2f} us, worst {worst:.2f} us")
    for kind, w, y in sorted(points):
        print(f"  {kind:9s} {w:5.0f} MB  measured {y:6.2f} us  fitted {model(kind, w, s, cap, k):6.2f} us")
    source = (f"scripts/l2_carry_fit.py {probe}, {date} (commit {commit}): fill and fillread producers before the "
              f"GEMM and full-read followers, {len(points)} points, rms {rms:.2f} us, worst {worst:.2f} us; "
              f"docs/step.md section 6")
    write_measured_params(profile, [("l2_carry_us_per_mb", s, source), ("l2_carry_cap_mb", cap, source),
                                    ("l2_carry_reread_evict", k, source)], 5)


if __name__ == "__main__":
    main()
