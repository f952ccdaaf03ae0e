#!/usr/bin/env python3
"""L2 carry-over probe (docs/step.md §6): how much longer a kernel takes when the kernel before it left written
(dirty) lines in L2, which must reach HBM while the next kernel streams its own bytes.

Each variant is a producer followed by a follower, repeated --reps times with buffers of their own (so nothing a
follower reads is in L2 from an earlier repeat), captured once in a CUDA graph. Every cycle replays each variant
once, one further along the list each cycle, under one torch.profiler session; each kernel's device time comes from
the trace.

Producers
  none            nothing: the follower after the previous repeat's follower
  fill:MB         a kernel that writes MB megabytes (1e6 bytes) and reads nothing
  read:MB         a kernel that reads MB megabytes and writes nothing: clean lines in L2
  fillstream:MB   fill:MB, then a full-GPU read of 96 MB: is what the fill left dirty written back by then?
  copy:MB         a device-to-device copy of MB megabytes (torch's copy_, the step stack's block-table copy)
  fillread:MB     fill:MB, then a full-GPU read of the same MB: a split attention and its reduce, in miniature (the
                  partial outputs written, then read once)
  attn:B:CTX:POL  our MLA decode kernels (stage 1, and the reduce when the plan has partials) for B requests of CTX
                  tokens, 128 heads, bf16, page 64, planned by the split policy POL; attn:B:CTX:POL@H for H heads,
                  attn:B:CTX:POL[@H]/fp8 for fp8 Q and KV (l2_writeback_set.attention_follower)
  qsep, qfused    the step stack's q prep (docs/step.md §4) for 16 requests: five separate kernels (8.5 MB written)
                  or the fused one (1.2 MB written); qsep@B, qfused@B for B requests
  rope            the step stack's RoPE + KV write; rope@B for B requests
  gemm            the step stack's GEMM (reads 134 MB: what a layer leaves dirty is gone after it)
  A+B+...         the producers in that order
Followers
  gemm            the bf16 GEMM [16, 16384] x [16384, 4096] of the step stack (docs/step.md §4): HBM-bound
  gemm16:B        the step stack's GEMM at 16 heads, [B, 2048] x [2048, 4096] (16.8 MB of weights)
  full            a full-GPU read of 75 MB: HBM-bound
  full:MB         a full-GPU read of MB megabytes: how much must a follower move to write the dirty lines back?
  lat             a read of 75 MB by 16 programs: latency-bound, as the unsplit attention of the stack
  attn:B:CTX:POL  our MLA decode kernels as the follower (128 heads; POL@H for H heads, 16 or 128; /fp8 for fp8)
  copyf:MB        a device-to-device copy of MB megabytes, buffers apart from a copy producer's

Sets (--set)
  carry       what slows the kernel after a split attention (§6): synthetic producers before HBM-bound followers,
              and our attention before the GEMM (the default; the committed runs)
  neighbours  what slows the attention and the copy after the ops before them in a layer (§4's neighbours):
              synthetic producers and the step stack's own ops before our attention of 5 plans and before a copy
  order       does it matter whether the dirty lines are older or newer than clean ones read around them: fills
              and reads in both orders before the unsplit attention of 16 x 4096
  grid        an attention (--follower, the unsplit 16 x 4096 one by default) after a fill of D MB then a read,
              or a second fill, of R MB (D 4 to 24, R 0 to 32): the data a law of what the ops before the
              attention wrote and read, in order, is fitted to
  writeback   attentions (--follower, a comma list) after the step stack's GEMM, then fills or the block-table copy,
              against the GEMM alone (scripts/l2_writeback_set.py): the write-back before a stage 1 (section 6)
  follower    fills of 4 to 32 MB before full-GPU reads of 4 to 96 MB and the 16-head stack's GEMM: does a follower
              that moves less than the L2 holds write the dirty lines back (section 6)?
  batch       the step stack's layer at the follower's own batch (q prep separate or fused, with the copy or
              without, after the GEMM of the layer before) and fills then reads, before our unsplit 128-head
              attention at 16 to 64 requests: how what the ops before it wrote slows it as its clusters grow
  copybatch   the same layer's ops before the block-table copy (the GEMM, the q prep separate or fused, the RoPE +
              KV write) at 8 to 64 requests, and fills then reads, before the copy (16 MiB; 8 and 32 MiB at three
              batches): how what the q prep wrote slows the copy after it

  python3 scripts/l2_carry_probe.py --lib DIR/libmlasim_attention.so --out OUT [--cycles 40] [--reps 3] [--set S]

Writes OUT/l2_carry.csv (one row per variant: the follower's and the producer's kernel times, median and spread
over cycles and repeats) and OUT/kernels.csv.gz (every kernel of every replay), and prints the table.
"""
import argparse
import csv
import gzip
import json
import os
import statistics
import time

