#!/usr/bin/env python3
"""What the campaigns' event timing holds that a kernel trace does not (docs/step.md §3): each plan is timed as the
validation campaigns time it (MlaRunner::time through mlasim_attention_time: CUDA events before stage 1, between
stage 1 and the reduce and after the reduce, the L2 flushed before each repetition), once alone and once under
torch.profiler. The trace of the profiled call gives each repetition's device time of stage 1 and of the reduce and
the gap between them, so the event interval and the kernels' own time are compared on the same launches.

  python3 scripts/events_vs_trace_probe.py --lib DIR/libmlasim_attention.so --out OUT [--gpu h100]

Writes OUT/events_vs_trace.csv (one row per plan) and prints it.
"""
import argparse
import csv
import ctypes
import json
import os
import statistics
import time

import torch

from step_validation import Attention, load_lib

# (batch, context, heads, kv dtype, policies): the step stack's three workloads and their plans, and a few others.
PLANS = [
    (16, 4096, 128, "bf16", ["aiter-v1", "fixed:splits=2", "fixed:splits=4"]),
    (24, 2048, 128, "bf16", ["aiter-v1", "fixed:splits=2"]),
    (12, 8192, 128, "bf16", ["aiter-v1", "fixed:splits=2", "fixed:splits=4", "fixed:splits=8"]),
    (8, 4096, 128, "bf16", ["aiter-v1", "fixed:splits=4"]),
    (32, 4096, 128, "bf16", ["aiter-v1", "fixed:splits=4"]),
    (64, 1024, 128, "bf16", ["aiter-v1", "fixed:splits=2"]),
    (16, 8192, 128, "fp8", ["aiter-v1", "fixed:splits=4"]),
    (32, 4096, 16, "bf16", ["aiter-v1", "fixed:splits=4"]),
    (128, 2048, 16, "fp8", ["aiter-v1", "fixed:splits=2"]),
]


def device_times(trace_path):
    """Per repetition of the profiled call: stage 1's device time, the reduce's, and the gap between them (None
    when the plan has no reduce). A repetition starts at a stage-1 kernel."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    ks = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
                 and "mlasim::kernels" in e.get("name", "") and "l2_flush" not in e["name"]), key=lambda e: e["ts"])
    reps = []
    for i, k in enumerate(ks):
        if "reduce" in k["name"]:
            continue
        nxt = ks[i + 1] if i + 1 < len(ks) and "reduce" in ks[i + 1]["name"] else None
        reps.append((k["dur"], nxt["dur"] if nxt else None,
                     nxt["ts"] - (k["ts"] + k["dur"]) if nxt else None))
    return reps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lib = load_lib(a.lib)
    err = ctypes.create_string_buffer(1024)

    def timed(att):
        out = (ctypes.c_double * 3)()
        if lib.mlasim_attention_time(att.handle, a.warmup, a.reps, 1, out, err, 1024):
            raise RuntimeError(err.value.decode())
        return list(out)

    rows = []
    for batch, context, heads, kv, policies in PLANS:
        for policy in policies:
            workload = {"gpu": a.gpu, "batch": {"kind": "uniform", "count": batch, "context": context}, "qlen": 1,
                        "heads": heads, "q_dtype": kv, "kv_dtype": kv, "page_size": 64}
            try:
                att = Attention(lib, workload, policy)
            except RuntimeError as ex:  # a plan our kernels do not run: say so, go on with the others
                print(f"{batch} x {context} {heads}h {kv} {policy}: {ex}", flush=True)
                continue
            alone = timed(att)
            path = os.path.join(a.out, "trace.json")
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                profiled = timed(att)
            prof.export_chrome_trace(path)
            reps = device_times(path)[a.warmup:]  # the repetitions the events timed
            os.remove(path)
            s1 = statistics.median(r[0] for r in reps)
            reduced = reps[0][1] is not None
            red = statistics.median(r[1] for r in reps) if reduced else 0.0
            gap = statistics.median(r[2] for r in reps) if reduced else 0.0
            dev = statistics.median(r[0] + (r[1] or 0) for r in reps)
            rows.append({"gpu": a.gpu, "batch": batch, "context": context, "heads": heads, "dtype": kv,
                         "policy": policy, "partials": att.partials, "kernels": 2 if reduced else 1,
                         "reps": len(reps), "events_stage1_us": alone[0], "events_reduce_us": alone[1],
                         "events_total_us": alone[2], "profiled_events_total_us": profiled[2],
                         "trace_stage1_us": s1, "trace_reduce_us": red, "trace_gap_us": gap,
                         "trace_device_us": dev, "events_minus_device_us": alone[2] - dev,
                         "predicted_kernel_us": att.predicted_us})
            print(f"{batch:4d} x {context:5d} {heads:3d}h {kv:4s} {policy:16s} kernels {rows[-1]['kernels']} "
                  f"events {alone[2]:8.2f} (profiled {profiled[2]:8.2f})  trace {s1:8.2f} + {red:6.2f} "
                  f"(gap {gap:5.2f}) = {dev:8.2f}  events - device {alone[2] - dev:+6.2f}  "
                  f"model {att.predicted_us:8.2f}", flush=True)
            lib.mlasim_attention_destroy(att.handle)
            torch.cuda.synchronize()
    with open(os.path.join(a.out, "events_vs_trace.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "date": time.strftime("%Y-%m-%d"), "warmup": a.warmup, "reps": a.reps}, f, indent=1)


if __name__ == "__main__":
    main()
