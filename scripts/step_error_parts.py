#!/usr/bin/env python3
"""What a decode-step edit's error is made of (docs/step.md §7): for every committed edit of the interleaved runs
(the ones scripts/step_summary.py counts), the predicted step's time per class and of its gaps, less the measured
"after" trace's, per layer, by `mlasim step` itself (the edit's committed command, and the after trace with no edit,
both with --format json). Then the mean of each part by GPU, heads and batch (1 to 16, 17 to 32 and more requests:
the q prep's Triton grids run one group of 16 requests, two, or more), and how often the gap after the attention's
stage 1 is short (under SHORT_GAP_US) in the before and after traces: that gap is bimodal, launch by launch.

  scripts/step_error_parts.py MLASIM [--kind fused|nocopy|policy|splits2|mixed_b] [--data DIR] [--edits]
                               [--as-measured PART]

--edits prints every edit's parts too. The parts add up to the error of the step per layer (the `step` column).
--as-measured PART (repeated) counts the edits within +-5 % once more with those parts taken as measured after the
edit: how many edits a better prediction of that part alone would bring in, or take out where errors cancel.
"""
import argparse
import collections
import gzip
import json
import os
import statistics
import subprocess

from step_kernel_changes import KINDS, REDUCE, STEP_BREAK_US
from step_summary import runs

PARTS = ["q_prep", "rope_kv_write", "copy", "mla_stage1", "mla_reduce", "other", "gaps", "step"]
# The gap after a stage 1 comes in two modes on the H200 and the H100: about 0.3 us and about 0.6 us.
SHORT_GAP_US = 0.45


def step_json(mlasim, args):
    out = subprocess.run([mlasim, *args, "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def without(args, options):
    """The command's arguments less `options`, each with its value."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in options:
            skip = True
        else:
            out.append(a)
    return out


def as_measured_on(args, trace):
    """The edit's command on another trace, with no edit and no op bytes: the trace as measured."""
    out = without(args, ("--edit", "--op-bytes", "--format"))
    out[out.index("--trace") + 1] = trace
    return out


def short_gap_share(path):
    """The share of stage-1 launches whose next kernel of the step starts within SHORT_GAP_US of its end."""
    with gzip.open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy")]
    events.sort(key=lambda e: e["ts"])
    gaps = [e["ts"] - (prev["ts"] + prev["dur"]) for prev, e in zip(events, events[1:])
            if KINDS["attention"].search(prev["name"]) and not REDUCE.search(prev["name"])]
    gaps = [g for g in gaps if g <= STEP_BREAK_US]
    return sum(g < SHORT_GAP_US for g in gaps) / len(gaps) if gaps else None


def batch_group(count):
    return "1-16" if count <= 16 else "17-32" if count <= 32 else ">32"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mlasim")
    ap.add_argument("--kind", default="fused", choices=["fused", "nocopy", "policy", "splits2", "mixed_b"])
    ap.add_argument("--data", default="data")
    ap.add_argument("--edits", action="store_true")
    ap.add_argument("--as-measured", action="append", default=[], choices=PARTS[:-1])
    a = ap.parse_args()
    groups = collections.defaultdict(list)
    for folder, events, predictions in runs(a.data):
        w = events["workload"]
        gpu = os.path.relpath(folder, os.path.join(a.data, "measurements")).split(os.sep)[0]
        for p in predictions:
            if p.get("rules") or "(" in p["change"] or p["after_trace"].split(".")[0] != a.kind:
                continue
            args = p["command"].split()[1:]
            edited = step_json(a.mlasim, without(args, ("--format",)))
            after = os.path.join(folder, p["after_trace"])
            measured = step_json(a.mlasim, as_measured_on(args, after))["measured"]
            e, layers = edited["edited"], edited["edited"]["layers"] or 1
            parts = {c: (e["class_us"][c] - measured["class_us"][c]) / layers for c in e["class_us"]}
            parts["gaps"] = (e["gaps_us"] - measured["gaps_us"]) / layers
            parts["step"] = (e["step_us"] - measured["step_us"]) / layers
            shares = (short_gap_share(os.path.join(folder, p["before_trace"])), short_gap_share(after))
            key = (gpu, w["heads"], batch_group(w["batch"]["count"]))
            # The step with the chosen parts as measured, and its error of the change.
            step = p["predicted_us"] - sum(parts.get(c, 0) for c in a.as_measured) * layers
            change = p["measured_us"] - p["before_us"]
            as_measured = (step - p["measured_us"]) / abs(change) * 100 if change else 0.0
            groups[key].append((p["error_of_change_pct"], parts, shares, as_measured))
            if a.edits:
                print(f"{os.path.relpath(folder, a.data):48s} {w['heads']:3d} {w['kv_dtype']} "
                      f"{w['batch']['count']:3d}  error {p['error_of_change_pct']:+6.1f} %  " +
                      " ".join(f"{c} {parts.get(c, 0):+.2f}" for c in PARTS) + "  short gaps after stage 1: " +
                      " -> ".join(f"{s:.2f}" if s is not None else "-" for s in shares))
    print(f"\n{a.kind}: the predicted step less the measured one, per layer (us), mean over the edits")
    print("| GPU | heads | batch | edits | within +-5 % | " + " | ".join(PARTS) +
          " | short gaps after stage 1, before -> after |")
    print("|---|---|---|---|---|" + "---|" * (len(PARTS) + 1))
    within = [0, 0, 0]
    for key in sorted(groups, key=lambda k: (k[0], -k[1], k[2])):
        rows = groups[key]
        mean = {c: statistics.mean(r[1].get(c, 0) for r in rows) for c in PARTS}
        share = [statistics.mean(r[2][i] for r in rows if r[2][i] is not None) for i in (0, 1)]
        print(f"| {key[0].upper()} | {key[1]} | {key[2]} | {len(rows)} | {sum(abs(r[0]) <= 5 for r in rows)} | " +
              " | ".join(f"{mean[c]:+.2f}" for c in PARTS) + f" | {share[0]:.2f} -> {share[1]:.2f} |")
        within = [within[0] + sum(abs(r[0]) <= 5 for r in rows), within[1] + sum(abs(r[3]) <= 5 for r in rows),
                  within[2] + len(rows)]
    print(f"\n{within[0]} of {within[2]} edits within +-5 %")
    if a.as_measured:
        print(f"{within[1]} of {within[2]} with {', '.join(a.as_measured)} as measured")


if __name__ == "__main__":
    main()
