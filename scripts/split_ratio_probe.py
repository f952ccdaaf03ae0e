#!/usr/bin/env python3
"""Split-ratio probe (docs/validation.md §0.7): our MLA kernels for a grid of workloads, each under several split
policies, timed as the campaigns time them, so that `mlasim report` can say how well the model predicts the ratio of
two plans' times on one workload (the speedup pairs), which is what a split-policy edit of `mlasim step` rests on.

Workloads: every batch x context of --batches and --contexts at --heads (16 or 128: what the grid kernels run), Q and
KV of --q-dtype and --kv-dtype (bf16 unless given; fp8 KV runs the fp8 kernel), page 64, qlen 1, the whole GPU;
policies: --policies. Each configuration's stage 1 + reduce (the C
interface of kernels/python/mlasim_attention.cpp) is captured in a CUDA graph and replayed 2 times for warm-up and
15 timed, each after a 64 MB read that leaves none of its bytes in L2, timed by CUDA events around the replay and
waited for.

  python3 scripts/split_ratio_probe.py --lib DIR/libmlasim_attention.so --gpu h100 --out OUT/rows.csv \
      --commit C --date D

Writes the rows in the project's measurement CSV (validate/measurement_csv.h; stage 1 and the reduce together in
kernel_us), which `mlasim report --measurements OUT/rows.csv --gpu h100` reads.
"""
import argparse
import csv
import ctypes
import statistics
import subprocess

import torch

from cuda_graphs import capture, replay_us
from l2_carry_probe import MB, f32, follow_read_kernel, read
from step_validation import Attention, load_lib

WARMUP, REPETITIONS = 2, 15
COLUMNS = ["gpu", "kernel", "policy", "batch", "context", "heads", "qo_len", "q_dtype", "kv_dtype", "page_size",
           "clusters", "stage1_us", "reduce_us", "kernel_us", "kv_bytes", "kv_tbps", "max_abs_err", "driver", "commit",
           "date", "source", "device", "sm_clock_mhz", "mem_clock_mhz"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--out", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--date", required=True)
    ap.add_argument("--heads", default="128")  # the grid kernels run 16 or 128 heads
    ap.add_argument("--batches", default="4,8,12,16,24,32,48,64")
    ap.add_argument("--contexts", default="2048,4096,8192,16384")
    ap.add_argument("--policies", default="aiter-v1,fixed:splits=1,fixed:splits=2,fixed:splits=4,fixed:splits=8")
    ap.add_argument("--q-dtype", default="bf16", choices=["bf16", "fp8"])
    ap.add_argument("--kv-dtype", default="bf16", choices=["bf16", "fp8"])
    a = ap.parse_args()
    lib = load_lib(a.lib)
    lib.mlasim_attention_destroy.argtypes = [ctypes.c_void_p]
    props = torch.cuda.get_device_properties(0)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,clocks.max.mem",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout.split(",")
    driver, sm_mhz, mem_mhz = (smi[0].strip(), smi[1].strip(), smi[2].strip()) if len(smi) == 3 else ("", "", "")
    flush, out = f32(64 * MB).uniform_(), torch.empty(1 << 16, dtype=torch.float32, device="cuda")
    source = (f"measured: scripts/split_ratio_probe.py --gpu {a.gpu} --heads {a.heads} --batches {a.batches} "
              f"--contexts {a.contexts} --policies {a.policies} --q-dtype {a.q_dtype} --kv-dtype {a.kv_dtype}")
    rows = []
    for heads in [int(h) for h in a.heads.split(",")]:
        for ctx in [int(c) for c in a.contexts.split(",")]:
            for b in [int(x) for x in a.batches.split(",")]:
                w = {"gpu": a.gpu, "batch": {"kind": "uniform", "count": b, "context": ctx}, "qlen": 1, "heads": heads,
                     "q_dtype": a.q_dtype, "kv_dtype": a.kv_dtype, "page_size": 64}
                for policy in a.policies.split(","):
                    try:
                        att = Attention(lib, w, policy)
                    except RuntimeError as e:  # a plan our kernels cannot run: said, and left out
                        print(f"{heads:4d} {b:3d} x {ctx:6d} {policy:18s} left out: {e}", flush=True)
                        continue
                    # Replayed from a CUDA graph, so that the host's launch does not reach the GPU after the
                    # flush has ended and land between the events.
                    graph = capture(att)
                    times = []
                    for i in range(WARMUP + REPETITIONS):
                        read(follow_read_kernel, flush, out, 8 * props.multi_processor_count)
                        us = replay_us(graph)
                        if i >= WARMUP:
                            times.append(us)
                    del graph
                    lib.mlasim_attention_destroy(att.handle)
                    us = statistics.median(times)
                    kind = "persistent" if policy.startswith("aiter") else "splitkv"
                    kv = b * ctx * 576 * (1 if a.kv_dtype == "fp8" else 2)
                    rows.append({"gpu": a.gpu, "kernel": f"mla_decode_wgmma_{kind}+mla_reduce", "policy": policy,
                                 "batch": b, "context": ctx, "heads": heads, "qo_len": 1, "q_dtype": a.q_dtype,
                                 "kv_dtype": a.kv_dtype, "page_size": 64, "clusters": 0, "stage1_us": "", "reduce_us": "",
                                 "kernel_us": us, "kv_bytes": kv, "kv_tbps": kv / us / 1e6, "max_abs_err": "",
                                 "driver": f"nvidia {driver}", "commit": a.commit, "date": a.date, "source": source,
                                 "device": torch.cuda.get_device_name(), "sm_clock_mhz": sm_mhz,
                                 "mem_clock_mhz": mem_mhz})
                    print(f"{heads:4d} {b:3d} x {ctx:6d} {policy:18s} {us:9.2f} us  predicted {att.predicted_us:9.2f}",
                          flush=True)
    with open(a.out, "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=COLUMNS)
        wr.writeheader()
        wr.writerows(rows)


if __name__ == "__main__":
    main()
