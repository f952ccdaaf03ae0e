"""What the prior-writes law fits share (scripts/l2_batch_law.py, scripts/l2_copy_law.py): a least-squares slope
over a grid of the law's other values, and the profile entries a fit writes."""
import itertools
import json
import math
import os


def fit_on_grid(grid, unit_costs_of, measured):
    """The slope k and grid point that minimise sum (k * unit - measured)^2, k >= 0. `grid` holds one tuple of values
    per parameter; unit_costs_of(point) gives each row's law at k = 1. Returns (sse, (k, *point), sxx)."""
    best = None
    for point in itertools.product(*grid):
        units = unit_costs_of(*point)
        sxx = sum(u * u for u in units)
        k = max(0.0, sum(u * y for u, y in zip(units, measured)) / sxx) if sxx > 0 else 0.0
        sse = sum((k * u - y) ** 2 for u, y in zip(units, measured))
        if best is None or sse < best[0]:
            best = (sse, (k, *point), sxx)
    return best


def write_measured(profile_path, profile, values, source, slope_field, sse, sxx, rows):
    """Sets `values` (profile key -> value) as measured with `source`, the slope's key `slope_field` with its
    standard error (the fit's sse over rows - 4 degrees of freedom), and writes the profile."""
    sigma = math.sqrt(sse / max(rows - 4, 1) / sxx) if sxx > 0 else 0.0
    for key, value in values.items():
        entry = {"value": round(value, 8), "kind": "measured", "source": source}
        if key == slope_field:
            entry["std_error"] = round(sigma, 8)
        profile["params"][key] = entry
    with open(profile_path, "w") as fh:
        fh.write(json.dumps(profile, indent=2) + "\n")


def report_and_write(a, script, what, law, keys, resid, measured, profile_path, profile, fit):
    """Prints the law's line (`what`: whose law and its slope's unit) with its rms over the rows (`resid`) against
    none (`measured`); with --write (and no --check) sets `keys` (the profile keys of k, rho, gamma and cap, in that
    order) from `fit` (fit_on_grid's answer)."""
    k, rho, gamma, cap = law
    n = len(measured)
    rms = math.sqrt(sum(r * r for r in resid) / n)
    rms_none = math.sqrt(sum(y * y for y in measured) / n)
    print(f"{a.gpu} {what.format(k=k)}, rho {rho} MB, gamma {gamma}, cap {cap} MB ({n} rows, rms {rms:.2f} us; "
          f"{rms_none:.2f} us with none)")
    if a.write and not a.check:
        source = (f"scripts/{script} on {', '.join(a.csv)} ({n} rows, rms {rms:.2f} us), {a.write}; "
                  "docs/step.md section 3")
        sse, _, sxx = fit
        write_measured(profile_path, profile, dict(zip(keys, law)), source, keys[0], sse, sxx, n)


def open_profile(gpu, keys, check):
    """data/gpus/GPU.json's path and contents, and with `check` the law as the profile holds it: the values of `keys`
    (k, rho, gamma, cap), else None."""
    path = os.path.join("data", "gpus", gpu + ".json")
    with open(path) as fh:
        profile = json.load(fh)
    return path, profile, tuple(profile["params"][k]["value"] for k in keys) if check else None
