#!/usr/bin/env python3
"""Decode-step validation on a GPU (docs/step.md): a PyTorch stack of MLA decode layers, profiled with
torch.profiler before and after three real changes, so that `mlasim step` can predict each "after" from the
"before" trace and be checked against the measured one.

A layer runs, in this order:
  q prep     as four separate ops (a Triton q-absorb BMM, a split copy, torch.cat, an fp8 quant), or as one fused
             Triton kernel that does all four (the change vLLM #41839 made)
  RoPE + KV  one Triton kernel: rotary on q_pe and k_pe, the new token's row written to the KV cache
  copy       a device-to-device copy of the step's block table into a static buffer (the copy ATOM #387 removed)
  attention  our MLA decode kernels (stage 1 + reduce) for the plan of a split policy, through the C interface of
             kernels/python/mlasim_attention.cpp, queued on PyTorch's stream
  rest       one bf16 GEMM standing in for the rest of the layer (output projection and MLP)

  python3 scripts/step_validation.py --lib DIR/libmlasim_attention.so --out OUT [--layers 8] [--steps 10]

Each variant's step is captured in a CUDA graph and replayed, as serving engines run decode steps. Writes
OUT/traces.tar (the Chrome traces of the replays, gzipped), OUT/events.json (each variant's step time by CUDA
events) and prints them. The variants: before (separate q prep, policy A, copy), fused (q prep fused), policy (policy B),
nocopy (no copy); all four run in turn --rounds times (traces <variant>_r<round>.json.gz), so the
spread between rounds shows what a change smaller than the run-to-run drift cannot resolve.
"""
import argparse
import ctypes
import gzip
import json
import os
import statistics
import tarfile
import time

import torch
import triton
import triton.language as tl

from cuda_graphs import capture, replay_us

HEADS = 128
NOPE, ROPE, LATENT = 128, 64, 512
REST_N = 4096


@triton.jit
def q_absorb_bmm_kernel(q_ptr, w_ptr, out_ptr, B, H: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr,
                        K: tl.constexpr, N: tl.constexpr):
    h = tl.program_id(0)
    b0 = tl.program_id(1) * BLOCK_B
    n0 = tl.program_id(2) * BLOCK_N
    rb = b0 + tl.arange(0, BLOCK_B)
    rk = tl.arange(0, K)
    rn = n0 + tl.arange(0, BLOCK_N)
    q = tl.load(q_ptr + (rb[:, None] * H + h) * K + rk[None, :], mask=rb[:, None] < B, other=0.0)
    w = tl.load(w_ptr + (h * K + rk[:, None]) * N + rn[None, :])
    acc = tl.dot(q, w)
    tl.store(out_ptr + (rb[:, None] * H + h) * N + rn[None, :], acc.to(tl.bfloat16), mask=rb[:, None] < B)


@triton.jit
def q_prep_fused_kernel(q_ptr, w_ptr, out_ptr, B, inv_scale, H: tl.constexpr, BLOCK_B: tl.constexpr,
                        BLOCK_N: tl.constexpr, NOPE_D: tl.constexpr, ROPE_D: tl.constexpr, N: tl.constexpr):
    # q [B, H, NOPE_D + ROPE_D] bf16 -> out [B, H, N + ROPE_D] fp8: the absorbed nope part, then the rope part.
    h = tl.program_id(0)
    b0 = tl.program_id(1) * BLOCK_B
    part = tl.program_id(2)
    rb = b0 + tl.arange(0, BLOCK_B)
    row = rb[:, None] * H + h
    QD: tl.constexpr = NOPE_D + ROPE_D
    OD: tl.constexpr = N + ROPE_D
    if part * BLOCK_N < N:
        rk = tl.arange(0, NOPE_D)
        rn = part * BLOCK_N + tl.arange(0, BLOCK_N)
        q = tl.load(q_ptr + row * QD + rk[None, :], mask=rb[:, None] < B, other=0.0)
        w = tl.load(w_ptr + (h * NOPE_D + rk[:, None]) * N + rn[None, :])
        acc = tl.dot(q, w) * inv_scale
        tl.store(out_ptr + row * OD + rn[None, :], acc.to(tl.float8e4nv), mask=rb[:, None] < B)
    else:
        rr = tl.arange(0, ROPE_D)
        pe = tl.load(q_ptr + row * QD + NOPE_D + rr[None, :], mask=rb[:, None] < B, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * OD + N + rr[None, :], (pe * inv_scale).to(tl.float8e4nv), mask=rb[:, None] < B)


