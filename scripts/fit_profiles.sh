#!/usr/bin/env bash
# Fits the NVIDIA profiles to the committed campaigns (docs/validation.md §1), in the order that shows transfer:
#   1. h100: memory curve from its streaming-read sweep, then every kernel-class parameter to its campaign
#      (every 4th row held out);
#   2. h200 predicted before any H200 fit: the H100 kernel parameters with the H200 datasheet and the H200
#      memory curve (data/gpus/derived/h200_from_h100.json);
#   3. h200: its own fit, started from (2).
# Usage: scripts/fit_profiles.sh [MLASIM_BINARY] [DATE]
set -euo pipefail
bin=${1:-build/cli/mlasim}
date=${2:-$(date -u +%F)}
m=data/measurements
free=wgmma-bf16.t_fix_us,wgmma-bf16.beta_gbps,wgmma-bf16.matrix_efficiency
free+=,wgmma-bf16-pair.t_fix_us,wgmma-bf16-pair.beta_gbps,wgmma-bf16-pair.matrix_efficiency
free+=,wgmma-fp8.t_fix_us,wgmma-fp8.t_pass_us,wgmma-fp8.beta_gbps,wgmma-fp8.matrix_efficiency
free+=,wgmma-fp8.reread_fraction
free+=,portable-fp8.t_fix_us,portable-fp8.t_pass_us,portable-fp8.beta_gbps,portable-fp8.matrix_efficiency
free+=,portable-fp8.reread_fraction
free+=,stage_gap_us,reduce_block_us,reduce_item_us,reduce_beta_gbps,grid_block_us

fit() {  # gpu profile-in campaign stream out [extra args]
  local gpu=$1 in=$2 campaign=$3 stream=$4 out=$5
  shift 5
  "$bin" calibrate --gpu "$in" --stream-read "$stream" --measurements "$campaign" --free "$free" \
    --holdout-every 4 --date "$date" --out "$out" "$@"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Start from the datasheet-only profiles, so a rerun does not start from its own previous fit.
for g in h100 h200; do
  git show HEAD:data/gpus/$g.json | python3 -c 'import json,sys; j=json.load(sys.stdin); j["params"]={}; j.pop("model_error",None); print(json.dumps(j,indent=2))' >"$tmp/$g.json"
done
fit h100 "$tmp/h100.json" $m/h100/campaign_standard-v1_590702c.csv $m/h100/stream_read_590702c.csv data/gpus/h100.json
mkdir -p data/gpus/derived
"$bin" calibrate --gpu "$tmp/h200.json" --kernel-params-from data/gpus/h100.json \
  --stream-read $m/h200/stream_read_590702c.csv --date "$date" --out data/gpus/derived/h200_from_h100.json
fit h200 data/gpus/derived/h200_from_h100.json $m/h200/campaign_standard-v1_590702c.csv \
  $m/h200/stream_read_590702c.csv data/gpus/h200.json
