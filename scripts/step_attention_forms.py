#!/usr/bin/env python3
"""How a policy edit should carry the step's measured attention over to the new plan (docs/step.md §3, §7): for every
committed policy and 2-split edit of the interleaved runs (the ones scripts/step_summary.py counts; the mixed-batch
edits, whose steps each run their own batch, are left out), the count within +-5 % of the measured change under
four forms of the new attention per layer, each with the write-back term `mlasim step` adds:

  ratio     r B                    the measured attention B scaled by the model's ratio r = N / R
  additive  B + (N - R)            the model's difference of the two plans added to the measured attention
  absolute  N                      the model's new plan alone, the step's measured attention unused
  carry     (1 - k) N + k r B      the class's policy_offset_carry k: the ratio's share of B's excess over R carried

B is the before trace's stage 1 and reduce per layer, R and N the model's device times of the plan that ran and the new
one (kernel_us less the event timing, docs/step.md §3); with A the after trace's attention, B - R is the step's excess
over the model before the edit and A - N after it. The steps are predicted with every class's policy_offset_carry at
1 (the ratio; a copy of the profile without the key). For each kernel class of the plan that ran, k is fitted by
least squares to A per layer over the other runs of that GPU and class (each run, one folder's policy and 2-split
edits, left out of its own fit; k within [0, 1]), and kept for the left-out run only where it brings more of the
other runs' edits within +-5 % than the ratio does (else 1): the `carry` column counts the edits so, each held out.
Last, per class, the value from all its runs by the same rule: what the profile's `<class>.policy_offset_carry`
holds. (The code also scales the plan that ran's write-back term by k, which this leaves at the ratio's: it is 0 for
plans on fewer CUs than the class's share floor, as the fp8 class's unsplit plans are.)

  scripts/step_attention_forms.py MLASIM [--data DIR] [--edits]
"""
import collections
import json
import os
import statistics
import tempfile

from step_error_parts import as_measured_on, step_json, without
from step_summary import TARGET_PCT, edit_script_args, runs

FORMS = ("ratio", "additive", "absolute", "carry")
KINDS = ("policy", "splits2")
OFFSET_MIN_US = 1.0


def attention_per_layer(step, layers):
    return (step["class_us"]["mla_stage1"] + step["class_us"]["mla_reduce"]) / layers


def batch_group(count):
    return "1-16" if count <= 16 else "17-32" if count <= 32 else ">32"


def error_pct(edit, attention):
    """The edit's error of the change with `attention` per layer in place of what `mlasim step` predicted."""
    step = edit["predicted_us"] + (attention - edit["e"]) * edit["layers"]
    change = edit["measured_us"] - edit["before_us"]
    return (step - edit["measured_us"]) / abs(change) * 100 if change else 0.0


def carried(x, k):
    """The new attention per layer with k of the ratio's carry: the ratio form less (1 - k) of r B against N."""
    return x["e"] + (1 - k) * (x["new"] - x["ratio"] * x["b"])


def fitted_carry(edits):
    """Least squares k within [0, 1] of the A per layer of `edits`, and whether it brings more of them within +-5 %
    than the ratio (k = 1): the carry the rule keeps."""
    num = sum((x["new"] - x["ratio"] * x["b"]) * (x["a"] - x["e"]) for x in edits)
    den = sum((x["new"] - x["ratio"] * x["b"]) ** 2 for x in edits)
    k = min(1.0, max(0.0, 1 - num / den)) if den else 1.0
    within = lambda kk: sum(abs(error_pct(x, carried(x, kk))) <= TARGET_PCT for x in edits)
    return k if within(k) > within(1.0) else 1.0


def profile_at_ratio(gpu, tmp):
    """A copy of data/gpus/GPU.json without any policy_offset_carry: every class at 1, the ratio form."""
    path = os.path.join(tmp, f"{gpu}.json")
    if not os.path.exists(path):
        with open(os.path.join("data", "gpus", f"{gpu}.json")) as f:
            prof = json.load(f)
        prof["params"] = {k: v for k, v in prof["params"].items() if not k.endswith(".policy_offset_carry")}
        with open(path, "w") as f:
            json.dump(prof, f)
    return path


