#!/usr/bin/env python3
"""What shortens the launch gap after the attention's stage 1 when the q prep is fused (docs/step.md §7): the step
stack of step_validation.py with the ops before the attention varied one thing at a time, each variant captured in
a CUDA graph and replayed in rotation under one torch.profiler session (cuda_graphs.py).

In the step runs the kernel after a stage 1 starts 0.54 to 0.77 us after it with the q prep as five separate ops,
and 0.29 to 0.35 us after it with the q prep fused (H100 at 128 heads, H200 at 16 heads and at 128 heads with long
contexts); the copy's removal leaves it. The variants tell apart the count of kernels before the attention, the
bytes they write, and the ops themselves:

  separate      the q prep as five ops (split copy, Triton BMM, cat, scale, fp8 cast): the step runs' "before"
  fused         one Triton kernel: the step runs' "fused"
  none          no q prep at all
  fused_4tiny   fused, then four elementwise kernels on 4 KB (the separate's kernel count, not its bytes)
  fused_fill    fused, then one fill of as many bytes as the separate ops write beyond the fused kernel
  bmm_only      the split copy and the BMM (two of the five)
  no_quant      the split copy, the BMM and the cat (three of the five)
  split_only    the split copy alone
  bmm_alone     the BMM alone, on a q_nope split once before the capture

Each layer then runs RoPE + KV write, the block-table copy, the attention (policy --policy) and the GEMM.

  python3 scripts/gap_probe.py --lib DIR/libmlasim_attention.so --out OUT [--heads 16] [--batch 32] \
      [--context 4096] [--cycles 30]

Writes OUT/gaps.json: per variant, the medians over every layer of every replay of the gap after stage 1 (to the
next kernel), stage 1's duration, the gap before the GEMM and the GEMM's duration, the kernel after stage 1 and the
step time by CUDA events; OUT/trace.json.gz, the profiler's trace.
"""
import argparse
import gzip
import json
import os
import re
import statistics

import torch
import triton

from cuda_graphs import Ranges, capture, profile_rotating, replay_us, rotation
from step_validation import (HEADS, LATENT, NOPE, ROPE, Attention, Stack, check_kernels, load_lib,
                             q_absorb_bmm_kernel)

VARIANTS = ["separate", "fused", "none", "fused_4tiny", "fused_fill", "bmm_only", "no_quant", "split_only",
            "bmm_alone"]


