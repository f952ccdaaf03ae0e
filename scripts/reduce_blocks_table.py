#!/usr/bin/env python3
"""The reduce's blocks in measured timelines (docs/validation.md §7.7): per timeline, the workload and policy, the
reduce's block count, the median block's duration and the reduce's span, and the share of the partials that had
more than the L2 carry-over's cap of traffic after them on the measured timeline (the rule sim/l2_carry.h's
l2_resident_outputs applies to a simulated one: each work's KV streams evenly from its first KV read to its end,
its output lands at its end; bf16 KV, 576 values per token).

  scripts/reduce_blocks_table.py [--cap-mb 29.1] DIR [DIR ...]

DIR holds timelines as `mlasim validate --timeline` writes them (<config id>.json or .json.gz).
"""
import argparse
import glob
import gzip
import json
import os
import statistics

KV_VALUES = 576


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def row(trace, cap_bytes):
    meta = trace["otherData"]["mlasim"]
    w = meta["workload"]
    events = trace["traceEvents"]
    blocks = [e for e in events if e.get("cat") == "reduce"]
    works = [e for e in events if e.get("cat") == "work" and e.get("pid") == 1]
    if not blocks or not works:
        return None
    token_bytes = KV_VALUES * (1 if w["kv_dtype"] == "fp8" else 2)
    out_bytes = {True: w["heads"] * w.get("qlen", 1) * (512 * 4 + 4), False: w["heads"] * w.get("qlen", 1) * 512 * 2}
    streams, outputs = [], []
    for e in works:
        a = e["args"]
        end = e["ts"] + e["dur"]
        # first_kv_ts is the trace's own clock, as ts is.
        streams.append((a.get("first_kv_ts", e["ts"]), end, (a["kv_end"] - a["kv_start"]) * w["page_size"] * token_bytes))
        outputs.append((end, out_bytes[bool(a["partial"])], bool(a["partial"])))

    def traffic_after(t):
        s = sum(b if t0 >= t else b * (t1 - t) / (t1 - t0) for t0, t1, b in streams if t1 > t and t1 > t0)
        return s + sum(b for t1, b, _ in outputs if t1 > t)

    partials = [(t1, b) for t1, b, p in outputs if p]
    total = sum(b for _, b in partials)
    missed = sum(b for t1, b in partials if traffic_after(t1) >= cap_bytes)
    first, last = min(e["ts"] for e in blocks), max(e["ts"] + e["dur"] for e in blocks)
    return {"workload": f"h{w['heads']} {w['batch'].get('count')}x{w['batch'].get('context')}", "policy": meta["policy"],
            "works": len(works), "blocks": len(blocks), "median_block_us": statistics.median(e["dur"] for e in blocks),
            "span_us": last - first, "share_out_of_l2": missed / total if total else 0.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cap-mb", type=float, default=29.1, help="the profile's l2_carry_cap_mb (H200: 29.1)")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    print(f"{'folder':28s} {'workload':16s} {'policy':18s} {'works':>5s} {'blocks':>6s} {'median':>7s} {'span':>7s} "
          f"{'share':>5s}")
    for d in a.dirs:
        rows = [r for r in (row(load(p), a.cap_mb * 1e6) for p in sorted(glob.glob(os.path.join(d, "*.json*")))) if r]
        rows.sort(key=lambda r: (r["workload"].split()[0], int(r["workload"].split()[1].split("x")[0]),
                                 int(r["workload"].split("x")[1]), r["policy"]))
        for r in rows:
            print(f"{d[-28:]:28s} {r['workload']:16s} {r['policy']:18s} {r['works']:5d} {r['blocks']:6d} "
                  f"{r['median_block_us']:7.2f} {r['span_us']:7.2f} {r['share_out_of_l2']:5.2f}")


if __name__ == "__main__":
    main()
