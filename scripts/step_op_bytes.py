#!/usr/bin/env python3
"""The bytes each kernel of scripts/step_validation.py's decode stack reads and writes (mlasim step --op-bytes,
docs/step.md §3), from the stack's tensor shapes: a fixed part (weights, the block table) and a part per request.

  scripts/step_op_bytes.py EVENTS_JSON > op_bytes.json

EVENTS_JSON is a run's events.json (its workload's heads and context, the copy's MiB and the page size). The
attention and its reduce are left out: at 128 heads the GEMM's 134 MB read before each layer's q prep is more
traffic than the prior-writes law looks back over, so no window reaches them. At 16 heads the GEMM reads 16.8 MB,
and with the copy removed the layer before's attention falls inside the H200's window (45 MB): such a stage 1
keeps its measured time, and the edit's line names the attention as an op without bytes (docs/step.md §3).
"""
import json
import sys

NOPE, ROPE, LATENT, REST_N = 128, 64, 512, 4096  # scripts/step_validation.py
BF16, FP8, FP32, I64 = 2, 1, 4, 8


def op_bytes(events):
    w = events["workload"]
    h, context, page = w["heads"], w["batch"]["context"], w["page_size"]
    pages = (context + page - 1) // page
    rows = max(1, events["copy_mb"] * (1 << 20) // (4 * pages))
    table = rows * pages * 4
    w_uk = h * NOPE * LATENT * BF16
    q = h * (NOPE + ROPE) * BF16                # one request's q [H, 192]
    absorbed = h * LATENT * BF16                # [H, 512]
    q_cat = h * (LATENT + ROPE) * BF16          # [H, 576]
    q_pe = h * ROPE * BF16
    per = lambda read, written: {"read_bytes_per_request": read, "written_bytes_per_request": written}
    ops = [
        # The split (q[..., :128].contiguous()): q read whole, as its rows are three 128-byte lines.
        {"match": "re:direct_copy_kernel_cuda", **per(q, h * NOPE * BF16)},
        {"match": "re:q_absorb_bmm_kernel", "read_bytes": w_uk, **per(h * NOPE * BF16, absorbed)},
        {"match": "re:CatArrayBatchedCopy", **per(absorbed + q_pe, q_cat)},
        {"match": "re:AUnaryFunctor", **per(q_cat, q_cat)},                            # the scale
        {"match": "re:float8_copy_kernel", **per(q_cat, h * (LATENT + ROPE) * FP8)},   # the fp8 conversion
        {"match": "re:q_prep_fused_kernel", "read_bytes": w_uk, **per(q, h * (LATENT + ROPE) * FP8)},
        # RoPE on q's rope part in place, then the new token's latent and rotated k_pe into the cache.
        {"match": "re:rope_kv_write_kernel",
         **per(q_pe + LATENT * BF16 + ROPE * BF16 + ROPE * FP32 + I64, q_pe + (LATENT + ROPE) * BF16)},
        {"match": "copy", "read_bytes": table, "written_bytes": table},
        # The rest of the layer: h [B, H*128] @ W [H*128, 4096] (bf16); its output [B, 4096]. cuBLAS's split-K
        # partials are not in the shapes: the reduce after the GEMM counts one fp32 copy of the output read.
        {"match": "re:^nvjet|gemm", "read_bytes": h * NOPE * REST_N * BF16,
         **per(h * NOPE * BF16, REST_N * BF16)},
        {"match": "re:splitKreduce", **per(REST_N * FP32, REST_N * BF16)},
    ]
    return {"description": "scripts/step_validation.py's decode stack at {} heads, {} tokens of context, a {} MiB "
                           "block-table copy (scripts/step_op_bytes.py)".format(h, context, events["copy_mb"]),
            "ops": ops}


SEPARATE_Q_PREP = ["re:direct_copy_kernel_cuda", "re:q_absorb_bmm_kernel", "re:CatArrayBatchedCopy", "re:AUnaryFunctor",
                   "re:float8_copy_kernel"]


def ops_mb(events, requests, matches):
    """The ops the entries `matches` name, in order, as (MB read, MB written) at `requests`: each entry's fixed part
    plus its part per request, as mlasim step reads the file."""
    entries = {e["match"]: e for e in op_bytes(events)["ops"]}
    mb = lambda e, kind: (e.get(kind + "_bytes", 0) + e.get(kind + "_bytes_per_request", 0) * requests) / 1e6
    return [(mb(entries[m], "read"), mb(entries[m], "written")) for m in matches]


def layer_ops(events, requests, fused, copy):
    """One layer's ops before its attention, in order, as (MB read, MB written): the q prep (five kernels or
    fused), RoPE + KV write, the copy (or none)."""
    names = (["re:q_prep_fused_kernel"] if fused else SEPARATE_Q_PREP) + ["re:rope_kv_write_kernel"]
    return ops_mb(events, requests, names + (["copy"] if copy else []))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        json.dump(op_bytes(json.load(f)), sys.stdout, indent=2)
    print()
