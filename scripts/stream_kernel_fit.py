#!/usr/bin/env python3
"""Fits the time of a standalone HBM-streaming kernel that reads R and writes W bytes,
t = stream_kernel_us + R / stream_kernel_tbps + W / stream_write_tbps, to a probe run of scripts/l2_carry_probe.py,
and writes the three into a GPU profile's params with their provenance. The step what-if costs a fused kernel given
by its bytes with it (docs/step.md §3).

  stream_kernel_us     the fixed part: the grid's ramp and drain, the first bytes' latency (not the launch gap)
  stream_kernel_tbps   the bandwidth the kernel reads at once going: a line through the read producers (read:MB, a
                       full-GPU kernel that reads MB x 1e6 bytes and writes nothing)
  stream_write_tbps    the bandwidth it writes at: the fill producers (fill:MB, writes only), least squares with
                       the fixed part above (a kernel that reads and writes pays its ramp once)

  scripts/stream_kernel_fit.py data/measurements/h100/l2_carry/l2_carry.csv data/gpus/h100.json 2026-11-26 COMMIT
"""
import csv
import statistics
import sys

from profile_params import write_measured_params


def main():
    probe, profile, date, commit = sys.argv[1:5]
    times = {"read": {}, "fill": {}}  # kind -> MB -> the producer's kernel times (one median per variant)
    for r in csv.DictReader(open(probe)):
        kind, _, mb = r["producer"].partition(":")
        if kind in times:
            times[kind].setdefault(float(mb), []).append(float(r["producer_us"]))
    points = sorted((mb, statistics.median(t)) for mb, t in times["read"].items())
    fills = sorted((mb, statistics.median(t)) for mb, t in times["fill"].items())
    if len(points) < 2:
        sys.exit(f"{probe}: needs read producers of two sizes or more")
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)  # us per MB
    fixed = my - slope * mx
    fitted = [(x, y, fixed + slope * x) for x, y in points]
    rms = (sum((y - f) ** 2 for _, y, f in fitted) / n) ** 0.5
    worst = max(abs(y - f) for _, y, f in fitted)
    tbps = 1 / slope  # MB per us = TB/s
    print(f"{n} sizes: stream_kernel_us {fixed:.3f}, stream_kernel_tbps {tbps:.3f}; rms {rms:.2f} us, "
          f"worst {worst:.2f} us")
    for x, y, f in fitted:
        print(f"  read {x:5.0f} MB  measured {y:6.2f} us  fitted {f:6.2f} us")
    if len(fills) < 1:
        sys.exit(f"{probe}: needs fill producers")
    write_slope = sum(x * (y - fixed) for x, y in fills) / sum(x * x for x, _ in fills)
    write_fitted = [(x, y, fixed + write_slope * x) for x, y in fills]
    write_rms = (sum((y - f) ** 2 for _, y, f in write_fitted) / len(fills)) ** 0.5
    write_worst = max(abs(y - f) for _, y, f in write_fitted)
    print(f"{len(fills)} fill sizes: stream_write_tbps {1 / write_slope:.3f}; rms {write_rms:.2f} us, "
          f"worst {write_worst:.2f} us")
    for x, y, f in write_fitted:
        print(f"  fill {x:5.0f} MB  measured {y:6.2f} us  fitted {f:6.2f} us")
    sizes = ", ".join(f"{x:g}" for x, _ in points)
    source = (f"scripts/stream_kernel_fit.py {probe}, {date} (commit {commit}): the read producers of {sizes} MB "
              f"(full-GPU reads, median kernel time), a line through {n} points, rms {rms:.2f} us, worst "
              f"{worst:.2f} us; docs/step.md section 3")
    fill_sizes = ", ".join(f"{x:g}" for x, _ in fills)
    write_source = (f"scripts/stream_kernel_fit.py {probe}, {date} (commit {commit}): the fill producers of "
                    f"{fill_sizes} MB (writes only, median kernel time) with stream_kernel_us as fitted, "
                    f"{len(fills)} points, rms {write_rms:.2f} us, worst {write_worst:.2f} us; docs/step.md section 3")
    write_measured_params(profile, [("stream_kernel_us", fixed, source), ("stream_kernel_tbps", tbps, source),
                                    ("stream_write_tbps", 1 / write_slope, write_source)], 4)


if __name__ == "__main__":
    main()
