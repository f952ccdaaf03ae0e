#!/usr/bin/env python3
"""Reads what the campaigns' event timing adds to the kernels' device time off runs of
scripts/events_vs_trace_probe.py and writes it into a GPU profile's params, with its provenance:

  events_overhead_us         the event interval of a one-kernel plan (stage 1 alone) over its kernel in the trace
  events_kernel_overhead_us  the further excess of a plan with a second kernel (the reduce): its launch gap, less
                             the empty event pair a one-kernel plan's interval already holds

Each is a median over the plans of its kind and every run given (so one odd plan moves neither).

  scripts/events_overhead_fit.py data/gpus/h100.json 2026-11-27 COMMIT data/measurements/h100/events_vs_trace/run*/events_vs_trace.csv
"""
import csv
import statistics
import sys

from profile_params import write_measured_params


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    profile, date, commit, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    excess = {1: [], 2: []}
    for path in runs:
        with open(path) as f:
            for row in csv.DictReader(f):
                excess.setdefault(int(row["kernels"]), []).append(float(row["events_minus_device_us"]))
    if not excess[1] or not excess[2]:
        sys.exit("events_overhead_fit: the runs need plans of one kernel and of two kernels")
    one, two = statistics.median(excess[1]), statistics.median(excess[2])
    spread = {k: (min(v), max(v)) for k, v in excess.items() if v}
    print(f"one kernel: {len(excess[1])} plans, median {one:.3f} us (range {spread[1][0]:.2f} to {spread[1][1]:.2f})")
    print(f"two kernels: {len(excess[2])} plans, median {two:.3f} us (range {spread[2][0]:.2f} to {spread[2][1]:.2f})"
          f": {two - one:.3f} us for the second kernel")
    source = (f"scripts/events_overhead_fit.py {' '.join(runs)}, {date} (commit {commit}): the medians of the event "
              f"interval over the trace's kernels, {len(excess[1])} one-kernel and {len(excess[2])} two-kernel "
              f"plans; docs/step.md section 3")
    write_measured_params(profile, [("events_overhead_us", one, source),
                                    ("events_kernel_overhead_us", two - one, source)], 4)


if __name__ == "__main__":
    main()
