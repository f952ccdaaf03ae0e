#!/usr/bin/env python3
"""The decode-step validation table (docs/step.md §4): for each round of a folder of step traces
(data/measurements/<gpu>/step*, with the events.json of the run that measured them), mlasim step predicts each
change's step from the "before" trace, and the trace of the change measures it.

  scripts/step_table.py build/cli/mlasim [data/measurements/h100/step]

writes DIR/predictions.json (every prediction with its command; tests/cli/step_cli_test.cpp checks that the CLI
still gives them) and prints the markdown table.
"""
import json
import os
import subprocess
import sys

from step_op_bytes import op_bytes
from stream_kernel_check import qprep_bytes


def workload_args(events):
    """The step's workload as mlasim flags, from the run's events.json."""
    w = events["workload"]
    return ["--gpu", w["gpu"], "--batch", str(w["batch"]["count"]), "--context", str(w["batch"]["context"]),
            "--heads", str(w["heads"]), "--q-dtype", w["q_dtype"], "--kv-dtype", w["kv_dtype"], "--page-size",
            str(w["page_size"]), "--policy", events["policy_a"]]


def changes(events):
    """(before, after, edit, what, how) for each change the run measured; `how`: None, "no-batch-from" (the rules
    without batch_from) or "step-batches" (each step's batch from the run's step_batches_<before>.json)."""
    fuse = "fuse=q_prep:bytes={}:written={}".format(*qprep_bytes(events["workload"]["batch"]["count"],
                                                               events["workload"]["heads"]))
    out = [("before", "fused", fuse, "fuse the q prep (5 kernels) into one Triton kernel",
            None),
           ("before", "policy", f"policy={events['policy_b']}",
            f"split policy {events['policy_a']} -> {events['policy_b']}", None),
           ("before", "nocopy", "remove=copy", f"remove the {events['copy_mb']} MiB block-table copy", None)]
    if "mixed_batches" in events:  # scripts/step_interleaved.py: a second split count, and steps of several batches
        out.append(("before", "splits2", "policy=fixed:splits=2", f"split policy {events['policy_a']} -> fixed:splits=2",
                    None))
        batches = "/".join(str(b) for b in sorted(events["mixed_batches"] + [events["workload"]["batch"]["count"]]))
        what = f"split policy {events['policy_a']} -> {events['policy_b']}, steps of batch {batches}"
        out.append(("mixed_a", "mixed_b", f"policy={events['policy_b']}", what + " (each step's batch from its trace)",
                    None))
        out.append(("mixed_a", "mixed_b", f"policy={events['policy_b']}",
                    what + " (every step at the flags' batch, as without batch_from)", "no-batch-from"))
    if events.get("mixed_contexts"):  # step_interleaved.py --mixed-contexts: steps of several contexts
        # A uniform context is a number, a ragged batch's item "LO-HI" (step_interleaved.py --mixed-contexts).
        items = events["mixed_contexts"] + [events["workload"]["batch"]["context"]]
        contexts = "/".join(str(c) for c in sorted(items, key=lambda c: (isinstance(c, str), int(str(c).split("-")[0]))))
        what = f"split policy {events['policy_a']} -> {events['policy_b']}, steps of context {contexts}"
        out.append(("contexts_a", "contexts_b", f"policy={events['policy_b']}",
                    what + " (each step's batch from --step-batches)", "step-batches"))
        out.append(("contexts_a", "contexts_b", f"policy={events['policy_b']}",
                    what + " (every step at the flags' context)", None))
    return out


def rules_without_batch_from(folder):
    """The stack's rules without batch_from, written next to the predictions (the comparison row's rules)."""
    with open(os.path.join(os.path.dirname(__file__), "..", "data", "step", "mlasim-torch.json")) as f:
        rules = json.load(f)
    rules.pop("batch_from", None)
    rules["name"] = "mlasim-torch-no-batch-from"
    path = os.path.join(folder, "rules_no_batch_from.json")
    with open(path, "w") as f:
        json.dump(rules, f, indent=2)
        f.write("\n")
    return path


