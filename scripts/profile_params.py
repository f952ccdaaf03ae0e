"""Writes measured cost parameters into a GPU profile (data/gpus/<gpu>.json) with their provenance: the shared
last step of scripts/l2_carry_fit.py, scripts/stream_kernel_fit.py and scripts/events_overhead_fit.py."""
import json


def write_measured_params(profile, entries, digits):
    """entries: (key, value, source) triples; each value rounded to `digits` places, kind "measured"."""
    with open(profile) as f:
        gpu = json.load(f)
    for key, value, source in entries:
        gpu["params"][key] = {"value": round(value, digits), "kind": "measured", "source": source}
    with open(profile, "w") as f:
        json.dump(gpu, f, indent=2)
        f.write("\n")