def rule(kernel_class):
    """The stack's name rule for `kernel_class` (data/step/mlasim-torch.json, as mlasim step classes kernels)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "step", "mlasim-torch.json")) as f:
        return re.compile(next(r["match"] for r in json.load(f)["rules"] if r["class"] == kernel_class))


STAGE1, REDUCE = rule("mla_stage1"), rule("mla_reduce")
GEMM = re.compile(r"^nvjet|gemm")  # the GEMM is of class other in the rules


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--heads", type=int, default=HEADS, choices=[16, 128])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--context", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--cycles", type=int, default=30)
    ap.add_argument("--copy-mb", type=int, default=16)
    ap.add_argument("--policy", default="aiter-v1")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lib = load_lib(a.lib)
    s = Stack(a.batch, a.context, a.layers, 64, a.copy_mb, seed=a.batch, heads=a.heads)
    check_kernels(s)
    workload = {"gpu": a.gpu, "batch": {"kind": "uniform", "count": a.batch, "context": a.context}, "qlen": 1,
                "heads": a.heads, "q_dtype": "bf16", "kv_dtype": "bf16", "page_size": 64}
    attention = Attention(lib, workload, a.policy)
    tiny = torch.zeros(1024, dtype=torch.float32, device="cuda")
    # What the separate q prep writes beyond the fused kernel: the split copy, the BMM's output, the cat (bf16).
    rows = a.batch * a.heads
    fill_bytes = rows * (NOPE + LATENT + LATENT + ROPE) * 2
    fill = torch.empty(fill_bytes // 4, dtype=torch.float32, device="cuda")
    nope = [q[..., :NOPE].contiguous() for q in s.q]

    def q_prep(variant, layer):
        if variant == "separate":
            s.q_prep_separate(layer)
        elif variant in ("fused", "fused_4tiny", "fused_fill"):
            s.q_prep_fused(layer)
            if variant == "fused_4tiny":
                for _ in range(4):
                    tiny.mul_(0.5)
            elif variant == "fused_fill":
                fill.fill_(float(layer))
        elif variant == "split_only":
            s.q_nope_split = s.q[layer][..., :NOPE].contiguous()
        elif variant in ("bmm_only", "no_quant", "bmm_alone"):
            q = s.q[layer]
            q_nope = nope[layer] if variant == "bmm_alone" else q[..., :NOPE].contiguous()
            grid = (s.heads, triton.cdiv(s.batch, 16), LATENT // 128)
            q_absorb_bmm_kernel[grid](q_nope, s.w_uk[layer], s.absorbed, s.batch, H=s.heads, BLOCK_B=16, BLOCK_N=128,
                                      K=NOPE, N=LATENT)
            if variant == "no_quant":
                s.q_cat = torch.cat([s.absorbed, q[..., NOPE:]], dim=-1)

    def body(variant):
        for layer in range(a.layers):
            q_prep(variant, layer)
            s.rope_kv_write(layer)
            s.block_table_static.copy_(s.block_table)
            attention()
            s.rest(layer)

    graphs = {v: capture(lambda v=v: body(v), warmup=3, replays=3) for v in VARIANTS}
    samples = {v: [] for v in VARIANTS}
    for c in range(a.cycles):
        for v in rotation(VARIANTS, c):
            samples[v].append(replay_us(graphs[v]))
    path = os.path.join(a.out, "trace.json")
    trace = profile_rotating(graphs, a.cycles, lambda v: "gap_probe " + v, path)
    with gzip.open(path + ".gz", "wt", compresslevel=9) as g:
        json.dump(trace, g)

    events = trace["traceEvents"]
    ranges = Ranges(events, "gap_probe ")
    kernels = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")),
                     key=lambda e: e["ts"])
    by_variant = {v: [] for v in VARIANTS}
    for e in kernels:
        i = ranges.index(e["ts"])
        if i >= 0:
            by_variant[ranges.name(i)].append(e)
    out = {"workload": workload, "policy": a.policy, "layers": a.layers, "cycles": a.cycles, "copy_mb": a.copy_mb,
           "fill_bytes": fill_bytes, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "variants": {}}
    for v, ks in by_variant.items():
        after, stage1, gemm_gap, gemm, nxt = [], [], [], [], {}
        for x, y in zip(ks, ks[1:]):
            gap = y["ts"] - (x["ts"] + x["dur"])
            if gap > 20:  # between two replays
                continue
            if STAGE1.search(x["name"]):
                after.append(gap)
                stage1.append(x["dur"])
                name = y["name"][:60]
                nxt[name] = nxt.get(name, 0) + 1
            if GEMM.search(y["name"]) and not GEMM.search(x["name"]):
                gemm_gap.append(gap)
                gemm.append(y["dur"])
        med = lambda xs: statistics.median(xs) if xs else None
        out["variants"][v] = {"gap_after_stage1_us": med(after), "stage1_us": med(stage1),
                              "gap_before_gemm_us": med(gemm_gap), "gemm_us": med(gemm),
                              "kernels_per_step": len(ks) / a.cycles, "after_stage1": nxt,
                              "step_us_by_events": med(samples[v]), "stage1_samples": len(stage1)}
        r = out["variants"][v]
        print(f"{v:12s} gap after stage 1 {r['gap_after_stage1_us']:.3f} us, stage 1 {r['stage1_us']:.2f} us, "
              f"gap before the GEMM {r['gap_before_gemm_us']:.3f} us, GEMM {r['gemm_us']:.2f} us, "
              f"{r['kernels_per_step']:.0f} kernels, step {r['step_us_by_events']:.1f} us")
    with open(os.path.join(a.out, "gaps.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
