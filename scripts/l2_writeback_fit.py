#!/usr/bin/env python3
"""Fits a kernel class's L2 write-back exposure (sim/l2_writeback.h, docs/step.md §6) to grid and neighbours probes:
how much of the memory curve's answer to the write-back of what the ops before it left dirty our attention's stage 1
shows.

  scripts/l2_writeback_fit.py MLASIM GPU CLASS CSV... [--pairs | --against-gemm] [--check] [--write DATE]
                                                           [--with-class NAME]...
  scripts/l2_writeback_fit.py MLASIM GPU CLASS --predict FOLLOWER,...   (the write-back probe's rows, predicted)
  scripts/l2_writeback_fit.py MLASIM GPU CLASS --predict-grid FOLLOWER,... [--against-reads]
                                                           (the grid probe's fills and copies)

For each probe row (a producer, then our attention as the follower; scripts/l2_carry_probe.py), the extra time over
the same follower after its baseline, less what the prior-writes law gives (model/l2_prior_writes.h), is set against
what the memory curve gives for the MB left dirty: the follower's stage 1 played by `mlasim predict` with the
bandwidth the write-back leaves (the formula of sim/src/l2_writeback.cpp, exposure 1), dirty MB as
l2_dirty_before_mb counts them. The exposure is the least-squares slope through 0, in [0, 4].

  grid rows (default): every producer against "none" (the follower after the previous repeat's follower, whose
                       outputs are dirty at its start)
  --pairs:             neighbours-probe rows whose producer ends with the block-table copy, against the same
                       producer without it (both after the GEMM of the layer before): a split follower's "none"
                       follows its own partials, the GEMM's 134 MB leaves the L2 clean

  --against-reads:     every grid producer against the reads alone (read:8 and read:24, their mean): the
                       follower after them starts with a clean L2, as the step stack's attention does after the
                       GEMM of the layer before and the copy's reads; "none" leaves its own outputs dirty and, on
                       the fp8 probes, runs it 0 to 2.8 us slower than after a read, by follower
  --share-floor:       fits the class's writeback_share_floor with the exposure (a grid of 0.01): the exposure rises
                       from none at that share of the CUs to all of it on every CU (sim/l2_writeback.h)

  --against-gemm:      the write-back probe's rows (scripts/l2_writeback_set.py): each producer after the GEMM
                       against the GEMM alone

--with-class NAME admits followers of another class that takes CLASS's exposure, having none of its own (a class cut
from CLASS by its tile width, model/kernel_class.h: wgmma-fp8-onepass from wgmma-fp8).

--check predicts the rows with the profile's exposure instead of fitting one (a check on rows the fit did not see);
--predict prints what the profile predicts for the write-back probe's rows before it runs, --predict-grid for the grid
probe's fills and copies before each follower, against the follower after its own previous repeat, or with
--against-reads after the reads alone (as fitted). --write sets data/gpus/GPU.json's `CLASS.writeback_exposure` (kind
measured, with the fit's sources and its 1 sigma) and, with --share-floor, `CLASS.writeback_share_floor`.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import tempfile

import l2_writeback_set
from l2_neighbours_table import load
from l2_writeback_set import STACK_COPY

MB = 1e6
# The grid probe's fills and copies (scripts/l2_carry_probe.py --set grid), as --predict-grid predicts them.
GRID_FILLS_AND_COPIES = ["fill:4", "fill:8", "fill:12", "fill:16", "fill:20", "fill:24", "copy:8", "copy:16"]
# Its reads alone, the baseline of --against-reads: the follower after them starts with a clean L2, as the step
# stack's attention does after the GEMM of the layer before and the copy's reads.
GRID_READS = ["read:8", "read:24"]
CHUNKS = 40  # kL2PriorWritesChunks


def stack_ops(requests=16, heads=128):
    """The step stack's ops (read MB, written MB) at `requests`, from scripts/step_op_bytes.py's per-request bytes
    of its 128-head stack (data/measurements/h200/step_interleaved/b16_ctx4096/op_bytes.json)."""
    s = heads / 128
    r = requests
    q = {"split": (49152 * s * r, 32768 * s * r), "bmm": (16777216 * s + 32768 * s * r, 131072 * s * r),
         "cat": (147456 * s * r, 147456 * s * r), "scale": (147456 * s * r, 147456 * s * r),
         "quant": (147456 * s * r, 73728 * s * r)}
    return {"qsep": [q[k] for k in ("split", "bmm", "cat", "scale", "quant")],
            "qfused": [(16777216 * s + 49152 * s * r, 73728 * s * r)],
            "rope": [(17800 * s * r, 17536 * s * r)],
            "gemm": [(134217728 * s + 32768 * s * r, 8192 * s * r)]}


def producer_ops(spec):
    """Ops (read MB, written MB), oldest first."""
    out = []
    for part in spec.split("+"):
        kind, _, arg = part.partition(":")
        kind, _, requests = kind.partition("@")  # qsep@B: the stack's op at B requests (l2_carry_probe.py --set batch)
        stack = stack_ops(int(requests) if requests else 16)
        if kind == "none":
            continue
        if kind in stack:
            out += [(a / MB, b / MB) for a, b in stack[kind]]
        elif kind == "fill":
            out.append((0.0, float(arg)))
        elif kind == "read":
            out.append((float(arg), 0.0))
        elif kind == "copy":
            out.append((float(arg), float(arg)))
        else:
            raise ValueError(spec)
    return out


def ramp(share, floor):
    """sim/src/l2_writeback.cpp's writeback_exposure_at, as a factor of the exposure: none at or below the share
    floor, all of it on every CU (a floor of 0: all of it at any share)."""
    return 1.0 if floor <= 0 else min(1.0, max(0.0, (share - floor) / (1.0 - floor)))


def chunks_back(ops, stop):
    """model/l2_prior_writes.h's for_each_chunk_back: (read MB, written MB, MB touched after it) of each op's chunks,
    newest first, op by op until more than `stop` MB is touched."""
    touched = 0.0
    for r_mb, w_mb in reversed(ops):
        if touched > stop:
            break
        r, w = r_mb / CHUNKS, w_mb / CHUNKS
        for _ in range(CHUNKS):
            yield r, w, touched
            touched += r + w


def dirty_before(ops, window, cap):
    """sim/src/l2_writeback.cpp's l2_dirty_before_mb."""
    return min(sum(w for _, w, touched in chunks_back(ops, window) if w > 0 and touched + w <= window), cap)