import torch
import triton
import triton.language as tl

from cuda_graphs import Ranges, capture, profile_rotating
from step_validation import HEADS, Attention, Stack, load_lib
import l2_writeback_set

MB = 1000 * 1000
GEMM_K, GEMM_N = HEADS * 128, 4096


@triton.jit
def fill_kernel(ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.full([BLOCK], 1.0, tl.float32), mask=offs < n)


@triton.jit
def produce_read_kernel(ptr, out_ptr, n, per_prog, BLOCK: tl.constexpr):
    start = tl.program_id(0) * per_prog
    acc = tl.zeros([BLOCK], tl.float32)
    for off in range(start, start + per_prog, BLOCK):
        offs = off + tl.arange(0, BLOCK)
        acc += tl.load(ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(acc))


@triton.jit
def follow_read_kernel(ptr, out_ptr, n, per_prog, BLOCK: tl.constexpr):
    start = tl.program_id(0) * per_prog
    acc = tl.zeros([BLOCK], tl.float32)
    for off in range(start, start + per_prog, BLOCK):
        offs = off + tl.arange(0, BLOCK)
        acc += tl.load(ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(acc))


BLOCK = 2048


def read(kernel, buf, out, programs):
    n = buf.numel()
    per_prog = triton.cdiv(triton.cdiv(n, programs), BLOCK) * BLOCK
    kernel[(programs,)](buf, out, n, per_prog, BLOCK=BLOCK)


def fill(buf):
    fill_kernel[(triton.cdiv(buf.numel(), BLOCK),)](buf, buf.numel(), BLOCK=BLOCK)


