#!/usr/bin/env bash
# One training-speed line per model family against Hugging Face on the CPU (bench/results/
# model_families.md): each family's base shape (12 x 768, 12 heads, intermediate 3072, its hub base
# model's vocabulary; bench/make_base_model.py --family), random weights saved by transformers,
# fixed-length batches [B, S] as bench/cpu_speed_bench.sh's base-shape section (ours: the embedded
# texts, longer than S, truncated by the family's tokenizer; HF: random ids), fp32, no
# checkpointing, ours vs HF eager and sdpa (AutoModelForSequenceClassification).
#
#   bench/family_bench.sh [--threads=T] [--steps=N] [--batch=B] [--seq=S] [--families=a,b] [--work=DIR]
#
# Prints per family the median step time over steps 2..N, tokens/s, peak RSS and the ratios to
# ours. The machine may be shared: load averages are printed before and after.
set -euo pipefail

threads=2 base_steps=5 base_batch=8 base_seq=128 families=xlm-roberta,bert,roberta,camembert
work=/tmp/xlmr_family_bench
for arg in "$@"; do
  case "$arg" in
    --threads=*) threads=${arg#*=} ;; --steps=*) base_steps=${arg#*=} ;;
    --batch=*) base_batch=${arg#*=} ;; --seq=*) base_seq=${arg#*=} ;;
    --families=*) families=${arg#*=} ;; --work=*) work=${arg#*=} ;;
    *) echo "usage: $0 [--threads=T] [--steps=N] [--batch=B] [--seq=S] [--families=a,b] [--work=DIR]" >&2
       exit 2 ;;
  esac
done
[ "$base_steps" -ge 2 ] || { echo "--steps must be at least 2" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"
load() { cut -d' ' -f1-3 /proc/loadavg; }
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
# OpenBLAS picks its GEMM kernels by CPU unless the environment names a core (and ours restarts
# onto wider ones when its pick is narrower than the CPU: docs/DECISIONS.md, "OpenBLAS runs
# kernels as wide as the CPU's vectors"); say which held for this run (the run record names the core).
echo "- OPENBLAS_CORETYPE: ${OPENBLAS_CORETYPE:-unset (OpenBLAS detects the CPU)}"
source "$repo/bench/base_shape_inputs.sh"  # finetune, long_tsv, ours_base, hf_base (and XLM-R's model)

tokens=$((base_batch * base_seq))
echo "## Base shape per family, batch [$base_batch, $base_seq], fp32, $threads threads, median of steps 2..$base_steps"
echo
echo "- commit: $(cd "$repo" && git rev-parse --short HEAD)$(cd "$repo" && git diff --quiet HEAD || echo ' (with local changes)')"
echo "- load average before: $(load)"
echo
echo "| model_type | vocabulary | run | median step (s) | tokens/s | peak RSS (GiB) | speed ours/this | peak RSS ours/this |"
echo "|---|---:|---|---:|---:|---:|---:|---:|"
IFS=, read -ra family_list <<< "$families"
for family in "${family_list[@]}"; do
  family_model="$work/base_$family"
  # Made under a temporary name and renamed, so that a failed or interrupted run leaves no
  # half-made model that a later run would take for a finished one.
  if [ ! -d "$family_model" ]; then
    rm -rf "$family_model.tmp"
    python3 "$repo/bench/make_base_model.py" "$family_model.tmp" --family="$family" > "$work/make_model.log" 2>&1 ||
      { tail -n 5 "$work/make_model.log" >&2; exit 1; }
    mv "$family_model.tmp" "$family_model"
  fi
  vocab=$(python3 -c "import json; print(json.load(open('$family_model/config.json'))['vocab_size'])")
  read -r ours_s ours_rss < <(ours_base "$family_model")
  rows=("ours|$ours_s|$ours_rss")
  for attention in eager sdpa; do
    read -r hf_s hf_rss < <(hf_base "$family_model" "$attention")
    rows+=("HF $attention|$hf_s|$hf_rss")
  done
  for row in "${rows[@]}"; do
    IFS='|' read -r name seconds rss <<< "$row"
    python3 -c "
name, s, rss, os_, orss = '$name', $seconds, $rss, $ours_s, $ours_rss
print(f'| $family | $vocab | {name} | {s:.3f} | {$tokens / s:.0f} | {rss / 2**30:.2f} | {s / os_:.2f} | {orss / rss:.2f} |')"
  done
done
echo
echo "- load average after: $(load)"
