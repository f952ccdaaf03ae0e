#!/usr/bin/env python3
"""How finely the decode-step runs measure a change (docs/step.md §4): for every edit scripts/step_summary.py counts,
the measured change's 95 % interval from the run's own cycles, against the ±5 % the target asks of the prediction.

The interleaved runs replay every variant once per cycle (scripts/step_interleaved.py), so step i of the before trace
and step i of the after trace ran side by side: the change's standard error is the spread of the paired differences
over sqrt(cycles) (unpaired, from the two traces' spreads, where their step counts differ). An edit's ±5 % is
*resolvable* where 5 % of the measured change is at least the interval's half width (1.96 standard errors): below
that, a prediction that is exactly right still lands outside ±5 % about as often as inside. The per-step times are
`mlasim step --format json` on each trace as measured (no edit, no op bytes), the same steps the predictions take.

  scripts/step_resolution.py MLASIM [--data DIR] [--edits]

Prints, per kind of edit: the edits, those within ±5 %, those resolvable and of them within ±5 %, and the misses
whose error is inside the measured change's 95 % interval. --edits lists every edit that is not resolvable.
"""
import collections
import math
import os
import statistics

from step_error_parts import as_measured_on, step_json
from step_summary import KINDS, TARGET_PCT, edit_script_args, runs

Z95 = 1.96


def step_times(mlasim, args, trace, cache):
    """The measured time of each step of `trace` (us) by its batch (requests, KV tokens), in the order they ran, as
    the edit's command cuts and classifies them."""
    if trace not in cache:
        by_batch = collections.defaultdict(list)
        for s in step_json(mlasim, as_measured_on(args, trace))["steps"]:
            by_batch[(s["requests"], s["kv_tokens"])].append(s["measured_us"])
        cache[trace] = dict(by_batch)
    return cache[trace]


def own_step_batches(args, folder, trace):
    """The edit's command with the after trace's own step batches file, where it has one (contexts_b's steps run
    other contexts than contexts_a's in the same cycle)."""
    own = os.path.join(folder, f"step_batches_{trace.split('.')[0]}.json")
    if "--step-batches" not in args or not os.path.exists(own):
        return args
    out = list(args)
    out[out.index("--step-batches") + 1] = own
    return out


def change_standard_error(before, after):
    """The standard error (us) of the mean step's change from `before` to `after` (steps by batch): each batch's
    n-th step of one trace paired with its n-th of the other (the same cycle) where both traces ran the same batches
    as often, else the two traces' spreads unpaired."""
    steps = sum(len(t) for t in before.values())
    if before.keys() == after.keys() and all(len(before[k]) == len(after[k]) > 2 for k in before):
        variance = sum(len(before[k]) * statistics.variance(a - b for a, b in zip(after[k], before[k]))
                       for k in before)
        return math.sqrt(variance) / steps
    flat_b = [t for ts in before.values() for t in ts]
    flat_a = [t for ts in after.values() for t in ts]
    return math.sqrt(statistics.variance(flat_b) / len(flat_b) + statistics.variance(flat_a) / len(flat_a))


def main():
    a = edit_script_args(__doc__).parse_args()
    names = dict(KINDS)
    counts = collections.defaultdict(collections.Counter)
    cache = {}
    for folder, events, predictions in runs(a.data):
        for p in predictions:
            kind = p["after_trace"].split(".")[0]
            if p.get("rules") or "(" in p["change"] or kind not in names:
                continue
            args = p["command"].split()[1:]
            before = step_times(a.mlasim, args, args[args.index("--trace") + 1], cache)
            after = step_times(a.mlasim, own_step_batches(args, folder, p["after_trace"]),
                               os.path.join(folder, p["after_trace"]), cache)
            change = p["measured_us"] - p["before_us"]
            half_width = Z95 * change_standard_error(before, after)
            error_us = p["predicted_us"] - p["measured_us"]
            within = abs(p["error_of_change_pct"]) <= TARGET_PCT
            resolvable = TARGET_PCT / 100 * abs(change) >= half_width
            c = counts[names[kind]]
            c["edits"] += 1
            c["within"] += within
            c["resolvable"] += resolvable
            c["resolvable within"] += resolvable and within
            c["miss inside interval"] += not within and abs(error_us) <= half_width
            if a.edits and not resolvable:
                print(f"{os.path.relpath(folder, a.data):52s} {kind:10s} change {change:+8.2f} us "
                      f"({p['measured_change_pct']:+6.2f} %), 95 % interval +-{half_width:.2f} us, "
                      f"error {error_us:+7.2f} us ({p['error_of_change_pct']:+7.1f} % of the change)")
    print("| edit | edits | within ±5 % | resolvable at ±5 % | of them within ±5 % | misses inside the measured "
          "change's 95 % interval |")
    print("|---|---|---|---|---|---|")
    total = collections.Counter()
    for _, name in KINDS:
        c = counts.get(name)
        if not c:
            continue
        total.update(c)
        print(f"| {name} | {c['edits']} | {c['within']} | {c['resolvable']} | {c['resolvable within']} | "
              f"{c['miss inside interval']} |")
    print(f"| all | {total['edits']} | {total['within']} | {total['resolvable']} | {total['resolvable within']} | "
          f"{total['miss inside interval']} |")


if __name__ == "__main__":
    main()
