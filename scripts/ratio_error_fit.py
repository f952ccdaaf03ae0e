#!/usr/bin/env python3
"""The model's error on the ratio of two plans, per kernel class, into a GPU profile's "ratio_error" (docs/step.md
section 3): `mlasim report` over measurement sessions that no fit took as input (the sessions of one configuration
become one row, their median), the speedup pairs of each class (two policies measured on one workload, both rows of
the class): the median and the 90th percentile of |predicted ratio / measured ratio - 1|.
`mlasim step` takes the p90 as a policy edit's 90 % band.

  scripts/ratio_error_fit.py BINARY GPU CLASS CSV [CSV ...] [--date DATE] [--write]

Prints the class's figures; --write puts them into data/gpus/GPU.json. `mlasim calibrate` drops the field when it
refits a profile's parameters, so scripts/fit_profiles.sh runs this after its fits.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("gpu")
    ap.add_argument("kernel_class")
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    profile_path = os.path.join("data", "gpus", a.gpu + ".json")
    cmd = [a.binary, "report", "--gpu", profile_path, "--format", "json", "--sessions", "median"]
    for c in a.csv:
        cmd += ["--measurements", c]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"ratio_error_fit: {' '.join(cmd)} failed: {run.stderr.strip()}")
    pairs = json.loads(run.stdout).get("speedup_pairs_by_class", {}).get(a.kernel_class)
    if not pairs or pairs["pairs"] == 0:
        sys.exit(f"ratio_error_fit: no pairs of {a.kernel_class} in {', '.join(a.csv)}")
    entry = {
        "median_pct": pairs["median_abs_error_pct"],
        "p90_pct": pairs["p90_abs_error_pct"],
        "pairs": pairs["pairs"],
        "source": (f"scripts/ratio_error_fit.py, {a.date}: mlasim report --sessions median over "
                   f"{', '.join(a.csv)} (sessions no fit took as input), {pairs['pairs']} pairs of two policies on one "
                   f"workload; docs/step.md section 3"),
    }
    print(f"{a.gpu} {a.kernel_class}: {entry['pairs']} pairs, |ratio error| median {entry['median_pct']:.2f} %, "
          f"p90 {entry['p90_pct']:.2f} %")
    if a.write:
        with open(profile_path) as f:
            profile = json.load(f)
        profile.setdefault("ratio_error", {})[a.kernel_class] = entry
        with open(profile_path, "w") as f:
            f.write(json.dumps(profile, indent=2) + "\n")


if __name__ == "__main__":
    main()