@triton.jit
def rope_kv_write_kernel(q_ptr, kv_c_ptr, k_pe_ptr, cos_ptr, sin_ptr, slot_ptr, cache_ptr, H: tl.constexpr,
                         QD: tl.constexpr, NOPE_D: tl.constexpr, HALF: tl.constexpr, LAT: tl.constexpr):
    b = tl.program_id(0)
    r = tl.arange(0, HALF)
    c = tl.load(cos_ptr + b * HALF + r)
    s = tl.load(sin_ptr + b * HALF + r)
    # q_pe of every head, rotated in place.
    rh = tl.arange(0, H)
    base = (b * H + rh[:, None]) * QD + NOPE_D
    x1 = tl.load(q_ptr + base + r[None, :]).to(tl.float32)
    x2 = tl.load(q_ptr + base + HALF + r[None, :]).to(tl.float32)
    tl.store(q_ptr + base + r[None, :], (x1 * c[None, :] - x2 * s[None, :]).to(tl.bfloat16))
    tl.store(q_ptr + base + HALF + r[None, :], (x2 * c[None, :] + x1 * s[None, :]).to(tl.bfloat16))
    # The new token's row of the cache: the latent, then the rotated k_pe.
    slot = tl.load(slot_ptr + b)
    rl = tl.arange(0, LAT)
    tl.store(cache_ptr + slot * (LAT + 2 * HALF) + rl, tl.load(kv_c_ptr + b * LAT + rl))
    k1 = tl.load(k_pe_ptr + b * 2 * HALF + r).to(tl.float32)
    k2 = tl.load(k_pe_ptr + b * 2 * HALF + HALF + r).to(tl.float32)
    tl.store(cache_ptr + slot * (LAT + 2 * HALF) + LAT + r, (k1 * c - k2 * s).to(tl.bfloat16))
    tl.store(cache_ptr + slot * (LAT + 2 * HALF) + LAT + HALF + r, (k2 * c + k1 * s).to(tl.bfloat16))


class Attention:
    """Our MLA decode kernels for one plan, queued on PyTorch's current stream."""

    def __init__(self, lib, workload, policy):
        self.lib = lib
        err = ctypes.create_string_buffer(1024)
        self.handle = lib.mlasim_attention_create(json.dumps(workload).encode(), policy.encode(), err, 1024)
        if not self.handle:
            raise RuntimeError(f"mlasim_attention_create({policy}): {err.value.decode()}")
        self.predicted_us = lib.mlasim_attention_predicted_us(self.handle)
        self.partials = lib.mlasim_attention_partials(self.handle)
        self.err = err

    def __call__(self):
        if self.lib.mlasim_attention_launch(self.handle, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream),
                                            self.err, 1024):
            raise RuntimeError(self.err.value.decode())


def load_lib(path):
    lib = ctypes.CDLL(path)
    lib.mlasim_attention_create.restype = ctypes.c_void_p
    lib.mlasim_attention_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    lib.mlasim_attention_launch.restype = ctypes.c_int
    lib.mlasim_attention_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.mlasim_attention_predicted_us.restype = ctypes.c_double
    lib.mlasim_attention_predicted_us.argtypes = [ctypes.c_void_p]
    lib.mlasim_attention_partials.restype = ctypes.c_int
    lib.mlasim_attention_partials.argtypes = [ctypes.c_void_p]
    lib.mlasim_attention_destroy.restype = None
    lib.mlasim_attention_destroy.argtypes = [ctypes.c_void_p]
    lib.mlasim_attention_time.restype = ctypes.c_int
    lib.mlasim_attention_time.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                          ctypes.POINTER(ctypes.c_double), ctypes.c_char_p, ctypes.c_int]
    return lib


