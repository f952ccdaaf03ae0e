#!/usr/bin/env python3
"""How the kernels of scripts/step_interleaved.py's stack change between its variants (docs/step.md §4): the median
time of the attention's stage 1, the copy and the GEMM, and of the gap before the GEMM, in each variant's trace,
against the "before" trace, per layer. What a fuse or a copy removal does to the kernels after it, measured.

  scripts/step_kernel_changes.py FOLDER [FOLDER ...]

FOLDER holds before.json.gz and the variants' traces (fused, nocopy), as the interleaved runs commit them.
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


if __name__ == "__main__":
    main()
