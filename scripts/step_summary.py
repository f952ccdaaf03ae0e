#!/usr/bin/env python3
"""Where the decode-step what-if's +-5 % target holds (docs/step.md §4): every interleaved run's committed predictions
(predictions.json, written by scripts/step_table.py), each edit counted within +-5 % of its measured change or not,
by GPU, KV dtype, heads and batch (a batch past 16 runs the fused q prep's grid in two groups).

  scripts/step_summary.py [DATA_DIR]          (default: data)

The mixed-batch change is the one predicted from each step's own batch; its comparison row, every step at the
flags' batch, is left out, as is the mixed-context change's (every step at the flags' context, where the run's
step_batches file gives each step its own). Sequential runs (data/measurements/h100/step, step_copy*) have no mixed-batch steps and
are left out too. Last, how many edits' measured steps fall inside the band `mlasim step` predicts for them
(predictions.json's band_us, docs/step.md §3): the policy edits' (the held-out ratio error of two plans) and the
fuse and remove edits' (their error per site over these runs, scripts/edit_error_fit.py: in sample here; that
script gives the count with each workload left out).
"""
import argparse
import glob
import json
import os
import sys

KINDS = [("fused", "fuse"), ("nocopy", "copy removal"), ("policy", "policy B"), ("splits2", "2 splits"),
         ("mixed_b", "mixed batches"), ("contexts_b", "mixed contexts")]
TARGET_PCT = 5.0


def edit_script_args(doc):
    """The arguments of the scripts that run `mlasim step` over these runs' committed edits: MLASIM, --data DIR and
    --edits (every edit printed); `doc`'s first paragraph describes the script."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("mlasim")
    ap.add_argument("--data", default="data")
    ap.add_argument("--edits", action="store_true")
    return ap


def group_order(key):
    """Groups (GPU, KV dtype, heads, batch) in print order: by GPU, KV dtype, more heads first, then batch."""
    return key[0], key[1], -key[2], key[3]


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
    groups, bands = {}, {}
    for folder, events, predictions in runs(data):
        w = events["workload"]
        gpu = os.path.relpath(folder, os.path.join(data, "measurements")).split(os.sep)[0]
        key = (gpu, w["kv_dtype"], w["heads"], "<= 16" if w["batch"]["count"] <= 16 else "> 16")
        g = groups.setdefault(key, {"runs": 0, **{k: [0, 0] for k, _ in KINDS}})
        g["runs"] += 1
        for p in predictions:
            if p.get("rules") or "(" in p["change"]:  # the comparison rows without the steps' own batches
                continue
            kind = p["after_trace"].split(".")[0]
            if kind in g:
                g[kind][0] += abs(p["error_of_change_pct"]) <= TARGET_PCT
                g[kind][1] += 1
            if p.get("within_band") is not None:
                edit = "fuse and remove" if p["edit"].split("=")[0] in ("fuse", "remove") else "policy"
                band = bands.setdefault((edit,) + key, [0, 0])
                band[0] += p["within_band"]
                band[1] += 1
    print("| GPU | KV | heads | batch | runs | " + " | ".join(name for _, name in KINDS) + " | all |")
    print("|---|---|---|---|---|" + "---|" * (len(KINDS) + 1))
    total = [0, 0]
    for key in sorted(groups, key=group_order):
        g = groups[key]
        within = sum(g[k][0] for k, _ in KINDS)
        edits = sum(g[k][1] for k, _ in KINDS)
        total = [total[0] + within, total[1] + edits]
        cells = " | ".join(f"{g[k][0]}/{g[k][1]}" if g[k][1] else "-" for k, _ in KINDS)
        print(f"| {key[0].upper()} | {key[1]} | {key[2]} | {key[3]} | {g['runs']} | {cells} | {within}/{edits} |")
    print(f"\n{total[0]} of {total[1]} edits within +-{TARGET_PCT:g} % of the measured change")
    # How often the measured step falls inside the edits' predicted 90 % band.
    for edit in ("policy", "fuse and remove"):
        mine = {k[1:]: b for k, b in bands.items() if k[0] == edit}
        if not mine:
            continue
        inside = sum(b[0] for b in mine.values())
        edits = sum(b[1] for b in mine.values())
        groups_text = ", ".join(f"{k[0].upper()} {k[1]} {k[2]} heads {k[3]}: {b[0]}/{b[1]}" for k, b in
                                sorted(mine.items(), key=lambda kb: group_order(kb[0])))
        print(f"{inside} of {edits} {edit} edits' measured steps inside the predicted 90 % band ({groups_text})")


if __name__ == "__main__":
    main()
