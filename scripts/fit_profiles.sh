#!/usr/bin/env bash
# Fits the NVIDIA profiles to the committed campaigns (docs/validation.md §1), in the order that shows transfer:
#   1. h100: memory curve from its streaming-read sweep, then every kernel-class parameter to its campaign and the
#      first session of the split-ratio probe (every 4th row held out);
#   2. h200 predicted before any H200 fit: the H100 kernel parameters with the H200 datasheet and the H200
#      memory curve (data/gpus/derived/h200_from_h100.json);
#   3. h200: its own fit, started from (2), of the memory side only (every class's rate alone, its re-read
#      fractions, the reduce's rate, the folded heads' re-read, the 16-head and the 128-head bf16 kernels'
#      memory-curve knees) and the reduce's second-kernel time (section 7.6) to its campaign and the first sessions of the split-ratio probe at 128 and 16 heads:
#      the H200 has the H100's SMs, so their math, fixed costs and overlap stay the H100's (the H200 campaign alone
#      leaves the overlap loose and trades the pair kernel's rate against its math; docs/validation.md section
#      0.5). The 16-head plans that stream on every SM saturate the memory more sharply than the sweep's read
#      kernel (docs/validation.md section 0.10), the 128-head pair kernel's more softly (section 7.4); the other
#      classes keep the sweep's curve.
#      Then the fp8 kernel's own grid factor, alone, to the H200 campaign and the first sessions of the fp8
#      split-ratio probe (docs/validation.md section 0.11);
#   4. h100: the gather term, alone, to every other line of the sparse campaign (docs/sparse.md);
#   5. both: the L2 carry-over, prior-writes, stream-kernel and event-timing terms, measured by their own probes
#      and fitted by scripts/l2_carry_fit.py, scripts/l2_grid_law.py, scripts/stream_kernel_fit.py and
#      scripts/events_overhead_fit.py (none of them enters kernel_us), copied from the profiles as committed; and
#      the reduce's residency read off our timelines (docs/validation.md section 7.1), which does: the H200's fit
#      (3) runs with it, the H100's was made before it was measured and carries it as measured since; then the
#      kernel classes' L2 write-back exposure, fitted by scripts/l2_writeback_fit.py to the profiles of (1) to (4);
#      the H200's class and copy prior-writes laws (scripts/l2_batch_law.py, scripts/l2_copy_law.py); and last the
#      model's error on the ratio of two plans, per class, over sessions no fit took as input;
#   6. mi355x: the public MI355X rows (no MI355X sweep is published: the curve's knee is the H100's, assumed).
# Usage: scripts/fit_profiles.sh [MLASIM_BINARY] [DATE]
set -euo pipefail
bin=${1:-build/cli/mlasim}
date=${2:-$(date -u +%F)}
m=data/measurements
free=wgmma-bf16.t_fix_us,wgmma-bf16.beta_gbps,wgmma-bf16.matrix_efficiency
free+=,wgmma-bf16-pair.t_fix_us,wgmma-bf16-pair.beta_gbps,wgmma-bf16-pair.matrix_efficiency
free+=,wgmma-fp8.t_fix_us,wgmma-fp8.t_pass_us,wgmma-fp8.beta_gbps,wgmma-fp8.matrix_efficiency
free+=,wgmma-fp8.reread_fraction,wgmma-fp8.page_copy_us
free+=,portable-fp8.t_fix_us,portable-fp8.t_pass_us,portable-fp8.beta_gbps,portable-fp8.matrix_efficiency
free+=,portable-fp8.reread_fraction
free+=,stage_gap_us,reduce_block_us,reduce_item_us,reduce_beta_gbps,grid_block_us,fold_reread_fraction,persistent_cluster_us
# The folded head groups' L2 window starts at one L2 size, near where it fits: at 0 the simulator takes the
# side-by-side share for every work, so the calibrator keeps it above 0.05, a start far from it (docs/model.md §2).
free+=,fold_l2_window
# One grid_stream_factor for every class but the 16-head bf16 one: per class, the campaign's grid rows (most of the
# 128-head ones at qlen 3 and 4) pull the pair kernel's to 1.14, which the qlen-1 split-ratio runs do not bear out
# (docs/validation.md §0.5); the 16-head bf16 class's own, fitted beside it, agrees with the H200's timelines of
# that class's grid and persistent works (docs/validation.md §7.2).
free+=,compute_overlap_n,grid_stream_factor,wgmma-bf16.grid_stream_factor
# What the reduce adds as a second kernel besides its work (its launch gap, stage 1's drain): the timelines measure
# it apart from the fits (docs/validation.md section 7.6), and each GPU's fit, freeing it, comes out near them.
free+=,second_kernel_us
# The campaign alone leaves compute_overlap_n loose (24 +- 14 once the MMAs' padded rows are costed); the split-ratio
# probe's 128-head rows, where streaming and math are about equal, pin it (docs/validation.md section 0.5).
split_ratio=$m/h100/split_ratio/split_ratio_h100_run1.csv
free_h200=wgmma-bf16.beta_gbps,wgmma-bf16-pair.beta_gbps,wgmma-fp8.beta_gbps,wgmma-fp8.reread_fraction
free_h200+=,portable-fp8.beta_gbps,portable-fp8.reread_fraction,reduce_beta_gbps,fold_reread_fraction,wgmma-bf16.bw_knee
free_h200+=,wgmma-bf16-pair.bw_knee,second_kernel_us
split_ratio_h200="--measurements $m/h200/split_ratio/split_ratio_h200_run1.csv"
split_ratio_h200+=" --measurements $m/h200/split_ratio_h16/split_ratio_h200_h16_run1.csv"

