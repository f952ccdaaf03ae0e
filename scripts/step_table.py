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

# The fused kernel's bytes: q [16, 128, 192] bf16 and W_UK [128, 128, 512] bf16 read, [16, 128, 576] fp8 written.
FUSED_BYTES = 16 * 128 * 192 * 2 + 128 * 128 * 512 * 2 + 16 * 128 * 576


def workload_args(events):
    """The step's workload as mlasim flags, from the run's events.json."""
    w = events["workload"]
    return ["--gpu", w["gpu"], "--batch", str(w["batch"]["count"]), "--context", str(w["batch"]["context"]),
            "--heads", str(w["heads"]), "--q-dtype", w["q_dtype"], "--kv-dtype", w["kv_dtype"], "--page-size",
            str(w["page_size"]), "--policy", events["policy_a"]]


def changes(events):
    """(variant, edit, what) for each change the run measured."""
    return [("fused", f"fuse=q_prep:bytes={FUSED_BYTES}", "fuse the q prep (5 kernels) into one Triton kernel"),
            ("policy", f"policy={events['policy_b']}", f"split policy {events['policy_a']} -> {events['policy_b']}"),
            ("nocopy", "remove=copy", f"remove the {events['copy_mb']} MiB block-table copy")]


def step(mlasim, trace, workload, edits=()):
    args = [mlasim, "step", "--trace", trace, *workload, "--format", "json"]
    for e in edits:
        args += ["--edit", e]
    return json.loads(subprocess.check_output(args)), args[1:]


def main():
    mlasim = sys.argv[1]
    folder = sys.argv[2] if len(sys.argv) > 2 else "data/measurements/h100/step"
    with open(os.path.join(folder, "events.json")) as f:
        events = json.load(f)
    workload = workload_args(events)
    rounds = sorted({f.split("_r")[1].split(".")[0] for f in os.listdir(folder) if f.startswith("before_r")})
    out, rows = [], []
    for r in rounds:
        before_trace = os.path.join(folder, f"before_r{r}.json.gz")
        before = step(mlasim, before_trace, workload)[0]["measured"]["step_us"]
        for name, edit, what in changes(events):
            predicted, command = step(mlasim, before_trace, workload, [edit])
            measured = step(mlasim, os.path.join(folder, f"{name}_r{r}.json.gz"), workload)[0]["measured"]["step_us"]
            p, m = predicted["edited"]["step_us"], measured
            dp, dm = p / before - 1, m / before - 1
            out.append({"round": int(r), "change": name, "edit": edit, "workload": workload,
                        "command": "mlasim " + " ".join(command),
                        "before_us": before, "predicted_us": p, "measured_us": m,
                        "predicted_change_pct": dp * 100, "measured_change_pct": dm * 100,
                        "error_of_change_pct": (dp - dm) / abs(dm) * 100, "error_of_step_pct": (p / m - 1) * 100})
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
