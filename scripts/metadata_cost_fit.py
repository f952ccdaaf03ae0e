#!/usr/bin/env python3
"""The planner cost model of mlasim step (sim/include/mlasim/sim/metadata_cost.h, docs/step.md §5):
    time = fixed_us + per_cluster_us x clusters + per_item_us x (works + requests)
per implementation, written to data/planner/metadata_cost.json.

  scripts/metadata_cost_fit.py BUILD_DIR [DATE]

host: bench/planner_bench's BM_PlanAiterV1 (our planner on 256 CUs, mixed batches of 1..4096 requests), run here
      with 5 repetitions; the median time of each batch, fitted by least squares to its items (works + requests);
      the CUs stay at 256, so what they cost is in the fixed part (per_cluster_us 0).
device-serial, device-parallel: the one published microbenchmark row of ROCm/aiter #3465 (MI355X, ROCm 7.2.3:
      batch 4, context 2048, 60 works, 4 split groups; 37.352 us serial, 3.649 us parallel). Its items come from our
      planner's plan of that batch (aiter-v1 with a split cap of 16 at page size 1, as vLLM's ROCm backend calls it),
      which must give the same 60 works and 4 split groups. With one row, the serial planner's time is taken as
      all scan (no fixed part), each cluster, work and request one step of it, and the parallel one's as fixed.
"""
import datetime
import json
import os
import platform
import subprocess
import sys

PUBLISHED = {"batch": 4, "context": 2048, "works": 60, "split_groups": 4, "serial_us": 37.352, "parallel_us": 3.649,
             "policy": "aiter-v1:max_split_per_batch=16",
             "source": "ROCm/aiter #3465 (perf: add mla metadata parallel path, 2026-06-01), microbenchmark table, "
                       "MI355X, ROCm 7.2.3: batch 4, ctx_len 2048, num_works 60"}


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def fit(points):
    """t = a + b x by least squares of the relative error (each point weighs 1 / t^2): the builds span 1 to 100 us,
    and a step cares about a few us as much as about a hundred."""
    w = [1 / (y * y) for _, y in points]
    s0 = sum(w)
    s1 = sum(wi * x for wi, (x, _) in zip(w, points))
    s2 = sum(wi * x * x for wi, (x, _) in zip(w, points))
    t0 = sum(wi * y for wi, (_, y) in zip(w, points))
    t1 = sum(wi * x * y for wi, (x, y) in zip(w, points))
    det = s0 * s2 - s1 * s1
    return (t0 * s2 - s1 * t1) / det, (s0 * t1 - s1 * t0) / det


def main():
    build = sys.argv[1]
    date = sys.argv[2] if len(sys.argv) > 2 else datetime.date.today().isoformat()
    commit = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True).strip()
    bench_cmd = [os.path.join(build, "bench", "mlasim_bench"), "--benchmark_filter=BM_PlanAiterV1/",
                 "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    report = json.loads(subprocess.check_output(bench_cmd, text=True))
    points = []
    for b in report["benchmarks"]:
        if b.get("aggregate_name") == "median":
            points.append((b["items"], b["real_time"]))  # works + requests, us (the benchmark's unit)
    a, k = fit(points)
    rows = ", ".join(f"{int(x)} items {y:.2f} us" for x, y in points)
    worst = max(abs(a + k * x - y) / y for x, y in points) * 100

    # The row's batch as vLLM's ROCm backend plans it (16 heads, page size 1, a split cap of 16): our planner must
    # make the row's works and split groups (reduce tiles) of it.
    plan_cmd = [os.path.join(build, "cli", "mlasim"), "plan", "--gpu", "mi355x", "--batch", str(PUBLISHED["batch"]),
                "--context", str(PUBLISHED["context"]), "--heads", "16", "--page-size", "1", "--policy",
                PUBLISHED["policy"], "--format", "json"]
    plan = json.loads(subprocess.check_output(plan_cmd, text=True))
    works, clusters = plan["outputs"]["num_works"], plan["derived"]["num_clusters"]
    groups = len(plan["outputs"]["reduce_indptr"]) - 1
    if (works, groups) != (PUBLISHED["works"], PUBLISHED["split_groups"]):
        sys.exit(f"our planner makes {works} works and {groups} split groups of the published batch, not "
                 f"{PUBLISHED['works']} and {PUBLISHED['split_groups']}")
    items = clusters + works + PUBLISHED["batch"]
    out = {
        "description": "What building a plan's metadata costs, per implementation: fixed_us + per_cluster_us x "
                       "clusters + per_item_us x (works + requests) (sim/include/mlasim/sim/metadata_cost.h). Written by "
                       f"scripts/metadata_cost_fit.py at {commit} on {date}.",
        "model": "fixed_us + per_cluster_us x clusters + per_item_us x (works + requests)",
        "implementations": {
            "host": {"fixed_us": round(a, 4), "per_cluster_us": 0, "per_item_us": round(k, 6), "kind": "measured",
                     "source": f"our planner (aiter-v1) on {cpu_model()}, one thread: {' '.join(bench_cmd[1:-1])} "
                               f"(median of 5) on 256 CUs, fitted to {rows} (works + requests; relative least squares, "
                               f"worst fit error {worst:.0f} %; the 256 CUs' share is in fixed_us); commit {commit}, "
                               f"{date}"},
            "device-serial": {"fixed_us": 0, "per_cluster_us": round(PUBLISHED["serial_us"] / items, 6),
                              "per_item_us": round(PUBLISHED["serial_us"] / items, 6),
                              "kind": "published",
                              "source": f"{PUBLISHED['source']}: {PUBLISHED['serial_us']} us for the plan our "
                                        f"planner makes of that batch on MI355X ({PUBLISHED['policy']}, 16 heads, "
                                        f"page size 1: the row's {works} works and {groups} split groups; {clusters} "
                                        f"clusters, {works} works, {PUBLISHED['batch']} requests: {items} steps of the "
                                        "scan); one row, so no fixed part"},
            "device-parallel": {"fixed_us": PUBLISHED["parallel_us"], "per_cluster_us": 0, "per_item_us": 0,
                                "kind": "published",
                                "source": f"{PUBLISHED['source']}: {PUBLISHED['parallel_us']} us; one row, so its "
                                          "time is taken as fixed"},
        },
    }
    os.makedirs("data/planner", exist_ok=True)
    with open("data/planner/metadata_cost.json", "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
