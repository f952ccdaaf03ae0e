#!/usr/bin/env bash
# Runs a measurement campaign on this machine's GPU with a build made elsewhere, and keeps everything a reader
# needs to trust the rows: the device and its clocks (nvidia-smi), the GPU tests of the same build, the
# streaming-read sweep, and a demonstration of resuming (the first run is killed after KILL_AFTER seconds, the
# second completes the file; the log says how many rows each left).
#
#   scripts/run_campaign.sh BIN GPU OUT_DIR COMMIT DATE [CAMPAIGN]
#     BIN       folder with mlasim (built with -DMLASIM_KERNELS=CUDA), optionally mlasim_kernels_tests, and the
#               shared libraries they need
#     GPU       the profile the plans are made for (h100, h200)
set -euo pipefail
bin=$(cd "$1" && pwd); gpu=$2; out=$3; commit=$4; date=$5; campaign=${6:-data/campaigns/standard.json}
kill_after=${KILL_AFTER:-20}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MLASIM_DATA_DIR="$PWD/data"
log="$out/run_$gpu.log"
{
  echo "## device"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,temperature.gpu,power.limit \
    --format=csv
  if [ -x "$bin/mlasim_kernels_tests" ]; then
    echo "## mlasim_kernels_tests"
    "$bin/mlasim_kernels_tests" 2>&1 | grep -E "random cases|PASSED|FAILED" || true
  fi
  rows="$out/campaign_$gpu.csv"
  rm -f "$rows"
  args=(validate "$campaign" --gpu "$gpu" --out "$rows" --commit "$commit" --date "$date" --quiet)
  echo "## mlasim ${args[*]} (killed after $kill_after s)"
  start=$(date +%s.%N)
  timeout -s KILL "$kill_after" "$bin/mlasim" "${args[@]}" || echo "exit $? (killed)"
  echo "rows after the kill: $(( $(wc -l < "$rows") - 1 ))"
  echo "## the same command again, with the streaming-read sweep"
  "$bin/mlasim" "${args[@]}" --stream-out "$out/stream_read_$gpu.csv"
  echo "rows: $(( $(wc -l < "$rows") - 1 )), distinct configurations: $(tail -n +2 "$rows" | awk -F, '{print $(NF-4)}' | sort -u | wc -l)"
  echo "wall time of both runs: $(awk "BEGIN{print $(date +%s.%N) - $start}") s"
} 2>&1 | tee "$log"
