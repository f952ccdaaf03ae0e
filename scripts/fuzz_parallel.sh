#!/usr/bin/env bash
# fuzz_parallel.sh FUZZ_BIN_DIR TARGET PROCESSES RUNS_PER_PROCESS MAX_SECONDS OUT_DIR
# Independent libFuzzer processes for one target, each from its own copy of the seed corpus (no shared corpus
# folder: with libFuzzer's -jobs every job re-runs what the others add, which for the structured targets means
# re-planning their largest batches). Sums the processes' executions; crashes, timeouts and slow units land in
# OUT_DIR as TARGET-<kind>-<hash>. The documented long runs (docs/reliability.md) were made with it on 16 cores.
set -u
bin=$1; t=$2; procs=$3; runs=$4; secs=$5; out=$6
root=$(cd "$(dirname "$0")/.." && pwd)
export MLASIM_DATA_DIR=${MLASIM_DATA_DIR:-$root/data}
mkdir -p "$out/logs"
work=$(mktemp -d)
start=$(date +%s)
for i in $(seq 1 "$procs"); do
  cp -r "$root/fuzz/corpus/$t" "$work/corpus$i"
  "$bin/${t}_fuzz" -runs="$runs" -max_total_time="$secs" -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
    -seed="$i" -artifact_prefix="$out/$t-" "$work/corpus$i" > "$out/logs/$t-$i.log" 2>&1 &
done
wait
execs=$(grep -h "stat::number_of_executed_units" "$out"/logs/"$t"-*.log | awk '{s+=$2} END {print s}')
crashes=$(ls "$out/$t"-crash-* "$out/$t"-leak-* "$out/$t"-timeout-* "$out/$t"-oom-* 2>/dev/null | wc -l)
finished=$(grep -l "stat::number_of_executed_units" "$out"/logs/"$t"-*.log | wc -l)
cov=$(grep -h "DONE" "$out"/logs/"$t"-*.log | sed 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 \2/' | sort -n | tail -1)
echo "$t processes=$procs (finished $finished) runs/process=$runs execs=$execs wall=$(($(date +%s) - start))s" \
  "crashes=$crashes cov/ft(largest process)=$cov" | tee -a "$out/summary.txt"