def law_us(ops, p):
    """model/l2_prior_writes.cpp."""
    if not all(p.get(k, 0) > 0 for k in ("l2_prior_writes_us_per_mb", "l2_prior_writes_rho_mb",
                                          "l2_prior_writes_max_us", "l2_prior_writes_cap_mb")):
        return 0.0
    total = after = 0.0
    cap = p["l2_prior_writes_cap_mb"]
    for r, w, touched in chunks_back(ops, cap):
        if w > 0 and touched + w <= cap:
            total += w * p["l2_prior_writes_us_per_mb"] * math.exp(after / p["l2_prior_writes_rho_mb"])
        after += r + p.get("l2_prior_writes_gamma", 0.0) * w
    return min(p["l2_prior_writes_max_us"], total)


class Curve:
    """The memory curve's answer (us) for a follower and dirty MB, exposure 1: sim/src/l2_writeback.cpp."""

    def __init__(self, mlasim, gpu):
        self.mlasim, self.gpu = mlasim, gpu
        with open(os.path.join("data", "gpus", gpu + ".json")) as f:
            self.profile = json.load(f)
        self.p = {k: v["value"] for k, v in self.profile["params"].items()}
        self.window = self.profile["l2_mib"] * (1 << 20) / MB
        self.cache = {}
        self.clean_cache = {}  # each follower's prediction at the profile's bandwidth
        self.classes = {}  # the kernel class each follower's plan runs

    def clean(self, follower):
        """The follower's prediction with the profile as it is (made once per follower)."""
        if follower not in self.clean_cache:
            self.clean_cache[follower] = self.predict(follower, self.p["b_hbm_tbps"])
        return self.clean_cache[follower]

    def predict(self, follower, b_hbm):
        b, ctx, pol, heads, dtype = l2_writeback_set.attention_follower(follower)
        prof = json.loads(json.dumps(self.profile))
        prof["params"]["b_hbm_tbps"]["value"] = b_hbm
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(prof, f)
        try:
            out = subprocess.run([self.mlasim, "predict", "--gpu", f.name, "--batch", str(b), "--context", str(ctx),
                                  "--heads", str(heads), "--q-dtype", dtype, "--kv-dtype", dtype, "--page-size", "64",
                                  "--policy", pol, "--format", "json"], check=True, capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        return json.loads(out.stdout)

    def us(self, follower, dirty):
        if dirty <= 0:
            return 0.0
        key = (follower, round(dirty, 3))
        if key not in self.cache:
            B = self.p["b_hbm_tbps"]
            clean = self.clean(follower)
            self.classes[follower] = clean["kernel_class"]
            as_reads = dirty * self.p["l2_carry_us_per_mb"] * B
            slowed = self.predict(follower, B / (1 + as_reads / self.window))
            read_mb = clean["stage1_read_bytes"] / MB  # from memory: a multi-pass work reads its KV again
            self.cache[key] = max(0.0, slowed["stage1_us"] - clean["stage1_us"]) * min(1.0, self.window / read_mb)
        return self.cache[key]

    def own_dirty_mb(self, follower):
        """What the follower leaves dirty as the next repeat's follower starts: its bf16 outputs (of either dtype)
        and, for a plan that splits, the fp32 partials and LSEs its reduce read back (sim/attention_bytes.h)."""
        b, _, _, heads, _ = l2_writeback_set.attention_follower(follower)
        partials = self.clean(follower).get("num_partials", 0)
        return (b * heads * 512 * 2 + partials * heads * (512 * 4 + 4)) / MB


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mlasim")
    ap.add_argument("gpu")
    ap.add_argument("cls")
    ap.add_argument("csv", nargs="*")
    ap.add_argument("--pairs", action="store_true")
    ap.add_argument("--against-gemm", action="store_true")
    ap.add_argument("--against-reads", action="store_true")
    ap.add_argument("--share-floor", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--with-class", action="append", default=[], metavar="NAME")
    ap.add_argument("--predict", metavar="FOLLOWERS")
    ap.add_argument("--predict-grid", metavar="FOLLOWERS")
    ap.add_argument("--write", metavar="DATE")
    a = ap.parse_args()
    curve = Curve(a.mlasim, a.gpu)
    cap = curve.p["l2_carry_cap_mb"]
    exposure = curve.p.get(f"{a.cls}.writeback_exposure", 0.0)
    share_floor = curve.p.get(f"{a.cls}.writeback_share_floor", 0.0)

    def share(follower):
        """The share of the GPU's CUs the follower's plan streams on."""
        return curve.clean(follower)["active_clusters"] / curve.profile["num_cu"]

    def effect(follower, ops1, ops0):
        """The dirty MB before the follower without and with the producer's ops, the memory curve's answer to their
        write-back (us, before the exposure), and the prior-writes law's change."""
        d1, d0 = dirty_before(ops1, curve.window, cap), dirty_before(ops0, curve.window, cap)
        c = curve.us(follower, d1) - curve.us(follower, d0)
        return d0, d1, c, law_us(ops1, curve.p) - law_us(ops0, curve.p)

    def predicted(follower, producer, base):
        return effect(follower, producer_ops(producer), producer_ops(base))

    def after_own(follower, producer):
        """effect() of a grid producer against none: the follower after its own previous repeat, whose outputs (and
        a split plan's partials) are dirty as it starts."""
        own = [(0.0, curve.own_dirty_mb(follower))]
        return effect(follower, own + producer_ops(producer), own)

    def print_predicted(follower, producer, width, d0, d1, c, law):
        c *= ramp(share(follower), share_floor)
        print(f"  {follower:34s} {producer:{width}s} dirty {d0:4.1f} -> {d1:4.1f} MB: {exposure * c + law:+6.2f} us "
              f"(write-back {exposure * c:+.2f}, law {law:+.2f})")

    def check_classes():
        wrong = {f: c for f, c in curve.classes.items() if c != a.cls and c not in a.with_class}
        if wrong:
            raise SystemExit(f"followers run other classes than {a.cls}: {wrong}")

    if a.predict:
        print(f"{a.gpu} {a.cls}.writeback_exposure {exposure}, writeback_share_floor {share_floor}; extra us over the "
              f"follower after the GEMM alone "
              f"(write-back + prior-writes law)")
        for producer, follower in l2_writeback_set.variants(a.predict.split(",")):
            if producer == "gemm":
                continue
            print_predicted(follower, producer, 34, *predicted(follower, producer, "gemm"))
        check_classes()
        return
    if a.predict_grid:
        base = "the grid's reads alone (mean of " + ", ".join(GRID_READS) + ")" if a.against_reads else "none"
        print(f"{a.gpu} {a.cls}.writeback_exposure {exposure}, writeback_share_floor {share_floor}; extra us over the "
              f"follower after {base} (write-back + prior-writes law)")
        for follower in a.predict_grid.split(","):
            reads = [after_own(follower, r) for r in GRID_READS] if a.against_reads else []
            for producer in GRID_FILLS_AND_COPIES:
                d0, d1, c, law = after_own(follower, producer)
                if reads:
                    c -= statistics.mean(r[2] for r in reads)
                    law -= statistics.mean(r[3] for r in reads)
                print_predicted(follower, producer, 8, d0, d1, c, law)
        check_classes()
        return
    rows = load(a.csv)
    points = []  # (follower, label, dirty MB before and with the producer, curve us, measured less the law us)
    read_baselines = {}  # follower -> (its time after the grid's reads, their curve us), for --against-reads

    def read_baseline(follower):
        if follower not in read_baselines:
            reads = [p for p in GRID_READS if (p, follower) in rows]
            read_baselines[follower] = (statistics.mean(rows[(p, follower)] for p in reads),
                                        statistics.mean(after_own(follower, p)[2] for p in reads)) if reads else None
        return read_baselines[follower]

    for (producer, follower), us in sorted(rows.items()):
        label = f"{producer} -> {follower}"
        if a.against_gemm:
            if not producer.startswith("gemm+") or ("gemm", follower) not in rows:
                continue
            d0, d1, c, law = predicted(follower, producer, "gemm")
            points.append((follower, label, d0, d1, c, us - rows[("gemm", follower)] - law))
            continue
        if a.pairs:
            if not (producer.startswith("gemm+") and producer.endswith("+" + STACK_COPY)):
                continue
            base_producer = producer[: -len("+" + STACK_COPY)]
            if (base_producer, follower) not in rows:
                continue
            d0, d1, c, law = predicted(follower, producer, base_producer)
            points.append((follower, label, d0, d1, c, us - rows[(base_producer, follower)] - law))
            continue
        if a.against_reads:
            if producer in ["none", "gemm"] + GRID_READS or read_baseline(follower) is None:
                continue
            base, c0 = read_baseline(follower)
            d0, d1, c, law = after_own(follower, producer)
            points.append((follower, label, d0, d1, c - c0, us - base - law))
            continue
        if producer in ("none", "gemm") or ("none", follower) not in rows:
            continue
        d0, d1, c, law = after_own(follower, producer)
        points.append((follower, label, d0, d1, c, us - rows[("none", follower)] - law))
    check_classes()

    def fit_at(floor, e=None):
        """The exposure with `floor` (least squares through 0, in [0, 4]; `e` where given), its residuals, the
        points' curves scaled by the floor's rise and their sum of squares."""
        cs = [c * ramp(share(follower), floor) for follower, _, _, _, c, _ in points]
        sxx = sum(c * c for c in cs)
        if e is None:
            e = min(4.0, max(0.0, sum(c * y for c, (*_, y) in zip(cs, points)) / sxx)) if sxx > 0 else 0.0
        return e, [y - e * c for c, (*_, y) in zip(cs, points)], cs, sxx

    def rms_of(resid):
        return math.sqrt(sum(r * r for r in resid) / len(resid)) if resid else 0.0

    if a.check:
        floor = share_floor
        e, resid, cs, sxx = fit_at(floor, exposure)
    elif a.share_floor:
        floor = min((f / 100 for f in range(0, 96)), key=lambda f: rms_of(fit_at(f)[1]))
        e, resid, cs, sxx = fit_at(floor)
    else:
        floor = 0.0
        e, resid, cs, sxx = fit_at(floor)
    n = len(points)
    rms = rms_of(resid)
    sigma = math.sqrt(sum(r * r for r in resid) / max(1, n - 1) / sxx) if sxx > 0 else 0.0
    print(f"{'row':70s} {'dirty MB':>13s} {'curve':>7s} {'meas-law':>8s} {'fit':>7s}")
    for (_, label, d0, d1, _, y), c in zip(points, cs):
        print(f"{label[:70]:70s} {d0:5.1f}->{d1:5.1f} {c:+7.2f} {y:+8.2f} {e * c:+7.2f}")
    floor_text = f", writeback_share_floor {floor:.2f}" if floor > 0 else ""
    if a.check:
        print(f"{a.gpu} {a.cls}.writeback_exposure {e:.3f}{floor_text} as committed: {n} rows, rms {rms:.2f} us, mean "
              f"|error| {sum(abs(r) for r in resid) / max(1, n):.2f} us, worst "
              f"{max((abs(r) for r in resid), default=0):.2f} us (without the write-back: rms "
              f"{math.sqrt(sum(y * y for *_, y in points) / max(1, n)):.2f} us)")
        return
    print(f"{a.gpu} {a.cls}.writeback_exposure = {e:.3f} +- {sigma:.3f}{floor_text} ({n} rows; rms {rms:.2f} us, "
          f"with none {math.sqrt(sum(y * y for *_, y in points) / max(1, n)):.2f} us)")
    if a.share_floor:
        for follower in sorted({f for f, *_ in points}, key=lambda f: (share(f), f)):
            mine = [(c, y) for (f, *_, y), c in zip(points, cs) if f == follower]
            print(f"  {follower:40s} on {share(follower) * curve.profile['num_cu']:3.0f} of "
                  f"{curve.profile['num_cu']} CUs: exposure {e * ramp(share(follower), floor):.3f}, rms "
                  f"{rms_of([y - e * c for c, y in mine]):.2f} us over {len(mine)} rows")
    if a.write:
        date = a.write
        path = os.path.join("data", "gpus", a.gpu + ".json")
        with open(path) as f:
            prof = json.load(f)
        mode = "--pairs " if a.pairs else "--against-reads " if a.against_reads else ""
        mode += "--share-floor " if a.share_floor else ""
        source = (f"scripts/l2_writeback_fit.py {mode}on {', '.join(a.csv)} ({n} rows, rms {rms:.2f} us), {date}; "
                  f"docs/step.md section 6")
        prof["params"][f"{a.cls}.writeback_exposure"] = {
            "value": round(e, 4), "kind": "measured", "std_error": round(sigma, 4), "source": source}
        if a.share_floor:
            prof["params"][f"{a.cls}.writeback_share_floor"] = {
                "value": round(floor, 2), "kind": "measured", "source": source + " (the floor on a grid of 0.01)"}
        with open(path, "w") as f:
            json.dump(prof, f, indent=2)
            f.write("\n")

if __name__ == "__main__":
    main()
