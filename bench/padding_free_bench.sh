#!/usr/bin/env bash
# --padding_free against --padding_free=false and Hugging Face, in one invocation
# (bench/results/padding_free.md), real tokens per second of whole training steps on the CPU:
#
#   1. the embedded default's model and data, per-device batch 32: shuffled batches
#      (--group_by_length=false, so every batch is padded to its longest row) and the embedded
#      default as shipped (--group_by_length=true); Hugging Face on the same shuffled batches
#      (bench/hf_train_cpu.py ports our shuffle), padded to --max_seq_length as run_glue.py does
#      by default, and padded to the longest row (its --pad_to_max_length=False);
#   2. with --base: an XLM-R base shape (12 x 768, vocabulary 250002, random weights saved by
#      transformers, bench/make_base_model.py) on rows of mixed length (bench/mixed_length_rows.py:
#      uniform 16-256 tokens), batch 32, shuffled, max_seq_length 256: ours padded, ours packed,
#      HF padded to the longest row; and the activation peaks against the real tokens.
#
# Real tokens per second over the steps after the warm-up: the real (non-padding) tokens those
# steps trained divided by the seconds their steps took (each step's seconds from metrics.jsonl:
# its tokens over its tokens_per_second); ours alternate packed / padded `reps` times so that load
# on a shared machine falls on both. (A median of the per-step rates would weigh a short batch,
# whose fixed costs dominate, as much as a long one.)
#
#   bench/padding_free_bench.sh [--steps=N] [--reps=R] [--threads=T] [--work=DIR]
#                               [--base] [--base_steps=N] [--no_embedded]
#
# Builds //recipes:xlmr_finetune with -c opt (bench/base_shape_inputs.sh).
set -euo pipefail
steps=80 reps=2 threads=2 work=/tmp/xlmr_padding_free_bench base=no base_steps=6 embedded=yes
for arg in "$@"; do
  case "$arg" in
    --steps=*) steps=${arg#*=} ;; --reps=*) reps=${arg#*=} ;; --threads=*) threads=${arg#*=} ;;
    --work=*) work=${arg#*=} ;; --base) base=yes ;; --base_steps=*) base_steps=${arg#*=} ;;
    --no_embedded) embedded=no ;;
    *) echo "usage: $0 [--steps=N] [--reps=R] [--threads=T] [--work=DIR] [--base] [--base_steps=N] [--no_embedded]" >&2
       exit 2 ;;
  esac
done
[ "$steps" -gt 10 ] && [ "$base_steps" -ge 2 ] || { echo "--steps must be over 10 and --base_steps at least 2" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
source "$repo/bench/base_shape_inputs.sh"  # $finetune (-c opt) and $model (base shape)
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "- machine: $(nproc) CPUs, load $(load); $threads threads"
field() { grep '"type":"train"' "$1" | sed -nE "s/.*\"$2\":([^,}]*).*/\1/p"; }

# "tokens_per_second activation_peak" of a metrics.jsonl, over the steps after the first `warmup`.
ours_rate() {  # METRICS_JSONL WARMUP
  # tokens is cumulative: a step's own tokens are the difference to the line before.
  paste <(field "$1" tokens) <(field "$1" tokens_per_second) |
    awk -v warmup="$2" '{ step = $1 - previous; previous = $1; if (NR > warmup) { tokens += step; seconds += step / $2 } }
         END { printf "%.0f", tokens / seconds }'
  echo " $(field "$1" peak_activation_bytes | sort -n | tail -1)"
}

ours() {  # OUT WARMUP flags...: trains, prints "real_tokens/s activation_peak"
  local out=$1 warmup=$2
  shift 2
  rm -rf "$out"
  "$finetune" --logging_steps=1 --eval_strategy=no --save_strategy=no --per_device_train_batch_size=32 \
    --cache_dir="$work/cache" --output_dir="$out" "$@" > "$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
  ours_rate "$out/metrics.jsonl" "$warmup"
}

# "real_tokens/s largest_padded_batch_tokens largest_real_batch_tokens" of bench/hf_train_cpu.py's JSON.
hf_rate() {  # WARMUP
  python3 -c "
import json, sys
r = json.load(sys.stdin)
w = $1
tokens, seconds = sum(r['step_tokens'][w:]), sum(r['step_seconds'][w:])
print('%.0f %d %d' % (tokens / seconds, max(b * s for b, s in r['batch_shapes']), max(r['step_tokens'])))"
}

hf() {  # WARMUP hf_train_cpu flags...
  local warmup=$1
  shift
  python3 "$repo/bench/hf_train_cpu.py" --threads="$threads" --batch_size=32 "$@" 2> "$work/hf.log" | hf_rate "$warmup" ||
    { cat "$work/hf.log" >&2; exit 1; }
}

if [ "$embedded" = yes ]; then
  echo
  echo "## Embedded default's model and data, batch 32, $steps steps (rates over steps 11..$steps)"
  for grouping in false true; do
    for rep in $(seq 1 "$reps"); do
      for mode in padded packed; do
        flag=--padding_free; [ "$mode" = padded ] && flag=--padding_free=false
        read -r tps peak < <(ours "$work/$grouping.$mode.$rep" 10 --max_steps="$steps" --group_by_length="$grouping" "$flag")
        echo "- group_by_length=$grouping ours $mode rep $rep: $tps real tokens/s, activation peak $peak bytes"
      done
    done
  done
  data="$repo/recipes/data/langid"
  read -r tps _ < <(hf 10 --data_dir="$data" --steps="$steps" --pad_to_max_length)
  echo "- group_by_length=false HF padded to 128 (run_glue's default): $tps real tokens/s"
  read -r tps _ < <(hf 10 --data_dir="$data" --steps="$steps")
  echo "- group_by_length=false HF padded to the longest row: $tps real tokens/s"
  echo "- load after: $(load)"
fi

if [ "$base" = yes ]; then
  mixed="$work/mixed_16_256.tsv"
  [ -f "$mixed" ] || python3 "$repo/bench/mixed_length_rows.py" "$mixed" --rows=320 --min_tokens=16 --max_tokens=256 > "$work/mixed.txt"
  echo
  echo "## XLM-R base shape, rows of uniform 16-256 tokens ($(cat "$work/mixed.txt")), batch 32, shuffled, $base_steps steps (rates over steps 2..$base_steps)"
  for rep in $(seq 1 "$reps"); do
    for mode in padded packed; do
      flag=--padding_free; [ "$mode" = padded ] && flag=--padding_free=false
      read -r tps peak < <(ours "$work/base.$mode.$rep" 1 --model_dir="$model" --train_file="$mixed" \
        --max_seq_length=256 --group_by_length=false --max_steps="$base_steps" "$flag")
      echo "- ours $mode rep $rep: $tps real tokens/s, activation peak $peak bytes"
    done
  done
  read -r tps padded_tokens real_tokens < <(hf 1 --data_dir="$model" --train_file="$mixed" --max_seq_length=256 --steps="$base_steps")
  echo "- HF padded to the longest row: $tps real tokens/s"
  echo "- the same batches' largest step: $padded_tokens tokens padded, $real_tokens real ($(python3 -c "print('%.3f' % ($real_tokens / $padded_tokens))")x)"
  echo "- load after: $(load)"
fi
