"""The write-back probe's rows (docs/step.md section 6): each follower after the step stack's GEMM (134 MB read: the
L2 clean of what came before) and then fills or the stack's block-table copy, against the follower after the GEMM
alone. scripts/l2_carry_probe.py --set writeback runs them; scripts/l2_writeback_fit.py --against-gemm predicts and
checks them."""

STACK_COPY = "copy:16.777216"  # the step stack's block-table copy, 16 MiB

PRODUCERS = ["gemm", "gemm+fill:4", "gemm+fill:8", "gemm+fill:16", "gemm+fill:24", "gemm+" + STACK_COPY,
             "gemm+fill:8.52+" + STACK_COPY]


def variants(followers):
    return [(p, f) for f in followers for p in PRODUCERS]


def attention_follower(spec):
    """An attention spec of the probes, attn:BATCH:CONTEXT:POLICY[@HEADS][/DTYPE] (128 heads and bf16 unless given;
    DTYPE is Q's and the KV's, bf16 or fp8), as (batch, context, policy, heads, dtype)."""
    body, _, dtype = spec.partition("/")  # no policy spec holds a "/"
    _, b, ctx, pol = body.split(":", 3)
    pol, _, heads = pol.partition("@")
    assert dtype in ("", "bf16", "fp8"), f"{spec}: the dtype is bf16 or fp8"
    return int(b), int(ctx), pol, int(heads or 128), dtype or "bf16"
