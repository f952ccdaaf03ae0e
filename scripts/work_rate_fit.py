#!/usr/bin/env python3
"""Fits a bf16 wgmma kernel class's per-work stream rate to the works of measured timelines (docs/validation.md
§7.3): its rate alone, how sharply it falls as more works stream at once (the memory-curve knee), and its grid
kernel's factor, and says how the profile's values predict the same works.

  scripts/work_rate_fit.py GPU TIMELINE_DIR... [--class wgmma-bf16|wgmma-bf16-pair] [--qlen Q] [--page P]
                                                        (about 6 minutes on the H200's 42 timelines of 16 heads)

Each work of each timeline (`mlasim validate --timeline`, data/measurements/<gpu>/timelines_*) of the class's
workloads (bf16 Q and KV, one query row unless --qlen says, every page size unless --page says; 16 heads for
wgmma-bf16, 128 for wgmma-bf16-pair) is one row: its duration from start to end, its KV bytes (its pages, the last
one counted whole), and how many works were streaming (past their first KV, as the simulator counts them: a pair
kernel's work is one cluster of two SMs) at each moment of its own streaming span. Its duration is modelled as the
simulator's fluid engine plays a work (sim/src/fluid_engine.h):

  t0 + combine(bytes / mean rate, compute floor),   rate(k) = b / (1 + (k b / B)^n)^(1/n),   b = beta (/ f in a grid)

with the mean of rate(k(t)) over the work's streaming span, B the profile's b_hbm_tbps, the compute floor and its
overlap the profile's (16 rows padded to a 64-row MMA on one SM, or 128 rows on two, at matrix_tflops(bf16) x the
class's matrix_efficiency per SM). t0, beta, n and the grid factor f are fitted together by relative least squares
(Nelder-Mead), then again on each run folder (run1, run2; the timelines of a folder without runs join each of them);
the knee's uncertainty is the largest distance of a run's knee from the whole fit's. The profile's kernel fit
(scripts/fit_profiles.sh) does not take these values: its t_fix_us also carries the time between a cluster's works
and around them that the timelines leave out of the works, and its knee is fitted to kernel times
(docs/validation.md §7.3 says what the works' knee did to the predictions).
"""
import argparse
import glob
import gzip
import json
import math
import os

HEAD_DIM_QK, HEAD_DIM_V = 576, 512
# Per class: the heads of its workloads, the SMs of one work, the MMA rows it computes (a 16-row tile runs on a
# 64-row wgmma; the pair kernel's 128 rows are 64 on each of its two SMs).
CLASSES = {"wgmma-bf16": (16, 1, 64), "wgmma-bf16-pair": (128, 2, 128)}
K_STEP = 4


def works_of(path, heads, sms, qlen=1, page_size=None):
    """The timeline's rows (None when it is not the class's), each (grid, tokens, duration, {k: us streaming}); a work
    of `sms` SMs has an event on each, and k counts works."""
    with gzip.open(path) as f:
        d = json.load(f)
    m = d["otherData"]["mlasim"]
    w = m["workload"]
    if w["heads"] != heads or w["q_dtype"] != "bf16" or w["kv_dtype"] != "bf16" or w.get("qlen", 1) != qlen:
        return None
    if page_size is not None and w["page_size"] != page_size:
        return None
    grid = "splitkv" in m["kernel"]
    works = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "work" and e["pid"] == 1]
    spans = []
    for e in works:
        first = e["args"].get("first_kv_ts")
        spans.append((first if first is not None else e["ts"], e["ts"] + e["dur"]))
    # How many works stream between consecutive span edges.
    edges = sorted({x for s in spans for x in s})
    delta = {}
    for s, t in spans:
        delta[s] = delta.get(s, 0) + 1
        delta[t] = delta.get(t, 0) - 1
    level, streaming = 0, []
    for a, b in zip(edges, edges[1:]):
        level += delta.get(a, 0)
        streaming.append((a, b, level))
    rows = []
    page = w["page_size"]
    for e, (s, t) in zip(works, spans):
        tokens = (e["args"]["kv_end"] - e["args"]["kv_start"]) * page
        if tokens <= 0 or t <= s:
            continue
        hist = {}  # the streaming count in steps of K_STEP: fewer terms per work keep the fit to minutes
        for a, b, k in streaming:
            lo, hi = max(a, s), min(b, t)
            if hi > lo:
                kb = max(K_STEP * round(k / sms / K_STEP), 1)
                hist[kb] = hist.get(kb, 0.0) + (hi - lo)
        rows.append((grid, tokens, e["dur"], hist))
    return rows


def profile_terms(gpu, cls):
    prof = json.load(open(os.path.join("data", "gpus", f"{gpu}.json")))
    p = prof["params"]
    value = lambda name, default: p[name]["value"] if name in p else default
    eff = value(f"{cls}.matrix_efficiency", value("matrix_efficiency", 1.0))
    flops_per_us = prof["matrix_tflops"]["bf16"] * 1e6 * eff / prof["num_cu"] * CLASSES[cls][1]
    start = [value(f"{cls}.t_fix_us", value("t_fix_us", 6.0)), value(f"{cls}.beta_gbps", 40.0) * 1e3,
             value(f"{cls}.bw_knee", value("bw_knee", 4.0)),
             value(f"{cls}.grid_stream_factor", value("grid_stream_factor", 1.1))]
    return value("b_hbm_tbps", prof["hbm_tbps"]) * 1e6, flops_per_us, value("compute_overlap_n", 0.0), start


