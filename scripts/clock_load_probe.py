#!/usr/bin/env python3
"""Clock-under-load probe (docs/validation.md §0.5): does the SM clock fall as more SMs run our MLA kernels' matrix
math, and by how much does the time per KV token rise?

Each variant is our unsplit kernel (`fixed:splits=1`: one work per request, one cluster each, so B up to the GPU's
cluster places, 66 on a 132-SM GPU of 2-SM clusters) for B requests of CTX tokens at 128 heads, bf16, page 64, so
that every busy cluster does the same work and only the number of busy clusters changes. Twenty launches are
captured in one CUDA graph and replayed back to back for --seconds while nvidia-smi samples the SM clock and the
power draw every 50 ms; CUDA events time the replays.

  python3 scripts/clock_load_probe.py --lib DIR/libmlasim_attention.so --gpu h100 --out OUT [--seconds 2]

Writes OUT/clock_load.csv (one row per variant: clusters, the kernel's time per launch, the median SM clock and
power while it ran) and prints it.
"""
import argparse
import csv
import ctypes
import os
import statistics
import subprocess
import time

from cuda_graphs import capture, replay_us
from step_validation import HEADS, Attention, load_lib

LAUNCHES = 20


def sample_clocks(run, seconds):
    """Runs `run` repeatedly for `seconds` while nvidia-smi samples; returns the SM MHz and W samples taken while it
    ran (nvidia-smi starts before the load, so the samples of the first 0.3 s, before the load began, are dropped)."""
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                            "-lms", "50"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)  # nvidia-smi's first samples come late
    t_start = time.time()
    t_end = t_start + seconds
    while time.time() < t_end:
        run()
    smi.terminate()
    out, _ = smi.communicate()
    samples = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].replace(".", "").isdigit():
            samples.append((float(parts[0]), float(parts[1])))
    # Every 50 ms from nvidia-smi's start: keep those of the loop's seconds, the last ones.
    keep = samples[-int(seconds / 0.05):] if len(samples) > seconds / 0.05 else samples
    return [m for m, _ in keep], [w for _, w in keep]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--out", required=True)
    ap.add_argument("--context", type=int, default=4096)
    ap.add_argument("--batches", default="8,16,24,32,48,64")
    ap.add_argument("--seconds", type=float, default=2.0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lib = load_lib(a.lib)
    lib.mlasim_attention_destroy.argtypes = [ctypes.c_void_p]
    rows = []
    for b in [int(x) for x in a.batches.split(",")]:
        w = {"gpu": a.gpu, "batch": {"kind": "uniform", "count": b, "context": a.context}, "qlen": 1, "heads": HEADS,
             "q_dtype": "bf16", "kv_dtype": "bf16", "page_size": 64}
        att = Attention(lib, w, "fixed:splits=1")
        graph = capture(lambda: [att() for _ in range(LAUNCHES)])
        times = []

        def run():
            times.append(replay_us(graph) / LAUNCHES)

        for _ in range(20):  # to steady clocks and temperature
            run()
        times.clear()
        mhz, watts = sample_clocks(run, a.seconds)
        rows.append({"batch": b, "context": a.context, "clusters": b, "launches": len(times) * LAUNCHES,
                     "kernel_us": round(statistics.median(times), 3),
                     "us_per_kv_token": round(statistics.median(times) / a.context, 6),
                     "sm_mhz": statistics.median(mhz) if mhz else "", "sm_mhz_min": min(mhz) if mhz else "",
                     "power_w": statistics.median(watts) if watts else "", "clock_samples": len(mhz),
                     "predicted_us": round(att.predicted_us, 3)})
        print(rows[-1], flush=True)
        graph.reset()  # the graph refers to the handle's buffers: release it first
        lib.mlasim_attention_destroy(att.handle)
    with open(os.path.join(a.out, "clock_load.csv"), "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)


if __name__ == "__main__":
    main()
