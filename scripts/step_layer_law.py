#!/usr/bin/env python3
"""What the GPU profile's prior-writes law (docs/step.md §3, data/gpus/<gpu>.json l2_prior_writes_*) gives the
attention after one layer of scripts/step_validation.py's stack, as mlasim step --op-bytes weighs every layer but
a step's first (which has no layer before it): the layer's ops from their shapes (scripts/step_op_bytes.py) after
the GEMM and split-K reduce of the layer before, for the q prep separate or fused and with the copy or without, and
the changes a fuse and a copy removal make. (Until commit 1c1c965 it left the split-K reduce out: the numbers of
data/measurements/*/step_op_bytes/PREDICTIONS.txt, at most 0.04 us from these.)

  scripts/step_layer_law.py GPU BATCH CONTEXT COPY_MIB
"""
import json
import os
import sys

from l2_grid_law import cost
from step_op_bytes import layer_ops, ops_mb

KEYS = ["us_per_mb", "rho_mb", "gamma", "max_us", "cap_mb"]


def law_of(gpu):
    with open(os.path.join(os.path.dirname(__file__), "..", "data", "gpus", gpu + ".json")) as f:
        params = json.load(f)["params"]
    return [params["l2_prior_writes_" + k]["value"] for k in KEYS]


def main():
    gpu, batch, context, copy_mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    events = {"workload": {"heads": 128, "batch": {"context": context}, "page_size": 64}, "copy_mb": copy_mb}
    # The layer before ends with its GEMM and cuBLAS's split-K reduce.
    before = ops_mb(events, batch, ["re:^nvjet|gemm", "re:splitKreduce"])
    law = law_of(gpu)
    us = {name: cost(before + layer_ops(events, batch, fused, copy), *law)
          for name, fused, copy in (("before", False, True), ("fused", True, True), ("nocopy", False, False))}
    print(f"{gpu} {batch} x {context}, {copy_mb} MiB copy: the attention after the layer before {us['before']:+.2f}, "
          f"fused {us['fused']:+.2f}, without the copy {us['nocopy']:+.2f} us; fuse {us['fused'] - us['before']:+.2f}, "
          f"remove the copy {us['nocopy'] - us['before']:+.2f} us per layer")


if __name__ == "__main__":
    main()