def model(rows, bandwidth, flops_per_us, overlap, mma_rows):
    per_token_flops = 2.0 * (HEAD_DIM_QK + HEAD_DIM_V) * mma_rows
    pre = [(grid, tokens * HEAD_DIM_QK * 2.0, per_token_flops * tokens / flops_per_us, dur,
            list(hist.items()), sum(hist.values())) for grid, tokens, dur, hist in rows]

    def predict(x, r):
        t0, beta, n, f = x
        grid, nbytes, floor, _, hist, span = r
        b = beta / f if grid else beta
        rate = sum(us * b / (1.0 + (k * b / bandwidth) ** n) ** (1.0 / n) for k, us in hist) / span
        m = nbytes / rate
        big = max(m, floor)
        if overlap <= 0:
            return t0 + big
        return t0 + big * ((m / big) ** overlap + (floor / big) ** overlap) ** (1.0 / overlap)

    def loss(x):
        if x[1] <= 1e3 or x[2] <= 0.5 or x[3] <= 0.3:
            return math.inf
        return sum(((predict(x, r) - r[3]) / r[3]) ** 2 for r in pre) / len(pre)

    return loss, predict, pre


def nelder_mead(fun, x0, iterations=500):
    n = len(x0)
    pts = [list(x0)] + [[v * (1.1 if i == j else 1.0) for j, v in enumerate(x0)] for i in range(n)]
    vals = [fun(p) for p in pts]
    for _ in range(iterations):
        order = sorted(range(n + 1), key=vals.__getitem__)
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        at = lambda s: [c[j] + s * (pts[-1][j] - c[j]) for j in range(n)]
        xr = at(-1.0)
        fr = fun(xr)
        if fr < vals[0]:
            xe = at(-2.0)
            fe = fun(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = at(0.5)
            fc = fun(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(n)]
                    vals[i] = fun(pts[i])
    best = min(range(n + 1), key=vals.__getitem__)
    return pts[best], vals[best]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gpu")
    ap.add_argument("timelines", nargs="+")
    ap.add_argument("--class", dest="cls", default="wgmma-bf16", choices=sorted(CLASSES))
    ap.add_argument("--qlen", type=int, default=1, help="query rows per request of the workloads taken")
    ap.add_argument("--page", type=int, help="page size of the workloads taken (default: every one)")
    a = ap.parse_args()
    if not os.path.exists(os.path.join("data", "gpus", f"{a.gpu}.json")):
        ap.error(f"gpu: no profile data/gpus/{a.gpu}.json (run from the repository root)")
    bandwidth, flops_per_us, overlap, start = profile_terms(a.gpu, a.cls)
    heads, sms, mma_rows = CLASSES[a.cls]
    by_run, shared = {}, []  # shared: timelines of a folder without runs, in every run's fit
    files = 0
    for folder in a.timelines:
        for path in sorted(glob.glob(os.path.join(folder, "**", "*.json.gz"), recursive=True)):
            try:
                rows = works_of(path, heads, sms, a.qlen, a.page)
            except (OSError, EOFError, ValueError, KeyError, TypeError) as e:
                ap.error(f"timeline {path}: not a measured timeline of `mlasim validate --timeline` ({e})")
            if rows is None:
                continue
            files += 1
            run = next((part for part in path.split(os.sep) if part.startswith("run")), None)
            (by_run.setdefault(run, []) if run else shared).extend(rows)
    everything = shared + [r for rows in by_run.values() for r in rows]
    if not everything:
        ap.error(f"timelines: none of the {a.cls} class ({heads} heads, bf16 Q and KV, qlen {a.qlen}"
                 f"{f', page {a.page}' if a.page else ''}) under the folders given")

    def fit(rows):
        loss, predict, pre = model(rows, bandwidth, flops_per_us, overlap, mma_rows)
        x, v = nelder_mead(loss, start)
        x, v = nelder_mead(loss, x)  # a restart from the first answer
        return x, math.sqrt(v), loss, predict, pre

    x, rms, loss, predict, pre = fit(everything)
    before = math.sqrt(loss(start))
    runs = {run: fit(rows + shared)[0] for run, rows in sorted(by_run.items())} if len(by_run) > 1 else {}
    sigma = max((abs(r[2] - x[2]) for r in runs.values()), default=0.0)
    print(f"{a.gpu} {a.cls}: {len(everything)} works of {files} timelines")
    print(f"  fit: t0 {x[0]:.2f} us, beta {x[1] / 1e3:.2f} GB/s, knee {x[2]:.2f} +- {sigma:.2f}, grid factor "
          f"{x[3]:.3f}; rms {100 * rms:.2f} % (the profile's values: {100 * before:.2f} %)")
    for run, r in runs.items():
        print(f"  {run} alone: t0 {r[0]:.2f} us, beta {r[1] / 1e3:.2f} GB/s, knee {r[2]:.2f}, grid factor {r[3]:.3f}")
    print("  mean error by kind and streaming works (fit / the profile's values):")
    groups = {}
    for r in pre:
        kmean = sum(k * us for k, us in r[4]) / r[5]
        key = ("grid" if r[0] else "persistent", min(int(kmean // 32) * 32, 128))
        g = groups.setdefault(key, [0, 0.0, 0.0])
        g[0] += 1
        g[1] += (predict(x, r) - r[3]) / r[3]
        g[2] += (predict(start, r) - r[3]) / r[3]
    for (kind, k), (n, e, e0) in sorted(groups.items()):
        print(f"    {kind:10s} {k:3d}-{k + 31:3d} works: {n:5d} rows  {100 * e / n:+5.1f} % / {100 * e0 / n:+5.1f} %")


if __name__ == "__main__":
    main()
