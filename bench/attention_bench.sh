#!/usr/bin/env bash
# Fused vs eager attention on the CPU at XLM-R base shape (12 x 768, 12 heads, vocabulary 250002;
# random weights saved by transformers, bench/make_base_model.py): the activation peak at
# [16, 512] from --print_memory_plan (the probe's exact prediction of keeping everything), and
# training step times at [8, 128] and [2, 512] for ours (fused, eager) and Hugging Face (sdpa,
# eager), T threads. A benchmark, never a test; results go to bench/results/attention_cpu.md.
#
#   bench/attention_bench.sh [--steps=N] [--threads=T] [--work=DIR]
#
# Both sides train on fixed-length batches (ours: texts longer than --max_seq_length, so every
# example is truncated to exactly S tokens; HF: random ids of length S), so each step processes
# the same number of tokens. Step times are medians over steps 2..N (step 1 is warm-up); ours
# come from metrics.jsonl (differences of elapsed_seconds), HF's from bench/hf_train_fixed.py.
set -euo pipefail

steps=5 threads=2 work=/tmp/xlmr_attention_bench
while [ $# -gt 0 ]; do
  case "$1" in
    --steps=*) steps=${1#*=} ;; --threads=*) threads=${1#*=} ;; --work=*) work=${1#*=} ;;
    *) echo "usage: $0 [--steps=N] [--threads=T] [--work=DIR]" >&2; exit 2 ;;
  esac
  shift
done
[ "$steps" -ge 2 ] || { echo "--steps must be at least 2" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"
load() { cut -d' ' -f1-3 /proc/loadavg; }

source "$repo/bench/base_shape_inputs.sh"

export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
common=(--model_dir="$model" --train_file="$long_tsv" --cache_dir="$work/cache" --logging_steps=1
        --save_total_limit=1 --max_steps="$steps")

# The probe's keep-everything activation peak (first row of the trade-off curve).
keep_all_peak() {
  "$finetune" "${common[@]}" --output_dir="$work/plan_$1" --overwrite_output_dir \
    --per_device_train_batch_size=16 --max_seq_length=512 --attention="$1" --print_memory_plan |
    awk '/^[ *] [KSR]+ +[0-9]/ { print $2; exit }'
}

# Median seconds per step of ours over steps 2..N.
ours_step_seconds() {  # attention batch seq
  local dir="$work/ours_$1_$2x$3"
  rm -rf "$dir"
  "$finetune" "${common[@]}" --output_dir="$dir" --attention="$1" \
    --per_device_train_batch_size="$2" --max_seq_length="$3" > "$dir.log" 2>&1 || { cat "$dir.log" >&2; exit 1; }
  median_step_seconds "$dir/metrics.jsonl"
}

hf_step_seconds() {  # attention batch seq
  python3 "$repo/bench/hf_train_fixed.py" --model_dir="$model" --batch_size="$2" --seq="$3" \
    --steps="$steps" --threads="$threads" --attn_implementation="$1" 2> "$work/hf_$1_$2x$3.log" |
    python3 -c "import json, statistics, sys; r = json.load(sys.stdin); print('%.3f' % statistics.median(r['step_seconds'][1:]))"
}

echo "- load average before: $(load); threads $threads; steps $steps (median of 2..$steps)"
fused_peak=$(keep_all_peak fused)
eager_peak=$(keep_all_peak eager)
echo
echo "Activation peak at [16, 512], keep everything (--print_memory_plan):"
echo
echo "| attention | peak_bytes | GiB |"
echo "|---|---:|---:|"
for row in "fused $fused_peak" "eager $eager_peak"; do
  set -- $row
  echo "| $1 | $2 | $(python3 -c "print(f'{$2 / 2**30:.2f}')") |"
done
echo "fused / eager: $(python3 -c "print(f'{$fused_peak / $eager_peak:.3f}')")"
echo
echo "| shape | ours fused (s) | ours eager (s) | HF sdpa (s) | HF eager (s) | fused vs eager | fused vs HF sdpa |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for shape in "8 128" "2 512"; do
  set -- $shape
  of=$(ours_step_seconds fused "$1" "$2")
  oe=$(ours_step_seconds eager "$1" "$2")
  hs=$(hf_step_seconds sdpa "$1" "$2")
  he=$(hf_step_seconds eager "$1" "$2")
  echo "| [$1, $2] | $of | $oe | $hs | $he | $(python3 -c "print(f'{$oe / $of:.2f}x')") | $(python3 -c "print(f'{$hs / $of:.2f}x')") |"
done
echo
echo "- load average after: $(load)"
