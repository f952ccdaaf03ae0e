#!/usr/bin/env python3
"""A kernel class's own prior-writes law (model/l2_prior_writes.h, docs/step.md §3), fitted to the batch probe
(scripts/l2_carry_probe.py --set batch): our unsplit attention after the step stack's layer at its own batch, and
after fills then reads, at 16 to 64 requests. The GPU's law, fitted to the 16 x 4096 attention, gives the attention
after a layer the same 0.1 us back from a fused q prep or a removed copy at every batch; the probe measures 0.2 us at
16 requests and 0.7 to 1.5 us from 24 on. So the class's law scales its cost per MB written with the clusters its
plan streams on, and has no saturation:

  cost = sum over written chunks of  w * (k * clusters) * exp(A / rho),  A = MB read after it + gamma * MB written
         after it; a chunk with more than cap MB touched after it costs nothing

Rows (the mean of the probe's runs): each stack layer against the attention after the GEMM alone (the layer before
ends with it), each fill, read or copy against the attention after the probe's 24 MB read (a clean L2). k is the
least-squares slope; rho, gamma and cap come from a grid of values.

  scripts/l2_batch_law.py MLASIM GPU CLASS CSV [CSV ...] [--write DATE] [--check]

--check prints the rows against the profile's law for CLASS instead of fitting one; --write sets data/gpus/GPU.json's
CLASS.prior_writes_us_per_mb_per_cluster, _rho_mb, _gamma and _cap_mb (kind measured, with the fit's sources).
"""
import argparse
import json
import subprocess

from l2_grid_law import cost, ops_of
from l2_law_fit import fit_on_grid, open_profile, report_and_write
from l2_neighbours_table import load
from l2_writeback_set import attention_follower
from step_op_bytes import layer_ops, ops_mb

RHO = (8, 10, 12, 16, 20, 25, 30, 40)
GAMMA = (0, 0.25, 0.5, 0.75, 1.0, 1.5)
CAP = (40, 45, 50, 55, 60, 70, 80, 100)
GRID_BASE = "read:24"
LAYERS = {"before": (False, True), "fused": (True, True), "nocopy": (False, False), "both": (True, False)}


def stack_producer(b, fused, copy):
    return f"gemm+{'qfused' if fused else 'qsep'}@{b}+rope@{b}" + ("+copy:16.777216" if copy else "")


def rows_of(times, follower):
    """(label, producer ops, base ops, measured extra us) of one follower."""
    b, ctx, _, heads, _ = attention_follower(follower)
    stack = {"workload": {"heads": heads, "batch": {"context": ctx}, "page_size": 64}, "copy_mb": 16}
    gemm = ops_mb(stack, b, ["re:^nvjet|gemm", "re:splitKreduce"])
    rows = []
    for name, (fused, copy) in LAYERS.items():
        p = stack_producer(b, fused, copy)
        if (p, follower) in times and ("gemm", follower) in times:
            rows.append((name, gemm + layer_ops(stack, b, fused, copy), gemm,
                         times[(p, follower)] - times[("gemm", follower)]))
    for (p, f), us in sorted(times.items()):
        if f == follower and p != GRID_BASE and ops_of(p) and (GRID_BASE, f) in times:
            rows.append((p, ops_of(p), [], us - times[(GRID_BASE, f)]))
    return rows


def clusters_of(mlasim, gpu, follower):
    b, ctx, pol, heads, dtype = attention_follower(follower)
    out = subprocess.run([mlasim, "predict", "--gpu", gpu, "--batch", str(b), "--context", str(ctx), "--heads",
                          str(heads), "--q-dtype", dtype, "--kv-dtype", dtype, "--page-size", "64", "--policy", pol,
                          "--format", "json"], check=True, capture_output=True, text=True)
    p = json.loads(out.stdout)
    return p["active_clusters"], p["kernel_class"], p.get("num_partials", 0)


def unit_costs(rows, clusters, rho, gamma, cap):
    """Each row's law at k = 1 per cluster: (producer - base) cost."""
    return [clusters * (cost(ops, 1.0, rho, gamma, 1e9, cap) - cost(base, 1.0, rho, gamma, 1e9, cap))
            for _, ops, base, _ in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mlasim")
    ap.add_argument("gpu")
    ap.add_argument("cls")
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--write", metavar="DATE")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    times = load(a.csv)
    followers = sorted({f for _, f in times if f.startswith("attn:")}, key=lambda f: attention_follower(f)[1::-1])
    data = {}
    for f in followers:
        clusters, cls, partials = clusters_of(a.mlasim, a.gpu, f)
        if cls != a.cls or partials:
            raise SystemExit(f"{f} runs {cls} with {partials} partials: the law is fitted to unsplit {a.cls} plans")
        data[f] = (clusters, rows_of(times, f))
    keys = [f"{a.cls}.prior_writes_{f}" for f in ("us_per_mb_per_cluster", "rho_mb", "gamma", "cap_mb")]
    profile_path, profile, law = open_profile(a.gpu, keys, a.check)
    fit = None
    if not a.check:
        rows = [r for _, rs in data.values() for r in rs]
        units_of = lambda rho, gamma, cap: [u for c, rs in data.values() for u in unit_costs(rs, c, rho, gamma, cap)]
        fit = fit_on_grid((RHO, GAMMA, CAP), units_of, [r[3] for r in rows])
        law = fit[1]
    k, rho, gamma, cap = law
    resid = []
    print(f"{'row':48s} {'follower':24s} {'clusters':>8s} {'measured':>9s} {'law':>7s}")
    for f, (clusters, rows) in data.items():
        for u, (label, _, _, y) in zip(unit_costs(rows, clusters, rho, gamma, cap), rows):
            resid.append(y - k * u)
            print(f"{label:48s} {f:24s} {clusters:8d} {y:+9.2f} {k * u:+7.2f}")
    report_and_write(a, "l2_batch_law.py", a.cls + ": {k:.6f} us per MB per cluster", law, keys, resid,
                     [r[3] for _, rs in data.values() for r in rs], profile_path, profile, fit)


if __name__ == "__main__":
    main()