def f32(nbytes):
    return torch.empty(nbytes // 4, dtype=torch.float32, device="cuda")


class Probe:
    def __init__(self, lib, reps, sms, gpu="h100"):
        self.lib, self.reps, self.sms, self.gpu = lib, reps, sms, gpu
        self.out = torch.empty(1 << 16, dtype=torch.float32, device="cuda")
        self.pool = {}
        self.attn = {}
        g = torch.Generator(device="cuda").manual_seed(7)
        self.h = (torch.rand(16, GEMM_K, generator=g, device="cuda") - 0.5).to(torch.bfloat16)
        self.w = [((torch.rand(GEMM_K, GEMM_N, generator=g, device="cuda") - 0.5) * 0.01).to(torch.bfloat16)
                  for _ in range(reps)]
        self.stack = None

    def step_stack(self, batch=16):
        # The step stack's tensors, one layer per repeat (16 requests x 4096 tokens, the validated workload; other
        # batches at 2048 tokens: the context sizes only the KV cache the RoPE kernel writes one row of).
        if self.stack is None:
            self.stack = {16: Stack(16, 4096, self.reps, 64, 16)}
        if batch not in self.stack:
            self.stack[batch] = Stack(batch, 2048, self.reps, 64, 16, seed=batch)
        return self.stack[batch]

    def gemm16(self, batch):
        # The 16-head stack's GEMM (step_validation.Stack.rest at 16 heads): its weights apart for every repeat.
        key = ("gemm16", batch)
        if key not in self.pool:
            g = torch.Generator(device="cuda").manual_seed(11)
            r = lambda *shape: (torch.rand(*shape, generator=g, device="cuda") - 0.5).to(torch.bfloat16)
            self.pool[key] = (r(batch, 16 * 128), [r(16 * 128, GEMM_N) * 0.01 for _ in range(self.reps)])
        return self.pool[key]

    def buffers(self, tag, nbytes, slot=0):
        # `slot`: a part's place in a composite producer; two parts of one kind get buffers of their own.
        key = (tag, nbytes, slot)
        if key not in self.pool:
            self.pool[key] = [f32(nbytes).uniform_() for _ in range(self.reps)]
        return self.pool[key]

    def attention(self, spec, role):
        # Producers and followers of one configuration get objects of their own: no inputs shared in L2.
        key = (spec, role)
        if key not in self.attn:
            b, ctx, pol, heads, dtype = l2_writeback_set.attention_follower(spec)
            w = {"gpu": self.gpu, "batch": {"kind": "uniform", "count": b, "context": ctx}, "qlen": 1,
                 "heads": heads, "q_dtype": dtype, "kv_dtype": dtype, "page_size": 64}
            self.attn[key] = [Attention(self.lib, w, pol) for _ in range(self.reps)]
        return self.attn[key]

    def op(self, spec, role, slot=0):
        """The op of repeat i for a producer or follower spec; `slot` is its place in a composite producer."""
        if "+" in spec:
            ops = [self.op(part, role, j) for j, part in enumerate(spec.split("+"))]
            return lambda i: [o(i) for o in ops]
        kind = spec.split(":")[0]
        stack_op, _, batch = kind.partition("@")
        if stack_op in ("qsep", "qfused", "rope"):
            s = self.step_stack(int(batch) if batch else 16)
            f = {"qsep": s.q_prep_separate, "qfused": s.q_prep_fused, "rope": s.rope_kv_write}[stack_op]
            return lambda i: f(i)
        if kind == "copyf":
            nbytes = int(float(spec.split(":")[1]) * MB)
            src, dst = self.buffers("copyfsrc", nbytes), self.buffers("copyfdst", nbytes)
            return lambda i: dst[i].copy_(src[i])
        if kind == "none":
            return lambda i: None
        if kind == "fill":
            bufs = self.buffers("fill", int(float(spec.split(":")[1]) * MB), slot)
            return lambda i: fill(bufs[i])
        if kind == "read":
            bufs = self.buffers("read", int(float(spec.split(":")[1]) * MB), slot)
            return lambda i: read(produce_read_kernel, bufs[i], self.out, 8 * self.sms)
        if kind == "copy":
            nbytes = int(float(spec.split(":")[1]) * MB)
            src, dst = self.buffers("copysrc", nbytes, slot), self.buffers("copydst", nbytes, slot)
            return lambda i: dst[i].copy_(src[i])
        if kind == "fillread":
            bufs = self.buffers("fill", int(float(spec.split(":")[1]) * MB), slot)
            return lambda i: (fill(bufs[i]), read(produce_read_kernel, bufs[i], self.out, 8 * self.sms))
        if kind == "fillstream":
            bufs = self.buffers("fill", int(float(spec.split(":")[1]) * MB), slot)
            stream = self.buffers("stream", 96 * MB, slot)
            return lambda i: (fill(bufs[i]), read(produce_read_kernel, stream[i], self.out, 8 * self.sms))
        if kind == "gemm":
            return lambda i: self.h @ self.w[i]
        if kind == "gemm16":
            h, w = self.gemm16(int(spec.split(":")[1]))
            return lambda i: h @ w[i]
        if kind == "full":
            mb = float(spec.split(":")[1]) if ":" in spec else 75
            bufs = self.buffers("follow", int(mb * MB))
            return lambda i: read(follow_read_kernel, bufs[i], self.out, 8 * self.sms)
        if kind == "lat":
            bufs = self.buffers("follow", 75 * MB)
            return lambda i: read(follow_read_kernel, bufs[i], self.out, 16)
        if kind == "attn":
            objs = self.attention(spec, role)
            return lambda i: objs[i]()
        raise ValueError(spec)

    def capture(self, producer, follower):
        # The follower's kernels are found by name: a producer must not run a kernel of the follower's kind.
        if follower.split(":")[0] in [part.split(":")[0] for part in producer.split("+")]:
            raise ValueError(f"{producer} -> {follower}: the producer runs the follower's kind of kernel")
        p, f = self.op(producer, "producer"), self.op(follower, "follower")

        def body():
            for i in range(self.reps):
                p(i)
                f(i)

        return capture(body)


def follower_kernels(follower, names):
    """Indices of the follower's kernels in one repeat's kernel names (the producer's come first)."""
    if follower == "gemm" or follower.startswith("gemm16"):
        return [i for i, n in enumerate(names) if "splitKreduce" not in n and ("gemm" in n or "nvjet" in n
                                                                             or "sm90" in n or "cutlass" in n)]
    if follower in ("full", "lat") or follower.startswith("full:"):
        return [i for i, n in enumerate(names) if n.startswith("follow_read_kernel")]
    if follower.startswith("copyf"):
        return [len(names) - 1] if "memcpy" in names[-1] else []  # one copy kernel, the last of the repeat
    return [i for i, n in enumerate(names) if "mla_decode" in n]


def variants():
    v = [("none", f) for f in ("gemm", "full", "lat")]
    for mb in (2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 64):
        v += [(f"fill:{mb}", f) for f in (("gemm", "full", "lat") if mb not in (20, 28) else ("gemm",))]
    for mb in (4, 8, 16, 24, 32, 48):
        v += [(f"read:{mb}", f) for f in (("gemm", "full", "lat") if mb in (16, 48) else ("gemm",))]
    for mb in (16, 32):
        v += [(f"fillstream:{mb}", f) for f in ("gemm", "full", "lat")]
    for mb in (8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 64):
        v += [(f"fillread:{mb}", f) for f in (("gemm", "full") if mb % 8 == 0 else ("gemm",))]
    v += [(f"copy:{mb}", "gemm") for mb in (8, 16, 32)]
    attn_follow = "attn:16:4096:aiter-v1"
    v += [(p, attn_follow) for p in ("none", "fill:8", "fill:16", "fill:32", "fillstream:16", "copy:16", "read:16")]
    for b, ctx in ((8, 4096), (16, 4096), (24, 4096), (32, 4096), (40, 4096), (48, 4096), (12, 8192), (24, 8192),
                   (4, 16384)):
        for pol in ("aiter-v1", "fixed:splits=2", "fixed:splits=4"):
            v.append((f"attn:{b}:{ctx}:{pol}", "gemm"))
    return v


STACK_COPY = l2_writeback_set.STACK_COPY


def follower_variants():
    """Fills of W MB before HBM-bound followers that move F MB: the carry-over's share a follower pays as its own
    traffic grows past what the L2 holds beside the dirty lines (docs/step.md §6)."""
    followers = [f"full:{mb}" for mb in (4, 8, 12, 16, 24, 32, 48, 64, 96)] + ["gemm16:96", "gemm"]
    return [(p, f) for p in ("none", "fill:4", "fill:8", "fill:16", "fill:24", "fill:32") for f in followers]


def neighbour_variants():
    """Does what the ops before our attention left dirty in L2 slow it, and by how much (docs/step.md §4)?"""
    a = "attn:16:4096:aiter-v1"
    v = [("none", a)]
    v += [(f"fill:{mb}", a) for mb in (4, 8, 12, 16, 18, 20, 22, 24, 26, 28, 32, 40, 48, 64)]
    v += [(f"copy:{mb}", a) for mb in (4, 8, 12, 16, 20, 24, 32)]
    v += [(f"read:{mb}", a) for mb in (16, 32, 64)]
    # The step stack's layer ahead of its attention (before, fused, nocopy), alone and after the GEMM of the layer
    # before; and the same bytes written by fills.
    layers = [f"qsep+rope+{STACK_COPY}", f"qfused+rope+{STACK_COPY}", "qsep+rope", "qfused+rope"]
    v += [(p, a) for p in layers + ["gemm+" + p for p in layers] + ["gemm", "rope"]]
    v += [(f"fill:8.52+{STACK_COPY}", a), (f"fill:1.18+{STACK_COPY}", a), ("fill:8.52", a), ("fill:1.18", a)]
    for f in ("attn:16:4096:fixed:splits=4", "attn:16:4096:fixed:splits=2", "attn:24:2048:aiter-v1",
              "attn:12:8192:aiter-v1", "attn:24:2048:fixed:splits=2"):
        v += [(p, f) for p in ["none", "fill:8", "fill:16", "fill:24", "fill:32"] + ["gemm+" + p for p in layers[:3]]]
    c = "copyf:16.777216"
    v += [(p, c) for p in ("none", "fill:1", "fill:4", "fill:8", "fill:12", "fill:16", "fill:24", "gemm+qsep+rope",
                           "gemm+qfused+rope")]
    return v


def batch_variants():
    """The step stack's layer at the follower's own batch, and fills then reads, before our unsplit 128-head attention
    at 16 to 64 requests (docs/step.md §4: in the step runs the attention gains more from a fused q prep or a removed
    copy the more requests it runs, where the prior-writes law, fitted on 16 requests, gives less)."""
    v = []
    for b, ctx in ((16, 2048), (24, 2048), (32, 2048), (40, 2048), (48, 2048), (64, 2048), (32, 4096), (48, 4096)):
        a = f"attn:{b}:{ctx}:aiter-v1"
        layers = [f"qsep@{b}+rope@{b}+{STACK_COPY}", f"qfused@{b}+rope@{b}+{STACK_COPY}", f"qsep@{b}+rope@{b}",
                  f"qfused@{b}+rope@{b}"]
        v += [(p, a) for p in ["gemm"] + ["gemm+" + p for p in layers]]
        v += [(p, a) for p in ("read:24", "fill:16", "fill:16+read:16", "fill:16+read:32", "fill:8+read:24",
                               STACK_COPY)]
    return v


def copy_batch_variants():
    """The step stack's ops before its block-table copy at 8 to 64 requests, and fills then reads, before the copy
    (docs/step.md §7: in the step runs the copy after the fused q prep runs faster than after the separate one, by
    0.1 us at 16 requests and 1.2 us at 56)."""
    v = []
    for mb, batches in (("16.777216", (8, 16, 24, 32, 40, 48, 56, 64)), ("8.388608", (16, 32, 48)),
                        ("33.554432", (16, 32, 48))):
        c = f"copyf:{mb}"
        v += [(p, c) for b in batches for p in ("gemm", f"gemm+qsep@{b}+rope@{b}", f"gemm+qfused@{b}+rope@{b}")]
    c = "copyf:16.777216"
    v += [(p, c) for p in ("none", "read:24", "fill:4", "fill:8", "fill:12", "fill:16", "fill:24", "fill:32",
                           "fill:8+read:8", "fill:16+read:16", "fill:8+read:24", "fill:16+read:32", "gemm+fill:16")]
    return v


def order_variants():
    """Dirty lines older than clean ones (fill, then read) against newer (read, then fill), before our attention."""
    a = "attn:16:4096:aiter-v1"
    producers = ["none", "fill:8", "fill:16", "fill:24", "read:16", "read:32", "read:40",
                 "fill:24+read:16", "read:16+fill:24", "fill:16+read:16", "read:16+fill:16",
                 "fill:16+read:32", "read:32+fill:16", "fill:8+read:32", "fill:8+read:40", "read:40+fill:8"]
    return [(p, a) for p in producers]


def grid_variants(a="attn:16:4096:aiter-v1"):
    """A fill of D MB, then R MB read or written elsewhere, before our attention `a` (the unsplit 16 x 4096 one by
    default; a split plan's "none" follows its own partials, the GEMM alone is its clean baseline)."""
    v = [("none", a), ("gemm", a)]
    for d in (4, 8, 12, 16, 20, 24):
        v += [(f"fill:{d}", a)] + [(f"fill:{d}+read:{r}", a) for r in (4, 8, 16, 24, 32)]
    for d in (8, 16):
        v += [(f"fill:{d}+fill:{w}", a) for w in (8, 16, 24)]
    v += [(f"read:{r}", a) for r in (8, 24)]
    # The step stack's block-table copies (R MB read, R written) and its layer's bytes ahead of the attention.
    v += [(f"copy:{r}", a) for r in (8, 16)] + [(f"fill:8.52+{STACK_COPY}", a)]
    return v


def quantiles(xs):
    xs = sorted(xs)
    q = lambda p: xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))]
    return statistics.median(xs), q(0.1), q(0.9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cycles", type=int, default=40)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--set", default="carry",
                    choices=("carry", "neighbours", "order", "grid", "writeback", "follower", "batch", "copybatch"))
    ap.add_argument("--follower", default="attn:16:4096:aiter-v1",
                    help="the attention of --set grid; a comma list for --set writeback")
    ap.add_argument("--gpu", default="h100", help="the GPU profile our attention's plans are made for")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    probe = Probe(load_lib(a.lib), a.reps, props.multi_processor_count, a.gpu)
    vs = {"carry": variants, "neighbours": neighbour_variants, "order": order_variants, "follower": follower_variants,
          "batch": batch_variants, "copybatch": copy_batch_variants,
          "grid": lambda: grid_variants(a.follower),
          "writeback": lambda: l2_writeback_set.variants(a.follower.split(","))}[a.set]()
    graphs = {}
    for p, f in vs:
        graphs[(p, f)] = probe.capture(p, f)
    t0 = time.time()
    trace = profile_rotating(graphs, a.cycles, lambda n: f"probe {n[0]} -> {n[1]}", os.path.join(a.out, "all.json"))
    events = trace["traceEvents"]
    ranges = Ranges(events, "probe ")
    kernels = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
                     key=lambda e: e["ts"])
    per_replay = {}
    for k in kernels:
        i = ranges.index(k["ts"])
        if i >= 0:
            per_replay.setdefault(i, []).append(k)
    rows, raw = [], []
    by_variant = {}
    for i, ks in per_replay.items():
        by_variant.setdefault(ranges.name(i), []).append(ks)
    for p, f in vs:
        tag = f"{p} -> {f}"
        replays = by_variant.get(tag, [])
        assert len(replays) == a.cycles, f"{tag}: {len(replays)} replays in the trace, {a.cycles} run"
        fol, prod, gaps, sequences = [], [], [], set()
        for ks in replays:
            n = len(ks) // a.reps
            assert n * a.reps == len(ks), f"{tag}: {len(ks)} kernels for {a.reps} repeats"
            for r in range(a.reps):
                rep = ks[r * n:(r + 1) * n]
                idx = follower_kernels(f, [k["name"] for k in rep])
                assert idx, f"{tag}: no follower kernel among {[k['name'][:40] for k in rep]}"
                first = idx[0]
                sequences.add(tuple(k["name"][:60] for k in rep))
                fol.append(sum(rep[j]["dur"] for j in idx))
                prod.append(sum(k["dur"] for k in rep[:first]))
                if first > 0:
                    gaps.append(rep[first]["ts"] - (rep[first - 1]["ts"] + rep[first - 1]["dur"]))
                for j, k in enumerate(rep):
                    raw.append((tag, r, j, k["name"][:80], k["ts"], k["dur"]))
        # Every repeat must run the same kernels: objects of one configuration that ran different kernels would mix
        # two measurements in one row.
        assert len(sequences) == 1, f"{tag}: the repeats ran different kernels: {sequences}"
        fm, f10, f90 = quantiles(fol)
        pm = statistics.median(prod) if prod else 0.0
        partials = probe.attn[(p, "producer")][0].partials if p.startswith("attn") and "+" not in p else 0
        rows.append({"producer": p, "follower": f, "samples": len(fol), "follower_us": round(fm, 3),
                     "follower_p10_us": round(f10, 3), "follower_p90_us": round(f90, 3),
                     "producer_us": round(pm, 3), "gap_us": round(statistics.median(gaps), 3) if gaps else "",
                     "producer_partials": partials})
    with open(os.path.join(a.out, "l2_carry.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with gzip.open(os.path.join(a.out, "kernels.csv.gz"), "wt", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["variant", "repeat", "index", "kernel", "ts_us", "dur_us"])
        w.writerows(raw)
    meta = {"device": torch.cuda.get_device_name(), "sms": props.multi_processor_count,
            "l2_bytes": props.L2_cache_size, "torch": torch.__version__, "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M:%S"), "cycles": a.cycles, "reps": a.reps, "set": a.set,
            "gpu_profile": a.gpu,
            "follower": a.follower if a.set in ("grid", "writeback") else None,
            "profiled_s": round(time.time() - t0, 1)}
    with open(os.path.join(a.out, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
    print(json.dumps(meta))
    for r in rows:
        print(f"{r['producer']:28s} -> {r['follower']:22s} follower {r['follower_us']:8.2f} us "
              f"[{r['follower_p10_us']:.2f}, {r['follower_p90_us']:.2f}]  producer {r['producer_us']:8.2f} us "
              f"partials {r['producer_partials']}", flush=True)


if __name__ == "__main__":
    main()
