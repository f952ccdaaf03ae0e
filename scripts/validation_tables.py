#!/usr/bin/env python3
"""The error tables of docs/validation.md section 0, from `mlasim report --format json` of the committed profiles.

Usage: scripts/validation_tables.py [MLASIM_BINARY]   (prints markdown; run from the repository root)
"""
import json
import subprocess
import sys

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/cli/mlasim"
M = "data/measurements"
RUNS = {
    "h100_held": ("h100", f"{M}/h100/campaign_standard-v1_590702c.csv", ["--held-out-every", "4"]),
    "h100_all": ("h100", f"{M}/h100/campaign_standard-v1_590702c.csv", []),
    "h200_tr": ("data/gpus/derived/h200_from_h100.json", f"{M}/h200/campaign_standard-v1_590702c.csv", []),
    "h200_held": ("h200", f"{M}/h200/campaign_standard-v1_590702c.csv", ["--held-out-every", "4"]),
    "h200_all": ("h200", f"{M}/h200/campaign_standard-v1_590702c.csv", []),
}


def report(gpu, measurements, extra):
    out = subprocess.run([BIN, "report", "--gpu", gpu, "--measurements", measurements, "--format", "json"] + extra,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


R = {k: report(*v) for k, v in RUNS.items()}


def cell(s):
    return "%.1f%% / %.1f%% / %+.1f%%" % (s["mape_pct"], s["p90_pct"], s["mean_signed_pct"])


print("| profile, rows | rows | MAPE / p90 / mean signed |")
print("|---|---|---|")
for k, h in [("h100_held", "h100 (fitted), held-out rows"), ("h100_all", "h100 (fitted), every row"),
             ("h200_tr", "h200 from the H100 fit (`data/gpus/derived/h200_from_h100.json`), every row: nothing of "
                         "the H200 campaign fitted"),
             ("h200_held", "h200 (own fit), held-out rows"), ("h200_all", "h200 (own fit), every row")]:
    print("| %s | %d | %s |" % (h, R[k]["all"]["rows"], cell(R[k]["all"])))
print()
print("| profile (every row) | speedup pairs: median / p90 of the error, faster policy named | best-policy pick: "
      "mean regret, within 3 % of the measured best, exact |")
print("|---|---|---|")
for k, h in [("h100_all", "h100 (fitted)"), ("h200_tr", "h200 from the H100 fit"), ("h200_all", "h200 (own fit)")]:
    p, b = R[k]["speedup_pairs"], R[k]["best_policy"]
    print("| %s | %d pairs: %.1f%% / %.1f%%; %.1f%% of the %d differing by >= 10%% | %d workloads: %.1f%%, %.1f%%, "
          "%.1f%% |" % (h, p["pairs"], p["median_abs_error_pct"], p["p90_abs_error_pct"], p["faster_named_pct"],
                        p["differing_pairs"], b["workloads"], b["mean_regret_pct"], b["within_3pct_pct"],
                        b["exact_pct"]))
print()
cols = [("h100_held", "H100 held out: rows, MAPE / p90 / signed"), ("h200_tr", "H200 from the H100 fit, every row"),
        ("h200_held", "H200 own fit, held out")]
for by in ["kernel class", "heads", "qlen", "kv dtype", "page size", "clusters", "measured", "policy"]:
    tabs, names = {}, []
    for k, _ in cols:
        t = [x for x in R[k]["slices"] if x["by"] == by][0]
        tabs[k] = {s["name"]: s for s in t["slices"]}
        names += [s["name"] for s in t["slices"] if s["name"] not in names]
    print("| %s | " % by + " | ".join(h for _, h in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for n in names:
        row = [("%d, %s" % (tabs[k][n]["rows"], cell(tabs[k][n])) if n in tabs[k] else "–") for k, _ in cols]
        print("| %s | %s |" % (n, " | ".join(row)))
    print()