def main():
    a = edit_script_args(__doc__).parse_args()
    edits = []
    tmp = tempfile.mkdtemp()
    for folder, events, predictions in runs(a.data):
        w = events["workload"]
        gpu = os.path.relpath(folder, os.path.join(a.data, "measurements")).split(os.sep)[0]
        for p in predictions:
            if p.get("rules") or "(" in p["change"] or p["after_trace"].split(".")[0] not in KINDS:
                continue
            args = p["command"].split()[1:]
            args[args.index("--gpu") + 1] = profile_at_ratio(args[args.index("--gpu") + 1], tmp)
            edited = step_json(a.mlasim, without(args, ("--format",)))
            if len(edited["policy_changes"]) != 1:
                continue
            change = edited["policy_changes"][0]
            layers = edited["edited"]["layers"] or 1
            after = step_json(a.mlasim, as_measured_on(args, os.path.join(folder, p["after_trace"])))["measured"]
            x = {"run": folder, "kind": p["after_trace"].split(".")[0], "layers": layers,
                 "key": (gpu, w["heads"], w["kv_dtype"], batch_group(w["batch"]["count"])),
                 "cls": (gpu, change["ran_kernel_class"]),
                 "b": attention_per_layer(edited["measured"], layers), "e": attention_per_layer(edited["edited"], layers),
                 "a": attention_per_layer(after, layers), "ran": change["ran_us"], "new": change["next_us"],
                 "ratio": change["ratio"], "predicted_us": edited["edited"]["step_us"], "measured_us": p["measured_us"],
                 "before_us": p["before_us"]}
            x["writeback"] = x["e"] - x["b"] * change["ratio"]  # what `mlasim step` adds beside the ratio
            edits.append(x)
    for x in edits:
        k = fitted_carry([y for y in edits if y["run"] != x["run"] and y["cls"] == x["cls"]])
        attention = {"ratio": x["e"], "additive": x["b"] + x["new"] - x["ran"] + x["writeback"],
                     "absolute": x["new"] + x["writeback"], "carry": carried(x, k)}
        x["errors"] = {f: error_pct(x, attention[f]) for f in FORMS}
        x["k"] = k
        if a.edits:
            print(f"{os.path.relpath(x['run'], a.data):48s} {x['kind']:8s} {x['key'][1]:3d} {x['key'][2]:4s} "
                  f"{x['key'][3]:5s} N/R {x['new'] / x['ran']:.3f}  B-R {x['b'] - x['ran']:+6.2f}  "
                  f"A-N {x['a'] - x['new']:+6.2f} us  k {k:.2f}  " +
                  "  ".join(f"{f} {x['errors'][f]:+7.1f} %" for f in FORMS))
    groups = collections.defaultdict(list)
    for x in edits:
        groups[x["key"]].append(x)
    print("| GPU | heads | KV | batch | edits | " + " | ".join(f"within +-5 %: {f}" for f in FORMS) +
          " | (A - N) / (B - R), median | N / R, median |")
    print("|---|---|---|---|---|" + "---|" * (len(FORMS) + 2))
    totals = collections.Counter()
    for key in sorted(groups, key=lambda k: (k[0], -k[1], k[2], k[3])):
        rows = groups[key]
        counts = {f: sum(abs(x["errors"][f]) <= TARGET_PCT for x in rows) for f in FORMS}
        totals.update(counts)
        totals["edits"] += len(rows)
        transfers = [(x["a"] - x["new"]) / (x["b"] - x["ran"]) for x in rows if abs(x["b"] - x["ran"]) >= OFFSET_MIN_US]
        transfer = f"{statistics.median(transfers):+.2f} ({len(transfers)})" if transfers else "-"
        print(f"| {key[0].upper()} | {key[1]} | {key[2]} | {key[3]} | {len(rows)} | " +
              " | ".join(str(counts[f]) for f in FORMS) +
              f" | {transfer} | {statistics.median(x['new'] / x['ran'] for x in rows):.3f} |")
    print("\n" + ", ".join(f"{f} {totals[f]}" for f in FORMS) + f" of {totals['edits']} edits within +-5 % "
          "(carry: each run held out of its class's fit)")
    print("\nper class, from all its runs (the profile's <class>.policy_offset_carry):")
    for cls in sorted({x["cls"] for x in edits}):
        rows = [x for x in edits if x["cls"] == cls]
        k = fitted_carry(rows)
        within = lambda kk: sum(abs(error_pct(x, carried(x, kk))) <= TARGET_PCT for x in rows)
        print(f"  {cls[0]} {cls[1]}: {len(rows)} edits of {len({x['run'] for x in rows})} runs; k {k:.2f} "
              f"({within(k)} within +-5 %, {within(1.0)} with the ratio)")


if __name__ == "__main__":
    main()
