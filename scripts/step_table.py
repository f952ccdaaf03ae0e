#!/usr/bin/env python3
"""The decode-step validation table (docs/step.md §4): for each round of data/measurements/h100/step, mlasim step
predicts each change's step from the "before" trace, and the trace of the change measures it.

  scripts/step_table.py build/cli/mlasim [data/measurements/h100/step]

writes DIR/predictions.json (every prediction with its command; tests/cli/step_cli_test.cpp checks that the CLI
still gives them) and prints the markdown table.
"""
import json
import os
import subprocess
import sys

WORKLOAD = ["--gpu", "h100", "--batch", "16", "--context", "4096", "--heads", "128", "--q-dtype", "bf16",
            "--kv-dtype", "bf16", "--page-size", "64", "--policy", "aiter-v1"]
# The fused kernel's bytes: q [16, 128, 192] bf16 and W_UK [128, 128, 512] bf16 read, [16, 128, 576] fp8 written.
FUSED_BYTES = 16 * 128 * 192 * 2 + 128 * 128 * 512 * 2 + 16 * 128 * 576
CHANGES = [("fused", f"fuse=q_prep:bytes={FUSED_BYTES}", "fuse the q prep (5 kernels) into one Triton kernel"),
           ("policy", "policy=fixed:splits=4", "split policy aiter-v1 (1 split, 16 clusters) -> fixed:splits=4"),
           ("nocopy", "remove=copy", "remove the 16 MiB block-table copy")]


def step(mlasim, trace, edits=()):
    args = [mlasim, "step", "--trace", trace, *WORKLOAD, "--format", "json"]
    for e in edits:
        args += ["--edit", e]
    return json.loads(subprocess.check_output(args)), args[1:]


def main():
    mlasim = sys.argv[1]
    folder = sys.argv[2] if len(sys.argv) > 2 else "data/measurements/h100/step"
    rounds = sorted({f.split("_r")[1].split(".")[0] for f in os.listdir(folder) if f.startswith("before_r")})
    out, rows = [], []
    for r in rounds:
        before_trace = os.path.join(folder, f"before_r{r}.json.gz")
        before = step(mlasim, before_trace)[0]["measured"]["step_us"]
        for name, edit, what in CHANGES:
            predicted, command = step(mlasim, before_trace, [edit])
            measured = step(mlasim, os.path.join(folder, f"{name}_r{r}.json.gz"))[0]["measured"]["step_us"]
            p, m = predicted["edited"]["step_us"], measured
            dp, dm = p / before - 1, m / before - 1
            out.append({"round": int(r), "change": name, "edit": edit, "command": "mlasim " + " ".join(command),
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
