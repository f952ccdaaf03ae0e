#!/usr/bin/env python3
"""The stream-kernel cost of a GPU profile (docs/step.md §3) against a run of scripts/stream_kernel_probe.py:
each kernel's measured median time and the profile's stream_kernel_us + read / stream_kernel_tbps +
written / stream_write_tbps, as a markdown table.

  scripts/stream_kernel_check.py data/measurements/h100/stream_kernels/stream_kernels.csv data/gpus/h100.json
"""
import csv
import json
import sys

HEADS, NOPE, LATENT, ROPE = 128, 128, 512, 64  # scripts/step_validation.py's MLA shape


def qprep_bytes(batch, heads=HEADS):
    """The fused q prep's bytes for `batch` requests and how many it writes: q [B, H, 192] bf16 and W_UK
    [H, 128, 512] bf16 read, [B, H, 576] fp8 written (scripts/step_validation.py)."""
    written = batch * heads * (LATENT + ROPE)
    return batch * heads * (NOPE + ROPE) * 2 + heads * NOPE * LATENT * 2 + written, written


def written_bytes(variant, nbytes):
    """The bytes a probe kernel writes, from its variant (the probe's docstring)."""
    kind, n = variant.split(":")
    return {"read": 0, "wread": 0, "sum": 0, "copy": nbytes // 2, "fill": nbytes, "zero": nbytes,
            "qprep": qprep_bytes(int(n))[1]}[kind]


def main():
    probe, profile = sys.argv[1:3]
    p = {k: v["value"] for k, v in json.load(open(profile))["params"].items()}
    fixed, read_tbps = p["stream_kernel_us"], p["stream_kernel_tbps"]
    write_tbps = p.get("stream_write_tbps", 0) or read_tbps
    print(f"| kernel | MB read | MB written | measured (us) | predicted (us) | error | all bytes as reads |")
    print("|---|---|---|---|---|---|---|")
    for r in csv.DictReader(open(probe)):
        nbytes = int(r["bytes"])
        w = int(r["written"]) if "written" in r else written_bytes(r["variant"], nbytes)
        measured = float(r["kernel_us"])
        pred = fixed + (nbytes - w) / (read_tbps * 1e6) + w / (write_tbps * 1e6)
        reads = fixed + nbytes / (read_tbps * 1e6)
        print(f"| {r['variant']} | {(nbytes - w) / 1e6:.2f} | {w / 1e6:.2f} | {measured:.2f} | {pred:.2f} | "
              f"{100 * (pred - measured) / measured:+.1f} % | {100 * (reads - measured) / measured:+.1f} % |")


if __name__ == "__main__":
    main()
