#!/usr/bin/env python3
"""How far a fuse or a remove edit of `mlasim step` misses, per site, into a GPU profile's "edit_error" (docs/step.md
section 3): over the committed interleaved step runs (data/measurements/GPU/step*/**/predictions.json, written by
scripts/step_table.py), each fuse (by bytes) and remove edit's |measured - predicted| edited step, per site (a run of
fused kernels or a removed kernel: the runs' stack has one per layer, so the step's error over events.json's layers),
the median and the 90th percentile.
`mlasim step` takes the p90 times a step's sites as that edit's part of the 90 % band.

It also says how well that band carries to a workload it did not see: each edit's measured step against the p90 of
the other workloads' edits (leave one workload out: heads, requests, context and KV dtype); and whether the edits
miss to one side: the signed error per site, and how many edits the other workloads' signed median, taken off, brings
within the +-5 % target. The fuses' median signed error per site, as predicted without it, is the profile's
`step_fuse_offset_us` (`mlasim step` takes it off each fused run): the committed predictions were made with the
profile's value (tests/cli/step_cli_test.cpp holds them to it), so it is added back before the median is taken.

  scripts/edit_error_fit.py GPU [--data DIR] [--date DATE] [--write]

Prints the figures; --write puts them into data/gpus/GPU.json. `mlasim calibrate` drops the field when it refits a
profile's parameters, so scripts/fit_profiles.sh runs this after its fits.
"""
import argparse
import datetime
import glob
import json
import math
import os
import statistics
import sys

KINDS = {"fuse": "a run of fused kernels", "remove": "a removed kernel"}
TARGET_PCT = 5.0
OFFSET_KEY = "step_fuse_offset_us"


def p90(values):
    """The 90th percentile, nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def rows(data, gpu, fuse_offset_us):
    """(kind, workload, |measured - predicted| per site, folder, figures) for each fuse and remove edit of the GPU's
    interleaved runs (those with mixed-batch steps; the sequential ones measured before and after apart). The figures:
    the signed error per site (a fuse's as predicted without `fuse_offset_us`, the profile's offset the committed
    predictions took off each run), the sites, the measured change, the committed error of the change and the group
    (heads, past 16 requests)."""
    pattern = os.path.join(data, "measurements", gpu, "step*", "**", "predictions.json")
    for path in sorted(glob.glob(pattern, recursive=True)):
        folder = os.path.dirname(path)
        with open(os.path.join(folder, "events.json")) as f:
            events = json.load(f)
        if "mixed_batches" not in events:
            continue
        w = events["workload"]
        workload = (w["heads"], w["batch"]["count"], w["batch"]["context"], w["kv_dtype"])
        with open(path) as f:
            for p in json.load(f):
                kind = p["edit"].split("=")[0]
                if kind not in KINDS or p.get("rules") or (kind == "fuse" and ":bytes=" not in p["edit"]):
                    continue
                # The signed error as predicted without the offset the committed fuses took off each run.
                signed = (p["predicted_us"] - p["measured_us"]) / events["layers"]
                yield (kind, workload, abs(p["measured_us"] - p["predicted_us"]) / events["layers"], folder,
                       {"signed": signed + (fuse_offset_us if kind == "fuse" else 0.0), "sites": events["layers"],
                        "change": p["measured_us"] - p["before_us"], "error_pct": p["error_of_change_pct"],
                        "group": (w["heads"], w["batch"]["count"] > 16)})


def within_target(row, offset_us):
    """Whether the edit is within the +-5 % target with `offset_us` per site taken off its prediction."""
    e = row[4]
    return abs((e["signed"] - offset_us) * e["sites"] / e["change"] * 100) <= TARGET_PCT if e["change"] else False


def offset_check(mine, group_of):
    """Edits within +-5 % as committed, and with the signed median error per site (as predicted without the offset) of
    the other workloads' edits of their group (`group_of`) taken off instead: whether the edits miss to one side."""
    held_out = 0
    for r in mine:
        others = [o[4]["signed"] for o in mine if o[1] != r[1] and group_of(o) == group_of(r)]
        held_out += within_target(r, statistics.median(others) if others else 0.0)
    return sum(abs(r[4]["error_pct"]) <= TARGET_PCT for r in mine), held_out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gpu")
    ap.add_argument("--data", default="data")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    profile_path = os.path.join(a.data, "gpus", a.gpu + ".json")
    with open(profile_path) as f:
        profile = json.load(f)
    found = list(rows(a.data, a.gpu, profile["params"].get(OFFSET_KEY, {}).get("value", 0.0)))
    if not found:
        sys.exit(f"edit_error_fit: no interleaved step runs with predictions under {a.data}/measurements/{a.gpu}")
    entries, offset = {}, None
    for kind, site in KINDS.items():
        mine = [r for r in found if r[0] == kind]
        if not mine:
            continue
        errors = [r[2] for r in mine]
        workloads = sorted({r[1] for r in mine})
        # Leave one workload out: is each edit's measured step inside the band of the other workloads' edits?
        inside = sum(r[2] <= p90([o[2] for o in mine if o[1] != r[1]]) for r in mine if len(workloads) > 1)
        entries[kind] = {
            "median_us": round(statistics.median(errors), 4),
            "p90_us": round(p90(errors), 4),
            "edits": len(mine),
            "source": (f"scripts/edit_error_fit.py, {a.date}: |measured - predicted| edited step per site ({site}) "
                       f"of the {len(mine)} {kind} edits of the interleaved runs under data/measurements/{a.gpu}/step* "
                       f"({len(workloads)} workloads, {len({r[3] for r in mine})} runs); docs/step.md section 3"),
        }
        print(f"{a.gpu} {kind}: {len(mine)} edits over {len(workloads)} workloads, per site median "
              f"{entries[kind]['median_us']:.3f} us, p90 {entries[kind]['p90_us']:.3f} us; leaving each workload out, "
              f"{inside} of {len(mine)} measured steps inside the others' band")
        signed = [r[4]["signed"] for r in mine]
        as_is, by_gpu = offset_check(mine, lambda r: 0)
        _, by_group = offset_check(mine, lambda r: r[4]["group"])
        print(f"  predicted - measured per site{' without the offset' if kind == 'fuse' else ''}: median "
              f"{statistics.median(signed):+.3f} us, mean {statistics.mean(signed):+.3f} us "
              f"({sum(x > 0 for x in signed)} of {len(signed)} above 0); within +-{TARGET_PCT:g} %: {as_is} as "
              f"committed, {by_gpu} less the other workloads' median, {by_group} less that of their heads and q-prep "
              f"groups (one group up to 16 requests, two or more past)")
        if kind == "fuse":
            offset = {"value": round(statistics.median(signed), 4), "kind": "fitted",
                      "source": (f"scripts/edit_error_fit.py, {a.date}: the median of (predicted - measured) edited "
                                 f"step per fused run, without this offset, of the {len(mine)} fuse edits of the "
                                 f"interleaved runs under data/measurements/{a.gpu}/step* ({len(workloads)} "
                                 f"workloads); with each workload's edits left out of it, {by_gpu} of {len(mine)} "
                                 f"within +-5 % of the measured change; docs/step.md section 3")}
    if a.write:
        profile["edit_error"] = entries
        if offset is not None:
            profile["params"][OFFSET_KEY] = offset
        with open(profile_path, "w") as f:
            f.write(json.dumps(profile, indent=2) + "\n")


if __name__ == "__main__":
    main()
