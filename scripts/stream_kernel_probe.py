#!/usr/bin/env python3
"""Stream-kernel probe (docs/step.md §3): standalone kernels that stream a known number of bytes, timed against
the stream-kernel cost stream_kernel_us + bytes / stream_kernel_tbps of a GPU profile, which was fitted to other
kernels (the L2 probe's reads of 4 to 48 MB).

Each variant is one kernel, repeated --reps times with buffers of its own, each repeat after a 64 MB read of a
buffer of its own (so the kernel finds none of its bytes in L2 and nothing dirty), captured once in a CUDA graph.
Every cycle replays each variant once, one further along the list each cycle, under one torch.profiler session.

Variants
  read:MB     a full-GPU read of MB x 1e6 bytes by a persistent grid of 8 programs per SM, each a loop of loads
              into one accumulator (the L2 probe's read, which the profiles' first stream-kernel fit took)
  wread:MB    a read of MB x 1e6 bytes by one program per 32 KB, each loading its block at once (many loads in
              flight, as a fused kernel that loads a tile per program has)
  sum:MB      torch.sum of MB x 1e6 bytes (float32)
  copy:MB     torch's copy_ of MB x 1e6 bytes: MB read and MB written
  fill:MB     a kernel that writes MB x 1e6 bytes
  zero:MB     torch's zero_ of MB x 1e6 bytes
  qprep:B     the step stack's fused q prep (scripts/step_validation.py) for B requests: q [B, 128, 192] bf16 and
              W_UK [128, 128, 512] bf16 read, [B, 128, 576] fp8 written

  python3 scripts/stream_kernel_probe.py --profile data/gpus/h100.json --out OUT [--cycles 30] [--reps 3]

Writes OUT/stream_kernels.csv (one row per variant: bytes and the bytes written, the kernel's median time and
spread, the prediction with all bytes as reads) and OUT/meta.json, and prints the table;
scripts/stream_kernel_check.py compares a profile's full stream-kernel cost (reads and writes) with it.
"""
import argparse
import csv
import json
import os
import statistics
import time

import torch
import triton
import triton.language as tl

from cuda_graphs import Ranges, capture, profile_rotating
from l2_carry_probe import MB, f32, fill, follow_read_kernel, produce_read_kernel, read
from step_validation import HEADS, LATENT, NOPE, ROPE, q_prep_fused_kernel
from stream_kernel_check import qprep_bytes, written_bytes

FLUSH_MB = 64
WIDE_BLOCK = 8192  # float32 per program: 32 KB, 32 per thread of 8 warps


@triton.jit
def wide_read_kernel(ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0) % 65536, tl.sum(x))


def wide_read(buf, out):
    wide_read_kernel[(triton.cdiv(buf.numel(), WIDE_BLOCK),)](buf, out, buf.numel(), BLOCK=WIDE_BLOCK, num_warps=8)