class Stack:
    """The tensors of `layers` decode layers for a batch of `batch` tokens (one per request)."""

    def __init__(self, batch, context, layers, page_size, copy_mb, seed=1, heads=HEADS):
        g = torch.Generator(device="cuda").manual_seed(seed)
        r = lambda *shape: (torch.rand(*shape, generator=g, device="cuda") - 0.5).to(torch.bfloat16)
        self.batch, self.layers, self.heads = batch, layers, heads
        self.q = [r(batch, heads, NOPE + ROPE) for _ in range(layers)]
        self.w_uk = [r(heads, NOPE, LATENT) * 0.1 for _ in range(layers)]
        self.kv_c = r(batch, LATENT)
        self.k_pe = r(batch, ROPE)
        angle = torch.rand(batch, ROPE // 2, generator=g, device="cuda") * 6.28
        self.cos, self.sin = torch.cos(angle).contiguous(), torch.sin(angle).contiguous()
        slots = batch * context
        self.cache = [torch.zeros(slots, LATENT + ROPE, dtype=torch.bfloat16, device="cuda") for _ in range(layers)]
        self.slot = (torch.arange(batch, device="cuda", dtype=torch.int64) * context + context - 1).contiguous()
        # The block table a step rebuilds, and the static buffer a graph-captured step reads it from.
        pages = (context + page_size - 1) // page_size
        rows = max(1, copy_mb * (1 << 20) // (4 * pages))  # a metadata buffer sized for the largest step
        self.block_table = torch.randint(0, batch * pages, (rows, pages), generator=g, device="cuda",
                                         dtype=torch.int32)
        self.block_table_static = torch.empty_like(self.block_table)
        # The rest of the layer as tensor parallelism shards it: its weights scale with the heads one GPU holds.
        self.h = r(batch, heads * NOPE)
        self.w_rest = [r(heads * NOPE, REST_N) * 0.01 for _ in range(layers)]
        self.absorbed = torch.empty(batch, heads, LATENT, dtype=torch.bfloat16, device="cuda")
        self.q_fp8 = torch.empty(batch, heads, LATENT + ROPE, dtype=torch.float8_e4m3fn, device="cuda")

    def q_prep_separate(self, layer):
        q = self.q[layer]
        q_nope = q[..., :NOPE].contiguous()  # the split
        grid = (self.heads, triton.cdiv(self.batch, 16), LATENT // 128)
        q_absorb_bmm_kernel[grid](q_nope, self.w_uk[layer], self.absorbed, self.batch, H=self.heads,
                                  BLOCK_B=16, BLOCK_N=128, K=NOPE, N=LATENT)
        q_cat = torch.cat([self.absorbed, q[..., NOPE:]], dim=-1)
        self.q_fp8_separate = (q_cat * 0.5).to(torch.float8_e4m3fn)  # the fp8 quant (static scale)

    def q_prep_fused(self, layer):
        grid = (self.heads, triton.cdiv(self.batch, 16), LATENT // 128 + 1)
        q_prep_fused_kernel[grid](self.q[layer], self.w_uk[layer], self.q_fp8, self.batch, 0.5, H=self.heads,
                                  BLOCK_B=16, BLOCK_N=128, NOPE_D=NOPE, ROPE_D=ROPE, N=LATENT)

    def rope_kv_write(self, layer):
        rope_kv_write_kernel[(self.batch,)](self.q[layer], self.kv_c, self.k_pe, self.cos, self.sin, self.slot,
                                            self.cache[layer], H=self.heads, QD=NOPE + ROPE, NOPE_D=NOPE,
                                            HALF=ROPE // 2, LAT=LATENT)

    def rest(self, layer):
        return self.h @ self.w_rest[layer]

    def step(self, attention, fused, copy):
        """One decode step: every layer's q prep (fused or as separate ops), RoPE + KV write, the block-table copy
        (or none), attention and the rest of the layer. `attention` is one Attention for every layer (one KV cache
        read by all of them) or a list of one per layer (a cache per layer, as a model has)."""
        for layer in range(self.layers):
            (self.q_prep_fused if fused else self.q_prep_separate)(layer)
            self.rope_kv_write(layer)
            if copy:
                self.block_table_static.copy_(self.block_table)
            (attention[layer] if isinstance(attention, list) else attention)()
            self.rest(layer)


def check_kernels(s):
    """The Triton kernels against PyTorch (bf16 / fp8 tolerances), before anything is timed."""
    q0 = s.q[0].clone()
    s.q_prep_separate(0)
    ref = torch.cat([torch.einsum("bhk,hkn->bhn", q0[..., :NOPE].float(), s.w_uk[0].float()), q0[..., NOPE:].float()],
                    dim=-1) * 0.5
    sep = s.q_fp8_separate.float()
    s.q_prep_fused(0)
    fused = s.q_fp8.float()
    for name, got in (("separate", sep), ("fused", fused)):
        rel = ((got - ref).norm() / ref.norm()).item()
        assert rel < 0.08, f"q prep ({name}) off the reference: {rel}"
    s.rope_kv_write(0)
    c, sn = s.cos, s.sin
    x1, x2 = s.k_pe[:, :ROPE // 2].float(), s.k_pe[:, ROPE // 2:].float()
    want = torch.cat([s.kv_c.float(), x1 * c - x2 * sn, x2 * c + x1 * sn], dim=-1)
    got = s.cache[0][s.slot].float()
    assert ((got - want).norm() / want.norm()).item() < 1e-2, "rope + KV write off the reference"
    torch.cuda.synchronize()


def run_variant(name, s, attention, fused, copy, steps, out_dir, trace=True):
    """Captures one step in a CUDA graph (as a serving engine replays its decode step), times its replays with CUDA
    events, then profiles `steps` replays; returns the median step time by events."""
    graph = capture(lambda: s.step(attention, fused, copy), warmup=3, replays=3)
    event_us = []
    for _ in range(steps):
        event_us.append(replay_us(graph))
    if not trace:
        return statistics.median(event_us)
    path = os.path.join(out_dir, name + ".json")
    schedule = torch.profiler.schedule(wait=0, warmup=2, active=steps, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                                schedule=schedule, on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(steps + 2):
            graph.replay()
            torch.cuda.synchronize()  # one step at a time, as a server waits for its sampled tokens
            prof.step()
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        g.write(f.read())
    os.remove(path)
    return statistics.median(event_us)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--context", type=int, default=4096)
    ap.add_argument("--page-size", type=int, default=64)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2, help="the variants run in turn this many times")
    ap.add_argument("--copy-mb", type=int, default=16, help="size of the copied block table")
    ap.add_argument("--policy-a", default="aiter-v1")
    ap.add_argument("--policy-b", default="fixed:splits=4")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lib = load_lib(a.lib)
    workload = {"gpu": a.gpu, "batch": {"kind": "uniform", "count": a.batch, "context": a.context}, "qlen": 1,
                "heads": HEADS, "q_dtype": "bf16", "kv_dtype": "bf16", "page_size": a.page_size}
    attn_a, attn_b = Attention(lib, workload, a.policy_a), Attention(lib, workload, a.policy_b)
    s = Stack(a.batch, a.context, a.layers, a.page_size, a.copy_mb)
    check_kernels(s)
    variants = [("before", attn_a, False, True), ("fused", attn_a, True, True), ("policy", attn_b, False, True),
                ("nocopy", attn_a, False, False)]
    events = {"workload": workload, "layers": a.layers, "steps": a.steps, "rounds": a.rounds, "copy_mb": a.copy_mb,
              "policy_a": a.policy_a, "policy_b": a.policy_b,
              "predicted_attention_us": {a.policy_a: attn_a.predicted_us, a.policy_b: attn_b.predicted_us},
              "device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
              "date": time.strftime("%Y-%m-%d"), "step_us_by_events": {}}
    traces = []
    for r in range(1, a.rounds + 1):
        for name, attention, fused, copy in variants:
            tag = f"{name}_r{r}"
            events["step_us_by_events"][tag] = run_variant(tag, s, attention, fused, copy, a.steps, a.out)
            traces.append(tag + ".json.gz")
            print(f"{tag:10s} {events['step_us_by_events'][tag]:10.1f} us per step (CUDA events, median of {a.steps})",
                  flush=True)
    with open(os.path.join(a.out, "events.json"), "w") as f:
        json.dump(events, f, indent=2)
    with tarfile.open(os.path.join(a.out, "traces.tar"), "w") as tar:
        for t in traces:
            tar.add(os.path.join(a.out, t), arcname=t)
            os.remove(os.path.join(a.out, t))


if __name__ == "__main__":
    main()