fit() {  # profile-in campaign stream out free [extra args]
  local in=$1 campaign=$2 stream=$3 out=$4 params=$5
  shift 5
  "$bin" calibrate --gpu "$in" --stream-read "$stream" --measurements "$campaign" --free "$params" \
    --holdout-every 4 --date "$date" --out "$out" "$@"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Copies into FILE the parameters of the committed profile G whose names start with a PREFIX (measured by their own
# probes, not by these fits), or end with one that starts with '.' (a field of every class).
carry_measured() {  # G FILE PREFIX...
  local g=$1 file=$2
  shift 2
  git show HEAD:data/gpus/$g.json | python3 -c '
import json, sys
old, path, prefixes = json.load(sys.stdin), sys.argv[1], tuple(sys.argv[2:])
new = json.load(open(path))
for k, v in old["params"].items():
    if k.startswith(prefixes) or any(p.startswith(".") and k.endswith(p) for p in prefixes):
        new["params"][k] = v
open(path, "w").write(json.dumps(new, indent=2) + "\n")' "$file" "$@"
}
# Start from the datasheet-only profiles, so a rerun does not start from its own previous fit.
for g in h100 h200; do
  git show HEAD:data/gpus/$g.json | python3 -c '
import json, sys
j = json.load(sys.stdin)
j["params"] = {"fold_l2_window": {"value": 1.0, "kind": "assumed", "source": "start of scripts/fit_profiles.sh"}}
j.pop("model_error", None)
print(json.dumps(j, indent=2))' >"$tmp/$g.json"
done
fit "$tmp/h100.json" $m/h100/campaign_standard-v1_590702c.csv $m/h100/stream_read_590702c.csv data/gpus/h100.json \
  "$free" --measurements $split_ratio
mkdir -p data/gpus/derived
"$bin" calibrate --gpu "$tmp/h200.json" --kernel-params-from data/gpus/h100.json \
  --stream-read $m/h200/stream_read_590702c.csv --date "$date" --out data/gpus/derived/h200_from_h100.json
# The reduce's measured residency (docs/validation.md section 7.1) is in the H200's time: its fit runs with it.
carry_measured h200 data/gpus/derived/h200_from_h100.json reduce_blocks_per_cu reduce_wide_blocks_per_cu
fit data/gpus/derived/h200_from_h100.json $m/h200/campaign_standard-v1_590702c.csv \
  $m/h200/stream_read_590702c.csv data/gpus/h200.json "$free_h200" $split_ratio_h200
# The fp8 kernel's own grid factor on the H200 (docs/validation.md section 0.11), with its re-read fraction, to its
# campaign and the first sessions of the fp8 split-ratio probe: its grid kernel streams about as fast as its
# persistent one, where the one factor (fitted on the H100, mostly to bf16 rows) has it 9 % slower, and its passes
# read less again than the campaign alone gives. The H100 has no fp8 probe and keeps the one factor.
# This fit and the gather fit below write their own model_error; the profiles keep the campaign fits'.
cp data/gpus/h200.json "$tmp/h200.main.json"
sr8=$m/h200/split_ratio_fp8
"$bin" calibrate --gpu data/gpus/h200.json --measurements $m/h200/campaign_standard-v1_590702c.csv \
  --measurements $sr8/split_ratio_h200_fp8_run1.csv --measurements $sr8/split_ratio_h200_fp8_h16_run1.csv \
  --free wgmma-fp8.grid_stream_factor,wgmma-fp8.reread_fraction --holdout-every 4 --date "$date" \
  --out data/gpus/h200.json
# The fp8 kernel's one-pass tiles (16 heads) as a class of their own (docs/validation.md section 0.12): its fixed cost
# and rate alone, to the first session of the 16-head fp8 split-ratio probe. The class above, fitted mostly to the
# 128-head tiles that re-read their KV under their math, holds its fixed cost at 0 and its rate at a third of what
# a one-pass tile streams; the grid factor, the page copies and the pass's cost stay the class's. The H100 has no
# 16-head fp8 probe: there the one-pass tiles keep the class's values (model/kernel_class.h, params_from).
"$bin" calibrate --gpu data/gpus/h200.json --measurements $sr8/split_ratio_h200_fp8_h16_run1.csv \
  --free wgmma-fp8-onepass.t_fix_us,wgmma-fp8-onepass.beta_gbps --holdout-every 4 --date "$date" \
  --out data/gpus/h200.json
cp data/gpus/h100.json "$tmp/h100.main.json"
"$bin" calibrate --gpu data/gpus/h100.json --measurements $m/h100/campaign_sparse-v1_693ad4d.csv \
  --free gather_extra_read --holdout-every 2 --date "$date" --out data/gpus/h100.json
for g in h100 h200; do
  # The classes' policy_offset_carry was chosen on the step runs' predictions (docs/step.md section 7): after a
  # refit, scripts/step_attention_forms.py says whether it still holds.
  carry_measured $g data/gpus/$g.json l2_carry_ stream_kernel_ stream_write_ events_ l2_prior_writes_ \
    reduce_blocks_per_cu reduce_wide_blocks_per_cu .policy_offset_carry
  python3 - "$tmp/$g.main.json" data/gpus/$g.json <<'PY'
import json, sys
main, new = (json.load(open(f)) for f in sys.argv[1:3])
new["model_error"] = main["model_error"]
open(sys.argv[2], "w").write(json.dumps(new, indent=2) + "\n")
PY
done

# The kernel classes' L2 write-back exposure (docs/step.md section 6), fitted to their probes on the profiles just
# fitted: the 16-head kernel to the H200's grid probes with it as the follower, with a share floor (its followers on
# 16, 64 and 128 SMs pay in proportion to their share: the floor comes out at 0.01), the 128-head one to the
# neighbours probes' block-table copies. The H100 has no 16-head probe: its 16-head class keeps none.
h16=$m/h200/l2_grid/h16_followers
python3 scripts/l2_writeback_fit.py "$bin" h200 wgmma-bf16 $h16/attn_128_2048_aiter-v1_h16/l2_carry.csv \
  $h16/attn_64_4096_aiter-v1_h16/l2_carry.csv $h16/attn_16_4096_aiter-v1_h16/l2_carry.csv --share-floor \
  --write "$date" >/dev/null
for g in h100 h200; do
  python3 scripts/l2_writeback_fit.py "$bin" $g wgmma-bf16-pair $m/$g/l2_neighbours/run1/l2_carry.csv \
    $m/$g/l2_neighbours/run2/l2_carry.csv --pairs --write "$date" >/dev/null
done
# The H200's fp8 kernel to the grid probes with it as the follower at 16 and 128 heads, 13 followers in three sets:
# one exposure for the class, its window counted in the stage 1's reads from memory, each fill and copy against the
# follower after reads alone (a clean L2, as the step stack's attention starts after the GEMM's and the copy's
# reads), rising from none at a share floor of the CUs to all of it on every CU (docs/step.md section 6).
f8=$m/h200/l2_grid/fp8_followers
f82=$m/h200/l2_grid/fp8_followers2
f83=$m/h200/l2_grid/fp8_followers3
python3 scripts/l2_writeback_fit.py "$bin" h200 wgmma-fp8 $f8/attn_128_2048_aiter-v1_h16_fp8/l2_carry.csv \
  $f8/attn_64_4096_aiter-v1_h16_fp8/l2_carry.csv $f8/attn_16_4096_aiter-v1_h16_fp8/l2_carry.csv \
  $f8/attn_32_8192_splits4_h16_fp8/l2_carry.csv $f8/attn_16_4096_aiter-v1_fp8/l2_carry.csv \
  $f8/attn_32_2048_splits4_fp8/l2_carry.csv $f82/attn_128_4096_aiter-v1_fp8/l2_carry.csv \
  $f82/attn_64_8192_splits2_h16_fp8/l2_carry.csv $f82/attn_96_2048_aiter-v1_fp8/l2_carry.csv \
  $f82/attn_96_4096_aiter-v1_h16_fp8/l2_carry.csv $f83/attn_112_4096_aiter-v1_h16_fp8/l2_carry.csv \
  $f83/attn_80_4096_aiter-v1_h16_fp8/l2_carry.csv $f83/attn_48_8192_splits4_h16_fp8/l2_carry.csv \
  --with-class wgmma-fp8-onepass --against-reads --share-floor --write "$date" >/dev/null

# The H200's 128-head class's own prior-writes law (docs/step.md section 3), fitted to the batch probe: the step
# stack's layer at the follower's own batch and fills then reads before the unsplit attention at 16 to 64 requests,
# its cost per MB written in proportion to the clusters the plan streams on.
b=$m/h200/l2_batch
python3 scripts/l2_batch_law.py "$bin" h200 wgmma-bf16-pair $b/run1/l2_carry.csv $b/run2/l2_carry.csv \
  --write "$date" >/dev/null
# The H200's copy law (docs/step.md section 3), fitted to the copy-batch probe: the step stack's block-table copy
# after the ops before it at 8 to 64 requests, its cost per MB written in proportion to the MB it copies.
c=$m/h200/l2_copy_batch
python3 scripts/l2_copy_law.py h200 $c/run1/l2_carry.csv $c/run2/l2_carry.csv --write "$date" >/dev/null

# The model's ratio of two plans on one workload against sessions no fit took as input (docs/step.md section 3): the
# split-ratio probe's later sessions (of the configurations its first session gave the fits) and, on the H200, the two
# knee checks (configurations no fit took as input; docs/validation.md section 0.10). The band `mlasim step` gives a policy
# edit. Last for these profiles: calibrate drops it when it refits.
sr=$m/h100/split_ratio
python3 scripts/ratio_error_fit.py "$bin" h100 wgmma-bf16-pair $sr/split_ratio_h100_run2.csv $sr/split_ratio_h100_run3.csv \
  $sr/split_ratio_h100_run4.csv --date "$date" --write >/dev/null
k=$m/h200/knee_check
python3 scripts/ratio_error_fit.py "$bin" h200 wgmma-bf16-pair $m/h200/split_ratio/split_ratio_h200_run2.csv \
  $k/knee_h128_run1.csv $k/knee_h128_run2.csv --date "$date" --write >/dev/null
python3 scripts/ratio_error_fit.py "$bin" h200 wgmma-bf16 $m/h200/split_ratio_h16/split_ratio_h200_h16_run2.csv \
  $k/knee_h16_run1.csv $k/knee_h16_run2.csv ${k}2/knee2_h16_run1.csv ${k}2/knee2_h16_run2.csv --date "$date" \
  --write >/dev/null
python3 scripts/ratio_error_fit.py "$bin" h200 wgmma-fp8 $sr8/split_ratio_h200_fp8_run2.csv --date "$date" \
  --write >/dev/null
python3 scripts/ratio_error_fit.py "$bin" h200 wgmma-fp8-onepass $sr8/split_ratio_h200_fp8_h16_run2.csv \
  --date "$date" --write >/dev/null

# The fuse and remove edits' error per site over the interleaved step runs (docs/step.md section 3), the band
# `mlasim step` gives them: the committed predictions made with these profiles (their errors do not depend on the
# field), the field written, and the predictions made again to carry its bands.
predictions() {
  for f in $(find $m -name predictions.json | sort); do
    python3 scripts/step_table.py "$bin" "$(dirname "$f")" >/dev/null
  done
}
predictions
for g in h100 h200; do
  python3 scripts/edit_error_fit.py $g --date "$date" --write >/dev/null
done
predictions

# MI355X: per-CU rate of the 16-head kernel (the global beta_cu_gbps, which its class inherits) and the memory
# ceiling from the ATOM #611 ratio and the 128-row rows; the 128-row kernel's own fixed cost, rate and efficiency.
knee=$(python3 -c 'import json; print(json.load(open("data/gpus/h100.json"))["params"]["bw_knee"]["value"])')
git show HEAD:data/gpus/mi355x.json | python3 -c '
import json, sys
j = json.load(sys.stdin)
j.pop("model_error", None)
j["params"] = {"bw_knee": {"value": float(sys.argv[1]), "kind": "assumed",
  "source": "the H100 memory curve knee (data/gpus/h100.json, fitted to its streaming-read sweep): no MI355X sweep is published; docs/validation.md section 2"}}
print(json.dumps(j, indent=2))' "$knee" >"$tmp/mi355x.json"
"$bin" calibrate --gpu "$tmp/mi355x.json" --measurements $m/public/mi355x_aiter_asm_persistent.csv \
  --free b_hbm_tbps,beta_cu_gbps,asm-a8w8-qh128.t_fix_us,asm-a8w8-qh128.matrix_efficiency,asm-a8w8-qh128.beta_gbps \
  --holdout-every 4 --date "$date" --out data/gpus/mi355x.json
