#!/usr/bin/env python3
"""How the kernels of scripts/step_interleaved.py's stack change between its variants (docs/step.md §4): the median
time of the attention's stage 1, the copy and the GEMM, and of the gap before the GEMM, in each variant's trace,
against the "before" trace, per layer. What a fuse or a copy removal does to the kernels after it, measured. Then,
for every variant, the median launch gaps around the attention: after a stage 1 that no reduce follows, from a
stage 1 to its reduce, after a reduce, and between any two kernels (what a policy edit gives a reduce it adds).

  scripts/step_kernel_changes.py FOLDER [FOLDER ...]

FOLDER holds before.json.gz and the variants' traces (fused, nocopy, policy, splits2), as the interleaved runs
commit them.
"""
import gzip
import json
import os
import re
import statistics
import sys


def rule(kernel_class):
    """The stack's name rule for `kernel_class` (data/step/mlasim-torch.json, as mlasim step classes kernels)."""
    with open(os.path.join(os.path.dirname(__file__), "..", "data", "step", "mlasim-torch.json")) as f:
        return re.compile(next(r["match"] for r in json.load(f)["rules"] if r["class"] == kernel_class))


# The GEMM is of class other in the rules; it is named as scripts/step_op_bytes.py names it.
KINDS = {"attention": rule("mla_stage1"), "copy": rule("copy"), "gemm": re.compile(r"^nvjet|gemm")}
REDUCE = rule("mla_reduce")
# A gap longer than this lies between steps (the runs synchronise after each), not between two kernels of one.
STEP_BREAK_US = 20


def attention_gaps(path):
    """Median gaps (us) after a stage 1 that no reduce follows, from a stage 1 to its reduce, after a reduce, and
    between any two kernels of a step; None where the trace has none."""
    with gzip.open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy")]
    events.sort(key=lambda e: e["ts"])
    gaps = {"after stage 1": [], "stage 1 to reduce": [], "after the reduce": [], "any two kernels": []}

    def is_stage1(e):
        return KINDS["attention"].search(e["name"]) and not REDUCE.search(e["name"])

    for prev, e in zip(events, events[1:]):
        gap = e["ts"] - (prev["ts"] + prev["dur"])
        if gap > STEP_BREAK_US:
            continue
        gaps["any two kernels"].append(gap)
        if is_stage1(prev):
            gaps["stage 1 to reduce" if REDUCE.search(e["name"]) else "after stage 1"].append(gap)
        elif REDUCE.search(prev["name"]):
            gaps["after the reduce"].append(gap)
    return {k: statistics.median(v) if v else None for k, v in gaps.items()}


def medians(path):
    with gzip.open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy")]
    events.sort(key=lambda e: e["ts"])
    times = {k: [] for k in KINDS}
    gaps = []
    for prev, e in zip(events, events[1:]):
        for kind, pattern in KINDS.items():
            if pattern.search(e["name"]):
                times[kind].append(e["dur"])
                if kind == "gemm":
                    gaps.append(e["ts"] - (prev["ts"] + prev["dur"]))
    out = {k: statistics.median(v) for k, v in times.items() if v}
    out["gap before the gemm"] = statistics.median(gaps) if gaps else None
    return out


def main():
    for folder in sys.argv[1:]:
        before = medians(os.path.join(folder, "before.json.gz"))
        print(f"{folder}: before " + ", ".join(f"{k} {v:.2f}" for k, v in before.items() if v is not None) + " us")
        for variant in ("fused", "nocopy"):
            path = os.path.join(folder, variant + ".json.gz")
            if not os.path.exists(path):
                continue
            m = medians(path)
            print(f"  {variant:7s}" + ", ".join(f"{k} {m[k] - before[k]:+.2f}" for k in m
                                                if m[k] is not None and before.get(k) is not None) + " us")
        print("  median gaps around the attention (us):")
        for variant in ("before", "fused", "nocopy", "policy", "splits2"):
            path = os.path.join(folder, variant + ".json.gz")
            if os.path.exists(path):
                g = attention_gaps(path)
                print(f"    {variant:8s}" + ", ".join(f"{k} {v:.2f}" for k, v in g.items() if v is not None))


if __name__ == "__main__":
    main()
