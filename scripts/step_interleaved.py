#!/usr/bin/env python3
"""Decode-step validation with the variants interleaved (docs/step.md §4): the stack of step_validation.py, each
variant captured once in a CUDA graph, then every cycle replays each variant once, so that drift of the GPU's clocks
and temperature over the run is common to all of them instead of landing on whichever ran last.

Variants (16 requests unless named otherwise):
  before    separate q prep, policy A, the block-table copy
  fused     the q prep fused into one Triton kernel
  policy    policy B
  nocopy    no copy
  splits2, splits8
            fixed:splits=2 and fixed:splits=8: with policy B's 4 splits, a test of how the GEMM after a split
            attention slows with the partial outputs the attention leaves in L2 (at the defaults the planner gives
            fixed:splits=8 only 4 splits per request, policy B's plan)
  a<B>, b<B>
            policy A and policy B at batch B (--mixed-batches): with before and policy, the steps of a server whose
            batch changes from step to step
  c<C>, d<C>
            policy A and policy B at the batch's requests with C tokens of context each (--mixed-contexts), or with
            contexts spread evenly from LO to HI tokens over the requests for an item LO-HI (a ragged batch): with
            before and policy, the steps of a server whose contexts change from step to step at one request count,
            which no launch grid tells apart

One torch.profiler session records every cycle; each replay sits in a range named `decode_step <variant>`. The trace
is then cut into one Chrome trace per variant (and mixed_a, mixed_b: the steps of a<B>/before and b<B>/policy in the
order they ran; contexts_a, contexts_b: those of c<C>/before and d<C>/policy), each with the host and device events
inside its variant's ranges. Each of contexts_a and contexts_b gets the batch every step ran, in the trace's order,
as `mlasim step --step-batches` reads it (step_batches_contexts_a.json, step_batches_contexts_b.json).

  python3 scripts/step_interleaved.py --lib DIR/libmlasim_attention.so --out OUT [--cycles 30] [--kv-per-layer] \
      [--heads 16|128] [--q-dtype bf16|fp8] [--kv-dtype bf16|fp8]

--heads gives the q heads one GPU holds (128 by default; 16 for DeepSeek's 128 heads over 8 tensor-parallel ranks):
the q prep, the attention and the GEMM for the rest of the layer (its weights sharded as tensor parallelism shards
them) take that many. --q-dtype and --kv-dtype give the attention's inputs (bf16 by default; fp8 KV runs our fp8
kernel); the RoPE + KV write's cache stays bf16, since the attention reads inputs of its own.

By default every layer's attention reads one KV cache (the runs of 2026-11-26); --kv-per-layer gives each layer a
cache of its own, as a model has, so that nothing of a layer's KV can still be in L2 when the next layer reads it.

Writes OUT/traces.tar (<trace>.json.gz), OUT/events.json (each variant's step time by CUDA events: the median over
the cycles, and every sample) and prints the medians.
"""
import argparse
import gzip
import json
import os
import statistics
import tarfile
import time

import torch
import triton

from cuda_graphs import Ranges, capture, profile_rotating, replay_us, rotation
from step_validation import HEADS, Attention, Stack, check_kernels, load_lib