def write_op_bytes(folder, events):
    """The stack's ops' bytes (scripts/step_op_bytes.py), written next to the predictions."""
    path = os.path.join(folder, "op_bytes.json")
    with open(path, "w") as f:
        json.dump(op_bytes(events), f, indent=2)
        f.write("\n")
    return path


def step(mlasim, trace, workload, edits=(), rules=None, ops=None, batches=None):
    args = [mlasim, "step", "--trace", trace, *workload, "--format", "json"] + (["--rules", rules] if rules else [])
    args += ["--op-bytes", ops] if ops else []
    args += ["--step-batches", batches] if batches else []
    for e in edits:
        args += ["--edit", e]
    return json.loads(subprocess.check_output(args)), args[1:]


def main():
    mlasim = sys.argv[1]
    folder = sys.argv[2] if len(sys.argv) > 2 else "data/measurements/h100/step"
    with open(os.path.join(folder, "events.json")) as f:
        events = json.load(f)
    workload = workload_args(events)
    # step_validation.py names its traces <variant>_r<round>; step_interleaved.py runs one round per folder.
    rounds = sorted({f.split("_r")[1].split(".")[0] for f in os.listdir(folder) if f.startswith("before_r")})
    trace_of = lambda variant, r: os.path.join(folder, f"{variant}_r{r}.json.gz")
    if not rounds:
        rounds = ["1"]
        trace_of = lambda variant, r: os.path.join(folder, f"{variant}.json.gz")
    ops = write_op_bytes(folder, events)
    out, rows = [], []
    for r in rounds:
        for base, name, edit, what, how in changes(events):
            rules_path = rules_without_batch_from(folder) if how == "no-batch-from" else None
            batches = os.path.join(folder, f"step_batches_{base}.json") if how == "step-batches" else None
            before_trace = trace_of(base, r)
            before = step(mlasim, before_trace, workload)[0]["measured"]["step_us"]
            predicted, command = step(mlasim, before_trace, workload, [edit], rules_path, ops, batches)
            measured = step(mlasim, trace_of(name, r), workload)[0]["measured"]["step_us"]
            p, m = predicted["edited"]["step_us"], measured
            dp, dm = p / before - 1, m / before - 1
            # The policy edits' 90 % band (the held-out ratio error of two plans, docs/step.md §3): null elsewhere.
            band = (predicted.get("band") or {}).get("half_width_us")
            command = [c.replace(ops, os.path.relpath(ops)) for c in command]
            if rules_path:
                command = [c.replace(rules_path, os.path.relpath(rules_path)) for c in command]
                name += " (no batch_from)"
            if batches:
                command = [c.replace(batches, os.path.relpath(batches)) for c in command]
            elif base == "contexts_a":
                name += " (flags' context)"
            out.append({"round": int(r), "change": name, "edit": edit, "workload": workload,
                        "before_trace": os.path.basename(before_trace),
                        "after_trace": os.path.basename(trace_of(name.split(" ")[0], r)),
                        "rules": os.path.basename(rules_path) if rules_path else None,
                        "step_batches": os.path.basename(batches) if batches else None,
                        "op_bytes": os.path.basename(ops),
                        "command": "mlasim " + " ".join(command),
                        "before_us": before, "predicted_us": p, "measured_us": m,
                        "predicted_change_pct": dp * 100, "measured_change_pct": dm * 100,
                        "error_of_change_pct": (dp - dm) / abs(dm) * 100, "error_of_step_pct": (p / m - 1) * 100,
                        "band_us": band, "within_band": None if band is None else abs(p - m) <= band})
            rows.append(f"| {r} | {what} | `{edit}` | {before:.1f} | {p:.1f} ({dp * 100:+.2f} %) | "
                        f"{m:.1f} ({dm * 100:+.2f} %) | {(dp - dm) / abs(dm) * 100:+.1f} % | {(p / m - 1) * 100:+.2f} % |")
    with open(os.path.join(folder, "predictions.json"), "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    print("| round | change | edit | before (us) | predicted (change) | measured (change) | error of the change | "
          "error of the step |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
