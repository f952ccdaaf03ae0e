#!/usr/bin/env python3
"""Where the decode-step what-if's +-5 % target holds (docs/step.md §4): every interleaved run's committed predictions
(predictions.json, written by scripts/step_table.py), each edit counted within +-5 % of its measured change or not,
by GPU, heads and batch (a batch past 16 runs the fused q prep's grid in two groups).

  scripts/step_summary.py [DATA_DIR]          (default: data)

The mixed-batch change is the one predicted from each step's own batch; its comparison row, every step at the
flags' batch, is left out. Sequential runs (data/measurements/h100/step, step_copy*) have no mixed-batch steps and
are left out too.
"""
import glob
import json
import os
import sys

KINDS = [("fused", "fuse"), ("nocopy", "copy removal"), ("policy", "policy B"), ("splits2", "2 splits"),
         ("mixed_b", "mixed batches")]
TARGET_PCT = 5.0


def runs(data):
    for path in sorted(glob.glob(os.path.join(data, "measurements", "*", "step*", "**", "predictions.json"),
                                 recursive=True)):
        folder = os.path.dirname(path)
        with open(os.path.join(folder, "events.json")) as f:
            events = json.load(f)
        if "mixed_batches" not in events:
            continue
        with open(path) as f:
            yield folder, events, json.load(f)


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else "data"
    groups = {}
    for folder, events, predictions in runs(data):
        w = events["workload"]
        gpu = os.path.relpath(folder, os.path.join(data, "measurements")).split(os.sep)[0]
        key = (gpu, w["heads"], "<= 16" if w["batch"]["count"] <= 16 else "> 16")
        g = groups.setdefault(key, {"runs": 0, **{k: [0, 0] for k, _ in KINDS}})
        g["runs"] += 1
        for p in predictions:
            if p.get("rules"):  # the comparison row without the steps' own batches
                continue
            kind = p["after_trace"].split(".")[0]
            if kind in g:
                g[kind][0] += abs(p["error_of_change_pct"]) <= TARGET_PCT
                g[kind][1] += 1
    print("| GPU | heads | batch | runs | " + " | ".join(name for _, name in KINDS) + " | all |")
    print("|---|---|---|---|" + "---|" * (len(KINDS) + 1))
    total = [0, 0]
    for key in sorted(groups, key=lambda k: (k[0], -k[1], k[2])):
        g = groups[key]
        within = sum(g[k][0] for k, _ in KINDS)
        edits = sum(g[k][1] for k, _ in KINDS)
        total = [total[0] + within, total[1] + edits]
        cells = " | ".join(f"{g[k][0]}/{g[k][1]}" for k, _ in KINDS)
        print(f"| {key[0].upper()} | {key[1]} | {key[2]} | {g['runs']} | {cells} | {within}/{edits} |")
    print(f"\n{total[0]} of {total[1]} edits within +-{TARGET_PCT:g} % of the measured change")


if __name__ == "__main__":
    main()
