#!/usr/bin/env python3
"""The copy's prior-writes law (model/l2_prior_writes.h, docs/step.md §3), fitted to the copy-batch probe
(scripts/l2_carry_probe.py --set copybatch): the step stack's block-table copy after the ops before it in a layer
(the GEMM of the layer before, the q prep separate or fused, the RoPE + KV write) at 8 to 64 requests, for copies of
8, 16 and 32 MiB. In the step runs the copy after the fused q prep ran up to 1.3 us faster than after the separate
one, more the more requests; the probe measures the same. The law has the form of the attention's, its cost per MB
written in proportion to the MB the copy reads (the probe's larger copies pay more), with no saturation:

  cost = sum over written chunks of  w * (k * copy_mb) * exp(A / rho),  A = MB read after it + gamma * MB written
         after it; a chunk with more than cap MB touched after it costs nothing

Rows (the mean of the probe's runs): the copy after each stack layer against the copy after the GEMM alone. k is the
least-squares slope; rho, gamma and cap (at most the L2) come from a grid of values.

  scripts/l2_copy_law.py GPU CSV [CSV ...] [--write DATE] [--check]

--check prints the rows against the profile's law instead of fitting one; --write sets data/gpus/GPU.json's
l2_copy_prior_writes_us_per_mb_per_copy_mb, _rho_mb, _gamma and _cap_mb (kind measured, with the fit's sources).
"""
import argparse

from l2_grid_law import cost
from l2_law_fit import fit_on_grid, open_profile, report_and_write
from l2_neighbours_table import load
from step_op_bytes import layer_ops, ops_mb

RHO = (10, 16, 20, 25, 30, 40, 50, 60, 80)
GAMMA = (0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
# A write with more than an L2 of traffic after it has left it before the copy starts: the cap stays within the
# H200's 60 MiB. (The probe alone does not bound it, its GEMM reading 134 MB before the q prep; a cap past the L2
# lets the copy of the layer before, past a 16-head attention, count as dirty in L2.)
CAP = (30, 35, 40, 45, 50, 55, 60)
# The probe's stack: 128 heads; its GEMM is the layer's at 16 requests (scripts/l2_carry_probe.py).
STACK = {"workload": {"heads": 128, "batch": {"context": 2048}, "page_size": 64}, "copy_mb": 16}
GEMM_REQUESTS = 16


def rows_of(times):
    """(label, copy MB, producer ops, base ops, measured extra us) of every stack layer before a copy."""
    gemm = ops_mb(STACK, GEMM_REQUESTS, ["re:^nvjet|gemm", "re:splitKreduce"])
    rows = []
    for (p, f), us in sorted(times.items(), key=lambda kv: (float(kv[0][1].split(":")[1]), kv[0][0])):
        parts = p.split("+")
        if not f.startswith("copyf:") or len(parts) != 3 or parts[0] != "gemm" or ("gemm", f) not in times:
            continue
        q, b = parts[1].split("@")
        rows.append((f"{p} -> {f}", float(f.split(":")[1]), gemm + layer_ops(STACK, int(b), q == "qfused", False),
                     gemm, us - times[("gemm", f)]))
    return rows


def unit_costs(rows, rho, gamma, cap):
    """Each row's law at k = 1 per MB copied: (producer - base) cost."""
    return [copy_mb * (cost(ops, 1.0, rho, gamma, 1e9, cap) - cost(base, 1.0, rho, gamma, 1e9, cap))
            for _, copy_mb, ops, base, _ in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gpu")
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--write", metavar="DATE")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    rows = rows_of(load(a.csv))
    if not rows:
        raise SystemExit(f"{', '.join(a.csv)}: no copy after a stack layer (scripts/l2_carry_probe.py --set copybatch)")
    keys = [f"l2_copy_prior_writes_{f}" for f in ("us_per_mb_per_copy_mb", "rho_mb", "gamma", "cap_mb")]
    profile_path, profile, law = open_profile(a.gpu, keys, a.check)
    fit = None
    if not a.check:
        fit = fit_on_grid((RHO, GAMMA, CAP), lambda rho, gamma, cap: unit_costs(rows, rho, gamma, cap),
                          [r[4] for r in rows])
        law = fit[1]
    k, rho, gamma, cap = law
    resid = []
    print(f"{'row':56s} {'measured':>9s} {'law':>7s}")
    for u, (label, _, _, _, y) in zip(unit_costs(rows, rho, gamma, cap), rows):
        resid.append(y - k * u)
        print(f"{label:56s} {y:+9.2f} {k * u:+7.2f}")
    report_and_write(a, "l2_copy_law.py", "copy: {k:.6f} us per MB written per MB copied", law, keys, resid,
                     [r[4] for r in rows], profile_path, profile, fit)


if __name__ == "__main__":
    main()
