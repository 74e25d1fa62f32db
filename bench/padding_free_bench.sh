#!/usr/bin/env bash
# --padding_free against --padding_free=false on the embedded langid data (bench/results/
# padding_free.md): the embedded default's model and data, per-device batch 32, shuffled
# batches (--group_by_length=false, so every batch is padded to its longest row), and the
# embedded default as shipped (--group_by_length=true). Real tokens per second over steps
# 11..N: the real (non-padding) tokens those steps trained divided by the seconds their steps
# took (each step's seconds from metrics.jsonl: its tokens over its tokens_per_second), and the
# activation peak; runs alternate packed / padded `reps` times so that load on a shared machine
# falls on both. (A median of the per-step rates would weigh a short batch, whose fixed costs
# dominate, as much as a long one.)
#
#   bench/padding_free_bench.sh [--steps=N] [--reps=R] [--threads=T] [--work=DIR]
#
# Build first: bazel build -c opt //recipes:xlmr_finetune (the script uses bazel-bin's binary).
set -euo pipefail
steps=80 reps=2 threads=2 work=/tmp/xlmr_padding_free_bench
for arg in "$@"; do
  case "$arg" in
    --steps=*) steps=${arg#*=} ;; --reps=*) reps=${arg#*=} ;; --threads=*) threads=${arg#*=} ;;
    --work=*) work=${arg#*=} ;;
    *) echo "usage: $0 [--steps=N] [--reps=R] [--threads=T] [--work=DIR]" >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
finetune="$repo/bazel-bin/recipes/xlmr_finetune"
[ -x "$finetune" ] || { echo "build //recipes:xlmr_finetune first" >&2; exit 2; }
mkdir -p "$work"
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
echo "- machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $threads threads; $steps steps x $reps reps"
field() { grep '"type":"train"' "$1" | sed -nE "s/.*\"$2\":([^,}]*).*/\1/p"; }
for grouping in false true; do
  for rep in $(seq 1 "$reps"); do
    for mode in padded packed; do
      flag=--padding_free; [ "$mode" = padded ] && flag=--padding_free=false
      out="$work/$grouping.$mode.$rep"
      rm -rf "$out"
      "$finetune" --max_steps="$steps" --logging_steps=1 --eval_strategy=no --save_strategy=no \
        --per_device_train_batch_size=32 --group_by_length="$grouping" --cache_dir="$work/cache" \
        "$flag" --output_dir="$out" > "$out.log" 2>&1 || { cat "$out.log"; exit 1; }
      # tokens is cumulative: a step's own tokens are the difference to the line before.
      tps=$(paste <(field "$out/metrics.jsonl" tokens) <(field "$out/metrics.jsonl" tokens_per_second) |
        awk '{ step = $1 - previous; previous = $1; if (NR > 10) { tokens += step; seconds += step / $2 } }
             END { printf "%.0f", tokens / seconds }')
      peak=$(field "$out/metrics.jsonl" peak_activation_bytes | sort -n | tail -1)
      echo "group_by_length=$grouping $mode rep $rep: $tps real tokens/s, activation peak $peak bytes"
    done
  done
done
echo "- load after: $(cut -d' ' -f1-3 /proc/loadavg)"
