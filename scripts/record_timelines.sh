#!/usr/bin/env bash
# Records measured per-CU timelines on this machine's GPU with a build made elsewhere (docs/validation.md §7):
# the GPU tests of the same build (every random case also runs instrumented), the timelines campaign's
# configurations as Chrome-trace files, and the instrumentation's overhead over a whole campaign (every
# configuration timed with and without the stamp buffers; one CSV line each, the traces themselves not kept).
#
#   scripts/record_timelines.sh BIN GPU OUT_DIR COMMIT DATE [OVERHEAD_CAMPAIGN] [OVERHEAD_SECONDS]
#     BIN   folder with mlasim (built with -DMLASIM_KERNELS=CUDA), optionally mlasim_kernels_tests, and the
#           shared libraries they need
set -euo pipefail
bin=$(cd "$1" && pwd); gpu=$2; out=$3; commit=$4; date=$5
overhead_campaign=${6:-data/campaigns/holdout.json}; overhead_seconds=${7:-240}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MLASIM_DATA_DIR="$PWD/data"
log="$out/timelines_$gpu.log"
{
  echo "## device"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,temperature.gpu,power.limit \
    --format=csv
  if [ -x "$bin/mlasim_kernels_tests" ]; then
    echo "## mlasim_kernels_tests (MLASIM_GPU_TEST_CASES=${MLASIM_GPU_TEST_CASES:-240})"
    "$bin/mlasim_kernels_tests" 2>&1 | grep -E "random cases|PASSED|FAILED|Failure|case [0-9]" | head -40 || true
  fi
  args=(validate data/campaigns/timelines.json --gpu "$gpu" --timeline "$out/timelines" --commit "$commit" --date "$date" --quiet)
  echo "## mlasim ${args[*]}"
  "$bin/mlasim" "${args[@]}"
  scratch=$(mktemp -d)
  args=(validate "$overhead_campaign" --gpu "$gpu" --timeline "$scratch" --commit "$commit" --date "$date" --quiet
        --max-seconds "$overhead_seconds")
  echo "## overhead: mlasim ${args[*]}"
  start=$(date +%s.%N)
  "$bin/mlasim" "${args[@]}"
  echo "wall time: $(awk "BEGIN{print $(date +%s.%N) - $start}") s"
  python3 - "$scratch" "$out/timeline_overhead_$gpu.csv" <<'PY'
import json, os, sys
rows = []
for name in sorted(os.listdir(sys.argv[1])):
    if not name.endswith('.json'):
        continue
    m = json.load(open(os.path.join(sys.argv[1], name)))['otherData']['mlasim']
    rows.append((m['config_id'], m['policy'], m['kernel'], m['kernel_us'], m['instrumented_kernel_us'], m['clock_step_ns']))
with open(sys.argv[2], 'w') as f:
    f.write('config_id,policy,kernel,kernel_us,instrumented_kernel_us,clock_step_ns\n')
    for r in rows:
        f.write('%s,"%s",%s,%.4f,%.4f,%g\n' % r)
ratios = sorted(r[4] / r[3] - 1 for r in rows if r[3] > 0)
n = len(ratios)
print('overhead over %d configurations: median %+.2f %%, p10 %+.2f %%, p90 %+.2f %%, mean %+.2f %%' % (
    n, 100 * ratios[n // 2], 100 * ratios[n // 10], 100 * ratios[(9 * n) // 10], 100 * sum(ratios) / n))
PY
  rm -rf "$scratch"
} 2>&1 | tee "$log"
