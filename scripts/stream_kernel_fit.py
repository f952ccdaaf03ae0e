#!/usr/bin/env python3
"""Fits the time of a standalone HBM-streaming kernel that reads R and writes W bytes,
t = stream_kernel_us + R / stream_kernel_tbps + W / stream_write_tbps, to a probe run of scripts/l2_carry_probe.py
(l2_carry.csv: its read and fill producers) or of scripts/stream_kernel_probe.py (stream_kernels.csv: the read and
fill kernels named by --read and --fill), and writes the three into a GPU profile's params with their provenance. The step what-if costs a fused kernel given
by its bytes with it (docs/step.md §3).

  stream_kernel_us     the fixed part: the grid's ramp and drain, the first bytes' latency (not the launch gap)
  stream_kernel_tbps   the bandwidth the kernel reads at once going: a line through the read producers (read:MB, a
                       full-GPU kernel that reads MB x 1e6 bytes and writes nothing)
  stream_write_tbps    the bandwidth it writes at: the fill producers (fill:MB, writes only), least squares with
                       the fixed part above (a kernel that reads and writes pays its ramp once)

  scripts/stream_kernel_fit.py data/measurements/h100/l2_carry/l2_carry.csv data/gpus/h100.json 2026-11-26 COMMIT
  scripts/stream_kernel_fit.py OUT/stream_kernels.csv data/gpus/h200.json DATE COMMIT --read wread --fill fill

Reads of --min-mb to --max-mb MB (4 to 48) make the line.
"""
import argparse
import csv
import statistics
import sys

from profile_params import write_measured_params


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probe")
    ap.add_argument("profile")
    ap.add_argument("date")
    ap.add_argument("commit")
    ap.add_argument("--read", default="read", help="the stream probe's read kernel (read, wread, sum)")
    ap.add_argument("--fill", default="fill", help="the stream probe's fill kernel (fill, zero)")
    ap.add_argument("--min-mb", type=float, default=4)
    ap.add_argument("--max-mb", type=float, default=48)
    a = ap.parse_args()
    probe, profile, date, commit = a.probe, a.profile, a.date, a.commit
    times = {"read": {}, "fill": {}}  # kind -> MB -> the producer's kernel times (one median per variant)
    rows = list(csv.DictReader(open(probe)))
    stream_probe = bool(rows) and "variant" in rows[0]
    for r in rows:
        if stream_probe:
            kind, _, mb = r["variant"].partition(":")
            kind = {a.read: "read", a.fill: "fill"}.get(kind)
            us = r["kernel_us"]
        else:
            kind, _, mb = r["producer"].partition(":")
            us = r["producer_us"]
        if kind in times:
            times[kind].setdefault(float(mb), []).append(float(us))
    points = sorted((mb, statistics.median(t)) for mb, t in times["read"].items() if a.min_mb <= mb <= a.max_mb)
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
    reads = f"the {a.read} kernels" if stream_probe else "the read producers"
    source = (f"scripts/stream_kernel_fit.py {probe}, {date} (commit {commit}): {reads} of {sizes} MB "
              f"(full-GPU reads, median kernel time), a line through {n} points, rms {rms:.2f} us, worst "
              f"{worst:.2f} us; docs/step.md section 3")
    fill_sizes = ", ".join(f"{x:g}" for x, _ in fills)
    fill_kind = f"the {a.fill} kernels" if stream_probe else "the fill producers"
    write_source = (f"scripts/stream_kernel_fit.py {probe}, {date} (commit {commit}): {fill_kind} of "
                    f"{fill_sizes} MB (writes only, median kernel time) with stream_kernel_us as fitted, "
                    f"{len(fills)} points, rms {write_rms:.2f} us, worst {write_worst:.2f} us; docs/step.md section 3")
    write_measured_params(profile, [("stream_kernel_us", fixed, source), ("stream_kernel_tbps", tbps, source),
                                    ("stream_write_tbps", 1 / write_slope, write_source)], 4)


if __name__ == "__main__":
    main()