class Probe:
    def __init__(self, reps, sms):
        self.reps, self.sms = reps, sms
        self.out = torch.empty(1 << 16, dtype=torch.float32, device="cuda")
        self.flush = [f32(FLUSH_MB * MB).uniform_() for _ in range(reps)]

    def op(self, spec):
        """(the op of repeat i, the bytes it streams, the name its kernel starts with; None: any but the flush)."""
        kind, arg = spec.split(":")
        n = int(arg)
        if kind == "read":
            bufs = [f32(n * MB).uniform_() for _ in range(self.reps)]
            return (lambda i: read(produce_read_kernel, bufs[i], self.out, 8 * self.sms)), n * MB, "produce_read"
        if kind == "wread":
            bufs = [f32(n * MB).uniform_() for _ in range(self.reps)]
            return (lambda i: wide_read(bufs[i], self.out)), n * MB, "wide_read"
        if kind == "sum":
            bufs = [f32(n * MB).uniform_() for _ in range(self.reps)]
            sums = [torch.empty((), dtype=torch.float32, device="cuda") for _ in range(self.reps)]
            return (lambda i: torch.sum(bufs[i], dim=0, out=sums[i])), n * MB, None
        if kind == "zero":
            bufs = [f32(n * MB) for _ in range(self.reps)]
            return (lambda i: bufs[i].zero_()), n * MB, None
        if kind == "copy":
            src = [f32(n * MB).uniform_() for _ in range(self.reps)]
            dst = [f32(n * MB) for _ in range(self.reps)]
            return (lambda i: dst[i].copy_(src[i])), 2 * n * MB, None
        if kind == "fill":
            bufs = [f32(n * MB) for _ in range(self.reps)]
            return (lambda i: fill(bufs[i])), n * MB, "fill_kernel"
        if kind == "qprep":
            g = torch.Generator(device="cuda").manual_seed(n)
            r = lambda *shape: (torch.rand(*shape, generator=g, device="cuda") - 0.5).to(torch.bfloat16)
            q = [r(n, HEADS, NOPE + ROPE) for _ in range(self.reps)]
            w = [r(HEADS, NOPE, LATENT) * 0.1 for _ in range(self.reps)]
            out = [torch.empty(n, HEADS, LATENT + ROPE, dtype=torch.float8_e4m3fn, device="cuda")
                   for _ in range(self.reps)]
            grid = (HEADS, triton.cdiv(n, 16), LATENT // 128 + 1)
            return (lambda i: q_prep_fused_kernel[grid](q[i], w[i], out[i], n, 0.5, H=HEADS, BLOCK_B=16, BLOCK_N=128,
                                                        NOPE_D=NOPE, ROPE_D=ROPE, N=LATENT)), qprep_bytes(n)[0], \
                "q_prep_fused"
        raise ValueError(spec)

    def capture(self, spec):
        op, nbytes, name = self.op(spec)

        def body():
            for i in range(self.reps):
                read(follow_read_kernel, self.flush[i], self.out, 8 * self.sms)
                op(i)

        graph = capture(body)
        return graph, nbytes, name, op  # the op keeps its buffers alive: the graph does not


def variants():
    v = [f"read:{mb}" for mb in (2, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96)]
    v += [f"wread:{mb}" for mb in (2, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96)]
    v += [f"sum:{mb}" for mb in (4, 8, 16, 24, 32, 48)]
    v += [f"copy:{mb}" for mb in (2, 8, 16, 32)]
    v += [f"fill:{mb}" for mb in (2, 4, 8, 12, 16, 24, 32, 48, 64)]
    v += [f"zero:{mb}" for mb in (4, 8, 16, 32, 64)]
    v += [f"qprep:{b}" for b in (1, 4, 8, 12, 16, 17, 24, 32, 48, 64)]
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cycles", type=int, default=30)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    params = json.load(open(a.profile))["params"]
    fixed, tbps = params["stream_kernel_us"]["value"], params["stream_kernel_tbps"]["value"]
    b_hbm = params["b_hbm_tbps"]["value"]
    props = torch.cuda.get_device_properties(0)
    probe = Probe(a.reps, props.multi_processor_count)
    specs = variants()
    graphs = {s: probe.capture(s) for s in specs}

    t0 = time.time()
    trace = profile_rotating({s: graphs[s][0] for s in specs}, a.cycles, lambda s: f"probe {s}",
                             os.path.join(a.out, "all.json"))
    events = trace["traceEvents"]
    ranges = Ranges(events, "probe ")
    # A repeat's time is the sum of its op's kernels (a torch op may launch more than one): those between its
    # flush read and the next one in the same replay.
    groups = {}  # (replay, repeat) -> [variant, us]
    names = {s: set() for s in specs}
    repeat = {}
    for e in sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")),
                    key=lambda e: e["ts"]):
        i = ranges.index(e["ts"])
        if i < 0:
            continue
        if e["name"].startswith("follow_read_kernel"):
            repeat[i] = repeat.get(i, -1) + 1
            continue
        s = ranges.name(i)
        want = graphs[s][2]
        assert want is None or e["name"].startswith(want), f"{s}: unexpected kernel {e['name'][:60]}"
        groups.setdefault((i, repeat[i]), [s, 0.0])[1] += e["dur"]
        names[s].add(e["name"][:60])
    times = {s: [] for s in specs}
    for s, us in groups.values():
        times[s].append(us)
    rows = []
    for s in specs:
        t = sorted(times[s])
        assert len(t) == a.cycles * a.reps, f"{s}: {len(t)} kernels, {a.cycles * a.reps} run"
        nbytes = graphs[s][1]
        pred = fixed + nbytes / (tbps * 1e6)
        med = statistics.median(t)
        rows.append({"variant": s, "kernel": "+".join(sorted(names[s])), "bytes": nbytes,
                     "written": written_bytes(s, nbytes), "samples": len(t),
                     "kernel_us": round(med, 3), "p10_us": round(t[int(0.1 * (len(t) - 1))], 3),
                     "p90_us": round(t[int(0.9 * (len(t) - 1) + 0.5)], 3),
                     "predicted_us": round(pred, 3), "error_pct": round(100 * (pred - med) / med, 1),
                     "at_b_hbm_us": round(nbytes / (b_hbm * 1e6), 3)})
    with open(os.path.join(a.out, "stream_kernels.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    meta = {"device": torch.cuda.get_device_name(), "sms": props.multi_processor_count,
            "l2_bytes": props.L2_cache_size, "torch": torch.__version__, "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M:%S"), "cycles": a.cycles, "reps": a.reps,
            "profile": a.profile, "stream_kernel_us": fixed, "stream_kernel_tbps": tbps,
            "profiled_s": round(time.time() - t0, 1)}
    with open(os.path.join(a.out, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
    print(json.dumps(meta))
    for r in rows:
        print(f"{r['variant']:10s} {r['bytes'] / 1e6:8.2f} MB  measured {r['kernel_us']:7.2f} us "
              f"[{r['p10_us']:.2f}, {r['p90_us']:.2f}]  predicted {r['predicted_us']:7.2f} us "
              f"({r['error_pct']:+.1f} %)  at b_hbm {r['at_b_hbm_us']:7.2f} us  {r['kernel']}", flush=True)


if __name__ == "__main__":
    main()