def split_trace(trace, groups):
    """One trace per group of variants: the metadata events, and every event inside a decode_step range of one of
    the group's variants (the range itself included)."""
    events = trace["traceEvents"]
    ranges = Ranges(events, "decode_step ")
    meta = [e for e in events if e.get("ph") == "M"]
    out = {name: [] for name in groups}
    for e in events:
        if e.get("ph") != "X" or not isinstance(e.get("ts"), (int, float)) or not isinstance(e.get("pid"), int):
            continue
        i = ranges.index(e["ts"])
        if i < 0:
            continue
        variant = ranges.name(i)
        for name, members in groups.items():
            if variant in members:
                out[name].append(e)
    return {name: dict(trace, traceEvents=meta + evs) for name, evs in out.items()}, ranges.counts()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--mixed-batches", default="8,32", help="the other batches of the mixed-batch steps")
    ap.add_argument("--mixed-contexts", default="",
                    help="the other contexts of the mixed-context steps (at --batch requests), e.g. 2048,8192; an "
                         "item LO-HI spreads the requests' contexts evenly from LO to HI tokens (a ragged batch)")
    ap.add_argument("--context", type=int, default=4096)
    ap.add_argument("--page-size", type=int, default=64)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--cycles", type=int, default=30)
    ap.add_argument("--copy-mb", type=int, default=16)
    ap.add_argument("--policy-a", default="aiter-v1")
    ap.add_argument("--policy-b", default="fixed:splits=4")
    ap.add_argument("--heads", type=int, default=HEADS, choices=[16, 128],
                    help="q heads one GPU holds (128, or 16 for 8 tensor-parallel ranks: what our kernels run); the "
                         "q prep and the rest of the layer scale with them")
    ap.add_argument("--q-dtype", default="bf16", choices=["bf16", "fp8"],
                    help="the attention's Q (our kernels' inputs; the q prep before it writes fp8 either way)")
    ap.add_argument("--kv-dtype", default="bf16", choices=["bf16", "fp8"],
                    help="the attention's KV cache (fp8 runs our fp8 kernel)")
    ap.add_argument("--kv-per-layer", action="store_true",
                    help="each layer's attention reads a KV cache of its own (as in a model); without it every layer "
                         "reads the same one, and part of it may still be in L2 from the layer before")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lib = load_lib(a.lib)

    def workload(batch, context=None, kv_lens=None):
        spec = ({"kind": "list", "kv_lens": kv_lens} if kv_lens and len(set(kv_lens)) > 1 else
                {"kind": "uniform", "count": batch, "context": kv_lens[0] if kv_lens else context or a.context})
        return {"gpu": a.gpu, "batch": spec, "qlen": 1, "heads": a.heads, "q_dtype": a.q_dtype, "kv_dtype": a.kv_dtype,
                "page_size": a.page_size}

    def kv_lens_of(item):
        """An item of --mixed-contexts: C tokens for every request, or LO-HI spread evenly over them."""
        if "-" not in item:
            return [int(item)] * a.batch
        lo, hi = (int(x) for x in item.split("-"))
        assert a.batch > 1 and 0 < lo < hi, f"--mixed-contexts {item}: LO-HI with 0 < LO < HI, over 2+ requests"
        return [round(lo + (hi - lo) * i / (a.batch - 1)) for i in range(a.batch)]

    mixed = [int(b) for b in a.mixed_batches.split(",") if b]
    contexts = [c for c in a.mixed_contexts.split(",") if c]
    lens = {c: kv_lens_of(c) for c in contexts}
    assert str(a.context) not in contexts and len(set(contexts)) == len(contexts), "--mixed-contexts: other contexts"
    stacks = {b: Stack(b, a.context, a.layers, a.page_size, a.copy_mb, seed=b, heads=a.heads)
              for b in [a.batch] + mixed}
    # A ragged batch's stack holds its longest context (the RoPE + KV write's slots; the attention plans its own).
    context_stacks = {c: Stack(a.batch, max(lens[c]), a.layers, a.page_size, a.copy_mb,
                               seed=int(c) if "-" not in c else max(lens[c]) + 1, heads=a.heads) for c in contexts}
    check_kernels(stacks[a.batch])
    attention = {}
    for b in stacks:
        for p in [a.policy_a, a.policy_b] + (["fixed:splits=2", "fixed:splits=8"] if b == a.batch else []):
            attention[(b, p)] = ([Attention(lib, workload(b), p) for _ in range(a.layers)] if a.kv_per_layer
                                 else Attention(lib, workload(b), p))
    for c in contexts:
        for p in [a.policy_a, a.policy_b]:
            w = workload(a.batch, kv_lens=lens[c])
            attention[(a.batch, c, p)] = ([Attention(lib, w, p) for _ in range(a.layers)] if a.kv_per_layer
                                          else Attention(lib, w, p))
    first = lambda att: att[0] if isinstance(att, list) else att
    s0 = stacks[a.batch]
    variants = {
        "before": (s0, attention[(a.batch, a.policy_a)], False, True),
        "fused": (s0, attention[(a.batch, a.policy_a)], True, True),
        "policy": (s0, attention[(a.batch, a.policy_b)], False, True),
        "nocopy": (s0, attention[(a.batch, a.policy_a)], False, False),
        "splits2": (s0, attention[(a.batch, "fixed:splits=2")], False, True),
        "splits8": (s0, attention[(a.batch, "fixed:splits=8")], False, True),
    }
    for b in mixed:
        variants[f"a{b}"] = (stacks[b], attention[(b, a.policy_a)], False, True)
        variants[f"b{b}"] = (stacks[b], attention[(b, a.policy_b)], False, True)
    for c in contexts:
        variants[f"c{c}"] = (context_stacks[c], attention[(a.batch, c, a.policy_a)], False, True)
        variants[f"d{c}"] = (context_stacks[c], attention[(a.batch, c, a.policy_b)], False, True)
    graphs = {name: capture(lambda v=v: v[0].step(v[1], v[2], v[3]), warmup=3, replays=3)
              for name, v in variants.items()}
    names = list(graphs)

    # Each cycle replays every variant once, starting one further along the list, so that no variant always
    # follows the same one.
    samples = {n: [] for n in names}
    for c in range(a.cycles):
        for n in rotation(names, c):
            samples[n].append(replay_us(graphs[n]))

    trace = profile_rotating(graphs, a.cycles, lambda n: "decode_step " + n, os.path.join(a.out, "all.json"))
    groups = {n: [n] for n in ["before", "fused", "policy", "nocopy", "splits2", "splits8"]}
    if mixed:
        groups["mixed_a"] = [f"a{b}" for b in mixed] + ["before"]
        groups["mixed_b"] = [f"b{b}" for b in mixed] + ["policy"]
    if contexts:
        groups["contexts_a"] = [f"c{c}" for c in contexts] + ["before"]
        groups["contexts_b"] = [f"d{c}" for c in contexts] + ["policy"]
    split, ranges = split_trace(trace, groups)
    # Every replay must be in the trace, inside its range: a lost range would bias its variant's mean.
    assert all(ranges.get(n) == a.cycles for n in names), f"decode_step ranges per variant: {ranges}"
    # The batch each step of a mixed-context trace ran, in the order its step ranges lie in the trace.
    entry_of = {"before": {"requests": a.batch, "context": a.context}}
    entry_of["policy"] = entry_of["before"]
    for c in contexts:
        entry = ({"requests": a.batch, "context": lens[c][0]} if len(set(lens[c])) == 1 else {"kv_lens": lens[c]})
        entry_of.update({f"c{c}": entry, f"d{c}": entry})
    for name in ("contexts_a", "contexts_b"):
        if name not in split:
            continue
        steps = sorted((e["ts"], e["name"][len("decode_step "):]) for e in split[name]["traceEvents"]
                       if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                       and e.get("name", "").startswith("decode_step "))
        assert len(steps) == a.cycles * len(groups[name]), f"{name}: {len(steps)} step ranges"
        with open(os.path.join(a.out, f"step_batches_{name}.json"), "w") as f:
            json.dump({"description": f"the batch of each step of {name}.json.gz, in the trace's order "
                                      f"(scripts/step_interleaved.py --mixed-contexts {a.mixed_contexts})",
                       "steps": [entry_of[v] for _, v in steps]}, f, indent=0)
    traces = []
    for name, t in split.items():
        out = os.path.join(a.out, name + ".json.gz")
        with gzip.open(out, "wt", compresslevel=9) as g:
            json.dump(t, g)
        traces.append(name + ".json.gz")
    events = {"workload": workload(a.batch), "mixed_batches": mixed,
              "mixed_contexts": [int(c) if "-" not in c else c for c in contexts],
              "layers": a.layers, "cycles": a.cycles,
              "copy_mb": a.copy_mb, "policy_a": a.policy_a, "policy_b": a.policy_b,
              "groups": groups,
              "kv_per_layer": a.kv_per_layer,
              "predicted_attention_us": {" ".join(str(k) for k in key): first(att).predicted_us
                                         for key, att in attention.items()},
              "device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
              "date": time.strftime("%Y-%m-%d"),
              "step_us_by_events": {n: statistics.median(v) for n, v in samples.items()},
              "step_us_samples": samples}
    with open(os.path.join(a.out, "events.json"), "w") as f:
        json.dump(events, f, indent=1)
    for n in names:
        print(f"{n:8s} {events['step_us_by_events'][n]:10.1f} us per step (CUDA events, median of {a.cycles})",
              flush=True)
    with tarfile.open(os.path.join(a.out, "traces.tar"), "w") as tar:
        for t in traces:
            tar.add(os.path.join(a.out, t), arcname=t)
            os.remove(os.path.join(a.out, t))


if __name__ == "__main__":
    main()
